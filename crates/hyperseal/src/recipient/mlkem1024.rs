//! ML-KEM-1024 recipients (FIPS 203, category 5), alone: the "PQC mode" of nkCryptoTool.
//!
//! For users who want no classical component at all. Recipient = bech32 `hs-mlkem1024` over the
//! 1568-byte encapsulation key; identity = upper-case bech32 `HS-MLKEM1024-SECRET-KEY-` over the
//! 64-byte seed d ‖ z (FIPS 203 `ML-KEM.KeyGen_internal`), both without bech32's length limit.
//! Stanza `-> mlkem1024 <b64 1568-byte ciphertext>`, wrap key = HKDF-SHA-256(ikm = shared
//! secret, salt = ciphertext ‖ encapsulation key, info = "hyperseal/v1/mlkem1024"), body =
//! ChaCha20-Poly1305(wrap key, zero nonce, file key).
//!
//! Why the salt: ML-KEM's shared secret already depends on the ciphertext and the key (FO
//! transform), but binding both again costs nothing and makes the wrap key depend on the exact
//! stanza and recipient whatever the KEM, as age's X25519 construction does. The zero nonce is
//! safe because every encapsulation yields a fresh key used once.

use zeroize::Zeroizing;

use super::bech32_long;
use super::mlkem::{DecapsKey, EncapsKey, Level};
use super::primitives::{
    check_wrapped_len, hkdf32, open_file_key, random, seal_file_key, single_arg, ZERO_NONCE,
};
use super::traits::{GeneratedKey, Identity, Labels, Recipient, POSTQUANTUM};
use crate::format::{encode_b64, Stanza};
use crate::{error::Error, file_key::FileKey};

/// Detection prefix (and bech32 HRP) of a recipient string.
pub const RECIPIENT_HRP: &str = "hs-mlkem1024";
/// Detection prefix of an identity string (HRP `HS-MLKEM1024-SECRET-KEY-` plus the separator).
pub const IDENTITY_HRP: &str = "HS-MLKEM1024-SECRET-KEY-1";

const SECRET_HRP: &str = "hs-mlkem1024-secret-key-";
const TAG: &str = "mlkem1024";
const INFO: &[u8] = b"hyperseal/v1/mlkem1024";
const EK_LEN: usize = Level::L1024.ek_len();
const CT_LEN: usize = Level::L1024.ct_len();
const SEED_LEN: usize = 64;

/// An ML-KEM-1024 encapsulation key.
#[derive(Clone)]
pub struct Mlkem1024Recipient {
    ek: EncapsKey,
}

impl std::fmt::Debug for Mlkem1024Recipient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mlkem1024Recipient({}…)", &self.to_bech32()[..32])
    }
}

impl Mlkem1024Recipient {
    /// Parses `hs-mlkem10241…`.
    pub fn from_bech32(s: &str) -> Result<Self, Error> {
        let bad = |why: &str| Error::InvalidRecipient(format!("ML-KEM-1024 recipient: {why}"));
        let data = bech32_long::decode_public(s, RECIPIENT_HRP, EK_LEN).map_err(|e| bad(&e))?;
        // FIPS 203 7.2 modulus check happens here: "Encaps shall not be run" without it.
        let ek = EncapsKey::new(Level::L1024, &data).ok_or_else(|| bad("invalid encapsulation key"))?;
        Ok(Mlkem1024Recipient { ek })
    }

    /// The `hs-mlkem10241…` encoding.
    pub fn to_bech32(&self) -> String {
        bech32_long::encode(RECIPIENT_HRP, self.ek.bytes())
    }
}

fn wrap_key(shared: &[u8], ct: &[u8], ek: &[u8]) -> Zeroizing<[u8; 32]> {
    let mut salt = Vec::with_capacity(CT_LEN + EK_LEN);
    salt.extend_from_slice(ct);
    salt.extend_from_slice(ek);
    hkdf32(&salt, shared, INFO)
}

impl Recipient for Mlkem1024Recipient {
    fn wraps_offline(&self) -> bool {
        true
    }

    fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> {
        let (ct, shared) = self.ek.encapsulate()?;
        let key = wrap_key(&shared[..], &ct, self.ek.bytes());
        let body = seal_file_key(&key, ZERO_NONCE, file_key);
        let labels = Labels::from([POSTQUANTUM.to_string()]);
        Ok((vec![Stanza::new(TAG, vec![encode_b64(&ct)], body)], labels))
    }

    fn key_id(&self) -> Option<Vec<u8>> {
        Some([TAG.as_bytes(), b" ", self.ek.bytes()].concat())
    }
}

/// An ML-KEM-1024 secret key: its 64-byte seed and the key expanded from it. Zeroized on drop
/// (see `mlkem.rs` for the expanded key); `Debug` is redacted.
pub struct Mlkem1024Identity {
    seed: Zeroizing<[u8; SEED_LEN]>,
    dk: DecapsKey,
}

impl std::fmt::Debug for Mlkem1024Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mlkem1024Identity(redacted)")
    }
}

impl Mlkem1024Identity {
    fn from_seed(seed: Zeroizing<[u8; SEED_LEN]>) -> Result<Self, Error> {
        let dk = DecapsKey::from_seed(Level::L1024, &seed)?;
        Ok(Mlkem1024Identity { seed, dk })
    }

