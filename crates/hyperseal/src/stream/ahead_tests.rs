//! The pull reader reads one batch ahead and has the executor's helpers open it while the
//! caller is handed the batch before: what it releases, and the error after it, must be what
//! the calling thread alone releases, wherever in the stream the damage or the input's failure
//! falls, and only an input that had the batch ready is read ahead.

use std::io::{self, Cursor, Read, Seek, SeekFrom};

use zeroize::Zeroizing;

use super::*;

const CHUNK: usize = 16 << 10;
/// Chunks per batch of the reader (1 MiB of plaintext).
const PER_BATCH: usize = (1 << 20) / CHUNK;

fn cipher() -> ChunkCipher {
    ChunkCipher::new(Suite::ChaCha20Poly1305, CHUNK, &Zeroizing::new([9u8; 32])).unwrap()
}

fn text(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(29).wrapping_add((i >> 14) as u8)).collect()
}

/// `pt` sealed in chunks; `last_flag(i, is_last)` gives each chunk's final flag.
fn sealed_with(pt: &[u8], last_flag: impl Fn(usize, bool) -> bool) -> Vec<u8> {
    let c = cipher();
    let pieces: Vec<&[u8]> = pt.chunks(CHUNK).collect();
    let mut out = Vec::new();
    for (i, p) in pieces.iter().enumerate() {
        let mut buf = vec![0u8; p.len() + TAG_LEN];
        c.seal_to(i as u64, last_flag(i, i + 1 == pieces.len()), p, &mut buf).unwrap();
        out.extend(buf);
    }
    out
}

fn sealed(pt: &[u8]) -> Vec<u8> {
    sealed_with(pt, |_, last| last)
}

/// Offset of chunk `i` in a payload of full chunks.
fn at(i: usize) -> usize {
    i * (CHUNK + TAG_LEN)
}

/// Everything a reader released in 8 KiB reads (as `io::copy` reads), and how it ended.
fn drain(mut r: impl Read) -> (Vec<u8>, Option<io::Error>) {
    let (mut out, mut buf) = (Vec::new(), [0u8; 8 << 10]);
    loop {
        match r.read(&mut buf) {
            Ok(0) => return (out, None),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) => return (out, Some(e)),
        }
    }
}

fn describe(e: &Option<io::Error>) -> String {
    format!("{:?}", e.as_ref().map(|e| (e.kind(), e.to_string())))
}

/// Threads 2 (reading ahead wherever the input allows) against threads 1, on `payload`.
fn same_as_one_thread(case: &str, payload: &[u8]) {
    let (one, one_err) = drain(ChunkReader::new(payload, cipher(), 1));
    let (two, two_err) = drain(ChunkReader::new(payload, cipher(), 2));
    assert!(one == two, "{case}: {} bytes released on two threads, {} on one", two.len(), one.len());
    assert_eq!(describe(&one_err), describe(&two_err), "{case}");
}

#[test]
fn reading_ahead_releases_what_the_calling_thread_alone_releases() {
    let pt = text(5 * PER_BATCH * CHUNK + 777);
    let good = sealed(&pt);
    let (out, e) = drain(ChunkReader::new(&good[..], cipher(), 2));
    assert!(e.is_none() && out == pt, "a clean payload: {} of {} bytes, {e:?}", out.len(), pt.len());

    // A damaged chunk at the start, inside and at the end of an opened-ahead batch, and in the
    // final batch.
    for bad in [2 * PER_BATCH, 2 * PER_BATCH + 7, 3 * PER_BATCH - 1, 5 * PER_BATCH] {
        let mut p = good.clone();
        p[at(bad) + 100] ^= 1;
        same_as_one_thread(&format!("chunk {bad} damaged"), &p);
        let (out, e) = drain(ChunkReader::new(&p[..], cipher(), 2));
        assert_eq!(out.len(), bad * CHUNK, "chunk {bad} damaged");
        assert!(matches!(Error::from(e.unwrap()), Error::ChunkAuth(i) if i == bad as u64));
    }
    // Cut at a batch's end and inside a batch: the chunks before, then `Truncated`.
    for chunks in [3 * PER_BATCH, 3 * PER_BATCH + 5] {
        same_as_one_thread(&format!("cut after {chunks} chunks"), &good[..at(chunks)]);
    }
    // A final chunk in the middle of a batch read ahead, with more chunks after it.
    let early_end = sealed_with(&pt, |i, last| last || i == 2 * PER_BATCH + 3);
    same_as_one_thread("a final chunk followed by more", &early_end);
    // Junk after the final chunk.
    same_as_one_thread("junk after the end", &[&good[..], &[0u8; 5000][..]].concat());
}

