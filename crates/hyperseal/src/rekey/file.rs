//! Re-keying a file on disk: in place in O(header) where the new header fits the old one's
//! length, otherwise a new file with the payload copied in the kernel. At every instant the file
//! opens with the old recipient set or the new one, and every failure says which
//! ([`Outcome`]).
//!
//! The order of a re-key over the file (docs/SECURITY.md, "Re-key"):
//!
//! 1. open the file and `flock` it (one re-key of a file at a time);
//! 2. resolve a journal an interrupted re-key left ([`super::journal`]), under that lock, and
//!    report what it finished or undid ([`Report::recovered`]);
//! 3. read the header, snapshot the file ([`super::guard`]), unwrap the file key (which may
//!    wait on a prompt for any length of time) and plan the change;
//! 4. take a write lease, check that the file is still the snapshot (another program that
//!    saved the file meanwhile wins: nothing is written), then write.
//!
//! **In place.** The new header, padded with slack to the old header's exact length, replaces
//! the old one; the payload does not move. The journal comes first (durable before the file is
//! touched), then the header write and its sync, then the journal's removal. A failure before
//! the new header is durable writes the old header back and removes the journal: nothing
//! changed. Padded headers end on a 4 KiB boundary, so the write is normally within one page,
//! which a kill cannot tear; a power cut can, and the journal covers that.
//!
//! **Rewritten** (the new header is longer than the old, the file is armored, or the output is
//! another file): the new header, with fresh slack, then the payload, copied from the old file
//! by `copy_file_range` (no crypto, no plaintext anywhere), through
//! [`AtomicOutput`](crate::output::AtomicOutput), which names the result only when complete and
//! replaces the old file by a rename. The result keeps the file's owner, group, mode and
//! extended attributes (ACLs included), as an in-place write does by its nature; a file with
//! other hard links is refused unless [`FileOptions::split_links`], since those names would
//! keep the old header and the old recipients.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::guard::{Changed, Lease, Leased, Snapshot};
use super::header::{Change, Plan, Rekey};
use super::journal::{self, journal_path, Journal, Recovered};
use crate::error::Outcome;
use crate::output::{AtomicOutput, OutputError, OutputOptions};
use crate::recipient::Identity;
use crate::sys::{self, Stamp};
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
    /// Allow rewriting a file that has other hard links: it gets a new inode, and the other
    /// names keep the old header (and the old recipients).
    pub split_links: bool,
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
    /// An interrupted re-key of this file found and resolved first.
    pub recovered: Option<Recovered>,
}

/// Re-keys the file at `path`: opened with `identities`, its recipients changed by `change`.
/// Returns what was done; an error says what the file was left as (module docs).
pub fn rekey_file(
    path: &Path,
    identities: &[Box<dyn Identity + '_>],
    change: &Change,
    opts: &FileOptions,
) -> Result<Report, Error> {
    rekey_file_with(path, identities, change, opts, &Checks::default())
}

/// Told a new header's bytes before they are written (see [`Checks::before_write`]).
pub(super) type BeforeWrite<'a> = &'a dyn Fn(&[u8]) -> Result<(), Error>;

/// What a tree re-key asks of one file's re-key beyond [`rekey_file`].
#[derive(Default)]
pub(super) struct Checks<'a> {
    /// The file must be this one (the walk's): opened without following a link or blocking.
    pub(super) expect: Option<crate::sys::FileId>,
    /// Told the new header (its bytes) before the first byte of the file changes; an error
    /// stops the re-key with nothing changed.
    pub(super) before_write: Option<BeforeWrite<'a>>,
    /// An identity is known to open a wrap to one of the change's recipients (see
    /// [`super::unlock::unlock`]): the lock-out check need not ask.
    pub(super) opens_known: bool,
}

