//! What a key passes through in the agent process is zeroed before the memory is given back,
//! so that no copy outlives the key: `remove`, `lock` and the agent's end leave nothing to find
//! in the process's memory, in swap, or in a later request's uninitialised buffer.
//!
//! Zeroizing types (`Zeroizing`, `FileKey`) cover the values the code names. They miss the
//! copies it does not: a `Vec` that grows moves its bytes and frees the old block as it was
//! (a request body read in pieces, a decryption's output, a bech32 decode), a library's
//! temporaries, and the stack frames a key's arithmetic ran in, which stay with the thread
//! (kept for the next connection) or with the C library (for the next thread). So in the agent
//! process:
//!
//! * [`WipeOnFree`], the binary's global allocator, zeroes every block it frees, and a block
//!   that `realloc` would move is copied and zeroed here instead. Every other command runs with
//!   the plain system allocator's behaviour: one relaxed load per free decides.
//! * [`scrub_stack`] zeroes the stack below the caller, as deep as it holds anything: a
//!   connection's thread calls it when the request is done and its connection closed, before
//!   the thread waits for the next connection (`agent/pool.rs`) or ends.
//!
//! aws-lc's own allocations are cleansed by aws-lc when freed (`OPENSSL_free`).

#![allow(unsafe_code)] // a global allocator is an `unsafe impl`; raw pointers by its contract.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

/// The system allocator, zeroing what is freed once [`wipe_freed_memory`] is called.
pub struct WipeOnFree;

static WIPE: AtomicBool = AtomicBool::new(false);

/// From now on, every block this process frees is zeroed first (the agent calls it before it
/// reads a secret; blocks allocated earlier are zeroed too when they are freed).
pub fn wipe_freed_memory() {
    WIPE.store(true, Ordering::SeqCst);
}

fn wiping() -> bool {
    WIPE.load(Ordering::Relaxed)
}

/// Zeroes `len` bytes at `ptr` in a way the compiler cannot drop as dead stores before a free.
///
/// # Safety
/// `ptr` is valid for writes of `len` bytes.
unsafe fn wipe(ptr: *mut u8, len: usize) {
    // SAFETY: by this function's contract.
    unsafe { std::ptr::write_bytes(ptr, 0, len) };
    // An opaque use of the pointer: the zeros may be read, so they are written.
    std::hint::black_box(ptr);
    std::sync::atomic::compiler_fence(Ordering::SeqCst);
}

// SAFETY: every call is forwarded to `System` with the same layout contract; `realloc`'s own
// path allocates the new block with the old alignment and the new size, copies the bytes that
// both hold, and frees the old block with its own layout, as `GlobalAlloc::realloc` requires.
unsafe impl GlobalAlloc for WipeOnFree {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if wiping() {
            // SAFETY: `ptr` is a live block of `layout.size()` bytes until it is freed below.
            unsafe { wipe(ptr, layout.size()) };
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !wiping() {
            // SAFETY: the caller's contract, passed on.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        // SAFETY: `new_size` is non-zero and fits `isize` when rounded to the alignment, by
        // `realloc`'s contract; the alignment is the old block's, which was valid.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: a non-zero size, as above.
        let new = unsafe { System.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks are live, distinct, and hold at least the bytes copied; the
            // old one is zeroed and freed with its own layout.
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                wipe(ptr, layout.size());
                System.dealloc(ptr, layout);
            }
        }
        new
    }
}

/// Bytes of stack [`scrub_stack`] zeroes below its caller at most: more than any request's
/// key work reaches (the agent's threads have 1 MiB).
pub const SCRUB: usize = 256 << 10;

/// The steps in which the zeroed depth grows (each depth is a frame of its own size).
const STEP: usize = 8 << 10;

/// Zeroes the stack below the caller's frame, where the work it called has left its locals
/// (copies of secret keys among them): down to the deepest page the work reached, at most
/// [`SCRUB`] bytes.
///
/// A page of an anonymous mapping that is neither in memory nor in swap reads as zeros: the
/// work never reached it, or the C library gave it back (as it does below a finished thread's
/// stack pointer). Zeroing it would only fault in a fresh zero page, which on a new thread's
/// stack was most of the cost of a request, so the depth zeroed stops at the deepest page that
/// holds anything. Where that cannot be read, all [`SCRUB`] bytes are zeroed. On a thread that
/// lives on, the zeroing's last step reaches a page below the deepest one and keeps it, so
/// the depth grows to [`SCRUB`] over some tens of calls and stays there: a few microseconds
/// each, after the answer is out.
#[inline(never)]
pub fn scrub_stack() {
    // A local's address: this frame's place on the stack, above the two frames called below.
    let marker = 0u8;
    let here = std::hint::black_box(&marker) as *const u8 as usize;
    // Both calls start at this frame's stack pointer: the zeroing frame also covers the one
    // that read the depth.
    let depth = touched_depth(here).unwrap_or(SCRUB);
    // The zeroing frame's top is a few words below `here` (this frame's own): 1 KiB more
    // covers them.
    let steps = (depth + (1 << 10)).div_ceil(STEP).clamp(1, SCRUB / STEP);
    ZERO[steps - 1]();
}

macro_rules! zeros {
    ($($k:literal)*) => { [$(zero::<{ $k * STEP }>),*] };
}

/// Zeroes a frame of `N` bytes.
#[inline(never)]
fn zero<const N: usize>() {
    let mut below = [0u8; N];
    // The zeros may be read: they are written.
    std::hint::black_box(&mut below);
}

/// The zeroing frames, `ZERO[k]` of `(k + 1) * STEP` bytes.
const ZERO: [fn(); SCRUB / STEP] =
    zeros!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32);

/// How far below `here` the stack holds anything: the distance to the deepest page, within
/// [`SCRUB`], that is in memory or in swap (`/proc/self/pagemap`). `None`: not known.
#[cfg(target_os = "linux")]
#[inline(never)]
fn touched_depth(here: usize) -> Option<usize> {
    use std::os::unix::fs::FileExt;
    use std::sync::OnceLock;

    /// Entries for [`SCRUB`] bytes and the page holding the frame, on pages of 4 KiB or more.
    const ENTRIES: usize = SCRUB / 4096 + 1;
    const PRESENT: u64 = 1 << 63;
    const SWAPPED: u64 = 1 << 62;
    static PAGEMAP: OnceLock<Option<(std::fs::File, usize)>> = OnceLock::new();
    let (pagemap, page) = PAGEMAP
        .get_or_init(|| {
            // SAFETY: sysconf has no preconditions.
            let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok()?;
            let file = std::fs::File::open("/proc/self/pagemap").ok()?;
            (page >= 4096 && page.is_power_of_two()).then_some((file, page))
        })
        .as_ref()?;
    let (first, last) = (here.checked_sub(SCRUB)? / page, here / page);
    let count = last - first + 1;
    let mut raw = [0u8; ENTRIES * 8];
    let raw = &mut raw[..count * 8];
    pagemap.read_exact_at(raw, (first * 8) as u64).ok()?;
    let deepest = raw
        .chunks_exact(8)
        .position(|e| u64::from_ne_bytes(e.try_into().expect("8 bytes")) & (PRESENT | SWAPPED) != 0);
    Some(deepest.map_or(0, |d| here - (first + d) * page))
}

#[cfg(not(target_os = "linux"))]
fn touched_depth(_: usize) -> Option<usize> {
    None
}
