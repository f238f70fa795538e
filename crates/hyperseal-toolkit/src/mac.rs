//! HMAC.
//!
//! HMAC-SHA-2 (and legacy HMAC-SHA-1) run on aws-lc-rs. aws-lc-rs has no HMAC over SHA-3,
//! SM3, BLAKE2b or MD5, so those use RustCrypto's generic `hmac` crate. BLAKE2b goes through
//! `SimpleHmac` (as do SHA-3 in sha3 0.12) because it has no block-level core, which `Hmac` requires.
//!
//! Verification always compares full-length tags in constant time (aws-lc-rs `verify` or
//! `subtle`), so timing reveals nothing about how many leading bytes matched.

use crate::backend::hmac as aws;
use hmac::{KeyInit, Mac as _};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::{Error, Result};

/// An HMAC algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Algorithm {
    /// HMAC-SHA-256.
    HmacSha256,
    /// HMAC-SHA-384.
    HmacSha384,
    /// HMAC-SHA-512.
    HmacSha512,
    /// HMAC-SHA3-256.
    HmacSha3_256,
    /// HMAC-SHA3-512.
    HmacSha3_512,
    /// HMAC-BLAKE2b-512.
    HmacBlake2b512,
    /// HMAC-SM3.
    HmacSm3,
    /// **Legacy.** HMAC-SHA-1 (still a sound PRF, but kept out of the default names).
    LegacyHmacSha1,
    /// **Legacy.** HMAC-MD5, only for interoperating with old systems.
    LegacyHmacMd5,
}

/// The names [`Algorithm::parse_by_hash`] takes.
const HASH_NAMES: &str =
    "sha256, sha384, sha512, sha3-256, sha3-512, blake2b512, sm3, legacy-sha1, legacy-md5";

const NAMES: &str = "hmac-sha256, hmac-sha384, hmac-sha512, hmac-sha3-256, hmac-sha3-512, \
                     hmac-blake2b512, hmac-sm3, legacy-hmac-sha1, legacy-hmac-md5";

impl Algorithm {
    /// Every algorithm.
    pub const ALL: [Algorithm; 9] = [
        Algorithm::HmacSha256,
        Algorithm::HmacSha384,
        Algorithm::HmacSha512,
        Algorithm::HmacSha3_256,
        Algorithm::HmacSha3_512,
        Algorithm::HmacBlake2b512,
        Algorithm::HmacSm3,
        Algorithm::LegacyHmacSha1,
        Algorithm::LegacyHmacMd5,
    ];

    /// Canonical name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::HmacSha256 => "hmac-sha256",
            Algorithm::HmacSha384 => "hmac-sha384",
            Algorithm::HmacSha512 => "hmac-sha512",
            Algorithm::HmacSha3_256 => "hmac-sha3-256",
            Algorithm::HmacSha3_512 => "hmac-sha3-512",
            Algorithm::HmacBlake2b512 => "hmac-blake2b512",
            Algorithm::HmacSm3 => "hmac-sm3",
            Algorithm::LegacyHmacSha1 => "legacy-hmac-sha1",
            Algorithm::LegacyHmacMd5 => "legacy-hmac-md5",
        }
    }

    /// Parses a canonical name (case-insensitive).
    pub fn parse(name: &str) -> Result<Self> {
        let lower = name.to_ascii_lowercase();
        Algorithm::ALL.into_iter().find(|a| a.name() == lower).ok_or_else(|| Error::unknown(name, NAMES))
    }

    /// Parses a MAC name or the name of its hash (`sha256` = `hmac-sha256`, `legacy-sha1` =
    /// `legacy-hmac-sha1`), case-insensitive: what the Node, browser and Python bindings take
    /// (Node's `createHmac('sha256')` habit), in one place.
    pub fn parse_by_hash(name: &str) -> Result<Self> {
        let lower = name.to_ascii_lowercase();
        let canonical = match lower.strip_prefix("legacy-") {
            _ if lower.starts_with("hmac-") || lower.starts_with("legacy-hmac-") => lower.clone(),
            Some(rest) => format!("legacy-hmac-{rest}"),
            None => format!("hmac-{lower}"),
        };
        Algorithm::parse(&canonical).map_err(|_| Error::unknown(name, HASH_NAMES))
    }

    /// Tag length in bytes.
    pub fn tag_len(self) -> usize {
        match self {
            Algorithm::LegacyHmacMd5 => 16,
            Algorithm::LegacyHmacSha1 => 20,
            Algorithm::HmacSha256 | Algorithm::HmacSha3_256 | Algorithm::HmacSm3 => 32,
            Algorithm::HmacSha384 => 48,
            Algorithm::HmacSha512 | Algorithm::HmacSha3_512 | Algorithm::HmacBlake2b512 => 64,
        }
    }
}

impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

// aws-lc's HMAC context stays inline (no allocation per MAC on the hot HMAC-SHA-2 path);
// a `Mac` is short-lived, so its size does not matter.
#[allow(clippy::large_enum_variant)]
enum State {
    Aws(aws::Context),
    Sha3_256(Box<hmac::SimpleHmac<sha3::Sha3_256>>),
    Sha3_512(Box<hmac::SimpleHmac<sha3::Sha3_512>>),
    Blake2b(Box<hmac::SimpleHmac<blake2::Blake2b512>>),
    Sm3(Box<hmac::Hmac<sm3::Sm3>>),
    Md5(Box<hmac::Hmac<md5::Md5>>),
}

/// A streaming HMAC computation. Key material lives only inside the (zeroizing) MAC states.
pub struct Mac {
    algorithm: Algorithm,
    state: State,
}

impl std::fmt::Debug for Mac {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mac").field("algorithm", &self.algorithm).finish_non_exhaustive()
    }
}

