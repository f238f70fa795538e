//! Encryption: `Encryptor` (see its docs for which method fits which input), `Sealer`, and
//! the one-shot `encrypt`.

use std::io::{Read, Write};

use zeroize::Zeroizing;

use crate::format::{armor, slack, Header, Profile, Stanza, Suite, DEFAULT_CHUNK, SALT_LEN};
use crate::recipient::{passphrase_recipient, wrap_all, Recipient};
use crate::stream::{self, ChunkCipher, Dir, Input, PayloadSealer, Progress, StreamWriter};
use crate::{error::Error, file_key::FileKey, keys};

/// Stanza types only hyperseal opens: never written into an age file (plugins may add any other).
const HYPERSEAL_ONLY_TYPES: [&str; 5] = ["argon2id", "mlkem1024", "mlkem768p256", "p256", "rsa-oaep"];

/// What the file looks like: header dialect, payload suite, chunk size.
#[derive(Clone, Debug)]
pub struct Options {
    /// Header dialect.
    pub profile: Profile,
    /// Payload AEAD.
    pub suite: Suite,
    /// Plaintext bytes per chunk.
    pub chunk_size: usize,
    /// Room in the header for later re-keys ([`rekey`](crate::rekey)): slack stanzas up to the
    /// next 4 KiB boundary, at least 1 KiB, so a new recipient set can be written in place.
    /// Worth it for large files only (the CLI adds it from 1 MiB); ignored for a passphrase,
    /// which must stand alone.
    pub slack: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            profile: Profile::Hyperseal,
            suite: Suite::default_for_cpu(),
            chunk_size: DEFAULT_CHUNK,
            slack: false,
        }
    }
}

impl Options {
    /// Options for an age v1 file (ChaCha20-Poly1305, 64 KiB chunks).
    pub fn age() -> Self {
        Options { profile: Profile::Age, suite: Suite::ChaCha20Poly1305, ..Options::default() }
    }

    /// Options from the names every frontend takes: `format` `"hyperseal"` or `"age"`, an
    /// optional suite name (`"aes-256-gcm"`, `"chacha20-poly1305"`, `"sm4-gcm"`) and chunk size.
    /// age files have a fixed suite and chunk size: naming another one is an error, not ignored.
    ///
    /// ```
    /// use hyperseal::{Options, Profile, Suite};
    /// let o = Options::named("hyperseal", Some("chacha20-poly1305"), None)?;
    /// assert_eq!((o.profile, o.suite), (Profile::Hyperseal, Suite::ChaCha20Poly1305));
    /// assert!(Options::named("age", Some("aes-256-gcm"), None).is_err());
    /// # Ok::<(), hyperseal::Error>(())
    /// ```
    pub fn named(format: &str, suite: Option<&str>, chunk_size: Option<usize>) -> Result<Options, Error> {
        let mut opts = match format {
            "hyperseal" => Options::default(),
            "age" => Options::age(),
            other => {
                return Err(Error::InvalidArgument(format!(
                    "unknown format {other:?}: \"hyperseal\" or \"age\""
                )))
            }
        };
        if let Some(name) = suite {
            let s = Suite::from_name(name).ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "unknown suite {name:?}: aes-256-gcm, chacha20-poly1305 or sm4-gcm"
                ))
            })?;
            if opts.profile == Profile::Age && s != opts.suite {
                return Err(Error::InvalidArgument("age files are always chacha20-poly1305".into()));
            }
            opts.suite = s;
        }
        if let Some(c) = chunk_size {
            if opts.profile == Profile::Age && c != opts.chunk_size {
                return Err(Error::InvalidArgument("age files always have 64 KiB chunks".into()));
            }
            crate::format::check_chunk_size(c)?;
            opts.chunk_size = c;
        }
        Ok(opts)
    }
}

