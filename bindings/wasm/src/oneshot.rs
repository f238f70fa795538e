//! One-shot encryption and decryption of whole buffers, to public keys or a passphrase.

use std::io::Write;

use hyperseal::{Decryptor, Encryptor, Options};
use wasm_bindgen::prelude::*;
use zeroize::Zeroizing;

use crate::args;
use crate::errors::{error, fail};
use crate::keys;

/// Seals `plaintext` with a prepared encryptor, armored if asked.
fn seal(enc: Encryptor, opts: &Options, plaintext: &[u8], armor: bool) -> Result<Vec<u8>, JsValue> {
    let mut file = vec![0u8; enc.encrypted_len(plaintext.len())];
    enc.encrypt_into(plaintext, &mut file).map_err(fail)?;
    if !armor {
        return Ok(file);
    }
    let mut w = hyperseal::armored(Vec::with_capacity(file.len() / 3 * 4 + 128), opts.profile);
    w.write_all(&file).map_err(|e| fail(e.into()))?;
    w.finish().map_err(|e| fail(e.into()))
}

/// Encrypts `data` (a `Uint8Array` or a UTF-8 string) to one or more public keys.
/// `options.format`: 'hyperseal' (default) or 'age' (X25519 and hybrid keys only);
/// `options.armor`: ASCII armor (PEM-like text); `options.allowPlugins`: allow a key that names
/// an age plugin (default false: refused with `ERR_HYPERSEAL_KEY`).
#[wasm_bindgen(js_name = encryptByPublicKey)]
pub fn encrypt_by_public_key(
    data: JsValue,
    public_key: JsValue,
    options: JsValue,
) -> Result<Vec<u8>, JsValue> {
    let plaintext = args::Plaintext::of(&data, "data")?;
    let recipients = keys::recipients(&public_key, keys::allow_plugins(&options)?)?;
    let opts = args::file_options(&options)?;
    let armor = args::bool_field(&options, "armor")?;
    let enc = Encryptor::with_recipients(&recipients, opts.clone()).map_err(fail)?;
    seal(enc, &opts, &plaintext, armor)
}

/// Decrypts a hyperseal or age file (binary or armored) with a private key. Nothing is returned
/// unless every byte authenticated. `options.allowPlugins` as for `encryptByPublicKey`.
#[wasm_bindgen(js_name = decryptByPrivateKey)]
pub fn decrypt_by_private_key(
    data: JsValue,
    private_key: JsValue,
    options: JsValue,
) -> Result<Vec<u8>, JsValue> {
    let file = args::bytes(&data, "data")?;
    let ids = keys::identities(&private_key, keys::allow_plugins(&options)?)?;
    open(&file, &ids)
}

/// Encrypts with a passphrase: Argon2id for 'hyperseal' files (the default), scrypt for 'age'
/// files (as age does). `options` as for `encryptByPublicKey`.
#[wasm_bindgen(js_name = encryptWithPassphrase)]
pub fn encrypt_with_passphrase(
    data: JsValue,
    passphrase: String,
    options: JsValue,
) -> Result<Vec<u8>, JsValue> {
    let passphrase = Zeroizing::new(passphrase);
    if passphrase.is_empty() {
        return Err(error(hyperseal::ErrorCode::Argument, "the passphrase is empty"));
    }
    let plaintext = args::Plaintext::of(&data, "data")?;
    let opts = args::file_options(&options)?;
    let armor = args::bool_field(&options, "armor")?;
    let enc = Encryptor::with_passphrase(passphrase, opts.clone()).map_err(fail)?;
    seal(enc, &opts, &plaintext, armor)
}

/// Decrypts a passphrase-encrypted file (hyperseal or age, binary or armored). A wrong
/// passphrase fails with `ERR_HYPERSEAL_AUTH`.
#[wasm_bindgen(js_name = decryptWithPassphrase)]
pub fn decrypt_with_passphrase(data: JsValue, passphrase: String) -> Result<Vec<u8>, JsValue> {
    let file = args::bytes(&data, "data")?;
    open(&file, &keys::passphrase_identities(passphrase))
}

fn open(file: &[u8], ids: &[Box<dyn hyperseal::recipient::Identity>]) -> Result<Vec<u8>, JsValue> {
    if file.is_empty() {
        return Err(error(hyperseal::ErrorCode::Format, "unknown file format: the input is empty"));
    }
    // `file.len()` bytes always hold the plaintext. On failure the buffer may hold
    // unauthenticated bytes: it is zeroized, never returned.
    let mut out = args::Plaintext::zeroed(file.len());
    let n = Decryptor::from_slice(file).and_then(|d| d.decrypt_into(ids, &mut out)).map_err(fail)?;
    Ok(out.take(n))
}
