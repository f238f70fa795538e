//! The journal of an in-place re-key: `.NAME.hyperseal-rekey` beside the file, holding the old
//! and the new header, the file's length and a checksum (FORMAT.md §6).
//!
//! It is written, synced and its directory synced before the first byte of the file changes, so
//! after a crash at any moment a journal says exactly which two headers the file's head can be
//! a mix of. What happens next depends on that head (see [`recover_locked`]):
//!
//! - exactly the old header: the write never began (or did not reach the disk). The journal is
//!   removed and nothing changed;
//! - exactly the new header: the write finished; only the journal is left to remove;
//! - a mix (a torn write, possible only on a power cut): the new header is written again.
//!
//! Until then, [`settled_head`] lets `decrypt` open a torn file read-only with the journal's new
//! header, so no state exists in which the file cannot be opened.
//!
//! The name is predictable and the directory may be shared (a sticky `/tmp`, a team folder), so
//! the journal is never trusted by name: it is opened without following links and without
//! blocking (a FIFO planted there cannot hang the re-key or receive the headers), and used only
//! if it is a regular file owned by the caller, whole, and about this file's bytes. It is
//! created with `O_EXCL | O_NOFOLLOW`: nothing that exists at its name is ever written through.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::format::Header;
use crate::sys::{self, Stamp};

const MAGIC: &[u8] = b"hyperseal-rekey/v1\n";
const CONTEXT: &[u8] = b"hyperseal rekey journal";

/// The journal of an in-place re-key of `path`.
pub fn journal_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.hyperseal-rekey"))
}

/// A whole journal: the file length it was made for, the old and the new header.
pub(super) struct Journal {
    pub(super) file_len: u64,
    pub(super) old: Vec<u8>,
    pub(super) new: Vec<u8>,
}

impl Journal {
    /// Magic, file length, both header lengths, both headers, checksum.
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut j = MAGIC.to_vec();
        j.extend_from_slice(&self.file_len.to_le_bytes());
        j.extend_from_slice(&(self.old.len() as u64).to_le_bytes());
        j.extend_from_slice(&(self.new.len() as u64).to_le_bytes());
        j.extend_from_slice(&self.old);
        j.extend_from_slice(&self.new);
        let sum = crate::crypto::hmac_sha256(CONTEXT, &[&j]);
        j.extend_from_slice(&sum);
        j
    }

    /// The journal in `j` if it is whole (a journal cut short by a crash while it was written
    /// is not: it was never acted on).
    pub(super) fn parse(j: &[u8]) -> Option<Journal> {
        let body = j.strip_prefix(MAGIC)?;
        let (body, sum) = body.split_at_checked(body.len().checked_sub(32)?)?;
        if crate::crypto::hmac_sha256(CONTEXT, &[&j[..j.len() - 32]])[..] != sum[..] {
            return None;
        }
        let num = |i: usize| -> Option<u64> {
            Some(u64::from_le_bytes(body.get(i * 8..i * 8 + 8)?.try_into().ok()?))
        };
        let (file_len, old, new) = (num(0)?, num(1)?, num(2)?);
        let start = 24usize.checked_add(usize::try_from(old).ok()?)?;
        let old = body.get(24..start)?;
        let new = body.get(start..start.checked_add(usize::try_from(new).ok()?)?)?;
        (start + new.len() == body.len() && old.len() == new.len()).then(|| Journal {
            file_len,
            old: old.to_vec(),
            new: new.to_vec(),
        })
    }

    /// Where `head` (the file's first bytes) stands: the old header, the new one, a torn mix,
    /// or something else (another program's bytes).
    pub(super) fn classify(&self, head: &[u8]) -> Head {
        if head == self.old {
            Head::Old
        } else if head == self.new {
            Head::New
        } else if head.len() == self.old.len()
            && head.iter().zip(self.old.iter().zip(&self.new)).all(|(h, (o, n))| h == o || h == n)
        {
            Head::Torn
        } else {
            Head::Foreign
        }
    }

    /// Stanza types of a header in the journal, for messages (slack left out).
    pub(super) fn types(header: &[u8]) -> Vec<String> {
        Header::read_from(&mut &header[..])
            .map(|h| h.stanzas.iter().filter(|s| s.tag != super::SLACK_TYPE).map(|s| s.tag.clone()).collect())
            .unwrap_or_default()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Head {
    Old,
    New,
    Torn,
    Foreign,
}

/// Creates the journal at `jpath` with `bytes`, durably (file and directory synced). Fails if
/// anything exists at that name, of whatever type: it is never written through.
pub(super) fn create(jpath: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = sys::no_follow(sys::private(File::options().write(true).create_new(true))).open(jpath)?;
    let written = f.write_all(bytes).and_then(|()| f.sync_all());
    if written.is_err() {
        let _ = std::fs::remove_file(jpath);
    }
    written?;
    sys::sync_parent_dir(jpath)
}

/// Reads the journal at `jpath`: `None` if there is none. Refuses (with a message naming it)
/// anything that is not a regular file owned by this process's user; never blocks on it.
pub(super) fn read(jpath: &Path, path: &Path) -> Result<Option<Vec<u8>>, Error> {
    let f = match sys::no_follow(File::options().read(true)).open(jpath) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        // ELOOP: a symbolic link at the journal's name. Anything else (a directory we cannot
        // read, a FIFO without a writer is opened fine) is refused below or reported as is.
        Err(e) if sys::is_link_refusal(&e) => return Err(not_a_journal(jpath, path)),
        Err(e) => return Err(e.into()),
    };
    let stamp = Stamp::of(&f)?;
    if !stamp.regular || !stamp.owned {
        return Err(not_a_journal(jpath, path));
    }
    // Bounded all the same: two headers and a few numbers.
    let mut j = Vec::new();
    f.take(2 * crate::limits::HEADER_BYTES as u64 + 4096).read_to_end(&mut j)?;
    Ok(Some(j))
}