fn rc<M: KeyInit>(key: &[u8]) -> Box<M> {
    // HMAC accepts keys of any length, so this cannot fail.
    Box::new(M::new_from_slice(key).expect("HMAC takes any key length"))
}

impl Mac {
    /// Starts an HMAC computation with `key` (any length; RFC 2104 hashes long keys).
    pub fn new(algorithm: Algorithm, key: &[u8]) -> Self {
        let aws_alg = match algorithm {
            Algorithm::HmacSha256 => Some(aws::HMAC_SHA256),
            Algorithm::HmacSha384 => Some(aws::HMAC_SHA384),
            Algorithm::HmacSha512 => Some(aws::HMAC_SHA512),
            Algorithm::LegacyHmacSha1 => Some(aws::HMAC_SHA1_FOR_LEGACY_USE_ONLY),
            _ => None,
        };
        let state = match (aws_alg, algorithm) {
            (Some(a), _) => State::Aws(aws::Context::with_key(&aws::Key::new(a, key))),
            (None, Algorithm::HmacSha3_256) => State::Sha3_256(rc(key)),
            (None, Algorithm::HmacSha3_512) => State::Sha3_512(rc(key)),
            (None, Algorithm::HmacBlake2b512) => State::Blake2b(rc(key)),
            (None, Algorithm::HmacSm3) => State::Sm3(rc(key)),
            (None, Algorithm::LegacyHmacMd5) => State::Md5(rc(key)),
            (None, _) => unreachable!("every non-aws-lc algorithm is listed"),
        };
        Mac { algorithm, state }
    }

    /// Absorbs more data.
    pub fn update(&mut self, data: &[u8]) {
        match &mut self.state {
            State::Aws(c) => c.update(data),
            State::Sha3_256(m) => m.update(data),
            State::Sha3_512(m) => m.update(data),
            State::Blake2b(m) => m.update(data),
            State::Sm3(m) => m.update(data),
            State::Md5(m) => m.update(data),
        }
    }

    /// Returns the tag.
    pub fn finalize(self) -> Vec<u8> {
        match self.state {
            State::Aws(c) => c.sign().as_ref().to_vec(),
            State::Sha3_256(m) => m.finalize().into_bytes().to_vec(),
            State::Sha3_512(m) => m.finalize().into_bytes().to_vec(),
            State::Blake2b(m) => m.finalize().into_bytes().to_vec(),
            State::Sm3(m) => m.finalize().into_bytes().to_vec(),
            State::Md5(m) => m.finalize().into_bytes().to_vec(),
        }
    }

    /// Checks `tag` in constant time. Only full-length tags are accepted: a truncated tag
    /// is a weaker MAC and must be asked for explicitly with [`Mac::verify_truncated`].
    pub fn verify(self, tag: &[u8]) -> Result<()> {
        let full_len = self.algorithm.tag_len();
        if tag.len() != full_len {
            return Err(Error::Crypto);
        }
        self.verify_truncated(tag, full_len)
    }

    /// Checks a tag truncated to its first `tag.len()` bytes, refusing anything shorter than
    /// `min_len` bytes (RFC 2104 §5 recommends at least half the output and 80 bits).
    pub fn verify_truncated(self, tag: &[u8], min_len: usize) -> Result<()> {
        let full_len = self.algorithm.tag_len();
        if tag.len() < min_len.max(10) || tag.len() > full_len {
            return Err(Error::Crypto);
        }
        let expected = Zeroizing::new(self.finalize());
        if bool::from(expected[..tag.len()].ct_eq(tag)) {
            Ok(())
        } else {
            Err(Error::Crypto)
        }
    }
}

/// Computes an HMAC tag in one call.
pub fn sign(algorithm: Algorithm, key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut m = Mac::new(algorithm, key);
    m.update(data);
    m.finalize()
}

/// Verifies a full-length HMAC tag in constant time.
pub fn verify(algorithm: Algorithm, key: &[u8], data: &[u8], tag: &[u8]) -> Result<()> {
    let mut m = Mac::new(algorithm, key);
    m.update(data);
    m.verify(tag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_names_are_mac_names() {
        for (given, want) in [
            ("sha256", Algorithm::HmacSha256),
            ("HMAC-SHA512", Algorithm::HmacSha512),
            ("legacy-sha1", Algorithm::LegacyHmacSha1),
            ("legacy-hmac-md5", Algorithm::LegacyHmacMd5),
            ("sm3", Algorithm::HmacSm3),
        ] {
            assert_eq!(Algorithm::parse_by_hash(given).unwrap(), want, "{given}");
        }
        let e = Algorithm::parse_by_hash("md5").unwrap_err().to_string();
        assert!(e.contains("\"md5\"") && e.contains("legacy-md5"), "{e}");
    }

    #[test]
    fn rfc4231_case2_and_verify() {
        let tag = sign(Algorithm::HmacSha256, b"Jefe", b"what do ya want for nothing?");
        assert_eq!(hex::encode(&tag), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
        assert!(verify(Algorithm::HmacSha256, b"Jefe", b"what do ya want for nothing?", &tag).is_ok());
        let mut bad = tag.clone();
        bad[31] ^= 1;
        assert!(verify(Algorithm::HmacSha256, b"Jefe", b"what do ya want for nothing?", &bad).is_err());
        assert!(verify(Algorithm::HmacSha256, b"Jefe", b"what do ya want for nothing?", &tag[..16]).is_err());
    }

    #[test]
    fn all_lengths_and_names() {
        for a in Algorithm::ALL {
            assert_eq!(Algorithm::parse(a.name()).unwrap(), a);
            assert_eq!(sign(a, b"k", b"m").len(), a.tag_len());
        }
    }
}
