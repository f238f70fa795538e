//! `ssh-rsa` recipients, exactly as age's `agessh` package makes them, in every build.
//!
//! Stanza `-> ssh-rsa <tag>`, tag = unpadded base64 of the first 4 bytes of SHA-256 of the SSH
//! wire public key; body = RSA-OAEP-SHA-256 (MGF1-SHA-256) of the file key with the label
//! `age-encryption.org/v1/ssh-rsa`. Keys of 2048 to 8192 bits (2048 is below the 3072 bits
//! hyperseal's own `rsa-oaep` asks for; it is accepted here only because SSH keys of that size
//! are what users have, and age takes them).
//!
//! Encryption is a public-key operation, so it runs on either backend (`crate::crypto`: aws-lc
//! natively, RustCrypto's `rsa` in the portable build, whose exponentiation is constant time in
//! the message). The identity (`rsa.rs`) is native only: see `../common/unavailable.rs`.

use super::openssh::{check_rsa_exponent, SshPublicKey};
use crate::crypto::RsaOaepPublic;
use crate::format::Stanza;
use crate::recipient::traits::{Labels, Recipient};
use crate::{error::Error, file_key::FileKey};

pub(super) const TAG: &str = "ssh-rsa";
pub(super) const LABEL: &[u8] = b"age-encryption.org/v1/ssh-rsa";

/// An `ssh-rsa` public key as an age recipient.
pub struct SshRsaRecipient {
    key: RsaOaepPublic,
    bits: usize,
    public: SshPublicKey,
}

impl std::fmt::Debug for SshRsaRecipient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SshRsaRecipient({} bits, {})", self.bits, self.public.fingerprint_tag())
    }
}

impl SshRsaRecipient {
    /// From a parsed `ssh-rsa` public key.
    pub fn new(public: &SshPublicKey) -> Result<Self, Error> {
        let SshPublicKey::Rsa { n, e } = public else {
            return Err(Error::InvalidRecipient("not an ssh-rsa key".into()));
        };
        check_rsa_exponent(e).map_err(Error::InvalidRecipient)?;
        // n has no leading zero byte (the SSH parser strips it), so its bit length is exact.
        let bits = n.len() * 8 - n[0].leading_zeros() as usize;
        if !(2048..=8192).contains(&bits) {
            return Err(Error::InvalidRecipient(format!(
                "ssh-rsa key of {bits} bits: age needs 2048 to 8192 bits"
            )));
        }
        let key = RsaOaepPublic::new(n, e)
            .ok_or_else(|| Error::InvalidRecipient("ssh-rsa public key rejected".into()))?;
        Ok(SshRsaRecipient { key, bits, public: public.clone() })
    }

    /// The stanza argument: the key's fingerprint tag.
    pub(super) fn tag(&self) -> String {
        self.public.fingerprint_tag()
    }

    /// `msg` under another OAEP label (a test's wrong label).
    #[cfg(all(test, not(portable_backend)))]
    pub(super) fn encrypt_with_label(&self, msg: &[u8], label: &[u8]) -> Vec<u8> {
        self.key.encrypt(msg, label).unwrap()
    }
}

impl Recipient for SshRsaRecipient {
    fn wraps_offline(&self) -> bool {
        true
    }

    fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> {
        let ct = self.key.encrypt(file_key.expose(), LABEL)?;
        Ok((vec![Stanza::new(TAG, vec![self.tag()], ct)], Labels::new()))
    }

    fn key_id(&self) -> Option<Vec<u8>> {
        Some([b"ssh-rsa ".as_slice(), &self.public.to_blob()].concat())
    }

    fn names_stanza(&self, stanza: &Stanza) -> Option<bool> {
        Some(stanza.tag == TAG && stanza.args.first() == Some(&self.tag()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipient::ssh::openssh::{parse_authorized_key, AuthorizedKey};

    fn public(name: &str) -> SshPublicKey {
        let path = format!("{}/../../vectors/ssh/{name}.pub", env!("CARGO_MANIFEST_DIR"));
        let AuthorizedKey::Supported(k) =
            parse_authorized_key(&std::fs::read_to_string(path).unwrap()).unwrap()
        else {
            panic!()
        };
        k
    }

    /// The stanza's shape on either backend: one argument (the tag), a body as long as the
    /// modulus, fresh randomness each time.
    #[test]
    fn stanza_shape() {
        for (name, bytes) in [("rsa2048", 256), ("rsa3072_ctr", 384)] {
            let r = SshRsaRecipient::new(&public(name)).unwrap();
            let fk = FileKey::generate(16);
            let (a, labels) = r.wrap_file_key(&fk).unwrap();
            let (b, _) = r.wrap_file_key(&fk).unwrap();
            assert!(labels.is_empty());
            assert_eq!((a[0].tag.as_str(), &a[0].args), (TAG, &vec![r.tag()]));
            assert_eq!(a[0].body.len(), bytes, "{name}");
            assert_ne!(a[0].body, b[0].body, "OAEP is randomised");
            assert_eq!(r.names_stanza(&a[0]), Some(true));
        }
        let err = SshRsaRecipient::new(&public("rsa1024")).unwrap_err().to_string();
        assert!(err.contains("2048"), "{err}");
    }
}
