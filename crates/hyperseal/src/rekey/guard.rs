//! Another writer wins: a re-key never writes over bytes it has not just checked.
//!
//! Between reading a file's header and writing the new one, a re-key waits for the identity
//! (a passphrase, a plugin, a hardware token: any length of time). Meanwhile a shell's `>`, an
//! editor or `age -o` may save a new version of the file in place, and `flock` keeps out only
//! other re-keys. So a [`Snapshot`] of the file is taken when it is opened (its identity,
//! length and times, its header's bytes and the payload salt that follows them: a new
//! encryption draws a new salt), and checked again under a [`Lease`] just before anything is
//! written, and before a rewrite's rename. Any difference refuses the re-key and leaves the
//! file as the other program left it.
//!
//! The lease (`F_SETLEASE`, a write lease) closes the gap between that check and the write: it
//! is granted only while no other process has the file open, and while it is held any other
//! `open` of the file waits until it is released, a few system calls later. Where leases are not
//! available (a file of another user without `CAP_LEASE`, NFS, leases disabled), the check runs
//! again immediately before the write and the salt and length are checked once more after it:
//! a writer that gets in within those microseconds is then reported, not hidden.

#![allow(unsafe_code)] // fcntl for the lease: no safe wrapper exists.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

use crate::format::SALT_LEN;

/// What the file was when it was opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Snapshot {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    header_len: usize,
    /// The header's bytes and the salt after them.
    head: Vec<u8>,
}

impl Snapshot {
    /// Metadata first, bytes second: a writer between the two changes the times, which the
    /// check then sees.
    pub(super) fn take(file: &File, meta: &std::fs::Metadata, header_len: usize) -> io::Result<Snapshot> {
        let mut head = vec![0u8; header_len + SALT_LEN];
        let n = read_at_most(file, &mut head)?;
        head.truncate(n);
        Ok(Snapshot {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
            header_len,
            head,
        })
    }

    /// The header's bytes as read.
    pub(super) fn header(&self) -> &[u8] {
        &self.head[..self.header_len.min(self.head.len())]
    }

    /// The file's length as read.
    pub(super) fn len(&self) -> u64 {
        self.len
    }

    /// Whether `file` (and the name `path`, for a rename over it) is still what was opened.
    pub(super) fn check(&self, file: &File, path: &Path) -> Result<(), Changed> {
        let meta = file.metadata().map_err(Changed::Io)?;
        let now = Snapshot::take(file, &meta, self.header_len).map_err(Changed::Io)?;
        let named = std::fs::metadata(path).map_err(Changed::Io)?;
        if now != *self || (named.dev(), named.ino()) != (self.dev, self.ino) {
            return Err(Changed::ByAnother);
        }
        Ok(())
    }

    /// After the write, without a lease: the length and the salt (which the new header does not
    /// cover) must be as they were, or another program wrote a new version meanwhile.
    pub(super) fn check_after(&self, file: &File) -> Result<(), Changed> {
        let meta = file.metadata().map_err(Changed::Io)?;
        let at = self.header_len.min(self.head.len());
        let mut salt = vec![0u8; self.head.len() - at];
        file.read_exact_at(&mut salt, at as u64).map_err(Changed::Io)?;
        match meta.len() == self.len && salt == self.head[at..] {
            true => Ok(()),
            false => Err(Changed::ByAnother),
        }
    }
}

/// Why a check failed.
#[derive(Debug)]
pub(super) enum Changed {
    /// Another program wrote, replaced or renamed the file.
    ByAnother,
    /// The check itself could not be made.
    Io(io::Error),
}

fn read_at_most(file: &File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read_at(&mut buf[n..], n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// A write lease on a file: while held, no other process can open it (their `open` waits).
pub(super) struct Lease<'a> {
    file: &'a File,
}

/// Whether a lease could be taken.
pub(super) enum Leased<'a> {
    Held(Lease<'a>),
    /// Leases are not available for this file here: the re-key goes on with checks only.
    Unavailable,
    /// Another process has the file open: it may be writing it.
    OpenElsewhere,
}

impl<'a> Lease<'a> {
    /// Takes a write lease on `file` (this process's only descriptor of it). The kernel signals
    /// the holder when another process opens the file; that signal is set to SIGURG, whose
    /// default action is to be ignored, so the lease never ends the process: the other `open`
    /// simply waits for [`Lease::release`].
    #[cfg(target_os = "linux")]
    pub(super) fn take(file: &'a File) -> Leased<'a> {
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
    pub(super) fn take(_: &'a File) -> Leased<'a> {
        Leased::Unavailable
    }

    /// Whether the lease is still held: the kernel breaks a lease whose holder does not release
    /// it within `lease-break-time` (45 s by default) of another process's `open`; a process
    /// stopped that long has lost it.
    pub(super) fn held(&self) -> bool {
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
