//! Many sops files re-keyed from their paths: the files and folders a frontend is given, walked,
//! each file's target taken from its `.sops.yaml` creation rule (or one target for all),
//! windows of files unlocked once (a plugin or the agent asked once per window), each file
//! re-keyed (or rotated) in memory and written over atomically, and what became of every file.
//! The CLI, Node and Python all drive this one loop; they print, prompt and read the
//! environment themselves.
//!
//! The files are found by the tree re-key's own walk (`rekey/walk.rs`): folders listed through
//! their handles, no link followed, each file recorded by its place under a held directory and
//! its identity, and reached again that way to be read and to be written (`rekey/beneath.rs`),
//! so a member of a shared folder who swaps a file or a folder for a link while a run (perhaps
//! root's) goes on gets a failure for that name, and nothing outside the tree is touched.
//!
//! Each file is written whole as a rewrite of the tree re-key (`rekey/file.rs`): locked, checked
//! to be the bytes the new ones were made from, a new file with its owner, mode and attributes
//! renamed over it under a lease after a last check (`rekey/guard.rs`), so another program's
//! save wins. A stopped run leaves each file old or new and needs no manifest: running it again
//! finishes it, as already re-keyed files are `Unchanged`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use zeroize::Zeroizing;

use super::model::{refuse, SopsOutcome, MAX_FILE};
use super::{
    find_config, looks_like_sops, rekey_with, rotate_with, unlock, Format, Rules, Target, CONFIG_NAME,
};
use hyperseal::format::Stanza;
use hyperseal::recipient::{Identity, Recipient};
use hyperseal::rekey::kit::{self, same_files_once, Entry, Place, Walk, WalkOptions};
use hyperseal::unlock::{in_windows, Drive, Progress, Window};
use hyperseal::Error;
use hyperseal::FileKey;

/// Files read at once: a plugin or the agent is asked once per window.
const WINDOW_FILES: usize = 1024;
/// The bytes of a window's files held at once (a window ends after the file that passes it).
const WINDOW_BYTES: usize = 64 << 20;
/// The most files one run takes (a folder walk stops there, with an error).
pub const MAX_FILES: usize = 1_000_000;

/// How [`rekey_files`] treats its files.
#[derive(Default)]
pub struct FilesOptions {
    /// One target for every file; `None`: each file's `.sops.yaml` creation rule (the first
    /// whose `path_regex` matches it, in the nearest `.sops.yaml` of its folder or above), as
    /// `sops updatekeys` reads them.
    pub target: Option<Target>,
    /// Allow a change that leaves a key group no given identity opens.
    pub force: bool,
    /// `Some(now)`: rotate each file as `sops rotate` does (a fresh data key, every value
    /// sealed again, `lastmodified` set to `now`) instead of re-wrapping its data key.
    pub rotate: Option<SystemTime>,
    /// Check each file and report what it would become; write nothing.
    pub dry_run: bool,
    /// Walk the folders among the paths (a folder is refused without it).
    pub recursive: bool,
    /// Threads for the files of a window (0: every core).
    pub threads: usize,
}

