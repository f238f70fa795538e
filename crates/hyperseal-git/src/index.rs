//! git's index file, versions 2 and 3 (gitformat-index(5)): read to find the entries of the
//! marked paths, and written back with new stat data for the ones an unlock checked out itself.
//!
//! Why an unlock touches the index at all: git decides whether a work-tree file may have
//! changed from the stat data its index entry keeps (times, device, inode, owner, size). A file
//! written by anyone but git has none there, so the next `git status` would send every such file
//! through the filter to find it unchanged: one request each, the very cost the unlock avoided
//! by decrypting the files itself. Recording the new files' stat data is what git's own checkout
//! does for the files it writes.
//!
//! Only the stat fields of chosen entries change, in place: every entry keeps its length, so the
//! extensions that follow (the cache tree, the end-of-index and offset tables, which hold
//! offsets) stay valid byte for byte. Indexes this cannot keep whole are refused, and the caller
//! lets git check out instead: version 4 (paths compressed against the previous entry), a split
//! index (`link`), a sparse index (`sdir`), and any extension not known to be stat-free.
//!
//! The index as a frontend that writes work-tree files itself uses it (found and read through
//! git, written back under git's own lock) is `worktree.rs`'s `IndexAt`.

use std::fmt;

use aws_lc_rs::digest;

/// The repository's object format: the length of object names and of the index's checksum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashKind {
    /// `extensions.objectFormat` unset or `sha1`: 20-byte names and checksum.
    Sha1,
    /// `sha256`: 32 bytes.
    Sha256,
}

impl HashKind {
    fn len(self) -> usize {
        match self {
            HashKind::Sha1 => 20,
            HashKind::Sha256 => 32,
        }
    }

    fn digest(self, data: &[u8]) -> Vec<u8> {
        let alg = match self {
            // git's own choice for SHA-1 repositories; this is its checksum, not a secret.
            HashKind::Sha1 => &digest::SHA1_FOR_LEGACY_USE_ONLY,
            HashKind::Sha256 => &digest::SHA256,
        };
        digest::digest(alg, data).as_ref().to_vec()
    }
}

/// Why an index is not read: it is damaged, or of a kind this does not rewrite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexRefused(pub String);

impl fmt::Display for IndexRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for IndexRefused {}

fn refused(why: impl Into<String>) -> IndexRefused {
    IndexRefused(why.into())
}

/// Extensions that hold no stat data and no entry contents: kept as they are. (`UNTR`, the
/// untracked cache, holds directories' stat data, which it checks itself against the disk.)
const KEPT_EXTENSIONS: [&[u8; 4]; 5] = [b"TREE", b"REUC", b"UNTR", b"EOIE", b"IEOT"];

/// One entry of the index.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The path, relative to the work tree's top, as git stores it.
    pub path: Vec<u8>,
    /// git's mode: `0o100644` or `0o100755` for a regular file.
    pub mode: u32,
    /// 0 for a merged entry; 1–3 for the sides of a conflict.
    pub stage: u8,
    /// Not in the work tree (sparse checkout): never written there.
    pub skip_worktree: bool,
    /// Added with `git add -N`: no blob yet.
    pub intent_to_add: bool,
    /// `git update-index --assume-unchanged`: git does not look at the file.
    pub assume_valid: bool,
    /// The size git recorded for the work-tree file.
    pub size: u32,
    /// What git recorded of the work-tree file when it last wrote or checked it.
    pub stat: Stat,
    /// The object name of the staged blob, in lowercase hex.
    pub oid: String,
    /// Offset of the entry's stat data in the file.
    at: usize,
}

/// What git records of a work-tree file, each field cut to 32 bits as git cuts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// Status change time: seconds, nanoseconds.
    pub ctime: (u32, u32),
    /// Modification time: seconds, nanoseconds.
    pub mtime: (u32, u32),
    /// Device.
    pub dev: u32,
    /// Inode.
    pub ino: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Size in bytes.
    pub size: u32,
}

