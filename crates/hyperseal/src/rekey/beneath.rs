//! The files a tree walk found, reached again without following a link: a tree re-key run by
//! root over a shared folder must touch only the very files its walk found, whatever the
//! folder's members rename or replace meanwhile.
//!
//! The walk keeps each root (and the target of each link it was told to follow) open as a
//! directory handle, and records every file as its place under that handle: the directories on
//! the way down by name and identity (device and inode), then the file's own name and identity.
//! A re-key of the file opens that chain again one directory at a time, never through a link
//! (`O_NOFOLLOW | O_DIRECTORY`), checks each directory is still the one walked, and from then on
//! names the file through the parent's handle: `/proc/self/fd/N/NAME`. Every later step of the
//! re-key (its lock, journal, temporary, second name and rename) goes through that name, so a
//! directory swapped for a link after the check changes nothing: the kernel resolves `N` to the
//! directory this process holds, and only the file's own name is looked up in it. The file
//! itself is opened without following a link and without blocking (a FIFO swapped in fails at
//! once), and is re-keyed only if it is the walked file ([`Place::check`]).
//!
//! Where `/proc/self/fd` is missing (other systems, a bare container), the chain is checked by
//! path, name by name without following links, immediately before the re-key: the file and its
//! directories must still be the walked ones, but a swap between that check and the re-key's
//! own opens is not excluded there (docs/SECURITY.md says so).

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::sys::{FileId, Stamp};

/// A directory the walk starts from, held open where handles can name paths.
pub(super) struct Base {
    dir: Option<File>,
    path: PathBuf,
}

impl Base {
    /// Opens the directory at `path` (through a link, if it is one: a root given by the caller,
    /// or a link present at walk time that the caller asked to follow), and checks it is the
    /// directory `expect` identifies.
    pub(super) fn open(path: &Path, expect: FileId) -> io::Result<Arc<Base>> {
        let dir = match handles() {
            true => Some(open_dir(path, false)?),
            false => None,
        };
        let base = Base { dir, path: path.to_path_buf() };
        if base.stamp()?.id != expect {
            return Err(moved(path));
        }
        Ok(Arc::new(base))
    }

    /// The path that names this directory: its handle's, or its own without handles.
    pub(super) fn via(&self) -> PathBuf {
        via(self.dir.as_ref(), &self.path)
    }

    fn stamp(&self) -> io::Result<Stamp> {
        match &self.dir {
            Some(f) => Stamp::of(f),
            None => Stamp::of_path(&self.path),
        }
    }
}

/// Where the walk found a file (module docs).
#[derive(Clone)]
pub struct Place {
    base: Arc<Base>,
    dirs: Vec<(OsString, FileId)>,
    name: OsString,
    /// The file's identity at walk time.
    pub(crate) id: FileId,
}

impl Place {
    pub(super) fn new(base: Arc<Base>, dirs: Vec<(OsString, FileId)>, name: OsString, id: FileId) -> Place {
        Place { base, dirs, name, id }
    }

    /// Opens the directories down to the file's parent again, none through a link, each
    /// checked to be the walked one. The result names the file through the parent's handle.
    pub(super) fn reach(&self, display: &Path) -> io::Result<Reached> {
        let mut at = self.base.via();
        let mut held = None;
        for (name, id) in &self.dirs {
            let path = at.join(name);
            let dir = match handles() {
                true => Some(open_dir(&path, true).map_err(|e| refused(e, display))?),
                false => None,
            };
            let stamp = match &dir {
                Some(f) => Stamp::of(f)?,
                None => Stamp::of_link(&path)?,
            };
            if stamp.id != *id || stamp.regular {
                return Err(moved(display));
            }
            at = via(dir.as_ref(), &path);
            held = dir.or(held);
        }
        Ok(Reached { _parent: held, _base: self.base.clone(), path: at.join(&self.name) })
    }
}

