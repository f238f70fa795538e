//! A whole tree (or list) of files re-keyed with one call: every file hyperseal or age can open
//! is re-keyed in O(header) with [`rekey_file`]'s guarantees (a concurrent writer wins, a failure
//! leaves that file as it was, owner and mode are kept); anything else is listed as skipped and
//! never touched. The identities are the caller's, unlocked once for the whole set.
//!
//! Each file is re-keyed only if it is the very file the walk found, reached again without
//! following a link ([`super::beneath`]): a member of a shared folder who swaps a file or a
//! directory for a link, or a file for a FIFO, after the walk gets a failure for that name and
//! nothing outside the tree is touched. A file the caller may read but not write, and that the
//! identities do not open, is skipped.
//!
//! A run keeps a **manifest** (when given a path; [`super::manifest`]): for each file, the
//! digest of its header before the change, of the header the run is about to write, and of the
//! one it wrote; never key material. A killed run resumes with the same call: a file counts as
//! done only if its header now is exactly the one this change's run wrote (or was about to
//! write when it was stopped); any other header, the old one or a version another program saved
//! meanwhile, is re-keyed. So a change like "add a recipient" is applied once per file however
//! often the run is resumed, and never skipped where it was not applied. The manifest's first
//! lines name the change, and a manifest of another change is refused rather than mixed in.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use super::beneath::{self, Place};
use super::file::{recover_checked, rekey_file_with, remove_stale_copy, Checks, FileOptions, Written};
use super::header::Change;
use super::manifest::{key, Manifest, Record};
use super::unlock::{stanzas_of, unlock, Batch};
use super::walk::{Entry, Walk, WalkOptions};
use crate::error::Error;
use crate::error::Outcome;
use crate::format::armor::{AGE_LABEL, HYPERSEAL_LABEL};
use crate::format::{Header, Stanza};
use crate::recipient::Identity;
use crate::sys::FileId;
use crate::unlock::{in_windows, Drive, Progress};

/// What to re-key and how.
#[derive(Clone, Debug, Default)]
pub struct TreeOptions {
    /// Walk directories given as roots (without it a directory is skipped).
    pub recursive: bool,
    /// Only files matching one of these globs (all files when empty); see
    /// [`glob_match`](super::glob_match).
    pub include: Vec<String>,
    /// No file matching one of these globs.
    pub exclude: Vec<String>,
    /// Follow symbolic links (to files and directories); without it they are skipped.
    pub follow_links: bool,
    /// Plan only: report what each file would become, change nothing, write no manifest.
    pub dry_run: bool,
    /// Keep the manifest here (see the module documentation); `None`: no manifest, no resume.
    pub manifest: Option<PathBuf>,
    /// As [`FileOptions::split_links`].
    pub split_links: bool,
    /// Files re-keyed at once (each file is one job: its own lock, journal and temporary), on
    /// the library's executor; 0: as many as this process has CPUs (and never more).
    pub threads: usize,
}

/// What happened to one file.
pub enum TreeOutcome {
    /// Re-keyed: the report of [`rekey_file`] (a dry run's plan included).
    Rekeyed(super::file::Report),
    /// Done by an earlier run of the same change: its header is the one the manifest recorded.
    AlreadyDone,
    /// Never touched, and why (not an encrypted file, not opened by the identities, a link…).
    Skipped(String),
    /// The re-key failed: the error says what the file was left as.
    Failed(Error),
}

/// Every file of the walk and its outcome, in walk order.
#[derive(Default)]
pub struct TreeReport {
    /// Each file the walk found, and what became of it.
    pub files: Vec<(PathBuf, TreeOutcome)>,
}

impl TreeReport {
    /// (re-keyed in place, rewritten, already done, skipped, failed).
    pub fn counts(&self) -> (usize, usize, usize, usize, usize) {
        let mut c = (0, 0, 0, 0, 0);
        for (_, o) in &self.files {
            match o {
                TreeOutcome::Rekeyed(r) if matches!(r.written, Written::Rewritten { .. }) => c.1 += 1,
                TreeOutcome::Rekeyed(_) => c.0 += 1,
                TreeOutcome::AlreadyDone => c.2 += 1,
                TreeOutcome::Skipped(_) => c.3 += 1,
                TreeOutcome::Failed(_) => c.4 += 1,
            }
        }
        c
    }
}

