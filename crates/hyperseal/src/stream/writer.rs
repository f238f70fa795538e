//! `Write` adapter that encrypts into a payload. Buffers one batch of chunks, seals a full batch
//! (in parallel when built with threads) only once more data arrives — holding back is how it
//! knows which chunk is the last — and seals the final chunk in [`StreamWriter::finish`].

use std::io::{self, Write};

use super::batch::{Batch, Dir, Layout};
use super::ChunkCipher;
use crate::Error;

/// Encrypting writer. Must be [`finish`](StreamWriter::finish)ed: dropping it unfinished loses
/// the buffered tail, and the output then fails to decrypt (as a truncated file).
pub struct StreamWriter<W: Write> {
    inner: Option<W>,
    cipher: ChunkCipher,
    layout: Layout,
    batch: Batch,
    threads: usize,
    /// Current slot and the bytes already in it.
    slot: usize,
    fill: usize,
    poisoned: bool,
}

impl<W: Write> StreamWriter<W> {
    /// Wraps `inner`; `threads > 1` seals full batches on that many threads.
    pub fn new(inner: W, cipher: ChunkCipher, threads: usize) -> Self {
        let layout = Layout::new(Dir::Seal, cipher.chunk_size(), threads);
        StreamWriter {
            inner: Some(inner),
            batch: Batch::new(&layout),
            threads,
            cipher,
            layout,
            slot: 0,
            fill: 0,
            poisoned: false,
        }
    }

    fn flush_batch(&mut self, last: bool) -> io::Result<()> {
        let chunk = self.layout.chunk;
        self.batch.lens.clear();
        self.batch.lens.extend(std::iter::repeat_n(chunk, self.slot));
        self.batch.lens.push(self.fill);
        self.batch.last = last;
        self.batch.process(&self.cipher, &self.layout, self.threads);
        let w = self.inner.as_mut().expect("writer used after finish");
        let r = self.batch.write_out(&self.layout, w);
        self.batch.first += self.batch.lens.len() as u64;
        self.slot = 0;
        self.fill = 0;
        r.map(|_| ())
    }

    /// Seals the final chunk, flushes, and returns the inner writer.
    pub fn finish(mut self) -> Result<W, Error> {
        if self.poisoned {
            return Err(Error::Io(io::Error::other("an earlier write failed")));
        }
        self.flush_batch(true)?;
        let mut w = self.inner.take().expect("finish called once");
        w.flush()?;
        Ok(w)
    }
}

impl<W: Write> Write for StreamWriter<W> {
    fn write(&mut self, mut data: &[u8]) -> io::Result<usize> {
        if self.poisoned {
            return Err(io::Error::other("an earlier write failed"));
        }
        let total = data.len();
        let chunk = self.layout.chunk;
        while !data.is_empty() {
            if self.fill == chunk {
                if self.slot + 1 == self.layout.slots {
                    // A full batch and more data: none of these chunks is the last.
                    if let Err(e) = self.flush_batch(false) {
                        self.poisoned = true;
                        return Err(e);
                    }
                } else {
                    self.slot += 1;
                    self.fill = 0;
                }
            }
            let k = (chunk - self.fill).min(data.len());
            let (slot, fill) = (self.slot, self.fill);
            self.batch.slot_mut(slot, &self.layout)[fill..fill + k].copy_from_slice(&data[..k]);
            self.fill += k;
            data = &data[k..];
        }
        Ok(total)
    }

    fn flush(&mut self) -> io::Result<()> {
        // Sealed chunks are written as soon as they are sealed; the tail waits for `finish`.
        self.inner.as_mut().map_or(Ok(()), |w| w.flush())
    }
}
