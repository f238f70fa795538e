//! A batch of consecutive chunks in one buffer: the unit the streaming engines read (or take
//! from a borrowed slice), seal or open, and write. Every slot has room for a full chunk and its
//! tag, so both directions work in place.

use std::io::{self, IoSlice, IoSliceMut, Read, Write};
use std::ops::Range;
use std::sync::{Arc, Mutex};

use zeroize::Zeroize;

use super::ChunkScheme;
use crate::error::Error;
use crate::exec;
use crate::format::TAG_LEN;

/// Which way the chunks go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dir {
    Seal,
    Open,
}

/// Geometry shared by every batch of one stream.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    pub dir: Dir,
    pub chunk: usize,
    pub slots: usize,
}

impl Layout {
    /// `bytes` of input per batch, rounded to whole chunks (at least one).
    pub fn new(dir: Dir, chunk: usize, bytes: usize) -> Self {
        Layout { dir, chunk, slots: (bytes / chunk).max(1) }
    }
    /// Bytes per slot.
    pub fn cap(&self) -> usize {
        self.chunk + TAG_LEN
    }
    /// Input bytes of a full slot.
    pub fn stride(&self) -> usize {
        match self.dir {
            Dir::Seal => self.chunk,
            Dir::Open => self.chunk + TAG_LEN,
        }
    }
    /// Output bytes of a slot with `len` input bytes.
    fn out_len(&self, len: usize) -> usize {
        match self.dir {
            Dir::Seal => len + TAG_LEN,
            Dir::Open => len - TAG_LEN,
        }
    }
}

/// Up to `layout.slots` consecutive chunks; with `last`, the last filled slot is the final chunk.
#[derive(Default)]
pub(crate) struct Batch {
    pub buf: Vec<u8>,
    /// Input bytes per filled slot.
    pub lens: Vec<usize>,
    /// Stream index of slot 0.
    pub first: u64,
    pub last: bool,
    /// Borrowed input: the offset of slot 0's input in the slice; `None`: the input is in `buf`.
    pub src: Option<usize>,
    /// The first slot that failed, and why; it and later slots are never released.
    pub failed: Option<(usize, Error)>,
    /// Ciphertext of the slots an in-place open may have to try again (see `process`).
    kept: Vec<u8>,
    /// Whether `buf` may hold plaintext (read for sealing and not yet sealed, or ever opened):
    /// then it is zeroized when dropped. Sealing from a borrowed slice only puts ciphertext here.
    plaintext: bool,
}

impl Batch {
    /// Makes `buf` at least `len` bytes, allocating exactly that: the spare capacity of a doubled
    /// `Vec` would be zeroized (and so touched) on drop for nothing.
    fn grow(&mut self, len: usize) {
        if self.buf.len() < len {
            self.buf.reserve_exact(len - self.buf.len());
            self.buf.resize(len, 0);
        }
    }

    /// Bytes of `buf` the filled slots use: whole slots, then the last one's input plus room for
    /// a tag (sealing), never more than a slot.
    fn used(&self, layout: &Layout) -> usize {
        let n = self.lens.len();
        (n - 1) * layout.cap() + (self.lens[n - 1] + TAG_LEN).min(layout.cap())
    }

    fn reset(&mut self, first: u64) {
        self.lens.clear();
        self.first = first;
        self.last = false;
        self.src = None;
        self.failed = None;
    }

    /// Slots whose output may be released.
    pub fn good_slots(&self) -> usize {
        self.failed.as_ref().map_or(self.lens.len(), |(i, _)| *i)
    }

    /// Output bytes of slot `i`.
    pub fn out_len(&self, i: usize, layout: &Layout) -> usize {
        layout.out_len(self.lens[i])
    }

