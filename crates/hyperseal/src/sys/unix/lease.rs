//! A write lease (`F_SETLEASE`, Linux): while held, no other process can open the file (their
//! `open` waits until it is released). See `rekey::guard` for why a re-key takes one.

use std::fs::File;
#[cfg(target_os = "linux")]
use std::io;
#[cfg(target_os = "linux")]
use std::os::fd::AsRawFd;

/// A write lease on a file: while held, no other process can open it (their `open` waits).
pub(crate) struct Lease<'a> {
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    file: &'a File,
}

/// Whether a lease could be taken.
pub(crate) enum Leased<'a> {
    Held(Lease<'a>),
    /// Leases are not available for this file here: the caller goes on with checks only.
    Unavailable,
    /// Another process has the file open: it may be writing it.
    OpenElsewhere,
}

impl<'a> Lease<'a> {
    /// Takes a write lease on `file` (this process's only descriptor of it). The kernel signals
    /// the holder when another process opens the file; that signal is set to SIGURG, whose
    /// default action is to be ignored, so the lease never ends the process: the other `open`
    /// simply waits for the lease to be released (dropped).
    #[cfg(target_os = "linux")]
    pub(crate) fn take(file: &'a File) -> Leased<'a> {
        // Linux's F_SETSIG (the libc crate does not name it).
        const F_SETSIG: libc::c_int = 10;
        let fd = file.as_raw_fd();
        // SAFETY: fcntl on a descriptor we own, with integer arguments only.
        let r = unsafe {
            libc::fcntl(fd, F_SETSIG, libc::SIGURG);
            libc::fcntl(fd, libc::F_SETLEASE, libc::F_WRLCK)
        };
        if r == 0 {
            return Leased::Held(Lease { file });
        }
        match io::Error::last_os_error().raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::EBUSY) => Leased::OpenElsewhere,
            _ => Leased::Unavailable,
        }
    }

    /// Leases are Linux's (`F_SETLEASE`); elsewhere the checks alone guard the write.
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn take(_: &'a File) -> Leased<'a> {
        Leased::Unavailable
    }

    /// Whether the lease is still held: the kernel breaks a lease whose holder does not release
    /// it within `lease-break-time` (45 s by default) of another process's `open`; a process
    /// stopped that long has lost it.
    pub(crate) fn held(&self) -> bool {
        // SAFETY: as above.
        #[cfg(target_os = "linux")]
        return unsafe { libc::fcntl(self.file.as_raw_fd(), libc::F_GETLEASE) == libc::F_WRLCK };
        #[cfg(not(target_os = "linux"))]
        return false;
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        // SAFETY: as above.
        unsafe {
            libc::fcntl(self.file.as_raw_fd(), libc::F_SETLEASE, libc::F_UNLCK)
        };
    }
}