/// Enters the directory the walk found at `path` (its `lstat` gave `id`): opened without
/// following a link and checked to be that directory. The handle (kept while its entries are
/// listed) and the path that names the directory through it.
pub(super) fn enter(path: &Path, id: FileId) -> io::Result<(Option<File>, PathBuf)> {
    if !handles() {
        return Ok((None, path.to_path_buf()));
    }
    let dir = open_dir(path, true)?;
    if Stamp::of(&dir)?.id != id {
        return Err(moved(path));
    }
    let via = proc_path(&dir);
    Ok((Some(dir), via))
}

/// A file's parent opened again: `path` names the file through it while this is held.
pub(super) struct Reached {
    _parent: Option<File>,
    _base: Arc<Base>,
    /// The file's name through its parent's handle (`/proc/self/fd/N/NAME`), or its path.
    pub(super) path: PathBuf,
}

/// The file at `path` opened without following a link and without blocking, if it is the file
/// `expect` identifies and a regular file; otherwise the error says it was replaced.
pub(super) fn open_checked(path: &Path, write: bool, expect: FileId, display: &Path) -> io::Result<File> {
    let mut opts = File::options();
    opts.read(true).write(write);
    let file = crate::sys::no_follow(&mut opts).open(path).map_err(|e| refused(e, display))?;
    let stamp = Stamp::of(&file)?;
    if stamp.id != expect || !stamp.regular {
        return Err(moved(display));
    }
    Ok(file)
}

/// The error of a file or directory that is no longer the one the walk found.
pub(super) fn moved(display: &Path) -> io::Error {
    io::Error::other(format!(
        "{} was replaced after the walk (by a link, another file or something that is not a regular \
         file): it was not touched",
        display.display()
    ))
}

fn refused(e: io::Error, display: &Path) -> io::Error {
    match crate::sys::is_link_refusal(&e) || e.raw_os_error() == Some(NOT_A_DIRECTORY) {
        true => moved(display),
        false => e,
    }
}

#[cfg(unix)]
const NOT_A_DIRECTORY: i32 = libc::ENOTDIR;
#[cfg(not(unix))]
const NOT_A_DIRECTORY: i32 = -1;

/// Whether directory handles can name paths here (`/proc/self/fd`, Linux).
fn handles() -> bool {
    static HANDLES: OnceLock<bool> = OnceLock::new();
    *HANDLES.get_or_init(|| cfg!(target_os = "linux") && Path::new("/proc/self/fd").is_dir())
}

fn via(dir: Option<&File>, path: &Path) -> PathBuf {
    match dir {
        Some(f) => proc_path(f),
        None => path.to_path_buf(),
    }
}

#[cfg(unix)]
fn proc_path(f: &File) -> PathBuf {
    use std::os::fd::AsRawFd;
    PathBuf::from(format!("/proc/self/fd/{}", f.as_raw_fd()))
}

#[cfg(not(unix))]
fn proc_path(_: &File) -> PathBuf {
    unreachable!("handles are used on Linux only")
}

/// A directory opened for reading its entries; never through a link at the last name when
/// `no_follow`, and never blocking.
#[cfg(unix)]
fn open_dir(path: &Path, no_follow: bool) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let follow = if no_follow { libc::O_NOFOLLOW } else { 0 };
    File::options().read(true).custom_flags(libc::O_DIRECTORY | libc::O_NONBLOCK | follow).open(path)
}

#[cfg(not(unix))]
fn open_dir(_: &Path, _: bool) -> io::Result<File> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// Rewrites the temporary names of a re-key's messages (`/proc/self/fd/N/NAME`, and the names
/// beside it: `/proc/self/fd/N/.NAME.hyperseal-rekey`) as the paths the caller knows, so every
/// line names the file as the walk found it.
pub(super) fn relabel(text: &str, through: &Path, display: &Path) -> String {
    let text = text.replace(through.to_string_lossy().as_ref(), display.to_string_lossy().as_ref());
    text.replace(&parent_text(through), &parent_text(display))
}

/// A path's folder as text, ending in `/` (`./` for a bare name).
fn parent_text(p: &Path) -> String {
    let parent = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    format!("{}/", parent.to_string_lossy())
}
