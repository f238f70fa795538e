//! Restoring a snapshot beneath a folder, and nowhere else.
//!
//! A snapshot is input: whoever could write to the store could have written it. So before
//! anything is written every path is checked (each name a plain one on the platform restoring,
//! [`crate::names::safe_name`]; no name twice, a hard link only to a file listed before it), and then every
//! folder on the way to a name is checked again as it is met: a folder, never a link
//! (`symlink_metadata`), made by this restore or already there. A file is written under a
//! temporary name beside its place and linked or renamed there only when whole, so a failed
//! restore leaves no half-written file; without `overwrite`, a name that exists is never
//! replaced. What a restore makes is private (0600, 0700) until it gets its own mode, and
//! folders get theirs last, through a handle opened without following a link.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::format::snapshot::{Entry, Snapshot};
use crate::format::table::Entry as Placed;
use crate::keys::{random_name, ChunkId};
use crate::names::validate;
use crate::object::{unpack_chunk, PackReader};
use crate::repo::Reader;
use crate::sys;

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
    /// Files not restored, and why: a chunk that no place holds whole (a damaged or missing
    /// pack, an index that lies). The rest of the snapshot is restored around them.
    pub failed: Vec<(String, String)>,
}

/// Prefix of the temporary names a restore writes under (then 32 hex digits).
const TMP_PREFIX: &str = ".hyperseal-restore-";

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
    validate(snap, cfg!(windows))?;
    let index = reader.index()?.chunks;
    fs::create_dir_all(target)?;
    remove_stale(target)?;
    let mut r = Restorer::new(reader, &index, target, opts);
    let by_path: HashMap<&str, &Entry> = snap.entries.iter().map(|e| (e.path(), e)).collect();
    let (mut dirs, mut files, mut links) = (Vec::new(), Vec::new(), Vec::new());
    for e in snap.entries.iter().filter(|e| selected(e.path(), &opts.include)) {
        match e {
            Entry::Dir { path, mode, mtime } => {
                let at = r.place(path)?;
                let made = r.dir(&at)?;
                remove_stale(&at)?;
                dirs.push(DirDone { at, made, mode: *mode, mtime: *mtime });
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
    let lost: HashSet<&str> = written.failed.iter().map(|(p, _)| p.as_str()).collect();
    let mut failed_links = Vec::new();
    for (path, target) in links {
        if lost.contains(target.as_str()) {
            failed_links
                .push((path.to_string(), format!("another name of {target}, which was not restored")));
            continue;
        }
        let (at, from) = (r.place(path)?, r.place(target)?);
        // The link's source must be the file this restore wrote, not a link put there since.
        if !fs::symlink_metadata(&from)?.is_file() {
            return Err(Error::Refused(format!("{target}: not a file any more")));
        }
        r.link(&at, |tmp| fs::hard_link(&from, tmp))?;
    }
    finish_dirs(dirs)?;
    let mut sum = r.sum;
    (sum.files, sum.bytes, sum.failed) = (written.files, written.bytes, written.failed);
    sum.failed.extend(failed_links);
    Ok(sum)
}

/// A folder a restore made or found, to get its mode and time last.
struct DirDone {
    at: PathBuf,
    /// As it was when made or found: what is given a mode must still be this folder.
    made: sys::Stat,
    mode: u32,
    mtime: i64,
}

/// Folder modes and times last, deepest first: writing into a folder changes its time, and a
/// read-only folder would refuse what goes in it. Each through a handle to the folder made, so
/// a folder swapped since (for a link to one outside, say) is refused, never followed.
fn finish_dirs(dirs: Vec<DirDone>) -> Result<()> {
    for d in dirs.into_iter().rev() {
        // `Other` is how `sys` says the folder was replaced; anything else is the system's error.
        let f = sys::open_made_dir(&d.at, &d.made).map_err(|e| match e.kind() {
            io::ErrorKind::Other => Error::Refused(format!("{}: {e}; its mode not set", d.at.display())),
            _ => Error::from(e),
        })?;
        sys::set_mode(&f, d.mode)?;
        sys::set_mtime(&f, d.mtime)?;
    }
    Ok(())
}

/// Removes what an interrupted restore left in `dir`: files and links named [`TMP_PREFIX`] and
/// 32 hex digits, never a folder or any other name. None of this restore's own is there: the
/// pass that meets folders is sequential, each of its temporaries gone before the next entry,
/// and files are written after it. (So two restores into one target at once are not supported:
/// one may take the other's temporaries for stale.)
fn remove_stale(dir: &Path) -> Result<()> {
    for e in fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name();
        if name.to_str().is_some_and(is_temporary) && !e.file_type()?.is_dir() {
            match fs::remove_file(e.path()) {
                Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err.into()),
                _ => {}
            }
        }
    }
    Ok(())
}