    /// Seals or opens every filled slot (from `input` when the batch borrows it), over up to
    /// `threads` threads.
    pub fn process(&mut self, cipher: &impl ChunkScheme, layout: &Layout, input: &[u8], threads: usize) {
        let n = self.lens.len();
        if n == 0 {
            return;
        }
        let (used, kept) = self.prepare(layout);
        let at = SlotWork::new(layout, self.first, self.last, self.src, &self.lens[..]);
        let cap = layout.cap();
        let buf = &mut self.buf[..used];
        self.failed = if threads != 1 && n > 1 {
            let slots: Vec<Mutex<&mut [u8]>> = buf.chunks_mut(cap).map(Mutex::new).collect();
            exec::for_each(n, threads, &|i| {
                at.one(cipher, input, i, &mut slots[i].lock().expect("one user per slot"))
            })
            .err()
        } else {
            buf.chunks_mut(cap)
                .enumerate()
                .find_map(|(i, slot)| at.one(cipher, input, i, slot).err().map(|e| (i, e)))
        };
        self.settle(cipher, layout, input, used, kept);
    }

    /// Starts opening every filled slot of this batch (read into `buf`) on the executor's
    /// helpers, and returns at once; [`Opening::join`] finishes the work and gives the batch
    /// back. The caller meanwhile returns the plaintext of the batch before (see
    /// `ChunkReader::read`).
    pub fn start_open<S: ChunkScheme + Send + 'static>(
        mut self,
        cipher: &Arc<S>,
        layout: &Layout,
        threads: usize,
    ) -> Opening<S> {
        debug_assert!(layout.dir == Dir::Open && self.src.is_none());
        let (used, kept) = if self.lens.is_empty() { (0, 0..0) } else { self.prepare(layout) };
        // The job owns what it needs (the lengths and the buffer), and `join` gives them back.
        let lens = std::mem::take(&mut self.lens);
        let job = Arc::new(OpenJob {
            cipher: Arc::clone(cipher),
            at: SlotWork::new(layout, self.first, self.last, self.src, lens),
            pieces: exec::Pieces::new(std::mem::take(&mut self.buf), used, layout.cap()),
            failed: Mutex::new(None),
        });
        let body = Arc::clone(&job);
        let started = exec::start(
            threads,
            Arc::new(move || {
                while let Some((i, slot)) = body.pieces.claim() {
                    if let Err(e) = body.at.one(&*body.cipher, &[], i, slot) {
                        let mut first = body.failed.lock().unwrap_or_else(|p| p.into_inner());
                        if first.as_ref().is_none_or(|(j, _)| i < *j) {
                            *first = Some((i, e));
                        }
                    }
                }
            }),
        );
        Opening { batch: self, job, started, used, kept, layout: *layout }
    }

    /// Before the chunks are processed: room for the final slot, the zeroize-on-drop flag, and
    /// the ciphertext an in-place open keeps for a retry. Returns the bytes the slots use and
    /// the slots kept.
    fn prepare(&mut self, layout: &Layout) -> (usize, Range<usize>) {
        let n = self.lens.len();
        let used = self.used(layout);
        self.grow(used); // a short final slot was only allocated as far as bytes arrived
        self.plaintext |= layout.dir == Dir::Open;
        // Opening in place overwrites a chunk's ciphertext, which a chunk that fails must keep to
        // be tried under the other final flag (`open_other_flag`). The chunks kept are those where
        // a payload's real end can fall when what follows it is wrong: the last full chunk of a
        // batch (more data follows it, maybe only junk), and in the final batch the full chunk
        // before it (junk shorter than a chunk after it). One copy of a chunk per batch, into a
        // buffer the batch keeps (no allocation per batch), against decrypting the whole batch.
        // A final chunk followed by a chunk's worth of junk or more, inside a batch, fails
        // without being released.
        let (stride, cap) = (layout.stride(), layout.cap());
        let from = match (layout.dir, self.src) {
            (Dir::Open, None) => n.saturating_sub(if self.last { 2 } else { 1 }),
            _ => n,
        };
        let kept = from..from + (from..n).take_while(|&i| self.lens[i] == stride).count();
        self.kept.clear();
        for i in kept.clone() {
            self.kept.extend_from_slice(&self.buf[i * cap..][..stride]);
        }
        (used, kept)
    }

    /// After the chunks were processed (`failed` set): a failed full chunk is tried under the
    /// other final flag, and a sealed batch no longer holds plaintext.
    fn settle(
        &mut self,
        cipher: &impl ChunkScheme,
        layout: &Layout,
        input: &[u8],
        used: usize,
        kept: Range<usize>,
    ) {
        let (n, first, last, cap, stride) =
            (self.lens.len(), self.first, self.last, layout.cap(), layout.stride());
        if let (Dir::Open, Some(i)) = (layout.dir, self.failed.as_ref().map(|(i, _)| *i)) {
            let ct = match self.src {
                Some(s) => Some(&input[s + i * stride..][..self.lens[i]]),
                None => kept.contains(&i).then(|| &self.kept[(i - kept.start) * stride..][..stride]),
            };
            let slot = &mut self.buf[i * cap..(i * cap + cap).min(used)];
            if let Some(e) = ct
                .and_then(|ct| super::open_other_flag(cipher, first + i as u64, last && i + 1 == n, ct, slot))
            {
                self.failed = Some((i + 1, e));
            }
        }
        // Sealing in place fails only past a scheme's chunk limit, before any output is released,
        // and otherwise overwrote every plaintext byte read into this batch
        // (and earlier batches' were overwritten the same way): nothing is left to zeroize, and
        // skipping it saves a byte-by-byte volatile pass over every buffer at exit.
        if layout.dir == Dir::Seal {
            self.plaintext = false;
        }
    }

    /// Writes the released output; returns (input bytes consumed, output bytes written).
    pub fn write_out(&self, layout: &Layout, w: &mut (impl Write + ?Sized)) -> io::Result<(u64, u64)> {
        let good = self.good_slots();
        let cap = layout.cap();
        let mut written = 0;
        match layout.dir {
            // Sealed full chunks are exactly `cap` bytes: the batch is one contiguous run.
            Dir::Seal if good > 0 => {
                let n = (good - 1) * cap + self.out_len(good - 1, layout);
                w.write_all(&self.buf[..n])?;
                written = n;
            }
            Dir::Seal => {}
            // Opened chunks sit one slot apart (their tags between them): one gathering write,
            // not a call per chunk.
            Dir::Open => {
                let mut parts: Vec<IoSlice<'_>> = (0..good)
                    .map(|i| &self.buf[i * cap..][..self.out_len(i, layout)])
                    .filter(|p| !p.is_empty())
                    .map(IoSlice::new)
                    .collect();
                written = parts.iter().map(|p| p.len()).sum();
                write_all_vectored(w, &mut parts)?;
            }
        }
        Ok((self.lens[..good].iter().map(|&l| l as u64).sum(), written as u64))
    }
}

