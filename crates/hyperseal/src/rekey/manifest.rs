//! A tree re-key's manifest: what a killed run needs to resume without applying its change
//! twice, and nothing more (header digests, never key material). FORMAT.md §9.3 has the bytes.
//!
//! It lives where a folder's members may write (`.hyperseal-rekey.manifest` inside the tree),
//! so it gets the journal's rules: it is opened without following a link and without blocking,
//! created exclusively and private (0600), and used only if it is the caller's own regular file
//! that no one else may write. Otherwise the run is refused before any file is touched.
//!
//! A record vouches only for what the caller's own run wrote: `begin` names the digest of the
//! header the run is about to write, `done` the one it wrote. A file counts as done only when
//! its header *now* is exactly one of those (see the tree's `one`); a header anyone else wrote
//! meanwhile, the file's owner saving a new version after a failed run say, is re-keyed again.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;

use crate::error::Error;
use crate::sys;

/// The manifest's name when a run keeps it inside the directory it re-keys.
pub const MANIFEST_NAME: &str = ".hyperseal-rekey.manifest";

const MAGIC: &str = "hyperseal-rekey-manifest v2";
const OLDER: &str = "hyperseal-rekey-manifest v1";
/// Read whole into memory on resume: about a million files.
const MANIFEST_MAX: u64 = 256 << 20;

/// What the manifest says of one file.
#[derive(Clone)]
pub(super) enum Record {
    /// The run was about to write the header whose digest is `planned` over the one whose
    /// digest is `before`.
    Begun { before: String, planned: String },
    /// The run wrote the header whose digest is `after`.
    Done { after: String },
}

/// The manifest: records appended and synced one by one, read back whole on resume. Files are
/// named by [`key`]: their paths' exact bytes.
pub(super) struct Manifest {
    file: File,
    records: HashMap<String, Record>,
}

impl Manifest {
    /// Opens (or creates) the manifest at `path` for the change named `change` (module docs).
    pub(super) fn open(path: &Path, change: &str) -> Result<Manifest, Error> {
        let bad = |why: &str| Error::InvalidArgument(format!("{}: {why}", path.display()));
        let mut opts = File::options();
        opts.read(true).append(true).create_new(true);
        let (mut file, new) = match sys::no_follow(sys::private(&mut opts)).open(path) {
            Ok(f) => (f, true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let mut opts = File::options();
                opts.read(true).append(true);
                let f = sys::no_follow(&mut opts).open(path).map_err(|e| refused(e, path))?;
                (f, false)
            }
            Err(e) => return Err(refused(e, path)),
        };
        if !new {
            check_own(&file, path)?;
        }
        let mut records = HashMap::new();
        if new || file.metadata()?.len() == 0 {
            file.write_all(format!("{MAGIC}\nchange {change}\n").as_bytes())?;
            file.sync_data()?;
            sys::sync_parent_dir(path)?;
            return Ok(Manifest { file, records });
        }
        if file.metadata()?.len() > MANIFEST_MAX {
            return Err(bad("larger than a re-key manifest can be (256 MiB)"));
        }
        let mut lines = BufReader::new((&file).take(MANIFEST_MAX)).lines();
        match lines.next().transpose()?.as_deref() {
            Some(MAGIC) => {}
            Some(OLDER) => return Err(bad(
                "a manifest of an older hyperseal, whose records this version does not trust (remove it; \
                 the run then checks every file again)",
            )),
            _ => return Err(bad("not a hyperseal re-key manifest")),
        }
        if lines.next().transpose()?.as_deref() != Some(&format!("change {change}")[..]) {
            return Err(bad("this manifest records another change (remove it, or give another --manifest)"));
        }
        for line in lines {
            let line = line?;
            let f: Vec<&str> = line.split('\t').collect();
            let record = match f[..] {
                ["begin", before, planned, p] => {
                    Some((p, Record::Begun { before: before.into(), planned: planned.into() }))
                }
                ["done", _, after, p] => Some((p, Record::Done { after: after.into() })),
                // A line cut short by a kill: its file is settled by the journal and its digest.
                _ => None,
            };
            if let Some((p, r)) = record {
                records.insert(p.to_string(), r);
            }
        }
        Ok(Manifest { file, records })
    }

    pub(super) fn state(&self, key: &str) -> Option<Record> {
        self.records.get(key).cloned()
    }

    /// Records, durably, that the header whose digest is `planned` is about to be written.
    pub(super) fn begin(&mut self, key: &str, before: &str, planned: &str) -> Result<(), Error> {
        self.append(&format!("begin\t{before}\t{planned}\t{key}\n"))?;
        self.records.insert(key.into(), Record::Begun { before: before.into(), planned: planned.into() });
        Ok(())
    }

    pub(super) fn done(&mut self, key: &str, before: &str, after: &str) -> Result<(), Error> {
        self.append(&format!("done\t{before}\t{after}\t{key}\n"))?;
        self.records.insert(key.into(), Record::Done { after: after.into() });
        Ok(())
    }

    /// One record, durable before the file it names is touched.
    fn append(&mut self, line: &str) -> Result<(), Error> {
        self.file.write_all(line.as_bytes())?;
        self.file.sync_data()?;
        Ok(())
    }
}

/// A manifest is used only if it is the caller's own regular file, writable by no one else.
fn check_own(file: &File, path: &Path) -> Result<(), Error> {
    let stamp = sys::Stamp::of(file)?;
    if !stamp.regular || !stamp.owned || shared_write(file)? {
        return Err(not_own(path));
    }
    Ok(())
}

#[cfg(unix)]
fn shared_write(file: &File) -> io::Result<bool> {
    use std::os::unix::fs::PermissionsExt;
    Ok(file.metadata()?.permissions().mode() & 0o022 != 0)
}

#[cfg(not(unix))]
fn shared_write(_: &File) -> io::Result<bool> {
    Ok(false)
}

fn refused(e: io::Error, path: &Path) -> Error {
    match sys::is_link_refusal(&e) {
        true => not_own(path),
        false => Error::Io(io::Error::new(e.kind(), format!("the manifest {}: {e}", path.display()))),
    }
}

fn not_own(path: &Path) -> Error {
    Error::InvalidArgument(format!(
        "the manifest {} is not your own private regular file (a link, another user's file, one others \
         may write, or not a file): refused, nothing touched; remove it, or give --manifest a path in a \
         folder only you can write",
        path.display()
    ))
}

/// A path's name in the manifest: its exact bytes, with `%`, tab, CR, LF, other control bytes
/// and every byte from 0x80 written `%XX`, so any name (not UTF-8 included) round-trips.
pub(super) fn key(p: &Path) -> String {
    let mut s = String::new();
    for &b in p.as_os_str().as_encoded_bytes() {
        match b {
            b'%' | 0..=0x1f | 0x7f..=0xff => s.push_str(&format!("%{b:02X}")),
            b => s.push(b as char),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_name_that_is_not_utf8_has_its_own_key() {
        use std::os::unix::ffi::OsStrExt;
        let latin1 = Path::new(std::ffi::OsStr::from_bytes(b"caf\xe9.hs"));
        let utf8 = Path::new("caf\u{e9}.hs");
        assert_eq!(key(latin1), "caf%E9.hs");
        assert_eq!(key(utf8), "caf%C3%A9.hs");
        assert_eq!(key(Path::new("a%\tb\n")), "a%25%09b%0A");
    }
}