/// A prepared encryption. Choose recipients and options, get an `Encryptor` (header written
/// once, payload keyed), then give it the plaintext in whichever shape you have it:
///
/// | you have | call | notes |
/// |---|---|---|
/// | a `Read` (file, pipe, socket) | [`Encryptor::encrypt_stream`] | all cores, constant memory |
/// | bytes in memory (or mapped) | [`Encryptor::encrypt_slice`] | no staging copy |
/// | bytes, and a buffer for the result | [`Encryptor::encrypt_into`] | sized by [`Encryptor::encrypted_len`] |
/// | pieces arriving over time | [`Encryptor::sealer`] | push-based: `update`, `finish` |
/// | a `Write` to wrap | [`Encryptor::wrap_output`] | call `finish` at the end |
///
/// All produce the same bytes for the same keys and salt. Every file has a fresh file key and a
/// fresh salt, so an `Encryptor` seals exactly one payload (each method consumes it).
pub struct Encryptor {
    /// Header and salt: everything before the payload.
    head: Vec<u8>,
    cipher: ChunkCipher,
    threads: usize,
}

impl std::fmt::Debug for Encryptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Encryptor({:?}, {} threads)", self.cipher, self.threads)
    }
}

impl Encryptor {
    /// Encrypts to one or more recipients.
    ///
    /// ```
    /// use hyperseal::{recipient, Encryptor, Kind, Options};
    /// let key = recipient::generate(Kind::X25519)?;
    /// let to = [recipient::parse_recipient(&key.public)?];
    /// let mut file = Vec::new();
    /// Encryptor::with_recipients(&to, Options::default())?.encrypt_slice(b"hi", &mut file, None)?;
    /// # Ok::<(), hyperseal::Error>(())
    /// ```
    pub fn with_recipients(recipients: &[Box<dyn Recipient>], opts: Options) -> Result<Self, Error> {
        let Prepared { head, payload_key } = prepare(recipients, &opts)?;
        let cipher = ChunkCipher::new(opts.suite, opts.chunk_size, &payload_key)?;
        Ok(Encryptor { head, cipher, threads: 0 })
    }

    /// Encrypts under a file key whose stanzas were made outside the library: age's
    /// `Recipient` written in another language (typage's `wrapFileKey`, called back with the
    /// key by a binding). `stanzas` go into the header as they are, the header MAC and the
    /// payload key are derived from `file_key` here, and the salt is drawn fresh, so two
    /// encryptions under one file key never share a payload key and nonce. The key must have
    /// the profile's length (16 bytes for age); draw it with [`FileKey::generate`].
    ///
    /// ```
    /// use hyperseal::{recipient, Encryptor, FileKey, Kind, Options, Profile};
    /// let key = recipient::generate(Kind::X25519)?;
    /// let file_key = FileKey::generate(Profile::Age.file_key_len());
    /// let stanzas = recipient::wrap_all(&[recipient::parse_recipient(&key.public)?], &file_key)?;
    /// let seal = |stanzas| -> Result<Vec<u8>, hyperseal::Error> {
    ///     let mut file = Vec::new();
    ///     Encryptor::with_file_key(&file_key, stanzas, Options::age())?.encrypt_slice(b"hi", &mut file, None)?;
    ///     Ok(file)
    /// };
    /// let (a, b) = (seal(stanzas.clone())?, seal(stanzas)?);
    /// assert_ne!(a[a.len() - 40..], b[b.len() - 40..]); // a fresh salt: another payload key
    /// assert_eq!(hyperseal::decrypt(&recipient::parse_identities(&key.secret)?, &a)?, b"hi");
    /// # Ok::<(), hyperseal::Error>(())
    /// ```
    pub fn with_file_key(file_key: &FileKey, stanzas: Vec<Stanza>, opts: Options) -> Result<Self, Error> {
        if file_key.expose().len() != opts.profile.file_key_len() {
            return Err(Error::InvalidArgument(format!(
                "a file key of this format is {} bytes, not {}",
                opts.profile.file_key_len(),
                file_key.expose().len()
            )));
        }
        if stanzas.is_empty() {
            return Err(Error::InvalidArgument("no recipients".into()));
        }
        let Prepared { head, payload_key } = prepare_with(file_key, stanzas, &opts)?;
        let cipher = ChunkCipher::new(opts.suite, opts.chunk_size, &payload_key)?;
        Ok(Encryptor { head, cipher, threads: 0 })
    }

