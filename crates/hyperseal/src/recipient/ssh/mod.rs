//! SSH keys as age recipients and identities (age's `agessh`): the glue between the key formats
//! and the two stanza kinds, including passphrase-protected private keys, which ask for their
//! passphrase only when a stanza carries their tag (as age's `EncryptedSSHIdentity` does),
//! through the caller's [`Callbacks`].
//!
//! * key formats: [`openssh`] (public key lines, `authorized_keys`, GitHub `.keys`),
//!   [`openssh_key`] (OpenSSH private key files, bcrypt-encrypted or not), [`pem_key`] (PKCS#1
//!   and PKCS#8 PEM private keys, as age also reads them) and [`pem_legacy`] (PEM's legacy
//!   encryption of those, `Proc-Type: 4,ENCRYPTED`);
//! * stanza kinds: [`ed25519`] (`ssh-ed25519`) and [`rsa`] (`ssh-rsa`; its recipient side in
//!   `rsa_recipient.rs`).
//!
//! Both builds read OpenSSH keys and make both stanza kinds through `crate::crypto`, except for
//! RSA private keys: the portable build (WebAssembly) has no constant-time RSA decryption, so its
//! `rsa` is a stand-in whose identities are refused with that reason
//! (`../common/unavailable.rs`), and PEM private keys (`pem_key`, `pem_legacy`), which come to
//! age mostly as RSA keys, are native only.

pub mod ed25519;
pub mod openssh;
pub mod openssh_key;
#[cfg(not(portable_backend))]
pub mod pem_key;
#[cfg(not(portable_backend))]
pub mod pem_legacy;
#[cfg(not(portable_backend))]
pub mod rsa;
#[cfg(portable_backend)]
pub use super::unavailable::ssh_rsa as rsa;
pub(crate) mod rsa_recipient;

use std::sync::{Arc, OnceLock};

use self::ed25519::{SshEd25519Identity, SshEd25519Recipient};
use self::openssh::SshPublicKey;
#[cfg(not(portable_backend))]
use self::openssh::{parse_authorized_key, AuthorizedKey};
use self::openssh_key::{OpensshKeyFile, SshPrivateKey};
#[cfg(not(portable_backend))]
use self::pem_key::EncryptedPemKey;
use self::rsa::{SshRsaIdentity, SshRsaRecipient};
use crate::format::Stanza;
use crate::recipient::callbacks::Callbacks;
use crate::recipient::traits::{Identity, Recipient};
use crate::{error::Error, file_key::FileKey};

/// The recipient for an SSH public key.
pub fn recipient_of(public: &SshPublicKey) -> Result<Box<dyn Recipient>, Error> {
    Ok(match public {
        SshPublicKey::Ed25519(_) => Box::new(SshEd25519Recipient::new(public)?),
        SshPublicKey::Rsa { .. } => Box::new(SshRsaRecipient::new(public)?),
    })
}

/// Parses one `authorized_keys`-style line into a recipient; an unsupported SSH key type is an
/// error naming the type.
pub fn parse_recipient(line: &str) -> Result<Box<dyn Recipient>, Error> {
    use self::openssh::{parse_authorized_key, AuthorizedKey};
    match parse_authorized_key(line).map_err(|e| Error::InvalidRecipient(format!("SSH recipient: {e}")))? {
        AuthorizedKey::Supported(k) => recipient_of(&k),
        AuthorizedKey::Unsupported(t) => Err(Error::InvalidRecipient(format!(
            "SSH key type {t} cannot be an age recipient (only ssh-ed25519 and ssh-rsa)"
        ))),
    }
}

fn identity_of(key: SshPrivateKey) -> Result<Box<dyn Identity>, Error> {
    Ok(match key {
        SshPrivateKey::Ed25519 { seed, public } => Box::new(SshEd25519Identity::new(&seed, &public)?),
        SshPrivateKey::Rsa(c) => Box::new(SshRsaIdentity::new(&c)?),
    })
}

