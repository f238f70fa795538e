//! Identities kept in a passphrase-encrypted age file (age's `encrypted` module): an identity
//! file sealed with `age -p`. The passphrase is asked through the callbacks the first time a
//! key is needed, and the identities are then kept for every later file; a wrong passphrase
//! (or none) is remembered too, so it is asked once, not once per file.

use std::cell::Cell;
use std::io;

use age_core::format::{FileKey, Stanza};

use crate::{scrypt, Callbacks, DecryptError, Decryptor, EncryptError, IdentityFile};

/// A passphrase-encrypted identity file, not yet decrypted.
pub struct EncryptedIdentity<R: io::Read, C: Callbacks> {
    decryptor: Decryptor<R>,
    max_work_factor: Option<u8>,
    callbacks: C,
}

impl<R: io::Read, C: Callbacks> EncryptedIdentity<R, C> {
    /// `None` unless `decryptor`'s file is sealed with a passphrase alone.
    pub fn new(decryptor: Decryptor<R>, callbacks: C, max_work_factor: Option<u8>) -> Option<Self> {
        decryptor.is_scrypt().then_some(EncryptedIdentity { decryptor, max_work_factor, callbacks })
    }

    /// Asks for the passphrase (naming `filename`) and reads the identity file inside. A
    /// passphrase that does not open it, or none at all, is `KeyDecryptionFailed`.
    pub fn decrypt(self, filename: Option<&str>) -> Result<IdentityFile<C>, DecryptError> {
        let prompt = format!("Type passphrase for encrypted identity '{}'", filename.unwrap_or_default());
        let passphrase =
            self.callbacks.request_passphrase(&prompt).ok_or(DecryptError::KeyDecryptionFailed)?;
        let mut identity = scrypt::Identity::new(passphrase);
        if let Some(n) = self.max_work_factor {
            identity.set_max_work_factor(n);
        }
        let stream = self.decryptor.decrypt(std::iter::once(&identity as &dyn crate::Identity)).map_err(
            |e| match e {
                DecryptError::DecryptionFailed => DecryptError::KeyDecryptionFailed,
                other => other,
            },
        )?;
        Ok(IdentityFile::from_buffer(io::BufReader::new(stream))?.with_callbacks(self.callbacks))
    }
}

enum State<R: io::Read, C: Callbacks> {
    Encrypted(Box<EncryptedIdentity<R, C>>),
    Decrypted(IdentityFile<C>),
    /// Decrypting failed with this error (taken only while the state is in use).
    Failed(Option<DecryptError>),
}

/// The identities of a passphrase-encrypted identity file, as one [`Identity`](crate::Identity)
/// (and, through [`recipients`](Identity::recipients), their recipients).
pub struct Identity<R: io::Read, C: Callbacks> {
    state: Cell<State<R, C>>,
    filename: Option<String>,
}

impl<R: io::Read, C: Callbacks> Identity<R, C> {
    /// Reads the header of `data`: `Ok(None)` if it is not a passphrase-encrypted age file.
    pub fn from_buffer(
        data: R,
        filename: Option<String>,
        callbacks: C,
        max_work_factor: Option<u8>,
    ) -> Result<Option<Self>, DecryptError> {
        let encrypted = EncryptedIdentity::new(Decryptor::new(data)?, callbacks, max_work_factor);
        Ok(encrypted.map(|e| Identity { state: Cell::new(State::Encrypted(Box::new(e))), filename }))
    }

    /// Decrypts the file if that was not done yet; runs `f` on it and keeps it. `bool`: whether
    /// the passphrase was asked now.
    fn with_file<T>(&self, f: impl FnOnce(&IdentityFile<C>, bool) -> T) -> Result<T, DecryptError> {
        let (file, asked) = match self.state.replace(State::Failed(None)) {
            State::Encrypted(e) => match e.decrypt(self.filename.as_deref()) {
                Ok(file) => (file, true),
                Err(e) => {
                    self.state.set(State::Failed(Some(e.clone())));
                    return Err(e);
                }
            },
            State::Decrypted(file) => (file, false),
            State::Failed(e) => {
                let e = e.expect("the state is restored after each use");
                self.state.set(State::Failed(Some(e.clone())));
                return Err(e);
            }
        };
        let out = f(&file, asked);
        self.state.set(State::Decrypted(file));
        Ok(out)
    }

    /// The recipients of the identities inside (the passphrase is asked if needed).
    pub fn recipients(&self) -> Result<Vec<Box<dyn crate::Recipient + Send>>, EncryptError> {
        self.with_file(|file, _| file.to_recipients()).map_err(EncryptError::EncryptedIdentities)?
    }

    fn unwrap_with(
        &self,
        open: impl Fn(&dyn crate::Identity) -> Option<Result<FileKey, DecryptError>>,
    ) -> Option<Result<FileKey, DecryptError>> {
        let found = self.with_file(|file, asked| {
            let found = file.entries().iter().find_map(|entry| {
                match entry.clone().into_identity(file.callbacks.clone()) {
                    Ok(identity) => open(identity.as_ref()),
                    Err(e) => Some(Err(e)),
                }
            });
            // The user typed a passphrase for nothing: say so, as age does.
            if asked && found.is_none() {
                file.callbacks.display_message(&format!(
                    "Warning: encrypted identity file '{}' didn't match file's recipients",
                    self.filename.as_deref().unwrap_or_default()
                ));
            }
            found
        });
        match found {
            Ok(found) => found,
            Err(e) => Some(Err(e)),
        }
    }
}

impl<R: io::Read, C: Callbacks> crate::Identity for Identity<R, C> {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, DecryptError>> {
        self.unwrap_with(|i| i.unwrap_stanza(stanza))
    }

    fn unwrap_stanzas(&self, stanzas: &[Stanza]) -> Option<Result<FileKey, DecryptError>> {
        self.unwrap_with(|i| i.unwrap_stanzas(stanzas))
    }
}
