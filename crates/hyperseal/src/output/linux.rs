//! Linux: the output is an `O_TMPFILE`, a file with no name in the destination's directory. If
//! the process dies at any point before [`Unnamed::commit`] — error, signal, SIGKILL, power cut —
//! the kernel frees it; there is never a partial file to clean up. `commit` names it with
//! `linkat`.

use std::ffi::CString;
use std::fs::{self, File};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::dest::{check_replaceable, parent_dir};
use super::named::temporary_name;
use super::signals;
use super::{OutputError, OutputErrorKind};

#[derive(Debug)]
pub(super) struct Unnamed {
    file: File,
    target: PathBuf,
    force: bool,
}

impl Unnamed {
    /// `Ok(None)` when the filesystem refuses `O_TMPFILE` (the caller falls back to a named
    /// temporary); any other failure (missing directory, no permission) is the user's error.
    pub(super) fn create(dest: &Path, target: PathBuf, force: bool) -> Result<Option<Unnamed>, OutputError> {
        let dir = parent_dir(&target);
        match File::options().write(true).custom_flags(libc::O_TMPFILE).mode(0o600).open(&dir) {
            Ok(file) => Ok(Some(Unnamed { file, target, force })),
            // EOPNOTSUPP: the filesystem has no O_TMPFILE (FAT, older NFS, some FUSE).
            // EISDIR: a kernel older than 3.11 took O_TMPFILE for O_DIRECTORY. EINVAL: either.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)) => {
                Ok(None)
            }
            Err(e) => Err(OutputError::new(OutputErrorKind::Create, dest, e)),
        }
    }

    pub(super) fn file(&mut self) -> &mut File {
        &mut self.file
    }

    pub(super) fn commit<T>(
        self,
        dest: &Path,
        before: impl FnOnce() -> Result<T, OutputError>,
    ) -> Result<T, OutputError> {
        // Data first, name second: after a crash the name, if it exists, has all the bytes.
        self.file.sync_all().map_err(|e| OutputError::new(OutputErrorKind::Write, dest, e))?;
        let commit_err = |e| OutputError::new(OutputErrorKind::Commit, dest, e);
        if !self.force {
            let value = before()?;
            // linkat fails with EEXIST if anything appeared at the name: no-clobber for free.
            return match link(&self.file, &self.target) {
                Ok(()) => Ok(value),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    Err(OutputError::rule(OutputErrorKind::AlreadyExists, dest))
                }
                Err(e) => Err(commit_err(e)),
            };
        }
        // linkat cannot replace a name; rename can, atomically. So the file gets a temporary
        // name for the instant between the two calls (registered for signal cleanup).
        check_replaceable(&self.target, dest)?;
        let dir = parent_dir(&self.target);
        let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
        for _ in 0..16 {
            let tmp = dir.join(temporary_name("partial"));
            let registration = signals::register(&tmp);
            match link(&self.file, &tmp) {
                Ok(()) => {
                    let renamed = before()
                        .and_then(|value| fs::rename(&tmp, &self.target).map(|()| value).map_err(commit_err));
                    if renamed.is_err() {
                        let _ = fs::remove_file(&tmp);
                    }
                    drop(registration);
                    return renamed;
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
                Err(e) => return Err(commit_err(e)),
            }
        }
        Err(commit_err(last))
    }
}

/// Gives the unnamed `file` the name `to` (fails if `to` exists).
fn link(file: &File, to: &Path) -> io::Result<()> {
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
    if e.kind() != io::ErrorKind::NotFound || Path::new("/proc/self/fd").exists() {
        return Err(e);
    }
    // No /proc (a bare chroot or container): AT_EMPTY_PATH links the descriptor itself; the
    // kernel allows it to processes with CAP_DAC_READ_SEARCH.
    // SAFETY: as above; the empty path is a valid NUL-terminated string, and the descriptor is
    // open for the duration of the call.
    let r = unsafe {
        libc::linkat(file.as_raw_fd(), c"".as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::AT_EMPTY_PATH)
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
