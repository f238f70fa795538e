//! The tree walk: every name under the paths given, in sorted order, each folder before what
//! it holds; files are cut into chunks on the way and fed to the pipeline. Links are recorded,
//! never followed. What cannot be read is skipped with a warning, as restic does, so one
//! unreadable file does not lose the whole backup. A file is read only if what opens is what
//! was listed ([`sys::open_listed_file`]): a link or a FIFO swapped in after the `lstat` is
//! skipped, never followed or waited on. Folders are walked by handle ([`sys::Dir`]): a name is
//! looked at and opened in the folder that was listed, so a folder on the way swapped for a
//! link after it was opened leads nowhere else.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs;
use std::io::Read;
use std::path::Path;

use fastcdc::v2020::StreamCDC;
use globset::{Glob, GlobSet, GlobSetBuilder};

use super::cache::Cache;
use super::pipeline::Feed;
use crate::error::{Error, Result};
use crate::format::config::Chunker;
use crate::format::snapshot::Entry;
use crate::sys::{self, stat, Kind, Stat};

/// The chunker's seed for a repository: FastCDC's gear table is XORed with it, so where the
/// cuts fall depends on the deduplication key. Without it, a file's chunk lengths are the same
/// in every repository, and anyone who can list the store could match the lengths in the clear
/// id lists against a known file's. Derived, not stored: a writer holds the deduplication key
/// and reads no config. Never zero (zero leaves the table as published).
pub(crate) fn chunker_seed(dedup_key: &[u8; 32]) -> u64 {
    let k = blake3::derive_key("hyperseal backup v1 chunker seed", dedup_key);
    u64::from_le_bytes(k[..8].try_into().expect("8 bytes")).max(1)
}

/// An entry whose chunk ids are not known yet: a file's are the pipeline's chunks
/// `first..first + count`.
pub(crate) enum Pending {
    Done(Entry),
    File {
        path: String,
        mode: u32,
        mtime: i64,
        size: u64,
        first: usize,
        count: usize,
        stat: Option<Stat>,
    },
    /// A file as the cache has it: not read.
    Cached {
        path: String,
        stat: Stat,
        chunks: Vec<String>,
    },
}

/// Counts a walk reports.
#[derive(Default, Clone, Copy, Debug)]
pub struct Progress {
    /// Files read so far.
    pub files: u64,
    /// Bytes read so far.
    pub bytes: u64,
    /// Bytes of files the cache showed unchanged (not read): done as well.
    pub unchanged: u64,
}

/// Globs in `.gitignore`'s spirit: a pattern without `/` matches a name at any depth, one with
/// `/` matches the path under a backed-up root (`sub/x`), or with the root's name (`root/sub/x`).
pub(crate) struct Excludes {
    names: GlobSet,
    paths: GlobSet,
}

impl Excludes {
    pub(crate) fn new(patterns: &[String]) -> Result<Excludes> {
        let (mut names, mut paths) = (GlobSetBuilder::new(), GlobSetBuilder::new());
        for p in patterns {
            let p = p.trim_end_matches('/');
            let g = Glob::new(p.trim_start_matches('/'))
                .map_err(|e| Error::Refused(format!("exclude pattern {p:?}: {e}")))?;
            match p.contains('/') {
                true => paths.add(g),
                false => names.add(g),
            };
        }
        let build =
            |b: GlobSetBuilder| b.build().map_err(|e| Error::Refused(format!("exclude patterns: {e}")));
        Ok(Excludes { names: build(names)?, paths: build(paths)? })
    }

    fn matches(&self, rel: &str) -> bool {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        // A path pattern may name the backed-up folder or start beneath it.
        let under = rel.split_once('/').map(|(_, r)| r);
        self.names.is_match(name) || self.paths.is_match(rel) || under.is_some_and(|u| self.paths.is_match(u))
    }
}

/// Where a name is: a path given to the walk, or a name in a folder the walk holds open.
#[derive(Clone, Copy)]
enum At<'d> {
    Root(&'d Path),
    In(&'d sys::Dir, &'d OsStr),
}