impl Drop for Batch {
    // Do not leave plaintext in freed memory.
    fn drop(&mut self) {
        if self.plaintext {
            self.buf.zeroize();
        }
    }
}

/// One slot's work: seal or open chunk `i` of a batch. The lengths are borrowed from the batch
/// (`process`) or owned by a started job (`start_open`).
struct SlotWork<L> {
    dir: Dir,
    first: u64,
    n: usize,
    last: bool,
    src: Option<usize>,
    stride: usize,
    lens: L,
}

impl<L: AsRef<[usize]>> SlotWork<L> {
    fn new(layout: &Layout, first: u64, last: bool, src: Option<usize>, lens: L) -> Self {
        let n = lens.as_ref().len();
        SlotWork { dir: layout.dir, first, n, last, src, stride: layout.stride(), lens }
    }

    /// Processes slot `i` (`slot`: its room in the batch), from `input` when the batch borrows it.
    fn one(
        &self,
        cipher: &(impl ChunkScheme + ?Sized),
        input: &[u8],
        i: usize,
        slot: &mut [u8],
    ) -> Result<(), Error> {
        let (index, is_last, len) =
            (self.first + i as u64, self.last && i + 1 == self.n, self.lens.as_ref()[i]);
        let from = self.src.map(|s| &input[s + i * self.stride..][..len]);
        match (self.dir, from) {
            (Dir::Seal, None) => cipher.seal(index, is_last, &mut slot[..len + TAG_LEN]),
            (Dir::Seal, Some(pt)) => cipher.seal_to(index, is_last, pt, &mut slot[..len + TAG_LEN]),
            (Dir::Open, None) => cipher.open(index, is_last, &mut slot[..len]).map(drop),
            (Dir::Open, Some(ct)) => cipher.open_to(index, is_last, ct, slot).map(drop),
        }
    }
}

