//! X25519 recipients, encoded exactly as age's (`age1…` / `AGE-SECRET-KEY-1…`).
//!
//! C2SP age spec, "X25519 recipient stanza":
//! `-> X25519 <b64 ephemeral share>`, wrap key = HKDF-SHA-256(ikm = shared secret,
//! salt = ephemeral share ‖ recipient, info = "age-encryption.org/v1/X25519"), body =
//! ChaCha20-Poly1305(wrap key, zero nonce, file key). Verified against age v1.3.1 by the tests in
//! `recipient/tests.rs` (both directions).

use zeroize::Zeroizing;

use super::bech32_long;
use super::primitives::{check_wrapped_len, hkdf32, open_file_key, seal_file_key, single_arg, ZERO_NONCE};
use super::traits::{GeneratedKey, Identity, Labels, Recipient};
use crate::crypto::X25519Secret;
use crate::format::{encode_b64, Stanza};
use crate::{error::Error, file_key::FileKey};

/// Detection prefix of a recipient string (bech32 HRP `age` plus the separator).
pub const RECIPIENT_HRP: &str = "age1";
/// Detection prefix of an identity string (bech32 HRP `AGE-SECRET-KEY-` plus the separator).
pub const IDENTITY_HRP: &str = "AGE-SECRET-KEY-1";

const PUBLIC_HRP: &str = "age";
const SECRET_HRP: &str = "age-secret-key-";
const TAG: &str = "X25519";
const INFO: &[u8] = b"age-encryption.org/v1/X25519";

/// An age X25519 public key.
#[derive(Clone, PartialEq, Eq)]
pub struct X25519Recipient {
    public: [u8; 32],
}

impl std::fmt::Debug for X25519Recipient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "X25519Recipient({})", self.to_bech32())
    }
}

impl X25519Recipient {
    /// Parses `age1…`.
    pub fn from_bech32(s: &str) -> Result<Self, Error> {
        let bad = |why: &str| Error::InvalidRecipient(format!("X25519 recipient: {why}"));
        let data = bech32_long::decode_public(s, PUBLIC_HRP, 32).map_err(|e| bad(&e))?;
        Ok(X25519Recipient { public: data.try_into().expect("32 bytes") })
    }

    /// The recipient of a 32-byte public key (typage's `identityToRecipient` of a `CryptoKey`,
    /// whose public key Web Crypto derives).
    pub fn from_bytes(public: [u8; 32]) -> Self {
        X25519Recipient { public }
    }

    /// The `age1…` encoding.
    pub fn to_bech32(&self) -> String {
        bech32_long::encode(PUBLIC_HRP, &self.public)
    }
}

impl Recipient for X25519Recipient {
    fn wraps_offline(&self) -> bool {
        true
    }

    fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> {
        // The ephemeral secret comes from the OS RNG (see `rng`), not aws-lc's DRBG.
        let eph_secret = Zeroizing::new(super::primitives::random::<32>()?);
        let ephemeral = X25519Secret::new(&eph_secret)?;
        let share = ephemeral.public()?;
        // An all-zero shared secret (a low-order recipient key): that key can never be decrypted
        // to, so the recipient itself is invalid.
        let shared = ephemeral
            .agree(&self.public)
            .ok_or_else(|| Error::InvalidRecipient("X25519 recipient is a low-order point".into()))?;
        let key = wrap_key(&shared[..], &share, &self.public);
        let body = seal_file_key(&key, ZERO_NONCE, file_key);
        Ok((vec![Stanza::new(TAG, vec![encode_b64(&share)], body)], Labels::new()))
    }

    fn key_id(&self) -> Option<Vec<u8>> {
        Some([b"X25519 ".as_slice(), &self.public].concat())
    }
}

/// An age X25519 secret key. Zeroized on drop; `Debug` shows only the public key.
pub struct X25519Identity {
    secret: Zeroizing<[u8; 32]>,
    /// The backend's key, made once: making it computes the public key (a fixed-base
    /// multiplication, about a quarter of an agreement), which each unwrap would otherwise repeat.
    key: X25519Secret,
    public: [u8; 32],
}

