//! `hyperseal git rekey [--all] [--rotate] [--dry-run]`: after a `.age-recipients` changed
//! (a member joined or left), every marked path under it is stored again for the new list.
//! Header-only by default (the payload bytes stay as they are); `--rotate` seals each file
//! again under a new file key. The new blobs are written with one `git hash-object` and
//! staged with one `git update-index`: exactly the re-keyed paths, never `.age-recipients`
//! itself (the user stages it with them), never the work tree.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use hyperseal::recipient::Identity;
use hyperseal::rekey::Change;
use hyperseal::unlock::{in_windows, Drive, Progress, Whole};
use hyperseal_git::cat_file::{tree, CatFile};
use hyperseal_git::recipients::{candidates, nearest, parse_bounded};
use hyperseal_git::rekey::{change_to, rekey_blob, unlock_for_rekey, Rekeyed};
use hyperseal_git::Spool;

use super::blobs::{self, MOST, ROUND};
use super::{cat_file, git, git_path, marked_paths, work_tree};
use crate::errors::hint;

/// One path to re-key: its index entry and the recipients file that governs it.
struct Target {
    path: String,
    mode: String,
    oid: String,
    recipients: String,
}

pub fn rekey(all: bool, rotate: bool, dry_run: bool) -> Result<()> {
    let root = work_tree()?;
    let mut cat = cat_file()?;
    let spool_dir = git_path("hyperseal-spool")?;
    let mut spool = Spool::new(&spool_dir);
    let targets = find_targets(&root, all, &mut cat, &mut spool)?;
    if targets.is_empty() {
        eprintln!(
            "nothing to re-key: no .age-recipients differs from HEAD's (`--all` re-keys every marked path)"
        );
        return Ok(());
    }
    if dry_run {
        for t in &targets {
            println!("would re-key {} (to {})", t.path, t.recipients);
        }
        eprintln!("dry run: {} marked file(s) would be re-keyed; nothing written", targets.len());
        return Ok(());
    }
    // One unlock for every file: the identity files are read once, and the agent asks for its
    // passphrase or PIN at most once.
    let ids = super::filter::unlocked()?;
    if ids.is_empty() {
        return Err(hint(
            "the repository is locked: re-keying opens each file's header",
            "run `hyperseal git unlock` first",
        ));
    }
    let mut changes = HashMap::new();
    for t in &targets {
        if !changes.contains_key(&t.recipients) {
            let text = nearest(&root, &t.path)?.map(|f| f.text).unwrap_or_default();
            let list = crate::cmd::identity::parse_recipients_text(&text, Path::new(&t.recipients))
                .with_context(|| t.recipients.clone())?;
            changes.insert(t.recipients.clone(), change_to(list).with_context(|| t.recipients.clone())?);
        }
    }
    // The new blobs wait (ciphertext only) as files for `git hash-object --stdin-paths`.
    let work = Scratch::new(&spool_dir)?;
    let files: Vec<PathBuf> = (0..targets.len()).map(|n| work.dir.join(n.to_string())).collect();
    let ids: Vec<Arc<dyn Identity>> = ids.into_iter().map(Arc::from).collect();
    let run = Run { targets: &targets, changes: &changes, ids: &ids, rotate, files: &files };
    let done = run.all(&mut cat, &mut spool)?;
    let oids = hash_objects(&files)?;
    let mut info = Vec::new();
    for (t, oid) in targets.iter().zip(&oids) {
        write!(info, "{} {oid}\t{}\0", t.mode, t.path)?;
    }
    git(&["update-index", "-z", "--index-info"], Some(&info))?;
    say_done(&targets, done, rotate);
    Ok(())
}

/// The marked paths to re-key: every one with `all`, else those under a `.age-recipients` that
/// differs from HEAD's (or that HEAD does not have). Fails closed before anything is written on
/// a marked path with no recipients.
fn find_targets(root: &Path, all: bool, cat: &mut CatFile, spool: &mut Spool) -> Result<Vec<Target>> {
    let staged = git(&["ls-files", "-s", "-z"], None)?;
    let modes = modes(&staged);
    let index = tree(&staged, true);
    let head = tree(&git(&["ls-tree", "-r", "-z", "HEAD"], None).unwrap_or_default(), false);
    // HEAD's text of each recipients file, read once.
    let mut head_text: HashMap<String, String> = HashMap::new();
    let mut targets = Vec::new();
    for path in &marked_paths()? {
        let Some(oid) = index.get(path) else { continue };
        let found = nearest(root, path)?.ok_or_else(|| {
            hint(
                format!("{path}: no .age-recipients in its folder or any folder above it"),
                "put the recipients in a .age-recipients file in its folder or one above",
            )
        })?;
        let was = candidates(path)?.into_iter().find(|c| head.contains_key(c));
        let changed = match was {
            None => true,
            Some(w) if w != found.path => true,
            Some(w) => {
                if !head_text.contains_key(&w) {
                    spool.clear()?;
                    cat.blob(&head[&w], spool)?;
                    let text = parse_bounded(spool.reader()?).with_context(|| format!("HEAD:{w}"))?;
                    head_text.insert(w.clone(), text);
                }
                head_text[&w] != found.text
            }
        };
        if all || changed {
            let mode = modes.get(path).cloned().unwrap_or_else(|| "100644".into());
            targets.push(Target { path: path.clone(), mode, oid: oid.clone(), recipients: found.path });
        }
    }
    Ok(targets)
}