impl Stat {
    /// Whether a file with stat data `now` is, by git's rule, the file this entry recorded:
    /// times, inode, owner and size equal (the device is not compared, as git does not by
    /// default; nanoseconds only where git recorded them, which a git built without them does
    /// not). A file that matches but is not older than the index itself (`index_mtime`) is
    /// "racily clean": it may have changed within the clock's resolution, and only its
    /// contents tell (see [`blob_id`]).
    pub fn compare(&self, now: &Stat, index_mtime: (u32, u32)) -> Match {
        let time = |recorded: (u32, u32), now: (u32, u32)| {
            recorded.0 == now.0 && (recorded.1 == 0 || recorded.1 == now.1)
        };
        let same = time(self.mtime, now.mtime)
            && time(self.ctime, now.ctime)
            && (self.ino, self.uid, self.gid, self.size) == (now.ino, now.uid, now.gid, now.size);
        let racy =
            self.mtime.0 > index_mtime.0 || (self.mtime.0 == index_mtime.0 && self.mtime.1 >= index_mtime.1);
        match (same, racy) {
            (false, _) => Match::Differs,
            (true, true) => Match::Racy,
            (true, false) => Match::Same,
        }
    }

    /// The stat data of `meta`, as git's `fill_stat_data` records it.
    #[cfg(unix)]
    pub fn of(meta: &std::fs::Metadata) -> Stat {
        use std::os::unix::fs::MetadataExt;
        let size = meta.size();
        Stat {
            ctime: (meta.ctime() as u32, meta.ctime_nsec() as u32),
            mtime: (meta.mtime() as u32, meta.mtime_nsec() as u32),
            dev: meta.dev() as u32,
            ino: meta.ino() as u32,
            uid: meta.uid(),
            gid: meta.gid(),
            // git's munge_st_size: a size that is a multiple of 2^32 must not read as empty.
            size: match size as u32 {
                0 if size != 0 => 0x8000_0000,
                s => s,
            },
        }
    }
}

/// What a file's stat data says against its entry's ([`Stat::compare`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// The file git recorded.
    Same,
    /// Recorded the same, but too close to when the index was written to be sure.
    Racy,
    /// Changed since.
    Differs,
}

/// git's object name of a blob holding `data` (`git hash-object --no-filters`).
pub fn blob_id(hash: HashKind, data: &[u8]) -> String {
    let mut object = format!("blob {}\0", data.len()).into_bytes();
    object.extend_from_slice(data);
    hash.digest(&object).iter().map(|b| format!("{b:02x}")).collect()
}