impl std::fmt::Debug for X25519Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "X25519Identity({}, secret redacted)", self.to_public().to_bech32())
    }
}

impl X25519Identity {
    fn from_secret(secret: Zeroizing<[u8; 32]>) -> Result<Self, Error> {
        let key =
            X25519Secret::new(&secret).map_err(|_| Error::InvalidKey("X25519 secret key rejected".into()))?;
        let public = key.public()?;
        Ok(X25519Identity { secret, key, public })
    }

    /// Parses `AGE-SECRET-KEY-1…`.
    pub fn from_bech32(s: &str) -> Result<Self, Error> {
        let bad = |why: &str| Error::InvalidKey(format!("X25519 identity: {why}"));
        Self::from_secret(bech32_long::decode_secret(s, SECRET_HRP).map_err(|e| bad(&e))?)
    }

    /// The `AGE-SECRET-KEY-1…` encoding (upper case, as age writes it).
    pub fn to_bech32(&self) -> Zeroizing<String> {
        bech32_long::encode_secret(SECRET_HRP, &self.secret[..])
    }

    /// The matching recipient.
    pub fn to_public(&self) -> X25519Recipient {
        X25519Recipient { public: self.public }
    }
}

impl Identity for X25519Identity {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        if stanza.tag != TAG {
            return None;
        }
        self.unwrap_own(stanza).transpose()
    }
}

impl X25519Identity {
    /// `Ok(None)`: well-formed but not ours (the AEAD did not open).
    fn unwrap_own(&self, stanza: &Stanza) -> Result<Option<FileKey>, Error> {
        let share = single_arg(stanza, 32, "X25519 ephemeral share")?;
        check_wrapped_len(&stanza.body)?;
        // An all-zero shared secret means a low-order share: the spec requires rejecting it.
        let shared = self
            .key
            .agree(&share)
            .ok_or_else(|| Error::InvalidStanza("X25519 share is a low-order point".into()))?;
        let key = wrap_key(&shared[..], &share, &self.public);
        Ok(open_file_key(&key, ZERO_NONCE, &stanza.body))
    }
}

/// The ephemeral shares of the X25519 stanzas among `stanzas`, in order (malformed ones left
/// out: an identity refuses them when it reads them).
pub fn stanza_shares(stanzas: &[Stanza]) -> Vec<[u8; 32]> {
    let shares = stanzas.iter().filter(|s| s.tag == TAG).filter_map(|s| single_arg(s, 32, "share").ok());
    shares.filter_map(|v| <[u8; 32]>::try_from(v.as_slice()).ok()).collect()
}

/// An X25519 identity whose Diffie-Hellman was done outside the library: a key that never
/// leaves its keystore (typage's non-extractable `CryptoKey`, Web Crypto's `deriveBits`), given
/// as its public key and the shared secret of each stanza share it was asked about. Everything
/// after the agreement (the wrap key, the file key's unwrap) is the identity's as above.
pub struct X25519Agreed {
    public: [u8; 32],
    agreed: Vec<([u8; 32], Zeroizing<[u8; 32]>)>,
}

impl X25519Agreed {
    /// `agreed`: (ephemeral share, shared secret) pairs.
    pub fn new(public: [u8; 32], agreed: Vec<([u8; 32], Zeroizing<[u8; 32]>)>) -> Self {
        X25519Agreed { public, agreed }
    }
}

impl Identity for X25519Agreed {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        if stanza.tag != TAG {
            return None;
        }
        let open = || -> Result<Option<FileKey>, Error> {
            let share = single_arg(stanza, 32, "X25519 ephemeral share")?;
            check_wrapped_len(&stanza.body)?;
            let Some((_, shared)) = self.agreed.iter().find(|(s, _)| s[..] == share[..]) else {
                return Ok(None);
            };
            if shared.iter().all(|&b| b == 0) {
                return Err(Error::InvalidStanza("X25519 share is a low-order point".into()));
            }
            let key = wrap_key(&shared[..], &share, &self.public);
            Ok(open_file_key(&key, ZERO_NONCE, &stanza.body))
        };
        open().transpose()
    }
}

