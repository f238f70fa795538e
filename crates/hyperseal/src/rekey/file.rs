//! Re-keying a file on disk: in place in O(header) where the new header fits the old one's
//! length, otherwise a new file with the payload copied in the kernel. All or nothing at every
//! instant: the file opens with the old recipient set or the new one.
//!
//! **In place.** The new header, padded with slack to the old header's exact length, replaces
//! the old one; the payload does not move. A kill or a power cut during that write could leave
//! a torn header, so a journal comes first: `.NAME.hyperseal-rekey` beside the file holds the
//! old and the new header and a checksum, and is durable (written unnamed, synced, linked, the
//! directory synced) before the file is touched. Then the new header is written and synced, and
//! the journal removed. A journal found by the next re-key of the file is rolled forward (the
//! new header written again), so an interrupted re-key completes. Padded headers end on a 4 KiB
//! boundary, so the write is normally within one page, which a kill cannot tear.
//!
//! **Rewritten** (the new header is longer than the old, the file is armored, or the output is
//! another file): the new header, with fresh slack, then the payload, copied from the old file
//! by `copy_file_range` (no crypto, no plaintext anywhere), through
//! [`AtomicOutput`](crate::output::AtomicOutput), which names
//! the result only when complete and replaces the old file by a rename.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::{Change, Plan, Rekey};
use crate::output::OutputOptions;
use crate::recipient::Identity;
use crate::{error::Error, Decryptor};

/// How to re-key a file.
#[derive(Clone, Debug, Default)]
pub struct FileOptions {
    /// Write the result here instead of over the file.
    pub output: Option<PathBuf>,
    /// Replace an existing `output`.
    pub force: bool,
    /// Plan only: check the change and report it, write nothing.
    pub dry_run: bool,
}

/// How the re-key was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// Only the header was rewritten, over the old one.
    InPlace,
    /// A new file: the new header, then the payload copied (`bytes` in all).
    Rewritten {
        /// Bytes of the new file.
        bytes: u64,
    },
    /// Nothing (a dry run).
    Nothing,
}

/// What a file re-key did.
pub struct Report {
    /// The change: stanza types before and after, removed and added counts.
    pub plan: Plan,
    /// How it was written.
    pub written: Written,
}

const JOURNAL_MAGIC: &[u8] = b"hyperseal-rekey/v1\n";

/// The journal of an in-place re-key of `path`.
pub fn journal_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.hyperseal-rekey"))
}

/// Re-keys the file at `path`: opened with `identities`, its recipients changed by `change`.
/// Returns what was done; on any error the file is as it was (module docs).
pub fn rekey_file(
    path: &Path,
    identities: &[Box<dyn Identity>],
    change: &Change,
    opts: &FileOptions,
) -> Result<Report, Error> {
    let in_place = opts.output.is_none();
    if in_place && !opts.dry_run {
        recover(path)?;
    }
    let file = File::options().read(true).write(in_place && !opts.dry_run).open(path)?;
    if in_place && !opts.dry_run && file.try_lock().is_err() {
        return Err(Error::InvalidArgument(format!(
            "{} is being re-keyed by another process",
            path.display()
        )));
    }
    let dec = Decryptor::new(&file)?;
    let armored = dec.is_armored();
    let rekey = Rekey::from_header(dec.header().clone(), identities)?;
    let old_len = rekey.header_len();
    let plan = rekey.rewrap(change, identities)?;
    if opts.dry_run {
        return Ok(Report { plan, written: Written::Nothing });
    }
    if in_place && !armored {
        if let Some(new) = rekey.encode(&plan, Some(old_len), false)? {
            write_in_place(path, &file, &dec.header().encode(dec.header().mac()), &new)?;
            return Ok(Report { plan, written: Written::InPlace });
        }
    }
    let profile = rekey.header().profile;
    let new = rekey.encode(&plan, None, true)?.expect("no target length");
    let dest = opts.output.as_deref().unwrap_or(path);
    let mut out = OutputOptions::new().force(opts.force || in_place);
    if !in_place {
        out = out.input(&file.metadata()?);
    }
    let mut out = out.create(dest).map_err(std::io::Error::from)?;
    if armored {
        // The payload as stored, de-armored (salt and chunks: never decrypted), armored again.
        let mut payload = dec.into_payload();
        let mut w = crate::encrypt::armored(&mut out, profile);
        w.write_all(&new)?;
        std::io::copy(&mut payload, &mut w)?;
        w.finish()?;
    } else {
        drop(dec);
        out.write_all(&new)?;
        // The payload (salt and chunks) from the end of the old header, in the kernel.
        let len = file.metadata()?.len();
        let mut from = &file;
        from.seek(SeekFrom::Start(old_len as u64))?;
        out.copy_from(&mut from.take(len - old_len as u64))?;
    }
    let bytes = out.bytes_written();
    out.commit().map_err(std::io::Error::from)?;
    Ok(Report { plan, written: Written::Rewritten { bytes } })
}

