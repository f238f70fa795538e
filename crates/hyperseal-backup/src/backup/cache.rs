//! The writer's change-detection cache: for each file of the last backup, its length, times,
//! inode and chunk ids. A file that matches is not read again, its chunks taken from here. The
//! writer cannot read old snapshots, and with this it need not.
//!
//! The cache is a local JSON file of the writer's. It holds chunk ids (keyed hashes: they say
//! nothing without the deduplication key, which the writer holds anyway) and file names, so it
//! is written with the writer key's care (0600). An entry is trusted only if every one of its
//! chunks is in the repository's id lists now, so a prune since the last run, another repository
//! or a damaged cache costs a re-read, never a snapshot with missing chunks.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::keys::ChunkId;
use crate::sys::Stat;

/// Most bytes of a cache file (about five million files).
const MAX_CACHE: u64 = 1 << 30;

#[derive(Serialize, Deserialize)]
struct CacheFile {
    version: u32,
    repo: String,
    files: HashMap<String, Cached>,
}

/// What a file looked like, and its chunks.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct Cached {
    size: u64,
    mtime: i64,
    mtime_ns: u32,
    ctime: i64,
    ctime_ns: u32,
    ino: u64,
    pub chunks: Vec<String>,
}

impl Cached {
    pub(crate) fn new(st: &Stat, chunks: Vec<String>) -> Cached {
        Cached {
            size: st.size,
            mtime: st.mtime,
            mtime_ns: st.mtime_ns,
            ctime: st.ctime,
            ctime_ns: st.ctime_ns,
            ino: st.ino,
            chunks,
        }
    }

    fn matches(&self, st: &Stat) -> bool {
        (self.size, self.mtime, self.mtime_ns, self.ctime, self.ctime_ns, self.ino)
            == (st.size, st.mtime, st.mtime_ns, st.ctime, st.ctime_ns, st.ino)
    }
}

/// The entries of the last run that still hold.
#[derive(Default)]
pub(crate) struct Cache {
    files: HashMap<String, Cached>,
}

impl Cache {
    /// Reads the cache at `path` for repository `repo`, keeping only entries whose chunks the
    /// repository holds. A missing, foreign or unreadable cache is an empty one.
    pub(crate) fn load(path: &Path, repo: &str, known: &HashSet<ChunkId>) -> Cache {
        let mut bytes = Vec::new();
        let read = File::open(path).and_then(|f| f.take(MAX_CACHE + 1).read_to_end(&mut bytes));
        if read.is_err() || bytes.len() as u64 > MAX_CACHE {
            return Cache::default();
        }
        let Ok(file) = serde_json::from_slice::<CacheFile>(&bytes) else { return Cache::default() };
        if file.version != 1 || file.repo != repo {
            return Cache::default();
        }
        let held =
            |c: &Cached| c.chunks.iter().all(|h| ChunkId::parse(h).is_ok_and(|id| known.contains(&id)));
        Cache { files: file.files.into_iter().filter(|(_, c)| held(c)).collect() }
    }

    /// The chunks of `path` if it is as cached.
    pub(crate) fn lookup(&self, path: &str, st: &Stat) -> Option<&Cached> {
        self.files.get(path).filter(|c| c.matches(st))
    }

    /// Writes `files` as the new cache: a temporary beside it, then a rename, so a killed run
    /// leaves the old cache or the new one.
    pub(crate) fn save(path: &Path, repo: &str, files: HashMap<String, Cached>) -> std::io::Result<()> {
        let json = serde_json::to_vec(&CacheFile { version: 1, repo: repo.to_string(), files })?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = path.with_extension(format!("tmp-{}", crate::keys::random_name()));
        let mut f = crate::sys::create_private(&tmp)?;
        let done = f.write_all(&json).and_then(|_| f.sync_all()).and_then(|_| std::fs::rename(&tmp, path));
        if done.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        done
    }
}
