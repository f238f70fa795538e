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
        // name for the instant between the two calls (registered for signal cleanup), and
        // `before` runs first, so that instant is two system calls long. The name says whose it
        // is (`.NAME.hyperseal-*.link`): a SIGKILL in that instant leaves a complete file that
        // never took its name, which the next re-key of NAME removes (`stale_links`).
        check_replaceable(&self.target, dest)?;
        let value = before()?;
        let dir = parent_dir(&self.target);
        let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
        for attempt in 0..16 {
            let tmp = dir.join(match attempt {
                0..8 => link_name(&self.target),
                // A name too long to carry the target's: the anonymous form.
                _ => temporary_name("partial"),
            });
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

/// The instant's name of a file about to replace `target`: `.NAME.hyperseal-RANDOM.link`.
fn link_name(target: &Path) -> String {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let random = temporary_name("link");
    format!(".{name}{}", &random[..])
}

/// Files left by a replacement killed in its last instant (see [`Unnamed::commit`]): complete
/// new versions of `target` that never took its name. Only the caller's own regular files.
pub(crate) fn stale_links(target: &Path) -> Vec<std::path::PathBuf> {
    let name = match target.file_name() {
        Some(n) => format!(".{}.hyperseal-", n.to_string_lossy()),
        None => return Vec::new(),
    };
    let dir = parent_dir(target);
    let Ok(entries) = fs::read_dir(&dir) else { return Vec::new() };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with(&name) && n.ends_with(".link") && n.len() == name.len() + 12 + 5
        })
        .map(|e| e.path())
        .filter(|p| sys::Stamp::of_link(p).is_ok_and(|s| s.regular && s.owned))
        .collect()
}
