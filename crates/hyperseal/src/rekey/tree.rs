//! A whole tree (or list) of files re-keyed with one call: every file hyperseal or age can open
//! is re-keyed in O(header) with [`rekey_file`]'s guarantees (a concurrent writer wins, a failure
//! leaves that file as it was, owner and mode are kept); anything else is listed as skipped and
//! never touched. The identities are the caller's, unlocked once for the whole set.
//!
//! A run keeps a **manifest** (when given a path): for each file, the digest of its header before
//! the change and after it, never key material. A killed run resumes with the same call: a file
//! recorded as done whose header is still the recorded one is skipped (verified by its digest);
//! a file recorded as begun is finished if its header moved (its own re-key journal completed or
//! undid the write first), and re-keyed if it did not. So a change like "add a recipient" is
//! applied once per file however often the run is resumed. The manifest's first lines name the
//! change, and a manifest of another change is refused rather than mixed in.
//!
//! Manifest format (text, one record a line, fields separated by a tab, paths last with `%`,
//! tab, CR and LF escaped as `%25`, `%09`, `%0D`, `%0A`):
//!
//! ```text
//! hyperseal-rekey-manifest v1
//! change <the change's name: Change::id, a hex SHA-256 of its recipients' key ids>
//! begin <header SHA-256 before> <path>
//! done <header SHA-256 before> <header SHA-256 after> <path>
//! ```

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use super::file::{recover, rekey_file, FileOptions, Written};
use super::unlock::{stanzas_of, unlock, Window};
use super::Change;
use crate::error::Error;
use crate::format::armor::{AGE_LABEL, HYPERSEAL_LABEL};
use crate::recipient::Identity;
use crate::sys::{FileId, Stamp};

/// What to re-key and how.
#[derive(Clone, Debug, Default)]
pub struct TreeOptions {
    /// Walk directories given as roots (without it a directory is skipped).
    pub recursive: bool,
    /// Only files matching one of these globs (all files when empty); see [`glob_match`].
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
    /// Files re-keyed at once (each file is one job: its own lock, journal and temporary);
    /// 0: as many as this process has CPUs.
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
    let mut files = Vec::new();
    for root in roots {
        walk(root, root, opts, &mut files, &mut Vec::new())?;
    }
    let manifest = match (&opts.manifest, opts.dry_run) {
        (Some(p), false) => Some(Mutex::new(Manifest::open(p, &change.id())?)),
        _ => None,
    };
    same_files_once(&mut files);
    let mut report = TreeReport::default();
    let total = files.len();
    let threads = match opts.threads {
        0 => crate::stream::exec::available_threads(),
        n => n,
    };
    let file_opts =
        FileOptions { dry_run: opts.dry_run, split_links: opts.split_links, ..FileOptions::default() };
    // With an identity that unlocks in batches (a plugin), the files go by windows: their
    // headers read, the plugin asked once for the window, then each file re-keyed.
    let batching = identities.iter().any(|id| id.unwraps_in_batches());
    let mut window = Window::default();
    let mut run = |window: Window<Entry>| {
        let ids: Vec<Box<dyn Identity + '_>> = match batching {
            true => unlock(identities, &window.headers),
            false => identities.iter().map(|id| Box::new(&**id) as Box<dyn Identity>).collect(),
        };
        let work = |entry: Entry| match entry {
            Entry::Skip(path, why) => (path, TreeOutcome::Skipped(why)),
            Entry::File(path) => {
                let outcome = one(&path, &ids, change, &file_opts, manifest.as_ref());
                (path, outcome)
            }
        };
        let before = report.files.len();
        let tick = |done: usize| {
            if let Some(p) = progress {
                p(before + done, total);
            }
        };
        report.files.extend(each(window.entries, threads, work, tick));
    };
    for entry in files {
        let stanzas = match (&entry, batching) {
            (Entry::File(path), true) => stanzas_of(path),
            _ => Vec::new(),
        };
        if !window.fits(&stanzas) {
            run(std::mem::take(&mut window));
        }
        window.push(entry, stanzas);
    }
    run(window);
    Ok(report)
}

