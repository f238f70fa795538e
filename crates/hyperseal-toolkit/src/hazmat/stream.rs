//! Streaming the legacy modes in constant memory, across cores.
//!
//! Three stages overlap: a reader thread fills batches, the calling thread transforms each batch
//! (split into one piece per core with rayon, except CBC encryption, which is serial by
//! construction), a writer thread writes them out. [`DEPTH`] batches of [`BATCH`] bytes circulate,
//! so memory stays near `DEPTH × BATCH` whatever the input size. Overlapping the reads and writes
//! with the cipher is what lets even serial CBC encryption beat a tool that alternates them.
//!
//! Batches are always full except the last, and [`BATCH`] is a multiple of 16, so every batch but
//! the last is whole blocks. Decryption in a padded mode holds the last block of each batch back
//! (the padding can only be checked on the block that turns out to be last) and puts it in front
//! of the next batch, in the [`HEAD`] room kept there.

use std::io::{self, Read, Write};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender, TryRecvError};

use rayon::prelude::*;
use zeroize::Zeroize;

use super::ops::{pad, unpad, Keyed};
use super::IV_LEN;
use crate::{Error, Result};

/// Bytes read per batch: large enough that per-batch costs (a rayon split, a channel hand-off,
/// one `read`/`write` pair) vanish, small enough that `DEPTH` of them stay far below 64 MiB.
pub(crate) const BATCH: usize = 4 << 20;
/// Batches in circulation: one being read, one being transformed, one being written, one spare.
const DEPTH: usize = 4;
/// Room in front of a batch for the block held back from the previous one.
const HEAD: usize = IV_LEN;
/// Below this, a batch is not worth splitting across threads.
const MIN_PIECE: usize = 64 << 10;

/// A batch buffer. Allocated only when needed (a small input uses one) and wiped on drop up to
/// the highest byte ever written, so a small input does not pay for faulting in and zeroing
/// every page of `DEPTH` large buffers.
struct Buf {
    bytes: Vec<u8>,
    dirty: usize,
}

impl Drop for Buf {
    fn drop(&mut self) {
        self.bytes[..self.dirty].zeroize();
    }
}

/// A batch from the reader: the buffer, the bytes read into it after [`HEAD`], and whether the
/// input ended.
struct Filled {
    buf: Buf,
    len: usize,
    eof: bool,
}

/// Runs `keyed` over everything `input` yields and writes the result to `output`, starting from
/// chain value `iv` (zero for ECB). Returns the number of bytes written.
pub(crate) fn run<R: Read + Send, W: Write + Send>(
    keyed: &Keyed,
    iv: [u8; IV_LEN],
    input: R,
    output: W,
    batch: usize,
    decrypt: bool,
) -> Result<u64> {
    assert!(batch >= IV_LEN && batch.is_multiple_of(IV_LEN), "batch must be whole blocks");
    let (free_tx, free_rx) = channel::<Buf>();
    let (full_tx, full_rx) = sync_channel::<io::Result<Filled>>(1);
    let (done_tx, done_rx) = sync_channel::<(Buf, std::ops::Range<usize>)>(1);
    std::thread::scope(|s| {
        let reader = s.spawn(move || read_batches(input, batch, &free_rx, &full_tx));
        let writer = s.spawn(move || write_batches(output, &done_rx, &free_tx));
        let transformed = transform(keyed, iv, decrypt, &full_rx, &done_tx);
        // Close our ends first, so a stage still waiting on us sees the end.
        drop((full_rx, done_tx));
        let written = writer.join().expect("writer thread");
        // The reader reports its errors through the channel.
        reader.join().expect("reader thread");
        // The first failure is the cause; a stage that stopped because another did is not.
        match (transformed, written) {
            (Err(Stop::Failed(e)), _) => Err(e),
            (_, Err(e)) => Err(Error::Io(io::Error::new(e.kind(), format!("writing output: {e}")))),
            (Err(Stop::Read(e)), _) => {
                Err(Error::Io(io::Error::new(e.kind(), format!("reading input: {e}"))))
            }
            (Err(Stop::Hangup), _) => Err(Error::Io(io::Error::other("output stopped"))),
            (Ok(n), Ok(())) => Ok(n),
        }
    })
}

