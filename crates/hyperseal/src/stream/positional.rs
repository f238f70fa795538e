//! A whole payload from a regular file to a regular file, on every core: each worker reads its
//! own piece of the input at its offset, seals or opens it, and writes the result at its own
//! offset in the output. Nothing passes through one thread, so reading, the cipher and writing
//! all scale with the cores, where the ordered stream ([`super::engine::stream`]) moves every
//! byte through the thread that reads and writes in order.
//!
//! Offsets are known in advance because every chunk but the last has a fixed size on both sides:
//! chunk `i` is read at `i × stride` and written at `i × (chunk ± tag)`, in hyperseal's format
//! and age's alike. Pieces are taken in increasing order by whichever worker is free, each worker
//! with its own buffers, so memory is a fixed number of chunks per worker whatever the file size.
//!
//! A full disk is found up front by a check of the free space. Each worker writes its piece
//! with `pwrite`, and only once every chunk of the piece authenticated; the caller commits the
//! output only after every chunk did.
//!
//! Why not a shared mapping of the output, whose stores do not serialise on the inode lock as
//! buffered `pwrite`s to one file do on Linux: the output, even an unnamed temporary, is
//! reachable through `/proc/PID/fd` by every process of the same user (and root), and one that
//! truncates it while workers store into the mapping kills this process with `SIGBUS`, in Node
//! or Python the host process. A write that meets a shortened file is an error; a store is a
//! signal. So every write here is a `pwrite` (docs/SECURITY.md, "One file on every core").

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use zeroize::Zeroizing;

use super::{ChunkScheme, Dir, Progress};
use crate::error::Error;
use crate::exec;
use crate::format::TAG_LEN;
use crate::sys;

/// Input bytes per piece (rounded to whole chunks, at least one): large enough that a piece's
/// system calls (a read, a mapping or a write) are noise, small enough that a worker's buffers
/// stay in its core's L2 cache between the read and the cipher.
const PIECE_BYTES: usize = 1 << 20;
/// The buffers of all workers together stay under this, whatever the chunk size and the cores:
/// with 16 MiB chunks a piece is one chunk, and 128 workers would otherwise hold 4 GiB.
const MEMORY_CAP: usize = 256 << 20;

/// A payload's place in two open files.
pub(crate) struct Files<'a> {
    pub input: &'a File,
    /// Where the payload (or plaintext) starts in `input`, and its length there.
    pub in_at: u64,
    pub in_len: u64,
    pub output: &'a File,
    /// Where the result starts in `output` (after the header already written there).
    pub out_at: u64,
    /// Names the destination in an error writing `output` (the user named it, not our
    /// temporary).
    pub output_error: &'a (dyn Fn(io::Error) -> io::Error + Sync),
    /// Only part of an opened payload: its chunks `start..end`, and of their plaintext the bytes
    /// `skip..skip + take`, written from `out_at` (random access). `None`: all of it.
    pub range: Option<Range>,
}

/// A part of a payload to open (see [`Files::range`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Range {
    pub start: u64,
    pub end: u64,
    pub skip: u64,
    pub take: u64,
}

/// The geometry of one payload.
#[derive(Clone, Copy)]
struct Shape {
    dir: Dir,
    /// Input and output bytes of a full chunk.
    stride: u64,
    out_full: u64,
    in_len: u64,
    count: u64,
    per: u64,
    /// The chunks processed: all (`0..count`), or a range of them.
    start: u64,
    end: u64,
}

impl Shape {
    fn in_len_of(&self, i: u64) -> u64 {
        (self.in_len - (i * self.stride).min(self.in_len)).min(self.stride)
    }
    fn out_len_of(&self, i: u64) -> u64 {
        match self.dir {
            Dir::Seal => self.in_len_of(i) + TAG_LEN as u64,
            Dir::Open => self.in_len_of(i).saturating_sub(TAG_LEN as u64),
        }
    }
    /// Output bytes of chunks `first..first + n`.
    fn out_span(&self, first: u64, n: u64) -> u64 {
        (n - 1) * self.out_full + self.out_len_of(first + n - 1)
    }
    fn in_span(&self, first: u64, n: u64) -> u64 {
        (n - 1) * self.stride + self.in_len_of(first + n - 1)
    }
}