/// Each path's outcome, in the paths' order (`None`: not reached).
type Done = Vec<Mutex<Option<Result<Rekeyed>>>>;

/// A round's identities, each batch identity behind its answers, and per change whether they open
/// what it wraps to (`unlock_for_rekey`).
type Unlocked = (Vec<Box<dyn Identity>>, Vec<bool>);

/// One re-key of many paths: each target's new blob into its file of `files`.
struct Run<'a> {
    targets: &'a [Target],
    changes: &'a HashMap<String, Change>,
    ids: &'a [Arc<dyn Identity>],
    rotate: bool,
    files: &'a [PathBuf],
}

impl Run<'_> {
    /// Blobs of up to a MiB in rounds (git reading the next round meanwhile), each round's files
    /// re-keyed on every core; the few larger ones streamed one at a time, as the filter does.
    /// Stops at the first failure in the order of the paths.
    fn all(&self, cat: &mut CatFile, spool: &mut Spool) -> Result<Done> {
        let targets = self.targets;
        let done: Done = targets.iter().map(|_| Mutex::new(None)).collect();
        let one = |i: usize, got: Result<Rekeyed>| {
            *done[i].lock().unwrap_or_else(|p| p.into_inner()) =
                Some(got.with_context(|| targets[i].path.clone()));
        };
        let change = |i: usize| &self.changes[&targets[i].recipients];
        // The changes in one order, each batch identity asked about all of them at once.
        let names: Vec<&String> = self.changes.keys().collect();
        let change_at: HashMap<&String, usize> = names.iter().enumerate().map(|(n, k)| (*k, n)).collect();
        let round_changes: Vec<&Change> = names.iter().map(|k| &self.changes[*k]).collect();
        let sizes = blobs::sizes(&targets.iter().map(|t| t.oid.as_str()).collect::<Vec<_>>())?;
        let (small, large): (Vec<usize>, Vec<usize>) = (0..targets.len()).partition(|&i| sizes[i] <= MOST);
        let small_oids: Vec<&str> = small.iter().map(|&i| targets[i].oid.as_str()).collect();
        let small_sizes: Vec<u64> = small.iter().map(|&i| sizes[i]).collect();
        let (ids, rotate, files) = (self.ids, self.rotate, self.files);
        blobs::in_rounds(&small_oids, &small_sizes, blobs::round_files(ids), ROUND, |first, blobs| {
            // Each round is one window: git cut it by size. The agent or a plugin is asked once
            // for the whole round (the lock-out check included); then each file opens offline.
            let round = blobs.iter().enumerate().map(|(k, blob)| (small[first + k], *blob));
            let unlock = |round: &mut [(usize, Option<&[u8]>)]| {
                let present: Vec<&[u8]> = round.iter().filter_map(|(_, blob)| *blob).collect();
                unlock_for_rekey(&present, ids, &round_changes)
            };
            let work = |(view, known): &Unlocked, (i, blob): (usize, Option<&[u8]>)| {
                let opens = known[change_at[&targets[i].recipients]];
                let got = match blob {
                    Some(blob) => {
                        rekey_to(&mut || Ok(Box::new(blob)), view, change(i), rotate, opens, &files[i])
                    }
                    None => Err(anyhow::anyhow!("git did not give its blob {}", targets[i].oid)),
                };
                one(i, got);
            };
            let drive = Drive { threads: 0, progress: Progress::Quiet, stop: None };
            in_windows(round, || Whole, unlock, work, drive);
            first_failure(&done, small[first..first + blobs.len()].iter().copied())
        })?;
        // Asked only when there is one: a batch identity would run for nothing.
        let (view, known) = match large.is_empty() {
            true => Default::default(),
            false => unlock_for_rekey(&[], ids, &round_changes),
        };
        for &i in &large {
            spool.clear()?;
            cat.blob(&targets[i].oid, spool)?;
            let opens = known[change_at[&targets[i].recipients]];
            let got =
                rekey_to(&mut || Ok(Box::new(spool.reader()?)), &view, change(i), rotate, opens, &files[i]);
            one(i, got);
            first_failure(&done, [i])?;
        }
        Ok(done)
    }
}

