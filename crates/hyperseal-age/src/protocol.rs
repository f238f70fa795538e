//! [`Encryptor`] and [`Decryptor`]: age's entry points, over the core's.
//!
//! The file key is wrapped and unwrapped here with the caller's age recipients and identities
//! (see `bridge`); everything after that (header MAC, payload key, the chunked payload over
//! every core) is the core's.

use std::io::{self, BufRead, Read, Write};
use std::iter;

use age_core::format::{FileKey, Stanza};
use age_core::secrecy::{ExposeSecret, SecretString};
use zeroize::Zeroizing;

use crate::bridge::{self, KnownKey};
use crate::io::{In, Out, SeekSlot};
use crate::stream::{StreamReader, StreamWriter};
use crate::{scrypt, DecryptError, EncryptError, Identity, Recipient};

/// What an encryptor seals with: the caller's stanzas, or a passphrase the core wraps itself
/// (at age's work factor).
enum Keys {
    Wrapped(hyperseal::FileKey, Vec<hyperseal::format::Stanza>),
    Passphrase(Zeroizing<String>),
}

/// Encryptor for creating an age file.
pub struct Encryptor(Keys);

impl std::fmt::Debug for Encryptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Encryptor(<redacted>)")
    }
}

impl Encryptor {
    /// Returns an `Encryptor` that will create an age file encrypted to a list of recipients.
    ///
    /// Every recipient must carry the same labels; a passphrase ([`scrypt::Recipient`]) must
    /// stand alone.
    pub fn with_recipients<'a>(
        recipients: impl Iterator<Item = &'a dyn Recipient>,
    ) -> Result<Self, EncryptError> {
        let (file_key, stanzas) = bridge::wrap_file_key(recipients)?;
        Ok(Encryptor(Keys::Wrapped(file_key, stanzas)))
    }

    /// Returns an `Encryptor` that will create an age file encrypted with a passphrase
    /// (scrypt, at the work factor age writes).
    pub fn with_user_passphrase(passphrase: SecretString) -> Self {
        Encryptor(Keys::Passphrase(Zeroizing::new(passphrase.expose_secret().to_string())))
    }

    /// The core encryptor for an age v1 file.
    fn core(self) -> io::Result<hyperseal::Encryptor> {
        let opts = hyperseal::Options::age();
        match self.0 {
            Keys::Wrapped(key, stanzas) => hyperseal::Encryptor::with_file_key(&key, stanzas, opts),
            Keys::Passphrase(p) => hyperseal::Encryptor::with_passphrase(p, opts),
        }
        .map_err(hyperseal::Error::into_io)
    }

    /// Creates a wrapper around a writer that will encrypt its input. The header is written
    /// at once; call [`StreamWriter::finish`] when done. Large writes are sealed on every core.
    pub fn wrap_output<W: Write>(self, output: W) -> io::Result<StreamWriter<W>> {
        let writer = self.core()?.wrap_output(Out::new(output)).map_err(hyperseal::Error::into_io)?;
        Ok(StreamWriter::new(writer))
    }

    /// Creates a wrapper around an asynchronous writer that will encrypt its input.
    #[cfg(feature = "async")]
    #[cfg_attr(docsrs, doc(cfg(feature = "async")))]
    pub async fn wrap_async_output<W: futures::AsyncWrite + Unpin>(
        self,
        output: W,
    ) -> io::Result<StreamWriter<W>> {
        Ok(StreamWriter::new_async(self.core()?.sealer(), output))
    }
}

/// Decryptor for an age file: [`Decryptor::new`] reads the header, [`Decryptor::decrypt`]
/// opens it with identities.
pub struct Decryptor<R> {
    inner: Inner<R>,
}

enum Inner<R> {
    Sync(hyperseal::Decryptor<In<R>>, SeekSlot<R>),
    #[cfg(feature = "async")]
    Async(crate::stream::AsyncHead<R>),
}

/// age's rule on passphrase files: an scrypt stanza stands alone.
fn check_scrypt(stanzas: &[hyperseal::format::Stanza]) -> Result<(), DecryptError> {
    let any = stanzas.iter().any(|s| s.tag == scrypt::TAG);
    match any && stanzas.len() != 1 {
        true => Err(DecryptError::InvalidHeader),
        false => Ok(()),
    }
}

/// A decryptor made for one kind of I/O (`std::io` or `futures::io`) asked for the other.
#[cfg(feature = "async")]
fn not_sync() -> DecryptError {
    DecryptError::Io(io::Error::new(
        io::ErrorKind::Unsupported,
        "decrypt the way the decryptor was made (sync or async)",
    ))
}

impl<R> Decryptor<R> {
    fn core_stanzas(&self) -> &[hyperseal::format::Stanza] {
        match &self.inner {
            Inner::Sync(d, _) => &d.header().stanzas,
            #[cfg(feature = "async")]
            Inner::Async(h) => &h.header.stanzas,
        }
    }

    /// The header's recipient stanzas (unauthenticated until a file key opens the header), for
    /// identities that answer many files at once
    /// ([`IdentityPluginV1::unwrap_files`](crate::plugin::IdentityPluginV1::unwrap_files)).
    /// Not in the age crate.
    pub fn stanzas(&self) -> Vec<Stanza> {
        self.core_stanzas().iter().cloned().map(bridge::to_age_stanza).collect()
    }

    /// Whether this file is encrypted to a passphrase (one scrypt stanza).
    pub fn is_scrypt(&self) -> bool {
        let s = self.core_stanzas();
        s.len() == 1 && s[0].tag == scrypt::TAG
    }
}

