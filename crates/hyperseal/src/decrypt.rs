//! Decryption: `Decryptor` (see its docs for which method fits which output), `Source`, and
//! the one-shot `decrypt`.

use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};

use crate::format::armor::{is_armored, looks_like_armor, ArmoredReader};
use crate::format::{Header, HeaderRules, SALT_LEN};
use crate::recipient::Identity;
use crate::stream::{self, read_full, ChunkCipher, Dir, Input, Progress, StreamReader};
use crate::{error::Error, keys};

/// Input, de-armored when needed. Seekable only when not armored.
pub struct Source<R: Read>(Inner<R>);

enum Inner<R: Read> {
    Plain(BufReader<R>),
    Armored(ArmoredReader<BufReader<R>>),
}

impl<R: Read> Read for Source<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &mut self.0 {
            // Past the header the engine reads whole chunks: once the bytes buffered with the
            // header are used up, reads go straight to the input instead of through the buffer
            // (a second copy of every byte; BufReader alone bypasses only reads of its capacity).
            // An empty buffer means the inner position is the logical one, so seeking still works.
            Inner::Plain(r) if r.buffer().is_empty() && buf.len() >= DIRECT_READ => r.get_mut().read(buf),
            Inner::Plain(r) => r.read(buf),
            Inner::Armored(r) => r.read(buf),
        }
    }
}

/// Reads of at least this many bytes skip the header buffer once it is empty.
const DIRECT_READ: usize = 8 << 10;

/// The header buffer: any header fits in a few reads of this; the payload does not use it.
const HEADER_BUFFER: usize = 64 << 10;

impl<R: Read + Seek> Seek for Source<R> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match &mut self.0 {
            Inner::Plain(r) => r.seek(pos),
            Inner::Armored(_) => {
                Err(io::Error::new(io::ErrorKind::Unsupported, "cannot seek in an armored file"))
            }
        }
    }
}

/// A file whose header has been read: [`Decryptor::new`] reads the header from any `Read` (armor detected by itself),
/// [`Decryptor::from_slice`] from a file in memory; then the caller's identities unwrap the file
/// key, the header MAC is checked, and the payload goes wherever the caller wants it:
///
/// | you want | call | notes |
/// |---|---|---|
/// | plaintext onto a `Write` | [`Decryptor::decrypt_stream`] | all cores, constant memory |
/// | … from a file in memory | [`Decryptor::decrypt_slice`] | no staging copy |
/// | … into a buffer | [`Decryptor::decrypt_into`] | `file.len()` bytes always suffice |
/// | a `Read` (+ `Seek`) of plaintext | [`Decryptor::into_reader`] | random access |
/// | to push pieces as they arrive | [`Opener`](crate::opener::Opener) | header included |
///
/// Every path releases a chunk's plaintext only after that chunk authenticated, and fails on a
/// file that was cut short.
pub struct Decryptor<R: Read> {
    source: Source<R>,
    header: Header,
    threads: usize,
}

impl<R: Read> Decryptor<R> {
    /// Reads the header (and de-armors if the input is armored).
    pub fn new(input: R) -> Result<Self, Error> {
        Self::new_with(input, HeaderRules::default())
    }

    /// [`Decryptor::new`], reading the header under `rules`.
    pub fn new_with(input: R, rules: HeaderRules) -> Result<Self, Error> {
        let mut buffered = BufReader::with_capacity(HEADER_BUFFER, input);
        let prefix = buffered.fill_buf()?;
        if looks_like_armor(prefix) {
            return Err(Error::Armor("not a valid BEGIN line (or data before it)".into()));
        }
        let mut source = Source(match is_armored(prefix) {
            true => Inner::Armored(ArmoredReader::new(buffered)),
            false => Inner::Plain(buffered),
        });
        let header = match &mut source.0 {
            Inner::Plain(r) => Header::read_with(r, rules),
            Inner::Armored(r) => Header::read_with(r, rules),
        }?;
        Ok(Decryptor { source, header, threads: 0 })
    }

