//! `PartKey`: the library's `hazmat::parts::PartKey`, so `WorkerPool` can seal (or open) one
//! file across all its workers — one WebAssembly instance each, one core each. A worker begins
//! the file (header, salt, payload key), every worker seals the parts it is handed, and the page
//! joins them in order into one ordinary file. Plans, nonces and the final-chunk rule stay in the
//! library; this converts arguments only.
//!
//! The key's bytes (`toBytes`) cross between workers by `postMessage`: they read and forge that
//! one file. A page that holds the private key already holds more; JS copies cannot be zeroized.

use hyperseal::hazmat::parts::PartKey as LibPartKey;
use hyperseal::recipient::passphrase_recipient;
use wasm_bindgen::prelude::*;

use crate::errors::{arg, fail};
use crate::{args, keys};

/// One file's payload key and geometry.
#[wasm_bindgen]
pub struct PartKey {
    key: LibPartKey,
    /// The file's first bytes (header and salt), for a key that begins a file.
    head: Vec<u8>,
}

#[wasm_bindgen]
impl PartKey {
    /// Begins a file of exactly `plaintextLen` bytes for the given public key(s);
    /// `options.format`: 'hyperseal' (default) or 'age'.
    #[wasm_bindgen(js_name = sealNew)]
    pub fn seal_new(public_key: JsValue, plaintext_len: f64, options: JsValue) -> Result<PartKey, JsValue> {
        let to = keys::recipients(&public_key)?;
        let (head, key) =
            LibPartKey::seal_new(&to, args::file_options(&options)?, length(plaintext_len)?).map_err(fail)?;
        Ok(PartKey { key, head })
    }

    /// Begins a passphrase-encrypted file (Argon2id for 'hyperseal', scrypt for 'age').
    #[wasm_bindgen(js_name = sealNewWithPassphrase)]
    pub fn seal_new_with_passphrase(
        passphrase: String,
        plaintext_len: f64,
        options: JsValue,
    ) -> Result<PartKey, JsValue> {
        let passphrase = zeroize::Zeroizing::new(passphrase);
        if passphrase.is_empty() {
            return Err(arg("the passphrase is empty"));
        }
        let opts = args::file_options(&options)?;
        let to = [passphrase_recipient(opts.profile, passphrase)];
        let (head, key) = LibPartKey::seal_new(&to, opts, length(plaintext_len)?).map_err(fail)?;
        Ok(PartKey { key, head })
    }

    /// Opens the header of a file of `fileLen` bytes whose first bytes are `prefix` (the
    /// header and salt must be in it: the first MiB always holds them) with a private key.
    #[wasm_bindgen(js_name = openFile)]
    pub fn open_file(prefix: &[u8], file_len: f64, private_key: String) -> Result<PartKey, JsValue> {
        let ids = keys::identities(private_key)?;
        let key = LibPartKey::open_file(&mut &prefix[..], length(file_len)?, &ids).map_err(fail)?;
        Ok(PartKey { key, head: Vec::new() })
    }

    /// As `openFile`, with a passphrase.
    #[wasm_bindgen(js_name = openFileWithPassphrase)]
    pub fn open_file_with_passphrase(
        prefix: &[u8],
        file_len: f64,
        passphrase: String,
    ) -> Result<PartKey, JsValue> {
        let ids = keys::passphrase_identities(passphrase);
        let key = LibPartKey::open_file(&mut &prefix[..], length(file_len)?, &ids).map_err(fail)?;
        Ok(PartKey { key, head: Vec::new() })
    }

    /// The file's first bytes (header and salt); empty for an opening key.
    pub fn head(&self) -> Vec<u8> {
        self.head.clone()
    }

    /// The parts of `partSize` plaintext bytes (a multiple of the chunk size), in order, as
    /// `[firstChunk, plaintextStart, plaintextEnd, fileStart, fileEnd]` numbers.
    pub fn plan(&self, part_size: f64) -> Result<js_sys::Array, JsValue> {
        let parts = self.key.plan(length(part_size)?).map_err(fail)?;
        Ok(parts
            .into_iter()
            .map(|p| {
                let n = [p.first_chunk, p.plaintext.start, p.plaintext.end, p.file.start, p.file.end];
                n.iter().map(|&x| JsValue::from_f64(x as f64)).collect::<js_sys::Array>()
            })
            .collect())
    }

    /// Plaintext bytes per chunk (part sizes are multiples of it).
    #[wasm_bindgen(getter, js_name = chunkSize)]
    pub fn chunk_size(&self) -> f64 {
        self.key.chunk_size() as f64
    }

    /// Bytes of plaintext (for an opening key: trusted once the last part opened).
    #[wasm_bindgen(getter, js_name = plaintextLength)]
    pub fn plaintext_len(&self) -> f64 {
        self.key.plaintext_len() as f64
    }

    /// Seals the plaintext of the part starting at chunk `firstChunk`.
    pub fn seal(&self, first_chunk: f64, data: &[u8]) -> Result<Vec<u8>, JsValue> {
        self.key.seal(length(first_chunk)?, data).map_err(fail)
    }

    /// Opens the part starting at chunk `firstChunk`; every byte returned authenticated.
    pub fn open(&self, first_chunk: f64, data: &[u8]) -> Result<Vec<u8>, JsValue> {
        let plain = self.key.open(length(first_chunk)?, data).map_err(fail)?;
        Ok(plain.to_vec())
    }

    /// The key and geometry as bytes, for another worker (`PartKey.fromBytes`).
    #[wasm_bindgen(js_name = toBytes)]
    pub fn to_bytes(&self) -> Vec<u8> {
        self.key.to_bytes().to_vec()
    }

    /// Reads `toBytes`' output.
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(bytes: &[u8]) -> Result<PartKey, JsValue> {
        Ok(PartKey { key: LibPartKey::from_bytes(bytes).map_err(fail)?, head: Vec::new() })
    }
}

/// A JS number that must be a whole, non-negative, exactly representable length.
fn length(n: f64) -> Result<u64, JsValue> {
    match n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0 {
        true => Ok(n as u64),
        false => Err(arg(format!("{n} is not a whole number of bytes"))),
    }
}
