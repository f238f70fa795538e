//! PEM blocks (RFC 7468) and the little DER the RSA and SSH kinds read: one copy of each, below
//! both kinds (hyperseal's `rsa-oaep` keys are SPKI and PKCS#8 PEM; age's SSH keys come as
//! OpenSSH PEM or PKCS#1/PKCS#8 PEM, `ssh/pem_key.rs`).

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use zeroize::Zeroizing;

/// RFC 7468 strict-ish PEM: base64 with padding, 64-column lines, LF endings.
// The portable build reads OpenSSH keys only; encoding and DER are for the native RSA kinds.
#[cfg_attr(portable_backend, allow(dead_code))]
pub(crate) fn encode(label: &str, der: &[u8]) -> String {
    let b64 = Zeroizing::new(STANDARD.encode(der));
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// Extracts the one `label` block: text outside it is ignored (RFC 7468 explanatory text), CRLF
/// and surrounding whitespace are tolerated, headers (`Proc-Type:` encrypted keys) are not.
pub(crate) fn decode(pem: &str, label: &str) -> Result<Vec<u8>, String> {
    let (begin, end) = (format!("-----BEGIN {label}-----"), format!("-----END {label}-----"));
    let start = pem.find(&begin).ok_or_else(|| format!("expected a PEM block {begin}"))? + begin.len();
    let stop = start + pem[start..].find(&end).ok_or_else(|| format!("missing {end}"))?;
    let body = Zeroizing::new(pem[start..stop].split_whitespace().collect::<String>());
    STANDARD.decode(body.as_bytes()).map_err(|_| format!("invalid base64 in the {label} PEM block"))
}

/// One DER element of type `tag` at the start of `input`: its contents and what follows.
/// Definite lengths only, up to four length bytes (keys are far smaller).
#[cfg_attr(portable_backend, allow(dead_code))]
pub(crate) fn der_take(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&t, rest) = input.split_first()?;
    if t != tag {
        return None;
    }
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (first as usize, rest)
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n].iter().fold(0usize, |v, &b| v << 8 | b as usize);
        (len, &rest[n..])
    };
    (rest.len() >= len).then(|| rest.split_at(len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn der_lengths() {
        assert_eq!(der_take(&[0x04, 0x01, 0xaa, 0xbb], 0x04), Some((&[0xaa][..], &[0xbb][..])));
        assert_eq!(der_take(&[0x04, 0x81, 0x01, 0xaa], 0x04), Some((&[0xaa][..], &[][..])));
        assert_eq!(der_take(&[0x04, 0x02, 0xaa], 0x04), None);
        assert_eq!(der_take(&[0x04, 0x80], 0x04), None);
        assert_eq!(der_take(&[0x30, 0x00], 0x04), None);
    }
}
