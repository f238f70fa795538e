//! `hyperseal git rekey [--all] [--rotate] [--dry-run]`: after a `.age-recipients` changed
//! (a member joined or left), every marked path under it is stored again for the new list.
//! Header-only by default (the payload bytes stay as they are); `--rotate` seals each file
//! again under a new file key. The new blobs are written with one `git hash-object` and
//! staged with one `git update-index`: exactly the re-keyed paths, never `.age-recipients`
//! itself (the user stages it with them), never the work tree.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use hyperseal::git::recipients::{candidates, nearest, parse_bounded};
use hyperseal::git::rekey::{change_to, rekey_blob};
use hyperseal::git::Spool;

use super::git_filter::{tree, CatFile};
use super::git_repo::{self, git};
use crate::errors::hint;

/// One path to re-key: its index entry and the recipients file that governs it.
struct Target {
    path: String,
    mode: String,
    oid: String,
    recipients: String,
}

pub fn rekey(all: bool, rotate: bool, dry_run: bool) -> Result<()> {
    let root = git_repo::work_tree()?;
    let staged = git(&["ls-files", "-s", "-z"], None)?;
    let modes = modes(&staged);
    let index = tree(&staged, true);
    let head = tree(&git(&["ls-tree", "-r", "-z", "HEAD"], None).unwrap_or_default(), false);
    let marked = git_repo::marked_paths()?;
    let mut cat = CatFile::start()?;
    let spool_dir = git_repo::git_path("hyperseal-spool")?;
    let mut spool = Spool::new(&spool_dir);
    // HEAD's text of each recipients file, read once.
    let mut head_text: HashMap<String, String> = HashMap::new();
    let mut targets = Vec::new();
    for path in &marked {
        let Some(oid) = index.get(path) else { continue };
        // Fail closed before anything is written: a marked path with no recipients.
        let found = nearest(&root, path)?.ok_or_else(|| {
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
                    cat.blob(&head[&w], &mut spool)?;
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
    let ids = super::git_filter::unlocked()?;
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
            let list = super::identity::parse_recipients_text(&text, Path::new(&t.recipients))
                .with_context(|| t.recipients.clone())?;
            changes.insert(t.recipients.clone(), change_to(list).with_context(|| t.recipients.clone())?);
        }
    }
    // The new blobs wait (ciphertext only) as files for one `git hash-object --stdin-paths`.
    let work = Scratch::new(&spool_dir)?;
    let mut stanzas = std::collections::BTreeMap::new();
    let mut files = Vec::new();
    for (n, t) in targets.iter().enumerate() {
        spool.clear()?;
        cat.blob(&t.oid, &mut spool)?;
        let file = work.dir.join(n.to_string());
        let mut out = std::io::BufWriter::new(std::fs::File::create(&file)?);
        let done = rekey_blob(
            &mut || spool.reader().map(|r| Box::new(r) as Box<dyn std::io::Read>),
            &ids,
            &changes[&t.recipients],
            rotate,
            &mut out,
        )
        .with_context(|| t.path.clone())?;
        out.flush()?;
        *stanzas.entry((done.before, done.after)).or_insert(0usize) += 1;
        files.push(file);
    }
    let mut list = Vec::new();
    for f in &files {
        writeln!(list, "{}", f.display())?;
    }
    let oids = git(&["hash-object", "-w", "--no-filters", "--stdin-paths"], Some(&list))?;
    let oids: Vec<&str> = std::str::from_utf8(&oids)?.lines().collect();
    if oids.len() != targets.len() {
        return Err(anyhow::anyhow!(
            "git hash-object answered {} ids for {} files",
            oids.len(),
            targets.len()
        ));
    }
    let mut info = Vec::new();
    for (t, oid) in targets.iter().zip(&oids) {
        write!(info, "{} {oid}\t{}\0", t.mode, t.path)?;
    }
    git(&["update-index", "-z", "--index-info"], Some(&info))?;
    for t in &targets {
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
    Ok(())
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
