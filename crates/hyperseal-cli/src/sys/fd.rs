//! Descriptors as files: one the caller named by number (`--file-key-fd N`: a file key crosses
//! from one command to the next through it, never through a file name that another process
//! could open), and standard output without Rust's line buffering (the git filter's answers).

use std::fs::File;
use std::io;

/// A new handle on the caller's descriptor `fd` (a duplicate, so the descriptor itself stays
/// the caller's and is closed by nobody here).
#[cfg(unix)]
pub fn named_descriptor(fd: i32) -> io::Result<File> {
    #![allow(unsafe_code)] // fcntl and borrowing a descriptor by number: no safe wrappers.
    use std::os::fd::BorrowedFd;
    // SAFETY: F_GETFD only asks whether `fd` is open; it reads and changes nothing.
    if fd < 0 || unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return Err(io::Error::new(io::ErrorKind::NotFound, "not open"));
    }
    // SAFETY: `fd` is open (checked above); the borrow ends at the duplicate, and the commands
    // take it before they open anything of their own, so no handle of this process owns `fd`.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    Ok(File::from(borrowed.try_clone_to_owned()?))
}

/// Whether `file` is the null device. A descriptor the caller closed is one: the Rust runtime
/// opens /dev/null on a closed standard descriptor (0, 1, 2) at start-up, so `--file-key-fd 1`
/// with stdout closed would write the key nowhere and succeed.
#[cfg(unix)]
pub fn is_null_device(file: &File) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let (Ok(this), Ok(null)) = (file.metadata(), std::fs::metadata("/dev/null")) else { return false };
    this.file_type().is_char_device() && this.rdev() == null.rdev()
}

#[cfg(not(unix))]
pub fn is_null_device(_file: &File) -> bool {
    false
}

/// Windows passes handles, not numbered descriptors, to a child.
#[cfg(not(unix))]
pub fn named_descriptor(_fd: i32) -> io::Result<File> {
    Err(io::Error::new(io::ErrorKind::Unsupported, "--file-key-fd needs a Unix system"))
}

/// A handle on standard output that writes exactly what it is given, when it is given it. Rust's
/// `Stdout` is line-buffered: a buffered writer over it hands it a whole answer, and it writes
/// up to the last newline in it and keeps the rest for the next flush, so binary content
/// (which holds newlines anywhere) goes out in two writes, and a reader blocked on the pipe is
/// woken twice. None where standard output cannot be duplicated (closed).
pub fn stdout_file() -> Option<File> {
    #[cfg(unix)]
    let owned = std::os::fd::AsFd::as_fd(&io::stdout()).try_clone_to_owned();
    #[cfg(windows)]
    let owned = std::os::windows::io::AsHandle::as_handle(&io::stdout()).try_clone_to_owned();
    owned.ok().map(File::from)
}
