//! Recycled memory for large results of the one-shot buffer API.
//!
//! Why: a result in fresh memory costs the kernel's first-touch faults and page zeroing (perf of
//! 100 MB encrypts on the development machine: `clear_page` 21% of samples beside 30% for
//! AES-GCM), and the virtual machine adds more on memory the process has not used yet; measured
//! 10–20% faster per 100 MB async call with recycling than with fresh huge-page memory. Results are handed to JS as external buffers over
//! our memory; when JS's garbage collector frees one, its memory comes back here and the next
//! large call writes into it again, which costs no faults.
//!
//! Bounds: only buffers of 8 MiB and more, at most [`MAX_KEPT`] of them and [`MAX_BYTES`] in
//! total; memory beyond that goes back to the OS at once. Kept memory is marked `MADV_FREE`, so
//! the kernel may take it back under memory pressure (it then reads as zeros, which is harmless
//! since every reported byte is overwritten before use). Stale contents are never visible: a JS
//! buffer spans exactly the bytes written for it.

#![allow(unsafe_code)]

use std::sync::Mutex;

use napi::bindgen_prelude::{Buffer, BufferSlice};
use napi::Env;

/// Below this, fresh memory is cheap and results are plain buffers.
pub const MIN_LEN: usize = 8 << 20;
const MAX_KEPT: usize = 2;
const MAX_BYTES: usize = 1 << 30;

static KEPT: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// A buffer of at least `len` initialized bytes: recycled if one fits (without wasting more
/// than a quarter of it), else fresh (`hyperseal::output_buffer`: huge pages where possible).
pub fn take(len: usize) -> Vec<u8> {
    if len >= MIN_LEN {
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = kept.iter().position(|v| v.len() >= len && v.len() - len <= v.len() / 4) {
            return kept.swap_remove(i);
        }
    }
    hyperseal::output_buffer(len)
}

/// Takes back a buffer JS no longer uses (or a result that was never handed out).
pub fn give_back(v: Vec<u8>) {
    if v.len() < MIN_LEN {
        return;
    }
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    let total: usize = kept.iter().map(Vec::len).sum();
    if kept.len() < MAX_KEPT && total + v.len() <= MAX_BYTES {
        lazy_free(&v);
        kept.push(v);
    }
}

#[cfg(target_os = "linux")]
fn lazy_free(v: &[u8]) {
    const PAGE: usize = 4096;
    let start = (v.as_ptr() as usize).next_multiple_of(PAGE);
    let end = (v.as_ptr() as usize + v.len()) / PAGE * PAGE;
    if end > start {
        // SAFETY: the range lies inside `v`, which nobody else references (JS has released it
        // or never had it), and is page-aligned. MADV_FREE lets the kernel drop the pages; a
        // dropped page reads back as zeros and is rewritten before any byte of it is exposed.
        // Failure (an old kernel) only means the memory stays resident.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_FREE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn lazy_free(_: &[u8]) {}

/// Hands the first `len` bytes of `v` to JS. Large buffers become external buffers whose memory
/// returns to the pool when collected; small ones are copied or moved as plain buffers.
pub fn to_js_buffer(env: &Env, mut v: Vec<u8>, len: usize) -> napi::Result<Buffer> {
    if v.len() < MIN_LEN {
        v.truncate(len);
        return Ok(Buffer::from(v));
    }
    if len < MIN_LEN {
        let small = Buffer::from(v[..len].to_vec());
        give_back(v);
        return Ok(small);
    }
    let ptr = v.as_mut_ptr();
    // SAFETY: `ptr` points at `v`'s heap block, which holds at least `len` initialized bytes and
    // stays put while `v` lives: `v` is moved (its heap block is not) into the finalize hint and
    // dropped or pooled only by the finalizer, after JS has released the buffer.
    let slice = unsafe { BufferSlice::from_external(env, ptr, len, v, |_, v| give_back(v)) }?;
    slice.into_buffer(env)
}
