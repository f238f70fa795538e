//! `PartKey`: the library's `parts::PartKey`, so `WorkerPool` can seal (or open) one
//! file across all its workers — one WebAssembly instance each, one core each. A worker begins
//! the file (header, salt, payload key), every worker seals the parts it is handed, and the page
//! joins them in order into one ordinary file. Plans, nonces and the final-chunk rule stay in the
//! library; this converts arguments only.
//!
//! The key's bytes (`toBytes`) cross between workers by `postMessage`: they read and forge that
//! one file. A page that holds the private key already holds more; JS copies cannot be zeroized.
//!
//! Every seal is claimed (the library's `parts::claim`): a sealing call returns the part's claim
//! record with its bytes, and the page — the one process every part passes through — settles it
//! in its `PartClaims` (the library's in-memory store) before it keeps the part, so one part
//! index never seals two plaintexts under a key, whatever a worker does.

use hyperseal::parts::claim::MemoryClaims;
use hyperseal::parts::PartKey as LibPartKey;
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
    /// `options.format`: 'hyperseal' (default) or 'age'; `options.suite` (hyperseal files):
    /// 'chacha20-poly1305' (default) or 'aes-256-gcm' (for a caller that seals through
    /// WebCrypto, see `chunkCalls`).
    #[wasm_bindgen(js_name = sealNew)]
    pub fn seal_new(public_key: JsValue, plaintext_len: f64, options: JsValue) -> Result<PartKey, JsValue> {
        let to = keys::recipients(&public_key, keys::allow_plugins(&options)?)?;
        let (head, key) =
            LibPartKey::seal_new(&to, options_of(&options)?, length(plaintext_len)?).map_err(fail)?;
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
        let opts = options_of(&options)?;
        let to = [passphrase_recipient(opts.profile, passphrase)];
        let (head, key) = LibPartKey::seal_new(&to, opts, length(plaintext_len)?).map_err(fail)?;
        Ok(PartKey { key, head })
    }

    /// Opens the header of a file of `fileLen` bytes whose first bytes are `prefix` (the
    /// header and salt must be in it: the first MiB always holds them) with a private key;
    /// `options.allowPlugins`: allow a key that names an age plugin (default false).
    #[wasm_bindgen(js_name = openFile)]
    pub fn open_file(
        prefix: &[u8],
        file_len: f64,
        private_key: JsValue,
        options: JsValue,
    ) -> Result<PartKey, JsValue> {
        let ids = keys::identities(&private_key, keys::allow_plugins(&options)?)?;
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

    /// Seals the plaintext of the part starting at chunk `firstChunk` of the plan of
    /// `partSize`-byte parts: `[sealed, claim]`, the sealed part and its claim record, which
    /// the page settles (`PartClaims.settle`) before it keeps the part.
    pub fn seal(&self, part_size: f64, first_chunk: f64, data: &[u8]) -> Result<js_sys::Array, JsValue> {
        let (size, first) = (length(part_size)?, length(first_chunk)?);
        let sealed = self.key.seal(first, data).map_err(fail)?;
        let claim = self.part_claim_of(size, first, &sealed)?;
        Ok([JsValue::from(js_sys::Uint8Array::from(&sealed[..])), claim.into()].into_iter().collect())
    }

    /// `seal` into `out`, an array the page reuses from part to part (WorkerPool moves the same
    /// buffers between the page and its workers): the sealed part is copied into `out`'s first
    /// bytes, so no new JS array is made per part. Returns `[length, claim]`.
    #[wasm_bindgen(js_name = sealInto)]
    pub fn seal_into(
        &self,
        part_size: f64,
        first_chunk: f64,
        data: &[u8],
        out: &js_sys::Uint8Array,
    ) -> Result<js_sys::Array, JsValue> {
        let (size, first) = (length(part_size)?, length(first_chunk)?);
        let sealed = self.key.seal(first, data).map_err(fail)?;
        let claim = self.part_claim_of(size, first, &sealed)?;
        Ok([JsValue::from_f64(copy_out(&sealed, out)?), claim.into()].into_iter().collect())
    }

    /// The claim record of a part sealed outside this key (WebCrypto, with `chunkCalls`), to
    /// settle as `seal`'s.
    #[wasm_bindgen(js_name = partClaim)]
    pub fn part_claim(
        &self,
        part_size: f64,
        first_chunk: f64,
        sealed: &[u8],
    ) -> Result<js_sys::Uint8Array, JsValue> {
        let claim = self.part_claim_of(length(part_size)?, length(first_chunk)?, sealed)?;
        Ok(claim)
    }

    /// `open` into `out`, as `sealInto`; returns the plaintext's length. Nothing is written to
    /// `out` unless every chunk of the part authenticated; the copy here is wiped.
    #[wasm_bindgen(js_name = openInto)]
    pub fn open_into(&self, first_chunk: f64, data: &[u8], out: &js_sys::Uint8Array) -> Result<f64, JsValue> {
        let plain = self.key.open(length(first_chunk)?, data).map_err(fail)?;
        copy_out(&plain, out)
    }

    /// Opens the part starting at chunk `firstChunk`; every byte returned authenticated.
    /// One copy out of WebAssembly memory, into a new JS array; the copy here is wiped.
    pub fn open(&self, first_chunk: f64, data: &[u8]) -> Result<js_sys::Uint8Array, JsValue> {
        let plain = self.key.open(length(first_chunk)?, data).map_err(fail)?;
        Ok(js_sys::Uint8Array::from(&plain[..]))
    }

    /// The payload suite's name ('aes-256-gcm', 'chacha20-poly1305', 'sm4-gcm').
    #[wasm_bindgen(getter)]
    pub fn suite(&self) -> String {
        self.key.suite().name().to_string()
    }

    /// Bytes of the sealed part at chunk `firstChunk` holding `length` plaintext bytes.
    #[wasm_bindgen(js_name = sealedLength)]
    pub fn sealed_length(&self, first_chunk: f64, length_: f64) -> Result<f64, JsValue> {
        let n = self.key.sealed_len(length(first_chunk)?, length(length_)? as usize).map_err(fail)?;
        Ok(n as f64)
    }

    /// Plaintext bytes of a part of `length` sealed bytes (exact for a part that opens).
    #[wasm_bindgen(js_name = openedLength)]
    pub fn opened_length(&self, length_: f64) -> Result<f64, JsValue> {
        Ok(self.key.opened_len(length(length_)? as usize) as f64)
    }

    /// The AEAD calls of one part, for WebCrypto: `[nonce, inputStart, inputEnd, outputStart,
    /// outputEnd]` each (the library decides every nonce and boundary, and checks the part's
    /// shape first). See the library's `PartKey::chunk_calls` for the caller's duties.
    #[wasm_bindgen(js_name = chunkCalls)]
    pub fn chunk_calls(
        &self,
        first_chunk: f64,
        input_length: f64,
        sealing: bool,
    ) -> Result<js_sys::Array, JsValue> {
        let calls = self
            .key
            .chunk_calls(length(first_chunk)?, length(input_length)? as usize, sealing)
            .map_err(fail)?;
        Ok(calls
            .into_iter()
            .map(|c| {
                let row = js_sys::Array::new();
                row.push(&js_sys::Uint8Array::from(&c.nonce[..]));
                for n in [c.input.start, c.input.end, c.output.start, c.output.end] {
                    row.push(&JsValue::from_f64(n as f64));
                }
                row
            })
            .collect())
    }

    /// The raw AEAD key, for `crypto.subtle.importKey('raw', …)` (AES-256-GCM and
    /// ChaCha20-Poly1305 files only). Import it non-extractable and wipe this copy.
    #[wasm_bindgen(js_name = rawAeadKey)]
    pub fn raw_aead_key(&self) -> Result<Vec<u8>, JsValue> {
        Ok(self.key.raw_aead_key().map_err(fail)?.to_vec())
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

impl PartKey {
    fn part_claim_of(
        &self,
        part_size: u64,
        first: u64,
        sealed: &[u8],
    ) -> Result<js_sys::Uint8Array, JsValue> {
        let claim = self.key.part_claim(part_size, first, sealed).map_err(fail)?;
        Ok(js_sys::Uint8Array::from(claim.record()))
    }
}

/// The claims of one file's parts, held by the page that joins them (the library's
/// `MemoryClaims`): every part's claim is settled here before the part is kept.
#[wasm_bindgen]
pub struct PartClaims {
    key: LibPartKey,
    part_size: u64,
    store: MemoryClaims,
}

#[wasm_bindgen]
impl PartClaims {
    /// Claims for the file of the part key `key` (`PartKey.toBytes`), in parts of `partSize`.
    #[wasm_bindgen(constructor)]
    pub fn new(key: &[u8], part_size: f64) -> Result<PartClaims, JsValue> {
        let key = LibPartKey::from_bytes(key).map_err(fail)?;
        let part_size = length(part_size)?;
        key.plan(part_size).map_err(fail)?;
        Ok(PartClaims { key, part_size, store: MemoryClaims::new() })
    }

    /// Settles the claim a worker returned with the part at chunk `firstChunk`: the first claim
    /// of a part, or the same one again, passes; any other throws (that key and nonce already
    /// sealed other bytes: discard the part and the file).
    pub fn settle(&self, first_chunk: f64, claim: &[u8]) -> Result<(), JsValue> {
        self.key.settle_carried(&self.store, self.part_size, length(first_chunk)?, claim).map_err(fail)
    }
}

/// `options.format` and `options.suite`; parts run on WebCrypto's AES-256-GCM or on
/// ChaCha20-Poly1305, so not on SM4-GCM.
fn options_of(options: &JsValue) -> Result<hyperseal::Options, JsValue> {
    let format = args::string_field(options, "format")?;
    let suite = args::string_field(options, "suite")?;
    let opts = hyperseal::Options::named(format.as_deref().unwrap_or("hyperseal"), suite.as_deref(), None)
        .map_err(fail)?;
    if opts.suite == hyperseal::Suite::Sm4Gcm {
        return Err(arg("options.suite must be 'chacha20-poly1305' or 'aes-256-gcm' for parts"));
    }
    Ok(opts)
}

/// Copies `bytes` to the start of `out` (one copy out of WebAssembly memory); its length.
fn copy_out(bytes: &[u8], out: &js_sys::Uint8Array) -> Result<f64, JsValue> {
    if (out.length() as usize) < bytes.len() {
        return Err(arg(format!(
            "the output array holds {} bytes, the part needs {}",
            out.length(),
            bytes.len()
        )));
    }
    out.subarray(0, bytes.len() as u32).copy_from(bytes);
    Ok(bytes.len() as f64)
}

/// A JS number that must be a whole, non-negative, exactly representable length.
fn length(n: f64) -> Result<u64, JsValue> {
    match n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0 {
        true => Ok(n as u64),
        false => Err(arg(format!("{n} is not a whole number of bytes"))),
    }
}
