//! The fallback: a named temporary `.hyperseal-*.partial` next to the destination, for
//! filesystems that refuse `O_TMPFILE` (and systems without it). It is removed when dropped and
//! when the process is interrupted: on Unix by a handler for SIGINT, SIGTERM and SIGHUP
//! ([`sys::interrupt`]), on Windows by the system itself, since the file is marked delete-on-close
//! until it is committed (so Ctrl-C, a closed console and even a killed process leave nothing).

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use super::dest::{check_replaceable, parent_dir};
use super::{OutputError, OutputErrorKind};
use crate::sys::{self, interrupt::Registration};

/// How many random names to try before giving up (each collision is a 2^-48 event unless
/// someone is creating these names on purpose).
const ATTEMPTS: usize = 16;

#[derive(Debug)]
pub(super) struct Named {
    file: File,
    tmp: PathBuf,
    target: PathBuf,
    force: bool,
    committed: bool,
    // Dropped after `Drop::drop` removed the file: no moment where the file exists unregistered.
    _registration: Option<Registration>,
}

impl Named {
    pub(super) fn create(dest: &Path, target: PathBuf, force: bool) -> Result<Named, OutputError> {
        let dir = parent_dir(&target);
        let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
        for _ in 0..ATTEMPTS {
            let tmp = dir.join(temporary_name("partial"));
            // Registered before the file exists, so a signal at any moment after creation finds
            // it; with a fresh random name the unlink of a not-yet-created path is harmless.
            let registration = sys::interrupt::register(&tmp);
            match sys::create_temporary(&tmp) {
                Ok(file) => {
                    return Ok(Named {
                        file,
                        tmp,
                        target,
                        force,
                        committed: false,
                        _registration: registration,
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
                Err(e) => return Err(OutputError::new(OutputErrorKind::Create, dest, e)),
            }
        }
        Err(OutputError::new(OutputErrorKind::Create, dest, last))
    }

    pub(super) fn file(&mut self) -> &mut File {
        &mut self.file
    }

    pub(super) fn file_ref(&self) -> &File {
        &self.file
    }

    pub(super) fn path(&self) -> &Path {
        &self.tmp
    }

    pub(super) fn commit<T>(
        mut self,
        dest: &Path,
        sync: bool,
        before: impl FnOnce() -> Result<T, OutputError>,
    ) -> Result<T, OutputError> {
        if sync {
            self.file.sync_all().map_err(|e| OutputError::new(OutputErrorKind::Write, dest, e))?;
        }
        let commit_err = |e| OutputError::new(OutputErrorKind::Commit, dest, e);
        let value = before()?;
        sys::keep_temporary(&self.file).map_err(commit_err)?;
        if self.force {
            check_replaceable(&self.target, dest)?;
            fs::rename(&self.tmp, &self.target).map_err(commit_err)?;
        } else {
            // link(2) fails if the name exists: no-clobber without a check-then-act race.
            match fs::hard_link(&self.tmp, &self.target) {
                Ok(()) => {
                    let _ = fs::remove_file(&self.tmp);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    return Err(OutputError::rule(OutputErrorKind::AlreadyExists, dest))
                }
                // FAT and some network filesystems have no hard links: check, then rename. The
                // gap between the two is a race only with another writer of the same name.
                Err(e) if sys::lacks_hard_links(&e) => {
                    if fs::symlink_metadata(&self.target).is_ok() {
                        return Err(OutputError::rule(OutputErrorKind::AlreadyExists, dest));
                    }
                    fs::rename(&self.tmp, &self.target).map_err(commit_err)?;
                }
                Err(e) => return Err(commit_err(e)),
            }
        }
        self.committed = true;
        Ok(value)
    }
}

impl Drop for Named {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// `.hyperseal-<12 hex digits>.<suffix>`: hidden, recognisable, and unpredictable (another user
/// of a shared directory cannot pre-create it).
pub(super) fn temporary_name(suffix: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut r = [0u8; 6];
    if getrandom::fill(&mut r).is_err() {
        // The OS generator does not fail on supported systems; should it, process id and a
        // counter still give distinct names for `create_new` to try.
        let n = (u64::from(std::process::id()) << 20) ^ COUNTER.fetch_add(1, Ordering::Relaxed);
        r.copy_from_slice(&n.to_be_bytes()[2..]);
    }
    let hex: String = r.iter().map(|b| format!("{b:02x}")).collect();
    format!(".hyperseal-{hex}.{suffix}")
}