impl<R: Read> Decryptor<R> {
    /// Reads an age file's header from `input`.
    pub fn new(input: R) -> Result<Self, DecryptError> {
        let input = In::new(input);
        let seek = input.seek_slot();
        let d = hyperseal::Decryptor::new_with(input, bridge::HEADER_RULES).map_err(bridge::decrypt_error)?;
        if d.header().profile != hyperseal::Profile::Age {
            return Err(DecryptError::UnknownFormat);
        }
        check_scrypt(&d.header().stanzas)?;
        Ok(Decryptor { inner: Inner::Sync(d, seek) })
    }

    /// Opens the file with the first of `identities` that unwraps its file key, and returns
    /// a reader of its plaintext (read ahead on every core; seekable when `R` is).
    pub fn decrypt<'a>(
        self,
        identities: impl Iterator<Item = &'a dyn Identity>,
    ) -> Result<StreamReader<R>, DecryptError> {
        let (d, seek) = match self.inner {
            Inner::Sync(d, seek) => (d, seek),
            #[cfg(feature = "async")]
            Inner::Async(_) => return Err(not_sync()),
        };
        let key = bridge::unwrap_file_key(&d.header().stanzas, identities)?;
        Self::open(d, seek, key)
    }

    /// Opens the file with a file key already unwrapped from its [`stanzas`](Self::stanzas);
    /// the header's MAC still has to verify under it ([`DecryptError::InvalidMac`] if not).
    /// Not in the age crate.
    pub fn decrypt_with_file_key(self, file_key: FileKey) -> Result<StreamReader<R>, DecryptError> {
        let (d, seek) = match self.inner {
            Inner::Sync(d, seek) => (d, seek),
            #[cfg(feature = "async")]
            Inner::Async(_) => return Err(not_sync()),
        };
        Self::open(d, seek, bridge::to_core_key(&file_key))
    }

    fn open(
        d: hyperseal::Decryptor<In<R>>,
        seek: SeekSlot<R>,
        key: hyperseal::FileKey,
    ) -> Result<StreamReader<R>, DecryptError> {
        let ids: [Box<dyn hyperseal::Identity>; 1] = [Box::new(KnownKey(key))];
        let reader = d.into_reader(&ids).map_err(bridge::decrypt_error)?;
        Ok(StreamReader::new(reader, seek))
    }
}

impl<R: BufRead> Decryptor<R> {
    /// Reads an age file's header from a buffered `input` (the same as [`Decryptor::new`]).
    pub fn new_buffered(input: R) -> Result<Self, DecryptError> {
        Self::new(input)
    }
}

#[cfg(feature = "async")]
#[cfg_attr(docsrs, doc(cfg(feature = "async")))]
impl<R: futures::AsyncRead + Unpin> Decryptor<R> {
    /// Reads an age file's header from an asynchronous `input`.
    pub async fn new_async(input: R) -> Result<Self, DecryptError> {
        let head = crate::stream::AsyncHead::read(input).await?;
        check_scrypt(&head.header.stanzas)?;
        Ok(Decryptor { inner: Inner::Async(head) })
    }

    /// Reads an age file's header from a buffered asynchronous `input`.
    pub async fn new_async_buffered(input: R) -> Result<Self, DecryptError>
    where
        R: futures::AsyncBufRead,
    {
        Self::new_async(input).await
    }

    /// Opens the file with the first of `identities` that unwraps its file key, and returns an
    /// asynchronous reader of its plaintext.
    pub fn decrypt_async<'a>(
        self,
        identities: impl Iterator<Item = &'a dyn Identity>,
    ) -> Result<StreamReader<R>, DecryptError> {
        let Inner::Async(head) = self.inner else { return Err(not_sync()) };
        let key = bridge::unwrap_file_key(&head.header.stanzas, identities)?;
        head.open(key)
    }
}

// age's one-call helpers, over the two types above.
/// Encrypts `plaintext` to one recipient, returning the age file.
pub fn encrypt(recipient: &impl Recipient, plaintext: &[u8]) -> Result<Vec<u8>, EncryptError> {
    let encryptor = Encryptor::with_recipients(iter::once(recipient as _))?;
    let mut file = Vec::with_capacity(plaintext.len() + 256);
    let mut writer = encryptor.wrap_output(&mut file)?;
    writer.write_all(plaintext)?;
    writer.finish()?;
    Ok(file)
}

/// Encrypts `plaintext` to one recipient, returning the ASCII-armored age file.
#[cfg(feature = "armor")]
#[cfg_attr(docsrs, doc(cfg(feature = "armor")))]
pub fn encrypt_and_armor(recipient: &impl Recipient, plaintext: &[u8]) -> Result<String, EncryptError> {
    use crate::armor::{ArmoredWriter, Format};
    let encryptor = Encryptor::with_recipients(iter::once(recipient as _))?;
    let mut file = Vec::with_capacity(plaintext.len() * 4 / 3 + 512);
    let mut writer = encryptor.wrap_output(ArmoredWriter::wrap_output(&mut file, Format::AsciiArmor)?)?;
    writer.write_all(plaintext)?;
    writer.finish()?.finish()?;
    Ok(String::from_utf8(file).expect("armor is ASCII"))
}

/// Decrypts an age file (binary, or armored: the core detects armor itself) with one identity.
pub fn decrypt(identity: &impl Identity, ciphertext: &[u8]) -> Result<Vec<u8>, DecryptError> {
    let decryptor = Decryptor::new(ciphertext)?;
    let mut reader = decryptor.decrypt(iter::once(identity as _))?;
    let mut plaintext = Vec::with_capacity(ciphertext.len());
    reader.read_to_end(&mut plaintext)?;
    Ok(plaintext)
}
