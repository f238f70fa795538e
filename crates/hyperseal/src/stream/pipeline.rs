//! The multi-core engine: a reader thread → the crypto stage (a rayon pool over the chunks of a
//! batch) → an ordered writer thread, with a fixed number of batches in flight, so memory stays
//! constant whatever the file size and I/O overlaps with crypto.
//!
//! Small inputs never pay for threads: the first batch is read on the caller's thread, and if it
//! is also the last one (anything up to one batch, 2 MiB at the default chunk size) it is
//! processed right there — in parallel only when it holds more than one chunk.

use std::io::{Read, Write};
use std::sync::mpsc::sync_channel;
use std::thread;

use super::batch::{Batch, Dir, Filler, Layout};
use super::ChunkCipher;
use crate::Error;

/// Called with the number of input bytes processed so far.
pub type Progress<'a> = &'a (dyn Fn(u64) + Sync);

/// Batches in flight in the threaded path: one being read, one in crypto, one being written.
const IN_FLIGHT: usize = 3;

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

pub(crate) fn build_pool(threads: usize) -> Option<rayon::ThreadPool> {
    (threads > 1).then(|| rayon::ThreadPoolBuilder::new().num_threads(threads).build().ok()).flatten()
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

    if batch.last || threads == 1 {
        let pool = if batch.lens.len() > 1 { build_pool(threads) } else { None };
        let mut done = 0;
        loop {
            batch.process(cipher, &layout, pool.as_ref());
            done += batch.write_out(&layout, output)?;
            report(done);
            if let Some((_, e)) = batch.failed.take() {
                return Err(e);
            }
            if batch.last {
                return Ok(done);
            }
            filler.fill(input, &mut batch, &layout)?;
        }
    }

    let pool = build_pool(threads);
    let (free_tx, free_rx) = sync_channel::<Batch>(IN_FLIGHT);
    let (work_tx, work_rx) = sync_channel::<Batch>(IN_FLIGHT);
    let (done_tx, done_rx) = sync_channel::<Batch>(IN_FLIGHT);
    for _ in 1..IN_FLIGHT {
        free_tx.send(Batch::new(&layout)).expect("channel has room");
    }
    work_tx.send(batch).expect("channel has room");

    thread::scope(|s| {
        let reader = s.spawn(move || -> Result<(), Error> {
            while let Ok(mut b) = free_rx.recv() {
                filler.fill(input, &mut b, &layout)?;
                let last = b.last;
                if work_tx.send(b).is_err() || last {
                    break;
                }
            }
            Ok(())
        });
        let writer = s.spawn(move || -> Result<u64, Error> {
            let mut done = 0;
            for mut b in done_rx {
                done += b.write_out(&layout, output)?;
                report(done);
                if let Some((_, e)) = b.failed.take() {
                    return Err(e);
                }
                if b.last {
                    return Ok(done);
                }
                let _ = free_tx.send(b);
            }
            // The crypto stage stopped early: the reader failed, and says why.
            Err(Error::Io(std::io::Error::other("pipeline stopped")))
        });
        for mut b in work_rx {
            b.process(cipher, &layout, pool.as_ref());
            let stop = b.failed.is_some() || b.last;
            if done_tx.send(b).is_err() || stop {
                break;
            }
        }
        drop(done_tx);
        let written = writer.join().expect("writer thread panicked");
        let read = reader.join().expect("reader thread panicked");
        match (read, written) {
            (Err(e), _) => Err(e),
            (Ok(()), r) => r,
        }
    })
}
