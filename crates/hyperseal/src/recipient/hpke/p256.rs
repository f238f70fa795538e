//! P-256 recipients (`hs-p2561…` / `HS-P256-SECRET-KEY-1…`): the "ECC mode" of nkCryptoTool
//! (P-256 ECDH), for users whose policy asks for a NIST curve.
//!
//! HPKE (RFC 9180) base mode with DHKEM(P-256, HKDF-SHA256), HKDF-SHA-256 and ChaCha20-Poly1305
//! (`base.rs`, `kem.rs`): stanza `-> p256 <b64 65-byte enc>`, body = the `Seal` of the file
//! key with info = "hyperseal/v1/p256". Recipient = bech32 `hs-p256` over the 33-byte compressed
//! point; identity = upper-case bech32 `HS-P256-SECRET-KEY-` over the 32-byte big-endian scalar.
//! Classic: no labels, so it mixes with X25519 and other classic recipients.
//!
//! The identity is also the software form of age v1.3's `age1tag1…` recipients for the same key
//! ([`P256Identity::to_tag_recipient`]): it opens `p256tag` stanzas addressed to it (`tag.rs`).
//!
//! Native only: the portable build (WebAssembly) has no P-256 and says so.

use zeroize::Zeroizing;

use super::base::{self, KEM_P256};
use super::kem::{self, P256Key, COMPRESSED_LEN, POINT_LEN};
use super::tag::{self, TagRecipient};
use crate::format::{encode_b64, Stanza};
use crate::recipient::bech32_long;
use crate::recipient::primitives::{check_wrapped_len, single_arg};
use crate::recipient::traits::{GeneratedKey, Identity, Labels, Recipient};
use crate::{error::Error, file_key::FileKey};

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
        kem::require_p256(true)?;
        let bad = |why: &str| Error::InvalidRecipient(format!("P-256 recipient: {why}"));
        let data = bech32_long::decode_public(s, PUBLIC_HRP, COMPRESSED_LEN).map_err(|e| bad(&e))?;
        Ok(P256Recipient { point: kem::decompress(&data).map_err(|_| bad("not a P-256 point"))? })
    }

    /// The `hs-p2561…` encoding.
    pub fn to_bech32(&self) -> String {
        let compressed = crate::crypto::p256_compress(&self.point).expect("a parsed point is on the curve");
        bech32_long::encode(PUBLIC_HRP, &compressed)
    }
}

impl Recipient for P256Recipient {
    fn wraps_offline(&self) -> bool {
        true
    }

    fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> {
        let (enc, shared) = kem::p256_encap(&self.point)?;
        let body = base::seal(KEM_P256, &shared, INFO, file_key);
        Ok((vec![Stanza::new(TAG, vec![encode_b64(&enc)], body)], Labels::new()))
    }

    fn key_id(&self) -> Option<Vec<u8>> {
        Some([TAG.as_bytes(), b" ", &self.point].concat())
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
            Error::Crypto => {
                Error::InvalidKey("P-256 identity: the scalar is 0 or not below the group order".into())
            }
            other => other,
        })?;
        Ok(P256Identity { key })
    }

    /// Parses `HS-P256-SECRET-KEY-1…`.
    pub fn from_bech32(s: &str) -> Result<Self, Error> {
        kem::require_p256(false)?;
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
        let shared = kem::p256_decap(&self.key, &enc)?;
        Ok(base::open(KEM_P256, &shared, INFO, &stanza.body))
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

#[cfg(all(test, not(portable_backend)))]
mod tests {
    use super::*;
    use crate::recipient::contract::{Damaged, Pair};

    fn pair() -> (P256Recipient, P256Identity) {
        let k = generate().unwrap();
        (P256Recipient::from_bech32(&k.public).unwrap(), P256Identity::from_bech32(&k.secret).unwrap())
    }

    #[test]
    fn round_trip_both_key_lengths() {
        let (r, id) = pair();
        Pair { recipient: &r, identity: &id }.round_trip(&[16, 32], |len, s, labels| {
            assert!(labels.is_empty(), "classic: mixes with X25519");
            assert_eq!((s.tag.as_str(), s.body.len()), (TAG, len + 16));
        });
        // The identity also opens what its age1tag1 form wraps.
        let (tagged, _) = id.to_tag_recipient().wrap_file_key(&FileKey::generate(16)).unwrap();
        assert!(id.unwrap_stanzas(&tagged).unwrap().is_ok());
    }

    #[test]
    fn not_mine_and_broken() {
        let (r, id) = pair();
        let (_, other) = pair();
        let pair = Pair { recipient: &r, identity: &id };
        let s = pair.stanza(16);
        pair.not_mine(&s, &[&other], &[Stanza::new("X25519", vec!["AA".into()], vec![])]);
        // the share is not a curve point, or is compressed
        let enc = crate::format::decode_b64(s.args[0].as_bytes()).unwrap();
        let mut off = enc.clone();
        off[64] ^= 1;
        let compressed = crate::crypto::p256_compress(&enc).unwrap();
        pair.damaged(
            &s,
            Damaged::Invalid,
            &[
                &|b| b.args.push("AA".into()),
                &|b| b.args[0] = encode_b64(&[4; POINT_LEN - 1]),
                &|b| b.body.truncate(31),
                &|b| b.args[0] = encode_b64(&off),
                &|b| b.args[0] = encode_b64(&compressed),
            ],
        );
        // a tampered body: indistinguishable from another recipient's stanza
        pair.damaged(&s, Damaged::NotMine, &[&|b| b.body[0] ^= 1]);
    }

    #[test]
    fn bech32_round_trips_and_rejections() {
        let k = generate().unwrap();
        assert!(k.public.starts_with(RECIPIENT_HRP) && k.secret.starts_with(IDENTITY_HRP));
        assert_eq!(P256Recipient::from_bech32(&k.public).unwrap().to_bech32(), k.public);
        let id = P256Identity::from_bech32(&k.secret).unwrap();
        assert_eq!(*id.to_bech32(), *k.secret);
        // a scalar of 0 or >= n is refused, as is a secret under the public HRP
        let n = hex::decode("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551").unwrap();
        for bad in [vec![0u8; 32], n, vec![1u8; 31]] {
            assert!(P256Identity::from_bech32(&bech32_long::encode_secret(SECRET_HRP, &bad)).is_err());
        }
        assert!(P256Recipient::from_bech32(&bech32_long::encode(PUBLIC_HRP, &[2; 32])).is_err());
        let data = bech32_long::decode(&k.public).unwrap().1;
        assert!(P256Recipient::from_bech32(&bech32_long::encode("age1tag", &data)).is_err());
        assert!(P256Identity::from_bech32(&k.public).is_err());
        assert_eq!(format!("{id:?}"), "P256Identity(redacted)");
        assert!(!format!("{k:?}").contains(&k.secret[20..]));
    }
}
