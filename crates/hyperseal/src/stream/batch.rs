//! A batch of chunks in one buffer: the unit that the pipeline reads, seals or opens (in parallel
//! when a pool is given) and writes. Every path (writer, reader, pipeline) goes through here.

use std::io::{self, Read, Write};

use zeroize::Zeroize;

use super::ChunkCipher;
use crate::suite::TAG_LEN;
use crate::Error;

/// Which way the chunks go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dir {
    Seal,
    Open,
}

/// Target bytes per batch: large enough that per-batch costs (a pool dispatch, a channel hop) are
/// noise, small enough that a handful in flight stays far below the 64 MiB memory budget.
const BATCH_BYTES: usize = 2 << 20;

/// Geometry shared by every batch of one stream.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    pub dir: Dir,
    pub chunk: usize,
    pub slots: usize,
}

impl Layout {
    pub fn new(dir: Dir, chunk: usize, threads: usize) -> Self {
        let slots = (BATCH_BYTES / chunk).max(2 * threads.max(1));
        Layout { dir, chunk, slots }
    }
    /// Bytes per slot: room for a full chunk and its tag, so both directions work in place.
    pub fn slot_cap(&self) -> usize {
        self.chunk + TAG_LEN
    }
    /// Input bytes of a full slot.
    pub fn in_stride(&self) -> usize {
        match self.dir {
            Dir::Seal => self.chunk,
            Dir::Open => self.chunk + TAG_LEN,
        }
    }
}

/// Up to `slots` consecutive chunks; the last slot of a `last` batch is the final chunk.
pub(crate) struct Batch {
    pub buf: Vec<u8>,
    /// Input bytes per filled slot.
    pub lens: Vec<usize>,
    /// Output bytes per slot, valid for slots before `failed`.
    pub out: Vec<usize>,
    /// Stream index of slot 0.
    pub first: u64,
    pub last: bool,
    /// The first slot that failed to open, and why; later slots are not released.
    pub failed: Option<(usize, Error)>,
}

impl Batch {
    /// An empty batch; slot memory is allocated on first use, so a 1 KB file never pays for a
    /// 2 MiB buffer.
    pub fn new(layout: &Layout) -> Self {
        Batch {
            buf: Vec::new(),
            lens: Vec::with_capacity(layout.slots),
            out: Vec::with_capacity(layout.slots),
            first: 0,
            last: false,
            failed: None,
        }
    }

    /// Slot `i`, allocated if needed.
    pub fn slot_mut(&mut self, i: usize, layout: &Layout) -> &mut [u8] {
        let cap = layout.slot_cap();
        if self.buf.len() < (i + 1) * cap {
            self.buf.resize((i + 1) * cap, 0);
        }
        &mut self.buf[i * cap..(i + 1) * cap]
    }

    /// Slots whose output may be released.
    pub fn good_slots(&self) -> usize {
        self.failed.as_ref().map_or(self.lens.len(), |(i, _)| *i)
    }

