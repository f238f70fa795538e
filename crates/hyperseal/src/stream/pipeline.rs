//! The multi-core engine: a reader thread → worker threads, each sealing or opening whole
//! batches → an ordered writer, with `threads + 2` batches in flight, so memory stays constant
//! whatever the file size and I/O overlaps with crypto.
//!
//! Small inputs never pay for threads: the first batch is read on the caller's thread, and if it
//! is also the last one (anything up to one batch, 2 MiB at the default chunk size) it is
//! processed right there — split over the threads only when it holds more than one chunk.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::sync::mpsc::sync_channel;
use std::sync::Mutex;
use std::thread;

use super::batch::{Batch, Dir, Filler, Layout};
use super::ChunkCipher;
use crate::Error;

/// Called with the number of input bytes processed so far.
pub type Progress<'a> = &'a (dyn Fn(u64) + Sync);

/// Encrypts all of `input` as a payload onto `output`; returns the plaintext length.
pub fn encrypt_pipeline(
    cipher: &ChunkCipher,
    input: &mut (dyn Read + Send),
    output: &mut (dyn Write + Send),
    threads: usize,
    progress: Option<Progress>,
) -> Result<u64, Error> {
    run(Dir::Seal, cipher, input, output, threads, progress)
}

/// Decrypts a payload from `input` onto `output`. Each chunk's plaintext is written only after
/// that chunk authenticates; on failure, the error names the chunk and nothing after it is
/// written. Returns the plaintext length.
pub fn decrypt_pipeline(
    cipher: &ChunkCipher,
    input: &mut (dyn Read + Send),
    output: &mut (dyn Write + Send),
    threads: usize,
    progress: Option<Progress>,
) -> Result<u64, Error> {
    run(Dir::Open, cipher, input, output, threads, progress)
}

fn run(
    dir: Dir,
    cipher: &ChunkCipher,
    input: &mut (dyn Read + Send),
    output: &mut (dyn Write + Send),
    threads: usize,
    progress: Option<Progress>,
) -> Result<u64, Error> {
    let threads = threads.max(1);
    let layout = Layout::new(dir, cipher.chunk_size(), threads);
    let mut filler = Filler::starting_at(0);
    let mut batch = Batch::new(&layout);
    filler.fill(input, &mut batch, &layout)?;
    let report = |done: u64| {
        if let Some(p) = progress {
            p(done)
        }
    };

    // Sequential path: one thread, or everything fits in the first batch (its chunks are still
    // split over the threads when there are several).
    if batch.last || threads == 1 {
        let (mut done, mut plain) = (0, 0);
        loop {
            batch.process(cipher, &layout, threads);
            let (i, o) = batch.write_out(&layout, output)?;
            (done, plain) = (done + i, plain + o);
            report(done);
            if let Some((_, e)) = batch.failed.take() {
                return Err(e);
            }
            if batch.last {
                return Ok(plain);
            }
            filler.fill(input, &mut batch, &layout)?;
        }
    }

    // Threaded path: reader → `threads` workers, each sealing or opening whole batches → the
    // writer (this thread), which restores the order. Batches carry their sequence number.
    let in_flight = threads + 2;
    let (free_tx, free_rx) = sync_channel::<Batch>(in_flight);
    let (work_tx, work_rx) = sync_channel::<(u64, Batch)>(in_flight);
    let (done_tx, done_rx) = sync_channel::<(u64, Batch)>(in_flight);
    for _ in 1..in_flight {
        free_tx.send(Batch::new(&layout)).expect("channel has room");
    }
    work_tx.send((0, batch)).expect("channel has room");
    // Shared by the workers; a worker that can no longer deliver drops it, so a reader blocked on
    // a full work queue wakes up with an error instead of waiting forever.
    let work_rx = Mutex::new(Some(work_rx));

    thread::scope(|s| {
        let reader = s.spawn(move || -> Result<(), Error> {
            let mut seq = 1;
            while let Ok(mut b) = free_rx.recv() {
                filler.fill(input, &mut b, &layout)?;
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
                b.process(cipher, &layout, 1);
                if done_tx.send((seq, b)).is_err() {
                    *work_rx.lock().expect("no worker panics holding the lock") = None;
                    break;
                }
            });
        }
        drop(done_tx);

        let mut pending: BTreeMap<u64, Batch> = BTreeMap::new();
        let (mut next, mut done, mut plain) = (0u64, 0u64, 0u64);
        let written = (|| -> Result<u64, Error> {
            for (seq, b) in done_rx.iter() {
                pending.insert(seq, b);
                while let Some(mut b) = pending.remove(&next) {
                    let (i, o) = b.write_out(&layout, output)?;
                    (done, plain) = (done + i, plain + o);
                    report(done);
                    if let Some((_, e)) = b.failed.take() {
                        return Err(e);
                    }
                    if b.last {
                        return Ok(plain);
                    }
                    next += 1;
                    let _ = free_tx.send(b);
                }
            }
            // The workers stopped before the last batch: the reader failed, and says why.
            Err(Error::Io(std::io::Error::other("pipeline stopped")))
        })();
        // Unblock everyone: dropping the free list stops the reader, which stops the workers.
        drop(free_tx);
        drop(done_rx);
        drop(pending);
        let read = reader.join().expect("reader thread panicked");
        match (read, written) {
            (Err(e), Err(_)) => Err(e),
            (_, r) => r,
        }
    })
}
