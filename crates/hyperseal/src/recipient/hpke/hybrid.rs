//! ML-KEM-768 + X25519 recipients, exactly age v1.3's `mlkem768x25519` (`age1pq1…` /
//! `AGE-SECRET-KEY-PQ-1…`).
//!
//! The construction, taken from age v1.3.1 `pq.go` and `filippo.io/hpke` v0.4.0 (`hpke.go`,
//! `pq.go`, `kdf.go`) and checked against files made by the real `age` (see `recipient/tests.rs`):
//!
//! * KEM: X-Wing (draft-connolly-cfrg-xwing-kem, HPKE KEM id 0x647a, "MLKEM768-X25519" of
//!   draft-ietf-hpke-pq). Identity = the 32-byte X-Wing seed; recipient = the 1216-byte
//!   encapsulation key (ML-KEM-768 ek ‖ X25519 public key); enc = 1120 bytes (ML-KEM-768
//!   ciphertext ‖ ephemeral X25519 share). A non-contributory (all-zero) X25519 result is an
//!   error, as Go's `crypto/ecdh` makes it.
//! * HPKE (RFC 9180, `base.rs`) base mode, KDF HKDF-SHA-256 (0x0001), AEAD ChaCha20-Poly1305
//!   (0x0003), info = "age-encryption.org/mlkem768x25519", one `Seal` with sequence number 0 and
//!   empty AAD.
//! * Stanza: `-> mlkem768x25519 <b64 enc>`, body = the HPKE ciphertext of the file key.
//! * Bech32 without the 90-character limit; HRPs `age1pq` and `AGE-SECRET-KEY-PQ-`.

use zeroize::Zeroizing;

use super::base;
use crate::crypto::X25519Secret;
use crate::format::{encode_b64, Stanza};
use crate::recipient::bech32_long;
use crate::recipient::mlkem::{DecapsKey, EncapsKey, Level};
use crate::recipient::primitives::{check_wrapped_len, random, single_arg};
use crate::recipient::traits::{GeneratedKey, Identity, Labels, Recipient, POSTQUANTUM};
use crate::{error::Error, file_key::FileKey};

/// Detection prefix of a recipient string (bech32 HRP `age1pq` plus the separator).
pub const RECIPIENT_HRP: &str = "age1pq1";
/// Detection prefix of an identity string.
pub const IDENTITY_HRP: &str = "AGE-SECRET-KEY-PQ-1";

const PUBLIC_HRP: &str = "age1pq";
const SECRET_HRP: &str = "age-secret-key-pq-";
const TAG: &str = "mlkem768x25519";
const INFO: &[u8] = b"age-encryption.org/mlkem768x25519";
/// ML-KEM-768 encapsulation key ‖ X25519 public key.
const EK_LEN: usize = Level::L768.ek_len() + 32;
/// ML-KEM-768 ciphertext ‖ X25519 ephemeral share.
const ENC_LEN: usize = Level::L768.ct_len() + 32;

/// An age post-quantum public key.
#[derive(Clone)]
pub struct HybridRecipient {
    ek_m: EncapsKey,
    pk_x: [u8; 32],
}

impl std::fmt::Debug for HybridRecipient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.to_bech32();
        write!(f, "HybridRecipient({}…)", &s[..24])
    }
}

impl HybridRecipient {
    /// Parses `age1pq1…`.
    pub fn from_bech32(s: &str) -> Result<Self, Error> {
        let bad = |why: &str| Error::InvalidRecipient(format!("ML-KEM-768 + X25519 recipient: {why}"));
        let data = bech32_long::decode_public(s, PUBLIC_HRP, EK_LEN).map_err(|e| bad(&e))?;
        // The ML-KEM part is checked (coefficients reduced mod q, FIPS 203 7.2); the X25519 part
        // is checked below the way Go's encapsulation would fail on it.
        let (m, x) = data.split_at(Level::L768.ek_len());
        let ek_m = EncapsKey::new(Level::L768, m).ok_or_else(|| bad("invalid ML-KEM-768 key"))?;
        if is_low_order(x) {
            return Err(bad("X25519 part is a low-order point"));
        }
        Ok(HybridRecipient { ek_m, pk_x: x.try_into().expect("32 bytes") })
    }

    /// The `age1pq1…` encoding.
    pub fn to_bech32(&self) -> String {
        bech32_long::encode(PUBLIC_HRP, &[self.ek_m.bytes(), &self.pk_x[..]].concat())
    }

