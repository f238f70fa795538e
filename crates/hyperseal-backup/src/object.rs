//! Sealing and opening objects: each one a plain age v1 file, each with its own file key
//! (every `Encryptor` seals one payload and is consumed by it).

use std::io::{Read, Seek, SeekFrom};

use hyperseal::recipient::{Identity, Recipient};
use hyperseal::{Decryptor, Encryptor, Options, Source, StreamReader};

use crate::error::{format, Result};
use crate::store::{ReadSeek, Store};

/// age v1 (ChaCha20-Poly1305, 64 KiB chunks) with room in the header, so that removing a
/// reader later rewrites the header in place and never the payload.
fn options() -> Options {
    Options { slack: true, ..Options::age() }
}

/// Encrypts `plaintext` to the recipients under a fresh file key.
pub(crate) fn seal(recipients: &[Box<dyn Recipient>], plaintext: &[u8]) -> Result<Vec<u8>> {
    let enc = Encryptor::with_recipients(recipients, options())?;
    let mut out = Vec::with_capacity(enc.encrypted_len(plaintext.len()));
    enc.encrypt_slice(plaintext, &mut out, None)?;
    Ok(out)
}

/// Decrypts a whole object of at most `limit` plaintext bytes.
pub(crate) fn open(store: &dyn Store, name: &str, ids: &[Box<dyn Identity>], limit: u64) -> Result<Vec<u8>> {
    let mut reader = Decryptor::new(store.open(name)?)?.into_reader(ids)?;
    let mut out = Vec::new();
    (&mut reader).take(limit + 1).read_to_end(&mut out)?;
    if out.len() as u64 > limit {
        return Err(format(format!("{name}: plaintext over {limit} bytes")));
    }
    Ok(out)
}

/// A pack opened once for reads of its chunks: the file key is unwrapped once, and a read
/// decrypts only the 64 KiB payload chunks that hold the range.
pub(crate) struct PackReader {
    inner: StreamReader<Source<Box<dyn ReadSeek>>>,
}

impl PackReader {
    pub(crate) fn open(store: &dyn Store, name: &str, ids: &[Box<dyn Identity>]) -> Result<PackReader> {
        let inner = Decryptor::new(store.open(name)?)?.threads(1).into_reader(ids)?;
        Ok(PackReader { inner })
    }

    /// `len` plaintext bytes from `offset`; a range past the end is an error.
    pub(crate) fn read(&mut self, offset: u64, len: usize) -> Result<Vec<u8>> {
        self.inner.seek(SeekFrom::Start(offset))?;
        let mut out = vec![0u8; len];
        self.inner.read_exact(&mut out)?;
        Ok(out)
    }

    /// Reads the whole payload, keeping none of it: every 64 KiB chunk authenticates, and the
    /// file ends where its last chunk says. Returns the plaintext length.
    pub(crate) fn verify_all(&mut self) -> Result<u64> {
        self.inner.seek(SeekFrom::Start(0))?;
        Ok(std::io::copy(&mut self.inner, &mut std::io::sink())?)
    }
}

/// Decompresses one stored chunk and checks it against its id.
pub(crate) fn unpack_chunk(
    key: &[u8; 32],
    e: &crate::format::table::Entry,
    stored: &[u8],
) -> Result<Vec<u8>> {
    let raw = zstd::bulk::decompress(stored, e.raw as usize)
        .map_err(|_| format(format!("chunk {}: bad zstd frame", e.id)))?;
    if raw.len() != e.raw as usize || crate::keys::ChunkId::of(key, &raw) != e.id {
        return Err(format(format!("chunk {}: content does not match its id", e.id)));
    }
    Ok(raw)
}