/// A parsed index, kept as the bytes it was read from.
#[derive(Debug)]
pub struct Index {
    bytes: Vec<u8>,
    hash: HashKind,
    entries: Vec<Entry>,
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

impl Index {
    /// Reads an index file's bytes, checking its checksum (unless git wrote none:
    /// `index.skipHash`).
    pub fn parse(bytes: Vec<u8>, hash: HashKind) -> Result<Index, IndexRefused> {
        let hl = hash.len();
        if bytes.len() < 12 + hl || &bytes[..4] != b"DIRC" {
            return Err(refused("not an index file"));
        }
        let version = be32(&bytes, 4);
        if !(2..=3).contains(&version) {
            return Err(refused(format!("index version {version}")));
        }
        let body = bytes.len() - hl;
        let sum = &bytes[body..];
        if sum.iter().any(|&b| b != 0) && hash.digest(&bytes[..body]) != sum {
            return Err(refused("the index's checksum does not match"));
        }
        let count = be32(&bytes, 8) as usize;
        // Each entry takes at least 62 bytes: a count the file cannot hold is damage, and no
        // allocation is made from it.
        if count > body / 62 {
            return Err(refused("more entries than the index holds"));
        }
        let mut entries = Vec::with_capacity(count);
        let mut at = 12;
        for _ in 0..count {
            let fixed = 40 + hl + 2;
            if at + fixed > body {
                return Err(refused("an entry past the end"));
            }
            let flags = u16::from_be_bytes([bytes[at + 40 + hl], bytes[at + 41 + hl]]);
            let extended = flags & 0x4000 != 0;
            if extended && version < 3 {
                return Err(refused("extended flags in a version 2 index"));
            }
            let (mut name_at, mut ext) = (at + fixed, 0u16);
            if extended {
                if name_at + 2 > body {
                    return Err(refused("an entry past the end"));
                }
                ext = u16::from_be_bytes([bytes[name_at], bytes[name_at + 1]]);
                name_at += 2;
            }
            let len = match usize::from(flags & 0xfff) {
                0xfff => bytes[name_at..body]
                    .iter()
                    .position(|&b| b == 0)
                    .ok_or_else(|| refused("a path without its end"))?,
                n => n,
            };
            // The name, then 1 to 8 NULs to a multiple of 8 from the entry's start.
            let end = at + ((name_at - at + len + 8) & !7);
            if end > body || bytes.get(name_at + len) != Some(&0) {
                return Err(refused("an entry past the end"));
            }
            entries.push(Entry {
                path: bytes[name_at..name_at + len].to_vec(),
                mode: be32(&bytes, at + 24),
                stage: ((flags >> 12) & 3) as u8,
                skip_worktree: ext & 0x4000 != 0,
                intent_to_add: ext & 0x2000 != 0,
                assume_valid: flags & 0x8000 != 0,
                size: be32(&bytes, at + 36),
                stat: Stat {
                    ctime: (be32(&bytes, at), be32(&bytes, at + 4)),
                    mtime: (be32(&bytes, at + 8), be32(&bytes, at + 12)),
                    dev: be32(&bytes, at + 16),
                    ino: be32(&bytes, at + 20),
                    uid: be32(&bytes, at + 28),
                    gid: be32(&bytes, at + 32),
                    size: be32(&bytes, at + 36),
                },
                oid: bytes[at + 40..at + 40 + hl].iter().map(|b| format!("{b:02x}")).collect(),
                at,
            });
            at = end;
        }
        while at < body {
            if at + 8 > body {
                return Err(refused("an extension past the end"));
            }
            let sig: [u8; 4] = bytes[at..at + 4].try_into().expect("4 bytes");
            let size = be32(&bytes, at + 4) as usize;
            if !KEPT_EXTENSIONS.contains(&&sig) {
                return Err(refused(format!("the index extension {}", String::from_utf8_lossy(&sig))));
            }
            at = at
                .checked_add(8 + size)
                .filter(|&e| e <= body)
                .ok_or_else(|| refused("an extension past the end"))?;
        }
        Ok(Index { bytes, hash, entries })
    }

    /// The entries, in the index's order (by path, then stage).
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Gives entry `i` the stat data of the file written for it.
    pub fn set_stat(&mut self, i: usize, st: &Stat) {
        let at = self.entries[i].at;
        let fields = [st.ctime.0, st.ctime.1, st.mtime.0, st.mtime.1, st.dev, st.ino];
        for (k, v) in fields.into_iter().enumerate() {
            self.bytes[at + 4 * k..at + 4 * k + 4].copy_from_slice(&v.to_be_bytes());
        }
        // The mode (at + 24) is kept: the file was written with it.
        for (k, v) in [st.uid, st.gid, st.size].into_iter().enumerate() {
            self.bytes[at + 28 + 4 * k..at + 32 + 4 * k].copy_from_slice(&v.to_be_bytes());
        }
        self.entries[i].size = st.size;
        self.entries[i].stat = *st;
    }

    /// The index's bytes, with the checksum made again (or left empty, as git left it).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = self.bytes.clone();
        let body = out.len() - self.hash.len();
        if out[body..].iter().any(|&b| b != 0) {
            let sum = self.hash.digest(&out[..body]);
            out[body..].copy_from_slice(&sum);
        }
        out
    }
}

#[cfg(test)]
#[path = "index_tests.rs"]
mod tests;
