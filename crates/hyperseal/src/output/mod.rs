//! The nothing-lost file writer: an output file appears under its name complete or not at all.
//!
//! Every frontend (the CLI's `-o`, Node's `encryptFile`/`decryptFile`, Python) writes files
//! through [`AtomicOutput`], so the rules below hold everywhere and live in one place:
//!
//! - **A regular file, or a name that does not exist yet**, is written unnamed. On Linux the
//!   output is an `O_TMPFILE` in the destination's directory: it has no name while it is written,
//!   so neither an error, nor SIGINT, nor SIGKILL, nor a power cut can leave a partial file
//!   behind: the kernel frees it. [`AtomicOutput::commit`] gives it its name with `linkat` —
//!   after the caller has seen the last chunk authenticate. Where the filesystem refuses
//!   `O_TMPFILE` (and on other Unix systems) a named temporary `.hyperseal-*.partial` in the same
//!   directory is used instead, and a signal handler, installed only while such a file exists,
//!   removes it on SIGINT, SIGTERM and SIGHUP (SIGKILL cannot be caught: that one case can leave
//!   a hidden `.partial` file behind on such filesystems).
//! - **An existing file is replaced only with [`OutputOptions::force`]**, atomically (a rename
//!   over it): readers see the old file or the new one, never a mix. Without `force` an existing
//!   file is refused up front, and a file that appears at the destination while the output is
//!   written is refused at commit (no-clobber), never overwritten.
//! - **Devices, FIFOs and every other non-regular file** (`/dev/null`, `/dev/stdout`, a named
//!   pipe, a terminal) are written through, as `cat` and age do: opened for writing, never
//!   replaced, never renamed over, `force` not needed. Bytes written to them cannot be taken
//!   back, so a caller decrypting into one should say so when it fails.
//! - **Symbolic links** are followed to an existing file or device (so `/dev/stdout` works and
//!   `--force` through a link replaces the file it points to, keeping the link). A link to
//!   nothing is refused: creating a file through a dangling link is how files get planted in
//!   shared directories, and the user most likely meant another name.
//! - **A directory** is refused as such ("`X` is a directory"), and so is **the input file**
//!   itself (same device and inode, so hard links and `./f` vs `f` are caught). For commands
//!   that write to standard output, [`refuse_stdout_is_input`] is the check `cat` makes.
//! - **Errors name the destination**, never the temporary: `writing out: No space left on device`.
//!
//! Dropping an `AtomicOutput` without committing discards everything written.
//!
//! New files are created with mode 0600 (the output may be plaintext), whatever the umask; a
//! replaced file gets the new file's mode.
//!
//! ```no_run
//! use std::io::Write;
//! use hyperseal::output::OutputOptions;
//! # fn main() -> Result<(), hyperseal::output::OutputError> {
//! let input = std::fs::File::open("report.pdf").unwrap();
//! let mut out = OutputOptions::new()
//!     .force(false)
//!     .input(&input.metadata().unwrap())
//!     .create("report.pdf.hs")?;
//! out.write_all(b"...").unwrap(); // `report.pdf.hs` does not exist yet
//! out.commit()?; // now it does, complete
//! # Ok(()) }
//! ```
mod dest;
mod error;
mod named;
#[cfg(all(test, unix))]
mod tests;
mod unnamed;

use std::fs::{File, Metadata};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

pub use crate::sys::ignore_file_size_signal;
pub use dest::refuse_stdout_is_input;
pub use error::{OutputError, OutputErrorKind};

use dest::Destination;
pub(crate) use unnamed::stale_links;

/// How to open an [`AtomicOutput`]: the `--force` and same-file rules.
#[derive(Clone, Debug, Default)]
pub struct OutputOptions {
    force: bool,
    input: Option<crate::sys::FileId>,
    named_temporary: bool,
    unsynced: bool,
}

impl OutputOptions {
    /// Defaults: refuse to replace an existing file, no input to compare with, `O_TMPFILE`
    /// where the filesystem supports it.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replace an existing regular file (atomically, at commit). Never needed for devices and
    /// FIFOs, which are written through.
    pub fn force(mut self, yes: bool) -> Self {
        self.force = yes;
        self
    }

