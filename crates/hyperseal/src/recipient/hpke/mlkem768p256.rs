//! ML-KEM-768 + P-256 recipients (`hs-mlkem768p2561…` / `HS-MLKEM768P256-SECRET-KEY-1…`): the
//! "Hybrid mode" of nkCryptoTool (P-256 ECDH + ML-KEM-768), for users whose policy asks for a
//! NIST curve next to ML-KEM. hyperseal's default hybrid remains X-Wing (`hybrid.rs`).
//!
//! HPKE (RFC 9180) base mode with the MLKEM768-P256 KEM of draft-ietf-hpke-pq (`kem.rs`),
//! HKDF-SHA-256 and ChaCha20-Poly1305: stanza `-> mlkem768p256 <b64 1153-byte enc>`, body = the
//! `Seal` of the file key with info = "hyperseal/v1/mlkem768p256". Recipient = bech32 (no length
//! limit) `hs-mlkem768p256` over the 1249-byte public key (ML-KEM-768 ek ‖ P-256 point
//! uncompressed); identity = upper-case bech32 `HS-MLKEM768P256-SECRET-KEY-` over the 32-byte
//! seed. Label `postquantum`.
//!
//! The identity is also the software form of age v1.3's `age1tagpq1…` recipient for the same
//! key ([`Mlkem768P256Identity::to_tag_recipient`]) and opens its `mlkem768p256tag` stanzas.
//!
//! Native only: the portable build (WebAssembly) has no P-256 and says so.

use zeroize::Zeroizing;

use super::base::{self, KEM_MLKEM768_P256};
use super::kem::{self, HybridKey, HybridPublic, HYBRID_ENC_LEN, HYBRID_PUBLIC_LEN};
use super::tag::{self, TagRecipient};
use crate::format::{encode_b64, Stanza};
use crate::recipient::bech32_long;
use crate::recipient::primitives::{check_wrapped_len, single_arg};
use crate::recipient::traits::{GeneratedKey, Identity, Labels, Recipient, POSTQUANTUM};
use crate::{error::Error, file_key::FileKey};

/// Detection prefix of a recipient string (bech32 HRP `hs-mlkem768p256` plus the separator).
pub const RECIPIENT_HRP: &str = "hs-mlkem768p2561";
/// Detection prefix of an identity string.
pub const IDENTITY_HRP: &str = "HS-MLKEM768P256-SECRET-KEY-1";

const PUBLIC_HRP: &str = "hs-mlkem768p256";
const SECRET_HRP: &str = "hs-mlkem768p256-secret-key-";
const TAG: &str = "mlkem768p256";
const INFO: &[u8] = b"hyperseal/v1/mlkem768p256";

/// An ML-KEM-768 + P-256 public key.
#[derive(Clone, PartialEq, Eq)]
pub struct Mlkem768P256Recipient {
    public: HybridPublic,
}

impl std::fmt::Debug for Mlkem768P256Recipient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mlkem768P256Recipient({}…)", &self.to_bech32()[..32])
    }
}

impl Mlkem768P256Recipient {
    /// Parses `hs-mlkem768p2561…`.
    pub fn from_bech32(s: &str) -> Result<Self, Error> {
        kem::require_p256(true)?;
        let bad = |why: &str| Error::InvalidRecipient(format!("ML-KEM-768 + P-256 recipient: {why}"));
        let data = bech32_long::decode_public(s, PUBLIC_HRP, HYBRID_PUBLIC_LEN).map_err(|e| bad(&e))?;
        Ok(Mlkem768P256Recipient { public: HybridPublic::parse(&data)? })
    }

    /// The `hs-mlkem768p2561…` encoding.
    pub fn to_bech32(&self) -> String {
        bech32_long::encode(PUBLIC_HRP, &self.public.bytes())
    }
}

impl Recipient for Mlkem768P256Recipient {
    fn wraps_offline(&self) -> bool {
        true
    }

    fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> {
        let (enc, shared) = self.public.encap()?;
        let body = base::seal(KEM_MLKEM768_P256, &shared, INFO, file_key);
        let labels = Labels::from([POSTQUANTUM.to_string()]);
        Ok((vec![Stanza::new(TAG, vec![encode_b64(&enc)], body)], labels))
    }

    fn key_id(&self) -> Option<Vec<u8>> {
        Some([TAG.as_bytes(), b" ", &self.public.bytes()].concat())
    }
}

/// An ML-KEM-768 + P-256 secret key: the 32-byte seed and the keys expanded from it once.
/// Zeroized on drop; `Debug` is redacted.
pub struct Mlkem768P256Identity {
    key: HybridKey,
}

impl std::fmt::Debug for Mlkem768P256Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mlkem768P256Identity(redacted)")
    }
}

impl Mlkem768P256Identity {
    /// Parses `HS-MLKEM768P256-SECRET-KEY-1…`.
    pub fn from_bech32(s: &str) -> Result<Self, Error> {
        kem::require_p256(false)?;
        let bad = |why: &str| Error::InvalidKey(format!("ML-KEM-768 + P-256 identity: {why}"));
        let seed = bech32_long::decode_secret(s, SECRET_HRP).map_err(|e| bad(&e))?;
        Ok(Mlkem768P256Identity { key: HybridKey::from_seed(seed)? })
    }

