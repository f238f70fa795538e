//! `RangeJob`: random access into a file the binding does not hold — a `Blob` or `File` that JS
//! reads lazily with `Blob.slice` — through the library's seekable `Decryptor::into_reader`.
//!
//! A page cannot block on a `Blob` read, and the library's reader is synchronous, so the source
//! is demand-paged: reading a block that JS has not supplied stops the attempt and names the
//! block; JS reads that slice, supplies it and runs the attempt again (`decryptRange` in
//! `js/core.js`). The library decides every position it reads (header, final chunk first, then
//! the chunks of the range); this file only maps positions to supplied blocks, so there is no
//! framing here. An attempt after all its blocks arrived is an ordinary `into_reader` read.

use std::cell::Cell;
use std::collections::HashMap;
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::Arc;

use hyperseal::recipient::Identity;
use hyperseal::Decryptor;
use wasm_bindgen::prelude::*;

use crate::args::Plaintext;
use crate::errors::{arg, fail};
use crate::keys;

/// Bytes per block JS reads with one `Blob.slice` (the library's reader decrypts 1 MiB batches).
const BLOCK: u64 = 1 << 20;

/// A `Read + Seek` view of the supplied blocks of a file of `len` bytes.
struct Paged<'a> {
    blocks: &'a HashMap<u64, Vec<u8>>,
    missing: &'a Cell<Option<u64>>,
    len: u64,
    pos: u64,
}

impl Read for Paged<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.len || buf.is_empty() {
            return Ok(0);
        }
        let index = self.pos / BLOCK;
        let Some(block) = self.blocks.get(&index) else {
            self.missing.set(Some(index));
            return Err(io::Error::other("block not loaded yet"));
        };
        let at = (self.pos - index * BLOCK) as usize;
        let k = buf.len().min(block.len().saturating_sub(at));
        buf[..k].copy_from_slice(&block[at..at + k]);
        self.pos += k as u64;
        Ok(k)
    }
}

impl Seek for Paged<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos =
            target.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        Ok(self.pos)
    }
}

/// One `decryptRange` call: the identities, the file size and the blocks read so far.
#[wasm_bindgen]
pub struct RangeJob {
    identities: Arc<Vec<Box<dyn Identity>>>,
    blocks: HashMap<u64, Vec<u8>>,
    missing: Cell<Option<u64>>,
    len: u64,
}

/// A JS number that must be a whole number of bytes.
fn whole(v: f64, name: &str) -> Result<u64, JsValue> {
    if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= 9_007_199_254_740_991.0 {
        return Ok(v as u64);
    }
    Err(arg(format!("{name} must be a whole number of bytes, 0 or more")))
}

#[wasm_bindgen]
impl RangeJob {
    /// A job over a file of `size` bytes (a binary hyperseal or age file) for `privateKey`;
    /// `options.allowPlugins`: allow a key that names an age plugin (default false).
    #[wasm_bindgen(constructor)]
    pub fn new(size: f64, private_key: JsValue, options: JsValue) -> Result<RangeJob, JsValue> {
        let len = whole(size, "the file size")?;
        Ok(RangeJob {
            identities: keys::identities(&private_key, keys::allow_plugins(&options)?)?,
            blocks: HashMap::new(),
            missing: Cell::new(None),
            len,
        })
    }

    /// Bytes per block (`supply` takes whole blocks; the last one may be shorter).
    #[wasm_bindgen(js_name = blockSize)]
    pub fn block_size() -> f64 {
        BLOCK as f64
    }

    /// The block the last `run` stopped at, or -1.
    pub fn wanted(&self) -> f64 {
        self.missing.get().map_or(-1.0, |b| b as f64)
    }

    /// Hands over block `index`: the file's bytes `index * blockSize` up to the next block or the end.
    pub fn supply(&mut self, index: f64, bytes: Vec<u8>) -> Result<(), JsValue> {
        let index = whole(index, "the block index")?;
        let expected = self.len.saturating_sub(index * BLOCK).min(BLOCK);
        if expected == 0 || bytes.len() as u64 != expected {
            return Err(arg(format!("block {index} must hold {expected} bytes, not {}", bytes.len())));
        }
        self.blocks.insert(index, bytes);
        Ok(())
    }

    /// The plaintext bytes `offset .. offset + length` (fewer at the end of the plaintext, none
    /// past it), or `undefined` when a block is needed first (see `wanted`). Only authenticated
    /// bytes are returned; damage anywhere the library reads fails with its code.
    pub fn run(&self, offset: f64, length: f64) -> Result<Option<Vec<u8>>, JsValue> {
        let (offset, length) = (whole(offset, "offset")?, whole(length, "length")?);
        self.missing.set(None);
        let source = Paged { blocks: &self.blocks, missing: &self.missing, len: self.len, pos: 0 };
        let result = (|| -> Result<Vec<u8>, hyperseal::Error> {
            let mut reader = Decryptor::new(source)?.threads(1).into_reader(&self.identities)?;
            let end = reader.plaintext_len()?;
            let n = length.min(end.saturating_sub(offset));
            if n > isize::MAX as u64 {
                return Err(hyperseal::Error::InvalidArgument("the range does not fit in memory".into()));
            }
            reader.seek(SeekFrom::Start(offset.min(end)))?;
            // Zeroized if the read fails part-way: a partial range is never returned.
            let mut out = Plaintext::zeroed(n as usize);
            reader.read_exact(&mut out)?;
            Ok(out.take(n as usize))
        })();
        match result {
            Ok(bytes) => Ok(Some(bytes)),
            // The stop was ours (a block not yet read), whatever the library made of it.
            Err(_) if self.missing.get().is_some() => Ok(None),
            Err(e) => Err(fail(e)),
        }
    }
}
