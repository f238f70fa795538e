//! The decryption API: read the header from any `Read` (armor detected by itself), unwrap the
//! file key with the caller's identities, verify the header MAC, then either get a plaintext
//! reader ([`Decryptor::into_reader`], seekable on seekable inputs) or run the multi-core
//! pipeline ([`Decryptor::decrypt_stream`]).

use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};

use crate::encrypt::{available_threads, SALT_LEN};
use crate::format::armor::{is_armored, looks_like_armor, ArmoredReader};
use crate::format::Header;
use crate::recipient::Identity;
use crate::stream::{self, ChunkCipher, Progress, StreamReader};
use crate::Error;

/// Input, de-armored when needed. Seekable only when not armored.
pub enum Source<R: Read> {
    /// Binary input.
    Plain(BufReader<R>),
    /// ASCII-armored input.
    Armored(ArmoredReader<BufReader<R>>),
}

impl<R: Read> Read for Source<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Source::Plain(r) => r.read(buf),
            Source::Armored(r) => r.read(buf),
        }
    }
}

impl<R: Read> BufRead for Source<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match self {
            Source::Plain(r) => r.fill_buf(),
            Source::Armored(r) => r.fill_buf(),
        }
    }
    fn consume(&mut self, n: usize) {
        match self {
            Source::Plain(r) => r.consume(n),
            Source::Armored(r) => r.consume(n),
        }
    }
}

impl<R: Read + Seek> Seek for Source<R> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match self {
            Source::Plain(r) => r.seek(pos),
            Source::Armored(_) => {
                Err(io::Error::new(io::ErrorKind::Unsupported, "cannot seek in an armored file"))
            }
        }
    }
}

/// A file whose header has been read.
pub struct Decryptor<R: Read> {
    source: Source<R>,
    header: Header,
    threads: usize,
}

impl<R: Read> Decryptor<R> {
    /// Reads the header (and de-armors if the input is armored).
    pub fn new(input: R) -> Result<Self, Error> {
        let mut buffered = BufReader::with_capacity(256 << 10, input);
        let prefix = buffered.fill_buf()?;
        if looks_like_armor(prefix) {
            return Err(Error::Armor("not a valid BEGIN line (or data before it)".into()));
        }
        let armored = is_armored(prefix);
        let mut source =
            if armored { Source::Armored(ArmoredReader::new(buffered)) } else { Source::Plain(buffered) };
        let header = Header::read_from(&mut source).map_err(|e| match e {
            Error::Io(e) => Error::from_io(e),
            e => e,
        })?;
        Ok(Decryptor { source, header, threads: available_threads() })
    }

    /// Sets the worker threads for the payload (1 = sequential).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n.max(1);
        self
    }

    /// The parsed header (never holds secrets).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Whether the input was armored.
    pub fn is_armored(&self) -> bool {
        matches!(self.source, Source::Armored(_))
    }

    fn cipher(&mut self, identities: &[Box<dyn Identity>]) -> Result<ChunkCipher, Error> {
        let mut salt = [0u8; SALT_LEN];
        let n = stream::read_full(&mut self.source, &mut salt)?;
        keyed(&self.header, identities, &salt[..n])
    }

    /// A reader of authenticated plaintext. Seekable when `R` is and the input is not armored.
    pub fn into_reader(mut self, identities: &[Box<dyn Identity>]) -> Result<StreamReader<Source<R>>, Error> {
        let cipher = self.cipher(identities)?;
        Ok(StreamReader::new(self.source, cipher, self.threads))
    }

    /// Decrypts the whole payload onto `output` on the multi-core pipeline. A chunk's plaintext
    /// is written only after it authenticates; returns the plaintext length.
    pub fn decrypt_stream(
        mut self,
        identities: &[Box<dyn Identity>],
        output: &mut (dyn Write + Send),
        progress: Option<Progress>,
    ) -> Result<u64, Error>
    where
        R: Send,
    {
        let cipher = self.cipher(identities)?;
        let n = stream::decrypt_pipeline(&cipher, &mut self.source, output, self.threads, progress).map_err(
            |e| match e {
                Error::Io(e) => Error::from_io(e),
                e => e,
            },
        )?;
        output.flush()?;
        Ok(n)
    }
}