/// Re-keys every file under `roots` (see the module documentation). `progress(done, total)` is
/// called after each file. Fails as a whole only for the walk's or the manifest's own errors
/// (a root that does not exist, a manifest of another change); a file's failure is its outcome.
pub fn rekey_tree(
    roots: &[PathBuf],
    identities: &[Box<dyn Identity>],
    change: &Change,
    opts: &TreeOptions,
    progress: Option<&dyn Fn(usize, usize)>,
) -> Result<TreeReport, Error> {
    let mut walk = Walk::new(WalkOptions {
        recursive: opts.recursive,
        follow_links: opts.follow_links,
        include: &opts.include,
        exclude: &opts.exclude,
        manifest: opts.manifest.as_deref(),
        pass_over: &[],
    })?;
    for root in roots {
        walk.root(root)?;
    }
    let mut files = walk.out;
    let manifest = match (&opts.manifest, opts.dry_run) {
        (Some(p), false) => Some(Mutex::new(Manifest::open(p, &change.id())?)),
        _ => None,
    };
    same_files_once(&mut files);
    let total = files.len();
    let file_opts =
        FileOptions { dry_run: opts.dry_run, split_links: opts.split_links, ..FileOptions::default() };
    // With an identity that unlocks in batches (a plugin), the files go by windows: their
    // headers read, the plugin asked once for the window, then each file re-keyed. Without one
    // no file weighs anything, so all are one window.
    let batching = identities.iter().any(|id| id.unwraps_in_batches());
    let entries = files.into_iter().map(|entry| {
        let stanzas = match (&entry, batching) {
            (Entry::File(path, place), true) => stanzas_of(path, place),
            _ => Vec::new(),
        };
        (entry, stanzas)
    });
    let unlocked = |window: &mut [(Entry, Vec<Stanza>)]| -> (Vec<Box<dyn Identity + '_>>, bool) {
        match batching {
            true => {
                let headers: Vec<Vec<Stanza>> = window.iter_mut().map(|(_, s)| std::mem::take(s)).collect();
                unlock(identities, &headers, change)
            }
            false => (identities.iter().map(|id| Box::new(&**id) as Box<dyn Identity>).collect(), false),
        }
    };
    let manifest = manifest.as_ref();
    let work = |(ids, opens_known): &(Vec<Box<dyn Identity + '_>>, bool), (entry, _)| match entry {
        Entry::Skip(path, why) => (path, TreeOutcome::Skipped(why)),
        Entry::File(path, place) => {
            let job = Job { identities: ids, change, opts: &file_opts, manifest, opens_known: *opens_known };
            let outcome = one(&path, &place, &job);
            (path, outcome)
        }
    };
    let mut tell = |done| {
        if let Some(p) = progress {
            p(done, total);
        }
    };
    // Files are independent (each has its own lock, journal and temporary); progress is told on
    // this thread, as the bindings' callbacks need.
    let drive = Drive { threads: opts.threads, progress: Progress::Caller(&mut tell), stop: None };
    let files = in_windows(entries, Batch::default, unlocked, work, drive);
    Ok(TreeReport { files })
}

/// A file reached twice (two roots that overlap, a link followed to a file also walked, hard
/// links) is re-keyed once, by its first path; the others are listed as skipped. Files run in
/// parallel, so one file must never be two jobs.
pub fn same_files_once(files: &mut [Entry]) {
    let mut seen: HashMap<FileId, PathBuf> = HashMap::new();
    for e in files.iter_mut() {
        let Entry::File(path, place) = e else { continue };
        match seen.get(&place.id) {
            Some(first) => {
                let why = format!("the same file as {} (re-keyed there)", first.display());
                *e = Entry::Skip(path.clone(), why);
            }
            None => {
                seen.insert(place.id, path.clone());
            }
        }
    }
}