pub(crate) struct Walk<'a, 'f> {
    pub feed: &'f mut Feed<'a>,
    pub chunker: Chunker,
    /// The chunker's per-repository seed ([`chunker_seed`]).
    pub seed: u64,
    pub excludes: &'a Excludes,
    pub one_file_system: bool,
    pub progress: Option<&'a (dyn Fn(Progress) + Sync)>,
    pub out: Vec<Pending>,
    pub warnings: Vec<String>,
    pub counts: Progress,
    /// Files taken from the cache, not read.
    pub cached: u64,
    pub cache: Option<&'a Cache>,
    /// The stored name of each file with several names (device, inode): its later names are
    /// hard links to it. A name is recorded only once its content is stored.
    links: HashMap<(u64, u64), String>,
    root_dev: u64,
}

impl<'a, 'f> Walk<'a, 'f> {
    pub(crate) fn new(feed: &'f mut Feed<'a>, chunker: Chunker, excludes: &'a Excludes) -> Self {
        Walk {
            feed,
            chunker,
            seed: 0,
            excludes,
            one_file_system: false,
            progress: None,
            out: Vec::new(),
            warnings: Vec::new(),
            counts: Progress::default(),
            cached: 0,
            cache: None,
            links: HashMap::new(),
            root_dev: 0,
        }
    }

    /// Walks one path given on the command line; it is stored under its own name.
    pub(crate) fn root(&mut self, path: &Path, name: &str) -> Result<()> {
        let meta = fs::symlink_metadata(path)?;
        let st = stat(&meta);
        self.root_dev = st.dev;
        self.visit(At::Root(path), name, st, sys::kind(&meta))
    }

    /// A stream (standard input) as one file.
    pub(crate) fn stream(&mut self, input: &mut dyn Read, name: &str, mtime: i64) -> Result<()> {
        self.chunks(input, name.to_string(), 0o600, mtime, None).map(|_| ())
    }

    fn warn(&mut self, what: String) {
        self.warnings.push(what);
    }

    fn visit(&mut self, at: At<'_>, rel: &str, st: Stat, kind: Kind) -> Result<()> {
        if self.excludes.matches(rel) {
            return Ok(());
        }
        if kind == Kind::Dir {
            self.out.push(Pending::Done(Entry::Dir { path: rel.into(), mode: st.mode, mtime: st.mtime }));
            if !(self.one_file_system && st.dev != self.root_dev) {
                let opened = match at {
                    At::Root(path) => sys::Dir::open(path, &st),
                    At::In(dir, name) => dir.open_dir(name, &st),
                };
                match opened {
                    Ok(d) => self.dir(&d, rel)?,
                    Err(e) => self.warn(format!("{rel}: {e}; its content skipped")),
                }
            }
        } else if kind == Kind::Symlink {
            let target = match at {
                At::Root(path) => fs::read_link(path).map(|t| t.into_os_string()),
                At::In(dir, name) => dir.read_link(name),
            };
            match target.map(|t| t.into_string()) {
                Ok(Ok(target)) => self.out.push(Pending::Done(Entry::Symlink { path: rel.into(), target })),
                Ok(Err(_)) => self.warn(format!("{rel}: link target is not UTF-8; skipped")),
                Err(e) => self.warn(format!("{rel}: {e}; skipped")),
            }
        } else if kind == Kind::File {
            let inode = (st.nlink > 1).then_some((st.dev, st.ino));
            if let Some(first) = inode.and_then(|i| self.links.get(&i)) {
                let target = first.clone();
                self.out.push(Pending::Done(Entry::Hardlink { path: rel.into(), target }));
                return Ok(());
            }
            // A name skipped as unreadable is no file of the snapshot, so no link may name it:
            // the file's next name is then read as a file, and becomes the first if it is stored.
            if self.file(at, rel, st)? {
                if let Some(i) = inode {
                    self.links.insert(i, rel.to_string());
                }
            }
        } else {
            self.warn(format!("{rel}: not a file, folder or link; skipped"));
        }
        Ok(())
    }

