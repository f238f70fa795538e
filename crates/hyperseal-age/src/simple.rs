//! age's one-call helpers, over [`Encryptor`] and [`Decryptor`].

use std::io::{Read, Write};
use std::iter;

use crate::{DecryptError, Decryptor, EncryptError, Encryptor, Identity, Recipient};

/// Encrypts `plaintext` to one recipient, returning the age file.
pub fn encrypt(recipient: &impl Recipient, plaintext: &[u8]) -> Result<Vec<u8>, EncryptError> {
    let encryptor = Encryptor::with_recipients(iter::once(recipient as _))?;
    let mut file = Vec::with_capacity(plaintext.len() + 256);
    let mut writer = encryptor.wrap_output(&mut file)?;
    writer.write_all(plaintext)?;
    writer.finish()?;
    Ok(file)
}

/// Encrypts `plaintext` to one recipient, returning the ASCII-armored age file.
#[cfg(feature = "armor")]
#[cfg_attr(docsrs, doc(cfg(feature = "armor")))]
pub fn encrypt_and_armor(recipient: &impl Recipient, plaintext: &[u8]) -> Result<String, EncryptError> {
    use crate::armor::{ArmoredWriter, Format};
    let encryptor = Encryptor::with_recipients(iter::once(recipient as _))?;
    let mut file = Vec::with_capacity(plaintext.len() * 4 / 3 + 512);
    let mut writer = encryptor.wrap_output(ArmoredWriter::wrap_output(&mut file, Format::AsciiArmor)?)?;
    writer.write_all(plaintext)?;
    writer.finish()?.finish()?;
    Ok(String::from_utf8(file).expect("armor is ASCII"))
}

/// Decrypts an age file (binary, or armored: the core detects armor itself) with one identity.
pub fn decrypt(identity: &impl Identity, ciphertext: &[u8]) -> Result<Vec<u8>, DecryptError> {
    let decryptor = Decryptor::new(ciphertext)?;
    let mut reader = decryptor.decrypt(iter::once(identity as _))?;
    let mut plaintext = Vec::with_capacity(ciphertext.len());
    reader.read_to_end(&mut plaintext)?;
    Ok(plaintext)
}