/// What became of one file.
#[derive(Debug)]
pub enum FileOutcome {
    /// Its age entries changed (for a dry run: would change).
    Changed {
        /// Age entries written.
        added: usize,
        /// Age entries dropped.
        removed: usize,
    },
    /// Already the target.
    Unchanged,
    /// Found by a folder walk and not a sops file, or selected by no creation rule: never
    /// touched.
    Skipped(&'static str),
    /// Refused or failed; the file is as it was.
    Failed(Error),
}

/// Every file in walk order (names sorted), with what became of it.
#[derive(Debug, Default)]
pub struct FilesReport {
    /// The files, given ones in the order given.
    pub files: Vec<(PathBuf, FileOutcome)>,
    /// Names an interrupted earlier re-key had left beside a file and this run removed: the old
    /// version's second name (`.NAME.hyperseal-old`, which still opened for the recipients it
    /// had) or a new version that never took the file's name (`.NAME.hyperseal-link`).
    pub cleared: Vec<PathBuf>,
}

impl FilesReport {
    /// The counts: changed, unchanged, skipped, failed.
    pub fn counts(&self) -> (usize, usize, usize, usize) {
        let mut n = (0, 0, 0, 0);
        for (_, o) in &self.files {
            match o {
                FileOutcome::Changed { .. } => n.0 += 1,
                FileOutcome::Unchanged => n.1 += 1,
                FileOutcome::Skipped(_) => n.2 += 1,
                FileOutcome::Failed(_) => n.3 += 1,
            }
        }
        n
    }
}

/// How a caller reads a recipient string, from any of the run's threads.
pub type ReadRecipientSync<'a> = dyn Fn(&str) -> Result<Box<dyn Recipient>, Error> + Sync + 'a;

/// Re-keys the sops files among `paths` (files, and with `recursive` the regular files of the
/// folders, links and `.git` not followed), opened with `identities`. A given file that is not a
/// sops file fails; a walked one is skipped. One file's failure is its outcome, not the call's:
/// the call fails only for a path it cannot walk, or a folder without `recursive`.
/// `progress(done, total)` is called after each file, from the thread that did it.
pub fn rekey_files(
    paths: &[PathBuf],
    identities: &Arc<Vec<Box<dyn Identity>>>,
    options: &FilesOptions,
    recipient: &ReadRecipientSync<'_>,
    progress: Option<&(dyn Fn(usize, usize) + Sync)>,
) -> Result<FilesReport, Error> {
    let files = files(paths, options.recursive)?;
    let ids: Vec<Arc<dyn Identity>> =
        (0..identities.len()).map(|i| Arc::new(Nth(identities.clone(), i)) as Arc<dyn Identity>).collect();
    let batches = ids.iter().any(|i| i.unwraps_in_batches());
    let configs = Mutex::new(HashMap::new());
    let cleared = Mutex::new(Vec::new());
    // A file is read only when its window has room for it: a window holds its files' bytes.
    let read = files.iter().map(|(f, found)| match found {
        Found::File(place, _) => (f, found, kit::read_beneath(place, f, MAX_FILE, "a sops file")),
        _ => (f, found, Ok(Zeroizing::new(Vec::new()))),
    });
    let unlocked = |window: &mut [Loaded<'_>]| {
        let inputs: Vec<(&[u8], Format)> = match batches {
            true => window
                .iter()
                .filter(|(_, found, _)| matches!(found, Found::File(..)))
                .filter_map(|(f, _, r)| r.as_ref().ok().map(|b| (&b[..], Format::for_path(f))))
                .collect(),
            false => Vec::new(),
        };
        unlock(&inputs, &ids)
    };
    // Each file is small, so its time is the parse, the wraps and the synced write, which
    // overlap across files.
    let work = |views: &Vec<Box<dyn Identity>>, (file, found, read): Loaded<'_>| match (found, read) {
        (Found::Skip(why), _) => FileOutcome::Skipped(why),
        (Found::Fail(e), _) => FileOutcome::Failed(copy_error(e)),
        (_, Err(e)) => FileOutcome::Failed(e),
        (Found::File(place, walked), Ok(b)) => {
            let at = Reached { display: file, place };
            let left = leftovers(&at);
            let outcome = one(&at, &b, *walked, options, views, recipient, &configs);
            if !left.is_empty() {
                let still = leftovers(&at);
                let mut cleared = cleared.lock().unwrap_or_else(|p| p.into_inner());
                cleared.extend(left.into_iter().filter(|p| !still.contains(p)));
            }
            outcome
        }
    };
    let total = files.len();
    let tell = |done| {
        if let Some(p) = progress {
            p(done, total);
        }
    };
    let drive = Drive { threads: options.threads, progress: Progress::Workers(&tell), stop: None };
    let outcomes = in_windows(read, Files::default, unlocked, work, drive);
    let files = files.into_iter().zip(outcomes).map(|((f, _), o)| (f, o)).collect();
    let mut cleared = cleared.into_inner().unwrap_or_else(|p| p.into_inner());
    cleared.sort();
    Ok(FilesReport { files, cleared })
}

/// A file of a window: its path, what the walk made of it, and its bytes (none where it is not
/// a file to read) or why they could not be read.
type Loaded<'a> = (&'a PathBuf, &'a Found, Result<Zeroizing<Vec<u8>>, Error>);

/// The window rule: files are read until a window holds [`WINDOW_FILES`] of them, or passes
/// [`WINDOW_BYTES`] with its last one.
#[derive(Default)]
struct Files {
    count: usize,
    bytes: usize,
}