/// What the helpers of a started open share.
struct OpenJob<S> {
    cipher: Arc<S>,
    at: SlotWork<Vec<usize>>,
    pieces: exec::Pieces,
    /// The lowest failing slot, and why.
    failed: Mutex<Option<(usize, Error)>>,
}

/// A batch being opened by the executor's helpers ([`Batch::start_open`]).
pub(crate) struct Opening<S> {
    batch: Batch,
    job: Arc<OpenJob<S>>,
    started: exec::Started,
    used: usize,
    kept: Range<usize>,
    layout: Layout,
}

impl<S: ChunkScheme> Opening<S> {
    /// Opens what no helper took on the calling thread, waits for the helpers' last chunks, and
    /// returns the opened batch (with `failed` set as `process` sets it).
    pub fn join(self) -> Batch {
        let Opening { mut batch, job, started, used, kept, layout } = self;
        started.join(); // drops the body, and with it its share of `job`
        let job = Arc::try_unwrap(job)
            .unwrap_or_else(|_| unreachable!("the started job held the only other share"));
        batch.buf = job.pieces.into_inner();
        batch.lens = job.at.lens;
        batch.failed = job.failed.into_inner().unwrap_or_else(|p| p.into_inner());
        if !batch.lens.is_empty() {
            batch.settle(&*job.cipher, &layout, &[], used, kept);
        }
        batch
    }
}

/// First read into a slot not yet allocated (see [`Filler::read_slot`]).
const GROW_FIRST: usize = 4 << 10;

/// Fills batches from a reader, deciding which chunk is final by reading one byte ahead.
pub(crate) struct Filler {
    carry: Option<u8>,
    pub next: u64,
    /// Whether the last batch came whole from at most two read calls: the input had it ready
    /// (memory, a file), as a pipe or socket, giving what has arrived (64 KiB at most from a
    /// pipe by default), seldom does.
    pub ready: bool,
}

impl Filler {
    pub fn starting_at(next: u64) -> Self {
        Filler { carry: None, next, ready: false }
    }

    /// Reads the next batch; returns whether it holds the final chunk (by `scheme`'s rule).
    pub fn fill(
        &mut self,
        r: &mut (impl Read + ?Sized),
        b: &mut Batch,
        layout: &Layout,
        scheme: &impl ChunkScheme,
    ) -> io::Result<bool> {
        b.reset(self.next);
        b.plaintext |= layout.dir == Dir::Seal;
        self.ready = false;
        let stride = layout.stride();
        let (mut total, mut eof) = (0, false);
        if b.buf.len() >= layout.slots * layout.cap() {
            total = self.read_allocated(r, b, layout)?;
            eof = total < layout.slots * stride;
        } else {
            for slot in 0..layout.slots {
                let n = self.read_slot(r, b, slot * layout.cap(), stride)?;
                total += n;
                if n < stride {
                    eof = true;
                    break;
                }
            }
        }
        if !eof {
            let mut one = [0u8; 1];
            match read_full(r, &mut one)? {
                0 => eof = true,
                _ => self.carry = Some(one[0]),
            }
        }
        let (count, last) = scheme.ready(total + usize::from(self.carry.is_some()), stride, eof, self.next);
        b.lens.extend((0..count).map(|i| (total - i * stride).min(stride)));
        b.last = last;
        self.next += count as u64;
        Ok(last)
    }

