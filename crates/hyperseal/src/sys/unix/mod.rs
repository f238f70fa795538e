//! Unix (Linux first; the other Unix systems where a call is Linux's own, noted at it).

use std::ffi::CString;
use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

mod attrs;
#[cfg(target_os = "linux")]
pub(crate) mod family;
pub(crate) mod interrupt;
mod lease;
pub(crate) mod peer;
pub(crate) mod process;
#[cfg(feature = "fs")] // the positional engine's (`stream/positional.rs`)
mod space;

pub(crate) use attrs::copy_attributes;
pub(crate) use lease::{Lease, Leased};
#[cfg(feature = "fs")]
pub(crate) use space::{check_space, pread, pwrite};

/// kill(2) of a process (`pid` > 0) or a process group (-`pid`); errors (it is gone) ignored.
/// Only for what a pidfd cannot name: the group of an unreaped child (`process.rs`), and a
/// process checked by its start time a moment ago, where the kernel has no pidfds
/// (`family.rs`). Here, below both, so that `family.rs` need not import `process.rs`.
pub(crate) fn signal(pid: i32, sig: libc::c_int) {
    // SAFETY: kill(2) takes two integers and touches no memory.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// What makes two open files the same file: device and inode.
pub(crate) type FileId = (u64, u64);

/// A file's identity, size, link count, times and owner, as one `fstat` reads them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(crate) id: FileId,
    pub(crate) len: u64,
    pub(crate) links: u64,
    /// Modification and status-change times: any write or rename moves one of them.
    times: [(i64, i64); 2],
    pub(crate) owned: bool,
    pub(crate) regular: bool,
}

impl Stamp {
    pub(crate) fn of(file: &File) -> io::Result<Stamp> {
        Ok(Stamp::from_meta(&file.metadata()?))
    }

    /// Of the file `path` names (through symbolic links).
    pub(crate) fn of_path(path: &Path) -> io::Result<Stamp> {
        Ok(Stamp::from_meta(&std::fs::metadata(path)?))
    }

    /// Of the name `path` itself (a symbolic link is not followed).
    pub(crate) fn of_link(path: &Path) -> io::Result<Stamp> {
        Ok(Stamp::from_meta(&std::fs::symlink_metadata(path)?))
    }

    /// Whether both name one file.
    pub(crate) fn same_file(&self, other: &Stamp) -> bool {
        self.id == other.id
    }

    fn from_meta(m: &Metadata) -> Stamp {
        Stamp {
            id: (m.dev(), m.ino()),
            len: m.len(),
            links: m.nlink(),
            times: [(m.mtime(), m.mtime_nsec()), (m.ctime(), m.ctime_nsec())],
            owned: m.uid() == caller(),
            regular: m.file_type().is_file(),
        }
    }
}

/// The identity of a regular file from metadata already read (the output's same-file rule).
pub(crate) fn id_of(m: &Metadata) -> Option<FileId> {
    m.is_file().then(|| (m.dev(), m.ino()))
}

/// This process's effective user.
fn caller() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

pub(crate) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    file.read_at(buf, offset)
}

pub(crate) fn write_at(file: &File, buf: &[u8], offset: u64) -> io::Result<usize> {
    file.write_at(buf, offset)
}

/// New files readable and writable by their owner only (0600, whatever the umask): an output
/// may be plaintext, a journal holds headers.
pub(crate) fn private(opts: &mut OpenOptions) -> &mut OpenOptions {
    opts.mode(0o600)
}

/// Opens never through a symbolic link at the final name, never blocking on a FIFO, and never
/// making a terminal the controlling one.
pub(crate) fn no_follow(opts: &mut OpenOptions) -> &mut OpenOptions {
    opts.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
}

/// The error a [`no_follow`] open gives for a symbolic link.
pub(crate) fn is_link_refusal(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

/// The errors of a filesystem without hard links (FAT, some network filesystems).
pub(crate) fn lacks_hard_links(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EPERM | libc::EOPNOTSUPP | libc::ENOSYS))
}

