//! Where objects live. The repository asks a store for five things only (put a new object,
//! read one, list a folder, delete one, re-key one's header), so an S3 prefix is one more
//! implementation of [`Store`] beside the local folder here.

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use hyperseal::recipient::Identity;
use hyperseal::rekey::{Change, FileOptions, Report};

use crate::error::Result;

/// A readable, seekable object (a ranged reader on a remote store).
pub trait ReadSeek: Read + Seek + Send {}
impl<T: Read + Seek + Send> ReadSeek for T {}

/// One object of a listing.
#[derive(Clone, Debug)]
pub struct ObjectInfo {
    /// The name under the repository (`data/…`).
    pub name: String,
    /// Its length in bytes.
    pub size: u64,
    /// When it was written, where the store says.
    pub modified: Option<SystemTime>,
}

/// The operations a repository needs. A writer uses `put_new`, `list` and `get` of `.ids`
/// objects only, so it works with credentials that allow nothing else.
pub trait Store: Send + Sync {
    /// Writes a new object; fails with `AlreadyExists` if the name is taken (never overwrites).
    fn put_new(&self, name: &str, bytes: &[u8]) -> io::Result<()>;
    /// Reads a whole object of at most `limit` bytes (more is an error, not an allocation).
    fn get(&self, name: &str, limit: u64) -> io::Result<Vec<u8>>;
    /// Opens an object for ranged reads.
    fn open(&self, name: &str) -> io::Result<Box<dyn ReadSeek>>;
    /// The objects whose names start with `folder` (`"data/"`), in no particular order.
    fn list(&self, folder: &str) -> io::Result<Vec<ObjectInfo>>;
    /// Removes an object (absent is not an error: a resumed prune deletes twice).
    fn delete(&self, name: &str) -> io::Result<()>;
    /// Rewrites an object's header for another recipient set; the payload is not rewritten
    /// where the new header fits the old one's room.
    fn rekey(
        &self,
        name: &str,
        identities: &[Box<dyn Identity>],
        change: &Change,
        dry_run: bool,
    ) -> Result<Report>;
}

/// A repository in a local folder: one file per object, written under a temporary name and
/// linked into place, so a reader never sees half an object and a name is never replaced.
pub struct LocalStore {
    root: PathBuf,
}

impl LocalStore {
    /// A store over `root` (which need not exist yet: [`crate::init`] creates it).
    pub fn new(root: impl Into<PathBuf>) -> LocalStore {
        LocalStore { root: root.into() }
    }

    /// The folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, name: &str) -> io::Result<PathBuf> {
        check_name(name).map(|_| self.root.join(name))
    }
}

/// How old a put's temporary must be before a listing removes it as a killed put's.
const STALE_TEMP: std::time::Duration = std::time::Duration::from_secs(86_400);

/// An error that names the object: "No such file or directory" alone names nothing.
fn named(name: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{name}: {e}"))
}

/// Names come from this crate, but a listing is the store's word: refuse anything that could
/// leave the folder or the prefix.
pub(crate) fn check_name(name: &str) -> io::Result<()> {
    let ok = !name.is_empty()
        && name.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-/".contains(&b));
    match ok {
        true => Ok(()),
        false => Err(io::Error::new(io::ErrorKind::InvalidInput, format!("bad object name {name:?}"))),
    }
}

impl Store for LocalStore {
    fn put_new(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let path = self.path(name)?;
        let dir = path.parent().expect("names have a folder");
        fs::create_dir_all(dir)?;
        let tmp = dir.join(format!(".tmp-{}", crate::keys::random_name()));
        let mut f = File::options().write(true).create_new(true).open(&tmp)?;
        let written = f.write_all(bytes).and_then(|_| f.sync_all());
        // A hard link fails where the name exists: the object appears whole, or not at all,
        // and an existing one is never replaced.
        let linked = written.and_then(|_| fs::hard_link(&tmp, &path));
        let _ = fs::remove_file(&tmp);
        linked?;
        crate::sys::sync_dir(dir)
    }