/// Parses an OpenSSH private key file into an identity. A passphrase-protected key is returned
/// still encrypted; `callbacks` is asked for the passphrase the first time a stanza is addressed
/// to it. Also returns the public key (for `encrypt -i` and `pubkey`).
pub fn parse_identity(
    pem: &str,
    callbacks: Arc<dyn Callbacks>,
) -> Result<(Box<dyn Identity>, SshPublicKey), Error> {
    let file = OpensshKeyFile::parse(pem)?;
    let public = file.public().clone();
    // Refuse unusable public keys (RSA under 2048 bits) now, not at the first stanza.
    recipient_of(&public).map_err(as_key_error)?;
    // So too a key this build cannot decrypt with, before a passphrase is asked for.
    #[cfg(portable_backend)]
    if matches!(public, SshPublicKey::Rsa { .. }) {
        return Err(rsa::identity_unavailable());
    }
    if !file.is_encrypted() {
        return Ok((identity_of(file.decrypt(None)?)?, public));
    }
    Ok((EncryptedSshIdentity::boxed(Locked::Openssh(file), &public, callbacks), public))
}

/// The words of the error for a legacy PEM key whose `.pub` file holds another key (age's).
#[cfg(not(portable_backend))]
pub const MISMATCHED_PUBLIC_KEY: &str = "mismatched private and public SSH key";

/// Reads a PEM private key under legacy encryption (`Proc-Type: 4,ENCRYPTED`, as `ssh-keygen -m
/// PEM -N PASS` and `openssl genrsa -traditional -aes256` write it). Its public key is inside
/// the encrypted body, so:
///
/// * with `public` (the key's `authorized_keys` line, as age reads it from `KEY.pub`), the key
///   stays encrypted and asks `callbacks` for its passphrase only when a stanza carries its tag,
///   as age does; once decrypted it must be that public key's ([`MISMATCHED_PUBLIC_KEY`]);
/// * without, the passphrase is asked now, to learn the public key.
///
/// Also returns the public key (for `encrypt -i`).
#[cfg(not(portable_backend))]
pub fn parse_legacy_identity(
    pem: &str,
    public: Option<&str>,
    callbacks: Arc<dyn Callbacks>,
) -> Result<(Box<dyn Identity>, SshPublicKey), Error> {
    for text in std::iter::once(pem).chain(public) {
        if text.len() > crate::limits::KEY_TEXT {
            return Err(crate::limits::too_long("a key file", crate::limits::KEY_TEXT));
        }
    }
    let key = pem_key::parse_encrypted(pem.trim_start())?
        .ok_or_else(|| Error::InvalidKey("not a PEM private key with legacy encryption".into()))?;
    let Some(line) = public else {
        let description = "SSH key (PEM with legacy encryption)";
        let pass = callbacks.request_passphrase(description).ok_or_else(|| no_passphrase(description))?;
        let key = key.decrypt(pass.as_bytes()).map_err(|e| wrong_passphrase(e, description))?;
        let public = key.public();
        recipient_of(&public).map_err(as_key_error)?;
        return Ok((key.ssh_identity()?, public));
    };
    let public = match parse_authorized_key(line.trim()) {
        Ok(AuthorizedKey::Supported(k)) => k,
        Ok(AuthorizedKey::Unsupported(t)) => {
            return Err(Error::InvalidKey(format!("unsupported SSH key type: {t}")))
        }
        Err(e) => return Err(Error::InvalidKey(format!("the public key of a PEM key: {e}"))),
    };
    recipient_of(&public).map_err(as_key_error)?;
    Ok((EncryptedSshIdentity::boxed(Locked::Pem(key, public.clone()), &public, callbacks), public))
}

/// A recipient a key cannot be (RSA under 2048 bits) makes the key unusable.
fn as_key_error(e: Error) -> Error {
    match e {
        Error::InvalidRecipient(why) => Error::InvalidKey(why),
        other => other,
    }
}

fn no_passphrase(description: &str) -> Error {
    Error::InvalidKey(format!("{description} is passphrase-protected and no passphrase was given"))
}

/// The error for a wrong passphrase names the key, never the passphrase.
fn wrong_passphrase(e: Error, description: &str) -> Error {
    match e {
        Error::WrongPassphrase => Error::InvalidKey(format!("incorrect passphrase for {description}")),
        other => other,
    }
}