/// Unwraps the file key (a file for someone else says so even when it is also cut short), then
/// requires the whole salt: the nonce is part of the header in the age spec, so a file that ends
/// inside it is malformed.
fn keyed(header: &Header, identities: &[Box<dyn Identity>], salt: &[u8]) -> Result<ChunkCipher, Error> {
    let cipher = header.payload_cipher(identities, salt)?;
    if salt.len() < SALT_LEN {
        return Err(Error::MalformedHeader("file ends before the 16-byte payload nonce".into()));
    }
    Ok(cipher)
}

/// Parses a binary (non-armored) file held in memory: header, payload cipher, payload bytes.
fn open_slice<'a>(
    identities: &[Box<dyn Identity>],
    file: &'a [u8],
) -> Result<(ChunkCipher, &'a [u8]), Error> {
    let mut rest = file;
    let header = Header::read_from(&mut rest)?;
    let (salt, payload) = rest.split_at(SALT_LEN.min(rest.len()));
    Ok((keyed(&header, identities, salt)?, payload))
}

/// Decrypts a file held in memory (or memory-mapped) onto `output`, opening chunks straight from
/// `file` on `threads` threads. Output is released window by window, each only after all of its
/// chunks authenticated. Armored input goes through the streaming path.
pub fn decrypt_slice(
    identities: &[Box<dyn Identity>],
    file: &[u8],
    output: &mut (dyn Write + Send),
    threads: usize,
    progress: Option<Progress>,
) -> Result<u64, Error> {
    if is_armored(file) {
        return Decryptor::new(file)?.threads(threads).decrypt_stream(identities, output, progress);
    }
    let (cipher, payload) = open_slice(identities, file)?;
    let n = stream::stream_slice(&cipher, false, payload, output, threads, progress)?;
    output.flush()?;
    Ok(n)
}

/// One-shot: decrypts a whole file held in memory, on all cores.
pub fn decrypt(identities: &[Box<dyn Identity>], file: &[u8]) -> Result<Vec<u8>, Error> {
    decrypt_with(identities, file, available_threads())
}

/// One-shot on `threads` threads (1 = sequential). Chunks are opened straight from `file` into
/// the result; nothing is returned unless every chunk authenticated.
pub fn decrypt_with(identities: &[Box<dyn Identity>], file: &[u8], threads: usize) -> Result<Vec<u8>, Error> {
    if is_armored(file) {
        let mut out = Vec::with_capacity(file.len());
        Decryptor::new(file)?.threads(threads).decrypt_stream(identities, &mut out, None)?;
        return Ok(out);
    }
    let mut out = crate::mem::output_buffer(file.len());
    let n = decrypt_into(identities, file, &mut out, threads)?;
    out.truncate(n);
    Ok(out)
}

/// Decrypts a whole file held in memory into `out`, which must hold the plaintext
/// (`file.len()` bytes always suffice), on `threads` threads; returns the plaintext length.
/// On error `out` may hold unauthenticated bytes and must be discarded.
pub fn decrypt_into(
    identities: &[Box<dyn Identity>],
    file: &[u8],
    out: &mut [u8],
    threads: usize,
) -> Result<usize, Error> {
    if is_armored(file) {
        let plain = decrypt_with(identities, file, threads)?;
        let Some(dst) = out.get_mut(..plain.len()) else {
            return Err(Error::InvalidArgument(format!(
                "output buffer is {} bytes, {} are needed",
                out.len(),
                plain.len()
            )));
        };
        dst.copy_from_slice(&plain);
        return Ok(plain.len());
    }
    let (cipher, payload) = open_slice(identities, file)?;
    stream::open_into(&cipher, payload, out, threads.max(1))
}