/// Seals (`Dir::Seal`) or opens the payload at `files`; returns the plaintext length. Every chunk
/// has authenticated when this returns `Ok`; on an error the output holds garbage and must be
/// discarded (never committed), and the error is the one of the lowest failing chunk, as the
/// ordered stream reports it.
pub(crate) fn run(
    cipher: &impl ChunkScheme,
    dir: Dir,
    files: &Files<'_>,
    threads: usize,
    progress: Option<Progress>,
) -> Result<Ran, Error> {
    let chunk = cipher.chunk_size() as u64;
    let full = chunk + TAG_LEN as u64;
    let (stride, out_full) = if dir == Dir::Seal { (chunk, full) } else { (full, chunk) };
    let avail = usize::try_from(files.in_len).map_err(|_| Error::Io(io::ErrorKind::FileTooLarge.into()))?;
    let count = cipher.ready(avail, stride as usize, true, 0).0 as u64;
    if count == 0 {
        return Ok(Ran { plain: 0, written: 0 });
    }
    cipher.check_index(count - 1)?;
    let per = (PIECE_BYTES as u64 / stride).max(1);
    let (start, end) = files.range.map_or((0, count), |r| (r.start, r.end.min(count)));
    if start >= end {
        return Ok(Ran { plain: 0, written: 0 });
    }
    let shape = Shape { dir, stride, out_full, in_len: files.in_len, count, per, start, end };
    let total = files.range.map_or_else(|| shape.out_span(start, end - start), |r| r.take);
    sys::check_space(files.output, files.out_at + total).map_err(files.output_error)?;
    let pieces = (end - start).div_ceil(per);
    let piece_bytes = (per * full) as usize;
    let threads = exec::resolve(threads).min((MEMORY_CAP / (2 * piece_bytes)).max(1));
    let next = AtomicU64::new(0);
    // The lowest piece that failed: pieces above it are not started (those below always finish,
    // so the error reported is the lowest chunk's, whatever the timing).
    let stop = AtomicU64::new(u64::MAX);
    let failed: Mutex<Option<(u64, Error)>> = Mutex::new(None);
    let done = AtomicU64::new(0);
    let reported = Mutex::new(0u64);
    exec::run(threads, &|| {
        let mut bufs = Buffers::default();
        loop {
            let p = next.fetch_add(1, Ordering::Relaxed);
            if p >= pieces || p > stop.load(Ordering::Relaxed) {
                break;
            }
            match piece(cipher, &shape, files, start + p * per, &mut bufs) {
                Ok(n) => {
                    let now = done.fetch_add(n, Ordering::Relaxed) + n;
                    if let Some(report) = progress {
                        // Reported by one worker at a time, never going backwards.
                        let mut last = reported.lock().unwrap_or_else(|e| e.into_inner());
                        if now > *last {
                            *last = now;
                            report(now);
                        }
                    }
                }
                Err(e) => {
                    stop.fetch_min(p, Ordering::Relaxed);
                    let mut slot = failed.lock().unwrap_or_else(|e| e.into_inner());
                    if slot.as_ref().is_none_or(|(q, _)| p < *q) {
                        *slot = Some((p, e));
                    }
                }
            }
        }
    });
    if let Some((_, e)) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    Ok(Ran {
        plain: match dir {
            Dir::Seal => files.in_len,
            Dir::Open => total,
        },
        written: total,
    })
}

/// What a run did: the plaintext length, and the bytes written to the output.
pub(crate) struct Ran {
    pub plain: u64,
    pub written: u64,
}

