//! The hyperseal agent as an identity: an addition to age's API (the age crate has no agent).
//!
//! `hyperseal agent` holds a user's keys unlocked: a passphrase typed once, a security key's PIN
//! asked once and cached. A program gives [`Identity`] to a [`Decryptor`](crate::Decryptor) as
//! it would any identity; each file then asks the agent which file key its stanzas open, over
//! one connection with a deadline. The agent never sees a payload, and no secret key ever
//! reaches the program. [`Identity::unwrap_files`] asks for many files in one round trip.
//!
//! ```no_run
//! # use hyperseal_age as age;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::io::Read;
//! # let file: Vec<u8> = vec![];
//! // The socket `hyperseal agent start` printed (HYPERSEAL_AGENT_SOCK in the user's shell): the
//! // library reads no environment, so the program says where the agent is.
//! let agent = age::agent::Identity::new("/run/user/1000/hyperseal/agent.sock");
//! let decryptor = age::Decryptor::new(&file[..])?;
//! let mut plaintext = vec![];
//! decryptor.decrypt(std::iter::once(&agent as &dyn age::Identity))?.read_to_end(&mut plaintext)?;
//! # Ok(()) }
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use age_core::format::{FileKey, Stanza};

use crate::bridge;
use crate::{Callbacks, DecryptError};

/// The hyperseal agent listening at a socket path (on Windows its pipe name, `\\.\pipe\…`).
#[derive(Clone, Debug)]
pub struct Identity(hyperseal::agent::AgentIdentity);

impl Identity {
    /// The agent at `path`. Nothing is connected until a file is opened; an agent that is gone
    /// fails that file at once, and one that hangs fails it after the deadline.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Identity(hyperseal::agent::AgentIdentity::new(path))
    }

    /// The deadline of one question to the agent (10 s by default, plus a little per stanza).
    /// The time a user takes to answer a prompt through the callbacks is not counted.
    pub fn with_timeout(self, timeout: Duration) -> Self {
        Identity(self.0.with_timeout(timeout))
    }

    /// Answers through `callbacks` what a security key held by the agent asks of the user: a
    /// PIN the agent has not cached yet, a touch, a confirmation. Without them such a key
    /// fails rather than asking.
    pub fn with_callbacks<C: Callbacks + 'static>(self, callbacks: C) -> Self {
        Identity(self.0.with_callbacks(Arc::new(bridge::Asks { callbacks, plugins: false })))
    }

    /// The socket path.
    pub fn path(&self) -> &Path {
        self.0.path()
    }

    /// For each file (its stanzas, as [`Decryptor::stanzas`](crate::Decryptor::stanzas) gives
    /// them), in one round trip: `None` if the agent holds no key for it, else its file key or
    /// why it failed; open each with
    /// [`Decryptor::decrypt_with_file_key`](crate::Decryptor::decrypt_with_file_key). `Err`: the
    /// agent could not be asked at all (gone, locked, hung, or it broke the protocol).
    pub fn unwrap_files(
        &self,
        files: &[&[Stanza]],
    ) -> Result<Vec<Option<Result<FileKey, DecryptError>>>, DecryptError> {
        let core = files.iter().map(|f| f.iter().map(bridge::to_core_stanza).collect()).collect();
        let each = self.0.unwrap_files(core).map_err(bridge::decrypt_error)?;
        Ok(each
            .into_iter()
            .map(|a| a.map(|r| r.map_err(bridge::decrypt_error).and_then(|k| bridge::to_age_key(&k))))
            .collect())
    }
}

impl crate::Identity for Identity {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, DecryptError>> {
        self.unwrap_stanzas(std::slice::from_ref(stanza))
    }

    /// A file's stanzas in one question: the agent tries each of its keys on each of them.
    fn unwrap_stanzas(&self, stanzas: &[Stanza]) -> Option<Result<FileKey, DecryptError>> {
        match self.unwrap_files(&[stanzas]) {
            Ok(mut each) => each.pop().flatten(),
            Err(e) => Some(Err(e)),
        }
    }
}
