//! The marked files written into the work tree by the frontend instead of by git, where it can
//! be: `unlock`'s checkout, and `clone`'s. For `unlock`, the marked files of a locked
//! work tree, which hold their blobs as stored, are read and checked against their blob ids,
//! opened on every core, written as plaintext in place of the age files, and their stat data
//! recorded in git's index, as git's own checkout records it.
//!
//! Why: through the filter, git checks out one file per request and waits for each answer,
//! and the next `git status` sends every rewritten file through the filter again (its index
//! knows nothing of files it did not write). For thousands of small files that protocol, not
//! the cryptography, is the time.
//!
//! Taken here: each marked file that is, by git's stat rule, the file git checked out for its
//! index entry (a locked work tree just cloned or checked out) and whose bytes are its staged
//! blob, so nothing the user changed is overwritten. Left to the caller and git: files
//! changed since, anything not a plain regular file in a plain folder (a link on the way, a
//! missing file, an executable, a conflict, a sparse entry), blobs over 1 MiB (git streams those
//! through the filter, which holds little in memory), files that fail to open (git then reports
//! them as it always has), and every file of an index this does not rewrite (see
//! `index.rs`). A failure to record the stat data loses nothing: git then checks
//! those files' contents once, through the filter.

//!
//! For `clone` ([`write_new`]), into a work tree git has not checked out yet: the marked files'
//! blobs read from git's objects in rounds ([`crate::cat_file::in_rounds`]), each written as a
//! new file; git checks out the rest after.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyperseal::output::OutputOptions;
use hyperseal::recipient::Identity;

use crate::cat_file::{self, CatFile, MOST, ROUND};
use crate::git::{Git, GitError};
use crate::index::{blob_id, Entry, HashKind, Index, Match, Stat};

/// How far before its writing a file's modification time is set. git takes a file whose time
/// is not older than its index's, in whole seconds (git as Debian builds it compares no
/// nanoseconds), for "racily clean": it may have changed unseen, so git compares its contents,
/// here through the filter, and a checkout writes its files and the index within one second.
/// A file dated back is older than the index written after it. Both times come from the file
/// system's clock (the kernel's coarse clock): each file is dated from its own write as the
/// file system recorded it (read back from the file), never from `SystemTime::now`, which can
/// run ahead of that clock on a starved machine (under a full test suite on two vCPUs, files
/// dated one second back from `now` were still sent through the filter). Two seconds: one for
/// whole seconds, one to spare. Safe as git's own check is: a change made after the write gives
/// the file a time of its own, which differs from the one recorded.
const BACKDATE: std::time::Duration = std::time::Duration::from_secs(2);

/// Checks out those of `marked` it can: each whose work-tree file is, by git's stat rule, the
/// file git checked out for its index entry (so nothing the user changed is overwritten);
/// returns the paths it took care of, written as plaintext or left as stored. The caller leaves
/// another index than the repository's (a `stash`'s, a hook's) to git.
pub fn checkout(
    git: &Git,
    root: &Path,
    marked: &[String],
    ids: Vec<Box<dyn Identity>>,
) -> Result<Vec<String>, GitError> {
    if marked.is_empty() || ids.is_empty() {
        return Ok(Vec::new());
    }
    let Some(at) = IndexAt::read(git)? else {
        return Ok(Vec::new());
    };
    let found = at.single_entries(marked);
    // Rounds of blobs of a bounded total size: the size is the entry's, which the file it
    // matches has, and which is the blob's (a locked work tree holds the blobs as stored).
    let (mut rounds, mut round, mut used) = (Vec::new(), Vec::new(), 0);
    let mut dirs = HashMap::new();
    for p in marked {
        let Some(e) = found.get(p.as_bytes()).and_then(|&i| at.index.entries().get(i).map(|e| (i, e))) else {
            continue;
        };
        let (i, e) = e;
        let size = u64::from(e.size);
        if !plain(e) || size > MOST || !as_checked_out(root, p, &e.stat, at.mtime, &mut dirs) {
            continue;
        }
        if used + size > ROUND && !round.is_empty() {
            rounds.push(std::mem::take(&mut round));
            used = 0;
        }
        used += size;
        round.push(Job { path: p.clone(), entry: i, oid: e.oid.clone(), size, stat: None, done: false });
    }
    rounds.push(round);

    let ids: Vec<Arc<dyn Identity>> = ids.into_iter().map(Arc::from).collect();
    let (mut done, mut written) = (Vec::new(), Vec::new());
    for mut round in rounds.into_iter().filter(|r| !r.is_empty()) {
        let blobs = read_round(root, &round, at.hash);
        let blobs: Vec<Option<&[u8]>> = blobs.iter().map(Option::as_deref).collect();
        write_round(root, &mut round, &blobs, &ids, true);
        for j in round.into_iter().filter(|j| j.done) {
            written.extend(j.stat.map(|s| (j.entry, s)));
            done.push(j.path);
        }
    }
    at.record(&written);
    Ok(done)
}