/// The summary: each path, the stanza counts, and what a removed recipient can still read.
fn say_done(targets: &[Target], done: Done, rotate: bool) {
    let mut stanzas = std::collections::BTreeMap::new();
    for d in done {
        if let Some(Ok(r)) = d.into_inner().unwrap_or_else(|p| p.into_inner()) {
            *stanzas.entry((r.before, r.after)).or_insert(0usize) += 1;
        }
    }
    for t in targets {
        println!("re-keyed {} (to {})", t.path, t.recipients);
    }
    let how = if rotate { "new file keys, new payloads" } else { "headers only, payloads unchanged" };
    let counts: Vec<String> =
        stanzas.iter().map(|((b, a), n)| format!("{n} from {b} to {a} recipient stanza(s)")).collect();
    eprintln!(
        "re-keyed and staged {} marked file(s) ({how}; {}); stage the .age-recipients files with them and commit",
        targets.len(),
        counts.join(", ")
    );
    eprintln!(
        "hyperseal: note: removed recipients can still read every earlier commit, and may have kept file keys{}; only changing the secrets themselves revokes them",
        if rotate { "" } else { " (`--rotate` gives new ones)" }
    );
}

fn rekey_to<'a>(
    open: &mut dyn FnMut() -> std::io::Result<Box<dyn Read + 'a>>,
    ids: &[Box<dyn Identity>],
    change: &Change,
    rotate: bool,
    opens_known: bool,
    file: &Path,
) -> Result<Rekeyed> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(file)?);
    let done = rekey_blob(open, ids, change, rotate, opens_known, &mut out)?;
    out.flush()?;
    Ok(done)
}

/// The first of `order` whose re-key failed, as an error.
fn first_failure(
    done: &[Mutex<Option<Result<Rekeyed>>>],
    order: impl IntoIterator<Item = usize>,
) -> Result<()> {
    for i in order {
        // Only a failure is taken out: a success stays, to be counted.
        let failed = done[i].lock().unwrap_or_else(|p| p.into_inner()).take_if(|r| r.is_err());
        if let Some(Err(e)) = failed {
            return Err(e);
        }
    }
    Ok(())
}

/// Writes `files` into git's object store (`git hash-object -w`), a share of them per core, each
/// share one git process (git writes each object under a temporary name and links it into
/// place, so processes writing side by side is how git itself works); their ids, in order.
fn hash_objects(files: &[PathBuf]) -> Result<Vec<String>> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // At least 1,000 files per git: starting one costs a few milliseconds.
    let share = files.len().div_ceil(cores).max(1000);
    let answers: Vec<Result<Vec<u8>>> = std::thread::scope(|s| {
        let running: Vec<_> = files
            .chunks(share)
            .map(|part| {
                s.spawn(move || {
                    let mut list = Vec::new();
                    for f in part {
                        writeln!(list, "{}", f.display())?;
                    }
                    git(&["hash-object", "-w", "--no-filters", "--stdin-paths"], Some(&list))
                })
            })
            .collect();
        running
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(anyhow::anyhow!("git hash-object failed"))))
            .collect()
    });
    let mut oids = Vec::with_capacity(files.len());
    for answer in answers {
        oids.extend(std::str::from_utf8(&answer?)?.lines().map(str::to_string));
    }
    if oids.len() != files.len() {
        return Err(anyhow::anyhow!("git hash-object answered {} ids for {} files", oids.len(), files.len()));
    }
    Ok(oids)
}

/// Path → mode from `ls-files -s -z` (stage 0): an executable secret stays executable.
fn modes(listed: &[u8]) -> HashMap<String, String> {
    let mut map = HashMap::new();
    for entry in listed.split(|b| *b == 0) {
        let text = String::from_utf8_lossy(entry);
        let Some((meta, path)) = text.split_once('\t') else { continue };
        if let [mode, _, "0"] = meta.split(' ').collect::<Vec<_>>().as_slice() {
            map.insert(path.to_string(), mode.to_string());
        }
    }
    map
}

/// A folder of this run's new blobs under the spool folder, removed with everything in it
/// when the run ends, however it ends.
struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn new(spool_dir: &Path) -> Result<Self> {
        let dir = spool_dir.join(format!("rekey-{}", std::process::id()));
        std::fs::create_dir_all(&dir).with_context(|| dir.display().to_string())?;
        Ok(Scratch { dir })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