    /// Parses `HS-MLKEM1024-SECRET-KEY-1…`.
    pub fn from_bech32(s: &str) -> Result<Self, Error> {
        let bad = |why: &str| Error::InvalidKey(format!("ML-KEM-1024 identity: {why}"));
        Self::from_seed(bech32_long::decode_secret(s, SECRET_HRP).map_err(|e| bad(&e))?)
    }

    /// The `HS-MLKEM1024-SECRET-KEY-1…` encoding (upper case, like age's secret keys).
    pub fn to_bech32(&self) -> Zeroizing<String> {
        bech32_long::encode_secret(SECRET_HRP, &self.seed[..])
    }

    /// The matching recipient.
    pub fn to_public(&self) -> Mlkem1024Recipient {
        Mlkem1024Recipient { ek: self.dk.encapsulation_key().clone() }
    }

    /// `Ok(None)`: not ours. Decapsulation never fails (implicit rejection: a foreign ciphertext
    /// yields a pseudorandom secret), so "not mine" shows up as the AEAD failing to open.
    fn unwrap_own(&self, stanza: &Stanza) -> Result<Option<FileKey>, Error> {
        let ct = single_arg(stanza, CT_LEN, "mlkem1024 ciphertext")?;
        check_wrapped_len(&stanza.body)?;
        let shared = self.dk.decapsulate(&ct)?;
        let key = wrap_key(&shared[..], &ct, self.dk.encapsulation_key().bytes());
        Ok(open_file_key(&key, ZERO_NONCE, &stanza.body))
    }
}

impl Identity for Mlkem1024Identity {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        if stanza.tag != TAG {
            return None;
        }
        self.unwrap_own(stanza).transpose()
    }
}

/// Generates an ML-KEM-1024 key pair from a fresh 64-byte seed.
pub fn generate() -> Result<GeneratedKey, Error> {
    let id = Mlkem1024Identity::from_seed(Zeroizing::new(random::<SEED_LEN>()?))?;
    Ok(GeneratedKey { secret: id.to_bech32(), public: id.to_public().to_bech32() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipient::contract::{Damaged, Pair};

    fn pair() -> (Mlkem1024Recipient, Mlkem1024Identity) {
        let k = generate().unwrap();
        (
            Mlkem1024Recipient::from_bech32(&k.public).unwrap(),
            Mlkem1024Identity::from_bech32(&k.secret).unwrap(),
        )
    }

    #[test]
    fn round_trip_both_key_lengths() {
        let (r, id) = pair();
        Pair { recipient: &r, identity: &id }.round_trip(&[16, 32], |len, s, labels| {
            assert_eq!(*labels, Labels::from([POSTQUANTUM.to_string()]));
            assert_eq!(s.body.len(), len + 16);
        });
    }

    #[test]
    fn not_mine_and_broken() {
        let (r, id) = pair();
        let (_, other) = pair();
        let pair = Pair { recipient: &r, identity: &id };
        let s = pair.stanza(32);
        pair.not_mine(&s, &[&other], &[Stanza::new("mlkem768x25519", vec!["AA".into()], vec![])]);
        pair.damaged(
            &s,
            Damaged::Invalid,
            &[
                &|b| b.args.push("AA".into()),
                &|b| b.args[0] = encode_b64(&[0; CT_LEN - 1]),
                &|b| b.body.truncate(47),
                &|b| b.body.extend([0; 16]),
            ],
        );
        // tampered body or ciphertext: indistinguishable from another recipient's stanza
        pair.damaged(&s, Damaged::NotMine, &[&|b| b.body[0] ^= 1]);
    }

    #[test]
    fn bech32_round_trips_and_rejections() {
        let k = generate().unwrap();
        assert!(k.public.starts_with(RECIPIENT_HRP) && k.secret.starts_with(IDENTITY_HRP));
        assert_eq!(Mlkem1024Recipient::from_bech32(&k.public).unwrap().to_bech32(), k.public);
        let id = Mlkem1024Identity::from_bech32(&k.secret).unwrap();
        assert_eq!(*id.to_bech32(), *k.secret);
        assert_eq!(id.to_public().to_bech32(), k.public);
        let mut mixed = k.public.clone();
        let i = mixed.rfind(|c: char| c.is_ascii_lowercase()).unwrap();
        mixed.replace_range(i..i + 1, &mixed[i..i + 1].to_ascii_uppercase());
        assert!(Mlkem1024Recipient::from_bech32(&mixed).is_err());
        let mut bad = k.public.clone().into_bytes();
        bad[200] = if bad[200] == b'q' { b'p' } else { b'q' };
        assert!(Mlkem1024Recipient::from_bech32(std::str::from_utf8(&bad).unwrap()).is_err());
        let data = bech32_long::decode(&k.public).unwrap().1;
        assert!(Mlkem1024Recipient::from_bech32(&bech32_long::encode("age1pq", &data)).is_err());
        assert!(Mlkem1024Identity::from_bech32(&k.public).is_err());
        assert!(Mlkem1024Recipient::from_bech32(&bech32_long::encode(RECIPIENT_HRP, &data[1..])).is_err());
        let mut over = data;
        over[0] = 0xff;
        over[1] |= 0x0f; // first coefficient 4095 >= q
        assert!(Mlkem1024Recipient::from_bech32(&bech32_long::encode(RECIPIENT_HRP, &over)).is_err());
        assert_eq!(format!("{id:?}"), "Mlkem1024Identity(redacted)");
    }
}
