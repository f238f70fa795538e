//! Byte identity of every engine path with a fixed key (the public API draws fresh keys, so
//! only here can outputs be compared byte for byte), and the executor's contracts.

use std::io::{self, IoSlice, Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};

use zeroize::Zeroizing;

use super::*;
use crate::exec::{self, Made};

fn cipher(suite: Suite) -> ChunkCipher {
    ChunkCipher::new(suite, 16 << 10, &Zeroizing::new([42u8; 32])).unwrap()
}

fn data(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 + i / 977) as u8).collect()
}

#[test]
fn nonce_layout() {
    assert_eq!(nonce(1, true), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1]);
    assert_eq!(nonce(0x0102, false)[9..], [1, 2, 0]);
}

#[test]
fn ready_is_the_final_chunk_rule() {
    assert_eq!(ready(0, 10, false, 0), (0, false));
    assert_eq!(ready(10, 10, false, 0), (0, false), "a full chunk alone may be the final one");
    assert_eq!(ready(11, 10, false, 0), (1, false));
    assert_eq!(ready(0, 10, true, 0), (1, true), "an empty payload is one empty final chunk");
    assert_eq!(ready(0, 10, true, 3), (0, true));
    assert_eq!(ready(20, 10, true, 0), (2, true));
    assert_eq!(ready(21, 10, true, 0), (3, true));
}

#[test]
fn every_path_gives_the_same_bytes() {
    for suite in Suite::ALL {
        // Around 1 MiB: where `engine::stream` hands over from the calling thread to the executor.
        for n in [0usize, 1, 16 << 10, (16 << 10) + 1, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, (5 << 20) + 3] {
            let pt = data(n);
            let c = cipher(suite);
            let mut reference = vec![0u8; sealed_len(c.chunk_size(), n)];
            seal_run(&c, 0, &pt, true, &mut reference, 1);
            for threads in [1, 2, 3, 8] {
                let mut a = Vec::new();
                stream(&c, Dir::Seal, Input::Reader(&mut &pt[..]), &mut a, threads, None).unwrap();
                assert!(a == reference, "{suite} n={n} reader t={threads}");
                let mut b = Vec::new();
                stream(&c, Dir::Seal, Input::Slice(&pt), &mut b, threads, None).unwrap();
                assert!(b == reference, "{suite} n={n} slice t={threads}");
                let mut d = vec![0xa5u8; reference.len()];
                seal_run(&c, 0, &pt, true, &mut d, threads);
                assert!(d == reference, "{suite} n={n} into t={threads}");
                for piece in [1usize, 4095, 70_000] {
                    if n > 1 << 20 && piece < 4095 {
                        continue;
                    }
                    let mut s = PayloadSealer::new(cipher(suite), threads);
                    let mut e = Vec::new();
                    pt.chunks(piece).for_each(|p| s.update(p, &mut e));
                    s.finish(&mut e);
                    assert!(e == reference, "{suite} n={n} sealer pieces={piece} t={threads}");
                }
                let mut w = StreamWriter::new(Vec::new(), PayloadSealer::new(cipher(suite), threads));
                w.write_all(&pt).unwrap();
                assert!(w.finish().unwrap() == reference);

                let mut back = Vec::new();
                assert_eq!(
                    stream(&c, Dir::Open, Input::Reader(&mut &reference[..]), &mut back, threads, None)
                        .unwrap(),
                    n as u64
                );
                assert!(back == pt);
                let mut back = vec![0u8; reference.len()];
                assert_eq!(open_run(&c, 0, &reference, true, &mut back, threads).unwrap(), n);
                assert!(back[..n] == pt[..]);
                let mut o = PayloadOpener::new(cipher(suite), threads);
                let mut back = Vec::new();
                reference.chunks(70_000).try_for_each(|p| o.update(p, &mut back)).unwrap();
                o.finish(&mut back).unwrap();
                assert!(back == pt);
            }
        }
    }
}

/// A reader or writer that moves at most `step` bytes per call, vectored or not (its vectored
/// read is std's default: the first buffer only).
struct Trickle<T> {
    inner: T,
    step: usize,
}

impl Read for Trickle<&[u8]> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(self.step);
        self.inner.read(&mut buf[..n])
    }
}

impl Write for Trickle<Vec<u8>> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_vectored(&[IoSlice::new(buf)])
    }
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let mut left = self.step;
        for b in bufs {
            if left == 0 {
                break;
            }
            let n = b.len().min(left);
            self.inner.extend_from_slice(&b[..n]);
            left -= n;
        }
        Ok(self.step - left)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Batches are read and written in one gathering call each: short reads and short writes that