impl Window<Loaded<'_>> for Files {
    fn room(&self) -> bool {
        self.count < WINDOW_FILES && self.bytes < WINDOW_BYTES
    }

    fn add(&mut self, (_, _, read): &Loaded<'_>) {
        self.count += 1;
        self.bytes += read.as_ref().map_or(0, |b| b.len());
    }
}

/// The names an interrupted re-key left beside `at`'s file that are there now, as the caller
/// names the file's folder.
fn leftovers(at: &Reached<'_>) -> Vec<PathBuf> {
    kit::leftovers(at.place, at.display)
}

/// One identity of a shared list, as the unlock's shared identities are held.
struct Nth(Arc<Vec<Box<dyn Identity>>>, usize);

impl Identity for Nth {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        self.0[self.1].unwrap_stanza(stanza)
    }
    fn unwrap_stanzas(&self, stanzas: &[Stanza]) -> Option<Result<FileKey, Error>> {
        self.0[self.1].unwrap_stanzas(stanzas)
    }
    fn unwraps_in_batches(&self) -> bool {
        self.0[self.1].unwraps_in_batches()
    }
    fn unwrap_each(&self, stanzas: &[&Stanza]) -> Result<Vec<Option<Result<FileKey, Error>>>, Error> {
        self.0[self.1].unwrap_each(stanzas)
    }
}

/// The walk's error for a given path, for its file's outcome (the list keeps its own).
fn copy_error(e: &Error) -> Error {
    match e {
        Error::Io(io) => Error::Io(std::io::Error::new(io.kind(), io.to_string())),
        Error::Limit(m) => Error::Limit(m.clone()),
        e => refuse(e.to_string()),
    }
}

/// What the walk made of one path.
enum Found {
    /// A regular file at its place; `true` where a folder walk found it.
    File(Place, bool),
    /// Listed and never touched (a link, not a regular file, a second path to a file).
    Skip(&'static str),
    /// A path given that could not be looked at.
    Fail(Error),
}

/// The files to re-key, by the tree re-key's walk (module docs): given files as they are,
/// folders walked with `recursive` (`.git` and `.sops.yaml` passed over, links not followed),
/// a file reached by two paths taken once.
fn files(paths: &[PathBuf], recursive: bool) -> Result<Vec<(PathBuf, Found)>, Error> {
    let mut walk = Walk::new(WalkOptions {
        recursive,
        follow_links: false,
        include: &[],
        exclude: &[],
        manifest: None,
        pass_over: &[".git", CONFIG_NAME],
    })?;
    let mut entries: Vec<(Entry, bool)> = Vec::new();
    let mut failed: Vec<(usize, PathBuf, Error)> = Vec::new();
    for f in paths {
        let folder = f.is_dir();
        if folder && !recursive {
            return Err(refuse(format!("{} is a folder (walk it with recursive)", f.display())));
        }
        match walk.root(f) {
            Ok(()) => entries.extend(walk.take().into_iter().map(|e| (e, folder))),
            // A given file fails alone; a folder that cannot be walked fails the run.
            Err(e) if !folder => failed.push((entries.len() + failed.len(), f.clone(), e)),
            Err(e) => {
                let shown = Error::Io(std::io::Error::other(format!("cannot read {}: {e}", f.display())));
                return Err(shown);
            }
        }
        if entries.len() > MAX_FILES {
            return Err(hyperseal::limits::too_many("files", MAX_FILES));
        }
    }
    let walked: Vec<bool> = entries.iter().map(|(_, w)| *w).collect();
    let mut list: Vec<Entry> = entries.into_iter().map(|(e, _)| e).collect();
    same_files_once(&mut list);
    let mut out: Vec<(PathBuf, Found)> = list
        .into_iter()
        .zip(walked)
        .map(|(e, walked)| match e {
            Entry::File(path, place) => (path, Found::File(place, walked)),
            Entry::Skip(path, why) => (path, Found::Skip(skip_reason(&why))),
        })
        .collect();
    for (at, path, e) in failed {
        out.insert(at.min(out.len()), (path, Found::Fail(e)));
    }
    Ok(out)
}

/// The walk's reasons for what it lists and never touches, as a sops run words them (it takes
/// no `--follow-symlinks`).
fn skip_reason(why: &str) -> &'static str {
    if why.starts_with("a symbolic link") {
        "a symbolic link: not followed"
    } else if why.starts_with("the same file as") {
        "the same file as another path of this run (re-keyed there)"
    } else if why.starts_with("replaced while") {
        "replaced while the tree was walked: not walked"
    } else {
        "not a regular file"
    }
}