pub(super) fn rekey_file_with(
    path: &Path,
    identities: &[Box<dyn Identity + '_>],
    change: &Change,
    opts: &FileOptions,
    checks: &Checks<'_>,
) -> Result<Report, Error> {
    let over = opts.output.is_none() && !opts.dry_run;
    let (file, recovered) = match open_locked(path, over, checks.expect) {
        Err(Error::Io(e)) if over && e.kind() == std::io::ErrorKind::PermissionDenied => {
            return Err(not_writable(path, identities, checks.expect, e))
        }
        r => r?,
    };
    // Before the header is read (see `Snapshot::take`).
    let (meta, stamp) = (file.metadata()?, Stamp::of(&file)?);
    let dec = Decryptor::new(&file)?;
    let armored = dec.is_armored();
    let old_len = dec.header().encode_len();
    let snapshot = Snapshot::take(&file, stamp.clone(), old_len)?;
    let rekey = Rekey::from_header(dec.header().clone(), identities)?;
    let plan = rekey.rewrap_checked(change, identities, checks.opens_known)?;
    if opts.dry_run {
        return Ok(Report { plan, written: Written::Nothing, recovered });
    }
    let unchanged = |e: Error| match e {
        e @ Error::Rekey { .. } => e,
        e => Error::Rekey { outcome: Outcome::Unchanged, source: Box::new(e) },
    };
    let announce = |new: &[u8]| checks.before_write.map_or(Ok(()), |f| f(new)).map_err(unchanged);
    if over && !armored {
        if let Some(new) = rekey.encode(&plan, Some(old_len), false)? {
            announce(&new)?;
            write_in_place(path, &file, &snapshot, &new)?;
            return Ok(Report { plan, written: Written::InPlace, recovered });
        }
    }
    if over {
        refuse_split_links(path, &stamp, opts.split_links).map_err(unchanged)?;
    }
    let profile = rekey.header().profile;
    let new = rekey.encode(&plan, None, true)?.expect("no target length");
    if over {
        announce(&new)?;
    }
    let dest = opts.output.as_deref().unwrap_or(path);
    let mut out = OutputOptions::new().force(opts.force || over);
    if !over {
        out = out.input(&meta);
    }
    let mut out = out.create(dest).map_err(|e| unchanged(std::io::Error::from(e).into()))?;
    let written = (|| -> Result<u64, Error> {
        if over {
            keep_attributes(&mut out, &file)?;
        }
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
            let mut from = &file;
            from.seek(SeekFrom::Start(old_len as u64))?;
            out.copy_from(&mut from.take(meta.len() - old_len as u64))?;
        }
        Ok(out.bytes_written())
    })()
    .map_err(unchanged)?;
    match over {
        true => commit_over(out, &file, path, &snapshot),
        false => out.commit().map_err(|e| std::io::Error::from(e).into()),
    }
    .map_err(unchanged)?;
    Ok(Report { plan, written: Written::Rewritten { bytes: written }, recovered })
}

/// Opens `path` (for writing when the re-key goes over it) and, if so, locks it and resolves an
/// interrupted re-key's journal: lock first, so a second re-key can neither take a live journal
/// for a stale one nor write an older header over a newer one.
pub(super) fn open_locked(
    path: &Path,
    over: bool,
    expect: Option<crate::sys::FileId>,
) -> Result<(File, Option<Recovered>), Error> {
    if over {
        restore_moved_copy(path)?;
    }
    let file = match expect {
        Some(id) => super::beneath::open_checked(path, over, id, path)?,
        None => File::options().read(true).write(over).open(path)?,
    };
    if !over {
        return Ok((file, None));
    }
    if file.try_lock().is_err() {
        return Err(Error::InvalidArgument(format!(
            "{} is being re-keyed by another process",
            path.display()
        )));
    }
    let mut recovered = journal::recover_locked(path, &file)?;
    if remove_stale_copy(path)? {
        recovered.get_or_insert_with(Recovered::default).old_copy_removed = true;
    }
    if let Some(stale) = crate::output::stale_links(path) {
        std::fs::remove_file(&stale)?;
        recovered.get_or_insert_with(Recovered::default).new_copy_removed = true;
    }
    Ok((file, recovered))
}

