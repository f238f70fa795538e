//! Chunks in, packs out, on every core, on the library's executor (`hyperseal::exec`): the
//! walker (the caller's thread) cuts files into chunks and queues them; the executor's helpers
//! hash and compress them; the caller gathers what they finished into packs and stores each
//! full one, sealed under its own file key, while the helpers go on with the queue.
//!
//! The queue holds about a pack's worth of chunks, so the helpers have work while the caller
//! stores a pack; past that the caller hashes and compresses too. So the run finishes on any
//! number of threads, one included, and memory stays at a few packs' worth (the queue, the pack
//! being filled and its sealed copy) whatever the file sizes.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};

use hyperseal::recipient::Recipient;
use zeroize::Zeroizing;

use crate::error::{Error, Result};
use crate::format::table::{Entry, Table};
use crate::keys::{random_id, ChunkId};
use crate::object;
use crate::store::Store;

/// zstd's default level: restic's "auto" is the same trade of speed for size.
const ZSTD_LEVEL: i32 = 3;

struct Job {
    seq: usize,
    data: Vec<u8>,
}

struct Done {
    seq: usize,
    id: ChunkId,
    raw: u32,
    /// The compressed chunk, or `None` where the id was already known.
    stored: Option<Vec<u8>>,
}

/// What the packer did.
#[derive(Default)]
pub(crate) struct Packed {
    /// Chunk ids by sequence number (the order the walker sent them).
    pub ids: Vec<ChunkId>,
    /// Where each new chunk went.
    pub entries: Vec<Entry>,
    pub chunks_new: u64,
    pub chunks_reused: u64,
    pub raw_added: u64,
    pub bytes_written: u64,
    pub packs: u64,
}

/// Settings the packer needs.
pub(crate) struct PackerConfig<'a> {
    pub store: &'a dyn Store,
    pub recipients: &'a [Box<dyn Recipient>],
    pub pack_size: u64,
    /// Stop (as if killed) once this many packs are stored.
    pub stop_after_packs: Option<usize>,
    /// Called after each pack is stored (the run refreshes its mark there).
    pub after_pack: &'a (dyn Fn() -> Result<()> + Sync),
}

/// What the helpers and the caller share.
struct Shared {
    key: Zeroizing<[u8; 32]>,
    known: RwLock<HashSet<ChunkId>>,
    q: Mutex<Queues>,
    /// Signalled when a chunk is queued and when the queue closes.
    ready: Condvar,
}

#[derive(Default)]
struct Queues {
    todo: VecDeque<Job>,
    /// The raw bytes in `todo`.
    queued: u64,
    /// Hashed and compressed, for the caller to gather.
    done: Vec<Done>,
    closed: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queues> {
        // Work runs outside the lock; recover anyway rather than cascade.
        self.q.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hashes and compresses one queued chunk; with `block`, waits for one until the queue
    /// closes. False when there was none to take.
    fn work_one(&self, block: bool) -> bool {
        let job = {
            let mut q = self.lock();
            loop {
                if let Some(job) = q.todo.pop_front() {
                    q.queued -= job.data.len() as u64;
                    break job;
                }
                if q.closed || !block {
                    return false;
                }
                q = self.ready.wait(q).unwrap_or_else(|p| p.into_inner());
            }
        };
        let id = ChunkId::of(&self.key, &job.data);
        // A hint only: the caller decides, so a chunk two threads both found new is stored once.
        let seen = self.known.read().unwrap_or_else(|p| p.into_inner()).contains(&id);
        let stored =
            (!seen).then(|| zstd::bulk::compress(&job.data, ZSTD_LEVEL).expect("zstd compresses any input"));
        let done = Done { seq: job.seq, id, raw: job.data.len() as u32, stored };
        self.lock().done.push(done);
        true
    }

    /// No more chunks: the helpers finish the queue and leave. With `drop_queued`, what is
    /// queued is dropped first (the run failed).
    fn close(&self, drop_queued: bool) {
        let mut q = self.lock();
        if drop_queued {
            q.todo.clear();
            q.queued = 0;
        }
        q.closed = true;
        drop(q);
        self.ready.notify_all();
    }
}

/// Closes the queue however the caller leaves (a panic in the walker included), so that no
/// helper waits for a chunk that will never come.
struct CloseOnDrop(Arc<Shared>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close(true);
    }
}

/// The walker's end of the pipeline.
pub(crate) struct Feed<'c> {
    shared: Arc<Shared>,
    packer: Packer<'c>,
    next: usize,
    /// The first failure to store a pack: every later send fails, and it is the run's error.
    failed: Option<Error>,
}

impl Feed<'_> {
    /// The sequence number the next chunk gets.
    pub(crate) fn next(&self) -> usize {
        self.next
    }

    /// Queues a chunk, gathers what is done and stores a pack when one is full; returns the
    /// chunk's sequence number. Fails once a pack could not be stored.
    pub(crate) fn send(&mut self, data: Vec<u8>) -> Result<usize> {
        if self.failed.is_some() {
            return Err(Error::Interrupted);
        }
        let seq = self.next;
        {
            let mut q = self.shared.lock();
            q.queued += data.len() as u64;
            q.todo.push_back(Job { seq, data });
        }
        self.shared.ready.notify_one();
        self.next += 1;
        // Past a pack's worth queued, the caller works too (all of it where no helper came).
        loop {
            let over = self.shared.lock().queued > self.packer.cfg.pack_size;
            if !over || !self.shared.work_one(false) {
                break;
            }
        }
        self.gather().map(|()| seq)
    }

    fn gather(&mut self) -> Result<()> {
        let done = std::mem::take(&mut self.shared.lock().done);
        for d in done {
            if let Err(e) = self.packer.add(d, &self.shared.known) {
                self.failed = Some(e);
                return Err(Error::Interrupted);
            }
        }
        Ok(())
    }
}