    /// The input being read: refuse a destination that is the same file (same device and inode).
    /// Only regular files are compared (`/dev/null` may well be both).
    pub fn input(mut self, input: &Metadata) -> Self {
        self.input = dest::identity(input);
        self
    }

    /// Use a named temporary file (`.hyperseal-*.partial`) even where `O_TMPFILE` works. This is
    /// the path taken on filesystems that refuse `O_TMPFILE`; it exists so tests can exercise it
    /// anywhere.
    pub fn named_temporary(mut self, yes: bool) -> Self {
        self.named_temporary = yes;
        self
    }

    /// Commit without flushing the data to stable storage first (by default it is flushed, so
    /// after a crash the name, if it is there, has all the bytes). For files that can be made
    /// again from elsewhere, as git writes a checkout: a repository's work tree written on
    /// unlock, where a flush per file would cost more than the decryption.
    pub fn unsynced(mut self, yes: bool) -> Self {
        self.unsynced = yes;
        self
    }

    /// Opens the output for `dest`, checking every rule that can be checked before any byte is
    /// written. Nothing appears at `dest` until [`AtomicOutput::commit`] (devices and FIFOs
    /// excepted: they are opened for writing here).
    pub fn create(&self, dest: impl AsRef<Path>) -> Result<AtomicOutput, OutputError> {
        let dest = dest.as_ref();
        let state = match dest::classify(dest, self.force, self.input)? {
            Destination::WriteThrough => {
                let file = File::options()
                    .write(true)
                    .open(dest)
                    .map_err(|e| OutputError::new(OutputErrorKind::Create, dest, e))?;
                State::Through(file)
            }
            Destination::Replace(target) | Destination::Create(target) => self.temporary(dest, target)?,
        };
        Ok(AtomicOutput { dest: dest.to_path_buf(), state, written: 0, sync: !self.unsynced })
    }

    fn temporary(&self, dest: &Path, target: PathBuf) -> Result<State, OutputError> {
        if !self.named_temporary {
            if let Some(u) = unnamed::Unnamed::create(dest, target.clone(), self.force)? {
                return Ok(State::Unnamed(u));
            }
        }
        Ok(State::Named(named::Named::create(dest, target, self.force)?))
    }
}

/// A file being written that appears under its name only when [`commit`](Self::commit)ted.
/// See the [module documentation](self) for the rules.
#[derive(Debug)]
pub struct AtomicOutput {
    dest: PathBuf,
    state: State,
    written: u64,
    /// Flush to stable storage before the name changes (see [`OutputOptions::unsynced`]).
    sync: bool,
}

#[derive(Debug)]
enum State {
    /// A device, FIFO or other non-regular file, written in place.
    Through(File),
    /// Linux: an `O_TMPFILE` without a name.
    Unnamed(unnamed::Unnamed),
    /// A `.hyperseal-*.partial` file, removed on drop and when the process is interrupted.
    Named(named::Named),
}

impl AtomicOutput {
    /// Shorthand for `OutputOptions::new().force(force).create(dest)`.
    pub fn create(dest: impl AsRef<Path>, force: bool) -> Result<AtomicOutput, OutputError> {
        OutputOptions::new().force(force).create(dest)
    }

    /// The destination, as given.
    pub fn path(&self) -> &Path {
        &self.dest
    }

    /// True for a device, FIFO or other non-regular destination: bytes written to it are
    /// delivered at once and cannot be taken back by dropping the output.
    pub fn is_write_through(&self) -> bool {
        matches!(self.state, State::Through(_))
    }