/// What every file of a window is re-keyed with.
struct Job<'a, 'b> {
    identities: &'a [Box<dyn Identity + 'b>],
    change: &'a Change,
    opts: &'a FileOptions,
    manifest: Option<&'a Mutex<Manifest>>,
    opens_known: bool,
}

/// One file of the walk: reached again as the walked file, then re-keyed (module docs).
fn one(display: &Path, place: &Place, job: &Job<'_, '_>) -> TreeOutcome {
    let reached = match place.reach(display) {
        Ok(r) => r,
        Err(e) => return TreeOutcome::Failed(unchanged(e.into())),
    };
    let path = &reached.path;
    match checked(path, place.id, job, &key(display)) {
        TreeOutcome::Failed(e) => TreeOutcome::Failed(relabel(e, path, display)),
        o => o,
    }
}

/// [`one`] on the file named through its parent's handle (`path`), `expect` its identity.
fn checked(path: &Path, expect: FileId, job: &Job<'_, '_>, name: &str) -> TreeOutcome {
    let Job { identities, change, opts, manifest, opens_known } = *job;
    // Read-only first: a file the caller cannot write may still be one to skip.
    let file = match beneath::open_checked(path, false, expect, path) {
        Ok(f) => f,
        Err(e) => return TreeOutcome::Failed(unchanged(e.into())),
    };
    match looks_encrypted(&file) {
        Ok(true) => {}
        Ok(false) => return TreeOutcome::Skipped("not a hyperseal or age file".into()),
        Err(e) => return TreeOutcome::Failed(unchanged(e.into())),
    }
    let mut checks = Checks { expect: Some(expect), before_write: None, opens_known };
    let Some(manifest) = manifest else {
        // Closed first: the re-key's write lease is granted only while no other descriptor of
        // the file is open, this process's included.
        drop(file);
        return attempt(path, identities, change, opts, &checks);
    };
    // An interrupted re-key of this file is settled first (its journal), so the header read
    // next is the one in force.
    let recovered = match super::journal_path(path).symlink_metadata() {
        Ok(_) => match recover_checked(path, expect) {
            Ok(r) => r,
            Err(e) => return classify(e),
        },
        Err(_) => None,
    };
    let now = match header_digest(&file) {
        Ok(d) => d,
        Err(e) => return classify(e),
    };
    drop(file);
    let manifest = || manifest.lock().unwrap_or_else(|p| p.into_inner());
    // Taken alone: a guard in the `match` would be held through its arms.
    let state = manifest().state(name);
    match state {
        // Exactly the header this change's run wrote: done.
        Some(Record::Done { after }) if after == now => return TreeOutcome::AlreadyDone,
        // The header this change's run was about to write when it was stopped: written. A run
        // stopped between the rewrite's rename and the removal of the old file's second name
        // left that name behind, and it still opens for the old recipients: it goes now.
        Some(Record::Begun { before, planned }) if planned == now => {
            if let Err(e) = remove_stale_copy(path) {
                return classify(e);
            }
            return match manifest().done(name, &before, &now) {
                Ok(()) => TreeOutcome::AlreadyDone,
                Err(e) => TreeOutcome::Failed(unchanged(e)),
            };
        }
        // Anything else (the old header, or a version another program saved since) is
        // re-keyed: a record vouches only for headers this run wrote.
        _ => {}
    }
    let planned = Mutex::new(None);
    let announce = |new: &[u8]| {
        let d = header_bytes_digest(new)?;
        manifest().begin(name, &now, &d)?;
        *planned.lock().unwrap_or_else(|p| p.into_inner()) = Some(d);
        Ok(())
    };
    checks.before_write = Some(&announce);
    let mut outcome = attempt(path, identities, change, opts, &checks);
    if let TreeOutcome::Rekeyed(r) = &mut outcome {
        // What the recovery above found, said with this file's line.
        r.recovered = r.recovered.take().or(recovered);
        let after = planned.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(after) = after {
            if let Err(e) = manifest().done(name, &now, &after) {
                return TreeOutcome::Failed(Error::Rekey { outcome: Outcome::Changed, source: Box::new(e) });
            }
        }
    }
    outcome
}

