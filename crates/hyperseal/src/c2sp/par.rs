//! Chunks on every core. Two shapes:
//!
//! - slices (`seal_chunks`/`open_chunks`): a run of full chunks split into one contiguous range
//!   per thread, for the one-shots, the push API and the reader's read-ahead;
//! - streams (`stream`): a reader thread → `threads` workers → this thread writing in order, with
//!   `threads + 2` batches in flight, so memory stays constant whatever the input size.
//!
//! Threads are scoped (`std::thread::scope`): spawning one costs tens of microseconds, so a run
//! is split only when each thread gets at least [`MIN_PER_THREAD`] chunks.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::sync::mpsc::sync_channel;
use std::sync::Mutex;
use std::thread;

use super::scheme::{ChunkCipher, CHUNK, TAG, WIRE_CHUNK};
use crate::Error;

/// Chunks per thread below which a split costs more than it saves (16 × 16 KiB = 256 KiB,
/// about 60 µs of AES-GCM on one core, against ~20 µs to spawn and join a thread).
const MIN_PER_THREAD: usize = 16;
/// Chunks per pipeline batch (1 MiB of plaintext).
const BATCH: usize = 64;

/// A failure at a chunk: its index and the error. Chunks before it were processed.
pub(crate) type Failed = (u64, Error);

/// Seals `pt` (a whole number of full chunks, the first with index `first`) into `out`.
pub(crate) fn seal_chunks(
    c: &ChunkCipher,
    first: u64,
    pt: &[u8],
    out: &mut [u8],
    threads: usize,
) -> Result<(), Failed> {
    let n = pt.len() / CHUNK;
    debug_assert!(pt.len() == n * CHUNK && out.len() == n * WIRE_CHUNK);
    split(n, threads, out, WIRE_CHUNK, &|lo, out: &mut [u8]| {
        for (i, (p, o)) in pt[lo * CHUNK..].chunks(CHUNK).zip(out.chunks_mut(WIRE_CHUNK)).enumerate() {
            let index = first + (lo + i) as u64;
            c.seal(index, p, o).map_err(|e| (index, e))?;
        }
        Ok(())
    })
}

/// Opens `ct` (a whole number of full, non-final wire chunks) into `out`. On failure, returns the
/// lowest failing index; every chunk before it authenticated and its plaintext is in `out`.
pub(crate) fn open_chunks(
    c: &ChunkCipher,
    first: u64,
    ct: &[u8],
    out: &mut [u8],
    threads: usize,
) -> Result<(), Failed> {
    let n = ct.len() / WIRE_CHUNK;
    debug_assert!(ct.len() == n * WIRE_CHUNK && out.len() == n * CHUNK);
    split(n, threads, out, CHUNK, &|lo, out: &mut [u8]| {
        for (i, (w, o)) in ct[lo * WIRE_CHUNK..].chunks(WIRE_CHUNK).zip(out.chunks_mut(CHUNK)).enumerate() {
            let index = first + (lo + i) as u64;
            c.open(index, false, w, o).map_err(|e| (index, e))?;
        }
        Ok(())
    })
}

type Job<'a> = dyn Fn(usize, &mut [u8]) -> Result<(), Failed> + Sync + 'a;

/// Runs `job(first_chunk, out_range)` over `n` chunks split into contiguous ranges, one
/// per thread (the caller's thread takes the first), and returns the lowest failure.
fn split(n: usize, threads: usize, out: &mut [u8], out_stride: usize, job: &Job) -> Result<(), Failed> {
    let parts = threads.min(n / MIN_PER_THREAD).max(1);
    if parts == 1 {
        return job(0, out);
    }
    let per = n.div_ceil(parts);
    let mut pieces = out.chunks_mut(per * out_stride).enumerate();
    let (_, head) = pieces.next().expect("n > 0");
    let results: Vec<Result<(), Failed>> = thread::scope(|s| {
        let handles: Vec<_> = pieces.map(|(k, o)| s.spawn(move || job(k * per, o))).collect();
        let mut r = vec![job(0, head)];
        r.extend(handles.into_iter().map(|h| h.join().expect("c2sp worker panicked")));
        r
    });
    results.into_iter().filter_map(Result::err).min_by_key(|(i, _)| *i).map_or(Ok(()), Err)
}

/// Which way the pipeline runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dir {
    Seal,
    Open,
}

/// One batch: input bytes read, output produced, and where it sits in the message.
struct Batch {
    input: Vec<u8>,
    filled: usize,
    output: Vec<u8>,
    produced: usize,
    first: u64,
    last: bool,
    failed: Option<Error>,
}

impl Batch {
    fn new(dir: Dir) -> Batch {
        let (i, o) = match dir {
            Dir::Seal => (BATCH * CHUNK, BATCH * WIRE_CHUNK),
            Dir::Open => (BATCH * WIRE_CHUNK, BATCH * CHUNK),
        };
        Batch {
            input: vec![0; i],
            filled: 0,
            output: vec![0; o],
            produced: 0,
            first: 0,
            last: false,
            failed: None,
        }
    }

    /// Reads the next batch; a short read means the input ended, so this batch holds the final
    /// chunk (a full batch may be followed by an empty one that does).
    fn fill(&mut self, r: &mut (dyn Read + Send), first: u64) -> io::Result<()> {
        self.filled = read_full(r, &mut self.input)?;
        (self.first, self.last, self.produced, self.failed) =
            (first, self.filled < self.input.len(), 0, None);
        Ok(())
    }

    fn chunks(&self, dir: Dir) -> u64 {
        (self.filled / if dir == Dir::Seal { CHUNK } else { WIRE_CHUNK }) as u64
    }