/// `work` on each of `items` on up to `threads` threads (files are independent: each has its
/// own lock, journal and temporary), the results in the items' order; `tick(n)` on the
/// caller's thread as the n-th result comes in (the bindings' progress callbacks need their
/// own thread). Where no thread can be started, the caller's thread does the work.
fn each<T: Send, R: Send>(
    items: Vec<T>,
    threads: usize,
    work: impl Fn(T) -> R + Sync,
    tick: impl Fn(usize),
) -> Vec<R> {
    let n = items.len();
    let mut out: Vec<Option<R>> = (0..n).map(|_| None).collect();
    let queue = Mutex::new(items.into_iter().enumerate());
    let next = || queue.lock().unwrap_or_else(|p| p.into_inner()).next();
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel();
        let mut started = 0;
        for _ in 0..threads.min(n) {
            let (tx, work, next) = (tx.clone(), &work, &next);
            let worker = move || {
                while let Some((i, item)) = next() {
                    if tx.send((i, work(item))).is_err() {
                        return;
                    }
                }
            };
            let spawned =
                std::thread::Builder::new().name("hyperseal-rekey".into()).spawn_scoped(scope, worker);
            started += usize::from(spawned.is_ok());
        }
        drop(tx);
        if started == 0 {
            while let Some((i, item)) = next() {
                out[i] = Some(work(item));
                tick(i + 1);
            }
        }
        for (done, (i, r)) in rx.into_iter().enumerate() {
            out[i] = Some(r);
            tick(done + 1);
        }
    });
    out.into_iter().map(|r| r.expect("every item was worked")).collect()
}

/// A file reached twice (two roots that overlap, a link followed to a file also walked, hard
/// links) is re-keyed once, by its first path; the others are listed as skipped. Files run in
/// parallel, so one file must never be two jobs.
fn same_files_once(files: &mut [Entry]) {
    let mut seen: HashMap<FileId, PathBuf> = HashMap::new();
    for e in files.iter_mut() {
        let Entry::File(path) = e else { continue };
        let Ok(stamp) = Stamp::of_path(path) else { continue };
        match seen.get(&stamp.id) {
            Some(first) => {
                let why = format!("the same file as {} (re-keyed there)", first.display());
                *e = Entry::Skip(path.clone(), why);
            }
            None => {
                seen.insert(stamp.id, path.clone());
            }
        }
    }
}