pub(super) fn not_a_journal(jpath: &Path, path: &Path) -> Error {
    Error::InvalidArgument(format!(
        "{} is not the journal of a re-key of {} (not a regular file of yours, or not about this \
         file's bytes): check it, then remove it",
        jpath.display(),
        path.display()
    ))
}

/// What a recovery found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    /// Stanza types of the header before the interrupted re-key.
    pub before: Vec<String>,
    /// Stanza types of the header it was writing.
    pub after: Vec<String>,
    /// Whether the change is in force now (`false`: it was undone, the file is as it was).
    pub completed: bool,
    /// The journal itself was cut short (the re-key was stopped while writing it, before the
    /// file was touched): `before` and `after` are then unknown and empty.
    pub cut_short: bool,
    /// A rewrite was killed while it replaced the file, and the old file's second name
    /// (`.NAME.hyperseal-old`, the old version) was left; it was removed. The file itself is
    /// whole: the old version or the new one.
    pub old_copy_removed: bool,
    /// A rewrite was killed in the instant between giving the new version a temporary name
    /// (`.NAME.hyperseal-link`) and renaming it over the file: that new version, which never
    /// took the file's name, was removed. The file is the old version.
    pub new_copy_removed: bool,
}

/// Resolves an interrupted in-place re-key of `file` (open for writing at `path`, and locked by
/// the caller), if its journal is there; `None` if there is none. See the module docs.
pub(super) fn recover_locked(path: &Path, file: &File) -> Result<Option<Recovered>, Error> {
    let jpath = journal_path(path);
    let Some(bytes) = read(&jpath, path)? else { return Ok(None) };
    let Some(j) = Journal::parse(&bytes) else {
        // Cut short while it was written: the file was not touched yet.
        std::fs::remove_file(&jpath)?;
        sys::sync_parent_dir(&jpath)?;
        return Ok(Some(Recovered { cut_short: true, ..Recovered::default() }));
    };
    let mut head = vec![0u8; j.old.len()];
    let read_ok = sys::read_exact_at(file, &mut head, 0).is_ok();
    let state = if read_ok { j.classify(&head) } else { Head::Foreign };
    if state == Head::Foreign || file.metadata()?.len() != j.file_len {
        return Err(Error::InvalidArgument(format!(
            "{} changed since an interrupted re-key (its journal {} is about other bytes): check \
             the file, then remove the journal",
            path.display(),
            jpath.display()
        )));
    }
    if state == Head::Torn {
        sys::write_all_at(file, &j.new, 0)?;
        file.sync_data()?;
    }
    std::fs::remove_file(&jpath)?;
    sys::sync_parent_dir(&jpath)?;
    Ok(Some(Recovered {
        before: Journal::types(&j.old),
        after: Journal::types(&j.new),
        completed: state != Head::Old,
        ..Recovered::default()
    }))
}

