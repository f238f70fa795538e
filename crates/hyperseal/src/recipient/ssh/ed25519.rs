//! `ssh-ed25519` recipients, exactly as age's `agessh` package makes them.
//!
//! The Ed25519 public key is mapped to its X25519 (Montgomery) form, u = (1 + y) / (1 − y), and
//! the secret to SHA-512(seed)[:32], the scalar Ed25519 itself uses. Then, per stanza:
//!
//! ```text
//! tag     = base64(SHA-256(ssh wire public key)[:4])
//! tweak   = HKDF-SHA-256(ikm = "", salt = ssh wire public key, info = LABEL)
//! shared  = X25519(tweak, X25519(ephemeral secret, recipient u))
//! wrap    = HKDF-SHA-256(ikm = shared, salt = ephemeral share ‖ recipient u, info = LABEL)
//! stanza  = -> ssh-ed25519 <tag> <b64 ephemeral share>, body = ChaCha20-Poly1305(wrap, 0, file key)
//! ```
//!
//! with LABEL = `age-encryption.org/v1/ssh-ed25519`. The tweak binds the stanza to the whole SSH
//! key. X25519 and HKDF come from `crate::crypto` like every other recipient's (aws-lc natively,
//! RustCrypto in the portable build); the Edwards side (the Edwards → Montgomery map and the
//! public key of a seed) comes from curve25519-dalek in both builds, since aws-lc-rs exposes
//! neither that map nor field arithmetic, and the map is better not written by hand. dalek also
//! decompresses the point first, so a 32-byte string that is not a curve point is refused (age
//! would encrypt to a meaningless key that nobody can decrypt).

use std::sync::Arc;

use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
use sha2::{Digest, Sha512};
use zeroize::Zeroizing;

use super::openssh::SshPublicKey;
use crate::crypto::X25519Secret;
use crate::format::{encode_b64, Stanza};
use crate::recipient::primitives::{
    check_wrapped_len, decode_arg, hkdf32, open_file_key, random, seal_file_key, ZERO_NONCE,
};
use crate::recipient::traits::{Identity, Labels, Recipient};
use crate::{error::Error, file_key::FileKey};

const TAG: &str = "ssh-ed25519";
const LABEL: &[u8] = b"age-encryption.org/v1/ssh-ed25519";

/// What both sides derive from the SSH public key alone.
#[derive(Clone)]
struct KeyInfo {
    tag: String,
    /// The tweak as the backend's X25519 key (cleared when freed), made once: aws-lc computes
    /// the public half when a key is made, a fixed-base multiplication each wrap and unwrap
    /// would otherwise repeat.
    tweak: Arc<X25519Secret>,
}

impl KeyInfo {
    fn new(public: &SshPublicKey) -> Result<Self, Error> {
        let tweak = hkdf32(&public.to_blob(), &[], LABEL);
        Ok(KeyInfo { tag: public.fingerprint_tag(), tweak: Arc::new(X25519Secret::new(&tweak)?) })
    }
}

/// X25519(k, u), refusing the all-zero output of a low-order point.
fn x25519(k: &X25519Secret, u: &[u8], low_order: fn() -> Error) -> Result<Zeroizing<[u8; 32]>, Error> {
    k.agree(u).ok_or_else(low_order)
}

fn wrap_key(
    info: &KeyInfo,
    shared: &[u8],
    share: &[u8],
    recipient: &[u8; 32],
) -> Result<Zeroizing<[u8; 32]>, Error> {
    let tweaked = x25519(&info.tweak, shared, || Error::Crypto)?;
    let mut salt = [0u8; 64];
    salt[..32].copy_from_slice(share);
    salt[32..].copy_from_slice(recipient);
    Ok(hkdf32(&salt, &tweaked[..], LABEL))
}

/// An `ssh-ed25519` public key as an age recipient.
#[derive(Clone)]
pub struct SshEd25519Recipient {
    montgomery: [u8; 32],
    info: KeyInfo,
}

impl std::fmt::Debug for SshEd25519Recipient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SshEd25519Recipient({})", self.info.tag)
    }
}