/// A walked file: its path as the caller knows it, and its place.
struct Reached<'a> {
    display: &'a Path,
    place: &'a Place,
}

/// Each `.sops.yaml` read so far, or why it could not be.
type Configs = HashMap<PathBuf, Result<Arc<Rules>, String>>;

/// One file: its target, re-keyed in memory, written back only if something changed.
fn one(
    at: &Reached<'_>,
    bytes: &[u8],
    walked: bool,
    options: &FilesOptions,
    identities: &[Box<dyn Identity>],
    recipient: &ReadRecipientSync<'_>,
    configs: &Mutex<Configs>,
) -> FileOutcome {
    let file = at.display;
    // A run killed while it replaced this file may have left the old version's second name
    // beside it (`.NAME.hyperseal-old`, which still opens for the recipients it had), or, killed
    // one instant later, the new version under its temporary name (`.NAME.hyperseal-link`). A
    // rewrite removes both when it opens the file (`open_locked`, under the file's lock, so a
    // name another re-key is using right now is never taken from it); a file that run had
    // already re-keyed is unchanged now and never opened so: opened the same way here when
    // either is there.
    if !options.dry_run {
        if let Err(e) = kit::clear_leftovers(at.place, file) {
            return FileOutcome::Failed(e);
        }
    }
    let format = Format::for_path(file);
    if !looks_like_sops(bytes, format) {
        return match walked {
            true => FileOutcome::Skipped("not a sops file"),
            false => FileOutcome::Failed(refuse("not a sops file (no sops metadata)")),
        };
    }
    let rule_target;
    let target = match &options.target {
        Some(t) => t,
        None => {
            let Some(config) = find_config(file) else {
                return FileOutcome::Failed(refuse(format!(
                    "no {CONFIG_NAME} in its folder or above (or give the recipients)"
                )));
            };
            let rules = {
                let mut configs = configs.lock().unwrap_or_else(|p| p.into_inner());
                configs
                    .entry(config.clone())
                    .or_insert_with(|| Rules::load(&config).map(Arc::new).map_err(|e| reason(&e)))
                    .clone()
            };
            let rules = match rules {
                Ok(r) => r,
                Err(e) => return FileOutcome::Failed(refuse(format!("{}: {e}", config.display()))),
            };
            let Some(rule) = rules.for_file(file) else {
                return match walked {
                    true => FileOutcome::Skipped("no creation rule matches it"),
                    false => FileOutcome::Failed(refuse(format!(
                        "no creation rule of {} matches it",
                        config.display()
                    ))),
                };
            };
            rule_target = Target::Groups(rule.groups.clone());
            &rule_target
        }
    };
    let force = options.force;
    let done = match options.rotate {
        Some(now) => rotate_with(bytes, format, target, identities, force, recipient, now),
        None => rekey_with(bytes, format, target, identities, force, recipient),
    };
    match done {
        Ok(SopsOutcome::Unchanged) => FileOutcome::Unchanged,
        Ok(SopsOutcome::Changed { bytes: new, added, removed }) => {
            if options.dry_run {
                return FileOutcome::Changed { added, removed };
            }
            match kit::rewrite_in_place(at.place, at.display, bytes, &new) {
                Ok(()) => FileOutcome::Changed { added, removed },
                Err(e) => FileOutcome::Failed(e),
            }
        }
        Err(e) => FileOutcome::Failed(e),
    }
}