/// A worker's buffers; they may hold plaintext, so they are zeroized when dropped.
#[derive(Default)]
struct Buffers {
    input: Zeroizing<Vec<u8>>,
    output: Zeroizing<Vec<u8>>,
}

fn sized(v: &mut Zeroizing<Vec<u8>>, n: usize) -> &mut [u8] {
    if v.len() < n {
        v.resize(n, 0);
    }
    &mut v[..n]
}

/// Reads, seals or opens, and writes the piece from chunk `first`; returns the input bytes it
/// covered. Nothing is written unless every chunk of the piece authenticated.
fn piece(
    cipher: &impl ChunkScheme,
    shape: &Shape,
    files: &Files<'_>,
    first: u64,
    bufs: &mut Buffers,
) -> Result<u64, Error> {
    let n = shape.per.min(shape.end - first);
    let in_bytes = shape.in_span(first, n);
    let out_bytes = shape.out_span(first, n) as usize;
    let input = sized(&mut bufs.input, in_bytes as usize);
    read_exact(files.input, input, files.in_at + first * shape.stride)?;
    // Where this piece's output starts in the whole output (before any clipping).
    let out_rel = (first - shape.start) * shape.out_full;
    let output = sized(&mut bufs.output, out_bytes);
    let (stride, out_full) = (shape.stride as usize, shape.out_full as usize);
    for j in 0..n as usize {
        let i = first + j as u64;
        let last = i + 1 == shape.count;
        let src = &input[j * stride..][..shape.in_len_of(i) as usize];
        let dst = &mut output[j * out_full..];
        match shape.dir {
            Dir::Seal => cipher.seal_to(i, last, src, &mut dst[..src.len() + TAG_LEN])?,
            Dir::Open => drop(cipher.open_to(i, last, src, dst)?),
        }
    }
    // Random access writes only the requested bytes, from the start of the output.
    let (lo, hi, at) = match files.range {
        None => (0, out_bytes as u64, files.out_at + out_rel),
        Some(r) => {
            let lo = r.skip.max(out_rel);
            let hi = (r.skip + r.take).min(out_rel + out_bytes as u64);
            (lo - out_rel, hi.max(lo) - out_rel, files.out_at + lo - r.skip)
        }
    };
    let part = &output[lo as usize..hi as usize];
    sys::pwrite_all(files.output, part, at).map_err(files.output_error)?;
    Ok(in_bytes)
}

/// Fills `buf` from `offset`. The input's length was read before the run: a file that is shorter
/// now was changed by another program meanwhile.
fn read_exact(file: &File, buf: &mut [u8], offset: u64) -> Result<(), Error> {
    match sys::pread_most(file, buf, offset)? == buf.len() {
        true => Ok(()),
        false => Err(Error::Io(changed())),
    }
}

/// The input is not the length it had when the run began.
fn changed() -> io::Error {
    io::Error::other("the input changed size while it was read (another program is writing to it)")
}

/// Inputs from this size may take the positional path. Chosen, not measured as a crossover: well
/// above the ordered stream's 1 MiB start on the calling thread (`engine.rs`, `SOLO_BYTES`), so
/// the small-file figures (1 KiB to 1 MiB) keep that path.
const POSITIONAL_FROM: u64 = 4 << 20;
/// Threads from which the positional path beats the ordered stream: on 2 threads, with `pwrite`,
/// 1 GiB on tmpfs encrypts in 0.48 s against the stream's 0.60 s and `cp`'s 0.53 s (`farm-bench
/// -n 8`, minima, 2-core Zen 4; docs/BENCHMARKS.md).
const POSITIONAL_THREADS: usize = 2;

