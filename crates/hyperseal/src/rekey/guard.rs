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
//! The lease (Linux's `F_SETLEASE`, a write lease: `sys::Lease`) closes the gap between that
//! check and the write: it is granted only while no other process has the file open, and while
//! it is held any other `open` of the file waits until it is released, a few system calls
//! later. Where leases are not available (a file of another user without `CAP_LEASE`, NFS,
//! leases disabled, Windows), the check runs again immediately before the write and the salt
//! and length are checked once more after it: a writer that gets in within those microseconds
//! is then reported, not hidden.

use std::fs::File;
use std::io;
use std::path::Path;

use crate::format::SALT_LEN;
use crate::sys::{self, Stamp};
pub(super) use crate::sys::{Lease, Leased};

/// What the file was when it was opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Snapshot {
    /// Identity, length and times.
    stamp: Stamp,
    header_len: usize,
    /// The header's bytes and the salt after them.
    head: Vec<u8>,
}

impl Snapshot {
    /// `stamp` is the file's, taken when it was opened, before anything read its header: a
    /// writer between the two then shows in the times, which the check compares. Metadata
    /// first, bytes second.
    pub(super) fn take(file: &File, stamp: Stamp, header_len: usize) -> io::Result<Snapshot> {
        let mut head = vec![0u8; header_len + SALT_LEN];
        let n = sys::read_at_most(file, &mut head, 0)?;
        head.truncate(n);
        Ok(Snapshot { stamp, header_len, head })
    }

    /// The header's bytes as read.
    pub(super) fn header(&self) -> &[u8] {
        &self.head[..self.header_len.min(self.head.len())]
    }

    /// The file's length as read.
    pub(super) fn len(&self) -> u64 {
        self.stamp.len
    }

    /// Whether `file` (and the name `path`, for a rename over it) is still what was opened.
    pub(super) fn check(&self, file: &File, path: &Path) -> Result<(), Changed> {
        let now = Snapshot::take(file, Stamp::of(file).map_err(Changed::Io)?, self.header_len)
            .map_err(Changed::Io)?;
        let named = Stamp::of_path(path).map_err(Changed::Io)?;
        if now != *self || !named.same_file(&self.stamp) {
            return Err(Changed::ByAnother);
        }
        Ok(())
    }

    /// After the write, without a lease: the length and the salt (which the new header does not
    /// cover) must be as they were, or another program wrote a new version meanwhile.
    pub(super) fn check_after(&self, file: &File) -> Result<(), Changed> {
        let len = file.metadata().map_err(Changed::Io)?.len();
        let at = self.header_len.min(self.head.len());
        let mut salt = vec![0u8; self.head.len() - at];
        sys::read_exact_at(file, &mut salt, at as u64).map_err(Changed::Io)?;
        match len == self.stamp.len && salt == self.head[at..] {
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