    /// Reads a whole batch into a buffer already allocated for it, in as few calls as the reader
    /// allows: one contiguous read when opening (slots hold `stride` bytes back to back), one
    /// vectored read over the slots when sealing (each slot is followed by room for its tag).
    /// A call per slot cost 65,536 reads per GiB of C2SP's 16 KiB chunks (with the writes, 28% of
    /// the CPU time of a 1 GiB decryption to /dev/null). Returns the bytes read; fewer than the batch's room
    /// means the input ended.
    fn read_allocated(
        &mut self,
        r: &mut (impl Read + ?Sized),
        b: &mut Batch,
        layout: &Layout,
    ) -> io::Result<usize> {
        let (cap, stride, room) = (layout.cap(), layout.stride(), layout.slots * layout.stride());
        let mut n = 0;
        if let Some(c) = self.carry.take() {
            b.buf[0] = c;
            n = 1;
        }
        if stride == cap {
            let got = read_full_counted(r, &mut b.buf[n..room])?;
            // Two calls: a buffered input's leftover (the byte read ahead filled its buffer), then
            // the rest straight from the input.
            self.ready = got.1 <= 2 && n + got.0 == room;
            return Ok(n + got.0);
        }
        let mut slots: Vec<IoSliceMut<'_>> =
            b.buf[..layout.slots * cap].chunks_mut(cap).map(|s| IoSliceMut::new(&mut s[..stride])).collect();
        let mut left = &mut slots[..];
        IoSliceMut::advance_slices(&mut left, n);
        while !left.is_empty() {
            match r.read_vectored(left) {
                Ok(0) => break,
                Ok(k) => {
                    n += k;
                    IoSliceMut::advance_slices(&mut left, k);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(n)
    }

    /// Reads up to `stride` bytes into the slot at `start`. Where the slot was never allocated
    /// the buffer grows as bytes arrive (4 KiB, then ×4), so a 1 KB file zeroes and faults in one
    /// page instead of a whole chunk; an allocated slot is read in one call.
    fn read_slot(
        &mut self,
        r: &mut (impl Read + ?Sized),
        b: &mut Batch,
        start: usize,
        stride: usize,
    ) -> io::Result<usize> {
        let mut n = 0;
        let mut want = if b.buf.len() >= start + stride { stride } else { GROW_FIRST.min(stride) };
        loop {
            b.grow(start + want);
            if let Some(c) = self.carry.take() {
                b.buf[start] = c;
                n = 1;
            }
            n += read_full(r, &mut b.buf[start + n..start + want])?;
            if n < want || want == stride {
                return Ok(n);
            }
            want = (want * 4).min(stride);
        }
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
pub(crate) fn read_full(r: &mut (impl Read + ?Sized), buf: &mut [u8]) -> io::Result<usize> {
    read_full_counted(r, buf).map(|(n, _)| n)
}

/// [`read_full`], and the number of calls that returned bytes.
fn read_full_counted(r: &mut (impl Read + ?Sized), buf: &mut [u8]) -> io::Result<(usize, usize)> {
    let (mut n, mut calls) = (0, 0);
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => (n, calls) = (n + k, calls + 1),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok((n, calls))
}

/// `Write::write_all_vectored`, which is not stable yet. A writer without a vectored write of
/// its own writes the first slice per call, so this is never worse than a loop of `write_all`.
fn write_all_vectored(w: &mut (impl Write + ?Sized), mut parts: &mut [IoSlice<'_>]) -> io::Result<()> {
    while !parts.is_empty() {
        match w.write_vectored(parts) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut parts, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