impl SshEd25519Recipient {
    /// From a parsed `ssh-ed25519` public key.
    pub fn new(public: &SshPublicKey) -> Result<Self, Error> {
        let SshPublicKey::Ed25519(pk) = public else {
            return Err(Error::InvalidRecipient("not an ssh-ed25519 key".into()));
        };
        let point = CompressedEdwardsY(*pk)
            .decompress()
            .ok_or_else(|| Error::InvalidRecipient("ssh-ed25519 key is not a curve point".into()))?;
        Ok(SshEd25519Recipient { montgomery: point.to_montgomery().to_bytes(), info: KeyInfo::new(public)? })
    }
}

impl Recipient for SshEd25519Recipient {
    fn wraps_offline(&self) -> bool {
        true
    }

    fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> {
        // The ephemeral secret comes from the OS RNG (see `rng`), as for X25519 recipients.
        let eph = X25519Secret::new(&Zeroizing::new(random::<32>()?))?;
        let share = eph.public()?;
        let low_order = || Error::InvalidRecipient("ssh-ed25519 key is a low-order point".into());
        let shared = x25519(&eph, &self.montgomery, low_order)?;
        let key = wrap_key(&self.info, &shared[..], &share, &self.montgomery)?;
        let body = seal_file_key(&key, ZERO_NONCE, file_key);
        let args = vec![self.info.tag.clone(), encode_b64(&share)];
        Ok((vec![Stanza::new(TAG, args, body)], Labels::new()))
    }

    fn key_id(&self) -> Option<Vec<u8>> {
        Some([b"ssh-ed25519 ".as_slice(), &self.montgomery].concat())
    }

    fn names_stanza(&self, stanza: &Stanza) -> Option<bool> {
        Some(stanza.tag == TAG && stanza.args.first() == Some(&self.info.tag))
    }
}

/// An `ssh-ed25519` private key as an age identity. Zeroized on drop; `Debug` is redacted.
pub struct SshEd25519Identity {
    /// SHA-512(seed)[:32] as the backend's X25519 key, made once (see `KeyInfo::tweak`).
    scalar: X25519Secret,
    ours: [u8; 32],
    info: KeyInfo,
}

impl std::fmt::Debug for SshEd25519Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SshEd25519Identity({}, redacted)", self.info.tag)
    }
}

impl SshEd25519Identity {
    /// From the Ed25519 seed and its public key; refuses a pair that does not belong together.
    pub fn new(seed: &[u8; 32], public: &[u8; 32]) -> Result<Self, Error> {
        let mut h = Zeroizing::new([0u8; 64]);
        h.copy_from_slice(&Sha512::digest(seed));
        let mut scalar = Zeroizing::new([0u8; 32]);
        scalar.copy_from_slice(&h[..32]);
        // RFC 8032 §5.1.5: the public key is the clamped scalar times the base point (dalek's
        // fixed-base multiplication is constant time in the scalar).
        if EdwardsPoint::mul_base_clamped(*scalar).compress().to_bytes() != *public {
            return Err(Error::InvalidKey("ssh-ed25519 private and public keys do not match".into()));
        }
        let scalar = X25519Secret::new(&scalar)?;
        let ours = scalar.public()?;
        Ok(SshEd25519Identity { scalar, ours, info: KeyInfo::new(&SshPublicKey::Ed25519(*public))? })
    }

    fn unwrap_own(&self, share: &[u8], body: &[u8]) -> Result<FileKey, Error> {
        check_wrapped_len(body)?;
        let low_order = || Error::InvalidStanza("ssh-ed25519 share is a low-order point".into());
        let shared = x25519(&self.scalar, share, low_order)?;
        let key = wrap_key(&self.info, &shared[..], share, &self.ours)?;
        // The tag said this stanza is ours, so a failure is fatal, as in age.
        open_file_key(&key, ZERO_NONCE, body)
            .ok_or_else(|| Error::InvalidStanza("ssh-ed25519: failed to decrypt the file key".into()))
    }
}