/// Checks that `file` is still what was read, under a lease (or, where leases are unavailable,
/// as close to the write as possible). The lease, if any, is held until dropped.
pub(super) fn check_leased<'a>(
    file: &'a File,
    path: &Path,
    snapshot: &Snapshot,
) -> Result<Option<Lease<'a>>, Error> {
    let lease = match Lease::take(file) {
        Leased::Held(l) => Some(l),
        Leased::Unavailable => None,
        Leased::OpenElsewhere => {
            return Err(Error::Io(std::io::Error::other(format!(
                "{} is open in another program, which may be writing it: close it and try again",
                path.display()
            ))))
        }
    };
    match snapshot.check(file, path) {
        Ok(()) => Ok(lease),
        Err(Changed::Io(e)) => Err(e.into()),
        Err(Changed::ByAnother) => Err(changed_by_another(path)),
    }
}

pub(super) fn changed_by_another(path: &Path) -> Error {
    Error::Io(std::io::Error::other(format!(
        "{} was changed by another program while it was being re-keyed; it is as that program left it",
        path.display()
    )))
}

/// Commits a rewrite over the file it replaces: the rename happens under a lease, after a last
/// check that the file is still what was read.
///
/// A writer whose `open` waits on the lease has already found the old inode, and would write
/// into it after the rename, where nobody would see it. So a pending break (another `open`
/// waiting) refuses the rename; and for one that arrives during it, the old inode keeps a
/// second name ([`old_copy_path`]) until the rename is done: if a break is pending then, the
/// old file is renamed back, the waiting program writes where it meant to, and nothing changed.
pub(super) fn commit_over(
    out: AtomicOutput,
    file: &File,
    path: &Path,
    snapshot: &Snapshot,
) -> Result<(), Error> {
    let copy = old_copy_path(path);
    let mut checked: Result<(), Error> = Ok(());
    let result = out.commit_with(|| {
        let lease = check_leased(file, path, snapshot).and_then(|lease| match &lease {
            Some(l) if !l.held() => Err(changed_by_another(path)),
            _ => Ok(lease),
        });
        let lease = lease.and_then(|lease| Ok((lease, keep_old_copy(file, path, &copy)?)));
        lease.map_err(|e| {
            checked = Err(e);
            OutputError::rule(crate::output::OutputErrorKind::Commit, path)
        })
    });
    checked?;
    let (lease, named) = match result {
        Ok(done) => done,
        Err(e) => {
            // Where the second name was a move (Windows), the old file goes back to its name.
            let _ = match sys::SECOND_NAME_MOVES {
                true => std::fs::rename(&copy, path),
                false => std::fs::remove_file(&copy),
            };
            return Err(std::io::Error::from(e).into());
        }
    };
    if !named {
        // No second name possible here: only the report is left.
        return match lease.as_ref().is_some_and(|l| !l.held()) {
            false => Ok(()),
            true => Err(Error::Rekey {
                outcome: Outcome::Changed,
                source: Box::new(Error::Io(std::io::Error::other(format!(
                    "another program opened {} as it was replaced: what it writes goes to the old copy",
                    path.display()
                )))),
            }),
        };
    }
    if lease.as_ref().is_some_and(|l| !l.held()) {
        // Put the old file back before the waiting `open` goes on.
        let undone = std::fs::rename(&copy, path);
        drop(lease);
        return Err(match undone {
            Ok(()) => {
                Error::Rekey { outcome: Outcome::Unchanged, source: Box::new(changed_by_another(path)) }
            }
            Err(e) => Error::Rekey {
                outcome: Outcome::Changed,
                source: Box::new(Error::Io(std::io::Error::other(format!(
                    "another program opened {} as it was replaced, and the old file could not be put \
                     back ({e}): what that program writes goes to {}",
                    path.display(),
                    copy.display()
                )))),
            },
        });
    }
    drop(lease);
    std::fs::remove_file(&copy).map_err(|e| Error::Rekey {
        outcome: Outcome::Changed,
        source: Box::new(Error::Io(std::io::Error::new(
            e.kind(),
            format!("removing {}, the old file's second name: {e}", copy.display()),
        ))),
    })
}

/// The second name the old file has while a rewrite replaces it: `.NAME.hyperseal-old`.
pub fn old_copy_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.hyperseal-old"))
}

