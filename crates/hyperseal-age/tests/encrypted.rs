//! `age::encrypted::Identity`: an identity file sealed with a passphrase opens files sealed to
//! the keys inside, asking for the passphrase once however many files follow; a wrong
//! passphrase is one `KeyDecryptionFailed`, asked once too; a file that is not
//! passphrase-encrypted is `None`; and its recipients are the keys' own.

use std::io::{Read, Write};
use std::iter;
use std::sync::{Arc, Mutex};

use age::secrecy::{ExposeSecret, SecretString};
use hyperseal_age as age;

/// Answers every passphrase request with `passphrase`, counting the requests and messages.
#[derive(Clone)]
struct Typist {
    passphrase: &'static str,
    asked: Arc<Mutex<usize>>,
    messages: Arc<Mutex<Vec<String>>>,
}

impl Typist {
    fn new(passphrase: &'static str) -> Self {
        Typist { passphrase, asked: Arc::default(), messages: Arc::default() }
    }
    fn asked(&self) -> usize {
        *self.asked.lock().unwrap()
    }
}

impl age::Callbacks for Typist {
    fn display_message(&self, message: &str) {
        self.messages.lock().unwrap().push(message.to_string());
    }
    fn confirm(&self, _: &str, _: &str, _: Option<&str>) -> Option<bool> {
        None
    }
    fn request_public_string(&self, _: &str) -> Option<String> {
        None
    }
    fn request_passphrase(&self, _: &str) -> Option<SecretString> {
        *self.asked.lock().unwrap() += 1;
        Some(SecretString::from(self.passphrase.to_string()))
    }
}

fn seal(to: &dyn age::Recipient, text: &[u8]) -> Vec<u8> {
    let mut file = vec![];
    let mut w = age::Encryptor::with_recipients(iter::once(to)).unwrap().wrap_output(&mut file).unwrap();
    w.write_all(text).unwrap();
    w.finish().unwrap();
    file
}

fn open(file: &[u8], with: &dyn age::Identity) -> Result<Vec<u8>, age::DecryptError> {
    let mut out = vec![];
    age::Decryptor::new(file)?.decrypt(iter::once(with))?.read_to_end(&mut out)?;
    Ok(out)
}

/// An identity file holding `key`, sealed with `passphrase` (work factor 10: quick).
fn sealed_identity_file(key: &age::x25519::Identity, passphrase: &str) -> Vec<u8> {
    let text = format!("# a key\n{}\n", key.to_string().expose_secret());
    let mut to = age::scrypt::Recipient::new(SecretString::from(passphrase.to_string()));
    to.set_work_factor(10);
    seal(&to, text.as_bytes())
}

#[test]
fn a_passphrase_encrypted_identity_file_opens_many_files_asking_once() {
    let key = age::x25519::Identity::generate();
    let keys = sealed_identity_file(&key, "correct horse");
    let typist = Typist::new("correct horse");
    let id = age::encrypted::Identity::from_buffer(&keys[..], Some("keys.age".into()), typist.clone(), None)
        .unwrap()
        .expect("a passphrase-encrypted file");
    assert_eq!(typist.asked(), 0, "nothing is asked before a key is needed");
    for i in 0..3 {
        let file = seal(&key.to_public(), format!("file {i}").as_bytes());
        assert_eq!(open(&file, &id).unwrap(), format!("file {i}").as_bytes());
    }
    assert_eq!(typist.asked(), 1);
    // The recipients are the keys inside; a stranger's file is no match, with no new question.
    let recipients = id.recipients().unwrap();
    assert_eq!(recipients.len(), 1);
    let file = seal(recipients[0].as_ref(), b"to the key inside");
    assert_eq!(open(&file, &key).unwrap(), b"to the key inside");
    let stranger = seal(&age::x25519::Identity::generate().to_public(), b"not yours");
    assert!(matches!(open(&stranger, &id), Err(age::DecryptError::NoMatchingKeys)));
    assert_eq!(typist.asked(), 1);
}

#[test]
fn a_wrong_passphrase_fails_once_and_stays_failed() {
    let key = age::x25519::Identity::generate();
    let keys = sealed_identity_file(&key, "correct horse");
    let typist = Typist::new("wrong");
    let id = age::encrypted::Identity::from_buffer(&keys[..], None, typist.clone(), None).unwrap().unwrap();
    let file = seal(&key.to_public(), b"secret");
    for _ in 0..2 {
        assert!(matches!(open(&file, &id), Err(age::DecryptError::KeyDecryptionFailed)));
    }
    assert_eq!(typist.asked(), 1);
}

#[test]
fn a_file_that_is_not_passphrase_encrypted_is_none() {
    let key = age::x25519::Identity::generate();
    let file = seal(&key.to_public(), b"to a key");
    let id = age::encrypted::Identity::from_buffer(&file[..], None, Typist::new("x"), None).unwrap();
    assert!(id.is_none());
}