/// A protected key as read: an OpenSSH key file (its public key in the clear), or a legacy PEM
/// key with the public key it must turn out to be.
enum Locked {
    Openssh(OpensshKeyFile),
    #[cfg(not(portable_backend))]
    Pem(EncryptedPemKey, SshPublicKey),
}

/// A passphrase-protected SSH key, decrypted on first use and then kept.
struct EncryptedSshIdentity {
    locked: Locked,
    tag: String,
    kind: &'static str,
    callbacks: Arc<dyn Callbacks>,
    decrypted: OnceLock<Box<dyn Identity>>,
}

impl EncryptedSshIdentity {
    fn boxed(locked: Locked, public: &SshPublicKey, callbacks: Arc<dyn Callbacks>) -> Box<dyn Identity> {
        let (tag, kind) = (public.fingerprint_tag(), public.key_type());
        Box::new(EncryptedSshIdentity { locked, tag, kind, callbacks, decrypted: OnceLock::new() })
    }

    fn decrypt(&self) -> Result<&dyn Identity, Error> {
        if let Some(id) = self.decrypted.get() {
            return Ok(id.as_ref());
        }
        let description = format!("SSH key {} {}", self.kind, self.tag);
        let pass =
            self.callbacks.request_passphrase(&description).ok_or_else(|| no_passphrase(&description))?;
        let id = match &self.locked {
            Locked::Openssh(file) => identity_of(
                file.decrypt(Some(pass.as_bytes())).map_err(|e| wrong_passphrase(e, &description))?,
            )?,
            #[cfg(not(portable_backend))]
            Locked::Pem(key, public) => {
                let key = key.decrypt(pass.as_bytes()).map_err(|e| wrong_passphrase(e, &description))?;
                if key.public() != *public {
                    return Err(Error::InvalidKey(MISMATCHED_PUBLIC_KEY.into()));
                }
                key.ssh_identity()?
            }
        };
        // Two threads may race here; both decrypt the same key and one result is kept.
        let _ = self.decrypted.set(id);
        Ok(self.decrypted.get().expect("just set").as_ref())
    }
}