    /// Seals or opens every chunk; records the first failure and keeps what came before it.
    fn process(&mut self, dir: Dir, c: &ChunkCipher, threads: usize) {
        let n = self.chunks(dir) as usize;
        let (inner, outer) = match dir {
            Dir::Seal => (CHUNK, WIRE_CHUNK),
            Dir::Open => (WIRE_CHUNK, CHUNK),
        };
        let (input, output) = (&self.input[..n * inner], &mut self.output[..n * outer]);
        let r = match dir {
            Dir::Seal => seal_chunks(c, self.first, input, output, threads),
            Dir::Open => open_chunks(c, self.first, input, output, threads),
        };
        if let Err((bad, e)) = r {
            self.produced = (bad - self.first) as usize * outer;
            self.failed = Some(e);
            return;
        }
        self.produced = n * outer;
        if self.last {
            let index = self.first + n as u64;
            let tail = &self.input[n * inner..self.filled];
            let out = &mut self.output[n * outer..];
            let r = match dir {
                Dir::Seal => c.seal(index, tail, &mut out[..tail.len() + TAG]).map(|()| tail.len() + TAG),
                // `open` turns a missing or sub-tag final piece into a truncation error.
                Dir::Open => c.open(index, true, tail, out).map(|()| tail.len().saturating_sub(TAG)),
            };
            match r {
                Ok(k) => self.produced += k,
                Err(e) => self.failed = Some(e),
            }
        }
    }
}

/// Seals or opens everything `input` yields onto `output`; returns the plaintext length.
pub(crate) fn stream(
    dir: Dir,
    c: &ChunkCipher,
    input: &mut (dyn Read + Send),
    output: &mut (dyn Write + Send),
    threads: usize,
) -> Result<u64, Error> {
    let threads = threads.max(1);
    let mut batch = Batch::new(dir);
    batch.fill(input, 0)?;
    let mut plain = 0u64;

    // Small inputs and one thread: everything on this thread (a single batch is still split
    // over the threads when it is large enough).
    if batch.last || threads == 1 {
        loop {
            batch.process(dir, c, threads);
            if deliver(dir, &mut batch, output, &mut plain)? {
                return Ok(plain);
            }
            let next = batch.first + batch.chunks(dir);
            batch.fill(input, next)?;
        }
    }

    let in_flight = threads + 2;
    let (free_tx, free_rx) = sync_channel::<Batch>(in_flight);
    let (work_tx, work_rx) = sync_channel::<(u64, Batch)>(in_flight);
    let (done_tx, done_rx) = sync_channel::<(u64, Batch)>(in_flight);
    for _ in 1..in_flight {
        free_tx.send(Batch::new(dir)).expect("channel has room");
    }
    let mut next_index = batch.first + batch.chunks(dir);
    work_tx.send((0, batch)).expect("channel has room");
    // A worker that can no longer deliver drops the queue, so a reader blocked on a full work
    // queue wakes up instead of waiting forever.
    let work_rx = Mutex::new(Some(work_rx));

    thread::scope(|s| {
        let reader = s.spawn(move || -> Result<(), Error> {
            let mut seq = 1;
            while let Ok(mut b) = free_rx.recv() {
                b.fill(input, next_index)?;
                next_index += b.chunks(dir);
                let last = b.last;
                if work_tx.send((seq, b)).is_err() || last {
                    break;
                }
                seq += 1;
            }
            Ok(())
        });
        for _ in 0..threads {
            let (work_rx, done_tx) = (&work_rx, done_tx.clone());
            s.spawn(move || loop {
                let next = match work_rx.lock().expect("no worker panics holding the lock").as_ref() {
                    Some(rx) => rx.recv(),
                    None => break,
                };
                let Ok((seq, mut b)) = next else { break };
                b.process(dir, c, 1);
                if done_tx.send((seq, b)).is_err() {
                    *work_rx.lock().expect("no worker panics holding the lock") = None;
                    break;
                }
            });
        }
        drop(done_tx);

        let mut pending: BTreeMap<u64, Batch> = BTreeMap::new();
        let mut next = 0u64;
        let written = (|| -> Result<u64, Error> {
            for (seq, b) in done_rx.iter() {
                pending.insert(seq, b);
                while let Some(mut b) = pending.remove(&next) {
                    if deliver(dir, &mut b, output, &mut plain)? {
                        return Ok(plain);
                    }
                    next += 1;
                    let _ = free_tx.send(b);
                }
            }
            // The workers stopped before the last batch: the reader failed and says why.
            Err(Error::Io(io::Error::other("c2sp pipeline stopped")))
        })();
        // Unblock everyone: dropping the free list stops the reader, which stops the workers.
        drop(free_tx);
        drop(done_rx);
        drop(pending);
        let read = reader.join().expect("c2sp reader thread panicked");
        match (read, written) {
            (Err(e), Err(_)) => Err(e),
            (_, r) => r,
        }
    })
}

/// Writes a processed batch; `Ok(true)` after the last one, the batch's error after the good
/// chunks before it.
fn deliver(dir: Dir, b: &mut Batch, output: &mut (dyn Write + Send), plain: &mut u64) -> Result<bool, Error> {
    output.write_all(&b.output[..b.produced])?;
    *plain += match dir {
        Dir::Seal => b.filled as u64,
        Dir::Open => b.produced as u64,
    };
    match b.failed.take() {
        Some(e) => Err(e),
        None => Ok(b.last),
    }
}

/// The stream engine's: reads until `buf` is full or the input ends.
pub(crate) use crate::stream::read_full;