/// Whether a run of `input` from `in_at` (at most `wanted` bytes of it) takes the positional
/// path: a regular file, large enough, and enough threads. Returns the bytes from `in_at` to the
/// end and the threads. The size is checked first: counting the cores reads cgroup files
/// (~40 µs), which a small file never pays for.
#[cfg(feature = "fs")]
fn eligible(input: &File, in_at: u64, wanted: u64, threads: usize) -> Option<(u64, usize)> {
    let meta = input.metadata().ok().filter(|m| m.is_file())?;
    let in_len = meta.len().checked_sub(in_at)?;
    if wanted.min(in_len) < POSITIONAL_FROM {
        return None;
    }
    let threads = exec::resolve(threads);
    (threads >= POSITIONAL_THREADS).then_some((in_len, threads))
}

/// Seals or opens the payload of `input` from `in_at` to its end into `output`, after what
/// `output` already holds, on the positional path; `None` where that path is not taken (not a
/// regular file on both sides, too small, too few threads), and the caller streams instead.
#[cfg(feature = "fs")]
pub(crate) fn into_output(
    cipher: &impl ChunkScheme,
    dir: Dir,
    input: &File,
    in_at: u64,
    output: &mut crate::output::AtomicOutput,
    threads: usize,
    progress: Option<Progress>,
) -> Option<Result<u64, Error>> {
    let (in_len, threads) = eligible(input, in_at, u64::MAX, threads)?;
    let out_at = output.bytes_written();
    let file = output.positional()?;
    let name = |e: io::Error| output.write_error(e);
    let files = Files { input, in_at, in_len, output: file, out_at, output_error: &name, range: None };
    let result = run(cipher, dir, &files, threads, progress).and_then(|ran| {
        // A file that grew while it was read was sealed only up to its old end: refused, not
        // cut short silently.
        let mut probe = [0u8; 1];
        if dir == Dir::Seal && sys::pread(input, &mut probe, in_at + in_len)? > 0 {
            return Err(Error::Io(changed()));
        }
        // An output another process shortened meanwhile (it is reachable through /proc): an
        // error, never a committed file with a hole.
        match file.metadata().map_err(&name)?.len() < out_at + ran.written {
            true => Err(Error::Io(name(io::Error::other(
                "the output was shortened by another program while it was written",
            )))),
            false => Ok(ran),
        }
    });
    Some(result.map(|ran| {
        output.wrote(ran.written);
        ran.plain
    }))
}

/// Opens plaintext bytes `offset..offset + length` (clamped to the plaintext) of the payload of
/// `input` from `in_at` into `output`, on the positional path: the final chunk is authenticated
/// first (so a file cut short fails whatever the range), then the chunks covering the range are
/// opened by every worker and only the requested bytes written. `None` where the path is not
/// taken (as [`into_output`]); the caller reads through the seekable reader instead.
#[cfg(feature = "fs")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn range_into_output(
    cipher: &impl ChunkScheme,
    input: &File,
    in_at: u64,
    offset: u64,
    length: u64,
    output: &mut crate::output::AtomicOutput,
    threads: usize,
    progress: Option<Progress>,
) -> Option<Result<u64, Error>> {
    let (in_len, threads) = eligible(input, in_at, length, threads)?;
    let out_at = output.bytes_written();
    let file = output.positional()?;
    let name = |e: io::Error| output.write_error(e);
    let result = (|| {
        let chunk = cipher.chunk_size() as u64;
        let plain_len =
            super::authenticated_len(cipher, in_len, |at, buf| read_exact(input, buf, in_at + at))?;
        let (from, to) = (offset.min(plain_len), offset.saturating_add(length).min(plain_len));
        if from == to {
            return Ok(Ran { plain: 0, written: 0 });
        }
        let range =
            Range { start: from / chunk, end: to.div_ceil(chunk), skip: from % chunk, take: to - from };
        let files =
            Files { input, in_at, in_len, output: file, out_at, output_error: &name, range: Some(range) };
        run(cipher, Dir::Open, &files, threads, progress)
    })();
    Some(result.map(|ran| {
        output.wrote(ran.written);
        ran.written
    }))
}

#[cfg(all(test, target_os = "linux"))]
#[path = "positional_tests.rs"]
mod tests;
