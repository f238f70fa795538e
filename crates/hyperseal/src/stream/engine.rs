//! Whole payloads. Two engines, both on the executor:
//! - [`stream`]: from a `Read` or a borrowed slice onto a `Write`, batch by batch in order, with
//!   a bounded number of batches in flight (constant memory whatever the size);
//! - [`seal_run`]/[`open_run`]: a run of chunks from a slice straight into a buffer, split into
//!   pieces that every free thread pulls (one-shots, and large pieces fed to `Sealer`/`Opener`).

use std::io::{Read, Write};
use std::sync::Mutex;

pub(crate) use super::batch::Dir;
use super::batch::{Batch, Filler, Layout};
use super::{ChunkScheme, Progress};
use crate::error::Error;
use crate::exec::{self, Made};
use crate::format::TAG_LEN;

/// Input bytes per batch: small enough that a batch read (or borrowed) is still in the L2
/// cache when it is sealed and written, large enough that per-batch costs (a lock, a wake-up)
/// are noise. Batches in flight are at most `MAX_UNITS`, so memory stays below 16 MiB (plus one
/// chunk per batch at 16 MiB chunks) however many threads are asked for.
const BATCH_BYTES: usize = 512 << 10;
const MAX_UNITS: usize = 24;
/// Input sealed or opened on the calling thread before the executor is used, in batches of
/// `SOLO_BATCH_BYTES` (see [`stream`]).
const SOLO_BYTES: usize = 1 << 20;
const SOLO_BATCH_BYTES: usize = 128 << 10;

/// Pieces of [`seal_run`]/[`open_run`]: each free thread takes the next one.
const PIECE_BYTES: usize = 256 << 10;
/// Below this a run stays on the calling thread: waking a helper costs more than it saves.
/// Measured with `hyperseal-bench --only engine` (crossover table).
const PARALLEL_MIN: usize = 1 << 20;

