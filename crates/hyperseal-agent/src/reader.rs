//! Identity files the library does not read, read by the program that starts the agent: the
//! CLI hands `server::serve` a [`Reader`] for its TPM keys, so this crate holds no TPM code (as
//! `plugin::main_with` lets `age-plugin-hyperseal` open them).
//!
//! Such a key is held as its file's text (for a TPM key, blobs that only the TPM that made them
//! can use). Its identities are made from that text for each request and dropped when the
//! request ends, so nothing they load (a TPM connection, its session, the PIN handed to it)
//! outlives the request: the agent's lock, `remove` and PIN lifetime govern the only copy of the
//! PIN, the key's PIN cache (`pin.rs`), exactly as for a security key's plugin.
//!
//! One request makes the identities once for all its files: one PIN and one set-up serve every
//! file, and a failure (a wrong PIN) is met once and answered for every file, never tried again
//! file by file. A PIN the user typed is cached only once a file opened with it; one the cache
//! gave that then failed is forgotten.

use std::sync::Arc;

use hyperseal::format::Stanza;
use hyperseal::recipient::{Callbacks, Identity, Recipient};
use hyperseal::{Error, FileKey};

use super::pin::{self, PluginCallbacks};
use super::relay::Relay;

/// Identity files of a kind the program that starts the agent knows and the library does not.
pub trait Reader: Send + Sync {
    /// Whether `text` (an identity file's) is of this reader's kind: it is then loaded by it.
    fn reads(&self, text: &str) -> bool;

    /// The file's recipients, each with the string `list` shows; an error refuses the `add`
    /// (a damaged line, or a mix this reader does not take).
    #[allow(clippy::type_complexity)]
    fn recipients(&self, text: &str) -> Result<Vec<(String, Box<dyn Recipient>)>, Error>;

    /// The file's identities for one request. `name` names the key in a PIN prompt (and is the
    /// prompt's cache entry); `callbacks` is asked for the PIN (the agent's cache, else the
    /// request's client). Errors are worded for the person who sees them, on one line.
    fn identities(
        &self,
        text: &str,
        name: &str,
        callbacks: Arc<dyn Callbacks>,
    ) -> Result<Vec<Box<dyn Identity>>, Error>;
}

/// The reader the agent was started with, if any.
pub type Readers = Option<Arc<dyn Reader>>;

/// Each file's answer from a key read by `reader` (its file's `text`, named `name` in prompts):
/// its identities made once for all `files`, with `callbacks`' PIN cache and `relay` (the
/// request's client) to ask. `None` for a file: not this key's.
pub fn unwrap_files(
    reader: &dyn Reader,
    text: &str,
    name: &str,
    callbacks: &Arc<PluginCallbacks>,
    files: &[&[Stanza]],
    relay: Option<Arc<dyn Relay>>,
) -> Vec<Option<Result<FileKey, Error>>> {
    let run = || -> Result<Vec<Option<Result<FileKey, Error>>>, Error> {
        let ids = reader.identities(text, name, callbacks.clone())?;
        Ok(files.iter().map(|f| ids.iter().find_map(|id| id.unwrap_stanzas(f))).collect())
        // `ids` drops here: a TPM identity flushes what it loaded and zeroizes its PIN copy.
    };
    let verdict = |r: &Result<Vec<Option<Result<FileKey, Error>>>, Error>| match r {
        Ok(each) if each.iter().any(|a| matches!(a, Some(Ok(_)))) => pin::Verdict::Accepted,
        Ok(each) if each.iter().any(|a| matches!(a, Some(Err(_)))) => pin::Verdict::Failed,
        Ok(_) => pin::Verdict::Neither,
        Err(_) => pin::Verdict::Failed,
    };
    match pin::with_run(callbacks, relay, run, verdict) {
        Ok(each) => each,
        // The key could not be used at all: every file has that error.
        Err(e) => {
            let why = e.to_string();
            files.iter().map(|_| Some(Err(Error::Plugin(why.clone())))).collect()
        }
    }
}