impl Identity for EncryptedSshIdentity {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        if let Some(id) = self.decrypted.get() {
            return id.unwrap_stanza(stanza);
        }
        if stanza.tag != self.kind {
            return None;
        }
        match stanza.args.first() {
            None => {
                return Some(Err(Error::InvalidStanza(format!("{} stanza without arguments", self.kind))))
            }
            Some(t) if *t != self.tag => return None,
            Some(_) => {}
        }
        match self.decrypt() {
            Ok(id) => id.unwrap_stanza(stanza),
            Err(e) => Some(Err(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use zeroize::Zeroizing;

    use super::*;
    use crate::recipient::NoCallbacks;

    fn vector(name: &str) -> String {
        std::fs::read_to_string(format!("{}/../../vectors/ssh/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    /// The keys whose identities this build has: the portable one has no RSA private keys.
    fn usable(names: &[&'static str]) -> Vec<&'static str> {
        names.iter().copied().filter(|n| !(cfg!(portable_backend) && n.starts_with("rsa"))).collect()
    }

    /// Counts passphrase requests and answers with a fixed passphrase.
    struct Counting(&'static str, AtomicUsize);
    impl Callbacks for Counting {
        fn request_passphrase(&self, description: &str) -> Option<Zeroizing<String>> {
            assert!(description.starts_with("SSH key ssh-"), "{description}");
            self.1.fetch_add(1, Ordering::SeqCst);
            Some(Zeroizing::new(self.0.to_string()))
        }
    }

    #[test]
    fn protected_keys_ask_only_for_their_own_stanzas_and_once() {
        for name in usable(&["ed25519_ctr", "ed25519_gcm", "rsa3072_ctr"]) {
            let cb = Arc::new(Counting("hyperseal test", AtomicUsize::new(0)));
            let (id, public) = parse_identity(&vector(name), cb.clone()).unwrap();
            let r = recipient_of(&public).unwrap();
            let other = parse_recipient(&vector("ed25519.pub")).unwrap();
            let (foreign, _) = other.wrap_file_key(&FileKey::generate(16)).unwrap();
            assert!(id.unwrap_stanzas(&foreign).is_none());
            assert_eq!(cb.1.load(Ordering::SeqCst), 0, "{name}: no prompt for another key's stanza");
            for _ in 0..2 {
                let fk = FileKey::generate(16);
                let (stanzas, _) = r.wrap_file_key(&fk).unwrap();
                assert_eq!(id.unwrap_stanzas(&stanzas).unwrap().unwrap().expose(), fk.expose());
            }
            assert_eq!(cb.1.load(Ordering::SeqCst), 1, "{name}: asked once, then kept");
        }
    }

    #[test]
    fn wrong_or_missing_passphrase_is_a_clear_error() {
        let (r, _) = (parse_recipient(&vector("ed25519_ctr.pub")).unwrap(), ());
        let (stanzas, _) = r.wrap_file_key(&FileKey::generate(16)).unwrap();
        let wrong = Arc::new(Counting("not it", AtomicUsize::new(0)));
        let (id, _) = parse_identity(&vector("ed25519_ctr"), wrong).unwrap();
        let err = id.unwrap_stanzas(&stanzas).unwrap().unwrap_err().to_string();
        assert!(err.contains("incorrect passphrase") && !err.contains("not it"), "{err}");
        let (id, _) = parse_identity(&vector("ed25519_ctr"), Arc::new(NoCallbacks)).unwrap();
        let err = id.unwrap_stanzas(&stanzas).unwrap().unwrap_err().to_string();
        assert!(err.contains("no passphrase was given"), "{err}");
    }

    #[test]
    fn unencrypted_keys_and_recipient_lines() {
        for name in usable(&["ed25519", "rsa2048"]) {
            let (id, public) = parse_identity(&vector(name), Arc::new(NoCallbacks)).unwrap();
            let r = parse_recipient(&vector(&format!("{name}.pub"))).unwrap();
            let line = vector(&format!("{name}.pub"));
            assert_eq!(public.to_authorized_key(), line.split(' ').take(2).collect::<Vec<_>>().join(" "));
            let fk = FileKey::generate(16);
            let (stanzas, _) = r.wrap_file_key(&fk).unwrap();
            assert_eq!(id.unwrap_stanzas(&stanzas).unwrap().unwrap().expose(), fk.expose());
        }
        assert!(parse_identity(&vector("rsa1024"), Arc::new(NoCallbacks)).is_err(), "too small");
        let err = parse_recipient(&vector("ecdsa.pub")).err().unwrap().to_string();
        assert!(err.contains("ecdsa-sha2-nistp256"), "{err}");
    }

    /// Files made by the real age v1.3.1 (`age -R KEY.pub`, see vectors/ssh/README.md) open with
    /// the matching private keys, protected ones through the callback.
    #[test]
    fn files_made_by_age_decrypt() {
        for name in usable(&["ed25519", "ed25519_ctr", "ed25519_gcm", "rsa2048", "rsa3072_ctr"]) {
            let file = std::fs::read(format!("{}/../../vectors/ssh/{name}.age", env!("CARGO_MANIFEST_DIR")))
                .unwrap();
            let cb = Arc::new(Counting("hyperseal test", AtomicUsize::new(0)));
            let ids = crate::recipient::parse_identities_with(&vector(name), cb).unwrap();
            assert_eq!(&crate::decrypt::decrypt(&ids, &file).unwrap()[..], b"hello from age\n", "{name}");
            // Another key's identity does not match.
            let other = if name == "ed25519" { "ed25519_gcm" } else { "ed25519" };
            let other = crate::recipient::parse_identities(&vector(other)).unwrap();
            assert!(
                matches!(crate::decrypt::decrypt(&other, &file), Err(Error::NoIdentityMatched)),
                "{name}"
            );
        }
    }

    /// PEM keys with legacy encryption made by ssh-keygen (AES-128-CBC) and OpenSSL (AES-256-CBC,
    /// 3DES) open the files the real age made for them: with the `.pub` line (age's way) the
    /// passphrase is asked only for the key's own stanza, once; without it, at once.
    #[cfg(not(portable_backend))]
    #[test]
    fn legacy_pem_keys_open_files_made_by_age() {
        struct Answer(&'static str, AtomicUsize);
        impl Callbacks for Answer {
            fn request_passphrase(&self, description: &str) -> Option<Zeroizing<String>> {
                assert!(description.starts_with("SSH key"), "{description}");
                self.1.fetch_add(1, Ordering::SeqCst);
                Some(Zeroizing::new(self.0.to_string()))
            }
        }
        let (foreign, _) =
            parse_recipient(&vector("ed25519.pub")).unwrap().wrap_file_key(&FileKey::generate(16)).unwrap();
        for name in ["rsa2048_pem_aes128", "rsa2048_pem_aes256", "rsa2048_pem_des3"] {
            let file = std::fs::read(format!("{}/../../vectors/ssh/{name}.age", env!("CARGO_MANIFEST_DIR")))
                .unwrap();
            let (pem, line) = (vector(name), vector(&format!("{name}.pub")));
            let cb = Arc::new(Answer("hyperseal test", AtomicUsize::new(0)));
            let (id, public) = parse_legacy_identity(&pem, Some(&line), cb.clone()).unwrap();
            assert_eq!(
                public.to_authorized_key(),
                line.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
            );
            assert!(id.unwrap_stanzas(&foreign).is_none());
            assert_eq!(cb.1.load(Ordering::SeqCst), 0, "{name}: no prompt for another key's stanza");
            let ids = vec![id];
            for _ in 0..2 {
                assert_eq!(&crate::decrypt::decrypt(&ids, &file).unwrap()[..], b"hello from age\n", "{name}");
            }
            assert_eq!(cb.1.load(Ordering::SeqCst), 1, "{name}: asked once, then kept");

            let cb = Arc::new(Answer("hyperseal test", AtomicUsize::new(0)));
            let ids = crate::recipient::parse_identities_with(&pem, cb.clone()).unwrap();
            assert_eq!(cb.1.load(Ordering::SeqCst), 1, "{name}: no public key, so asked at once");
            assert_eq!(&crate::decrypt::decrypt(&ids, &file).unwrap()[..], b"hello from age\n", "{name}");
            let rs =
                crate::recipient::identity_recipients_for(&pem, cb, crate::format::Profile::Age).unwrap();
            assert_eq!(rs.len(), 1);

            // A wrong passphrase fails on both paths, as a wrong passphrase, without quoting it.
            let wrong = Arc::new(Answer("not it", AtomicUsize::new(0)));
            let (id, _) = parse_legacy_identity(&pem, Some(&line), wrong.clone()).unwrap();
            let err = crate::decrypt::decrypt(&[id], &file).unwrap_err().to_string();
            assert!(err.contains("incorrect passphrase") && !err.contains("not it"), "{name}: {err}");
            let err = crate::recipient::parse_identities_with(&pem, wrong).err().unwrap().to_string();
            assert!(err.contains("incorrect passphrase") && !err.contains("not it"), "{name}: {err}");
            let err = parse_legacy_identity(&pem, None, Arc::new(NoCallbacks)).err().unwrap().to_string();
            assert!(err.contains("no passphrase was given"), "{err}");
        }
    }

    /// A `.pub` line of another key (or of a kind age cannot use) is refused: at once for the
    /// kind, after the passphrase for a mismatch, as age does.
    #[cfg(not(portable_backend))]
    #[test]
    fn legacy_pem_key_with_another_public_key() {
        let name = "rsa2048_pem_aes128";
        let (pem, other) = (vector(name), vector("rsa2048_pem_des3.pub"));
        let cb = Arc::new(Counting("hyperseal test", AtomicUsize::new(0)));
        let (id, public) = parse_legacy_identity(&pem, Some(&other), cb).unwrap();
        let (stanzas, _) = recipient_of(&public).unwrap().wrap_file_key(&FileKey::generate(16)).unwrap();
        let err = id.unwrap_stanzas(&stanzas).unwrap().unwrap_err().to_string();
        assert!(err.contains(MISMATCHED_PUBLIC_KEY), "{err}");
        let err =
            parse_legacy_identity(&pem, Some(&vector("ecdsa.pub")), Arc::new(NoCallbacks)).err().unwrap();
        assert!(err.to_string().contains("unsupported SSH key type: ecdsa-sha2-nistp256"), "{err}");
        assert!(
            parse_legacy_identity(&vector("rsa2048"), None, Arc::new(NoCallbacks)).is_err(),
            "not legacy PEM"
        );
        let big = format!("{pem}{}", " ".repeat(crate::limits::KEY_TEXT));
        assert!(matches!(parse_legacy_identity(&big, None, Arc::new(NoCallbacks)), Err(Error::Limit(_))));
    }

    /// The portable build (WebAssembly) takes SSH keys too: `ssh-ed25519` both ways (above) and
    /// `ssh-rsa` as recipients. An RSA private key is refused when read, before any passphrase
    /// is asked for, with the reason; files for both kinds still open with an ed25519 key.
    #[cfg(portable_backend)]
    #[test]
    fn portable_build_takes_ssh_recipients_and_refuses_rsa_identities() {
        for name in ["rsa2048", "rsa3072_ctr"] {
            let cb = Arc::new(Counting("hyperseal test", AtomicUsize::new(0)));
            let err = crate::recipient::parse_identities_with(&vector(name), cb.clone()).err().unwrap();
            assert!(matches!(err, Error::InvalidKey(_)), "{name}: {err}");
            assert!(err.to_string().contains("not constant time"), "{name}: {err}");
            assert_eq!(cb.1.load(Ordering::SeqCst), 0, "{name}: no passphrase asked");
        }
        let text = format!("{}{}", vector("ed25519.pub"), vector("rsa2048.pub"));
        let rs = crate::recipient::parse_recipients_file(&text).unwrap();
        let file = crate::encrypt::encrypt(&rs, b"to both").unwrap();
        let ids = crate::recipient::parse_identities(&vector("ed25519")).unwrap();
        assert_eq!(&crate::decrypt::decrypt(&ids, &file).unwrap()[..], b"to both");
    }

    /// An `authorized_keys`-style file with comments, options and an ECDSA key (skipped with a
    /// note), and a GitHub `.keys` file (bare `type base64` lines).
    #[test]
    fn recipients_files() {
        struct Notes(std::sync::Mutex<Vec<String>>);
        impl Callbacks for Notes {
            fn display_message(&self, m: &str) {
                self.0.lock().unwrap().push(m.to_string());
            }
            fn request_passphrase(&self, _: &str) -> Option<Zeroizing<String>> {
                None
            }
        }
        let (ed, rsa, ecdsa) = (vector("ed25519.pub"), vector("rsa2048.pub"), vector("ecdsa.pub"));
        let text = format!("# my keys\n\n{ed}command=\"ls -l\",no-pty {rsa}{ecdsa}");
        let notes = Arc::new(Notes(Default::default()));
        let rs = crate::recipient::parse_recipients_file_with(&text, notes.clone()).unwrap();
        assert_eq!(rs.len(), 2);
        assert_eq!(
            *notes.0.lock().unwrap(),
            ["ignoring an SSH key of unsupported type ecdsa-sha2-nistp256 at line 5"]
        );
        let bare = |l: &str| l.split(' ').take(2).collect::<Vec<_>>().join(" ") + "\n";
        let github = format!("{}{}{}", bare(&ed), bare(&rsa), bare(&ecdsa));
        let rs = crate::recipient::parse_recipients_file(&github).unwrap();
        let fk = FileKey::generate(16);
        let stanzas: Vec<Stanza> = rs.iter().flat_map(|r| r.wrap_file_key(&fk).unwrap().0).collect();
        assert_eq!(stanzas.iter().map(|s| s.tag.as_str()).collect::<Vec<_>>(), ["ssh-ed25519", "ssh-rsa"]);
        let err = crate::recipient::parse_recipients_file(&ecdsa).err().unwrap().to_string();
        assert!(err.contains("unsupported types"), "{err}");
        assert!(
            crate::recipient::parse_recipients_file(&format!("{ed}ssh-ed25519 AAAA\n")).is_err(),
            "a broken line fails"
        );
    }
}