/// An error's text without its kind's prefix where the library's refusals carry the whole
/// reason.
fn reason(e: &Error) -> String {
    match e {
        Error::InvalidArgument(why) => why.clone(),
        e => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use hyperseal::recipient::{generate, parse_identities, parse_recipient, Kind};

    /// A one-group sops YAML file whose data key is wrapped for `public`, as sops lays it out.
    fn sops_yaml(public: &str) -> String {
        let enc = crate::datakey::wrap(&[7; 32], parse_recipient(public).unwrap()).unwrap();
        let enc: String = enc.lines().map(|l| format!("            {l}\n")).collect();
        format!(
            "a: ENC[AES256_GCM,data:x,iv:y,tag:z,type:str]\nsops:\n    age:\n        - recipient: {public}\n          enc: |\n{enc}    lastmodified: \"2026-11-25T21:19:51Z\"\n    mac: ENC[AES256_GCM,data:m]\n    version: 3.13.3\n"
        )
    }

    fn options(target: Option<Target>, dry_run: bool) -> FilesOptions {
        FilesOptions { target, dry_run, recursive: true, ..FilesOptions::default() }
    }

    #[test]
    fn a_folder_follows_its_rules_and_reports_every_file() {
        let (a, b) = (generate(Kind::X25519).unwrap(), generate(Kind::X25519).unwrap());
        let ids = Arc::new(parse_identities(&a.secret).unwrap());
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(
            root.join(CONFIG_NAME),
            format!("creation_rules:\n  - age: {},{}\n", a.public, b.public),
        )
        .unwrap();
        let secret = root.join("sub/s.yaml");
        let old = sops_yaml(&a.public);
        std::fs::write(&secret, &old).unwrap();
        std::fs::write(root.join("notes.txt"), "not a secret\n").unwrap();
        let read = |r: &str| parse_recipient(r);
        let calls = Mutex::new(Vec::new());
        let progress = |d: usize, t: usize| calls.lock().unwrap().push((d, t));
        let run = |dry_run| {
            rekey_files(&[root.to_path_buf()], &ids, &options(None, dry_run), &read, Some(&progress))
        };

        // A dry run reports the change and writes nothing.
        let report = run(true).unwrap();
        assert!(matches!(report.files[1].1, FileOutcome::Changed { added: 1, removed: 0 }), "{report:?}");
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), old);

        let report = run(false).unwrap();
        assert_eq!(report.counts(), (1, 0, 1, 0), "{report:?}");
        assert_eq!(report.files[0].0, root.join("notes.txt"));
        assert!(matches!(report.files[0].1, FileOutcome::Skipped("not a sops file")));
        let now = std::fs::read_to_string(&secret).unwrap();
        assert!(now.contains(&b.public) && now.starts_with("a: ENC[AES256_GCM,data:x"), "{now}");
        assert_eq!(calls.lock().unwrap().last(), Some(&(2, 2)));
        // Already the target: unchanged, and not written again.
        assert_eq!(run(false).unwrap().counts(), (0, 1, 1, 0));
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), now);
    }

    #[test]
    fn given_files_fail_alone_and_a_folder_needs_recursive() {
        let a = generate(Kind::X25519).unwrap();
        let ids = Arc::new(parse_identities(&a.secret).unwrap());
        let dir = tempfile::tempdir().unwrap();
        let (plain, missing, good) =
            (dir.path().join("plain.yaml"), dir.path().join("missing.yaml"), dir.path().join("good.yaml"));
        std::fs::write(&plain, "a: 1\n").unwrap();
        std::fs::write(&good, sops_yaml(&a.public)).unwrap();
        let read = |r: &str| parse_recipient(r);
        let other = generate(Kind::X25519).unwrap().public;
        let target = Some(Target::Edit { add: vec![other.clone()], remove: Vec::new() });
        let paths = [plain.clone(), missing, good.clone()];
        let report = rekey_files(&paths, &ids, &options(target, false), &read, None).unwrap();
        assert!(
            matches!(&report.files[0].1, FileOutcome::Failed(Error::InvalidArgument(m)) if m.contains("not a sops file"))
        );
        assert!(matches!(&report.files[1].1, FileOutcome::Failed(Error::Io(_))));
        assert!(matches!(report.files[2].1, FileOutcome::Changed { added: 1, removed: 0 }));
        assert_eq!(std::fs::read_to_string(&plain).unwrap(), "a: 1\n");
        assert!(std::fs::read_to_string(&good).unwrap().contains(&other));

        let flat = FilesOptions { recursive: false, ..FilesOptions::default() };
        assert!(rekey_files(&[dir.path().to_path_buf()], &ids, &flat, &read, None).is_err());
    }
}
