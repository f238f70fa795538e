//! Encryptors made ahead of the files that need them. Sealing a file starts with a fresh file
//! key wrapped for every recipient (for a post-quantum recipient an ML-KEM-768 encapsulation
//! and two X25519 operations), and git waits for each file's answer before it sends the next:
//! on a `git add` of thousands of small files those wraps are most of the filter's own work.
//! Once a recipients file has sealed one file, a thread prepares the next few encryptors for it
//! while git hashes, compresses and writes, on the core git leaves idle.
//!
//! Nothing about the files changes: each encryptor is [`Encryptor::with_recipients`], its own
//! fresh file key, salt and header, consumed by one file (`wrap_output` takes it by value) or
//! dropped unused when the filter ends. Only for recipients that wrap offline
//! ([`Recipient::wraps_offline`]): a plugin or a security key is never run, and nobody is asked
//! anything, for a file that may never be sealed.

use std::collections::VecDeque;
use std::sync::mpsc::{sync_channel, Receiver, TryRecvError};
use std::sync::Arc;

use crate::recipient::Recipient;
use crate::{Encryptor, Error, Options};

/// Encryptors handed over at once. Each hand-over wakes the thread (it waits for room), and on
/// a virtual machine a wake-up of another core costs microseconds of this thread's time: one
/// per this many files, not one per file.
const BATCH: usize = 8;

/// The encryptors of one recipients file.
pub(crate) struct Ahead {
    recipients: Arc<Vec<Box<dyn Recipient>>>,
    /// Started by the first file sealed (a `git status` that seals nothing starts nothing).
    ready: Option<Receiver<Vec<Result<Encryptor, Error>>>>,
    /// The batch taken last, used up before the next is taken. A filter that ends throws away
    /// at most this, one batch waiting and one being made.
    taken: VecDeque<Result<Encryptor, Error>>,
}

impl Ahead {
    pub(crate) fn new(recipients: Arc<Vec<Box<dyn Recipient>>>) -> Self {
        Ahead { recipients, ready: None, taken: VecDeque::new() }
    }

    /// An encryptor for the next file: one made ahead, else one made now. Never a wait for the
    /// thread: when it has none ready (it shares two cores with git and this thread), making one
    /// here costs what it always did, and waiting would add a wake-up to it (measured: half the
    /// runs of a 2,000-file `git add` then took 1.3× as long as with no thread at all).
    pub(crate) fn next(&mut self) -> Result<Encryptor, Error> {
        if let Some(made) = self.taken.pop_front() {
            return made;
        }
        match &self.ready {
            Some(ready) => match ready.try_recv() {
                Ok(batch) => {
                    self.taken.extend(batch);
                    if let Some(made) = self.taken.pop_front() {
                        return made;
                    }
                }
                Err(TryRecvError::Empty) => {}
                // A thread that is gone leaves the work to this one.
                Err(TryRecvError::Disconnected) => self.ready = None,
            },
            None if self.recipients.iter().all(|r| r.wraps_offline()) => self.start(),
            None => {}
        }
        Encryptor::with_recipients(&self.recipients, Options::age())
    }

    fn start(&mut self) {
        // One batch waiting while the next is made.
        let (tx, rx) = sync_channel(1);
        let recipients = Arc::clone(&self.recipients);
        let make =
            move || (0..BATCH).map(|_| Encryptor::with_recipients(&recipients, Options::age())).collect();
        // The thread ends when the receiver is gone: its next send fails.
        let started = std::thread::Builder::new()
            .name("git-seal-ahead".into())
            .spawn(move || while tx.send(make()).is_ok() {});
        if started.is_ok() {
            self.ready = Some(rx);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::file_key::FileKey;
    use crate::format::Stanza;
    use crate::recipient::{self, Kind, Labels};

    /// A recipient that counts its wraps, wrapping through an X25519 key.
    struct Counting {
        inner: Box<dyn Recipient>,
        offline: bool,
        wraps: Arc<AtomicUsize>,
    }

    impl Recipient for Counting {
        fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> {
            self.wraps.fetch_add(1, Ordering::SeqCst);
            self.inner.wrap_file_key(file_key)
        }
        fn wraps_offline(&self) -> bool {
            self.offline
        }
    }

    fn seal(ahead: &mut Ahead, text: &[u8]) -> Vec<u8> {
        let mut file = Vec::new();
        let mut w = ahead.next().unwrap().wrap_output(&mut file).unwrap();
        std::io::Write::write_all(&mut w, text).unwrap();
        w.finish().unwrap();
        file
    }

    #[test]
    fn each_file_gets_its_own_header_and_every_file_opens() {
        let key = recipient::generate(Kind::Hybrid).unwrap();
        let ids = recipient::parse_identities(&key.secret).unwrap();
        let mut ahead = Ahead::new(Arc::new(vec![recipient::parse_recipient(&key.public).unwrap()]));
        let files: Vec<Vec<u8>> = (0..8).map(|_| seal(&mut ahead, b"the same text")).collect();
        assert!(ahead.ready.is_some(), "post-quantum wraps are made ahead");
        for (i, f) in files.iter().enumerate() {
            assert_eq!(crate::decrypt(&ids, f).unwrap(), b"the same text");
            for g in &files[..i] {
                let header = |f: &[u8]| f[..f.windows(4).position(|w| w == b"\n---").unwrap()].to_vec();
                assert_ne!(header(f), header(g), "two files share a header");
            }
        }
    }

    #[test]
    fn a_recipient_that_may_run_or_ask_something_is_never_wrapped_ahead() {
        let key = recipient::generate(Kind::X25519).unwrap();
        let wraps = Arc::new(AtomicUsize::new(0));
        let plugin_like = Counting {
            inner: recipient::parse_recipient(&key.public).unwrap(),
            offline: false,
            wraps: Arc::clone(&wraps),
        };
        let mut ahead = Ahead::new(Arc::new(vec![Box::new(plugin_like) as Box<dyn Recipient>]));
        for n in 1..=5 {
            seal(&mut ahead, b"text");
            assert_eq!(wraps.load(Ordering::SeqCst), n, "one wrap per sealed file, none ahead");
        }
        assert!(ahead.ready.is_none());
    }
}