/// Returns `fail_at` bytes of `data`, then an error; at most `most` bytes per call.
struct Failing<'a> {
    data: &'a [u8],
    fail_at: usize,
    most: usize,
    consumed: usize,
}

impl Read for Failing<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.consumed >= self.fail_at {
            return Err(io::Error::new(io::ErrorKind::ConnectionReset, "the input broke"));
        }
        let n =
            buf.len().min(self.most).min(self.fail_at - self.consumed).min(self.data.len() - self.consumed);
        buf[..n].copy_from_slice(&self.data[self.consumed..][..n]);
        self.consumed += n;
        Ok(n)
    }
}

#[test]
fn an_input_that_fails_in_a_batch_read_ahead_first_gives_the_batches_before_it() {
    let pt = text(4 * PER_BATCH * CHUNK);
    let payload = sealed(&pt);
    // Inside the third batch, which is read while the second is returned.
    let fail_at = at(2 * PER_BATCH + 10) + 3;
    for threads in [1, 2] {
        let r = Failing { data: &payload, fail_at, most: usize::MAX, consumed: 0 };
        let (out, e) = drain(ChunkReader::new(r, cipher(), threads));
        assert!(out == pt[..2 * PER_BATCH * CHUNK], "threads {threads}: {} bytes released", out.len());
        assert_eq!(e.map(|e| e.kind()), Some(io::ErrorKind::ConnectionReset), "threads {threads}");
    }
}

#[test]
fn only_an_input_that_had_the_batch_ready_is_read_ahead() {
    let pt = text(4 * PER_BATCH * CHUNK);
    let payload = sealed(&pt);
    let batch = at(PER_BATCH);
    // Reads plaintext until the second batch is loaded; returns the input bytes consumed.
    let consumed_by_batch_two = |most: usize| {
        let mut r =
            ChunkReader::new(Failing { data: &payload, fail_at: usize::MAX, most, consumed: 0 }, cipher(), 2);
        let mut buf = vec![0u8; PER_BATCH * CHUNK + 1];
        r.read_exact(&mut buf).unwrap();
        assert!(buf[..] == pt[..buf.len()]);
        r.into_inner().consumed
    };
    // Ready (1 MiB and more per call): batch two loaded, batch three read and being opened.
    let ahead = if crate::exec::available_threads() > 1 { 3 * batch + 1 } else { 2 * batch + 1 };
    assert_eq!(consumed_by_batch_two(usize::MAX), ahead);
    // A pipe's 64 KiB per call: what arrived is returned before more is waited for.
    assert_eq!(consumed_by_batch_two(64 << 10), 2 * batch + 1);
}

#[test]
fn seeking_drops_the_batch_read_ahead() {
    let pt = text(4 * PER_BATCH * CHUNK + 99);
    let payload = sealed(&pt);
    let mut r = StreamReader::new(Cursor::new(&payload[..]), cipher(), 2);
    assert_eq!(r.plaintext_len().unwrap(), pt.len() as u64);
    let mut buf = vec![0u8; 3 * PER_BATCH * CHUNK / 2];
    r.read_exact(&mut buf).unwrap();
    for to in [0, PER_BATCH * CHUNK / 3, 3 * PER_BATCH * CHUNK + 5] {
        r.seek(SeekFrom::Start(to as u64)).unwrap();
        let (out, e) = drain(&mut r);
        assert!(e.is_none() && out == pt[to..], "from {to}: {} bytes, {e:?}", out.len());
    }
}