/// The journal's bytes: magic, file length, both header lengths, both headers, checksum.
fn journal(file_len: u64, old: &[u8], new: &[u8]) -> Vec<u8> {
    let mut j = JOURNAL_MAGIC.to_vec();
    j.extend_from_slice(&file_len.to_le_bytes());
    j.extend_from_slice(&(old.len() as u64).to_le_bytes());
    j.extend_from_slice(&(new.len() as u64).to_le_bytes());
    j.extend_from_slice(old);
    j.extend_from_slice(new);
    let sum = crate::crypto::hmac_sha256(b"hyperseal rekey journal", &[&j]);
    j.extend_from_slice(&sum);
    j
}

/// The new header of a journal that is whole, with the file length it was made for.
/// The file length, old header and new header of a journal that is whole.
fn parse_journal(j: &[u8]) -> Option<(u64, Vec<u8>, Vec<u8>)> {
    let body = j.strip_prefix(JOURNAL_MAGIC)?;
    let (body, sum) = body.split_at_checked(body.len().checked_sub(32)?)?;
    let whole = &j[..j.len() - 32];
    if crate::crypto::hmac_sha256(b"hyperseal rekey journal", &[whole])[..] != sum[..] {
        return None;
    }
    let num =
        |i: usize| -> Option<u64> { Some(u64::from_le_bytes(body.get(i * 8..i * 8 + 8)?.try_into().ok()?)) };
    let (file_len, old, new) = (num(0)?, num(1)?, num(2)?);
    let start = 24usize.checked_add(usize::try_from(old).ok()?)?;
    let old = body.get(24..start)?;
    let new = body.get(start..start.checked_add(usize::try_from(new).ok()?)?)?;
    (start + new.len() == body.len() && old.len() == new.len())
        .then(|| (file_len, old.to_vec(), new.to_vec()))
}

fn write_in_place(path: &Path, file: &File, old: &[u8], new: &[u8]) -> Result<(), Error> {
    debug_assert_eq!(old.len(), new.len());
    let jpath = journal_path(path);
    let mut j = OutputOptions::new().create(&jpath).map_err(std::io::Error::from)?;
    j.write_all(&journal(file.metadata()?.len(), old, new))?;
    j.commit().map_err(std::io::Error::from)?;
    sync_dir(path)?;
    file.write_all_at(new, 0)?;
    file.sync_data()?;
    std::fs::remove_file(&jpath)?;
    sync_dir(path)
}

/// Completes an interrupted in-place re-key of `path`, if its journal is there: the new header
/// is written again (the file may hold the old header, the new one, or a torn mix). A journal
/// that is not whole was never acted on (it is linked only once complete and synced) and is
/// removed. Returns whether there was a journal.
pub fn recover(path: &Path) -> Result<bool, Error> {
    let jpath = journal_path(path);
    // Ours, but bounded all the same: two headers and a few numbers.
    let jmeta = match std::fs::symlink_metadata(&jpath) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e.into()),
    };
    let mut j = Vec::new();
    File::open(&jpath)?.take(2 * crate::limits::HEADER_BYTES as u64 + 4096).read_to_end(&mut j)?;
    if let Some((len, old, new)) = parse_journal(&j) {
        let file = File::options().read(true).write(true).open(path)?;
        // The checksum only proves the journal is whole, not who wrote it: in a shared
        // directory anyone may create `.NAME.hyperseal-rekey`. So a journal is acted on only if
        // it is a regular file of the file's owner, and the file's head is, byte for byte, the
        // old header, the new one, or a torn mix of the two — never someone else's bytes.
        let meta = file.metadata()?;
        let mut head = vec![0u8; old.len()];
        let head_ok = file.read_exact_at(&mut head, 0).is_ok()
            && head.iter().zip(old.iter().zip(&new)).all(|(h, (o, n))| h == o || h == n);
        if !jmeta.file_type().is_file() || jmeta.uid() != meta.uid() || !head_ok {
            return Err(Error::InvalidArgument(format!(
                "{} is not the journal of a re-key of {}: check it, then remove it",
                jpath.display(),
                path.display()
            )));
        }
        if meta.len() != len {
            return Err(Error::InvalidArgument(format!(
                "{} changed since an interrupted re-key (its journal {} is for another length): \
                 check the file, then remove the journal",
                path.display(),
                jpath.display()
            )));
        }
        file.write_all_at(&new, 0)?;
        file.sync_data()?;
    }
    std::fs::remove_file(&jpath)?;
    sync_dir(path)?;
    Ok(true)
}

fn sync_dir(path: &Path) -> Result<(), Error> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(dir)?.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file and a journal for it, as an interrupted re-key leaves them.
    fn setup(head: &[u8], old: &[u8], new: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("f.hs");
        std::fs::write(&path, [head, b"payload"].concat()).unwrap();
        std::fs::write(journal_path(&path), journal(head.len() as u64 + 7, old, new)).unwrap();
        (d, path)
    }

    #[test]
    fn a_torn_head_rolls_forward() {
        let (_d, path) = setup(b"newold", b"oldold", b"newnew");
        assert!(recover(&path).unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"newnewpayload");
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
        let owner = std::fs::metadata(&path).unwrap().uid();
        // Only root can give a file away: elsewhere this half has nothing to test.
        if std::os::unix::fs::chown(journal_path(&path), Some(owner + 1), None).is_ok() {
            assert!(recover(&path).is_err());
            assert_eq!(std::fs::read(&path).unwrap(), b"realhdpayload");
        }
    }
}