    /// X-Wing encapsulation with the given 64 random bytes (32 for ML-KEM, then the ephemeral
    /// X25519 scalar), as the draft and the `x-wing` crate define it: (enc, shared secret).
    fn encapsulate_derand(&self, rand: &[u8; 64]) -> Result<(Vec<u8>, Zeroizing<[u8; 32]>), Error> {
        let (rand_m, rand_x) = rand.split_at(32);
        let (mut enc, ss_m) = self.ek_m.encapsulate_derand(rand_m.try_into().expect("32 bytes"))?;
        let sk_e = X25519Secret::new(rand_x.try_into().expect("32 bytes"))?;
        let ct_x = sk_e.public()?;
        // The recipient's share was checked at parse time, so this cannot be non-contributory.
        let ss_x = sk_e.agree(&self.pk_x).ok_or(Error::Crypto)?;
        enc.extend_from_slice(&ct_x);
        Ok((enc, combiner(&ss_m, &ss_x, &ct_x, &self.pk_x)))
    }
}

/// The X-Wing combiner: SHA3-256(ss_M ‖ ss_X ‖ ct_X ‖ pk_X ‖ label).
fn combiner(ss_m: &[u8; 32], ss_x: &[u8; 32], ct_x: &[u8; 32], pk_x: &[u8; 32]) -> Zeroizing<[u8; 32]> {
    use sha3::Digest;
    let mut h = sha3::Sha3_256::new();
    for part in [&ss_m[..], ss_x, ct_x, pk_x, br"\.//^\"] {
        Digest::update(&mut h, part);
    }
    Zeroizing::new(h.finalize().into())
}

/// True if X25519 with this public key yields the all-zero secret (a small-order point): age
/// (Go `crypto/ecdh`) fails encapsulation to such a key, so we refuse it when parsing.
fn is_low_order(x25519_public: &[u8]) -> bool {
    // A throwaway scalar from the OS RNG (`PrivateKey::generate` would seed aws-lc's DRBG).
    let Ok(secret) = random::<32>() else { return true };
    let Ok(k) = X25519Secret::new(&secret) else { return true };
    k.agree(x25519_public).is_none()
}

impl Recipient for HybridRecipient {
    fn wraps_offline(&self) -> bool {
        true
    }

    fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> {
        let rand = Zeroizing::new(random::<64>()?);
        let (enc, shared) = self.encapsulate_derand(&rand)?;
        let body = base::seal(base::KEM_XWING, &shared, INFO, file_key);
        let labels = Labels::from([POSTQUANTUM.to_string()]);
        Ok((vec![Stanza::new(TAG, vec![encode_b64(&enc)], body)], labels))
    }

    fn key_id(&self) -> Option<Vec<u8>> {
        Some([TAG.as_bytes(), b" ", self.ek_m.bytes(), &self.pk_x].concat())
    }
}

/// An age post-quantum secret key (the 32-byte X-Wing seed and its expansion). Zeroized on drop
/// (see `crate::crypto` for each backend); `Debug` is redacted.
pub struct HybridIdentity {
    seed: Zeroizing<[u8; 32]>,
    expanded: Expanded,
}

/// The X-Wing decapsulation key expanded once at parse time (re-deriving it from the seed costs
/// SHAKE-256, an ML-KEM key generation and a base-point multiplication: more than the
/// decapsulation itself): ML-KEM-768 (see `mlkem.rs`) and X25519.
struct Expanded {
    dk_m: DecapsKey,
    sk_x: X25519Secret,
    pk_x: [u8; 32],
}

impl Expanded {
    fn new(seed: &[u8; 32]) -> Result<Self, Error> {
        use sha3::digest::Update;
        use shake::{ExtendableOutput, Shake256, XofReader};
        let mut xof = Shake256::default();
        xof.update(seed);
        let mut reader = xof.finalize_xof();
        let mut m_seed = Zeroizing::new([0u8; 64]);
        reader.read(&mut m_seed[..]);
        let mut x_seed = Zeroizing::new([0u8; 32]);
        reader.read(&mut x_seed[..]);
        let dk_m = DecapsKey::from_seed(Level::L768, &m_seed)?;
        let sk_x = X25519Secret::new(&x_seed)?;
        let pk_x = sk_x.public()?;
        Ok(Expanded { dk_m, sk_x, pk_x })
    }