    /// Sets the threads for the payload: 1 = this thread only, 0 = all cores (the default).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n;
        self
    }

    /// The parsed header (never holds secrets; unauthenticated until an identity opened it).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Whether the input was armored.
    pub fn is_armored(&self) -> bool {
        matches!(self.source.0, Inner::Armored(_))
    }

    /// Unwraps the file key (a file for someone else says so even when it is also cut short),
    /// then requires the whole salt: the age spec makes it part of the header, so a file that
    /// ends inside it is malformed.
    fn cipher(&mut self, identities: &[Box<dyn Identity>]) -> Result<ChunkCipher, Error> {
        let mut salt = [0u8; SALT_LEN];
        let n = read_full(&mut self.source, &mut salt)?;
        let cipher = keys::open_header(&self.header, identities, &salt)?;
        if n < SALT_LEN {
            return Err(Error::MalformedHeader("file ends before the 16-byte payload nonce".into()));
        }
        Ok(cipher)
    }

    /// The payload as stored after the header (salt, then chunks; de-armored), unauthenticated:
    /// for tools that measure a file without a key (`inspect` on a stream or an armored file).
    pub fn into_payload(self) -> Source<R> {
        self.source
    }

    /// A reader of authenticated plaintext. Seekable when `R` is and the input is not armored.
    pub fn into_reader(mut self, identities: &[Box<dyn Identity>]) -> Result<StreamReader<Source<R>>, Error> {
        let cipher = self.cipher(identities)?;
        Ok(StreamReader::new(self.source, cipher, self.threads))
    }

    /// Decrypts the whole payload onto `output`; returns the plaintext length. `progress` gets
    /// the file bytes read so far.
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
        stream::stream(&cipher, Dir::Open, Input::Reader(&mut self.source), output, self.threads, progress)
    }
}

impl Decryptor<std::fs::File> {
    /// Decrypts the whole payload into `output`; returns the plaintext length. A binary file into
    /// a regular destination is opened on every core, each worker reading, opening and writing
    /// its own pieces at their offsets (see ARCHITECTURE.md, "the I/O path of a file"); an
    /// armored file, or a FIFO or device, is streamed as by
    /// [`decrypt_stream`](Decryptor::decrypt_stream). The caller commits `output` only after
    /// this returned `Ok`: every chunk authenticated then. `progress` gets the file bytes done.
    #[cfg(all(feature = "fs", any(unix, windows)))]
    pub fn decrypt_file(
        mut self,
        identities: &[Box<dyn Identity>],
        output: &mut crate::output::AtomicOutput,
        progress: Option<Progress>,
    ) -> Result<u64, Error> {
        let cipher = self.cipher(identities)?;
        if let Inner::Plain(r) = &mut self.source.0 {
            // The payload's offset: the file's position less what the header buffer still holds.
            let at = r.stream_position()?;
            let positional = stream::positional::into_output(
                &cipher,
                Dir::Open,
                r.get_ref(),
                at,
                output,
                self.threads,
                progress,
            );
            if let Some(done) = positional {
                return done;
            }
        }
        stream::stream(&cipher, Dir::Open, Input::Reader(&mut self.source), output, self.threads, progress)
    }

    /// Decrypts plaintext bytes `offset..offset + length` (clamped to the plaintext's end) into
    /// `output`; returns the bytes written. The final chunk is authenticated first, so a file cut
    /// short fails whatever the range; then only the chunks covering the range are opened, on
    /// every core for a regular destination (as [`decrypt_file`](Self::decrypt_file)), else
    /// through the seekable reader. Binary files only (an armored file cannot be seeked).
    #[cfg(all(feature = "fs", any(unix, windows)))]
    pub fn decrypt_range_file(
        mut self,
        identities: &[Box<dyn Identity>],
        offset: u64,
        length: u64,
        output: &mut crate::output::AtomicOutput,
        progress: Option<Progress>,
    ) -> Result<u64, Error> {
        let cipher = self.cipher(identities)?;
        let Inner::Plain(r) = &mut self.source.0 else {
            return Err(Error::InvalidArgument("cannot seek in an armored file".into()));
        };
        let at = r.stream_position()?;
        let positional = stream::positional::range_into_output(
            &cipher,
            r.get_ref(),
            at,
            offset,
            length,
            output,
            self.threads,
            progress,
        );
        if let Some(done) = positional {
            return done;
        }
        let mut reader = StreamReader::new(self.source, cipher, self.threads);
        reader.seek(SeekFrom::Start(offset))?;
        let n = io::copy(&mut reader.take(length), output)?;
        Ok(n)
    }
}

