//! Restoring a snapshot beneath a folder, and nowhere else.
//!
//! A snapshot is input: whoever could write to the store could have written it. So before
//! anything is written every path is checked (relative, no `.`/`..`, no NUL or line breaks, no
//! name twice, a hard link only to a file listed before it), and then every folder on the way
//! to a name is checked again as it is met: a folder, never a link (`symlink_metadata`), made
//! by this restore or already there. A file is written under a temporary name beside its place
//! and linked or renamed there only when whole, so a failed restore leaves no half-written
//! file; without `overwrite`, a name that exists is never replaced.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::format::snapshot::{Entry, Snapshot};
use crate::format::table::Entry as Placed;
use crate::keys::{random_name, ChunkId};
use crate::object::{unpack_chunk, PackReader};
use crate::repo::Reader;
use crate::sys;

/// Longest path a snapshot may hold, and deepest.
const MAX_PATH: usize = 4096;
const MAX_DEPTH: usize = 256;
/// Packs kept open at once (each holds its unwrapped key and a 64 KiB buffer).
const OPEN_PACKS: usize = 16;

/// How to restore.
#[derive(Clone, Debug, Default)]
pub struct RestoreOptions {
    /// Replace files and links that exist (never a folder by a file).
    pub overwrite: bool,
    /// Only these paths (and what is under them); empty: everything.
    pub include: Vec<String>,
}

/// What a restore did.
#[derive(Clone, Debug, Default)]
pub struct RestoreSummary {
    /// Files written.
    pub files: u64,
    /// Folders made or found.
    pub dirs: u64,
    /// Symbolic and hard links made.
    pub links: u64,
    /// Bytes written.
    pub bytes: u64,
}

/// Whether `c` may be one name in a path: not empty, `.` or `..`; no `/`, NUL or line break.
pub(crate) fn safe_component(c: &str) -> bool {
    !c.is_empty()
        && c != "."
        && c != ".."
        && c.len() <= 255
        && !c.bytes().any(|b| matches!(b, b'/' | 0 | b'\n' | b'\r'))
}

fn safe_path(p: &str) -> bool {
    p.len() <= MAX_PATH && p.split('/').count() <= MAX_DEPTH && p.split('/').all(safe_component)
}

/// Refuses the whole snapshot if any entry could reach outside the target.
fn validate(snap: &Snapshot) -> Result<()> {
    let mut seen = HashSet::new();
    let mut files = HashSet::new();
    for e in &snap.entries {
        let p = e.path();
        if !safe_path(p) {
            return Err(Error::Refused(format!("snapshot holds an unsafe path {p:?}; nothing restored")));
        }
        if !seen.insert(p) {
            return Err(Error::Refused(format!("snapshot lists {p:?} twice; nothing restored")));
        }
        match e {
            Entry::File { .. } => {
                files.insert(p);
            }
            Entry::Hardlink { target, .. } if !files.contains(target.as_str()) => {
                return Err(Error::Refused(format!(
                    "hard link {p:?} to {target:?}, not a file before it; nothing restored"
                )));
            }
            Entry::Symlink { target, .. } if target.is_empty() || target.contains('\0') => {
                return Err(Error::Refused(format!(
                    "symbolic link {p:?} has an impossible target; nothing restored"
                )));
            }
            _ => {}
        }
    }
    Ok(())
}

fn selected(path: &str, include: &[String]) -> bool {
    include.is_empty()
        || include.iter().any(|i| {
            let i = i.trim_matches('/');
            path == i || path.starts_with(&format!("{i}/")) || i.starts_with(&format!("{path}/"))
        })
}

/// A file to write: where, and what.
struct FileJob<'s> {
    path: &'s str,
    chunks: &'s [String],
    mode: u32,
    mtime: i64,
}

