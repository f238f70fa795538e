//! SSH and PEM keys: OpenSSH private key files (`openssh-key-v1`, plain or bcrypt-protected),
//! PKCS#8 / PKCS#1 PEM keys, and `ssh-ed25519` / `ssh-rsa` public key lines.

use std::sync::Arc;

use hyperseal::recipient::ssh::openssh::{parse_authorized_key, AuthorizedKey, SshPublicKey};
use hyperseal::recipient::ssh::openssh_key::OpensshKeyFile;
use hyperseal::recipient::ssh::pem_key;
use hyperseal::recipient::{self, NoCallbacks};
use hyperseal::{Error, FileKey, Profile};

use crate::fixtures::Answer;
use crate::keys::assert_no_key_material;

/// The passphrase of the protected seeds (crates/hyperseal-fuzz/fixtures/README.md).
const PASSPHRASE: &[u8] = b"password";

pub fn ssh_key(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let text = text.as_ref();
    let mut errors = Vec::new();
    if let Ok(file) = OpensshKeyFile::parse(text) {
        let public = file.public().clone();
        assert_eq!(SshPublicKey::from_blob(&public.to_blob()).as_ref(), Ok(&public));
        for pass in [None, Some(PASSPHRASE), Some(&b"wrong"[..])] {
            if let Err(e) = file.decrypt(pass) {
                errors.push(e.to_string());
            }
        }
    }
    match pem_key::parse(text) {
        Ok(Some(key)) => {
            let public = key.public();
            assert_eq!(SshPublicKey::from_blob(&public.to_blob()).as_ref(), Ok(&public));
            let _ = key.is_pkcs8_rsa();
            if let Err(e) = key.ssh_identity() {
                errors.push(e.to_string());
            }
        }
        Ok(None) => {}
        Err(e) => errors.push(e.to_string()),
    }
    // Through the identity parser: what parses opens what its own recipient seals.
    match recipient::parse_identities_with(text, Arc::new(Answer)) {
        Ok(ids) => {
            if let Ok(rs) = hyperseal::identity_file::recipients_of_for(
                text.as_bytes(),
                Arc::new(NoCallbacks),
                Profile::Age,
            ) {
                for r in rs {
                    let file = hyperseal::Encryptor::with_recipients(&[r], hyperseal::Options::age())
                        .and_then(|e| {
                            let mut out = Vec::new();
                            e.encrypt_slice(b"fuzz", &mut out, None)?;
                            Ok(out)
                        });
                    let Ok(file) = file else { continue };
                    match hyperseal::decrypt(&ids, &file) {
                        Ok(plain) => assert_eq!(&plain[..], b"fuzz"),
                        // An encrypted key's public half is stored outside the encryption, and
                        // its private half is aes256-ctr without a MAC: an edited key still
                        // parses, and is found malformed, not matching its public half, or with
                        // check words that differ (read as a wrong passphrase) only once
                        // decrypted (age refuses it then too).
                        Err(hyperseal::Error::InvalidKey(m))
                            if encrypted_openssh(text)
                                && (m.contains("do not match")
                                    || m.starts_with("OpenSSH private key:")
                                    || m.starts_with("incorrect passphrase")) => {}
                        Err(e) => panic!("an SSH identity opens its own file: {e:?}"),
                    }
                }
            }
        }
        Err(e) => errors.push(e.to_string()),
    }
    for msg in &errors {
        assert_no_key_material(text, msg);
    }
}

/// An OpenSSH key whose private half is encrypted: every unencrypted one starts with the base64
/// of "openssh-key-v1\0" and the cipher name "none" (`b3BlbnNzaC1rZXktdjEAAAAABG5v` = the
/// magic, a length of 4 and "no").
fn encrypted_openssh(text: &str) -> bool {
    text.contains("-----BEGIN OPENSSH PRIVATE KEY-----") && !text.contains("b3BlbnNzaC1rZXktdjEAAAAABG5v")
}

pub fn ssh_recipient(data: &[u8]) {
    // First byte odd: the rest is a raw public key blob; even: a text line.
    let Some((&mode, rest)) = data.split_first() else { return };
    if mode & 1 == 1 {
        if let Ok(k) = SshPublicKey::from_blob(rest) {
            assert!(k.to_blob() == rest, "an SSH public key blob has a second spelling");
            line_round_trip(&k);
        }
        return;
    }
    let line = String::from_utf8_lossy(rest);
    if let Ok(AuthorizedKey::Supported(k)) = parse_authorized_key(&line) {
        line_round_trip(&k);
    }
    if let Ok(r) = recipient::parse_recipient(&line) {
        // A key that parsed wraps, or is refused as a bad key: never an internal failure.
        for len in [16, 32] {
            let fk = FileKey::from_slice(&vec![7u8; len]).expect("16 or 32 bytes");
            if let Err(e) = r.wrap_file_key(&fk) {
                assert!(!matches!(e, Error::Crypto), "a parsed SSH recipient failed as {e:?}");
            }
        }
    }
}

fn line_round_trip(k: &SshPublicKey) {
    let line = k.to_authorized_key();
    match parse_authorized_key(&line) {
        Ok(AuthorizedKey::Supported(back)) => assert!(back == *k, "{line} reads back as another key"),
        other => panic!("{line} does not read back: {other:?}"),
    }
    let _ = (k.key_type(), k.fingerprint_tag());
}