/// stop inside a chunk, or inside a tag, must lose and repeat nothing.
#[test]
fn short_reads_and_writes_lose_nothing() {
    let c = cipher(Suite::ALL[0]);
    for n in [0usize, 1, (1 << 20) + 5, (3 << 20) + 17] {
        let pt = data(n);
        let mut reference = vec![0u8; sealed_len(c.chunk_size(), n)];
        seal_run(&c, 0, &pt, true, &mut reference, 1);
        for step in [1000, 16_400, 100_003] {
            for threads in [1, 2] {
                let mut out = Trickle { inner: Vec::new(), step };
                let mut input = Trickle { inner: &pt[..], step };
                stream(&c, Dir::Seal, Input::Reader(&mut input), &mut out, threads, None).unwrap();
                assert!(out.inner == reference, "seal n={n} step={step} t={threads}");
                let mut out = Trickle { inner: Vec::new(), step };
                let mut input = Trickle { inner: &reference[..], step };
                stream(&c, Dir::Open, Input::Reader(&mut input), &mut out, threads, None).unwrap();
                assert!(out.inner == pt, "open n={n} step={step} t={threads}");
            }
        }
    }
}

#[test]
fn for_each_reports_the_lowest_failing_index() {
    for threads in [1, 2, 4] {
        let r = exec::for_each(100, threads, &|i| {
            if i % 30 == 17 {
                Err(Error::ChunkAuth(i as u64))
            } else {
                Ok(())
            }
        });
        assert!(matches!(r, Err((17, Error::ChunkAuth(17)))), "{r:?}");
    }
}

#[test]
fn ordered_keeps_order_and_bounds_units() {
    for threads in [1, 2, 4] {
        let (mut next, mut got) = (0u32, Vec::new());
        let live = AtomicUsize::new(0);
        let r: Result<(), Error> = exec::ordered(
            vec![(0u32, 0u32); 3],
            threads,
            |u| {
                *u = (next, 0);
                next += 1;
                Ok(if next == 500 { Made::Last } else { Made::More })
            },
            |u| {
                let now = live.fetch_add(1, Ordering::SeqCst) + 1;
                assert!(now <= 3, "more units in flight than given");
                // Uneven work, so units finish out of order.
                let spin = (u.0 * 7919) % 5000;
                u.1 = (0..spin).fold(u.0, |a, b| a.wrapping_mul(31).wrapping_add(b));
                live.fetch_sub(1, Ordering::SeqCst);
            },
            |u| {
                got.push(u.0);
                Ok(true)
            },
        );
        r.unwrap();
        assert_eq!(got, (0..500).collect::<Vec<_>>(), "threads={threads}");
    }
}

#[test]
fn ordered_stops_at_the_first_error() {
    let mut n = 0;
    let r = exec::ordered(
        vec![0u32; 4],
        2,
        |u| {
            *u = n;
            n += 1;
            Ok(Made::More)
        },
        |_| {},
        |u| if *u == 40 { Err(Error::ChunkAuth(40)) } else { Ok(true) },
    );
    assert!(matches!(r, Err(Error::ChunkAuth(40))));
    assert!(n < 50, "production stops soon after an error (made {n})");
}

#[test]
fn concurrent_callers_all_finish() {
    let c = cipher(Suite::Aes256Gcm);
    let pt = data(3 << 20);
    let mut reference = vec![0u8; sealed_len(c.chunk_size(), pt.len())];
    seal_run(&c, 0, &pt, true, &mut reference, 1);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..5 {
                    let mut out = vec![0u8; reference.len()];
                    seal_run(&c, 0, &pt, true, &mut out, 2);
                    assert!(out == reference);
                }
            });
        }
    });
}

/// Jobs that run at once share the helpers: a job started while another holds them gets one as
/// soon as it comes free (an executor that served one job at a time left the second on its
/// caller alone: Node's four `encryptFile` calls at once, a tree's files beside a large file).
#[test]
fn a_job_started_beside_another_gets_a_helper() {
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    use std::time::{Duration, Instant};
    if exec::available_threads() < 2 {
        return; // one CPU: no helpers at all
    }
    let wait = |done: &dyn Fn() -> bool| {
        let until = Instant::now() + Duration::from_secs(20);
        while !done() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    let (a_in, b_started, b_in) = (AtomicUsize::new(0), AtomicBool::new(false), AtomicUsize::new(0));
    std::thread::scope(|s| {
        // Job A: every copy (the caller's and each helper's) stays until job B has started.
        s.spawn(|| {
            exec::run(0, &|| {
                a_in.fetch_add(1, SeqCst);
                wait(&|| b_started.load(SeqCst));
            })
        });
        wait(&|| a_in.load(SeqCst) >= 2);
        assert!(a_in.load(SeqCst) >= 2, "the first job got no helper");
        // Job B: its caller's copy waits for a helper to join it.
        exec::run(2, &|| {
            let me = b_in.fetch_add(1, SeqCst) + 1;
            b_started.store(true, SeqCst);
            if me == 1 {
                wait(&|| b_in.load(SeqCst) >= 2);
            }
        });
        assert!(b_in.load(SeqCst) >= 2, "the second job ran on its caller alone");
    });
}