fn attempt(
    path: &Path,
    identities: &[Box<dyn Identity + '_>],
    change: &Change,
    opts: &FileOptions,
    checks: &Checks<'_>,
) -> TreeOutcome {
    match rekey_file_with(path, identities, change, opts, checks) {
        Ok(r) => TreeOutcome::Rekeyed(r),
        Err(e) => classify(e),
    }
}

/// Files that are not for these identities, or not encrypted at all, are skipped, not failed;
/// every failure says what the file was left as.
fn classify(e: Error) -> TreeOutcome {
    match e {
        Error::NoIdentityMatched => TreeOutcome::Skipped("none of the identities opens it".into()),
        Error::UnknownFormat | Error::EmptyInput => {
            TreeOutcome::Skipped("not a hyperseal or age file".into())
        }
        Error::Armor(_) => TreeOutcome::Skipped("not a hyperseal or age file".into()),
        e => TreeOutcome::Failed(unchanged(e)),
    }
}

/// A failure before the re-key wrote anything: the file is as it was.
fn unchanged(e: Error) -> Error {
    match e {
        e @ Error::Rekey { .. } => e,
        e => Error::Rekey { outcome: Outcome::Unchanged, source: Box::new(e) },
    }
}

/// A failure's text with the file's handle name (`/proc/self/fd/N/NAME`) written as the walk's
/// path, so the caller's line names the file as they know it.
pub(super) fn relabel(e: Error, through: &Path, display: &Path) -> Error {
    let text = |s: String| beneath::relabel(&s, through, display);
    match e {
        Error::Rekey { outcome, source } => {
            let outcome = match outcome {
                Outcome::Pending(j) => Outcome::Pending(PathBuf::from(text(j.to_string_lossy().into()))),
                o => o,
            };
            Error::Rekey { outcome, source: Box::new(relabel(*source, through, display)) }
        }
        Error::Io(e) => Error::Io(std::io::Error::new(e.kind(), text(e.to_string()))),
        Error::InvalidArgument(m) => Error::InvalidArgument(text(m)),
        e => e,
    }
}

/// Whether the file begins as a hyperseal or age file does ([`looks_encrypted_head`]).
fn looks_encrypted(file: &File) -> std::io::Result<bool> {
    let mut head = [0u8; 64];
    let n = crate::sys::read_at_most(file, &mut head, 0)?;
    Ok(looks_encrypted_head(&head[..n]))
}

/// Whether bytes begin as a hyperseal or age file does (binary or armored; 64 bytes are
/// enough): one that does and then fails to parse is damaged (a failure), anything else is not
/// ours (skipped). The tree re-key and the S3 prefix re-key sort what they find by it.
pub fn looks_encrypted_head(head: &[u8]) -> bool {
    let head = &head[..head.len().min(64)];
    // The version lines the header parser accepts (`format/header.rs`), or armor with one of the
    // two labels (a PEM key's `-----BEGIN …` is not ours: skipped, not failed).
    let label = head.trim_ascii_start().strip_prefix(b"-----BEGIN ").unwrap_or_default();
    head.starts_with(b"hyperseal/")
        || head.starts_with(b"age-encryption.org/")
        || label.starts_with(HYPERSEAL_LABEL.as_bytes())
        || label.starts_with(AGE_LABEL.as_bytes())
}

/// SHA-256 of the header bytes as they are in the file (armored files: of the decoded header).
fn header_digest(file: &File) -> Result<String, Error> {
    let dec = crate::Decryptor::new(file)?;
    let h = dec.header();
    Ok(hex(&Sha256::digest(h.encode(h.mac()))))
}

/// [`header_digest`] of a header about to be written (its bytes, as `Rekey::encode` made them).
fn header_bytes_digest(bytes: &[u8]) -> Result<String, Error> {
    let h = Header::read_from(&mut &bytes[..])?;
    Ok(hex(&Sha256::digest(h.encode(h.mac()))))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