/// Writes as plaintext each of `marked` whose index entry is an ordinary file of at most
/// [`MOST`] bytes and whose path is free, reading the blobs from git in rounds of bounded
/// size through `cat`; records their stat data in the index.
pub fn write_new(
    git: &Git,
    read_deadline: Duration,
    root: &Path,
    marked: &[String],
    ids: Vec<Box<dyn Identity>>,
) -> Result<(), GitError> {
    if marked.is_empty() || ids.is_empty() {
        return Ok(());
    }
    let Some(at) = IndexAt::read(git)? else { return Ok(()) };
    let found = at.single_entries(marked);
    // Each written as a new file: a path already taken (nothing is, in a fresh clone) is left
    // as it is, to git.
    let mut jobs: Vec<Job> = Vec::new();
    for p in marked {
        let Some(&i) = found.get(p.as_bytes()) else { continue };
        let e = &at.index.entries()[i];
        if plain(e) {
            jobs.push(Job {
                path: p.clone(),
                entry: i,
                oid: e.oid.clone(),
                size: 0,
                stat: None,
                done: false,
            });
        }
    }
    if jobs.is_empty() {
        return Ok(());
    }
    // The blobs' sizes (read-tree recorded none), so the rounds stay bounded.
    let sizes = cat_file::sizes(git, &jobs.iter().map(|j| j.oid.as_str()).collect::<Vec<_>>())?;
    for (j, size) in jobs.iter_mut().zip(sizes) {
        j.size = size;
    }
    jobs.retain(|j| j.size <= MOST);
    // Owned: the rounds below write into `jobs`.
    let oids: Vec<String> = jobs.iter().map(|j| j.oid.clone()).collect();
    let oids: Vec<&str> = oids.iter().map(String::as_str).collect();
    let sizes: Vec<u64> = jobs.iter().map(|j| j.size).collect();

    let ids: Vec<Arc<dyn Identity>> = ids.into_iter().map(Arc::from).collect();
    let (mut dirs, mut made) = (HashMap::new(), HashMap::new());
    let mut written = Vec::new();
    let cat = CatFile::start(git, read_deadline).map_err(GitError::Start)?;
    cat_file::in_rounds(cat, &oids, &sizes, cat_file::round_files(&ids), ROUND, |first, blobs| {
        let round = &mut jobs[first..first + blobs.len()];
        for (j, blob) in round.iter().zip(blobs.iter_mut()) {
            // Folders made here (once each), each checked to be a real folder (never a link
            // out of the tree).
            let parent = Path::new(&j.path).parent().filter(|d| !d.as_os_str().is_empty());
            let made = parent.is_none_or(|d| {
                *made.entry(d.to_path_buf()).or_insert_with(|| std::fs::create_dir_all(root.join(d)).is_ok())
            });
            if !made || !real_folders(root, &j.path, &mut dirs) {
                *blob = None;
            }
        }
        write_round(root, round, blobs, &ids, false);
        written.extend(round.iter().filter(|j| j.done).filter_map(|j| j.stat.map(|s| (j.entry, s))));
        Ok::<(), std::io::Error>(())
    })
    .map_err(GitError::Output)?;
    at.record(&written);
    Ok(())
}

struct Job {
    path: String,
    /// Its entry in the index.
    entry: usize,
    oid: String,
    /// The blob's size (here, the size git recorded, which the file has: its stat matched).
    size: u64,
    /// The stat data of the file once written.
    stat: Option<Stat>,
    /// Written, or left as stored.
    done: bool,
}