/// Gives the old file (`file`, at `path`) the second name `copy`, and checks that the name
/// reached the same inode (a swap of `path` in between refuses). `false` on a filesystem
/// without hard links (FAT, some network filesystems).
///
/// On Windows the old file is moved to `copy` instead (`sys::SECOND_NAME_MOVES`): a file that
/// is open (this re-key holds it) cannot be replaced by a rename there, but it can be renamed,
/// and the new file then takes the free name. Killed between the two renames, the file exists
/// only as `copy`: the next re-key puts it back first ([`restore_moved_copy`]).
fn keep_old_copy(file: &File, path: &Path, copy: &Path) -> Result<bool, Error> {
    let named = match sys::SECOND_NAME_MOVES {
        true => std::fs::rename(path, copy),
        false => std::fs::hard_link(path, copy),
    };
    match named {
        Ok(()) => {}
        Err(e) if sys::lacks_hard_links(&e) => return Ok(false),
        Err(e) => {
            return Err(Error::Io(std::io::Error::new(
                e.kind(),
                format!("naming the old file {}: {e}", copy.display()),
            )))
        }
    }
    if !Stamp::of(file)?.same_file(&Stamp::of_link(copy)?) {
        let _ = match sys::SECOND_NAME_MOVES {
            true => std::fs::rename(copy, path),
            false => std::fs::remove_file(copy),
        };
        return Err(changed_by_another(path));
    }
    Ok(true)
}

/// A rewrite killed between moving the old file to its second name and renaming the new one
/// into place (Windows) leaves no file at `path`: the old one, still whole and still opening
/// for its recipients, goes back. Only where the second name moves the file: elsewhere the old
/// file keeps its name throughout, so a missing `path` was removed by its owner, and a stale
/// second name must not bring it back.
fn restore_moved_copy(path: &Path) -> Result<(), Error> {
    if !sys::SECOND_NAME_MOVES {
        return Ok(());
    }
    let copy = old_copy_path(path);
    if std::fs::symlink_metadata(path).is_err() && Stamp::of_link(&copy).is_ok_and(|m| m.regular && m.owned) {
        std::fs::rename(&copy, path)?;
    }
    Ok(())
}

/// A second name left by a rewrite that was killed while it replaced the file: removed (it is
/// the old version, which still opens for the old recipients) and reported.
pub(super) fn remove_stale_copy(path: &Path) -> Result<bool, Error> {
    let copy = old_copy_path(path);
    match Stamp::of_link(&copy) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e.into()),
        Ok(m) if m.regular && m.owned => {
            std::fs::remove_file(&copy)?;
            Ok(true)
        }
        Ok(_) => Err(journal::not_a_journal(&copy, path)),
    }
}

/// A rewrite gives the file a new inode: with other names (hard links), those would keep the
/// old header, so a removed recipient could still open the file through them.
pub(super) fn refuse_split_links(path: &Path, stamp: &Stamp, allowed: bool) -> Result<(), Error> {
    if stamp.links > 1 && !allowed {
        return Err(Error::InvalidArgument(format!(
            "{} has {} names (hard links), and its new header does not fit in place: a rewritten \
             file would be a new inode, and the other names would keep the old recipients",
            path.display(),
            stamp.links
        )));
    }
    Ok(())
}