    fn get(&self, name: &str, limit: u64) -> io::Result<Vec<u8>> {
        let f = File::open(self.path(name)?).map_err(|e| named(name, e))?;
        let mut out = Vec::new();
        f.take(limit + 1).read_to_end(&mut out)?;
        if out.len() as u64 > limit {
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("{name} is over {limit} bytes")));
        }
        Ok(out)
    }

    fn open(&self, name: &str) -> io::Result<Box<dyn ReadSeek>> {
        Ok(Box::new(File::open(self.path(name)?).map_err(|e| named(name, e))?))
    }

    fn list(&self, folder: &str) -> io::Result<Vec<ObjectInfo>> {
        let dir = self.path(folder.trim_end_matches('/'))?;
        let rd = match fs::read_dir(&dir) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            r => r?,
        };
        let mut out = Vec::new();
        for e in rd {
            let e = e?;
            let Some(n) = e.file_name().to_str().map(str::to_string) else { continue };
            // Temporaries of a put in progress (or killed) are not objects. One a day old is
            // a killed put's (a put takes seconds): it goes, so kills do not pile up files.
            if n.starts_with('.') {
                if n.starts_with(".tmp-") {
                    let old =
                        e.metadata().ok().and_then(|m| m.modified().ok()).and_then(|t| t.elapsed().ok());
                    if old.is_some_and(|d| d > STALE_TEMP) {
                        let _ = fs::remove_file(e.path());
                    }
                }
                continue;
            }
            let meta = e.metadata()?;
            if meta.is_file() {
                let name = format!("{}/{n}", folder.trim_end_matches('/'));
                out.push(ObjectInfo { name, size: meta.len(), modified: meta.modified().ok() });
            }
        }
        Ok(out)
    }

    fn delete(&self, name: &str) -> io::Result<()> {
        match fs::remove_file(self.path(name)?) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            r => r,
        }
    }

    fn rekey(
        &self,
        name: &str,
        identities: &[Box<dyn Identity>],
        change: &Change,
        dry_run: bool,
    ) -> Result<Report> {
        let opts = FileOptions { dry_run, ..FileOptions::default() };
        Ok(hyperseal::rekey::rekey_file(&self.path(name)?, identities, change, &opts)?)
    }
}

/// A remote object read in ranges: a bounded buffer, filled by one `fetch(at, len)` per miss,
/// `len` the size the read asked for clamped to `[min, max]` (and to the object's end). The S3
/// and ssh stores both open objects as this: the decrypting reader asks for its batch at once,
/// so a miss fetches what it needs and nothing far ahead of it.
pub(crate) struct Ranged<F> {
    fetch: F,
    /// For messages.
    name: String,
    size: u64,
    pos: u64,
    buf: Vec<u8>,
    /// Where `buf` starts in the object.
    at: u64,
    min: u64,
    max: u64,
}

impl<F: FnMut(u64, u64) -> io::Result<Vec<u8>> + Send> Ranged<F> {
    pub(crate) fn new(name: &str, size: u64, (min, max): (u64, u64), fetch: F) -> Self {
        Ranged { fetch, name: name.to_string(), size, pos: 0, buf: Vec::new(), at: 0, min, max }
    }
}

impl<F: FnMut(u64, u64) -> io::Result<Vec<u8>> + Send> Read for Ranged<F> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.size || out.is_empty() {
            return Ok(0);
        }
        if self.pos < self.at || self.pos >= self.at + self.buf.len() as u64 {
            let want = (out.len() as u64).clamp(self.min, self.max).min(self.size - self.pos);
            let bytes = (self.fetch)(self.pos, want)?;
            if bytes.is_empty() || bytes.len() as u64 > want {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("{} changed while it was read", self.name),
                ));
            }
            (self.buf, self.at) = (bytes, self.pos);
        }
        let from = (self.pos - self.at) as usize;
        let n = out.len().min(self.buf.len() - from);
        out[..n].copy_from_slice(&self.buf[from..from + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl<F> Seek for Ranged<F> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let pos = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.size.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos =
            pos.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "a seek before the start"))?;
        Ok(self.pos)
    }
}