    /// X-Wing decapsulation, refusing a non-contributory X25519 share as the `x-wing` crate's
    /// `DecapsulationKeyRejectNonContrib` and Go's `crypto/ecdh` do.
    fn decapsulate(&self, enc: &[u8]) -> Result<Zeroizing<[u8; 32]>, Error> {
        let (ct_m, ct_x) = enc.split_at(ENC_LEN - 32);
        let ss_m = self.dk_m.decapsulate(ct_m)?;
        let ss_x = self.sk_x.agree(ct_x).ok_or_else(|| {
            Error::InvalidStanza("mlkem768x25519: X25519 share is a low-order point".into())
        })?;
        Ok(combiner(&ss_m, &ss_x, ct_x.try_into().expect("32 bytes"), &self.pk_x))
    }
}

impl std::fmt::Debug for HybridIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HybridIdentity(redacted)")
    }
}

impl HybridIdentity {
    fn from_seed(seed: Zeroizing<[u8; 32]>) -> Result<Self, Error> {
        let expanded = Expanded::new(&seed)?;
        Ok(HybridIdentity { seed, expanded })
    }

    /// Parses `AGE-SECRET-KEY-PQ-1…`.
    pub fn from_bech32(s: &str) -> Result<Self, Error> {
        let bad = |why: &str| Error::InvalidKey(format!("ML-KEM-768 + X25519 identity: {why}"));
        Self::from_seed(bech32_long::decode_secret(s, SECRET_HRP).map_err(|e| bad(&e))?)
    }

    /// The `AGE-SECRET-KEY-PQ-1…` encoding (upper case, as age writes it).
    pub fn to_bech32(&self) -> Zeroizing<String> {
        bech32_long::encode_secret(SECRET_HRP, &self.seed[..])
    }

    /// The matching recipient.
    pub fn to_public(&self) -> HybridRecipient {
        // X-Wing's encapsulation key is the ML-KEM-768 key followed by the X25519 public key.
        HybridRecipient { ek_m: self.expanded.dk_m.encapsulation_key().clone(), pk_x: self.expanded.pk_x }
    }

    /// `Ok(None)`: well-formed but not ours. ML-KEM decapsulation never fails (implicit
    /// rejection), so a foreign stanza shows up only as the AEAD failing to open, exactly as in
    /// age; a tampered body is indistinguishable from that.
    fn unwrap_own(&self, stanza: &Stanza) -> Result<Option<FileKey>, Error> {
        let enc = single_arg(stanza, ENC_LEN, "mlkem768x25519 encapsulated key")?;
        check_wrapped_len(&stanza.body)?;
        let shared = self.expanded.decapsulate(&enc)?;
        Ok(base::open(base::KEM_XWING, &shared, INFO, &stanza.body))
    }
}

impl Identity for HybridIdentity {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        if stanza.tag != TAG {
            return None;
        }
        self.unwrap_own(stanza).transpose()
    }
}

