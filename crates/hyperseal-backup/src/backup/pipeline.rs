//! Chunks in, packs out, on every core: the walker (the caller's thread) cuts files into
//! chunks, workers hash and compress them, one packer gathers new chunks into packs, and one
//! uploader seals each pack under its own file key and stores it while the packer fills the
//! next. Queues are bounded, so memory stays at a few chunks per worker plus two packs,
//! whatever the file sizes.

use std::collections::HashSet;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex, RwLock};

use hyperseal::recipient::Recipient;

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
}

/// The walker's end of the pipeline.
pub(crate) struct Feed {
    tx: SyncSender<Job>,
    next: usize,
}

impl Feed {
    /// The sequence number the next chunk gets.
    pub(crate) fn next(&self) -> usize {
        self.next
    }

    /// Sends a chunk; returns its sequence number. Fails once the pipeline stopped.
    pub(crate) fn send(&mut self, data: Vec<u8>) -> Result<usize> {
        let seq = self.next;
        self.tx.send(Job { seq, data }).map_err(|_| Error::Interrupted)?;
        self.next += 1;
        Ok(seq)
    }
}

/// Runs `walk` against a pipeline of `threads` workers and a packer; returns what both did.
/// An error of the packer (a failed upload) is the run's error, whatever the walker says.
pub(crate) fn run<T>(
    cfg: &PackerConfig<'_>,
    key: &[u8; 32],
    known: HashSet<ChunkId>,
    threads: usize,
    walk: impl FnOnce(&mut Feed) -> Result<T>,
) -> Result<(T, Packed)> {
    let known = RwLock::new(known);
    let (job_tx, job_rx) = mpsc::sync_channel::<Job>(threads * 2);
    let (done_tx, done_rx) = mpsc::sync_channel::<Done>(threads * 2);
    let job_rx = Arc::new(Mutex::new(job_rx));
    std::thread::scope(|s| {
        for _ in 0..threads {
            let (rx, tx, known) = (job_rx.clone(), done_tx.clone(), &known);
            s.spawn(move || worker(&rx, &tx, key, known));
        }
        // Only the workers hold the queue's receiver: when they are gone, a send fails
        // instead of waiting for ever.
        drop(job_rx);
        drop(done_tx);
        let packer = s.spawn(|| pack(cfg, done_rx, &known));
        let mut feed = Feed { tx: job_tx, next: 0 };
        let walked = walk(&mut feed);
        let sent = feed.next;
        drop(feed);
        let packed = packer.join().expect("the packer does not panic")?;
        let walked = walked?;
        debug_assert_eq!(packed.ids.len(), sent);
        Ok((walked, packed))
    })
}

fn worker(
    rx: &Mutex<Receiver<Job>>,
    tx: &SyncSender<Done>,
    key: &[u8; 32],
    known: &RwLock<HashSet<ChunkId>>,
) {
    loop {
        let job = match rx.lock().expect("no worker panics").recv() {
            Ok(job) => job,
            Err(_) => return,
        };
        let id = ChunkId::of(key, &job.data);
        // A hint only: the packer decides, so a chunk two workers both found new is stored once.
        let seen = known.read().expect("no worker panics").contains(&id);
        let stored =
            (!seen).then(|| zstd::bulk::compress(&job.data, ZSTD_LEVEL).expect("zstd compresses any input"));
        if tx.send(Done { seq: job.seq, id, raw: job.data.len() as u32, stored }).is_err() {
            return;
        }
    }
}

/// A full pack on its way to the uploader.
struct Full {
    id: [u8; 16],
    buf: Vec<u8>,
    entries: Vec<Entry>,
}

/// Gathers new chunks into packs and hands each full one to the uploader. The uploader's error
/// (a failed store, or the test stop) is the packer's.
fn pack(cfg: &PackerConfig<'_>, rx: Receiver<Done>, known: &RwLock<HashSet<ChunkId>>) -> Result<Packed> {
    // A rendezvous: the packer fills one pack while the uploader stores the one before, and
    // waits for it rather than holding a third.
    let (full_tx, full_rx) = mpsc::sync_channel::<Full>(0);
    std::thread::scope(|s| {
        let uploader = s.spawn(|| upload(cfg, full_rx));
        let gathered = gather(cfg.pack_size, rx, known, &full_tx);
        drop(full_tx);
        let mut stored = uploader.join().expect("the uploader does not panic")?;
        let gathered = gathered?;
        stored.ids = gathered.ids;
        stored.chunks_new = gathered.chunks_new;
        stored.chunks_reused = gathered.chunks_reused;
        stored.raw_added = gathered.raw_added;
        Ok(stored)
    })
}

fn gather(
    pack_size: u64,
    rx: Receiver<Done>,
    known: &RwLock<HashSet<ChunkId>>,
    uploader: &SyncSender<Full>,
) -> Result<Packed> {
    let mut out = Packed::default();
    let mut ids: Vec<Option<ChunkId>> = Vec::new();
    let mut full = Full { id: random_id(), buf: Vec::new(), entries: Vec::new() };
    for d in rx {
        if ids.len() <= d.seq {
            ids.resize(d.seq + 1, None);
        }
        ids[d.seq] = Some(d.id);
        let fresh = d.stored.is_some() && known.write().expect("no worker panics").insert(d.id);
        let Some(stored) = d.stored.filter(|_| fresh) else {
            out.chunks_reused += 1;
            continue;
        };
        full.entries.push(Entry {
            id: d.id,
            pack: full.id,
            offset: full.buf.len() as u64,
            stored: stored.len() as u32,
            raw: d.raw,
        });
        full.buf.extend_from_slice(&stored);
        out.chunks_new += 1;
        out.raw_added += d.raw as u64;
        if full.buf.len() as u64 >= pack_size {
            let next =
                Full { id: random_id(), buf: Vec::with_capacity(full.buf.capacity()), entries: Vec::new() };
            // Fails only once the uploader stopped; its error is the one reported.
            uploader.send(std::mem::replace(&mut full, next)).map_err(|_| Error::Interrupted)?;
        }
    }
    if !full.buf.is_empty() {
        uploader.send(full).map_err(|_| Error::Interrupted)?;
    }
    out.ids = ids.into_iter().map(|i| i.expect("every chunk sent came back")).collect();
    Ok(out)
}

/// Stores each pack, then its clear id list: an id list names only a pack that is whole.
fn upload(cfg: &PackerConfig<'_>, rx: Receiver<Full>) -> Result<Packed> {
    let mut out = Packed::default();
    for full in rx {
        let name = format!("data/{}", hex::encode(full.id));
        let sealed = object::seal(cfg.recipients, &full.buf)?;
        cfg.store.put_new(&name, &sealed)?;
        let table = Table { entries: full.entries };
        let bytes = table.encode()?;
        cfg.store.put_new(&format!("{name}.ids"), &bytes)?;
        out.bytes_written += (sealed.len() + bytes.len()) as u64;
        out.entries.extend(table.entries);
        out.packs += 1;
        if cfg.stop_after_packs.is_some_and(|n| out.packs as usize >= n) {
            return Err(Error::Interrupted);
        }
    }
    Ok(out)
}
