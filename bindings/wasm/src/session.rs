//! `EncryptSession` / `DecryptSession`: thin wrappers over the library's push-based `Sealer` and
//! `Opener` (which hold at most one chunk back, so memory is flat whatever the size). The Web
//! Streams `TransformStream`s over them are in `js/core.js`. No framing or header logic here.
//! Armor comes from the library too: its `ArmoredWriter` on the way out (`{ armor: true }`), its
//! push-based `ArmorDecoder` on the way in (chosen by the file's first byte, as the CLI detects it).

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

use hyperseal::format::armor::{starts_armor, ArmorDecoder, ArmoredWriter};
use hyperseal::{Encryptor, FileSizes, Opener, Options, Sealer};
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

/// The armored text written so far, shared with the `ArmoredWriter` that writes into it (which
/// keeps its inner writer), so each `push` can hand out what is ready.
#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Armor on the way out: the file bytes go through the library's `ArmoredWriter`.
struct Armor {
    writer: ArmoredWriter<Shared>,
    text: Shared,
}

/// Plaintext in, file bytes out: binary, or armored with `{ armor: true }`.
#[wasm_bindgen]
pub struct EncryptSession {
    sealer: Option<Sealer>,
    out: Vec<u8>,
    armor: Option<Armor>,
    sizes: Option<FileSizes>,
}

impl EncryptSession {
    pub(crate) fn start(enc: Encryptor, opts: &Options, armor: bool) -> EncryptSession {
        let armor = armor.then(|| {
            let text = Shared::default();
            Armor { writer: hyperseal::armored(text.clone(), opts.profile), text }
        });
        let sealer = enc.sealer();
        EncryptSession { sizes: Some(sealer.sizes()), sealer: Some(sealer), out: Vec::new(), armor }
    }

    /// What is ready: the file bytes in `out`, or their armored text.
    fn ready(&mut self, last: bool) -> Result<js_sys::Uint8Array, JsValue> {
        let Some(armor) = self.armor.as_mut() else { return Ok(drain(&mut self.out)) };
        armor.writer.write_all(&self.out).map_err(|e| fail(e.into()))?;
        self.out.clear();
        if last {
            let done = self.armor.take().expect("armor");
            done.writer.finish().map_err(|e| fail(e.into()))?;
            return Ok(drain(&mut done.text.0.borrow_mut()));
        }
        Ok(drain(&mut armor.text.0.borrow_mut()))
    }
}

#[wasm_bindgen]
impl EncryptSession {
    /// Starts a file for the given public key(s); the header comes out of the first `push`.
    /// `options.format`: 'hyperseal' (default) or 'age'; `options.allowPlugins`: allow a key that
    /// names an age plugin (default false).
    #[wasm_bindgen(constructor)]
    pub fn new(public_key: JsValue, options: JsValue) -> Result<EncryptSession, JsValue> {
        let recipients = keys::recipients(&public_key, keys::allow_plugins(&options)?)?;
        let opts = args::file_options(&options)?;
        let enc = Encryptor::with_recipients(&recipients, opts.clone()).map_err(fail)?;
        Ok(Self::start(enc, &opts, args::bool_field(&options, "armor")?))
    }

    /// Starts a passphrase-encrypted file: Argon2id for 'hyperseal' (the default), scrypt for
    /// 'age' (`options.format`).
    #[wasm_bindgen(js_name = withPassphrase)]
    pub fn with_passphrase(passphrase: String, options: JsValue) -> Result<EncryptSession, JsValue> {
        let passphrase = zeroize::Zeroizing::new(passphrase);
        if passphrase.is_empty() {
            return Err(arg("the passphrase is empty"));
        }
        let opts = args::file_options(&options)?;
        let enc = Encryptor::with_passphrase(passphrase, opts.clone()).map_err(fail)?;
        Ok(Self::start(enc, &opts, args::bool_field(&options, "armor")?))
    }

    /// The file's length for a plaintext of `n` bytes (binary; typage's `size`).
    pub fn size(&self, n: f64) -> Result<f64, JsValue> {
        let sizes = self.sizes.ok_or_else(finished)?;
        Ok(sizes.encrypted_len(n as u64) as f64)
    }

    /// Encrypts `data`; returns the file bytes that are ready.
    pub fn push(&mut self, data: &[u8]) -> Result<js_sys::Uint8Array, JsValue> {
        self.sealer.as_mut().ok_or_else(finished)?.update(data, &mut self.out);
        self.ready(false)
    }

    /// Seals the final chunk; returns the remaining file bytes.
    #[wasm_bindgen(js_name = "final")]
    pub fn finish(&mut self) -> Result<js_sys::Uint8Array, JsValue> {
        self.sealer.take().ok_or_else(finished)?.finish(&mut self.out);
        self.ready(true)
    }
}