/// The header a torn file at `path` settles to, read-only: the journal's new header when the
/// file's head is a torn mix of the journal's two headers (`None` when there is no journal, or
/// the head is whole). `decrypt` reads this header, then the file from its length on. A journal
/// that is not the caller's, not whole or not about this file is ignored: whatever header it
/// offers, the payload still has to authenticate under the file key.
pub fn settled_head(path: &Path, file: &File) -> Option<Vec<u8>> {
    let j = Journal::parse(&read(&journal_path(path), path).ok()??)?;
    let mut head = vec![0u8; j.old.len()];
    sys::read_exact_at(file, &mut head, 0).ok()?;
    (j.classify(&head) == Head::Torn && file.metadata().ok()?.len() == j.file_len).then_some(j.new)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A file and a journal for it, as an interrupted re-key leaves them.
    fn setup(head: &[u8], old: &[u8], new: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("f.hs");
        std::fs::write(&path, [head, b"payload"].concat()).unwrap();
        let j = Journal { file_len: head.len() as u64 + 7, old: old.to_vec(), new: new.to_vec() };
        std::fs::write(journal_path(&path), j.encode()).unwrap();
        (d, path)
    }

    fn recover(path: &Path) -> Result<Option<Recovered>, Error> {
        recover_locked(path, &File::options().read(true).write(true).open(path).unwrap())
    }

    #[test]
    fn a_torn_head_rolls_forward_and_reads_settled_before() {
        let (_d, path) = setup(b"newold", b"oldold", b"newnew");
        let f = File::open(&path).unwrap();
        assert_eq!(settled_head(&path, &f).as_deref(), Some(&b"newnew"[..]));
        assert!(recover(&path).unwrap().unwrap().completed);
        assert_eq!(std::fs::read(&path).unwrap(), b"newnewpayload");
        assert!(!journal_path(&path).exists());
    }

    #[test]
    fn an_untouched_head_rolls_back() {
        let (_d, path) = setup(b"oldold", b"oldold", b"newnew");
        assert!(settled_head(&path, &File::open(&path).unwrap()).is_none());
        assert!(!recover(&path).unwrap().unwrap().completed);
        assert_eq!(std::fs::read(&path).unwrap(), b"oldoldpayload");
        assert!(!journal_path(&path).exists());
    }

    #[test]
    fn a_planted_journal_is_refused() {
        // Its "old" header is not what the file holds: someone else's bytes.
        let (_d, path) = setup(b"realhd", b"guess!", b"evil!!");
        assert!(recover(&path).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"realhdpayload");
        // Right old header, but the journal belongs to another user.
        let (_d, path) = setup(b"realhd", b"realhd", b"evil!!");
        // Only root can give a file away: elsewhere this half has nothing to test.
        if std::os::unix::fs::chown(journal_path(&path), Some(4242), None).is_ok() {
            assert!(recover(&path).is_err());
            assert_eq!(std::fs::read(&path).unwrap(), b"realhdpayload");
        }
    }

    #[test]
    #[allow(unsafe_code)]
    fn a_fifo_or_link_at_the_journal_name_never_blocks_and_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("f.hs");
        std::fs::write(&path, b"header").unwrap();
        let jpath = journal_path(&path);
        let c = std::ffi::CString::new(jpath.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o666) }, 0);
        assert!(recover(&path).is_err(), "a FIFO is not a journal");
        assert!(create(&jpath, b"x").is_err(), "never written through");
        std::fs::remove_file(&jpath).unwrap();
        std::os::unix::fs::symlink(d.path().join("elsewhere"), &jpath).unwrap();
        assert!(recover(&path).is_err(), "a link is not a journal");
        assert!(create(&jpath, b"x").is_err());
        assert!(!d.path().join("elsewhere").exists(), "nothing created through the link");
    }
}
