//! Encryptors made ahead of the files that need them. Sealing a file starts with a fresh file
//! key wrapped for every recipient (for a post-quantum recipient an ML-KEM-768 encapsulation
//! and two X25519 operations), and git waits for each file's answer before it sends the next:
//! on a `git add` of thousands of small files those wraps are most of the filter's own work.
//! Once a recipients file has sealed one file, the next few encryptors for it are made while
//! git hashes, compresses and writes, in one of two ways:
//!
//! - **Between requests**, on the filter's own thread, where the frontend's input can tell
//!   whether git's next request has arrived ([`super::process::Input`]): [`Ahead::prepare`]
//!   makes one at a time while it has not. The thread never sleeps while git works, so git's
//!   next request wakes nobody, and on two cores nothing competes with git for the second one.
//! - **On the library's engine**, where it cannot tell (the input blocks): one batch at a time
//!   is offered to the executor's helpers as a job ([`hyperseal::exec::start`]), taken by a
//!   helper that is free and never waited for; the next batch is offered when this one is
//!   taken. No thread of this crate's own, and a helper is never held between batches, so a
//!   large file's sealing keeps every core.
//!
//! Nothing about the files changes: each encryptor is [`Encryptor::with_recipients`], its own
//! fresh file key, salt and header, consumed by one file (`wrap_output` takes it by value) or
//! dropped unused when the filter ends. Only for recipients that wrap offline
//! ([`Recipient::wraps_offline`]): a plugin or a security key is never run, and nobody is asked
//! anything, for a file that may never be sealed.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use hyperseal::exec::{self, Started};
use hyperseal::recipient::Recipient;
use hyperseal::{Encryptor, Error, Options};

/// Encryptors made by one job on the engine. Each job wakes a helper, and on a virtual machine a
/// wake-up of another core costs microseconds of this thread's time: one per this many files,
/// not one per file.
const BATCH: usize = 8;

/// Most encryptors made between requests and not yet used: enough to absorb a burst of small
/// files, few enough that a filter that ends throws little work away.
const PREPARED: usize = 8;

/// One batch of encryptors, once made.
type Batch = Option<Vec<Result<Encryptor, Error>>>;

/// The encryptors of one recipients file.
pub(crate) struct Ahead {
    recipients: Arc<Vec<Box<dyn Recipient>>>,
    /// Made on the engine (else by [`Self::prepare`]).
    on_thread: bool,
    /// Every recipient wraps offline: only then is anything made ahead.
    offline: bool,
    /// A file has been sealed with these recipients: a `git status` that seals nothing makes
    /// nothing ahead.
    used: bool,
    /// The batch the engine's job is making, once offered: taken from the slot when it is
    /// full. Dropping the job waits only for a helper inside it (one batch at most).
    job: Option<(Started, Arc<Mutex<Batch>>)>,
    /// Made ahead and not yet used, in order: the batch taken last from the engine, or those
    /// made by [`Self::prepare`]. A filter that ends throws away at most these and one batch.
    taken: VecDeque<Result<Encryptor, Error>>,
}

impl Ahead {
    pub(crate) fn new(recipients: Arc<Vec<Box<dyn Recipient>>>, on_thread: bool) -> Self {
        let offline = recipients.iter().all(|r| r.wraps_offline());
        Ahead { recipients, on_thread, offline, used: false, job: None, taken: VecDeque::new() }
    }

    /// An encryptor for the next file: one made ahead, else one made now. Never a wait for the
    /// engine: when it has none ready (it shares two cores with git and this thread), making one
    /// here costs what it always did, and waiting would add a wake-up to it (measured: half the
    /// runs of a 2,000-file `git add` then took 1.3× as long as with no thread at all).
    pub(crate) fn next(&mut self) -> Result<Encryptor, Error> {
        self.used = true;
        if let Some(made) = self.taken.pop_front() {
            return made;
        }
        let done = match &self.job {
            // Being made (locked) counts as not ready: never a wait.
            Some((_, slot)) => slot.try_lock().ok().and_then(|mut made| made.take()),
            None => None,
        };
        if let Some(batch) = done {
            self.taken.extend(batch);
            self.offer();
            if let Some(made) = self.taken.pop_front() {
                return made;
            }
        } else if self.job.is_none() && self.on_thread && self.offline {
            self.offer();
        }
        self.make()
    }

    /// Makes one encryptor for a later file, between git's requests; `false` when there is
    /// nothing to make (none is made on the engine instead, none is needed yet, or enough wait).
    pub(crate) fn prepare(&mut self) -> bool {
        if self.on_thread || !self.offline || !self.used || self.taken.len() >= PREPARED {
            return false;
        }
        let made = self.make();
        self.taken.push_back(made);
        true
    }

    fn make(&self) -> Result<Encryptor, Error> {
        Encryptor::with_recipients(&self.recipients, Options::age())
    }

