//! Removing named temporaries when the process is told to stop (SIGINT, SIGTERM, SIGHUP).
//!
//! Only the fallback path needs this: an `O_TMPFILE` has no name to remove. The handler is
//! installed while at least one named temporary exists and restored as soon as none does, so a
//! program (Node, Python) that has its own handlers keeps them the rest of the time. A signal
//! whose disposition is "ignore" (`nohup`, background jobs) is left ignored.
//!
//! The handler may only do async-signal-safe things: it reads paths that were written into
//! static buffers *before* they were published (an atomic state per slot), calls `unlink(2)`,
//! puts the previous disposition back with `sigaction(2)` and re-raises the signal, so the
//! process ends exactly as it would have (or the program's own handler runs).

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Mutex;

const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];
/// Concurrent named temporaries covered (Node may run several file jobs at once). Beyond that
/// a temporary is still removed on errors and drop, only not on a signal.
const SLOTS: usize = 16;
const PATH_CAP: usize = 4096;

const FREE: u8 = 0;
const WRITING: u8 = 1;
const READY: u8 = 2;
/// Taken by the handler; never reused (the process is ending, or its own handler chose not to).
const UNLINKING: u8 = 3;

struct PathSlot(UnsafeCell<[u8; PATH_CAP]>);
// SAFETY: a slot's bytes are written only by the thread that moved its state FREE -> WRITING,
// and read (by the handler) only after that thread published READY with Release ordering.
unsafe impl Sync for PathSlot {}

struct OldAction(UnsafeCell<MaybeUninit<libc::sigaction>>);
// SAFETY: written under INSTALL_LOCK while our handler is not installed for that signal, read
// by the handler only after `sigaction` installed it (a system call orders the two).
unsafe impl Sync for OldAction {}

#[allow(clippy::declare_interior_mutable_const)] // Array initialisers, each copied once.
const EMPTY_PATH: PathSlot = PathSlot(UnsafeCell::new([0; PATH_CAP]));
#[allow(clippy::declare_interior_mutable_const)]
const EMPTY_STATE: AtomicU8 = AtomicU8::new(FREE);
#[allow(clippy::declare_interior_mutable_const)]
const NO_ACTION: OldAction = OldAction(UnsafeCell::new(MaybeUninit::zeroed()));
#[allow(clippy::declare_interior_mutable_const)]
const NOT_INSTALLED: AtomicBool = AtomicBool::new(false);

static PATHS: [PathSlot; SLOTS] = [EMPTY_PATH; SLOTS];
static STATES: [AtomicU8; SLOTS] = [EMPTY_STATE; SLOTS];
static OLD: [OldAction; 3] = [NO_ACTION; 3];
static INSTALLED: [AtomicBool; 3] = [NOT_INSTALLED; 3];
/// Number of live registrations; installing and restoring happen under it.
static INSTALL_LOCK: Mutex<usize> = Mutex::new(0);

/// A path the handler will unlink on a signal, until this is dropped.
#[derive(Debug)]
pub(crate) struct Registration(usize);

/// Registers `path` (absolute or relative to a working directory that does not change) for
/// removal on SIGINT/SIGTERM/SIGHUP. `None` if all slots are taken or the path is too long.
pub(crate) fn register(path: &Path) -> Option<Registration> {
    let bytes = path.as_os_str().as_bytes();
    if bytes.len() >= PATH_CAP || bytes.contains(&0) {
        return None;
    }
    let mut live = INSTALL_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let slot = (0..SLOTS)
        .find(|&i| STATES[i].compare_exchange(FREE, WRITING, Ordering::Acquire, Ordering::Relaxed).is_ok())?;
    // SAFETY: this thread owns the slot (state WRITING); the handler skips it until READY.
    let buf = unsafe { &mut *PATHS[slot].0.get() };
    buf[..bytes.len()].copy_from_slice(bytes);
    buf[bytes.len()] = 0;
    STATES[slot].store(READY, Ordering::Release);
    *live += 1;
    install();
    Some(Registration(slot))
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut live = INSTALL_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        // Fails only if the handler took the slot (UNLINKING): leave it taken.
        let _ = STATES[self.0].compare_exchange(READY, FREE, Ordering::AcqRel, Ordering::Relaxed);
        *live -= 1;
        if *live == 0 {
            restore();
        }
    }
}

/// Installs the handler for each signal that is not ignored and not already ours.
fn install() {
    for (i, &sig) in SIGNALS.iter().enumerate() {
        if INSTALLED[i].load(Ordering::Acquire) {
            continue;
        }
        // SAFETY: sigaction with a null new action only reads the current one into `old`, a
        // valid, writable, properly sized struct.
        let old = unsafe {
            let mut old = MaybeUninit::<libc::sigaction>::zeroed();
            if libc::sigaction(sig, std::ptr::null(), old.as_mut_ptr()) != 0 {
                continue;
            }
            old.assume_init()
        };
        if old.sa_sigaction == libc::SIG_IGN {
            continue;
        }
        // SAFETY: our handler is not installed for `sig` (INSTALLED is false and we hold the
        // lock), so nothing reads this slot now.
        unsafe { (*OLD[i].0.get()).write(old) };
        // SAFETY: a zeroed sigaction is valid; the handler is an `extern "C" fn(c_int)` that
        // only makes async-signal-safe calls; sigemptyset/sigaddset write into our struct.
        unsafe {
            let mut action: libc::sigaction = MaybeUninit::zeroed().assume_init();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            for s in SIGNALS {
                libc::sigaddset(&mut action.sa_mask, s);
            }
            if libc::sigaction(sig, &action, std::ptr::null_mut()) == 0 {
                INSTALLED[i].store(true, Ordering::Release);
            }
        }
    }
}

/// Puts back the previous handlers, unless someone replaced ours meanwhile.
fn restore() {
    for (i, &sig) in SIGNALS.iter().enumerate() {
        if !INSTALLED[i].swap(false, Ordering::AcqRel) {
            continue;
        }
        // SAFETY: as in `install`: query into a valid struct; OLD[i] was written before our
        // handler was installed for `sig`.
        unsafe {
            let mut current = MaybeUninit::<libc::sigaction>::zeroed();
            if libc::sigaction(sig, std::ptr::null(), current.as_mut_ptr()) == 0
                && current.assume_init().sa_sigaction
                    == on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t
            {
                libc::sigaction(sig, (*OLD[i].0.get()).as_ptr(), std::ptr::null_mut());
            }
        }
    }
}

extern "C" fn on_signal(sig: libc::c_int) {
    for i in 0..SLOTS {
        if STATES[i].compare_exchange(READY, UNLINKING, Ordering::Acquire, Ordering::Relaxed).is_ok() {
            // SAFETY: READY was published after the NUL-terminated path was written; unlink is
            // async-signal-safe and only reads it.
            unsafe { libc::unlink(PATHS[i].0.get().cast::<libc::c_char>()) };
        }
    }
    if let Some(i) = SIGNALS.iter().position(|&s| s == sig) {
        INSTALLED[i].store(false, Ordering::Release);
        // SAFETY: OLD[i] holds the disposition saved before this handler was installed;
        // sigaction and raise are async-signal-safe. The signal is blocked while we run, so the
        // re-raised one is delivered, to the old disposition, as soon as we return.
        unsafe {
            libc::sigaction(sig, (*OLD[i].0.get()).as_ptr(), std::ptr::null_mut());
            libc::raise(sig);
        }
    }
}