/// Whether `p` is the file git checked out for its entry (`recorded`, by git's stat rule) and
/// every folder on the way is a real folder (never a link: writing through one could land
/// outside the work tree, which git's checkout never does).
fn as_checked_out(
    root: &Path,
    p: &str,
    recorded: &Stat,
    index_mtime: (u32, u32),
    dirs: &mut HashMap<PathBuf, bool>,
) -> bool {
    if !real_folders(root, p, dirs) {
        return false;
    }
    let Ok(m) = std::fs::symlink_metadata(root.join(p)) else { return false };
    m.file_type().is_file()
        && match recorded.compare(&Stat::of(&m), index_mtime) {
            // Racy: written in the instant git wrote its index (a clone's last files). The bytes
            // tell, as they tell git: every file taken is checked against its blob id when read.
            Match::Same | Match::Racy => true,
            Match::Differs => false,
        }
}

/// Whether every folder on the way to `p` (under `root`) is a real folder, never a link: writing
/// through one could land outside the work tree, which git's checkout never does. `dirs` keeps
/// the answers for the folders already looked at.
fn real_folders(root: &Path, p: &str, dirs: &mut HashMap<PathBuf, bool>) -> bool {
    let mut at = root.to_path_buf();
    for part in Path::new(p).parent().into_iter().flat_map(Path::components) {
        at.push(part);
        let ok = *dirs.entry(at.clone()).or_insert_with(|| {
            matches!(part, std::path::Component::Normal(_))
                && std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_dir())
        });
        if !ok {
            return false;
        }
    }
    true
}

/// Reads a round's files, each of which must be, byte for byte, its staged blob (a locked work
/// tree holds the blobs as stored: checked by git's blob id, so the bytes are the blob's and no
/// `git cat-file` has to read them again). A file that is not its blob (smudged to plaintext
/// earlier) stays for git, which handles it as it always has.
fn read_round(root: &Path, round: &[Job], hash: HashKind) -> Vec<Option<Vec<u8>>> {
    let blobs: Vec<Mutex<Option<Vec<u8>>>> = round.iter().map(|_| Mutex::new(None)).collect();
    let read = |i: usize| -> std::result::Result<(), hyperseal::Error> {
        let job = &round[i];
        // At most one byte past the bound, whatever the file has become since its stat. Room
        // for the recorded size and one byte: one read for the file and one that finds its end
        // (from an empty buffer, the reads would start small and grow).
        let mut bytes = Vec::with_capacity(job.size as usize + 1);
        let got = std::fs::File::open(root.join(&job.path))
            .and_then(|f| std::io::Read::read_to_end(&mut std::io::Read::take(f, MOST + 1), &mut bytes));
        if got.is_ok() && bytes.len() as u64 <= MOST && blob_id(hash, &bytes) == job.oid {
            *blobs[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(bytes);
        }
        Ok(())
    };
    let _ = hyperseal::exec::for_each(round.len(), 0, &read);
    blobs.into_iter().map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner())).collect()
}

/// Opens a round's blobs (`None`: left to git) on every core and writes each as its file's
/// plaintext, marking the jobs done. A blob that does not open stays for git, which reports it
/// as it always has.
/// `replace`: each file replaces the age file there; otherwise each is new, and a path taken
/// meanwhile is left as it is.
fn write_round(
    root: &Path,
    round: &mut [Job],
    blobs: &[Option<&[u8]>],
    ids: &[Arc<dyn Identity>],
    replace: bool,
) {
    // One round with a plugin or the agent for the whole of it; then every file opens offline.
    let present: Vec<&[u8]> = blobs.iter().flatten().copied().collect();
    let ids = crate::unlock_blobs(&present, ids);
    let ids = &ids[..];
    let slots: Vec<Mutex<&mut Job>> = round.iter_mut().map(Mutex::new).collect();
    let one = |i: usize| -> std::result::Result<(), hyperseal::Error> {
        let Some(blob) = blobs[i] else { return Ok(()) };
        let mut job = slots[i].lock().unwrap_or_else(|p| p.into_inner());
        if let Ok(stat) = write_one(root, &job.path, blob, ids, replace) {
            (job.stat, job.done) = (stat, true);
        }
        Ok(())
    };
    let _ = hyperseal::exec::for_each(slots.len(), 0, &one);
}