/// Restores `snap` beneath `target` (made if missing): folders and symbolic links first, in
/// order, so that a name beneath a link is refused, never followed; then the files on every
/// core, each thread with its own open packs; then hard links; then folder modes and times.
pub fn restore(
    reader: &Reader<'_>,
    snap: &Snapshot,
    target: &Path,
    opts: &RestoreOptions,
) -> Result<RestoreSummary> {
    validate(snap)?;
    let index = reader.index()?.chunks;
    fs::create_dir_all(target)?;
    let mut r = Restorer::new(reader, &index, target, opts);
    let by_path: HashMap<&str, &Entry> = snap.entries.iter().map(|e| (e.path(), e)).collect();
    let (mut dirs, mut files, mut links) = (Vec::new(), Vec::new(), Vec::new());
    for e in snap.entries.iter().filter(|e| selected(e.path(), &opts.include)) {
        match e {
            Entry::Dir { path, mode, mtime } => {
                let at = r.place(path)?;
                r.dir(&at)?;
                dirs.push((at, *mode, *mtime));
            }
            Entry::Symlink { path, target } => {
                let at = r.place(path)?;
                r.link(&at, |tmp| sys::symlink(target, tmp))?;
            }
            Entry::File { path, mode, mtime, chunks, .. } => {
                files.push(FileJob { path, chunks, mode: *mode, mtime: *mtime })
            }
            Entry::Hardlink { path, target } if selected(target, &opts.include) => links.push((path, target)),
            // The other name is not restored: this one gets the content.
            Entry::Hardlink { path, target } => match by_path.get(target.as_str()) {
                Some(Entry::File { mode, mtime, chunks, .. }) => {
                    files.push(FileJob { path, chunks, mode: *mode, mtime: *mtime })
                }
                _ => unreachable!("validated: a hard link's target is a file"),
            },
        }
    }
    let written = write_files(reader, &index, target, opts, &files)?;
    for (path, target) in links {
        let (at, from) = (r.place(path)?, r.place(target)?);
        // The link's source must be the file this restore wrote, not a link put there since.
        if !fs::symlink_metadata(&from)?.is_file() {
            return Err(Error::Refused(format!("{target}: not a file any more")));
        }
        r.link(&at, |tmp| fs::hard_link(&from, tmp))?;
    }
    // Folder modes and times last, deepest first: writing into a folder changes its time, and a
    // read-only folder would refuse what goes in it.
    for (at, mode, mtime) in dirs.into_iter().rev() {
        let d = File::open(&at)?;
        sys::set_mode(&d, mode)?;
        sys::set_mtime(&d, mtime)?;
    }
    let mut sum = r.sum;
    (sum.files, sum.bytes) = (written.files, written.bytes);
    Ok(sum)
}

/// Writes the files on every core, on the library's executor (`hyperseal::exec`): each thread
/// takes the next file. A restorer keeps the packs it opened, so a thread takes one for a file
/// and gives it back after, and the packs stay open for the next file. The first error stops the
/// others after their current file (which is whole or absent, as always); the failing file
/// listed first is the one reported, as one thread would.
fn write_files(
    reader: &Reader<'_>,
    index: &HashMap<ChunkId, Placed>,
    target: &Path,
    opts: &RestoreOptions,
    files: &[FileJob<'_>],
) -> Result<RestoreSummary> {
    let idle: Mutex<Vec<Restorer<'_, '_>>> = Mutex::new(Vec::new());
    let failed: Mutex<Option<(usize, Error)>> = Mutex::new(None);
    let stop = AtomicBool::new(false);
    let one = |i: usize| -> std::result::Result<(), hyperseal::Error> {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let job = &files[i];
        let taken = idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut r = taken.unwrap_or_else(|| Restorer::new(reader, index, target, opts));
        let done = r.place(job.path).and_then(|at| r.file(&at, job.chunks, job.mode, job.mtime));
        idle.lock().unwrap_or_else(|p| p.into_inner()).push(r);
        if let Err(e) = done {
            stop.store(true, Ordering::Relaxed);
            let mut slot = failed.lock().unwrap_or_else(|p| p.into_inner());
            if slot.as_ref().is_none_or(|(j, _)| i < *j) {
                *slot = Some((i, e));
            }
        }
        // Errors travel in `failed`: this crate's, not the executor's.
        Ok(())
    };
    let _ = hyperseal::exec::for_each(files.len(), 0, &one);
    if let Some((_, e)) = failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let mut sum = RestoreSummary::default();
    for r in idle.into_inner().unwrap_or_else(|p| p.into_inner()) {
        (sum.files, sum.bytes) = (sum.files + r.sum.files, sum.bytes + r.sum.bytes);
    }
    Ok(sum)
}

/// Makes a folder, or finds one there. `mkdir` never follows a link at the name (it fails with
/// "exists"), and what exists must then be a real folder: a link or a file on the way is
/// refused. Two threads making one folder both succeed.
fn ensure_dir(at: &Path) -> Result<()> {
    match fs::create_dir(at) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        r => return Ok(r?),
    }
    match fs::symlink_metadata(at)? {
        m if m.is_dir() => Ok(()),
        _ => Err(Error::Refused(format!("{}: not a folder (a link or a file on the way)", at.display()))),
    }
}