/// Runs `walk` with the executor's helpers hashing and compressing what it sends; returns what
/// the walk and the packer did. A failure to store a pack is the run's error, whatever the walk
/// says.
pub(crate) fn run<'c, T>(
    cfg: &'c PackerConfig<'c>,
    key: &[u8; 32],
    known: HashSet<ChunkId>,
    threads: usize,
    walk: impl FnOnce(&mut Feed<'c>) -> Result<T>,
) -> Result<(T, Packed)> {
    let shared = Arc::new(Shared {
        key: Zeroizing::new(*key),
        known: RwLock::new(known),
        q: Mutex::default(),
        ready: Condvar::new(),
    });
    let helpers = {
        let s = shared.clone();
        Arc::new(move || while s.work_one(true) {})
    };
    let job = hyperseal::exec::start(threads, helpers);
    // Dropped before `job`: the queue is closed before the job waits for its helpers.
    let close = CloseOnDrop(shared.clone());
    let mut feed = Feed { shared: shared.clone(), packer: Packer::new(cfg), next: 0, failed: None };
    let walked = walk(&mut feed);
    shared.close(walked.is_err() || feed.failed.is_some());
    // The caller's share: whatever no helper took; then the helpers inside have returned.
    job.join();
    drop(close);
    if let Some(e) = feed.failed.take() {
        return Err(e);
    }
    let walked = walked?;
    if feed.gather().is_err() {
        return Err(feed.failed.take().expect("a failed gather keeps its error"));
    }
    let sent = feed.next;
    let packed = feed.packer.finish()?;
    debug_assert_eq!(packed.ids.len(), sent);
    Ok((walked, packed))
}

/// A pack being filled.
struct Full {
    id: [u8; 16],
    buf: Vec<u8>,
    entries: Vec<Entry>,
}

impl Full {
    fn new(capacity: usize) -> Full {
        Full { id: random_id(), buf: Vec::with_capacity(capacity), entries: Vec::new() }
    }
}

/// Gathers new chunks into packs and stores each full one.
struct Packer<'c> {
    cfg: &'c PackerConfig<'c>,
    /// Chunk ids by sequence number, as they come back (in any order).
    ids: Vec<Option<ChunkId>>,
    full: Full,
    out: Packed,
}

impl<'c> Packer<'c> {
    fn new(cfg: &'c PackerConfig<'c>) -> Self {
        Packer { cfg, ids: Vec::new(), full: Full::new(0), out: Packed::default() }
    }

    fn add(&mut self, d: Done, known: &RwLock<HashSet<ChunkId>>) -> Result<()> {
        if self.ids.len() <= d.seq {
            self.ids.resize(d.seq + 1, None);
        }
        self.ids[d.seq] = Some(d.id);
        let fresh = d.stored.is_some() && known.write().unwrap_or_else(|p| p.into_inner()).insert(d.id);
        let Some(stored) = d.stored.filter(|_| fresh) else {
            self.out.chunks_reused += 1;
            return Ok(());
        };
        let full = &mut self.full;
        full.entries.push(Entry {
            id: d.id,
            pack: full.id,
            offset: full.buf.len() as u64,
            stored: stored.len() as u32,
            raw: d.raw,
        });
        full.buf.extend_from_slice(&stored);
        self.out.chunks_new += 1;
        self.out.raw_added += d.raw as u64;
        if full.buf.len() as u64 >= self.cfg.pack_size {
            let next = Full::new(full.buf.capacity());
            let full = std::mem::replace(&mut self.full, next);
            self.store(full)?;
        }
        Ok(())
    }

    /// Stores a pack, then its clear id list: an id list names only a pack that is whole.
    fn store(&mut self, full: Full) -> Result<()> {
        let (cfg, out) = (self.cfg, &mut self.out);
        let name = format!("data/{}", hex::encode(full.id));
        let sealed = object::seal(cfg.recipients, &full.buf)?;
        cfg.store.put_new(&name, &sealed)?;
        let table = Table { entries: full.entries };
        let bytes = table.encode()?;
        cfg.store.put_new(&format!("{name}.ids"), &bytes)?;
        out.bytes_written += (sealed.len() + bytes.len()) as u64;
        out.entries.extend(table.entries);
        out.packs += 1;
        (cfg.after_pack)()?;
        if cfg.stop_after_packs.is_some_and(|n| out.packs as usize >= n) {
            return Err(Error::Interrupted);
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Packed> {
        if !self.full.buf.is_empty() {
            let full = std::mem::replace(&mut self.full, Full::new(0));
            self.store(full)?;
        }
        let mut out = self.out;
        out.ids = self.ids.into_iter().map(|i| i.expect("every chunk sent came back")).collect();
        Ok(out)
    }
}