    /// draft-ietf-hpke-pq `DeriveKeyPair(ikm)`: the key age's `tagtest` package derives from the
    /// same bytes (tests and fixed test keys only; real keys come from [`generate`]).
    pub fn derive(ikm: &[u8]) -> Result<Self, Error> {
        Ok(Mlkem768P256Identity { key: HybridKey::derive(ikm)? })
    }

    /// The `HS-MLKEM768P256-SECRET-KEY-1…` encoding.
    pub fn to_bech32(&self) -> Zeroizing<String> {
        bech32_long::encode_secret(SECRET_HRP, &self.key.seed()[..])
    }

    /// The matching recipient.
    pub fn to_public(&self) -> Mlkem768P256Recipient {
        Mlkem768P256Recipient { public: self.key.public() }
    }

    /// The same key as an age v1.3 tag recipient (`age1tagpq1…`), which this identity also opens.
    pub fn to_tag_recipient(&self) -> TagRecipient {
        TagRecipient::hybrid(&self.key)
    }

    /// `Ok(None)`: not ours. ML-KEM decapsulation never fails (implicit rejection), so a foreign
    /// stanza shows up as the AEAD failing to open.
    fn unwrap_own(&self, stanza: &Stanza) -> Result<Option<FileKey>, Error> {
        let enc = single_arg(stanza, HYBRID_ENC_LEN, "mlkem768p256 encapsulated key")?;
        check_wrapped_len(&stanza.body)?;
        let shared = self.key.decap(&enc)?;
        Ok(base::open(KEM_MLKEM768_P256, &shared, INFO, &stanza.body))
    }
}

impl Identity for Mlkem768P256Identity {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        if stanza.tag == TAG {
            return self.unwrap_own(stanza).transpose();
        }
        tag::unwrap_hybrid(&self.key, stanza)
    }
}

/// Generates an ML-KEM-768 + P-256 key pair from a fresh 32-byte seed.
pub fn generate() -> Result<GeneratedKey, Error> {
    kem::require_p256(false)?;
    let id = Mlkem768P256Identity { key: HybridKey::generate()? };
    Ok(GeneratedKey { secret: id.to_bech32(), public: id.to_public().to_bech32() })
}

#[cfg(all(test, not(portable_backend)))]
mod tests {
    use super::*;
    use crate::recipient::contract::{Damaged, Pair};

    fn pair() -> (Mlkem768P256Recipient, Mlkem768P256Identity) {
        let k = generate().unwrap();
        (
            Mlkem768P256Recipient::from_bech32(&k.public).unwrap(),
            Mlkem768P256Identity::from_bech32(&k.secret).unwrap(),
        )
    }

    #[test]
    fn round_trip_both_key_lengths() {
        let (r, id) = pair();
        Pair { recipient: &r, identity: &id }.round_trip(&[16, 32], |len, s, labels| {
            assert_eq!(*labels, Labels::from([POSTQUANTUM.to_string()]));
            assert_eq!((s.tag.as_str(), s.body.len()), (TAG, len + 16));
        });
        let (tagged, _) = id.to_tag_recipient().wrap_file_key(&FileKey::generate(16)).unwrap();
        assert!(id.unwrap_stanzas(&tagged).unwrap().is_ok());
    }

    #[test]
    fn not_mine_and_broken() {
        let (r, id) = pair();
        let (_, other) = pair();
        let pair = Pair { recipient: &r, identity: &id };
        let s = pair.stanza(16);
        pair.not_mine(&s, &[&other], &[Stanza::new("mlkem768x25519", vec!["AA".into()], vec![])]);
        // the P-256 share is not a curve point
        let mut enc = crate::format::decode_b64(s.args[0].as_bytes()).unwrap();
        enc[HYBRID_ENC_LEN - 1] ^= 1;
        pair.damaged(
            &s,
            Damaged::Invalid,
            &[
                &|b| b.args.clear(),
                &|b| b.args[0] = encode_b64(&[0; HYBRID_ENC_LEN - 1]),
                &|b| b.body.push(0),
                &|b| b.args[0] = encode_b64(&enc),
            ],
        );
        // a tampered body: indistinguishable from another recipient's stanza
        pair.damaged(&s, Damaged::NotMine, &[&|b| b.body[5] ^= 1]);
    }

    #[test]
    fn bech32_round_trips_and_rejections() {
        let k = generate().unwrap();
        assert!(k.public.starts_with(RECIPIENT_HRP) && k.secret.starts_with(IDENTITY_HRP));
        assert_eq!(Mlkem768P256Recipient::from_bech32(&k.public).unwrap().to_bech32(), k.public);
        let id = Mlkem768P256Identity::from_bech32(&k.secret).unwrap();
        assert_eq!(*id.to_bech32(), *k.secret);
        let data = bech32_long::decode(&k.public).unwrap().1;
        // the same bytes are age's tagpq recipient of this key, and nothing else
        assert_eq!(id.to_tag_recipient().to_bech32(), bech32_long::encode("age1tagpq", &data));
        assert!(Mlkem768P256Recipient::from_bech32(&bech32_long::encode("age1pq", &data)).is_err());
        assert!(Mlkem768P256Recipient::from_bech32(&bech32_long::encode(PUBLIC_HRP, &data[1..])).is_err());
        assert!(Mlkem768P256Identity::from_bech32(&k.public).is_err());
        assert_eq!(format!("{id:?}"), "Mlkem768P256Identity(redacted)");
    }
}