struct Restorer<'r, 'a> {
    reader: &'r Reader<'a>,
    index: &'r HashMap<ChunkId, Placed>,
    target: &'r Path,
    opts: &'r RestoreOptions,
    packs: HashMap<[u8; 16], PackReader>,
    sum: RestoreSummary,
}

impl<'r, 'a> Restorer<'r, 'a> {
    fn new(
        reader: &'r Reader<'a>,
        index: &'r HashMap<ChunkId, Placed>,
        target: &'r Path,
        opts: &'r RestoreOptions,
    ) -> Self {
        Restorer { reader, index, target, opts, packs: HashMap::new(), sum: RestoreSummary::default() }
    }

    /// The place of `rel` beneath the target, every folder on the way checked (made where
    /// missing): a link or a file on the way is refused.
    fn place(&mut self, rel: &str) -> Result<PathBuf> {
        let mut at = self.target.to_path_buf();
        let parts: Vec<&str> = rel.split('/').collect();
        for c in &parts[..parts.len() - 1] {
            at.push(c);
            ensure_dir(&at)?;
        }
        at.push(parts[parts.len() - 1]);
        Ok(at)
    }

    fn dir(&mut self, at: &Path) -> Result<()> {
        ensure_dir(at)?;
        self.sum.dirs += 1;
        Ok(())
    }

    /// Makes `at` by `make` on a temporary name beside it, then gives it the name: by a link
    /// (which fails where the name exists) or, with overwrite, by a rename over a file or link.
    fn put(&mut self, at: &Path, make: impl FnOnce(&Path) -> io::Result<()>) -> Result<()> {
        let tmp = at.with_file_name(format!(".hyperseal-restore-{}", random_name()));
        make(&tmp)?;
        let placed = match self.opts.overwrite {
            true => match fs::symlink_metadata(at) {
                Ok(m) if m.is_dir() => Err(Error::Refused(format!("{}: a folder is there", at.display()))),
                _ => fs::rename(&tmp, at).map_err(Error::from),
            },
            false => match fs::hard_link(&tmp, at) {
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(Error::Refused(format!(
                    "{}: exists (restore with overwrite to replace it)",
                    at.display()
                ))),
                r => r.map_err(Error::from),
            },
        };
        let _ =
            fs::remove_file(&tmp)
                .or_else(|e| if e.kind() == io::ErrorKind::NotFound { Ok(()) } else { Err(e) });
        placed
    }

    fn link(&mut self, at: &Path, make: impl FnOnce(&Path) -> io::Result<()>) -> Result<()> {
        self.put(at, make)?;
        self.sum.links += 1;
        Ok(())
    }

    fn file(&mut self, at: &Path, chunks: &[String], mode: u32, mtime: i64) -> Result<()> {
        let mut written = 0u64;
        let mut fill = |tmp: &Path| -> io::Result<()> {
            let mut f = File::options().write(true).create_new(true).open(tmp)?;
            for c in chunks {
                let data = self.chunk(c).map_err(io::Error::other)?;
                f.write_all(&data)?;
                written += data.len() as u64;
            }
            sys::set_mode(&f, mode)?;
            sys::set_mtime(&f, mtime)
        };
        let tmp = at.with_file_name(format!(".hyperseal-restore-{}", random_name()));
        if let Err(e) = fill(&tmp) {
            let _ = fs::remove_file(&tmp);
            return Err(e.into());
        }
        if let Err(e) = self.put(at, |t| fs::rename(&tmp, t)) {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        self.sum.files += 1;
        self.sum.bytes += written;
        Ok(())
    }

    /// One chunk's plaintext, checked against its id.
    fn chunk(&mut self, id: &str) -> Result<Vec<u8>> {
        let id = ChunkId::parse(id)?;
        let e = *self.index.get(&id).ok_or_else(|| Error::Damaged(format!("chunk {id} is in no index")))?;
        if !self.packs.contains_key(&e.pack) {
            if self.packs.len() >= OPEN_PACKS {
                self.packs.clear();
            }
            let p = PackReader::open(
                self.reader.store,
                &format!("data/{}", hex::encode(e.pack)),
                self.reader.ids,
            )?;
            self.packs.insert(e.pack, p);
        }
        let stored = self.packs.get_mut(&e.pack).expect("just opened").read(e.offset, e.stored as usize)?;
        unpack_chunk(self.reader.key(), &e, &stored)
    }
}
