//! Minimal RFC 7468 PEM: enough for PKCS#8, SPKI, SEC1 and PKCS#1 key blocks.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use zeroize::Zeroizing;

use crate::{Error, Result};

/// Encodes DER as a PEM block with 64-column lines, as OpenSSL writes it.
pub(crate) fn encode(label: &str, der: &[u8]) -> Zeroizing<String> {
    let b64 = Zeroizing::new(STANDARD.encode(der));
    let mut out = Zeroizing::new(String::with_capacity(b64.len() + b64.len() / 64 + 2 * label.len() + 40));
    out.push_str("-----BEGIN ");
    out.push_str(label);
    out.push_str("-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
        out.push('\n');
    }
    out.push_str("-----END ");
    out.push_str(label);
    out.push_str("-----\n");
    out
}

/// Decodes the first PEM block: returns its label and DER bytes.
pub(crate) fn decode(text: &str) -> Result<(String, Zeroizing<Vec<u8>>)> {
    let start = text.find("-----BEGIN ").ok_or(Error::Malformed("no PEM BEGIN line"))?;
    let rest = &text[start + 11..];
    let label_end = rest.find("-----").ok_or(Error::Malformed("bad PEM BEGIN line"))?;
    let label = rest[..label_end].to_owned();
    let body = &rest[label_end + 5..];
    let end_marker = format!("-----END {label}-----");
    let end = body.find(&end_marker).ok_or(Error::Malformed("no matching PEM END line"))?;
    let b64: Zeroizing<String> =
        Zeroizing::new(body[..end].chars().filter(|c| !c.is_ascii_whitespace()).collect());
    let der = STANDARD.decode(b64.as_bytes()).map_err(|_| Error::Malformed("bad base64 in PEM"))?;
    Ok((label, Zeroizing::new(der)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trip() {
        let der: Vec<u8> = (0..200u8).collect();
        let pem = super::encode("PUBLIC KEY", &der);
        assert!(pem.lines().all(|l| l.len() <= 64));
        let (label, back) = super::decode(&format!("junk\n{}", &*pem)).unwrap();
        assert_eq!(label, "PUBLIC KEY");
        assert_eq!(*back, der);
    }
}
