//! Large output buffers for the one-shot API, and for results in memory a host allocated.
//!
//! A one-shot encrypt or decrypt of a large input writes a fresh buffer of the same size. With
//! 4 KiB pages, the kernel's first-touch page faults cost more than the AEAD itself (perf, 500 MB
//! on the development machine, aws-lc AES-GCM: the fault path and page clearing took more
//! samples than the ~30% in AES-GCM; encrypt went from 2.7 to 6.0 GB/s with the hint). Asking for
//! transparent huge pages (`MADV_HUGEPAGE`; most distributions enable THP only on request) cuts
//! the faults 512-fold. It is a hint: the buffer's contents and safety are unchanged, and where
//! THP is off or unavailable nothing happens.

#![allow(unsafe_code)]

use std::mem::MaybeUninit;

/// Below this, faults are cheap and a 2 MiB page could not fit inside the buffer anyway.
const HUGE_MIN: usize = 8 << 20;

/// A zeroed buffer of `len` bytes for a large one-shot result ([`Encryptor::encrypt_into`],
/// [`Decryptor::decrypt_into`]): huge-page backed where the OS allows, and zeroed by the allocator (fresh
/// pages), so its pages are first touched by whichever thread fills them.
///
/// [`Encryptor::encrypt_into`]: crate::Encryptor::encrypt_into
/// [`Decryptor::decrypt_into`]: crate::Decryptor::decrypt_into
pub fn output_buffer(len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    if len >= HUGE_MIN {
        advise_huge(v.as_mut_ptr() as usize, v.len());
    }
    v
}

/// How [`zeroed_output`] asks the kernel to back a large region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pages {
    /// Transparent huge pages (`MADV_HUGEPAGE`): 512 times fewer first-touch faults, best where
    /// the memory is new to the process (a Python `bytes` result).
    Huge,
    /// The kernel's default 4 KiB pages, best where memory is recycled quickly: a host whose
    /// garbage collector has just freed the previous result (Node) gets those pages back
    /// without faults, while huge pages the hypervisor has not backed yet cost about 3 ms per
    /// 2 MiB on the 2-core VM this was measured on (100 MiB: 250–330 ms vs 60–80 ms).
    Base,
}

/// Zeroes `dst`, memory a host allocated for a large result and nobody has touched yet (a
/// Python `bytes` or Node `Buffer`), and returns it as bytes for a `_into` call to fill. A large
/// region is backed as `pages` asks and zeroed in 2 MiB pieces on the executor's threads, the
/// caller among them: there the first-touch faults cost more than the cipher that follows, and
/// the executor never makes the caller wait for a thread that has not started (scoped threads
/// did: a 256 MiB one-shot swung between 37 and 330 ms on a 2-core VM).
pub fn zeroed_output(dst: &mut [MaybeUninit<u8>], pages: Pages) -> &mut [u8] {
    const PIECE: usize = 2 << 20;
    let (at, len) = (dst.as_mut_ptr() as usize, dst.len());
    if len >= HUGE_MIN {
        if pages == Pages::Huge {
            advise_huge(at, len);
        }
        // Zeroing cannot fail, and each index writes its own piece, disjoint from every other.
        let _ = crate::exec::for_each(len.div_ceil(PIECE), 0, &|i| {
            let start = i * PIECE;
            // SAFETY: `start..start + n` lies inside `dst`, which we borrow mutably for the whole
            // call, and no two indices share a byte.
            unsafe { std::ptr::write_bytes((at + start) as *mut u8, 0, PIECE.min(len - start)) };
            Ok(())
        });
    } else {
        // SAFETY: as above, the whole of `dst`.
        unsafe { std::ptr::write_bytes(at as *mut u8, 0, len) };
    }
    // SAFETY: every byte of `dst` was initialised just above.
    unsafe { std::slice::from_raw_parts_mut(at as *mut u8, len) }
}

/// Overwrites `buf` with zeros that the optimiser may not remove, at `memset` speed: for large
/// buffers of plaintext (a one-shot's input copy, a failed open's output). `zeroize` writes a
/// byte slice one volatile store at a time (16 million for a 16 MB buffer, which the compiler
/// may not widen); here the stores are an ordinary fill, and passing the buffer to `black_box`
/// afterwards makes them observable, so the fill cannot be dropped as dead stores. Key material
/// keeps using `zeroize`.
pub fn wipe(buf: &mut [u8]) {
    buf.fill(0);
    std::hint::black_box(&mut *buf);
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
}

#[cfg(target_os = "linux")]
fn advise_huge(start: usize, len: usize) {
    const HUGE: usize = 2 << 20;
    let aligned = start.next_multiple_of(HUGE);
    let end = (start + len) / HUGE * HUGE;
    if end > aligned {
        // SAFETY: [aligned, end) lies inside the caller's buffer, which it borrows mutably, and
        // is page-aligned; MADV_HUGEPAGE changes only how the kernel backs the range, never its
        // contents, and failure (THP disabled, old kernel) is harmless, so the result is ignored.
        unsafe {
            libc::madvise(aligned as *mut libc::c_void, end - aligned, libc::MADV_HUGEPAGE);
        }
    }
}

/// Elsewhere (macOS, WebAssembly's linear memory) there is nothing to ask for.
#[cfg(not(target_os = "linux"))]
fn advise_huge(_: usize, _: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte comes back zero, whatever was there, on both sides of the size where the work
    /// is split into pieces (and a length that is not a whole number of them).
    #[test]
    fn zeroed_output_zeroes_every_byte() {
        for len in [0, 1, 4097, HUGE_MIN - 1, HUGE_MIN + (3 << 20) + 5] {
            let mut v = vec![MaybeUninit::new(0xa5u8); len];
            for pages in [Pages::Huge, Pages::Base] {
                let out = zeroed_output(&mut v, pages);
                assert_eq!(out.len(), len);
                assert!(out.iter().all(|&b| b == 0), "{len}");
                out.fill(0xa5);
            }
        }
    }

    /// The wipe reaches every byte of buffers of every length class.
    #[test]
    fn wipe_zeroes_every_byte() {
        for len in [0, 1, 15, 4097, (1 << 20) + 3] {
            let mut v = vec![0x5au8; len];
            wipe(&mut v);
            assert!(v.iter().all(|&b| b == 0), "{len}");
        }
    }
}