    /// Offers the next batch to the engine's helpers (one helper: the job is one batch). The
    /// job before it, taken and done, ends here without a wait.
    fn offer(&mut self) {
        self.job = None;
        let slot: Arc<Mutex<Batch>> = Arc::default();
        let (recipients, filled) = (Arc::clone(&self.recipients), Arc::clone(&slot));
        let body = move || {
            let mut into = filled.lock().unwrap_or_else(|p| p.into_inner());
            // Any number of copies may run (the job's contract): only the first makes the batch.
            if into.is_none() {
                *into = Some(
                    (0..BATCH).map(|_| Encryptor::with_recipients(&recipients, Options::age())).collect(),
                );
            }
        };
        self.job = Some((exec::start(2, Arc::new(body)), slot));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use hyperseal::format::Stanza;
    use hyperseal::recipient::{self, Kind, Labels};
    use hyperseal::FileKey;

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
        let mut ahead = Ahead::new(Arc::new(vec![recipient::parse_recipient(&key.public).unwrap()]), true);
        let files: Vec<Vec<u8>> = (0..8).map(|_| seal(&mut ahead, b"the same text")).collect();
        assert!(ahead.job.is_some(), "post-quantum wraps are made ahead");
        for (i, f) in files.iter().enumerate() {
            assert_eq!(hyperseal::decrypt(&ids, f).unwrap(), b"the same text");
            for g in &files[..i] {
                let header = |f: &[u8]| f[..f.windows(4).position(|w| w == b"\n---").unwrap()].to_vec();
                assert_ne!(header(f), header(g), "two files share a header");
            }
        }
    }

    #[test]
    fn a_recipient_that_may_run_or_ask_something_is_never_wrapped_ahead() {
        let key = recipient::generate(Kind::X25519).unwrap();
        for on_thread in [true, false] {
            let wraps = Arc::new(AtomicUsize::new(0));
            let plugin_like = Counting {
                inner: recipient::parse_recipient(&key.public).unwrap(),
                offline: false,
                wraps: Arc::clone(&wraps),
            };
            let mut ahead =
                Ahead::new(Arc::new(vec![Box::new(plugin_like) as Box<dyn Recipient>]), on_thread);
            for n in 1..=5 {
                seal(&mut ahead, b"text");
                assert!(!ahead.prepare(), "nothing is prepared for it");
                assert_eq!(wraps.load(Ordering::SeqCst), n, "one wrap per sealed file, none ahead");
            }
            assert!(ahead.job.is_none());
        }
    }

    /// An `Ahead` over one X25519 recipient that wraps offline and counts its wraps, and the
    /// identity that opens its files.
    fn counted(on_thread: bool) -> (Ahead, Vec<Box<dyn hyperseal::Identity>>, Arc<AtomicUsize>) {
        let key = recipient::generate(Kind::X25519).unwrap();
        let ids = recipient::parse_identities(&key.secret).unwrap();
        let wraps = Arc::new(AtomicUsize::new(0));
        let counting = Counting {
            inner: recipient::parse_recipient(&key.public).unwrap(),
            offline: true,
            wraps: Arc::clone(&wraps),
        };
        (Ahead::new(Arc::new(vec![Box::new(counting) as Box<dyn Recipient>]), on_thread), ids, wraps)
    }

    #[test]
    fn between_requests_a_few_are_made_once_a_file_was_sealed_and_each_is_used_once() {
        let (mut ahead, ids, wraps) = counted(false);
        assert!(!ahead.prepare(), "nothing before the first file is sealed");
        let first = seal(&mut ahead, b"the same text");
        let made = std::iter::from_fn(|| ahead.prepare().then_some(())).count();
        assert_eq!(made, PREPARED);
        assert_eq!(wraps.load(Ordering::SeqCst), 1 + PREPARED);
        let mut files = vec![first];
        files.extend((0..PREPARED).map(|_| seal(&mut ahead, b"the same text")));
        assert_eq!(wraps.load(Ordering::SeqCst), 1 + PREPARED, "the files used those made ahead");
        files.push(seal(&mut ahead, b"the same text"));
        assert_eq!(wraps.load(Ordering::SeqCst), 2 + PREPARED, "none left: made now");
        assert!(ahead.job.is_none(), "no thread");
        let header = |f: &[u8]| f[..f.windows(4).position(|w| w == b"\n---").unwrap()].to_vec();
        for (i, f) in files.iter().enumerate() {
            assert_eq!(hyperseal::decrypt(&ids, f).unwrap(), b"the same text");
            assert!(files[..i].iter().all(|g| header(f) != header(g)), "two files share a header");
        }
    }

    #[test]
    fn on_the_engine_a_batch_is_made_by_a_helper_and_used_by_the_next_files() {
        if hyperseal::available_threads() < 2 {
            return eprintln!("note: one core, no helper to make a batch on");
        }
        let (mut ahead, ids, wraps) = counted(true);
        let first = seal(&mut ahead, b"text");
        assert!(ahead.job.is_some(), "the first sealed file offers a batch to the engine");
        // This thread makes nothing while it waits: only a helper can bring the count up.
        let mut spins = 0u64;
        while wraps.load(Ordering::SeqCst) < 1 + BATCH {
            assert!(spins < 1 << 32, "no helper took the batch");
            spins += 1;
            std::thread::yield_now();
        }
        while ahead.job.as_ref().is_some_and(|(_, slot)| slot.try_lock().map_or(true, |b| b.is_none())) {
            std::thread::yield_now();
        }
        let files: Vec<Vec<u8>> = (0..BATCH).map(|_| seal(&mut ahead, b"text")).collect();
        assert!(ahead.taken.is_empty(), "the batch was used, one encryptor per file");
        for f in std::iter::once(&first).chain(&files) {
            assert_eq!(hyperseal::decrypt(&ids, f).unwrap(), b"text");
        }
        drop(ahead); // waits for a helper inside the next batch's job, at most one batch
    }
}