/// Why the transform stage stopped early.
enum Stop {
    /// The reader failed (its error).
    Read(io::Error),
    /// The writer hung up (its own error says why).
    Hangup,
    /// The cipher or the padding check failed.
    Failed(Error),
}

fn read_batches<R: Read>(
    mut input: R,
    batch: usize,
    free: &Receiver<Buf>,
    full: &SyncSender<io::Result<Filled>>,
) {
    let mut allocated = 0;
    loop {
        let mut buf = match free.try_recv() {
            Ok(buf) => buf,
            Err(TryRecvError::Empty) if allocated < DEPTH => {
                allocated += 1;
                // The spare 16 bytes at the end take the padding block of the last batch.
                Buf { bytes: vec![0u8; HEAD + batch + IV_LEN], dirty: 0 }
            }
            Err(TryRecvError::Empty) => match free.recv() {
                Ok(buf) => buf,
                Err(_) => return,
            },
            Err(TryRecvError::Disconnected) => return,
        };
        let filled = fill(&mut input, &mut buf.bytes[HEAD..HEAD + batch]);
        // Everything a read may have touched, and the padding block after it.
        let touched = filled.as_ref().map_or(buf.bytes.len(), |n| HEAD + n + IV_LEN);
        buf.dirty = buf.dirty.max(touched);
        let eof = !matches!(filled, Ok(n) if n == batch);
        let msg = filled.map(|len| Filled { buf, len, eof });
        let failed = msg.is_err();
        if full.send(msg).is_err() || eof || failed {
            return;
        }
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn fill<R: Read>(input: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

fn write_batches<W: Write>(
    mut output: W,
    done: &Receiver<(Buf, std::ops::Range<usize>)>,
    free: &Sender<Buf>,
) -> io::Result<()> {
    while let Ok((buf, range)) = done.recv() {
        output.write_all(&buf.bytes[range])?;
        // The reader may have finished and gone: then the buffer is simply dropped (zeroized).
        let _ = free.send(buf);
    }
    output.flush()
}

fn transform(
    keyed: &Keyed,
    iv: [u8; IV_LEN],
    decrypt: bool,
    full: &Receiver<io::Result<Filled>>,
    done: &SyncSender<(Buf, std::ops::Range<usize>)>,
) -> std::result::Result<u64, Stop> {
    let mut chain = iv;
    // The block held back from the previous batch (padded decryption only).
    let mut held: Option<[u8; IV_LEN]> = None;
    let mut total = 0u64;
    loop {
        let Filled { mut buf, len, eof } = match full.recv() {
            Ok(Ok(f)) => f,
            Ok(Err(e)) => return Err(Stop::Read(e)),
            Err(_) => return Err(Stop::Hangup),
        };
        let mut start = HEAD;
        if let Some(block) = held.take() {
            start -= IV_LEN;
            buf.bytes[start..HEAD].copy_from_slice(&block);
        }
        let mut end = HEAD + len;
        let hold_back = decrypt && keyed.pads() && !eof;
        if hold_back {
            // Non-final batches are full, so this leaves whole blocks and at least one held.
            let block: [u8; IV_LEN] = buf.bytes[end - IV_LEN..end].try_into().expect("one block");
            held = Some(block);
            end -= IV_LEN;
        } else if eof && keyed.pads() && !decrypt {
            end = start + pad(&mut buf.bytes[start..], end - start);
        } else if eof && keyed.pads() && (end == start || !(end - start).is_multiple_of(IV_LEN)) {
            // Padded ciphertext is one or more whole blocks.
            return Err(Stop::Failed(Error::Crypto));
        }
        process(keyed, &mut buf.bytes[start..end], &mut chain).map_err(Stop::Failed)?;
        if eof && decrypt && keyed.pads() {
            let last: [u8; IV_LEN] = buf.bytes[end - IV_LEN..end].try_into().expect("one block");
            end -= unpad(&last).map_err(Stop::Failed)?;
        }
        total += (end - start) as u64;
        done.send((buf, start..end)).map_err(|_| Stop::Hangup)?;
        if eof {
            return Ok(total);
        }
    }
}

/// Transforms `data` (the next run of the stream) and advances `chain` past it.
fn process(keyed: &Keyed, data: &mut [u8], chain: &mut [u8; IV_LEN]) -> Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    let n = data.len();
    // The chain value after `data`, read before `data` is overwritten (CBC decryption needs the
    // last ciphertext block); CBC encryption's is its last output block, taken after.
    let next = keyed.chain_at(data, *chain, n.div_ceil(IV_LEN) * IV_LEN);
    let threads = rayon::current_num_threads();
    if !keyed.parallel() || threads < 2 || n < 2 * MIN_PIECE {
        keyed.apply(data, *chain)?;
    } else {
        let piece = n.div_ceil(threads).div_ceil(IV_LEN).max(MIN_PIECE / IV_LEN) * IV_LEN;
        let starts: Vec<[u8; IV_LEN]> =
            (0..n.div_ceil(piece)).map(|i| keyed.chain_at(data, *chain, i * piece)).collect();
        data.par_chunks_mut(piece).zip(starts).try_for_each(|(p, at)| keyed.apply(p, at))?;
    }
    *chain = if keyed.parallel() { next } else { data[n - IV_LEN..].try_into().expect("one block") };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::Cipher;
    use super::*;

    fn data(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i as u32).wrapping_mul(2_654_435_761).to_be_bytes()[0]).collect()
    }

    /// Streaming gives the one-shot bytes at every length around the batch and slice
    /// boundaries, in both directions, for every cipher: with tiny batches (many hold-backs and
    /// carries) and with batches large enough to be split across threads.
    #[test]
    fn streaming_equals_one_shot_around_boundaries() {
        let iv = [0xa5u8; 16];
        for (batch, lens) in [
            (48usize, vec![0usize, 1, 15, 16, 17, 31, 32, 47, 48, 49, 63, 64, 65, 95, 96, 97, 200]),
            (
                256 << 10,
                vec![(128 << 10) - 1, 256 << 10, (256 << 10) + 1, (512 << 10) - 16, (768 << 10) + 17],
            ),
        ] {
            for c in Cipher::ALL {
                let key = vec![0x3cu8; c.key_len];
                let iv = c.needs_iv().then_some(&iv[..]);
                let at = c.iv(iv).unwrap().unwrap_or_default();
                for &n in &lens {
                    let pt = data(n);
                    let want = c.encrypt(&key, iv, &pt).unwrap();
                    let mut ct = Vec::new();
                    let k = Keyed::new(c, &key, false).unwrap();
                    let wrote = run(&k, at, &pt[..], &mut ct, batch, false).unwrap();
                    assert_eq!(wrote as usize, ct.len());
                    assert!(ct == want, "{c} encrypt, {n} bytes, batch {batch}");
                    let mut back = Vec::new();
                    let k = Keyed::new(c, &key, true).unwrap();
                    run(&k, at, &ct[..], &mut back, batch, true).unwrap();
                    assert!(back == pt, "{c} decrypt, {n} bytes, batch {batch}");
                }
            }
        }
    }

    #[test]
    fn bad_lengths_and_padding_are_crypto_errors() {
        let c = Cipher::parse("aes-128-cbc").unwrap();
        let (key, iv) = ([1u8; 16], [2u8; 16]);
        let k = Keyed::new(c, &key, true).unwrap();
        for n in [0usize, 15, 17, 64 + 1] {
            let r = run(&k, iv, &data(n)[..], io::sink(), 32, true);
            assert!(matches!(r, Err(Error::Crypto)), "{n} bytes");
        }
        let mut ct = c.encrypt(&key, Some(&iv), &data(100)).unwrap();
        *ct.last_mut().unwrap() ^= 0x55;
        let r = run(&k, iv, &ct[..], io::sink(), 32, true);
        assert!(matches!(r, Err(Error::Crypto)), "corrupted padding");
    }

    /// A failing reader or writer ends the stream with its error, named by side.
    #[test]
    fn io_errors_name_their_side() {
        struct Broken;
        impl Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("disk on fire"))
            }
        }
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::new(io::ErrorKind::StorageFull, "no space"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let c = Cipher::parse("sm4-ctr").unwrap();
        let k = Keyed::new(c, &[0u8; 16], false).unwrap();
        let e = run(&k, [0; 16], Broken, io::sink(), 64, false).unwrap_err().to_string();
        assert!(e.starts_with("reading input: disk on fire"), "{e}");
        let e = run(&k, [0; 16], &data(1000)[..], Broken, 64, false).unwrap_err().to_string();
        assert!(e.starts_with("writing output: no space"), "{e}");
    }
}