/// Generates an ML-KEM-768 + X25519 key pair.
pub fn generate() -> Result<GeneratedKey, Error> {
    let id = HybridIdentity::from_seed(Zeroizing::new(random::<32>()?))?;
    Ok(GeneratedKey { secret: id.to_bech32(), public: id.to_public().to_bech32() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipient::contract::{Damaged, Pair};

    fn pair() -> (HybridRecipient, HybridIdentity) {
        let k = generate().unwrap();
        (HybridRecipient::from_bech32(&k.public).unwrap(), HybridIdentity::from_bech32(&k.secret).unwrap())
    }

    #[test]
    fn round_trip_both_key_lengths() {
        let (r, id) = pair();
        Pair { recipient: &r, identity: &id }.round_trip(&[16, 32], |len, s, labels| {
            assert_eq!(*labels, Labels::from([POSTQUANTUM.to_string()]));
            assert_eq!(s.tag, TAG);
            assert_eq!(s.body.len(), len + 16);
        });
    }

    #[test]
    fn not_mine_and_broken() {
        let (r, id) = pair();
        let (_, other) = pair();
        let pair = Pair { recipient: &r, identity: &id };
        let s = pair.stanza(16);
        pair.not_mine(&s, &[&other], &[Stanza::new("X25519", vec!["AA".into()], vec![])]);
        // A non-contributory X25519 share is refused, as age (Go crypto/ecdh) refuses it.
        let mut enc = crate::format::decode_b64(s.args[0].as_bytes()).unwrap();
        enc[ENC_LEN - 32..].fill(0);
        pair.damaged(
            &s,
            Damaged::Invalid,
            &[
                &|b| b.args.clear(),
                &|b| b.args[0] = encode_b64(&[1u8; ENC_LEN - 1]),
                &|b| b.body.truncate(31),
                &|b| b.args[0] = encode_b64(&enc),
            ],
        );
        // Tampered body: indistinguishable from another recipient's (age: ErrIncorrectIdentity).
        pair.damaged(&s, Damaged::NotMine, &[&|b| b.body[3] ^= 0x80]);
    }

    /// Our X-Wing (the backend's ML-KEM and X25519) gives the `x-wing` crate's bytes for the same
    /// randomness, and each side decapsulates the other's ciphertexts.
    #[test]
    fn agrees_with_the_x_wing_crate() {
        use x_wing::{Decapsulate, Decapsulator, KeyExport};
        for _ in 0..16 {
            let seed = random::<32>().unwrap();
            let id = HybridIdentity::from_seed(Zeroizing::new(seed)).unwrap();
            let theirs = x_wing::DecapsulationKey::from(seed);
            let r = id.to_public();
            let their_ek = theirs.encapsulation_key();
            assert_eq!(&[r.ek_m.bytes(), &r.pk_x[..]].concat()[..], &their_ek.to_bytes()[..]);
            let rand = random::<64>().unwrap();
            let (enc, ss) = r.encapsulate_derand(&rand).unwrap();
            let (enc2, ss2) = their_ek.encapsulate_deterministic(&rand.into());
            assert_eq!((&enc[..], &ss[..]), (&enc2[..], &ss2[..]));
            let (enc3, ss3) = r.encapsulate_derand(&random::<64>().unwrap()).unwrap();
            let ct3 = x_wing::Ciphertext::try_from(&enc3[..]).unwrap();
            assert_eq!(&theirs.decapsulate(&ct3)[..], &ss3[..]);
            assert_eq!(&id.expanded.decapsulate(&enc2).unwrap()[..], &ss2[..]);
        }
    }

    #[test]
    fn bech32_round_trips_and_rejections() {
        let k = generate().unwrap();
        assert!(k.public.starts_with(RECIPIENT_HRP) && k.secret.starts_with(IDENTITY_HRP));
        assert!(k.public.len() > 1900, "longer than BIP 173 allows");
        assert_eq!(HybridRecipient::from_bech32(&k.public).unwrap().to_bech32(), k.public);
        let id = HybridIdentity::from_bech32(&k.secret).unwrap();
        assert_eq!(*id.to_bech32(), *k.secret);
        assert_eq!(id.to_public().to_bech32(), k.public);
        let mut mixed = k.public.clone();
        let i = mixed.rfind(|c: char| c.is_ascii_lowercase()).unwrap();
        mixed.replace_range(i..i + 1, &mixed[i..i + 1].to_ascii_uppercase());
        assert!(HybridRecipient::from_bech32(&mixed).is_err());
        let mut bad = k.public.clone().into_bytes();
        bad[100] = if bad[100] == b'q' { b'p' } else { b'q' };
        assert!(HybridRecipient::from_bech32(std::str::from_utf8(&bad).unwrap()).is_err());
        // the X25519 HRP with the same payload, and an X25519 key, are both wrong here
        let data = bech32_long::decode(&k.public).unwrap().1;
        assert!(HybridRecipient::from_bech32(&bech32_long::encode("age", &data)).is_err());
        assert!(HybridRecipient::from_bech32(&crate::recipient::x25519::generate().unwrap().public).is_err());
        assert!(HybridIdentity::from_bech32(&k.public).is_err());
        // an ML-KEM coefficient >= q is refused (FIPS 203 modulus check)
        let mut data2 = data.clone();
        data2[0] = 0xff;
        data2[1] |= 0x0f;
        assert!(HybridRecipient::from_bech32(&bech32_long::encode(PUBLIC_HRP, &data2)).is_err());
        // a low-order X25519 half is refused
        let mut data3 = data;
        data3[EK_LEN - 32..].fill(0);
        assert!(HybridRecipient::from_bech32(&bech32_long::encode(PUBLIC_HRP, &data3)).is_err());
        assert_eq!(format!("{id:?}"), "HybridIdentity(redacted)");
    }
}
