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
use std::time::Instant;

use hyperseal::format::Stanza;
use hyperseal::recipient::{Callbacks, Identity, Recipient};
use hyperseal::{Error, FileKey};

use super::pin::{self, PluginCallbacks};
use super::relay::{Relay, NOT_TRIED};

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
    let until = relay.clone();
    let run = || -> Result<Vec<Option<Result<FileKey, Error>>>, Error> {
        let ids = reader.identities(text, name, callbacks.clone())?;
        // Each file costs the TPM work of its own: the files the request's time does not reach
        // are answered so, never silently "not mine". The relay's deadline moves on once the
        // user has answered, so typing the PIN costs no file its try.
        let out_of_time = || until.as_ref().and_then(|r| r.work_until()).is_some_and(|t| Instant::now() >= t);
        Ok(files
            .iter()
            .map(|f| match out_of_time() {
                true => Some(Err(worded(NOT_TRIED.into()))),
                false => ids.iter().find_map(|id| id.unwrap_stanzas(f)),
            })
            .collect())
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
            files.iter().map(|_| Some(Err(worded(why.clone())))).collect()
        }
    }
}

/// An error whose text is shown as it is: already worded (no kind's prefix added again).
pub fn worded(why: String) -> Error {
    Error::Io(std::io::Error::other(why))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyperseal::agent::proto::Prompt;
    use hyperseal::recipient::{self, generate, Kind};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Mutex;
    use zeroize::Zeroizing;

    const PIN: &str = "1234";

    /// An X25519 key behind a PIN, asked once per identity as a TPM identity asks it: a wrong
    /// one is remembered for the identity's life, never asked again.
    struct Pinned {
        inner: Box<dyn Identity>,
        callbacks: Arc<dyn Callbacks>,
        verdict: Mutex<Option<bool>>,
    }

    impl Identity for Pinned {
        fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
            let mut v = self.verdict.lock().unwrap();
            let ok = *v.get_or_insert_with(|| {
                self.callbacks.request_passphrase("PIN for test:").is_some_and(|p| p.as_str() == PIN)
            });
            match ok {
                true => self.inner.unwrap_stanza(stanza),
                false => Some(Err(Error::Plugin("wrong PIN".into()))),
            }
        }
    }

    struct Fake;

    impl Reader for Fake {
        fn reads(&self, _: &str) -> bool {
            true
        }
        fn recipients(&self, _: &str) -> Result<Vec<(String, Box<dyn Recipient>)>, Error> {
            Ok(Vec::new())
        }
        fn identities(
            &self,
            text: &str,
            _: &str,
            cb: Arc<dyn Callbacks>,
        ) -> Result<Vec<Box<dyn Identity>>, Error> {
            let mut ids = recipient::parse_identities_with(text, cb.clone())?;
            let inner = ids.pop().expect("one key");
            Ok(vec![Box::new(Pinned { inner, callbacks: cb, verdict: Mutex::new(None) })])
        }
    }

    /// A client that answers every question with `answer`, and counts them.
    struct Client {
        answer: Option<&'static str>,
        asked: AtomicUsize,
    }

    impl Relay for Client {
        fn ask(&self, _: Prompt) -> Option<Zeroizing<String>> {
            self.asked.fetch_add(1, Ordering::SeqCst);
            self.answer.map(|a| Zeroizing::new(a.to_string()))
        }
    }

    /// Asks `files` through a client answering `answer`: how many opened, and how often it asked.
    fn ask(
        key: &str,
        files: &[Vec<Stanza>],
        cb: &Arc<PluginCallbacks>,
        answer: Option<&'static str>,
    ) -> (usize, usize) {
        let client = Arc::new(Client { answer, asked: AtomicUsize::new(0) });
        let files: Vec<&[Stanza]> = files.iter().map(Vec::as_slice).collect();
        let each = unwrap_files(&Fake, key, "test", cb, &files, Some(client.clone()));
        (each.iter().filter(|a| matches!(a, Some(Ok(_)))).count(), client.asked.load(Ordering::SeqCst))
    }

    fn setup() -> (String, Vec<Vec<Stanza>>, Arc<PluginCallbacks>) {
        let k = generate(Kind::X25519).unwrap();
        let r = recipient::parse_recipient(&k.public).unwrap();
        let files = (0..3).map(|_| r.wrap_file_key(&FileKey::generate(16)).unwrap().0).collect();
        let cb = PluginCallbacks { cache: pin::PinCache::new(None), serving: AtomicBool::new(true) };
        (format!("{}\n", k.secret.as_str()), files, Arc::new(cb))
    }

    #[test]
    fn the_pin_is_asked_once_for_a_request_then_cached() {
        let (key, files, cb) = setup();
        assert_eq!(ask(&key, &files, &cb, Some(PIN)), (3, 1), "one question for three files");
        assert_eq!(ask(&key, &files, &cb, None), (3, 0), "the next request asks nothing");
    }

    #[test]
    fn a_wrong_pin_is_asked_once_and_never_cached() {
        let (key, files, cb) = setup();
        assert_eq!(ask(&key, &files, &cb, Some("0000")), (0, 1), "one question, no loop");
        assert_eq!(ask(&key, &files, &cb, None), (0, 1), "nothing cached: the client is asked");
        assert_eq!(ask(&key, &files, &cb, Some(PIN)), (3, 1));
        assert_eq!(ask(&key, &files, &cb, None), (3, 0));
    }
}