    /// Encrypts with a passphrase: Argon2id in the hyperseal profile, scrypt (log2 N = 18, as
    /// age) in the age profile.
    pub fn with_passphrase(passphrase: Zeroizing<String>, opts: Options) -> Result<Self, Error> {
        Self::with_recipients(&[passphrase_recipient(opts.profile, passphrase)], opts)
    }

    /// Sets the threads for the payload: 1 = this thread only, 0 = all cores (the default).
    /// More than the cores never helps, so more are not used.
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n;
        self
    }

    /// The header and salt this encryptor writes first (a rotation checks who can open it).
    #[cfg_attr(not(all(feature = "fs", unix)), allow(dead_code))]
    pub(crate) fn head(&self) -> &[u8] {
        &self.head
    }

    /// Bytes of header and salt that precede the payload.
    pub fn header_len(&self) -> usize {
        self.head.len()
    }

    /// Bytes of the whole encrypted file for an `n`-byte plaintext.
    pub fn encrypted_len(&self, n: usize) -> usize {
        self.head.len() + stream::sealed_len(self.cipher.chunk_size(), n)
    }

    /// Encrypts everything `input` yields onto `output`; returns the plaintext length.
    /// `progress` gets the plaintext bytes read so far.
    pub fn encrypt_stream(
        self,
        input: &mut (dyn Read + Send),
        output: &mut (dyn Write + Send),
        progress: Option<Progress>,
    ) -> Result<u64, Error> {
        output.write_all(&self.head)?;
        stream::stream(&self.cipher, Dir::Seal, Input::Reader(input), output, self.threads, progress)
    }

    /// Encrypts the file `input`, from its current position to its end, into `output`;
    /// returns the plaintext length. For a regular file into a regular destination every worker
    /// reads, seals and writes its own pieces at their offsets (see ARCHITECTURE.md, "the I/O
    /// path of a file"), so one file moves at the speed of the cores, not of one thread's
    /// copies; anything else (a FIFO, a device) is streamed as by
    /// [`encrypt_stream`](Self::encrypt_stream). A file that changes size while it is read is
    /// an error (nothing is committed). `progress` gets the plaintext bytes done so far.
    #[cfg(all(feature = "fs", any(unix, windows)))]
    pub fn encrypt_file(
        self,
        mut input: &std::fs::File,
        output: &mut crate::output::AtomicOutput,
        progress: Option<Progress>,
    ) -> Result<u64, Error> {
        use std::io::Seek;
        output.write_all(&self.head)?;
        let at = input.stream_position()?;
        let positional = stream::positional::into_output(
            &self.cipher,
            Dir::Seal,
            input,
            at,
            output,
            self.threads,
            progress,
        );
        match positional {
            Some(done) => done,
            None => stream::stream(
                &self.cipher,
                Dir::Seal,
                Input::Reader(&mut input),
                output,
                self.threads,
                progress,
            ),
        }
    }

    /// Like [`encrypt_stream`](Self::encrypt_stream) for an input already in memory (or
    /// memory-mapped): chunks are sealed straight from `input`, without a staging copy.
    pub fn encrypt_slice(
        self,
        input: &[u8],
        output: &mut (dyn Write + Send),
        progress: Option<Progress>,
    ) -> Result<u64, Error> {
        output.write_all(&self.head)?;
        stream::stream(&self.cipher, Dir::Seal, Input::Slice(input), output, self.threads, progress)
    }

    /// Encrypts `plaintext` into `out`, which must be exactly
    /// [`encrypted_len`](Self::encrypted_len)`(plaintext.len())` bytes, sealing straight into
    /// place (over all threads from 1 MiB on).
    pub fn encrypt_into(self, plaintext: &[u8], out: &mut [u8]) -> Result<(), Error> {
        let need = self.encrypted_len(plaintext.len());
        if out.len() != need {
            return Err(Error::InvalidArgument(format!(
                "output buffer is {} bytes, the encrypted file is {need}",
                out.len()
            )));
        }
        let (head, payload) = out.split_at_mut(self.head.len());
        head.copy_from_slice(&self.head);
        stream::seal_run(&self.cipher, 0, plaintext, true, payload, self.threads);
        Ok(())
    }

    /// A push-based sealer: feed plaintext in pieces of any size, collect the file's bytes.
    ///
    /// ```
    /// # use hyperseal::{recipient, Encryptor, Kind, Options};
    /// # let key = recipient::generate(Kind::X25519)?;
    /// # let to = [recipient::parse_recipient(&key.public)?];
    /// let mut sealer = Encryptor::with_recipients(&to, Options::default())?.sealer();
    /// let mut file = Vec::new();
    /// for piece in [&b"hello, "[..], b"world"] {
    ///     sealer.update(piece, &mut file);
    /// }
    /// sealer.finish(&mut file);
    /// # Ok::<(), hyperseal::Error>(())
    /// ```
    pub fn sealer(self) -> Sealer {
        let sizes = (self.head.len(), self.cipher.chunk_size());
        Sealer { head: Some(self.head), payload: PayloadSealer::new(self.cipher, self.threads), sizes }
    }

    /// Writes the header and returns a `Write` for the plaintext. Call `finish()` at the end.
    pub fn wrap_output<W: Write>(self, mut out: W) -> Result<StreamWriter<W>, Error> {
        out.write_all(&self.head)?;
        Ok(StreamWriter::new(out, PayloadSealer::new(self.cipher, self.threads)))
    }
}