/// Whether a file whose first byte is `first` is armored (the library's rule, which
/// `DecryptSession` applies): `WorkerPool` sends such files to one worker's stream, since
/// parts work on binary files only.
#[wasm_bindgen(js_name = startsArmor)]
pub fn starts_armor_js(first: u8) -> bool {
    starts_armor(first)
}

/// How the input is read: not known before its first byte, then binary or armored.
enum Input {
    Unknown,
    Binary,
    Armored { decoder: ArmorDecoder, file: Vec<u8> },
}

/// File bytes in (a hyperseal or age file, binary or armored), authenticated plaintext out.
#[wasm_bindgen]
pub struct DecryptSession {
    opener: Option<Opener>,
    out: Vec<u8>,
    input: Input,
    sizes: Option<FileSizes>,
}

impl DecryptSession {
    pub(crate) fn new_with(opener: Opener) -> DecryptSession {
        DecryptSession { opener: Some(opener), out: Vec::new(), input: Input::Unknown, sizes: None }
    }

    /// Feeds `data` (de-armored first if the file is armored) to the opener.
    fn feed(&mut self, data: &[u8]) -> Result<(), hyperseal::Error> {
        let opener = self.opener.as_mut().expect("checked by the caller");
        if matches!(self.input, Input::Unknown) && !data.is_empty() {
            self.input = match starts_armor(data[0]) {
                true => Input::Armored { decoder: ArmorDecoder::new(), file: Vec::new() },
                false => Input::Binary,
            };
        }
        match &mut self.input {
            Input::Armored { decoder, file } => {
                decoder.update(data, file)?;
                let r = opener.update(file, &mut self.out);
                file.clear();
                r
            }
            _ => opener.update(data, &mut self.out),
        }
    }

    /// Ends the input: the armor must be complete before the opener's last chunk is opened.
    fn end(&mut self) -> Result<(), hyperseal::Error> {
        let opener = self.opener.take().expect("checked by the caller");
        if let Input::Armored { decoder, .. } = std::mem::replace(&mut self.input, Input::Binary) {
            decoder.finish()?;
        }
        opener.finish(&mut self.out)
    }
}

#[wasm_bindgen]
impl DecryptSession {
    /// Prepares to decrypt with the given private key; `options.allowPlugins`: allow a key that
    /// names an age plugin (default false).
    #[wasm_bindgen(constructor)]
    pub fn new(private_key: JsValue, options: JsValue) -> Result<DecryptSession, JsValue> {
        Ok(Self::new_with(Opener::new(keys::identities(&private_key, keys::allow_plugins(&options)?)?)))
    }

    /// Prepares to decrypt a passphrase-encrypted file (hyperseal's Argon2id or age's scrypt).
    #[wasm_bindgen(js_name = withPassphrase)]
    pub fn with_passphrase(passphrase: String) -> DecryptSession {
        Self::new_with(Opener::new(keys::passphrase_identities(passphrase)))
    }

    /// Feeds file bytes; returns the plaintext of every chunk that is now known not to be the
    /// last and authenticated. Errors are sticky.
    pub fn push(&mut self, data: &[u8]) -> Result<js_sys::Uint8Array, JsValue> {
        self.opener.as_ref().ok_or_else(finished)?;
        if let Err(e) = self.feed(data) {
            self.opener = None;
            self.out.clear();
            return Err(fail(e));
        }
        self.sizes = self.sizes.or_else(|| self.opener.as_ref().and_then(Opener::sizes));
        Ok(drain(&mut self.out))
    }

    /// The plaintext length of the whole (binary) file of `n` bytes, once the header is read
    /// (typage's `size`).
    pub fn size(&self, n: f64) -> Result<f64, JsValue> {
        let sizes = self.sizes.ok_or_else(|| arg("the header is not read yet"))?;
        Ok(sizes.plaintext_len(n as u64).map_err(fail)? as f64)
    }

    /// Whether the header has been read and opened.
    #[wasm_bindgen(getter, js_name = headerRead)]
    pub fn header_read(&self) -> bool {
        self.sizes.is_some()
    }

    /// Ends the input: opens the final chunk and returns its plaintext, or fails if the file
    /// was cut short.
    #[wasm_bindgen(js_name = "final")]
    pub fn finish(&mut self) -> Result<js_sys::Uint8Array, JsValue> {
        self.opener.as_ref().ok_or_else(finished)?;
        if let Err(e) = self.end() {
            self.out.clear();
            return Err(fail(e));
        }
        Ok(drain(&mut self.out))
    }
}