impl<'a> Decryptor<&'a [u8]> {
    /// Reads the header of a file held in memory (or memory-mapped). A binary file's payload is
    /// then opened straight from `file` by [`decrypt_slice`](Self::decrypt_slice) and
    /// [`decrypt_into`](Self::decrypt_into); an armored one is streamed.
    pub fn from_slice(file: &'a [u8]) -> Result<Self, Error> {
        if looks_like_armor(file) || is_armored(file) {
            return Decryptor::new(file);
        }
        let mut rest = file;
        let header = Header::read_from(&mut rest)?;
        // Capacity 0: nothing is ever buffered, so `into_inner` gives back exactly the rest.
        let source = Source(Inner::Plain(BufReader::with_capacity(0, rest)));
        Ok(Decryptor { source, header, threads: 0 })
    }

    /// The payload still in place in the caller's slice, if it is (binary input).
    fn payload(source: Source<&'a [u8]>) -> Result<&'a [u8], Source<&'a [u8]>> {
        match source.0 {
            Inner::Plain(r) if r.buffer().is_empty() => Ok(r.into_inner()),
            other => Err(Source(other)),
        }
    }

    /// Decrypts onto `output`, opening chunks straight from the slice; returns the plaintext
    /// length.
    pub fn decrypt_slice(
        mut self,
        identities: &[Box<dyn Identity>],
        output: &mut (dyn Write + Send),
        progress: Option<Progress>,
    ) -> Result<u64, Error> {
        let cipher = self.cipher(identities)?;
        let input = match Self::payload(self.source) {
            Ok(payload) => {
                return stream::stream(
                    &cipher,
                    Dir::Open,
                    Input::Slice(payload),
                    output,
                    self.threads,
                    progress,
                )
            }
            Err(source) => source,
        };
        let mut input = input;
        stream::stream(&cipher, Dir::Open, Input::Reader(&mut input), output, self.threads, progress)
    }

    /// Decrypts into `out`, which must hold the plaintext (`file.len()` bytes always suffice);
    /// returns the plaintext length. On error `out` may hold unauthenticated bytes and must be
    /// discarded.
    pub fn decrypt_into(mut self, identities: &[Box<dyn Identity>], out: &mut [u8]) -> Result<usize, Error> {
        let cipher = self.cipher(identities)?;
        match Self::payload(self.source) {
            Ok(payload) => stream::open_run(&cipher, 0, payload, true, out, self.threads),
            Err(mut source) => {
                let mut plain = Vec::new();
                stream::stream(
                    &cipher,
                    Dir::Open,
                    Input::Reader(&mut source),
                    &mut plain,
                    self.threads,
                    None,
                )?;
                let have = out.len();
                let dst = out.get_mut(..plain.len()).ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "output buffer is {have} bytes, {} are needed",
                        plain.len()
                    ))
                })?;
                dst.copy_from_slice(&plain);
                Ok(plain.len())
            }
        }
    }
}

/// One-shot: decrypts a whole file held in memory, on all cores. Nothing is returned unless
/// every chunk authenticated.
pub fn decrypt(identities: &[Box<dyn Identity>], file: &[u8]) -> Result<Vec<u8>, Error> {
    let mut out = crate::mem::output_buffer(file.len());
    let n = Decryptor::from_slice(file)?.decrypt_into(identities, &mut out)?;
    out.truncate(n);
    Ok(out)
}