/// A file's length from its plaintext's and the reverse, for one header (from
/// [`Sealer::sizes`] or [`Opener::sizes`](crate::Opener::sizes)).
#[derive(Clone, Copy, Debug)]
pub struct FileSizes {
    /// Header and salt.
    head: usize,
    chunk: usize,
}

impl FileSizes {
    pub(crate) fn new(head: usize, chunk: usize) -> Self {
        FileSizes { head, chunk }
    }

    /// Bytes of the whole file for an `n`-byte plaintext.
    pub fn encrypted_len(&self, n: u64) -> u64 {
        let chunks = n.div_ceil(self.chunk as u64).max(1);
        self.head as u64 + n + chunks * crate::format::TAG_LEN as u64
    }

    /// The plaintext length of a whole file of `file_len` bytes; a length no file with this
    /// header can have is an [`Error::InvalidArgument`].
    pub fn plaintext_len(&self, file_len: u64) -> Result<u64, Error> {
        let tag = crate::format::TAG_LEN as u64;
        let chunk = self.chunk as u64;
        let bad = || Error::InvalidArgument(format!("no file with this header is {file_len} bytes long"));
        let payload = file_len.checked_sub(self.head as u64).ok_or_else(bad)?;
        let (whole, rest) = (payload / (chunk + tag), payload % (chunk + tag));
        match rest {
            0 if whole > 0 => Ok(whole * chunk),
            // A final chunk holds at least one byte, unless it is the only one.
            r if r == tag && whole == 0 => Ok(0),
            r if r > tag => Ok(whole * chunk + r - tag),
            _ => Err(bad()),
        }
    }
}

/// Push-based encryption (from [`Encryptor::sealer`]): the bindings' streams wrap this.
pub struct Sealer {
    head: Option<Vec<u8>>,
    payload: PayloadSealer,
    /// The header's length and the chunk size, for [`Sealer::encrypted_len`].
    sizes: (usize, usize),
}

impl Sealer {
    /// The sizes of this file for any plaintext length (what a stream's consumer may want to
    /// know before the end: typage's `size`).
    pub fn sizes(&self) -> FileSizes {
        FileSizes { head: self.sizes.0, chunk: self.sizes.1 }
    }

