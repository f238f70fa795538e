//! Native halves of `createEncryptStream` / `createDecryptStream` (the `Transform`s are in
//! `index.js`): thin wrappers over the library's push-based `Sealer` and `Opener`, which hold at
//! most one chunk back, so memory is flat whatever the size. No framing or header logic here.

use hyperseal::{Encryptor, FileSizes, Opener, Options, Sealer};
use napi::bindgen_prelude::{BufferSlice, Either};
use napi::Env;
use napi_derive::napi;

use crate::errors::{Fail, JsErr};
use crate::keys;

/// Copies `out` into a JS-heap Buffer and empties it, keeping its capacity: handing the `Vec`
/// itself to JS would make every piece a fresh external allocation that V8 frees late, and RSS
/// would climb with the stream's length.
fn drain_to_js<'e>(env: &'e Env, out: &mut Vec<u8>) -> Result<BufferSlice<'e>, Fail> {
    let b = BufferSlice::copy_from(env, &out[..])?;
    out.clear();
    Ok(b)
}

fn finished() -> Fail {
    Fail::arg("the stream is already finished")
}

/// Native half of `createEncryptStream`: plaintext in, file bytes out.
#[napi]
pub struct EncryptSession {
    sealer: Option<Sealer>,
    out: Vec<u8>,
    sizes: Option<FileSizes>,
}

impl EncryptSession {
    fn start(sealer: Sealer) -> Self {
        EncryptSession { sizes: Some(sealer.sizes()), sealer: Some(sealer), out: Vec::new() }
    }
}

/// The file length for a plaintext length, or the reverse (typage's `size`).
fn size_of(sizes: Option<FileSizes>, n: f64, encrypting: bool) -> Result<f64, JsErr> {
    let sizes = sizes.ok_or_else(|| Fail::arg("the header is not read yet"))?;
    Ok(match encrypting {
        true => sizes.encrypted_len(n as u64) as f64,
        false => sizes.plaintext_len(n as u64).map_err(Fail::from)? as f64,
    })
}

#[napi]
impl EncryptSession {
    /// The file's length for a plaintext of `n` bytes.
    #[napi]
    pub fn size(&self, n: f64) -> Result<f64, JsErr> {
        size_of(self.sizes, n, true)
    }

    /// Starts a file for the given public key(s); the header comes out of the first `push`.
    /// `allowPlugins`: allow a key that names an age plugin (default false).
    #[napi(constructor)]
    pub fn new(public_key: Either<String, Vec<String>>, allow_plugins: Option<bool>) -> Result<Self, JsErr> {
        let recipients = keys::recipients(&public_key, allow_plugins.unwrap_or(false))?;
        let enc = Encryptor::with_recipients(&recipients, Options::default()).map_err(Fail::from)?;
        Ok(EncryptSession::start(enc.sealer()))
    }

    /// An age file for `hyperseal/age`'s `Encrypter` (see `age.rs`).
    #[napi(factory)]
    pub fn age(plan: crate::age::AgePlan) -> Result<Self, JsErr> {
        Ok(EncryptSession::start(crate::age::encryptor(&plan)?.sealer()))
    }

    /// Encrypts `data`; returns the file bytes that are ready.
    #[napi]
    pub fn push<'e>(&mut self, env: &'e Env, data: &[u8]) -> Result<BufferSlice<'e>, JsErr> {
        self.sealer.as_mut().ok_or_else(finished)?.update(data, &mut self.out);
        Ok(drain_to_js(env, &mut self.out)?)
    }

    /// Seals the final chunk; returns the remaining file bytes.
    #[napi(js_name = "final")]
    pub fn finish<'e>(&mut self, env: &'e Env) -> Result<BufferSlice<'e>, JsErr> {
        self.sealer.take().ok_or_else(finished)?.finish(&mut self.out);
        Ok(drain_to_js(env, &mut self.out)?)
    }
}

/// Native half of `createDecryptStream`: file bytes in, authenticated plaintext out.
#[napi]
pub struct DecryptSession {
    opener: Option<Opener>,
    out: Vec<u8>,
    sizes: Option<FileSizes>,
}

#[napi]
impl DecryptSession {
    /// Prepares to decrypt with the given private key. `allowPlugins`: allow a key that names
    /// an age plugin (default false).
    #[napi(constructor)]
    pub fn new(private_key: String, allow_plugins: Option<bool>) -> Result<Self, JsErr> {
        let ids = keys::identities(&private_key, allow_plugins.unwrap_or(false))?;
        Ok(DecryptSession { opener: Some(Opener::new(ids)), out: Vec::new(), sizes: None })
    }

    /// An age file for `hyperseal/age`'s `Decrypter` (see `age.rs`).
    #[napi(factory)]
    pub fn age(keys: crate::age::AgeKeys) -> Result<Self, JsErr> {
        let ids = std::sync::Arc::new(crate::age::identities(&keys)?);
        Ok(DecryptSession { opener: Some(Opener::new(ids)), out: Vec::new(), sizes: None })
    }

    /// Feeds file bytes; returns the plaintext of every chunk that is now known not to be the
    /// last and authenticated. Errors are sticky.
    #[napi]
    pub fn push<'e>(&mut self, env: &'e Env, data: &[u8]) -> Result<BufferSlice<'e>, JsErr> {
        let opener = self.opener.as_mut().ok_or_else(finished)?;
        if let Err(e) = opener.update(data, &mut self.out) {
            self.opener = None;
            self.out.clear();
            return Err(Fail::from(e).into());
        }
        self.sizes = self.sizes.or_else(|| opener.sizes());
        Ok(drain_to_js(env, &mut self.out)?)
    }

    /// The plaintext length of the whole file of `n` bytes, once the header is read.
    #[napi]
    pub fn size(&self, n: f64) -> Result<f64, JsErr> {
        size_of(self.sizes, n, false)
    }

    /// Whether the header has been read and opened.
    #[napi(getter)]
    pub fn header_read(&self) -> bool {
        self.sizes.is_some()
    }

    /// Ends the input: opens the final chunk and returns its plaintext, or fails if the file
    /// was cut short.
    #[napi(js_name = "final")]
    pub fn finish<'e>(&mut self, env: &'e Env) -> Result<BufferSlice<'e>, JsErr> {
        let r = self.opener.take().ok_or_else(finished)?.finish(&mut self.out);
        if let Err(e) = r {
            self.out.clear();
            return Err(Fail::from(e).into());
        }
        Ok(drain_to_js(env, &mut self.out)?)
    }
}
