//! Linux: the output is an `O_TMPFILE`, a file with no name in the destination's directory. If
//! the process dies at any point before [`Unnamed::commit`] — error, signal, SIGKILL, power cut —
//! the kernel frees it; there is never a partial file to clean up. `commit` names it with
//! `linkat`. Elsewhere [`Unnamed::create`] always answers `None` (see `sys::create_unnamed`).

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use super::dest::{check_replaceable, parent_dir};
use super::named::temporary_name;
use super::{OutputError, OutputErrorKind};
use crate::sys::{self, create_unnamed, link_unnamed as link};

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
        match create_unnamed(&parent_dir(&target)) {
            Ok(Some(file)) => Ok(Some(Unnamed { file, target, force })),
            Ok(None) => Ok(None),
            Err(e) => Err(OutputError::new(OutputErrorKind::Create, dest, e)),
        }
    }

    pub(super) fn file(&mut self) -> &mut File {
        &mut self.file
    }

    pub(super) fn file_ref(&self) -> &File {
        &self.file
    }

    pub(super) fn commit<T>(
        self,
        dest: &Path,
        sync: bool,
        before: impl FnOnce() -> Result<T, OutputError>,
    ) -> Result<T, OutputError> {
        // Data first, name second: after a crash the name, if it exists, has all the bytes.
        if sync {
            self.file.sync_all().map_err(|e| OutputError::new(OutputErrorKind::Write, dest, e))?;
        }
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
        // name for the instant between the two calls (registered for signal cleanup), and
        // `before` runs first, so that instant is two system calls long. The first name tried
        // says whose it is (`.NAME.hyperseal-link`): a SIGKILL in that instant leaves a complete
        // file that never took its name, which the next re-key of NAME removes
        // ([`stale_links`]). Taken (another writer's instant) or too long: an anonymous name.
        check_replaceable(&self.target, dest)?;
        let value = before()?;
        let dir = parent_dir(&self.target);
        let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
        for attempt in 0..16 {
            let tmp = match attempt {
                0 => link_name(&self.target),
                _ => dir.join(temporary_name("partial")),
            };
            let registration = sys::interrupt::register(&tmp);
            match link(&self.file, &tmp) {
                Ok(()) => {
                    let renamed = fs::rename(&tmp, &self.target).map(|()| value).map_err(commit_err);
                    if renamed.is_err() {
                        let _ = fs::remove_file(&tmp);
                    }
                    drop(registration);
                    return renamed;
                }
                Err(e)
                    if matches!(e.kind(), io::ErrorKind::AlreadyExists | io::ErrorKind::InvalidFilename) =>
                {
                    last = e
                }
                Err(e) => return Err(commit_err(e)),
            }
        }
        Err(commit_err(last))
    }
}

/// The instant's name of a file about to replace `target`: `.NAME.hyperseal-link` beside it.
fn link_name(target: &Path) -> std::path::PathBuf {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    target.with_file_name(format!(".{name}.hyperseal-link"))
}

/// A file left by a replacement of `target` killed in its last instant (see
/// [`Unnamed::commit`]): a complete new version that never took its name. Only the caller's own
/// regular file; one `lstat`, whatever the directory holds.
pub(crate) fn stale_links(target: &Path) -> Option<std::path::PathBuf> {
    let p = link_name(target);
    sys::Stamp::of_link(&p).is_ok_and(|s| s.regular && s.owned).then_some(p)
}