    /// Appends to `out` the file bytes that `plaintext` completes: the header first, then whole
    /// chunks. A chunk is held back until it is known not to be the last one.
    pub fn update(&mut self, plaintext: &[u8], out: &mut Vec<u8>) {
        if let Some(head) = self.head.take() {
            out.extend_from_slice(&head);
        }
        self.payload.update(plaintext, out);
    }

    /// Appends the rest of the file, ending with the final chunk.
    pub fn finish(mut self, out: &mut Vec<u8>) {
        self.update(&[], out);
        self.payload.finish(out);
    }
}

/// Everything before the payload, and the key the payload is sealed under.
pub(crate) struct Prepared {
    /// Header and salt.
    pub(crate) head: Vec<u8>,
    pub(crate) payload_key: Zeroizing<[u8; 32]>,
}

/// Makes a fresh file key, wraps it to every recipient, writes the header and a fresh salt, and
/// derives the payload key: the one way a file begins ([`Encryptor`] and the part sealer,
/// `parts::PartKey`).
pub(crate) fn prepare(recipients: &[Box<dyn Recipient>], opts: &Options) -> Result<Prepared, Error> {
    let file_key = FileKey::generate(opts.profile.file_key_len());
    let stanzas = wrap_all(recipients, &file_key)?;
    prepare_with(&file_key, stanzas, opts)
}

/// [`prepare`] for a file key already wrapped into `stanzas`.
fn prepare_with(file_key: &FileKey, stanzas: Vec<Stanza>, opts: &Options) -> Result<Prepared, Error> {
    check_profile(opts.profile, &stanzas)?;
    let mut header = Header::new(opts.profile, opts.suite, opts.chunk_size, stanzas)?;
    if opts.slack && !header.is_passphrase() {
        let pad = slack::slack_for(header.encode_len());
        let mut stanzas = header.stanzas.clone();
        stanzas.extend(slack::fill(pad).expect("slack_for is at least 1 KiB: always fillable"));
        header = Header::new(opts.profile, opts.suite, opts.chunk_size, stanzas)?;
    }
    let mut head = keys::seal_header(&header, file_key);
    let mut salt = [0u8; SALT_LEN];
    crate::rng::fill(&mut salt)?;
    head.extend_from_slice(&salt);
    let payload_key = keys::payload_key(opts.profile, opts.suite, file_key, &salt);
    Ok(Prepared { head, payload_key })
}

/// An age file is for age: refuses stanzas that age itself could never open.
pub(crate) fn check_profile(profile: Profile, stanzas: &[Stanza]) -> Result<(), Error> {
    match stanzas.iter().find(|s| profile == Profile::Age && HYPERSEAL_ONLY_TYPES.contains(&s.tag.as_str())) {
        Some(s) => Err(Error::IncompatibleRecipients(format!(
            "{} recipients cannot be used in age files (age cannot open them); use --format hyperseal",
            s.tag
        ))),
        None => Ok(()),
    }
}

/// One-shot: encrypts `plaintext` to `recipients` with default options, on all cores.
pub fn encrypt(recipients: &[Box<dyn Recipient>], plaintext: &[u8]) -> Result<Vec<u8>, Error> {
    let enc = Encryptor::with_recipients(recipients, Options::default())?;
    // Zeroed by the allocator (fresh pages for a large buffer), not memset here, so its pages
    // are first touched by the threads that fill them.
    let mut out = crate::mem::output_buffer(enc.encrypted_len(plaintext.len()));
    enc.encrypt_into(plaintext, &mut out)?;
    Ok(out)
}

/// Wraps `out` in ASCII armor with the label of `profile`.
pub fn armored<W: Write>(out: W, profile: Profile) -> armor::ArmoredWriter<W> {
    let label = match profile {
        Profile::Hyperseal => armor::HYPERSEAL_LABEL,
        Profile::Age => armor::AGE_LABEL,
    };
    armor::ArmoredWriter::new(out, label)
}