/// The in-place write (module docs). Every error says what the file was left as.
fn write_in_place(path: &Path, file: &File, snapshot: &Snapshot, new: &[u8]) -> Result<(), Error> {
    let fail = |outcome, e: Error| Error::Rekey { outcome, source: Box::new(e) };
    let unchanged = |e: std::io::Error| fail(Outcome::Unchanged, e.into());
    let old = snapshot.header().to_vec();
    debug_assert_eq!(old.len(), new.len());
    let jpath = journal_path(path);
    let lease = check_leased(file, path, snapshot).map_err(|e| fail(Outcome::Unchanged, e))?;
    let j = Journal { file_len: snapshot.len(), old: old.clone(), new: new.to_vec() };
    journal::create(&jpath, &j.encode()).map_err(|e| {
        let name = std::io::Error::new(e.kind(), format!("writing the journal {}: {e}", jpath.display()));
        unchanged(name)
    })?;
    if lease.is_none() {
        // No lease: check again after the journal's syncs, immediately before the write.
        if let Err(e) = snapshot.check(file, path) {
            let _ = std::fs::remove_file(&jpath);
            return Err(fail(
                Outcome::Unchanged,
                match e {
                    Changed::ByAnother => changed_by_another(path),
                    Changed::Io(e) => e.into(),
                },
            ));
        }
    }
    if let Err(e) = sys::write_all_at(file, new, 0).and_then(|()| file.sync_data()) {
        return Err(roll_back(file, &jpath, &old, e));
    }
    // Checked before the lease is released: a writer waiting on it (a pending break, which
    // `held` reports) has not written yet. Only a lease the kernel took back after its break
    // time, or none at all, leaves room for one.
    let kept = lease.as_ref().is_some_and(Lease::held);
    let clean = kept || snapshot.check_after(file).is_ok();
    drop(lease);
    if !clean {
        // Stopped past the kernel's lease-break time (or no lease at all), and another program
        // wrote a new version in that moment: say so rather than claim success.
        let _ = std::fs::remove_file(&jpath);
        return Err(fail(
            Outcome::Changed,
            Error::Io(std::io::Error::other(format!(
                "another program wrote {} during the header write: the file may be damaged",
                path.display()
            ))),
        ));
    }
    let done = |e: std::io::Error| {
        fail(
            Outcome::Changed,
            std::io::Error::new(e.kind(), format!("removing the journal {}: {e}", jpath.display())).into(),
        )
    };
    std::fs::remove_file(&jpath).map_err(done)?;
    sys::sync_parent_dir(&jpath).map_err(done)
}

/// The header write or its sync failed: the new header is not durable. Write the old one back
/// and remove the journal (nothing changed); if even that fails, the journal stays, and says
/// everything the next command needs.
fn roll_back(file: &File, jpath: &Path, old: &[u8], e: std::io::Error) -> Error {
    let source = Box::new(Error::Io(std::io::Error::new(e.kind(), format!("writing the new header: {e}"))));
    let restored = sys::write_all_at(file, old, 0).and_then(|()| file.sync_data());
    if restored.is_ok() && std::fs::remove_file(jpath).is_ok() {
        return Error::Rekey { outcome: Outcome::Unchanged, source };
    }
    Error::Rekey { outcome: Outcome::Pending(jpath.to_path_buf()), source }
}

/// Completes or undoes an interrupted in-place re-key of `path`, if its journal is there (under
/// the same lock as a re-key). Returns what it found and did.
pub fn recover(path: &Path) -> Result<Option<Recovered>, Error> {
    open_locked(path, true, None).map(|(_, r)| r)
}

/// [`recover`] for the walked file `expect` identifies (opened without following a link).
pub(super) fn recover_checked(path: &Path, expect: crate::sys::FileId) -> Result<Option<Recovered>, Error> {
    open_locked(path, true, Some(expect)).map(|(_, r)| r)
}

/// A file the caller may read but not write: skipped as not theirs if no identity opens it
/// (a colleague's file in a shared folder), else a failure that says nothing changed.
fn not_writable(
    path: &Path,
    identities: &[Box<dyn Identity + '_>],
    expect: Option<crate::sys::FileId>,
    e: std::io::Error,
) -> Error {
    let opened = (|| -> Result<(), Error> {
        let file = match expect {
            Some(id) => super::beneath::open_checked(path, false, id, path)?,
            None => File::open(path)?,
        };
        crate::keys::open_file_key(Decryptor::new(&file)?.header(), identities).map(drop)
    })();
    match opened {
        Err(e @ (Error::NoIdentityMatched | Error::UnknownFormat | Error::EmptyInput)) => e,
        _ => Error::Rekey {
            outcome: Outcome::Unchanged,
            source: Box::new(Error::Io(std::io::Error::new(
                e.kind(),
                format!("{} cannot be written by you ({e})", path.display()),
            ))),
        },
    }
}

/// Keeps `of`'s owner, group, mode and extended attributes on `out` (a rewrite that replaces
/// `of`). Refuses what cannot be kept rather than change it silently.
pub(super) fn keep_attributes(out: &mut AtomicOutput, of: &File) -> Result<(), Error> {
    out.copy_attributes_from(of).map_err(|e| {
        Error::Io(std::io::Error::new(
            e.kind(),
            format!("the rewritten file could not keep the original's owner, mode or attributes ({e})"),
        ))
    })
}
