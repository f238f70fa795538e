//! Streaming the legacy modes in constant memory, across cores, on the library's one executor
//! (`hyperseal::exec::ordered`): the calling thread reads batches and writes them in order,
//! and every free thread (the caller too, when it has nothing to read or write) transforms
//! them. [`DEPTH`] batches of [`BATCH`] bytes circulate, so memory stays near `DEPTH × BATCH`
//! whatever the input size, and reading and writing overlap the cipher, which is what lets even
//! serial CBC encryption beat a tool that alternates them.
//!
//! Every mode but CBC encryption knows each batch's chain value before the batch is processed
//! (CTR: the counter at its offset; CBC decryption: the previous ciphertext block; ECB: none),
//! so batches are transformed at the same time. CBC encryption needs the previous batch's last
//! output block: its batches pass a baton, in order.
//!
//! Batches are always full except the last, and [`BATCH`] is a multiple of 16, so every batch but
//! the last is whole blocks. Decryption in a padded mode holds the last block of each batch back
//! (the padding can only be checked on the block that turns out to be last) and puts it in front
//! of the next batch, in the [`HEAD`] room kept there.

use std::io::{self, Read, Write};
use std::sync::{Condvar, Mutex};

use hyperseal::exec::{self, Made};
use zeroize::Zeroize;

use super::ops::{pad, unpad, Keyed};
use super::IV_LEN;
use crate::{Error, Result};

/// Bytes read per batch: large enough that per-batch costs (a hand-over between threads, one
/// `read`/`write` pair) vanish, small enough that `DEPTH` of them stay far below 64 MiB.
pub(crate) const BATCH: usize = 4 << 20;
/// Batches in circulation: one being read, two being transformed, one being written.
const DEPTH: usize = 4;
/// Room in front of a batch for the block held back from the previous one.
const HEAD: usize = IV_LEN;

/// A batch: its buffer (allocated on first use, so a small input pays for one, and wiped on
/// drop up to the highest byte ever written), the range to transform and write, its chain value
/// (parallel modes), its place in the stream, and the failure of its transform.
#[derive(Default)]
struct Unit {
    bytes: Vec<u8>,
    dirty: usize,
    start: usize,
    end: usize,
    chain: [u8; IV_LEN],
    seq: u64,
    last: bool,
    failed: Option<Error>,
}

impl Drop for Unit {
    fn drop(&mut self) {
        self.bytes[..self.dirty].zeroize();
    }
}

/// CBC encryption's chain across batches: the next batch allowed to start, and its chain value.
struct Baton {
    state: Mutex<(u64, [u8; IV_LEN])>,
    turn: Condvar,
}

/// Runs `keyed` over everything `input` yields and writes the result to `output`, starting from
/// chain value `iv` (zero for ECB). Returns the number of bytes written.
pub(crate) fn run<R: Read + Send, W: Write + Send>(
    keyed: &Keyed,
    iv: [u8; IV_LEN],
    mut input: R,
    mut output: W,
    batch: usize,
    decrypt: bool,
) -> Result<u64> {
    assert!(batch >= IV_LEN && batch.is_multiple_of(IV_LEN), "batch must be whole blocks");
    let pads = keyed.pads();
    let (mut chain, mut held, mut seq) = (iv, None::<[u8; IV_LEN]>, 0u64);
    let produce = |u: &mut Unit| -> Result<Made> {
        if u.bytes.is_empty() {
            // The spare 16 bytes at the end take the padding block of the last batch.
            u.bytes = vec![0u8; HEAD + batch + IV_LEN];
        }
        let n =
            fill(&mut input, &mut u.bytes[HEAD..HEAD + batch]).map_err(|e| io_error("reading input", e))?;
        // Everything a read may have touched, and the padding block after it.
        u.dirty = u.dirty.max(HEAD + n + IV_LEN);
        let eof = n < batch;
        let (mut start, mut end) = (HEAD, HEAD + n);
        if let Some(block) = held.take() {
            start -= IV_LEN;
            u.bytes[start..HEAD].copy_from_slice(&block);
        }
        if decrypt && pads && !eof {
            // Non-final batches are full, so this leaves whole blocks and at least one held.
            held = Some(u.bytes[end - IV_LEN..end].try_into().expect("one block"));
            end -= IV_LEN;
        } else if eof && pads && !decrypt {
            end = start + pad(&mut u.bytes[start..], end - start);
        } else if eof && pads && (end == start || !(end - start).is_multiple_of(IV_LEN)) {
            // Padded ciphertext is one or more whole blocks.
            return Err(Error::Crypto);
        }
        // The chain value after this batch, read before it is overwritten (CBC decryption
        // needs its last ciphertext block). CBC encryption's comes from the baton instead.
        let data = &u.bytes[start..end];
        (u.start, u.end, u.chain, u.seq, u.last, u.failed) = (start, end, chain, seq, eof, None);
        chain = keyed.chain_at(data, chain, data.len().div_ceil(IV_LEN) * IV_LEN);
        seq += 1;
        Ok(if eof { Made::Last } else { Made::More })
    };
    let baton = Baton { state: Mutex::new((0, iv)), turn: Condvar::new() };
    let work = |u: &mut Unit| {
        let data = &mut u.bytes[u.start..u.end];
        let r =
            if keyed.parallel() { keyed.apply(data, u.chain) } else { serial(keyed, &baton, u.seq, data) };
        let r = r.and_then(|()| match (u.last && decrypt && pads, data.len()) {
            (true, n) if n >= IV_LEN => {
                u.end -= unpad(data[n - IV_LEN..].try_into().expect("one block"))?;
                Ok(())
            }
            _ => Ok(()),
        });
        u.failed = r.err();
    };
    let mut total = 0u64;
    let consume = |u: &mut Unit| -> Result<bool> {
        if let Some(e) = u.failed.take() {
            return Err(e);
        }
        output.write_all(&u.bytes[u.start..u.end]).map_err(|e| io_error("writing output", e))?;
        total += (u.end - u.start) as u64;
        Ok(true)
    };
    let units = std::iter::repeat_with(Unit::default).take(DEPTH).collect();
    exec::ordered(units, 0, produce, work, consume)?;
    output.flush().map_err(|e| io_error("writing output", e))?;
    Ok(total)
}

/// CBC encryption of batch `seq`: waits for the batch before it, then hands the chain on. The
/// baton moves even when this batch fails or unwinds, so no later batch waits forever.
fn serial(keyed: &Keyed, baton: &Baton, seq: u64, data: &mut [u8]) -> Result<()> {
    let mut st = baton.state.lock().unwrap_or_else(|p| p.into_inner());
    while st.0 != seq {
        st = baton.turn.wait(st).unwrap_or_else(|p| p.into_inner());
    }
    struct Pass<'a>(&'a Baton);
    impl Drop for Pass<'_> {
        fn drop(&mut self) {
            self.0.turn.notify_all();
        }
    }
    let _pass = Pass(baton);
    st.0 += 1;
    keyed.apply(data, st.1)?;
    if let Some(last) = data.len().checked_sub(IV_LEN) {
        st.1 = data[last..].try_into().expect("one block");
    }
    Ok(())
}

fn io_error(side: &str, e: io::Error) -> Error {
    Error::Io(io::Error::new(e.kind(), format!("{side}: {e}")))
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
