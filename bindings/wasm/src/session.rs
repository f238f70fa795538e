//! `EncryptSession` / `DecryptSession`: thin wrappers over the library's push-based `Sealer` and
//! `Opener` (which hold at most one chunk back, so memory is flat whatever the size). The Web
//! Streams `TransformStream`s over them are in `js/index.js`. No framing or header logic here.

use hyperseal::{Encryptor, Opener, Sealer};
use wasm_bindgen::prelude::*;

use crate::errors::{arg, fail};
use crate::{args, keys};

fn finished() -> JsValue {
    arg("the stream is already finished")
}

/// Copies `out` into a JS `Uint8Array` and empties it, keeping its capacity for the next piece.
fn drain(out: &mut Vec<u8>) -> js_sys::Uint8Array {
    let a = js_sys::Uint8Array::from(&out[..]);
    out.clear();
    a
}

/// Plaintext in, file bytes out (binary files; armor is for the one-shot calls).
#[wasm_bindgen]
pub struct EncryptSession {
    sealer: Option<Sealer>,
    out: Vec<u8>,
}

#[wasm_bindgen]
impl EncryptSession {
    /// Starts a file for the given public key(s); the header comes out of the first `push`.
    /// `options.format`: 'hyperseal' (default) or 'age'.
    #[wasm_bindgen(constructor)]
    pub fn new(public_key: JsValue, options: JsValue) -> Result<EncryptSession, JsValue> {
        let recipients = keys::recipients(&public_key)?;
        if args::bool_field(&options, "armor")? {
            return Err(arg("options.armor: streams write binary files (armor is for encryptByPublicKey)"));
        }
        let enc = Encryptor::with_recipients(&recipients, args::file_options(&options)?).map_err(fail)?;
        Ok(EncryptSession { sealer: Some(enc.sealer()), out: Vec::new() })
    }

    /// Starts a passphrase-encrypted file: Argon2id for 'hyperseal' (the default), scrypt for
    /// 'age' (`options.format`).
    #[wasm_bindgen(js_name = withPassphrase)]
    pub fn with_passphrase(passphrase: String, options: JsValue) -> Result<EncryptSession, JsValue> {
        let passphrase = zeroize::Zeroizing::new(passphrase);
        if passphrase.is_empty() {
            return Err(arg("the passphrase is empty"));
        }
        if args::bool_field(&options, "armor")? {
            return Err(arg(
                "options.armor: streams write binary files (armor is for encryptWithPassphrase)",
            ));
        }
        let enc = Encryptor::with_passphrase(passphrase, args::file_options(&options)?).map_err(fail)?;
        Ok(EncryptSession { sealer: Some(enc.sealer()), out: Vec::new() })
    }

    /// Encrypts `data`; returns the file bytes that are ready.
    pub fn push(&mut self, data: &[u8]) -> Result<js_sys::Uint8Array, JsValue> {
        self.sealer.as_mut().ok_or_else(finished)?.update(data, &mut self.out);
        Ok(drain(&mut self.out))
    }

    /// Seals the final chunk; returns the remaining file bytes.
    #[wasm_bindgen(js_name = "final")]
    pub fn finish(&mut self) -> Result<js_sys::Uint8Array, JsValue> {
        self.sealer.take().ok_or_else(finished)?.finish(&mut self.out);
        Ok(drain(&mut self.out))
    }
}

/// File bytes in (a binary hyperseal or age file), authenticated plaintext out.
#[wasm_bindgen]
pub struct DecryptSession {
    opener: Option<Opener>,
    out: Vec<u8>,
}

#[wasm_bindgen]
impl DecryptSession {
    /// Prepares to decrypt with the given private key.
    #[wasm_bindgen(constructor)]
    pub fn new(private_key: String) -> Result<DecryptSession, JsValue> {
        Ok(DecryptSession { opener: Some(Opener::new(keys::identities(private_key)?)), out: Vec::new() })
    }

    /// Prepares to decrypt a passphrase-encrypted file (hyperseal's Argon2id or age's scrypt).
    #[wasm_bindgen(js_name = withPassphrase)]
    pub fn with_passphrase(passphrase: String) -> DecryptSession {
        DecryptSession { opener: Some(Opener::new(keys::passphrase_identities(passphrase))), out: Vec::new() }
    }

    /// Feeds file bytes; returns the plaintext of every chunk that is now known not to be the
    /// last and authenticated. Errors are sticky.
    pub fn push(&mut self, data: &[u8]) -> Result<js_sys::Uint8Array, JsValue> {
        let opener = self.opener.as_mut().ok_or_else(finished)?;
        if let Err(e) = opener.update(data, &mut self.out) {
            self.opener = None;
            self.out.clear();
            return Err(fail(e));
        }
        Ok(drain(&mut self.out))
    }

    /// Ends the input: opens the final chunk and returns its plaintext, or fails if the file
    /// was cut short.
    #[wasm_bindgen(js_name = "final")]
    pub fn finish(&mut self) -> Result<js_sys::Uint8Array, JsValue> {
        let r = self.opener.take().ok_or_else(finished)?.finish(&mut self.out);
        if let Err(e) = r {
            self.out.clear();
            return Err(fail(e));
        }
        Ok(drain(&mut self.out))
    }
}
