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

use std::mem::MaybeUninit;
use std::ptr;
use std::sync::Mutex;

use hyperseal::Pages;

use napi::bindgen_prelude::{Buffer, BufferSlice, FromNapiValue};
use napi::{sys, Env};

use crate::errors::Fail;

/// Below this, fresh memory is cheap and results are plain buffers.
pub const MIN_LEN: usize = 8 << 20;
const MAX_KEPT: usize = 2;
const MAX_BYTES: usize = 1 << 30;

static KEPT: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// A buffer of at least `len` initialized bytes: recycled if one fits (without wasting more
/// than a quarter of it), else fresh, zeroed over all cores in 4 KiB pages (`hyperseal::Pages::Base` says why not huge ones).
pub fn take(len: usize) -> Vec<u8> {
    take_kept(len).unwrap_or_else(|| fresh(len))
}

fn fresh(len: usize) -> Vec<u8> {
    if len < MIN_LEN {
        return vec![0; len];
    }
    let mut v = Vec::with_capacity(len);
    hyperseal::zeroed_output(&mut v.spare_capacity_mut()[..len], Pages::Base);
    // SAFETY: `zeroed_output` initialised the first `len` bytes, within the capacity.
    unsafe { v.set_len(len) };
    v
}

/// A recycled buffer of at least `len` bytes, if one is kept.
pub fn take_kept(len: usize) -> Option<Vec<u8>> {
    if len < MIN_LEN {
        return None;
    }
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    let i = kept.iter().position(|v| v.len() >= len && v.len() - len <= v.len() / 4)?;
    Some(kept.swap_remove(i))
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

/// A Buffer of `len` bytes that Node allocates (so the garbage collector frees it, without a
/// finalizer), zeroed over all cores in 4 KiB pages and filled by `fill`, which returns how many bytes it
/// wrote; a shorter result is a view of its first bytes. On failure the bytes are zeroized
/// (they may be unauthenticated plaintext) and JS never sees the Buffer.
pub fn node_buffer<'e>(
    env: &'e Env,
    len: usize,
    fill: impl FnOnce(&mut [u8]) -> Result<usize, Fail>,
) -> Result<BufferSlice<'e>, Fail> {
    let (mut data, mut value) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: napi_create_buffer writes a new Buffer's handle and its data pointer (`len`
    // uninitialised bytes, owned by the Buffer) into the two out-pointers.
    let status = unsafe { sys::napi_create_buffer(env.raw(), len, &mut data, &mut value) };
    if status != sys::Status::napi_ok || (data.is_null() && len > 0) {
        return Err(napi::Error::from_reason(format!("cannot allocate a Buffer of {len} bytes")).into());
    }
    // SAFETY: `data` is valid for `len` bytes while the Buffer lives, which is at least until
    // this native call returns (its handle is in the call's scope); nothing else has seen it.
    // They are viewed as uninitialised until `zeroed_output` has written every one.
    let raw = unsafe { std::slice::from_raw_parts_mut(data.cast::<MaybeUninit<u8>>(), len) };
    let out = hyperseal::zeroed_output(raw, Pages::Base);
    let n = match fill(out) {
        Ok(n) => n.min(len),
        Err(e) => {
            hyperseal::wipe(out);
            return Err(e);
        }
    };
    if n < len {
        // SAFETY: `value` is a live Buffer handle of this call's scope.
        value = unsafe { prefix(env, value, n) }?;
    }
    // SAFETY: `value` is a live Buffer handle (the new one, or a view of it).
    Ok(unsafe { BufferSlice::from_napi_value(env.raw(), value) }?)
}

/// `buf.subarray(0, n)`: a Buffer over the first `n` bytes of `buf`, sharing its memory.
///
/// # Safety
/// `buf` must be a live Buffer handle of the current scope.
unsafe fn prefix(env: &Env, buf: sys::napi_value, n: usize) -> napi::Result<sys::napi_value> {
    let check = |status: sys::napi_status, what: &str| {
        if status == sys::Status::napi_ok {
            Ok(())
        } else {
            Err(napi::Error::from_reason(format!("cannot make the result Buffer ({what})")))
        }
    };
    let (mut subarray, mut end, mut zero, mut view) =
        (ptr::null_mut(), ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
    // SAFETY: plain napi calls on handles of this scope, each checked.
    unsafe {
        check(sys::napi_get_named_property(env.raw(), buf, c"subarray".as_ptr(), &mut subarray), "subarray")?;
        check(sys::napi_create_double(env.raw(), 0.0, &mut zero), "start")?;
        check(sys::napi_create_double(env.raw(), n as f64, &mut end), "end")?;
        let args = [zero, end];
        check(sys::napi_call_function(env.raw(), buf, subarray, 2, args.as_ptr(), &mut view), "call")?;
    }
    Ok(view)
}