/// "Is a directory", for a destination written with a trailing `/`.
pub(crate) fn is_a_directory() -> io::Error {
    io::Error::from_raw_os_error(libc::EISDIR)
}

/// Whether the file type is a FIFO (for the message about a destination that changed type).
pub(crate) fn is_fifo(m: &Metadata) -> bool {
    std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type())
}

pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Linux: a file with no name in `dir` (`O_TMPFILE`), 0600. `Ok(None)` where the filesystem
/// refuses it (and on other systems): the caller uses a named temporary.
pub(crate) fn create_unnamed(dir: &Path) -> io::Result<Option<File>> {
    #[cfg(target_os = "linux")]
    // Read and write: a shared mapping of the file (`space::Window`) needs both.
    match File::options().read(true).write(true).custom_flags(libc::O_TMPFILE).mode(0o600).open(dir) {
        Ok(file) => Ok(Some(file)),
        // EOPNOTSUPP: the filesystem has no O_TMPFILE (FAT, older NFS, some FUSE).
        // EISDIR: a kernel older than 3.11 took O_TMPFILE for O_DIRECTORY. EINVAL: either.
        Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)) => {
            Ok(None)
        }
        Err(e) => Err(e),
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = dir;
        Ok(None)
    }
}

/// Gives a file from [`create_unnamed`] the name `to` (fails if `to` exists).
pub(crate) fn link_unnamed(file: &File, to: &Path) -> io::Result<()> {
    let to = CString::new(to.as_os_str().as_bytes())?;
    // The documented way for an unprivileged process (open(2), O_TMPFILE): link the
    // /proc/self/fd entry, following it to the file.
    let proc = CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
    // SAFETY: both arguments are NUL-terminated strings that outlive the call; linkat only
    // reads them and touches no memory of ours.
    let r = unsafe {
        libc::linkat(libc::AT_FDCWD, proc.as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::AT_SYMLINK_FOLLOW)
    };
    if r == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    #[cfg(target_os = "linux")]
    if e.kind() == io::ErrorKind::NotFound && !Path::new("/proc/self/fd").exists() {
        // No /proc (a bare chroot or container): AT_EMPTY_PATH links the descriptor itself;
        // the kernel allows it to processes with CAP_DAC_READ_SEARCH.
        // SAFETY: as above; the empty path is a valid NUL-terminated string, and the
        // descriptor is open for the duration of the call.
        let r = unsafe {
            libc::linkat(file.as_raw_fd(), c"".as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::AT_EMPTY_PATH)
        };
        return if r == 0 { Ok(()) } else { Err(io::Error::last_os_error()) };
    }
    Err(e)
}

/// A re-key's rewrite gives the old file its second name with a hard link (the file keeps
/// its own name until the new one is renamed over it).
pub(crate) const SECOND_NAME_MOVES: bool = false;

/// Creates a new private file at `path` for a named temporary (fails if anything is there). On
/// Unix the interrupt handler ([`interrupt`]) removes it if the process is told to stop.
pub(crate) fn create_temporary(path: &Path) -> io::Result<File> {
    private(File::options().write(true).create_new(true)).open(path)
}

/// Before a temporary gets its final name: nothing to undo on Unix.
pub(crate) fn keep_temporary(_: &File) -> io::Result<()> {
    Ok(())
}

/// A duplicate of file descriptor 1, to ask what it is.
pub(crate) fn stdout_file() -> Option<File> {
    use std::os::fd::AsFd;
    io::stdout().as_fd().try_clone_to_owned().ok().map(File::from)
}

/// Ignores SIGXFSZ for the whole process, so that writing past `ulimit -f` makes `write` fail
/// with EFBIG — reported, and the output discarded — instead of killing the process silently
/// and leaving whatever it was writing. For programs (the CLI); Node already ignores it.
pub fn ignore_file_size_signal() {
    // SAFETY: setting a standard signal's disposition to SIG_IGN has no memory effects.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
}

/// A file a plugin can be run from: any execute bit set.
pub(crate) fn is_executable(m: &Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    m.permissions().mode() & 0o111 != 0
}