    /// True when the destination is a terminal (`-o /dev/tty`), so a caller can refuse to put
    /// binary data on it as it would for stdout.
    pub fn is_terminal(&self) -> bool {
        matches!(&self.state, State::Through(f) if std::io::IsTerminal::is_terminal(f))
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// The temporary file's name while it has one (the named fallback), for tests and
    /// diagnostics; `None` for unnamed and write-through outputs. Never shown to users.
    #[doc(hidden)]
    pub fn temporary_path(&self) -> Option<&Path> {
        match &self.state {
            State::Named(n) => Some(n.path()),
            _ => None,
        }
    }

    /// Makes the output visible under its name: flushes it to stable storage (unless
    /// [`unsynced`](OutputOptions::unsynced)) and links (or, with
    /// `force`, renames) it into place. Without `force`, fails with
    /// [`OutputErrorKind::AlreadyExists`] if a file appeared at the destination meanwhile, and
    /// leaves that file alone. On any error nothing is left behind.
    pub fn commit(self) -> Result<(), OutputError> {
        self.commit_with(|| Ok(()))
    }

    /// [`commit`](Self::commit), calling `before` after the data is on stable storage and
    /// immediately before the name changes; its error stops the commit (nothing is left
    /// behind), its value is returned. A re-key checks here, under a lease it returns, that the
    /// file it replaces is still the one it read.
    pub fn commit_with<T>(self, before: impl FnOnce() -> Result<T, OutputError>) -> Result<T, OutputError> {
        // No `Drop` on this struct itself: the states clean up after themselves when dropped.
        let AtomicOutput { dest, state, sync, .. } = self;
        match state {
            State::Through(mut f) => {
                f.flush().map_err(|e| OutputError::new(OutputErrorKind::Write, &dest, e))?;
                before()
            }
            State::Unnamed(u) => u.commit(&dest, sync, before),
            State::Named(n) => n.commit(&dest, sync, before),
        }
    }

    /// Gives the output `of`'s owner, group, permission bits and extended attributes (POSIX
    /// ACLs included): what a file keeps when it is rewritten rather than written in place.
    /// Fails if any of them cannot be set (another user's file rewritten by a non-root user).
    pub fn copy_attributes_from(&mut self, of: &File) -> io::Result<()> {
        match &mut self.state {
            State::Through(_) => Ok(()),
            State::Unnamed(u) => crate::sys::copy_attributes(of, u.file()),
            State::Named(n) => crate::sys::copy_attributes(of, n.file()),
        }
    }

    /// Sets the output's modification time `by` before the time the file system gave its last
    /// write (read back from the file, so from the file system's own clock): a checkout that
    /// must predate git's index, whose time comes from that clock too (see `hyperseal git
    /// unlock`). On a device or FIFO written through, nothing.
    pub fn backdate(&mut self, by: std::time::Duration) -> io::Result<()> {
        if let State::Through(_) = &self.state {
            return Ok(());
        }
        let f = self.file();
        let written = f.metadata()?.modified()?;
        f.set_modified(written.checked_sub(by).unwrap_or(std::time::UNIX_EPOCH))
    }

    /// Appends everything `src` yields. From a `File` (or a `Take` of one) this is an in-kernel
    /// copy (`copy_file_range`): no bytes pass through this process, which is how a re-key
    /// moves a payload it never decrypts.
    pub fn copy_from(&mut self, src: &mut std::io::Take<&File>) -> io::Result<u64> {
        let n = io::copy(src, self.file()).map_err(|e| self.write_error(e))?;
        self.written += n;
        Ok(n)
    }

    /// The regular file behind the output, for a writer that writes at offsets from many
    /// threads (`stream::positional`). `None` for a write-through destination.
    pub(crate) fn positional(&self) -> Option<&File> {
        match &self.state {
            State::Through(_) => None,
            State::Unnamed(u) => Some(u.file_ref()),
            State::Named(n) => Some(n.file_ref()),
        }
    }

    /// Counts bytes a positional writer put into [`positional`](Self::positional)'s file.
    pub(crate) fn wrote(&mut self, n: u64) {
        self.written += n;
    }

    fn file(&mut self) -> &mut File {
        match &mut self.state {
            State::Through(f) => f,
            State::Unnamed(u) => u.file(),
            State::Named(n) => n.file(),
        }
    }

    pub(crate) fn write_error(&self, e: io::Error) -> io::Error {
        // Keep the kind (BrokenPipe stays BrokenPipe) and the OS error as the source, but say
        // which file: the user named the destination, not our temporary.
        io::Error::new(e.kind(), OutputError::new(OutputErrorKind::Write, &self.dest, e))
    }
}

impl Write for AtomicOutput {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.file().write(buf) {
            Ok(n) => {
                self.written += n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => Err(self.write_error(e)),
        }
    }

    // Passed on, so the stream engines' gathering writes stay one `writev` per batch.
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match self.file().write_vectored(bufs) {
            Ok(n) => {
                self.written += n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => Err(self.write_error(e)),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file().flush().map_err(|e| self.write_error(e))
    }
}
