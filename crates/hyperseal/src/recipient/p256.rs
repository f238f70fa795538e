//! P-256 recipients (`hs-p2561…` / `HS-P256-SECRET-KEY-1…`): the "ECC mode" of nkCryptoTool
//! (P-256 ECDH), for users whose policy asks for a NIST curve.
//!
//! HPKE (RFC 9180) base mode with DHKEM(P-256, HKDF-SHA256), HKDF-SHA-256 and ChaCha20-Poly1305
//! (`hpke.rs`, `hpke_kem.rs`): stanza `-> p256 <b64 65-byte enc>`, body = the `Seal` of the file
//! key with info = "hyperseal/v1/p256". Recipient = bech32 `hs-p256` over the 33-byte compressed
//! point; identity = upper-case bech32 `HS-P256-SECRET-KEY-` over the 32-byte big-endian scalar.
//! Classic: no labels, so it mixes with X25519 and other classic recipients.
//!
//! The identity is also the software form of age v1.3's `age1tag1…` recipients for the same key
//! ([`P256Identity::to_tag_recipient`]): it opens `p256tag` stanzas addressed to it (`tag.rs`).
//!
//! Native only: the portable build (WebAssembly) has no P-256 and says so.

use zeroize::Zeroizing;

use super::hpke::{self, KEM_P256};
use super::hpke_kem::{self, P256Key, COMPRESSED_LEN, POINT_LEN};
use super::primitives::{check_wrapped_len, single_arg};
use super::tag::{self, TagRecipient};
use super::{bech32_long, GeneratedKey, Identity, Labels, Recipient};
use crate::format::{encode_b64, Stanza};
use crate::{Error, FileKey};

/// Detection prefix of a recipient string (bech32 HRP `hs-p256` plus the separator).
pub const RECIPIENT_HRP: &str = "hs-p2561";
/// Detection prefix of an identity string.
pub const IDENTITY_HRP: &str = "HS-P256-SECRET-KEY-1";

const PUBLIC_HRP: &str = "hs-p256";
const SECRET_HRP: &str = "hs-p256-secret-key-";
const TAG: &str = "p256";
const INFO: &[u8] = b"hyperseal/v1/p256";

/// A P-256 public key.
#[derive(Clone, PartialEq, Eq)]
pub struct P256Recipient {
    point: [u8; POINT_LEN],
}

impl std::fmt::Debug for P256Recipient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "P256Recipient({})", self.to_bech32())
    }
}

impl P256Recipient {
    /// Parses `hs-p2561…`.
    pub fn from_bech32(s: &str) -> Result<Self, Error> {
        hpke_kem::require_p256(true)?;
        let bad = |why: &str| Error::InvalidRecipient(format!("P-256 recipient: {why}"));
        let data = bech32_long::decode_public(s, PUBLIC_HRP, COMPRESSED_LEN).map_err(|e| bad(&e))?;
        Ok(P256Recipient { point: hpke_kem::decompress(&data).map_err(|_| bad("not a P-256 point"))? })
    }

    /// The `hs-p2561…` encoding.
    pub fn to_bech32(&self) -> String {
        let compressed = crate::crypto::p256_compress(&self.point).expect("a parsed point is on the curve");
        bech32_long::encode(PUBLIC_HRP, &compressed)
    }
}

impl Recipient for P256Recipient {
    fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> {
        let (enc, shared) = hpke_kem::p256_encap(&self.point)?;
        let body = hpke::seal(KEM_P256, &shared, INFO, file_key);
        Ok((vec![Stanza::new(TAG, vec![encode_b64(&enc)], body)], Labels::new()))
    }
}

/// A P-256 secret key. The scalar is zeroized on drop (aws-lc clears its own copy); `Debug` is
/// redacted.
pub struct P256Identity {
    key: P256Key,
}

impl std::fmt::Debug for P256Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "P256Identity(redacted)")
    }
}

impl P256Identity {
    fn from_scalar(scalar: &[u8; 32]) -> Result<Self, Error> {
        let key = P256Key::from_scalar(scalar).map_err(|e| match e {
            Error::Crypto => Error::InvalidKey("P-256 identity: the scalar is 0 or not below the group order".into()),
            other => other,
        })?;
        Ok(P256Identity { key })
    }

    /// Parses `HS-P256-SECRET-KEY-1…`.
    pub fn from_bech32(s: &str) -> Result<Self, Error> {
        hpke_kem::require_p256(false)?;
        let bad = |why: &str| Error::InvalidKey(format!("P-256 identity: {why}"));
        let scalar: Zeroizing<[u8; 32]> = bech32_long::decode_secret(s, SECRET_HRP).map_err(|e| bad(&e))?;
        Self::from_scalar(&scalar)
    }

    /// RFC 9180 `DeriveKeyPair(ikm)` for DHKEM(P-256): the key age's `tagtest` package derives
    /// from the same bytes (tests and fixed test keys only; real keys come from [`generate`]).
    pub fn derive(ikm: &[u8]) -> Result<Self, Error> {
        Ok(P256Identity { key: P256Key::derive(ikm)? })
    }

    /// The `HS-P256-SECRET-KEY-1…` encoding.
    pub fn to_bech32(&self) -> Zeroizing<String> {
        bech32_long::encode_secret(SECRET_HRP, &self.key.scalar()[..])
    }

    /// The matching recipient.
    pub fn to_public(&self) -> P256Recipient {
        P256Recipient { point: *self.key.public() }
    }

    /// The same key as an age v1.3 tag recipient (`age1tag1…`), which this identity also opens.
    pub fn to_tag_recipient(&self) -> TagRecipient {
        TagRecipient::classic(&self.key)
    }

    /// `Ok(None)`: not ours (the AEAD does not open: another recipient's stanza, or a tampered
    /// one, indistinguishable as for every anonymous recipient).
    fn unwrap_own(&self, stanza: &Stanza) -> Result<Option<FileKey>, Error> {
        let enc = single_arg(stanza, POINT_LEN, "p256 encapsulated key")?;
        check_wrapped_len(&stanza.body)?;
        let shared = hpke_kem::p256_decap(&self.key, &enc)?;
        Ok(hpke::open(KEM_P256, &shared, INFO, &stanza.body))
    }
}

impl Identity for P256Identity {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        if stanza.tag == TAG {
            return self.unwrap_own(stanza).transpose();
        }
        tag::unwrap_classic(&self.key, stanza)
    }
}

/// Generates a P-256 key pair (a uniformly random scalar in [1, n)).
pub fn generate() -> Result<GeneratedKey, Error> {
    let id = P256Identity { key: P256Key::generate()? };
    Ok(GeneratedKey { secret: id.to_bech32(), public: id.to_public().to_bech32() })
}