fn is_temporary(name: &str) -> bool {
    name.strip_prefix(TMP_PREFIX)
        .is_some_and(|h| h.len() == 32 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

/// Writes the files on every core, on the library's executor (`hyperseal::exec`): each thread
/// takes the next file. A restorer keeps the packs it opened, so a thread takes one for a file
/// and gives it back after, and the packs stay open for the next file. The first error stops the
/// others after their current file (which is whole or absent, as always); the failing file
/// listed first is the one reported, as one thread would.
fn write_files(
    reader: &Reader<'_>,
    index: &HashMap<ChunkId, Vec<Placed>>,
    target: &Path,
    opts: &RestoreOptions,
    files: &[FileJob<'_>],
) -> Result<RestoreSummary> {
    let idle: Mutex<Vec<Restorer<'_, '_>>> = Mutex::new(Vec::new());
    let failed: Mutex<Option<(usize, Error)>> = Mutex::new(None);
    let damaged: Mutex<Vec<(usize, String)>> = Mutex::new(Vec::new());
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
        // A file whose data is damaged costs that file only; anything else (the target
        // refusing a write, a full disk) stops the restore.
        let done = match done {
            Ok(Err(why)) => {
                damaged.lock().unwrap_or_else(|p| p.into_inner()).push((i, why));
                Ok(())
            }
            Ok(Ok(())) => Ok(()),
            Err(e) => Err(e),
        };
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
    let mut damaged = damaged.into_inner().unwrap_or_else(|p| p.into_inner());
    damaged.sort();
    sum.failed = damaged.into_iter().map(|(i, why)| (files[i].path.to_string(), why)).collect();
    for r in idle.into_inner().unwrap_or_else(|p| p.into_inner()) {
        (sum.files, sum.bytes) = (sum.files + r.sum.files, sum.bytes + r.sum.bytes);
    }
    Ok(sum)
}

/// Makes a folder (private until [`finish_dirs`]), or finds one there; what it is. `mkdir`
/// never follows a link at the name (it fails with "exists"), and what is there must be a real
/// folder: a link or a file on the way is refused. Two threads making one folder both succeed.
fn ensure_dir(at: &Path) -> Result<sys::Stat> {
    match sys::create_dir_private(at) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e.into()),
        _ => {}
    }
    match fs::symlink_metadata(at)? {
        m if m.is_dir() => Ok(sys::stat(&m)),
        _ => Err(Error::Refused(format!("{}: not a folder (a link or a file on the way)", at.display()))),
    }
}

struct Restorer<'r, 'a> {
    reader: &'r Reader<'a>,
    index: &'r HashMap<ChunkId, Vec<Placed>>,
    target: &'r Path,
    opts: &'r RestoreOptions,
    packs: HashMap<[u8; 16], PackReader>,
    sum: RestoreSummary,
}

impl<'r, 'a> Restorer<'r, 'a> {
    fn new(
        reader: &'r Reader<'a>,
        index: &'r HashMap<ChunkId, Vec<Placed>>,
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

    fn dir(&mut self, at: &Path) -> Result<sys::Stat> {
        let made = ensure_dir(at)?;
        self.sum.dirs += 1;
        Ok(made)
    }

    /// Makes `at` by `make` on a temporary name beside it, then gives it the name: by a link
    /// (which fails where the name exists) or, with overwrite, by a rename over a file or link.
    fn put(&mut self, at: &Path, make: impl FnOnce(&Path) -> io::Result<()>) -> Result<()> {
        let tmp = at.with_file_name(format!("{TMP_PREFIX}{}", random_name()));
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

    /// Writes one file whole, or not at all: `Ok(Err(why))` where its data is damaged (the
    /// restore goes on without it), `Err` where the target fails (the restore stops).
    fn file(
        &mut self,
        at: &Path,
        chunks: &[String],
        mode: u32,
        mtime: i64,
    ) -> Result<std::result::Result<(), String>> {
        let mut written = 0u64;
        let mut damage = None;
        let mut fill = |tmp: &Path| -> io::Result<()> {
            let mut f = sys::create_private(tmp)?;
            for c in chunks {
                let data = match self.chunk(c) {
                    Ok(d) => d,
                    Err(e) => {
                        damage = Some(e.to_string());
                        return Ok(());
                    }
                };
                f.write_all(&data)?;
                written += data.len() as u64;
            }
            sys::set_mode(&f, mode)?;
            sys::set_mtime(&f, mtime)
        };
        let tmp = at.with_file_name(format!("{TMP_PREFIX}{}", random_name()));
        let filled = fill(&tmp);
        if let Some(why) = damage {
            let _ = fs::remove_file(&tmp);
            return Ok(Err(why));
        }
        if let Err(e) = filled {
            let _ = fs::remove_file(&tmp);
            return Err(e.into());
        }
        if let Err(e) = self.put(at, |t| fs::rename(&tmp, t)) {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        self.sum.files += 1;
        self.sum.bytes += written;
        Ok(Ok(()))
    }

    /// One chunk's plaintext, checked against its id: from the first place that holds it
    /// whole. An index is a writer's word, so a place may be wrong (a planted index, a pack
    /// gone or damaged); another index's place of the same chunk is then tried.
    fn chunk(&mut self, id: &str) -> Result<Vec<u8>> {
        let id = ChunkId::parse(id)?;
        let places =
            self.index.get(&id).ok_or_else(|| Error::Damaged(format!("chunk {id} is in no index")))?;
        let mut last = None;
        for e in places {
            match self.chunk_at(e) {
                Ok(data) => return Ok(data),
                Err(err) => last = Some(err),
            }
        }
        Err(last.unwrap_or_else(|| Error::Damaged(format!("chunk {id} is in no index"))))
    }

    fn chunk_at(&mut self, e: &Placed) -> Result<Vec<u8>> {
        let name = format!("data/{}", hex::encode(e.pack));
        let named = |err: Error| Error::Damaged(format!("{name}: {err}"));
        if !self.packs.contains_key(&e.pack) {
            if self.packs.len() >= OPEN_PACKS {
                self.packs.clear();
            }
            let p = PackReader::open(self.reader.store, &name, self.reader.ids).map_err(named)?;
            self.packs.insert(e.pack, p);
        }
        let stored = self
            .packs
            .get_mut(&e.pack)
            .expect("just opened")
            .read(e.offset, e.stored as usize)
            .map_err(named)?;
        unpack_chunk(self.reader.key(), e, &stored).map_err(named)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporaries_are_exactly_the_prefix_and_32_hex_digits() {
        assert!(is_temporary(&format!("{TMP_PREFIX}{}", random_name())));
        for not in [
            format!("{TMP_PREFIX}{}", "a".repeat(31)),
            format!("{TMP_PREFIX}{}", "a".repeat(33)),
            format!("{TMP_PREFIX}{}", "A".repeat(32)),
            format!("{TMP_PREFIX}{}x", "a".repeat(31)),
            format!("x{TMP_PREFIX}{}", "a".repeat(32)),
            "notes.txt".to_string(),
        ] {
            assert!(!is_temporary(&not), "{not:?}");
        }
    }

    /// A folder swapped for a link between the files being written and the modes being set:
    /// the mode goes nowhere, least of all to the folder the link names.
    #[cfg(unix)]
    #[test]
    fn a_folder_swapped_for_a_link_is_not_given_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let (made, outside) = (t.path().join("made"), t.path().join("outside"));
        fs::create_dir(&outside).unwrap();
        fs::set_permissions(&outside, fs::Permissions::from_mode(0o700)).unwrap();
        let found = ensure_dir(&made).unwrap();
        fs::remove_dir(&made).unwrap();
        std::os::unix::fs::symlink(&outside, &made).unwrap();
        let r = finish_dirs(vec![DirDone { at: made.clone(), made: found, mode: 0o777, mtime: 5 }]);
        assert!(matches!(r, Err(Error::Refused(_))), "{r:?}");
        let m = fs::metadata(&outside).unwrap();
        assert_eq!(m.permissions().mode() & 0o7777, 0o700, "the mode reached the folder outside");
        assert_ne!(sys::stat(&m).mtime, 5);

        // Another real folder at the name is not the one made either.
        fs::remove_file(&made).unwrap();
        let found = ensure_dir(&made).unwrap();
        fs::rename(&made, t.path().join("moved")).unwrap();
        fs::rename(&outside, &made).unwrap();
        let r = finish_dirs(vec![DirDone { at: made.clone(), made: found, mode: 0o777, mtime: 5 }]);
        assert!(matches!(r, Err(Error::Refused(_))), "{r:?}");
        assert_eq!(fs::metadata(&made).unwrap().permissions().mode() & 0o7777, 0o700);

        // The folder made gets its mode and time.
        let found = sys::stat(&fs::symlink_metadata(&made).unwrap());
        finish_dirs(vec![DirDone { at: made.clone(), made: found, mode: 0o750, mtime: 5 }]).unwrap();
        let m = fs::metadata(&made).unwrap();
        assert_eq!((m.permissions().mode() & 0o7777, sys::stat(&m).mtime), (0o750, 5));
    }

    #[cfg(unix)]
    #[test]
    fn a_folder_made_is_private_until_its_mode_is_set() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        ensure_dir(&t.path().join("d")).unwrap();
        assert_eq!(fs::metadata(t.path().join("d")).unwrap().permissions().mode() & 0o777, 0o700);
    }
}
