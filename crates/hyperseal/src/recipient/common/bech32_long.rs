//! Bech32 (BIP 173 checksum, not bech32m) without the 90-character limit.
//!
//! age encodes every key with this variant: an ML-KEM-768 + X25519 public key is 1216 bytes, so
//! its string is ~1950 characters, far past BIP 173's limit, which exists only to bound the
//! checksum's error-detection guarantee for Bitcoin addresses. The checksum still detects any
//! single error and almost all others at these lengths. Written by hand (60 lines) because the
//! `bech32` crate bakes the limit into its checksum type, and every kind must share one set of
//! case and padding rules.

use zeroize::Zeroizing;

const CHARSET: &[u8; 32] = b"qpzry9x8gf2tvdw0s3jn54khce6mua7l";
const GENERATOR: [u32; 5] = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];

fn polymod(values: impl Iterator<Item = u8>) -> u32 {
    let mut chk: u32 = 1;
    for v in values {
        let top = chk >> 25;
        chk = ((chk & 0x1ff_ffff) << 5) ^ u32::from(v);
        for (i, g) in GENERATOR.iter().enumerate() {
            if (top >> i) & 1 == 1 {
                chk ^= g;
            }
        }
    }
    chk
}

fn hrp_expand(hrp: &[u8]) -> impl Iterator<Item = u8> + '_ {
    hrp.iter().map(|b| b >> 5).chain(std::iter::once(0)).chain(hrp.iter().map(|b| b & 31))
}

/// Encodes `data` under `hrp` (lower-case output; callers upper-case secret keys, as age does).
pub(crate) fn encode(hrp: &str, data: &[u8]) -> String {
    let hrp = hrp.to_ascii_lowercase();
    // Secret keys pass through here: keep every intermediate copy zeroizing.
    let mut five = Zeroizing::new(Vec::with_capacity(data.len() * 8 / 5 + 8));
    let (mut acc, mut bits) = (0u32, 0u32);
    for &b in data {
        acc = (acc << 8) | u32::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            five.push(((acc >> bits) & 31) as u8);
        }
    }
    if bits > 0 {
        five.push(((acc << (5 - bits)) & 31) as u8);
    }
    let chk = polymod(hrp_expand(hrp.as_bytes()).chain(five.iter().copied()).chain([0u8; 6])) ^ 1;
    // Sized up front so no reallocation leaves a partial copy behind.
    let mut out = String::with_capacity(hrp.len() + 1 + five.len() + 6);
    out.push_str(&hrp);
    out.push('1');
    out.extend(five.iter().map(|&v| CHARSET[v as usize] as char));
    out.extend((0..6).map(|i| CHARSET[((chk >> (5 * (5 - i))) & 31) as usize] as char));
    out
}

/// Encodes a secret key: upper case, as age writes secret keys, without leaving a lower-case
/// copy behind.
pub(crate) fn encode_secret(hrp: &str, data: &[u8]) -> Zeroizing<String> {
    let mut s = Zeroizing::new(encode(hrp, data));
    s.make_ascii_uppercase();
    s
}

/// Decodes a public key string whose HRP must be `hrp` and whose payload must be `len` bytes.
pub(crate) fn decode_public(s: &str, hrp: &str, len: usize) -> Result<Vec<u8>, String> {
    let (got, data) = decode(s)?;
    if got != hrp {
        return Err(format!("wrong type (expected {hrp}1…)"));
    }
    if data.len() != len {
        return Err("wrong length".into());
    }
    Ok(data)
}

/// Decodes a secret key string (HRP `hrp`, written upper case) of exactly `N` bytes; nothing
/// decoded is left behind unzeroized.
pub(crate) fn decode_secret<const N: usize>(s: &str, hrp: &str) -> Result<Zeroizing<[u8; N]>, String> {
    let (got, data) = decode(s)?;
    let data = Zeroizing::new(data);
    if got != hrp {
        return Err(format!("wrong type (expected {}1…)", hrp.to_ascii_uppercase()));
    }
    if data.len() != N {
        return Err("wrong length".into());
    }
    let mut out = Zeroizing::new([0u8; N]);
    out.copy_from_slice(&data);
    Ok(out)
}

/// Decodes a bech32 string; returns the human-readable part in lower case and the data.
///
/// Rejects mixed case, characters outside the charset, a bad checksum, and non-zero or
/// over-long (> 4 bits) padding, so every byte string has exactly one accepted encoding (up to
/// case).
pub(crate) fn decode(s: &str) -> Result<(String, Vec<u8>), &'static str> {
    if !s.bytes().all(|b| (33..=126).contains(&b)) {
        return Err("invalid character");
    }
    if s.bytes().any(|b| b.is_ascii_lowercase()) && s.bytes().any(|b| b.is_ascii_uppercase()) {
        return Err("mixed case");
    }
    let s = Zeroizing::new(s.to_ascii_lowercase());
    let sep = s.rfind('1').ok_or("missing separator")?;
    let (hrp, rest) = (&s[..sep], &s.as_bytes()[sep + 1..]);
    if hrp.is_empty() || rest.len() < 6 {
        return Err("too short");
    }
    let values: Zeroizing<Vec<u8>> = rest
        .iter()
        .map(|c| CHARSET.iter().position(|x| x == c).map(|p| p as u8))
        .collect::<Option<Vec<u8>>>()
        .map(Zeroizing::new)
        .ok_or("invalid character")?;
    if polymod(hrp_expand(hrp.as_bytes()).chain(values.iter().copied())) != 1 {
        return Err("invalid checksum");
    }
    let mut data = Vec::with_capacity(values.len() * 5 / 8);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &v in &values[..values.len() - 6] {
        acc = (acc << 5) | u32::from(v);
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            data.push((acc >> bits) as u8);
        }
    }
    if bits >= 5 || (acc & ((1 << bits) - 1)) != 0 {
        return Err("invalid padding");
    }
    Ok((hrp.to_string(), data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bip173_valid_vectors() {
        for s in [
            "A12UEL5L",
            "a12uel5l",
            "abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw",
            "split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w",
            "?1ezyfcl",
        ] {
            decode(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
    }

    #[test]
    fn rejects() {
        assert_eq!(decode("A12UeL5L"), Err("mixed case"));
        assert_eq!(decode("a12uel5m"), Err("invalid checksum"));
        assert_eq!(decode("pzry9x0s0muk"), Err("missing separator"));
        assert_eq!(decode("1pzry9x0s0muk"), Err("too short"));
        assert_eq!(decode("x1b4n0q5v"), Err("invalid character"));
        assert_eq!(decode("a 1qqqqqq"), Err("invalid character"));
    }

    #[test]
    fn round_trip_long() {
        for n in [0usize, 1, 31, 32, 33, 64, 1216, 1568] {
            let data: Vec<u8> = (0..n).map(|i| (i * 7 + 3) as u8).collect();
            let s = encode("age1pq", &data);
            assert_eq!(decode(&s).unwrap(), ("age1pq".to_string(), data.clone()));
            assert_eq!(decode(&s.to_ascii_uppercase()).unwrap().1, data);
        }
    }
}