impl Identity for SshEd25519Identity {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        if stanza.tag != TAG {
            return None;
        }
        // Same order of checks as agessh: shape first, then "is it mine" by tag.
        let [tag, share] = stanza.args.as_slice() else {
            return Some(Err(Error::InvalidStanza(
                "ssh-ed25519 stanza must have exactly two arguments".into(),
            )));
        };
        let share = match decode_arg(share, 32, "ssh-ed25519 ephemeral share") {
            Ok(s) => s,
            Err(e) => return Some(Err(e)),
        };
        if *tag != self.info.tag {
            return None;
        }
        Some(self.unwrap_own(&share, &stanza.body))
    }
}

#[cfg(test)]
mod tests {
    use super::super::openssh_key::{OpensshKeyFile, SshPrivateKey};
    use super::*;
    use crate::recipient::contract::{Damaged, Pair};

    fn pair(name: &str) -> (SshEd25519Recipient, SshEd25519Identity) {
        let path = format!("{}/../../vectors/ssh/{name}", env!("CARGO_MANIFEST_DIR"));
        let f = OpensshKeyFile::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
        let r = SshEd25519Recipient::new(f.public()).unwrap();
        let SshPrivateKey::Ed25519 { seed, public } = f.decrypt(Some(b"hyperseal test")).unwrap() else {
            panic!()
        };
        (r, SshEd25519Identity::new(&seed, &public).unwrap())
    }

    #[test]
    fn round_trip_and_stanza_shape() {
        let (r, id) = pair("ed25519");
        assert_eq!(r.montgomery, id.ours, "the birational map agrees with X25519(SHA-512(seed))");
        Pair { recipient: &r, identity: &id }.round_trip(&[16, 32], |len, s, labels| {
            assert!(labels.is_empty());
            assert_eq!(s.tag, "ssh-ed25519");
            assert_eq!(s.args[0], "f8M0TA", "tag of vectors/ssh/ed25519.pub");
            assert_eq!(s.body.len(), len + 16);
        });
        assert!(format!("{id:?}").contains("redacted"));
    }

    #[test]
    fn not_mine_and_broken() {
        let (r, id) = pair("ed25519");
        let (_, other) = pair("ed25519_ctr");
        let pair = Pair { recipient: &r, identity: &id };
        let s = pair.stanza(16);
        // `other` sees another key's tag
        pair.not_mine(&s, &[&other], &[Stanza::new("X25519", vec!["AA".into()], vec![])]);
        pair.damaged(
            &s,
            Damaged::Invalid,
            &[
                &|b| b.args.push("x".into()),
                &|b| b.args[1] = encode_b64(&[1; 31]),
                &|b| b.args[1] = encode_b64(&[0; 32]), // low order
                &|b| {
                    b.body.pop();
                },
                &|b| b.body[0] ^= 1, // our tag: a body that does not open is fatal
                &|b| b.args[1] = encode_b64(&[9; 32]), // a different share: does not open either
            ],
        );
    }

    #[test]
    fn mismatched_or_invalid_keys_refused() {
        let (_, id) = pair("ed25519");
        let path = format!("{}/../../vectors/ssh/ed25519_gcm", env!("CARGO_MANIFEST_DIR"));
        let f = OpensshKeyFile::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
        let SshPrivateKey::Ed25519 { seed, .. } = f.decrypt(Some(b"hyperseal test")).unwrap() else {
            panic!()
        };
        let SshPublicKey::Ed25519(wrong_public) = SshPublicKey::Ed25519([0x55; 32]) else { unreachable!() };
        assert!(SshEd25519Identity::new(&seed, &wrong_public).is_err());
        drop(id);
        // y = 2 is not the y of any curve point (x² would be a non-square).
        let mut not_a_point = [0u8; 32];
        not_a_point[0] = 2;
        assert!(SshEd25519Recipient::new(&SshPublicKey::Ed25519(not_a_point)).is_err());
        // The identity point (y = 1) maps to u = 0, a low-order point: refused when wrapping.
        let mut identity_point = [0u8; 32];
        identity_point[0] = 1;
        let r = SshEd25519Recipient::new(&SshPublicKey::Ed25519(identity_point)).unwrap();
        assert!(matches!(r.wrap_file_key(&FileKey::generate(16)), Err(Error::InvalidRecipient(_))));
    }
}
