//! Identity files as age reads them, from bytes: plain identity files (see
//! [`recipient::parse_identities_with`](crate::recipient::parse_identities_with)) and identity files that are themselves passphrase-encrypted
//! age files (`age-keygen | age -p > key.age`, armored or not), plus the recipients of an identity
//! file for encrypting to one's own key (age's `-e -i`).
//!
//! Here, beside [`Decryptor`], not in `recipient/`: opening an encrypted identity file is a
//! decryption, so this sits above both the recipient kinds and the decryption API.
//!
//! An encrypted identity file is opened at once with a passphrase from the caller's
//! [`Callbacks`](crate::recipient::Callbacks); only a passphrase (scrypt) file is accepted, as in age, and its content must be
//! a plain identity file (no nesting).
//!
//! ```
//! use std::sync::Arc;
//! use hyperseal::identity_file;
//! use hyperseal::recipient::{self, Kind, NoCallbacks};
//! let key = recipient::generate(Kind::X25519).unwrap();
//! let recipients = identity_file::recipients_of(key.secret.as_bytes(), Arc::new(NoCallbacks)).unwrap();
//! let ids = identity_file::parse(key.secret.as_bytes(), Arc::new(NoCallbacks)).unwrap();
//! let ct = hyperseal::encrypt(&recipients, b"to myself").unwrap();
//! assert_eq!(&hyperseal::decrypt(&ids, &ct).unwrap()[..], b"to myself");
//! ```

use std::sync::Arc;

use zeroize::Zeroizing;

use crate::format::AGE_V1;
use crate::recipient::{
    identity_recipients_for, parse_identities_with, passphrase_identity_for, Callbacks, Identity, Recipient,
};
use crate::{decrypt::Decryptor, error::Error};

const ARMOR_BEGIN: &[u8] = b"-----BEGIN AGE ENCRYPTED FILE-----";

/// Whether `bytes` is an age file (binary or armored) rather than a plain identity file.
pub fn is_encrypted(bytes: &[u8]) -> bool {
    bytes.starts_with(AGE_V1.as_bytes()) || bytes.starts_with(ARMOR_BEGIN)
}

/// The identity file's text: decrypted first if it is an encrypted age file.
fn plaintext(bytes: &[u8], callbacks: &dyn Callbacks) -> Result<Zeroizing<String>, Error> {
    if !is_encrypted(bytes) {
        let text = std::str::from_utf8(bytes).map_err(|_| {
            Error::InvalidKey("identity file is neither text nor an age-encrypted file".into())
        })?;
        return Ok(Zeroizing::new(text.to_string()));
    }
    let dec = Decryptor::new(bytes)?.threads(1);
    if !dec.header().is_passphrase() || dec.header().profile != crate::format::Profile::Age {
        return Err(Error::InvalidKey(
            "an encrypted identity file must be an age file encrypted with a passphrase (age -p)".into(),
        ));
    }
    let pass = callbacks.request_passphrase("encrypted identity file").ok_or_else(|| {
        Error::InvalidKey("the identity file is passphrase-encrypted and no passphrase was given".into())
    })?;
    let identity = passphrase_identity_for(dec.header(), pass);
    let mut out = Zeroizing::new(Vec::new());
    dec.decrypt_stream(&[identity], &mut *out, None)?;
    if is_encrypted(&out) {
        return Err(Error::InvalidKey(
            "an encrypted identity file may not hold another encrypted file".into(),
        ));
    }
    let text = std::str::from_utf8(&out)
        .map_err(|_| Error::InvalidKey("the decrypted identity file is not text".into()))?;
    Ok(Zeroizing::new(text.to_string()))
}

/// The text of an identity file: the file itself, or what an encrypted one holds (its
/// passphrase from `callbacks`). The identity agent keeps this text to seal it when locked.
pub fn text_of(bytes: &[u8], callbacks: &dyn Callbacks) -> Result<Zeroizing<String>, Error> {
    plaintext(bytes, callbacks)
}

/// Parses an identity file given as bytes: a plain identity file, or one encrypted with a
/// passphrase by age (the passphrase comes from `callbacks`).
pub fn parse(bytes: &[u8], callbacks: Arc<dyn Callbacks>) -> Result<Vec<Box<dyn Identity>>, Error> {
    let text = plaintext(bytes, callbacks.as_ref())?;
    parse_identities_with(&text, callbacks)
}

/// The recipients of every identity in the file, to encrypt to oneself (age's `-e -i`). A
/// passphrase-protected SSH key needs no passphrase for this (its public key is in the clear);
/// an encrypted identity file does.
pub fn recipients_of(bytes: &[u8], callbacks: Arc<dyn Callbacks>) -> Result<Vec<Box<dyn Recipient>>, Error> {
    recipients_of_for(bytes, callbacks, crate::format::Profile::Hyperseal)
}