/// Where a payload comes from.
pub(crate) enum Input<'a> {
    /// Read (and copied into batches) as it arrives.
    Reader(&'a mut (dyn Read + Send)),
    /// Borrowed whole: chunks are sealed or opened straight from it.
    Slice(&'a [u8]),
}

/// Seals or opens a whole payload onto `output`; returns the plaintext length. Opened bytes are
/// written only after their chunk authenticated, in order; nothing after a failing chunk is.
pub(crate) fn stream(
    cipher: &impl ChunkScheme,
    dir: Dir,
    input: Input<'_>,
    output: &mut (dyn Write + Send),
    threads: usize,
    progress: Option<Progress>,
) -> Result<u64, Error> {
    let layout = Layout::new(dir, cipher.chunk_size(), BATCH_BYTES);
    let stride = layout.stride();
    let (slice, mut reader) = match input {
        Input::Slice(s) => (s, None),
        Input::Reader(r) => (&[][..], Some(r)),
    };
    let mut filler = Filler::starting_at(0);
    let chunks = cipher.ready(slice.len(), stride, true, 0).0;
    let mut next = 0;
    // The solo start (below) reads smaller batches: one 128 KiB buffer faults in 32 pages where
    // a full batch faults in 128, and nothing is shared between threads yet.
    let small = Layout::new(dir, cipher.chunk_size(), SOLO_BATCH_BYTES);
    let solo_batches = (SOLO_BYTES / (small.slots * small.chunk)).max(1);
    let mut small_left = solo_batches;
    let mut produce = |b: &mut Batch| -> Result<Made, Error> {
        // Only filling depends on the number of slots; processing and writing see the same
        // slot geometry in both layouts.
        let layout = match small_left {
            0 => &layout,
            _ => {
                small_left -= 1;
                &small
            }
        };
        let last = match reader.as_mut() {
            Some(r) => filler.fill(&mut **r, b, layout, cipher)?,
            None => {
                let count = (chunks - next).min(layout.slots);
                b.lens.clear();
                b.lens.extend((next..next + count).map(|i| (slice.len() - i * stride).min(stride)));
                (b.first, b.src, b.failed) = (next as u64, Some(next * stride), None);
                next += count;
                b.last = next == chunks;
                b.last
            }
        };
        Ok(if last { Made::Last } else { Made::More })
    };
    let (mut consumed, mut written) = (0u64, 0u64);
    let mut consume = |b: &mut Batch| -> Result<bool, Error> {
        let (i, o) = b.write_out(&layout, &mut *output)?;
        (consumed, written) = (consumed + i, written + o);
        if let Some(p) = progress {
            p(consumed)
        }
        b.failed.take().map_or(Ok(true), |(_, e)| Err(e))
    };
    // The first megabyte runs here, one small buffer reused, before any helper is woken: a file
    // of a megabyte or less never pays for a thread, more buffers and their page faults (more
    // than the cipher work they would share), and a large one loses only its first megabyte of
    // parallelism. Measured: whole-process 1 MiB encrypt, `hyperseal-bench --only small`.
    let mut first = Batch::default();
    let mut ended = false;
    for _ in 0..solo_batches {
        ended = matches!(produce(&mut first)?, Made::Last);
        first.process(cipher, &layout, slice, 1);
        consume(&mut first)?;
        if ended {
            break;
        }
    }
    if !ended {
        let threads = exec::resolve(threads);
        let units: Vec<Batch> = std::iter::once(first)
            .chain(std::iter::repeat_with(Batch::default))
            .take(if threads == 1 { 1 } else { (threads + 2).min(MAX_UNITS) })
            .collect();
        exec::ordered(units, threads, produce, |b| b.process(cipher, &layout, slice, 1), consume)?;
    }
    output.flush()?;
    Ok(if dir == Dir::Seal { consumed } else { written })
}

/// Exact payload size of an `n`-byte plaintext.
pub(crate) fn sealed_len(chunk: usize, n: usize) -> usize {
    n + TAG_LEN * n.div_ceil(chunk).max(1)
}

/// Seals `pt` as chunks `first..` of a payload — whole chunks, except that with `ends` the last
/// one is the final chunk — straight into `out` (exactly the sealed length).
/// The caller keeps the indices within the scheme's limit (only past it can sealing fail).
pub(crate) fn seal_run(
    cipher: &impl ChunkScheme,
    first: u64,
    pt: &[u8],
    ends: bool,
    out: &mut [u8],
    threads: usize,
) {
    run(cipher, Dir::Seal, first, pt, ends, out, threads).expect("sealing cannot fail");
}

/// Opens `ct` as chunks `first..` of a payload (with `ends`, the last one is the final chunk)
/// into `out` (at least the plaintext length; `ct.len()` always suffices); returns the
/// plaintext length. On error `out` holds unauthenticated bytes and must be discarded.
pub(crate) fn open_run(
    cipher: &impl ChunkScheme,
    first: u64,
    ct: &[u8],
    ends: bool,
    out: &mut [u8],
    threads: usize,
) -> Result<usize, Error> {
    run(cipher, Dir::Open, first, ct, ends, out, threads)
}

/// After [`open_run`] failed with `error`: the plaintext bytes of the chunks of `ct` that
/// authenticate in order before the failing one, opened into `out` again one by one (the
/// failing chunk tried under the other final flag, [`open_other_flag`](super::open_other_flag)),
/// and the error that follows them. The failure path only: one thread, from the first chunk.
pub(crate) fn open_prefix(
    cipher: &impl ChunkScheme,
    first: u64,
    ct: &[u8],
    ends: bool,
    out: &mut [u8],
    error: Error,
) -> (usize, Error) {
    if !matches!(error, Error::ChunkAuth(_) | Error::Truncated(_)) {
        return (0, error); // refused before any chunk was opened (an index limit, a short buffer)
    }
    let stride = cipher.chunk_size() + TAG_LEN;
    let count = if ends { cipher.ready(ct.len(), stride, true, first).0 } else { ct.len() / stride };
    let mut at = 0;
    for i in 0..count {
        let (index, last) = (first + i as u64, ends && i + 1 == count);
        let src = &ct[i * stride..][..(ct.len() - i * stride).min(stride)];
        match cipher.open_to(index, last, src, &mut out[at..]) {
            Ok(n) => at += n,
            Err(e) => {
                return match super::open_other_flag(cipher, index, last, src, &mut out[at..]) {
                    Some(after) => (at + src.len() - TAG_LEN, after),
                    None => (at, e),
                }
            }
        }
    }
    (0, error)
}

fn run(
    cipher: &impl ChunkScheme,
    dir: Dir,
    first: u64,
    input: &[u8],
    ends: bool,
    out: &mut [u8],
    threads: usize,
) -> Result<usize, Error> {
    let chunk = cipher.chunk_size();
    let full = chunk + TAG_LEN;
    let (stride, out_full) = if dir == Dir::Seal { (chunk, full) } else { (full, chunk) };
    let count = if ends { cipher.ready(input.len(), stride, true, first).0 } else { input.len() / stride };
    debug_assert!(ends || input.len().is_multiple_of(stride), "a run that does not end is whole chunks");
    let len_of = |i: usize| (input.len() - i * stride).min(stride);
    let total = match count {
        0 => 0,
        n => {
            let tail = len_of(n - 1);
            (n - 1) * out_full + if dir == Dir::Seal { tail + TAG_LEN } else { tail.saturating_sub(TAG_LEN) }
        }
    };
    let Some(out) = out.get_mut(..total) else {
        return Err(Error::InvalidArgument(format!(
            "output buffer is {} bytes, {total} are needed",
            out.len()
        )));
    };
    let per = (PIECE_BYTES / chunk).max(1);
    let threads = if input.len() >= PARALLEL_MIN { threads } else { 1 };
    // One region per piece, even an empty one: a final chunk too short to have output must
    // still be checked.
    let pieces = count.div_ceil(per);
    let mut regions = Vec::with_capacity(pieces);
    let mut rest = out;
    for _ in 0..pieces {
        let n = (per * out_full).min(rest.len());
        let (mine, tail) = std::mem::take(&mut rest).split_at_mut(n);
        regions.push(Mutex::new(mine));
        rest = tail;
    }
    let piece = |p: usize| -> Result<(), Error> {
        let mut dst = regions[p].lock().expect("one user per piece");
        let mut at = 0;
        for i in p * per..((p + 1) * per).min(count) {
            let (index, last) = (first + i as u64, ends && i + 1 == count);
            let src = &input[i * stride..][..len_of(i)];
            at += match dir {
                Dir::Seal => {
                    cipher.seal_to(index, last, src, &mut dst[at..at + src.len() + TAG_LEN])?;
                    src.len() + TAG_LEN
                }
                Dir::Open => cipher.open_to(index, last, src, &mut dst[at..])?,
            };
        }
        Ok(())
    };
    exec::for_each(pieces, threads, &piece).map(|()| total).map_err(|(_, e)| e)
}