impl std::fmt::Debug for X25519Agreed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "X25519Agreed({}, secrets redacted)", X25519Recipient::from_bytes(self.public).to_bech32())
    }
}

fn wrap_key(shared: &[u8], share: &[u8], recipient: &[u8; 32]) -> Zeroizing<[u8; 32]> {
    let mut salt = [0u8; 64];
    salt[..32].copy_from_slice(share);
    salt[32..].copy_from_slice(recipient);
    hkdf32(&salt, shared, INFO)
}

/// Generates an X25519 key pair.
pub fn generate() -> Result<GeneratedKey, Error> {
    let secret = Zeroizing::new(super::primitives::random::<32>()?);
    let id = X25519Identity::from_secret(secret)?;
    Ok(GeneratedKey { secret: id.to_bech32(), public: id.to_public().to_bech32() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipient::contract::{Damaged, Pair};

    fn pair() -> (X25519Recipient, X25519Identity) {
        let k = generate().unwrap();
        (X25519Recipient::from_bech32(&k.public).unwrap(), X25519Identity::from_bech32(&k.secret).unwrap())
    }

    #[test]
    fn round_trip_both_key_lengths() {
        let (r, id) = pair();
        Pair { recipient: &r, identity: &id }.round_trip(&[16, 32], |len, s, labels| {
            assert!(labels.is_empty());
            assert_eq!(s.tag, "X25519");
            assert_eq!(s.body.len(), len + 16);
        });
    }

    #[test]
    fn not_mine_is_none() {
        let (r, id) = pair();
        let (_, other) = pair();
        let pair = Pair { recipient: &r, identity: &id };
        let foreign = Stanza::new("scrypt", vec!["x".into(), "10".into()], vec![0; 32]);
        pair.not_mine(&pair.stanza(16), &[&other], &[foreign]);
    }

    #[test]
    fn broken_own_stanza_is_error() {
        let (r, id) = pair();
        let pair = Pair { recipient: &r, identity: &id };
        let s = pair.stanza(16);
        pair.damaged(
            &s,
            Damaged::Invalid,
            &[
                &|b| b.args.push("extra".into()),
                &|b| b.args[0] = encode_b64(&[9u8; 31]),
                &|b| b.body.push(0),
                // A low-order share gives an all-zero shared secret: fatal, as the spec requires.
                &|b| b.args[0] = encode_b64(&[0u8; 32]),
            ],
        );
        // A tampered body cannot be told apart from another recipient's stanza (the recipient is
        // anonymous), so, as in age, it is "not mine"; the header MAC and the final "no identity
        // matched" error still stop the file.
        pair.damaged(&s, Damaged::NotMine, &[&|b| b.body[0] ^= 1]);
    }

    #[test]
    fn low_order_recipient_is_refused() {
        let r = X25519Recipient { public: [0; 32] };
        assert!(matches!(r.wrap_file_key(&FileKey::generate(16)), Err(Error::InvalidRecipient(_))));
    }

    #[test]
    fn bech32_round_trips_and_rejections() {
        let k = generate().unwrap();
        assert!(k.public.starts_with(RECIPIENT_HRP) && k.secret.starts_with(IDENTITY_HRP));
        assert_eq!(X25519Recipient::from_bech32(&k.public).unwrap().to_bech32(), k.public);
        let id = X25519Identity::from_bech32(&k.secret).unwrap();
        assert_eq!(*id.to_bech32(), *k.secret);
        assert_eq!(id.to_public().to_bech32(), k.public);
        // upper-case recipient is the same key; mixed case is not bech32
        assert!(X25519Recipient::from_bech32(&k.public.to_ascii_uppercase()).is_ok());
        let mut mixed = k.public.clone();
        let i = mixed.rfind(|c: char| c.is_ascii_lowercase()).unwrap();
        mixed.replace_range(i..i + 1, &mixed[i..i + 1].to_ascii_uppercase());
        assert!(X25519Recipient::from_bech32(&mixed).is_err());
        // bad checksum
        let mut bad = k.public.clone().into_bytes();
        let last = bad.len() - 1;
        bad[last] = if bad[last] == b'q' { b'p' } else { b'q' };
        assert!(X25519Recipient::from_bech32(std::str::from_utf8(&bad).unwrap()).is_err());
        // wrong HRP: a secret key is not a recipient and vice versa
        assert!(X25519Recipient::from_bech32(&k.secret).is_err());
        assert!(X25519Identity::from_bech32(&k.public).is_err());
        // wrong length
        assert!(X25519Recipient::from_bech32(&bech32_long::encode("age", &[1; 31])).is_err());
        assert!(format!("{id:?}").contains("redacted") && !format!("{id:?}").contains(&k.secret[16..]));
    }

    /// RFC 7748 section 6.1 / the C2SP age spec's X25519 example keys.
    #[test]
    fn rfc7748_public_key() {
        let secret = hex::decode("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a").unwrap();
        let id = X25519Identity::from_secret(Zeroizing::new(secret.try_into().unwrap())).unwrap();
        assert_eq!(
            hex::encode(id.public),
            "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"
        );
    }

    /// Wycheproof X25519 through the backend in use (`crate::crypto`). Every `valid` and
    /// `acceptable` case must give the expected shared secret, except those whose expected
    /// secret is all zeros (low-order public keys): they are refused, which is exactly the
    /// rejection age's spec demands, so they are counted separately.
    #[test]
    fn wycheproof_x25519() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../vectors/wycheproof/x25519_test.json");
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let (mut matched, mut zero_refused, mut invalid_refused) = (0, 0, 0);
        for t in json["testGroups"].as_array().unwrap().iter().flat_map(|g| g["tests"].as_array().unwrap()) {
            let h = |k: &str| hex::decode(t[k].as_str().unwrap()).unwrap();
            let (private, public, shared, result) =
                (h("private"), h("public"), h("shared"), t["result"].as_str().unwrap());
            let got = <[u8; 32]>::try_from(&private[..])
                .ok()
                .and_then(|p| X25519Secret::new(&p).ok()?.agree(&public))
                .map(|s| s.to_vec());
            match (got, result) {
                (Some(g), "valid" | "acceptable") => {
                    assert_eq!(g, shared, "tcId {}", t["tcId"]);
                    matched += 1;
                }
                (None, "valid" | "acceptable") if shared.iter().all(|&b| b == 0) => zero_refused += 1,
                (None, "invalid") => invalid_refused += 1,
                (got, r) => panic!("tcId {}: result {r}, got {got:?}", t["tcId"]),
            }
        }
        println!("wycheproof x25519_test.json: {matched} matched, {zero_refused} all-zero outputs refused, {invalid_refused} invalid refused");
        assert_eq!(
            matched + zero_refused + invalid_refused,
            json["numberOfTests"].as_u64().unwrap() as usize
        );
    }

    #[test]
    fn agreed_outside_opens_what_the_identity_opens() {
        let (r, id) = pair();
        let fk = FileKey::generate(16);
        let (stanzas, _) = r.wrap_file_key(&fk).unwrap();
        let shares = stanza_shares(&stanzas);
        assert_eq!(shares.len(), 1);
        let me = X25519Secret::new(&id.secret).unwrap();
        let agreed = X25519Agreed::new(id.public, vec![(shares[0], me.agree(&shares[0]).unwrap())]);
        assert_eq!(agreed.unwrap_stanzas(&stanzas).unwrap().unwrap().expose(), fk.expose());
        // Another key's agreement is "not mine", never a wrong key.
        let (_, other) = pair();
        let theirs = X25519Secret::new(&other.secret).unwrap().agree(&shares[0]).unwrap();
        assert!(X25519Agreed::new(other.public, vec![(shares[0], theirs)])
            .unwrap_stanzas(&stanzas)
            .is_none());
    }
}