    /// One regular file, from the cache or read; whether it is stored (not skipped).
    fn file(&mut self, at: At<'_>, rel: &str, st: Stat) -> Result<bool> {
        if let Some(hit) = self.cache.and_then(|c| c.lookup(rel, &st)) {
            let chunks = hit.chunks.clone();
            self.out.push(Pending::Cached { path: rel.into(), stat: st, chunks });
            self.counts.files += 1;
            self.counts.unchanged += st.size;
            self.cached += 1;
            if let Some(p) = self.progress {
                p(self.counts);
            }
            return Ok(true);
        }
        let opened = match at {
            At::Root(path) => sys::open_listed_file(path, &st),
            At::In(dir, name) => dir.open_file(name, &st),
        };
        match opened {
            Ok(mut f) => self.chunks(&mut f, rel.to_string(), st.mode, st.mtime, Some(st)),
            Err(e) => {
                self.warn(format!("{rel}: {e}; skipped"));
                Ok(false)
            }
        }
    }

    fn dir(&mut self, dir: &sys::Dir, rel: &str) -> Result<()> {
        let (mut names, failed) = dir.names();
        if let Some(e) = failed {
            self.warn(format!("{rel}: {e}; its content listed before it is kept"));
        }
        names.sort();
        for n in names {
            let Some(s) = n.to_str() else {
                self.warn(format!("{rel}/{}: name is not UTF-8; skipped", n.to_string_lossy()));
                continue;
            };
            // A restore refuses a whole snapshot that holds such a name (a line break, say).
            if !crate::names::safe_component(s) {
                self.warn(format!("{rel}/{s:?}: no restore could write this name; skipped"));
                continue;
            }
            match dir.lstat(&n) {
                Ok((st, kind)) => self.visit(At::In(dir, &n), &format!("{rel}/{s}"), st, kind)?,
                Err(e) => self.warn(format!("{rel}/{s}: {e}; skipped")),
            }
        }
        Ok(())
    }

    /// Cuts `input` into chunks and feeds them; whether the file is stored (a read error skips
    /// it with a warning).
    fn chunks(
        &mut self,
        input: &mut dyn Read,
        path: String,
        mode: u32,
        mtime: i64,
        stat: Option<Stat>,
    ) -> Result<bool> {
        let k = self.chunker;
        let first = self.feed_next();
        let mut size = 0u64;
        // An input no longer than the smallest chunk is one chunk (the chunker cuts nothing
        // below `min`), so it skips the chunker, which zeroes a buffer of the largest chunk's
        // size (8 MiB) for every input and shifts all of it for every chunk: most of the
        // walking thread's time on a tree of small files. The chunks are the same either way.
        let mut head = Vec::new();
        if let Err(e) = Read::take(&mut *input, u64::from(k.min) + 1).read_to_end(&mut head) {
            self.warn(format!("{path}: {e}; skipped"));
            return Ok(false);
        }
        if head.len() <= k.min as usize {
            if !head.is_empty() {
                size = self.send(head)?;
            }
        } else {
            let whole = std::io::Cursor::new(head).chain(input);
            let level = fastcdc::v2020::Normalization::Level1;
            for c in StreamCDC::with_level_and_seed(whole, k.min, k.avg, k.max, level, self.seed) {
                match c {
                    Ok(c) => size += self.send(c.data)?,
                    Err(e) => {
                        // Chunks already sent stay in packs unreferenced, for a prune to collect.
                        self.warn(format!("{path}: {e}; skipped"));
                        return Ok(false);
                    }
                }
            }
        }
        self.counts.files += 1;
        let count = self.feed_next() - first;
        self.out.push(Pending::File { path, mode, mtime, size, first, count, stat });
        Ok(true)
    }

    fn feed_next(&self) -> usize {
        self.feed.next()
    }

    /// Hands one chunk to the workers, counts it and tells the progress; its length.
    fn send(&mut self, chunk: Vec<u8>) -> Result<u64> {
        let n = chunk.len() as u64;
        self.counts.bytes += n;
        self.feed.send(chunk)?;
        if let Some(p) = self.progress {
            p(self.counts);
        }
        Ok(n)
    }
}