fn one(
    path: &Path,
    identities: &[Box<dyn Identity + '_>],
    change: &Change,
    opts: &FileOptions,
    manifest: Option<&Mutex<Manifest>>,
) -> TreeOutcome {
    match looks_encrypted(path) {
        Ok(true) => {}
        Ok(false) => return TreeOutcome::Skipped("not a hyperseal or age file".into()),
        Err(e) => return TreeOutcome::Failed(e.into()),
    }
    let Some(manifest) = manifest else {
        return attempt(path, identities, change, opts);
    };
    // An interrupted re-key of this file is settled first (its journal), so the header read
    // next is the one in force.
    let recovered = match recover(path) {
        Ok(r) => r,
        Err(e) => return classify(e),
    };
    let now = match header_digest(path) {
        Ok(d) => d,
        Err(e) => return classify(e),
    };
    let manifest = || manifest.lock().unwrap_or_else(|p| p.into_inner());
    // Taken alone: a guard in the `match` would be held through its arms.
    let state = manifest().state(path);
    match state {
        Some(Record::Done { after, .. }) if after == now => return TreeOutcome::AlreadyDone,
        Some(Record::Begun { before }) if before != now => {
            // Written before the run was stopped: record it, do not apply the change twice.
            return match manifest().done(path, &before, &now) {
                Ok(()) => TreeOutcome::AlreadyDone,
                Err(e) => TreeOutcome::Failed(e),
            };
        }
        _ => {}
    }
    if let Err(e) = manifest().begin(path, &now) {
        return TreeOutcome::Failed(e);
    }
    let mut outcome = attempt(path, identities, change, opts);
    if let TreeOutcome::Rekeyed(r) = &mut outcome {
        // What the recovery above found, said with this file's line.
        r.recovered = r.recovered.take().or(recovered);
        if let Err(e) = header_digest(path).and_then(|after| manifest().done(path, &now, &after)) {
            return TreeOutcome::Failed(e);
        }
    }
    outcome
}

fn attempt(
    path: &Path,
    identities: &[Box<dyn Identity + '_>],
    change: &Change,
    opts: &FileOptions,
) -> TreeOutcome {
    match rekey_file(path, identities, change, opts) {
        Ok(r) => TreeOutcome::Rekeyed(r),
        Err(e) => classify(e),
    }
}

/// Files that are not for these identities, or not encrypted at all, are skipped, not failed.
fn classify(e: Error) -> TreeOutcome {
    match e {
        Error::NoIdentityMatched => TreeOutcome::Skipped("none of the identities opens it".into()),
        Error::UnknownFormat | Error::EmptyInput => {
            TreeOutcome::Skipped("not a hyperseal or age file".into())
        }
        Error::Armor(_) => TreeOutcome::Skipped("not a hyperseal or age file".into()),
        e => TreeOutcome::Failed(e),
    }
}

/// Whether the file begins as a hyperseal or age file does ([`looks_encrypted_head`]).
fn looks_encrypted(path: &Path) -> std::io::Result<bool> {
    let mut head = [0u8; 64];
    let n = crate::sys::read_at_most(&File::open(path)?, &mut head, 0)?;
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
fn header_digest(path: &Path) -> Result<String, Error> {
    let file = File::open(path)?;
    let dec = crate::Decryptor::new(&file)?;
    let h = dec.header();
    Ok(hex(&Sha256::digest(h.encode(h.mac()))))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

enum Entry {
    File(PathBuf),
    Skip(PathBuf, String),
}

/// Collects the files under `path` in name order. `seen` holds the directories on the way down
/// (by identity), so a followed link back up is not walked twice.
fn walk(
    root: &Path,
    path: &Path,
    opts: &TreeOptions,
    out: &mut Vec<Entry>,
    seen: &mut Vec<FileId>,
) -> Result<(), Error> {
    let link = std::fs::symlink_metadata(path)?;
    let meta = match link.file_type().is_symlink() {
        true if !opts.follow_links => {
            out.push(Entry::Skip(
                path.to_path_buf(),
                "a symbolic link (--follow-symlinks follows it)".into(),
            ));
            return Ok(());
        }
        true => match std::fs::metadata(path) {
            Ok(m) => m,
            Err(_) => {
                out.push(Entry::Skip(path.to_path_buf(), "a symbolic link to nothing".into()));
                return Ok(());
            }
        },
        false => link,
    };
    if meta.is_dir() {
        if !opts.recursive {
            out.push(Entry::Skip(path.to_path_buf(), "a directory (--recursive walks it)".into()));
            return Ok(());
        }
        let id = Stamp::of_path(path)?.id;
        if seen.contains(&id) {
            return Ok(());
        }
        seen.push(id);
        let mut names: Vec<PathBuf> =
            std::fs::read_dir(path)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>()?;
        names.sort();
        for p in names {
            if is_own_artifact(&p, opts) {
                continue;
            }
            walk(root, &p, opts, out, seen)?;
        }
        seen.pop();
        return Ok(());
    }
    if !selected(root, path, opts) {
        return Ok(());
    }
    match meta.is_file() {
        true => out.push(Entry::File(path.to_path_buf())),
        false => out.push(Entry::Skip(path.to_path_buf(), "not a regular file".into())),
    }
    Ok(())
}

/// The re-key's own files (journals, second names, temporaries) and the manifest.
fn is_own_artifact(p: &Path, opts: &TreeOptions) -> bool {
    let name = p.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    (name.starts_with('.') && (name.ends_with(".hyperseal-rekey") || name.ends_with(".hyperseal-old")))
        || (name.starts_with(".hyperseal-") && name.ends_with(".partial"))
        || (name.starts_with('.') && name.ends_with(".hyperseal-link"))
        || name == MANIFEST_NAME
        || opts.manifest.as_deref() == Some(p)
}

/// The manifest's name when a run keeps it inside the directory it re-keys.
pub const MANIFEST_NAME: &str = ".hyperseal-rekey.manifest";

/// Whether `path` (under `root`) passes the include and exclude globs ([`selected_by`]).
fn selected(root: &Path, path: &Path, opts: &TreeOptions) -> bool {
    // A file given as a root is matched by its name.
    let rel = match path.strip_prefix(root) {
        Ok(r) if !r.as_os_str().is_empty() => r,
        _ => Path::new(path.file_name().unwrap_or_default()),
    };
    selected_by(&opts.include, &opts.exclude, &rel.to_string_lossy().replace('\\', "/"))
}

/// Whether `rel` (a path under the root, or an object's key under the prefix, `/`-separated)
/// passes `include` (all when empty) and `exclude`: a glob without `/` is matched against the
/// last segment (the name), one with `/` against the whole of `rel` ([`glob_match`]).
pub fn selected_by(include: &[String], exclude: &[String], rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let hit = |g: &String| match g.contains('/') {
        true => glob_match(g, rel),
        false => glob_match(g, name),
    };
    (include.is_empty() || include.iter().any(hit)) && !exclude.iter().any(hit)
}

/// Glob matching: `*` any run of characters but `/`, `**` any run including `/`, `?` one
/// character but `/`; everything else matches itself.
pub fn glob_match(glob: &str, text: &str) -> bool {
    fn go(g: &[char], t: &[char]) -> bool {
        match g.first() {
            None => t.is_empty(),
            Some('*') if g.get(1) == Some(&'*') => {
                let rest = if g.get(2) == Some(&'/') { &g[3..] } else { &g[2..] };
                (0..=t.len()).any(|i| go(rest, &t[i..])) || (g.get(2) == Some(&'/') && go(&g[2..], t))
            }
            Some('*') => {
                (0..=t.len()).take_while(|&i| i == 0 || t[i - 1] != '/').any(|i| go(&g[1..], &t[i..]))
            }
            Some('?') => t.first().is_some_and(|&c| c != '/') && go(&g[1..], &t[1..]),
            Some(c) => t.first() == Some(c) && go(&g[1..], &t[1..]),
        }
    }
    let (g, t): (Vec<char>, Vec<char>) = (glob.chars().collect(), text.chars().collect());
    go(&g, &t)
}

#[derive(Clone)]
enum Record {
    Begun { before: String },
    Done { after: String },
}

/// The manifest: records appended and synced one by one, read back whole on resume.
struct Manifest {
    file: File,
    records: HashMap<PathBuf, Record>,
}

impl Manifest {
    fn open(path: &Path, change: &str) -> Result<Manifest, Error> {
        let mut records = HashMap::new();
        let existing = match File::open(path) {
            Ok(f) => Some(f),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e.into()),
        };
        if let Some(f) = existing {
            let bad = |why: &str| Error::InvalidArgument(format!("{}: {why}", path.display()));
            // Bounded: read whole into memory, so at most this much (about a million files).
            if f.metadata()?.len() > MANIFEST_MAX {
                return Err(bad("larger than a re-key manifest can be (256 MiB)"));
            }
            let mut lines = BufReader::new(f.take(MANIFEST_MAX)).lines();
            if lines.next().transpose()?.as_deref() != Some(MAGIC) {
                return Err(bad("not a hyperseal re-key manifest"));
            }
            if lines.next().transpose()?.as_deref() != Some(&format!("change {change}")[..]) {
                return Err(bad(
                    "this manifest records another change (remove it, or give another --manifest)",
                ));
            }
            for line in lines {
                let line = line?;
                let f: Vec<&str> = line.split('\t').collect();
                match f[..] {
                    ["begin", before, p] => {
                        records.insert(unescape(p), Record::Begun { before: before.into() })
                    }
                    ["done", _, after, p] => {
                        records.insert(unescape(p), Record::Done { after: after.into() })
                    }
                    // A line cut short by a kill: its file is settled by the journal and its digest.
                    _ => None,
                };
            }
        }
        let mut file = File::options().create(true).append(true).open(path)?;
        if records.is_empty() && file.metadata()?.len() == 0 {
            file.write_all(format!("{MAGIC}\nchange {change}\n").as_bytes())?;
            file.sync_data()?;
        }
        Ok(Manifest { file, records })
    }

    fn state(&self, path: &Path) -> Option<Record> {
        self.records.get(path).cloned()
    }

    fn begin(&mut self, path: &Path, before: &str) -> Result<(), Error> {
        self.append(&format!("begin\t{before}\t{}\n", escape(path)))?;
        self.records.insert(path.to_path_buf(), Record::Begun { before: before.into() });
        Ok(())
    }

    fn done(&mut self, path: &Path, before: &str, after: &str) -> Result<(), Error> {
        self.append(&format!("done\t{before}\t{after}\t{}\n", escape(path)))?;
        self.records.insert(path.to_path_buf(), Record::Done { after: after.into() });
        Ok(())
    }

    /// One record, durable before the file it names is touched.
    fn append(&mut self, line: &str) -> Result<(), Error> {
        self.file.write_all(line.as_bytes())?;
        self.file.sync_data()?;
        Ok(())
    }
}

const MAGIC: &str = "hyperseal-rekey-manifest v1";
const MANIFEST_MAX: u64 = 256 << 20;

fn escape(p: &Path) -> String {
    let s = p.to_string_lossy();
    s.replace('%', "%25").replace('\t', "%09").replace('\r', "%0D").replace('\n', "%0A")
}

fn unescape(s: &str) -> PathBuf {
    PathBuf::from(s.replace("%0A", "\n").replace("%0D", "\r").replace("%09", "\t").replace("%25", "%"))
}
