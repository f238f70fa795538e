//! Large output buffers for the one-shot API.
//!
//! A one-shot encrypt or decrypt of a large input writes a fresh buffer of the same size. With
//! 4 KiB pages, the kernel's first-touch page faults cost more than the AEAD itself (perf, 500 MB
//! on the development machine, aws-lc AES-GCM: the fault path and page clearing took more
//! samples than the ~30% in AES-GCM; encrypt went from 2.7 to 6.0 GB/s with the hint). Asking for
//! transparent huge pages (`MADV_HUGEPAGE`; most distributions enable THP only on request) cuts
//! the faults 512-fold. It is a hint: the buffer's contents and safety are unchanged, and where
//! THP is off or unavailable nothing happens.

#![allow(unsafe_code)]

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
        advise_huge(&mut v);
    }
    v
}

#[cfg(target_os = "linux")]
fn advise_huge(buf: &mut [u8]) {
    const HUGE: usize = 2 << 20;
    let start = buf.as_mut_ptr() as usize;
    let aligned = start.next_multiple_of(HUGE);
    let end = (start + buf.len()) / HUGE * HUGE;
    if end > aligned {
        // SAFETY: [aligned, end) lies inside `buf`, which we borrow mutably, and is page-aligned;
        // MADV_HUGEPAGE changes only how the kernel backs the range, never its contents, and
        // failure (THP disabled, old kernel) is harmless, so the result is ignored.
        unsafe {
            libc::madvise(aligned as *mut libc::c_void, end - aligned, libc::MADV_HUGEPAGE);
        }
    }
}

/// Elsewhere (macOS, WebAssembly's linear memory) there is nothing to ask for.
#[cfg(not(target_os = "linux"))]
fn advise_huge(_: &mut [u8]) {}