    /// Seals or opens every filled slot, splitting the slots over `threads` scoped threads when
    /// there is more than one slot. (Scoped threads rather than a work-stealing pool: on a 2-core
    /// machine idle pool workers spinning in `sched_yield` stole time from the I/O threads.)
    pub fn process(&mut self, cipher: &ChunkCipher, layout: &Layout, threads: usize) {
        let n = self.lens.len();
        if n > 0 {
            self.slot_mut(n - 1, layout); // an empty final chunk may never have been touched
        }
        let (first, last, dir) = (self.first, self.last, layout.dir);
        // Keep a copy of a final ciphertext chunk: if it fails, we explain why from the original.
        let final_copy = (dir == Dir::Open && last && n > 0).then(|| {
            let s = (n - 1) * layout.slot_cap();
            self.buf[s..s + self.lens[n - 1]].to_vec()
        });
        let one = |i: usize, slot: &mut [u8], len: usize| -> Result<usize, Error> {
            let index = first + i as u64;
            let is_last = last && i + 1 == n;
            match dir {
                Dir::Seal => {
                    cipher.seal(index, is_last, &mut slot[..len + TAG_LEN]);
                    Ok(len + TAG_LEN)
                }
                Dir::Open if len == 0 => Err(Error::Truncated(index.saturating_sub(1))),
                Dir::Open => cipher.open(index, is_last, &mut slot[..len]),
            }
        };
        let cap = layout.slot_cap();
        let lens = &self.lens;
        let run = |base: usize, region: &mut [u8]| -> Vec<Result<usize, Error>> {
            region.chunks_mut(cap).enumerate().map(|(k, slot)| one(base + k, slot, lens[base + k])).collect()
        };
        let buf = &mut self.buf[..n * cap];
        let results: Vec<Result<usize, Error>> = if threads > 1 && n > 1 {
            let per = n.div_ceil(threads.min(n));
            std::thread::scope(|s| {
                let mut parts = buf.chunks_mut(per * cap).enumerate();
                let (_, head) = parts.next().expect("n > 1");
                let handles: Vec<_> =
                    parts.map(|(g, region)| s.spawn(move || run(g * per, region))).collect();
                let mut all = run(0, head);
                for h in handles {
                    all.extend(h.join().expect("crypto worker panicked"));
                }
                all
            })
        } else {
            run(0, buf)
        };
        self.out.clear();
        self.failed = None;
        for (i, r) in results.into_iter().enumerate() {
            match r {
                Ok(len) => self.out.push(len),
                Err(e) => {
                    let e = match (&final_copy, i + 1 == n, e) {
                        (Some(ct), true, Error::ChunkAuth(idx)) => cipher.diagnose_last(idx, ct),
                        (_, _, e) => e,
                    };
                    self.failed = Some((i, e));
                    break;
                }
            }
        }
    }

    /// Writes the released output; returns (input bytes consumed, plaintext bytes) — the first
    /// drives progress against the input size, the second is what the caller gets back.
    pub fn write_out(&self, layout: &Layout, w: &mut dyn Write) -> io::Result<(u64, u64)> {
        let good = self.good_slots();
        let cap = layout.slot_cap();
        match layout.dir {
            // Sealed full chunks are exactly `cap` bytes, so the batch is one contiguous run.
            Dir::Seal if good > 0 => w.write_all(&self.buf[..(good - 1) * cap + self.out[good - 1]])?,
            Dir::Seal => {}
            Dir::Open => {
                for i in 0..good {
                    w.write_all(&self.buf[i * cap..i * cap + self.out[i]])?;
                }
            }
        }
        let consumed: u64 = self.lens[..good].iter().map(|&l| l as u64).sum();
        let plaintext = match layout.dir {
            Dir::Seal => consumed,
            Dir::Open => self.out[..good].iter().map(|&l| l as u64).sum(),
        };
        Ok((consumed, plaintext))
    }
}

impl Drop for Batch {
    // Slots held plaintext: do not leave it in freed memory.
    fn drop(&mut self) {
        self.buf.zeroize();
    }
}

/// Fills batches from a reader, deciding which chunk is final by looking one byte ahead.
pub(crate) struct Filler {
    carry: Option<u8>,
    pub next: u64,
}

impl Filler {
    pub fn starting_at(next: u64) -> Self {
        Filler { carry: None, next }
    }

    pub fn fill(&mut self, r: &mut (impl Read + ?Sized), b: &mut Batch, layout: &Layout) -> io::Result<()> {
        b.lens.clear();
        b.out.clear();
        b.failed = None;
        b.first = self.next;
        b.last = false;
        let stride = layout.in_stride();
        for slot in 0..layout.slots {
            let dst = &mut b.slot_mut(slot, layout)[..stride];
            let mut n = 0;
            if let Some(c) = self.carry.take() {
                dst[0] = c;
                n = 1;
            }
            n += read_full(r, &mut dst[n..])?;
            // Nothing left: the previous slot was the final chunk, unless the stream is empty
            // (one empty final chunk).
            if n == 0 && self.next + b.lens.len() as u64 > 0 {
                b.last = true;
                break;
            }
            b.lens.push(n);
            if n < stride {
                b.last = true;
                break;
            }
        }
        if !b.last {
            let mut one = [0u8; 1];
            if read_full(r, &mut one)? == 0 {
                b.last = true;
            } else {
                self.carry = Some(one[0]);
            }
        }
        self.next += b.lens.len() as u64;
        Ok(())
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
pub(crate) fn read_full(r: &mut (impl Read + ?Sized), buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