/// [`recipients_of`] for a file of `profile` (age's `-e -i` writes age files: a PKCS#8 RSA key
/// is then an `ssh-rsa` recipient, as in age).
pub fn recipients_of_for(
    bytes: &[u8],
    callbacks: Arc<dyn Callbacks>,
    profile: crate::format::Profile,
) -> Result<Vec<Box<dyn Recipient>>, Error> {
    let text = plaintext(bytes, callbacks.as_ref())?;
    identity_recipients_for(&text, callbacks, profile)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::recipient::{generate, Kind, NoCallbacks};
    use crate::{encrypt::Options, format::Profile};

    struct Pass(&'static str, AtomicUsize);
    impl Callbacks for Pass {
        fn request_passphrase(&self, _: &str) -> Option<Zeroizing<String>> {
            self.1.fetch_add(1, Ordering::SeqCst);
            Some(Zeroizing::new(self.0.to_string()))
        }
    }

    fn encrypt(recipients: &[Box<dyn Recipient>], data: &[u8], opts: &Options) -> Vec<u8> {
        let mut out = Vec::new();
        crate::encrypt::Encryptor::with_recipients(recipients, opts.clone())
            .unwrap()
            .encrypt_slice(data, &mut out, None)
            .unwrap();
        out
    }

    /// `text` encrypted with passphrase `pass` as an age file (scrypt at a small work factor).
    fn encrypt_identity(text: &str, pass: &str, armor: bool) -> Vec<u8> {
        let r = crate::recipient::scrypt::ScryptRecipient::new(Zeroizing::new(pass.into()))
            .with_work_factor(10)
            .unwrap();
        let ct = encrypt(&[Box::new(r) as Box<dyn Recipient>], text.as_bytes(), &Options::age());
        if !armor {
            return ct;
        }
        let mut out = Vec::new();
        let mut w = crate::encrypt::armored(&mut out, Profile::Age);
        std::io::Write::write_all(&mut w, &ct).unwrap();
        w.finish().unwrap();
        out
    }

    #[test]
    fn encrypted_identity_files() {
        let k = generate(Kind::X25519).unwrap();
        let r = crate::recipient::parse_recipient(&k.public).unwrap();
        let ct = encrypt(&[r], b"secret", &Options::age());
        for armor in [false, true] {
            let file = encrypt_identity(&format!("# key\n{}\n", k.secret.as_str()), "pw", armor);
            assert!(is_encrypted(&file));
            let cb = Arc::new(Pass("pw", AtomicUsize::new(0)));
            let ids = parse(&file, cb.clone()).unwrap();
            assert_eq!(&crate::decrypt::decrypt(&ids, &ct).unwrap()[..], b"secret");
            assert_eq!(cb.1.load(Ordering::SeqCst), 1);
            let rs = recipients_of(&file, cb).unwrap();
            let ct2 = encrypt(&rs, b"again", &Options::age());
            assert_eq!(&crate::decrypt::decrypt(&ids, &ct2).unwrap()[..], b"again");
            // Wrong and missing passphrases.
            assert!(matches!(
                parse(&file, Arc::new(Pass("no", AtomicUsize::new(0)))),
                Err(Error::WrongPassphrase)
            ));
            let err = parse(&file, Arc::new(NoCallbacks)).err().unwrap().to_string();
            assert!(err.contains("no passphrase was given"), "{err}");
        }
    }

    #[test]
    fn only_passphrase_files_and_no_nesting() {
        let k = generate(Kind::X25519).unwrap();
        let to_key = encrypt(
            &[crate::recipient::parse_recipient(&k.public).unwrap()],
            k.secret.as_bytes(),
            &Options::age(),
        );
        let err = parse(&to_key, Arc::new(NoCallbacks)).err().unwrap().to_string();
        assert!(err.contains("encrypted with a passphrase"), "{err}");
        let inner = String::from_utf8(encrypt_identity(k.secret.as_str(), "pw", true)).unwrap();
        let nested = encrypt_identity(&inner, "pw", false);
        let err = parse(&nested, Arc::new(Pass("pw", AtomicUsize::new(0)))).err().unwrap().to_string();
        assert!(err.contains("another encrypted file"), "{err}");
        // A hyperseal-format file, and binary junk, are neither text nor age files: refused.
        let hs = encrypt(
            &[crate::recipient::parse_recipient(&k.public).unwrap()],
            k.secret.as_bytes(),
            &Options::default(),
        );
        let err = parse(&hs, Arc::new(NoCallbacks)).err().unwrap().to_string();
        assert!(err.contains("neither text nor"), "{err}");
        assert!(parse(b"\xff\xfe not text", Arc::new(NoCallbacks)).is_err());
    }

    #[test]
    fn plain_files_and_recipients() {
        for kind in [Kind::X25519, Kind::Hybrid] {
            let k = generate(kind).unwrap();
            let rs = recipients_of(k.secret.as_bytes(), Arc::new(NoCallbacks)).unwrap();
            let ids = parse(k.secret.as_bytes(), Arc::new(NoCallbacks)).unwrap();
            let ct = encrypt(&rs, b"x", &Options::age());
            assert_eq!(&crate::decrypt::decrypt(&ids, &ct).unwrap()[..], b"x");
        }
        // A protected SSH key gives its recipient without asking (native builds only: the
        // portable backend has no SSH keys and says so, see unavailable.rs).
        #[cfg(not(portable_backend))]
        ssh_recipient_needs_no_passphrase();
    }

    #[cfg(not(portable_backend))]
    fn ssh_recipient_needs_no_passphrase() {
        let path = format!("{}/../../vectors/ssh/ed25519_ctr", env!("CARGO_MANIFEST_DIR"));
        let cb = Arc::new(Pass("unused", AtomicUsize::new(0)));
        let rs = recipients_of(&std::fs::read(path).unwrap(), cb.clone()).unwrap();
        assert_eq!(rs.len(), 1);
        assert_eq!(cb.1.load(Ordering::SeqCst), 0);
    }
}