/// Writes one file's plaintext over its stored age file (`replace`), or as a new file; its stat
/// data, or `None` when it stays as stored (for other recipients, or not an age file: a file
/// replaced already holds the blob, and a new one is left to git).
fn write_one(
    root: &Path,
    path: &str,
    blob: &[u8],
    ids: &[Box<dyn Identity>],
    replace: bool,
) -> Result<Option<Stat>, ()> {
    let Some(plaintext) = crate::smudge_blob(blob, ids).map_err(drop)? else {
        return if replace { Ok(None) } else { Err(()) };
    };
    let dest = root.join(path);
    let mut out = OutputOptions::new().force(replace).unsynced(true).create(&dest).map_err(drop)?;
    std::io::Write::write_all(&mut out, &plaintext).map_err(drop)?;
    out.backdate(BACKDATE).map_err(drop)?;
    out.commit().map_err(drop)?;
    let meta = std::fs::symlink_metadata(&dest).map_err(drop)?;
    Ok(meta.file_type().is_file().then(|| Stat::of(&meta)))
}

/// git's index as read from its file.
pub struct IndexAt {
    pub file: PathBuf,
    /// The file's bytes when read: it is replaced only if it still holds them.
    pub read: Vec<u8>,
    pub index: Index,
    pub hash: HashKind,
    /// The file's modification time (git's stat rule compares files against it).
    pub mtime: (u32, u32),
}

impl IndexAt {
    /// The repository's index (`None` where there is none, or one this does not rewrite).
    pub fn read(git: &Git) -> Result<Option<IndexAt>, GitError> {
        let asked = git.run(&["rev-parse", "--git-path", "index", "--show-object-format"], None)?;
        let asked = String::from_utf8_lossy(&asked);
        let [index_file, format] = asked.lines().collect::<Vec<_>>()[..] else { return Ok(None) };
        let file = git.absolute(index_file)?;
        let hash = match format {
            "sha1" => HashKind::Sha1,
            "sha256" => HashKind::Sha256,
            _ => return Ok(None),
        };
        let (Ok(read), Ok(meta)) = (std::fs::read(&file), std::fs::metadata(&file)) else {
            return Ok(None);
        };
        let Ok(index) = Index::parse(read.clone(), hash) else { return Ok(None) };
        Ok(Some(IndexAt { file, read, index, hash, mtime: Stat::of(&meta).mtime }))
    }

    /// Gives the entries the stat data of the files written for them (`(entry, stat)`) and
    /// writes the index, if it is still as read: under git's own lock (`index.lock`, created
    /// only if absent), renamed into place as git does. Anything in the way (a git running, an
    /// index changed meanwhile) leaves the index as it is: git will compare those files'
    /// contents once instead. The files it records should be dated before it (see
    /// [`BACKDATE`]), so git takes none of them for racily clean.
    pub fn record(mut self, written: &[(usize, Stat)]) {
        if written.is_empty() {
            return;
        }
        for (i, st) in written {
            self.index.set_stat(*i, st);
        }
        let new = self.index.to_bytes();
        let lock = self.file.with_extension("lock");
        let Ok(mut f) = std::fs::OpenOptions::new().write(true).create_new(true).open(&lock) else { return };
        let done = std::fs::read(&self.file).is_ok_and(|now| now == self.read)
            && std::io::Write::write_all(&mut f, &new).is_ok()
            && std::fs::rename(&lock, &self.file).is_ok();
        if !done {
            let _ = std::fs::remove_file(&lock);
        }
    }

    /// Where each of `marked` has its one entry: a path in conflict has several, and only a
    /// single stage-0 entry is taken.
    pub fn single_entries<'a>(&self, marked: &'a [String]) -> HashMap<&'a [u8], usize> {
        let wanted: HashMap<&[u8], &String> = marked.iter().map(|p| (p.as_bytes(), p)).collect();
        let mut found: HashMap<&'a [u8], usize> = HashMap::new();
        for (i, e) in self.index.entries().iter().enumerate() {
            if let Some((&key, _)) = wanted.get_key_value(e.path.as_slice()) {
                found.entry(key).and_modify(|at| *at = usize::MAX).or_insert(i);
            }
        }
        found.retain(|_, at| *at != usize::MAX);
        found
    }
}

/// A merged entry of an ordinary file that git writes to the work tree and looks at.
pub fn plain(e: &Entry) -> bool {
    e.stage == 0 && e.mode == 0o100644 && !e.skip_worktree && !e.intent_to_add && !e.assume_valid
}
