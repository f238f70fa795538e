//! The encryption API: pick recipients and options, then either wrap a `Write`
//! ([`Encryptor::wrap_output`]) or run the multi-core pipeline ([`Encryptor::encrypt_stream`]).
//! Both produce the same bytes for the same keys and salt: they share the chunk code.

use std::io::{Read, Write};

use zeroize::Zeroizing;

use crate::format::{armor, Header, Profile};
use crate::recipient::{passphrase_recipient, wrap_all, Recipient};
use crate::stream::{self, ChunkCipher, Progress, StreamWriter, DEFAULT_CHUNK};
use crate::suite::Suite;
use crate::{Error, FileKey};

/// Stanza types only hyperseal opens: never written into an age file (plugins may add any other).
const HYPERSEAL_ONLY_TYPES: [&str; 3] = ["argon2id", "mlkem1024", "rsa-oaep"];

/// Bytes of the random payload salt that follows the header.
pub const SALT_LEN: usize = 16;

/// Encryption parameters.
#[derive(Clone, Debug)]
pub struct Options {
    /// Header dialect.
    pub profile: Profile,
    /// Payload AEAD.
    pub suite: Suite,
    /// Plaintext bytes per chunk.
    pub chunk_size: usize,
    /// Worker threads for the payload (1 = sequential).
    pub threads: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            profile: Profile::Hyperseal,
            suite: Suite::default_for_cpu(),
            chunk_size: DEFAULT_CHUNK,
            threads: available_threads(),
        }
    }
}

impl Options {
    /// Options for an age v1 file (ChaCha20-Poly1305, 64 KiB chunks).
    pub fn age() -> Self {
        Options { profile: Profile::Age, suite: Suite::ChaCha20Poly1305, ..Options::default() }
    }
}

/// The number of CPUs this process may use, read once: `available_parallelism` reads cgroup
/// files under /proc and /sys on every call (~40 µs, a fifth of a 1 KiB one-shot encrypt +
/// decrypt before it was cached).
pub fn available_threads() -> usize {
    static N: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *N.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// A prepared encryption: header written once, payload cipher keyed.
pub struct Encryptor {
    header: Vec<u8>,
    salt: [u8; SALT_LEN],
    cipher: ChunkCipher,
    threads: usize,
}

impl std::fmt::Debug for Encryptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Encryptor({:?})", self.cipher)
    }
}

impl Encryptor {
    /// Encrypts to one or more recipients.
    pub fn with_recipients(recipients: &[Box<dyn Recipient>], opts: Options) -> Result<Self, Error> {
        if !opts.suite.is_available() {
            return Err(Error::InvalidArgument(format!(
                "suite {} is not available in this build",
                opts.suite
            )));
        }
        let file_key = FileKey::generate(opts.profile.file_key_len());
        let stanzas = wrap_all(recipients, &file_key)?;
        // An age file is for age: refuse stanzas that age itself could never open.
        if let Some(s) = stanzas
            .iter()
            .find(|s| opts.profile == Profile::Age && HYPERSEAL_ONLY_TYPES.contains(&s.tag.as_str()))
        {
            return Err(Error::IncompatibleRecipients(format!(
                "{} recipients cannot be used in age files (age cannot open them); use --format hyperseal",
                s.tag
            )));
        }
        let header = Header::new(opts.profile, opts.suite, opts.chunk_size, stanzas)?.encode(&file_key);
        let mut salt = [0u8; SALT_LEN];
        crate::rng::fill(&mut salt)?;
        let key = opts.profile.payload_key(&file_key, &salt, opts.suite);
        let cipher = ChunkCipher::new(opts.suite, opts.chunk_size, &key)?;
        Ok(Encryptor { header, salt, cipher, threads: opts.threads.max(1) })
    }

    /// Encrypts with a passphrase: Argon2id in the hyperseal profile, scrypt (log2 N = 18, as
    /// age) in the age profile.
    pub fn with_passphrase(passphrase: Zeroizing<String>, opts: Options) -> Result<Self, Error> {
        Self::with_recipients(&[passphrase_recipient(opts.profile, passphrase)], opts)
    }

    /// Writes the header and returns a writer for the plaintext. Call `finish()` at the end.
    pub fn wrap_output<W: Write>(self, mut out: W) -> Result<StreamWriter<W>, Error> {
        out.write_all(&self.header)?;
        out.write_all(&self.salt)?;
        Ok(StreamWriter::new(out, self.cipher, self.threads))
    }

    /// Encrypts everything `input` yields onto `output` on the multi-core pipeline; returns the
    /// plaintext length. The fastest path for files and pipes.
    pub fn encrypt_stream(
        self,
        input: &mut (dyn Read + Send),
        output: &mut (dyn Write + Send),
        progress: Option<Progress>,
    ) -> Result<u64, Error> {
        output.write_all(&self.header)?;
        output.write_all(&self.salt)?;
        let n = stream::encrypt_pipeline(&self.cipher, input, output, self.threads, progress)?;
        output.flush()?;
        Ok(n)
    }

    /// Like [`encrypt_stream`](Self::encrypt_stream) for an input already in memory (or
    /// memory-mapped): chunks are sealed straight from `input`, without a staging copy.
    pub fn encrypt_slice(
        self,
        input: &[u8],
        output: &mut (dyn Write + Send),
        progress: Option<Progress>,
    ) -> Result<u64, Error> {
        output.write_all(&self.header)?;
        output.write_all(&self.salt)?;
        let n = stream::stream_slice(&self.cipher, true, input, output, self.threads, progress)?;
        output.flush()?;
        Ok(n)
    }

    /// Bytes of header and salt that precede the payload.
    pub fn header_len(&self) -> usize {
        self.header.len() + SALT_LEN
    }

    /// Bytes of the whole encrypted file for an `n`-byte plaintext.
    pub fn encrypted_len(&self, n: usize) -> usize {
        self.header_len() + stream::sealed_len(&self.cipher, n)
    }

    /// Encrypts `plaintext` into `out`, which must be exactly
    /// [`encrypted_len`](Self::encrypted_len)`(plaintext.len())` bytes: chunks are sealed
    /// straight from the input into place, on the configured threads (from 4 MiB on).
    pub fn encrypt_into(self, plaintext: &[u8], out: &mut [u8]) -> Result<(), Error> {
        if out.len() != self.encrypted_len(plaintext.len()) {
            return Err(Error::InvalidArgument(format!(
                "output buffer is {} bytes, the encrypted file is {}",
                out.len(),
                self.encrypted_len(plaintext.len())
            )));
        }
        let (head, payload) = out.split_at_mut(self.header_len());
        head[..self.header.len()].copy_from_slice(&self.header);
        head[self.header.len()..].copy_from_slice(&self.salt);
        stream::seal_into(&self.cipher, plaintext, payload, self.threads);
        Ok(())
    }
}

/// One-shot: encrypts `plaintext` to `recipients` with default options.
pub fn encrypt(recipients: &[Box<dyn Recipient>], plaintext: &[u8]) -> Result<Vec<u8>, Error> {
    encrypt_with(recipients, Options::default(), plaintext)
}

/// One-shot with explicit options.
pub fn encrypt_with(
    recipients: &[Box<dyn Recipient>],
    opts: Options,
    plaintext: &[u8],
) -> Result<Vec<u8>, Error> {
    let enc = Encryptor::with_recipients(recipients, opts)?;
    // The buffer comes zeroed from the allocator (fresh pages for a large one), not memset here,
    // so its pages are first touched by the workers that fill them, in parallel.
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
