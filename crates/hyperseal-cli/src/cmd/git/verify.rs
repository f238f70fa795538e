//! `hyperseal git verify [REV]`: every marked path stored as an age file whose stanza types
//! and count match its `.age-recipients`, both read from REV (by default the index). For CI
//! and the pre-commit hook: it catches what a tool that ignores `.gitattributes` committed.

use std::collections::HashMap;

use anyhow::Result;
use hyperseal_git::recipients::{candidates, parse_bounded};
use hyperseal_git::verify::{check, stanza_types};
use hyperseal_git::Spool;

use hyperseal_git::cat_file::tree;

use super::{cat_file, git, git_path, work_tree};

pub fn verify(rev: Option<&str>) -> Result<()> {
    work_tree()?;
    let raw = match rev {
        None => git(&["ls-files", "-s", "-z"], None)?,
        Some(r) => git(&["ls-tree", "-r", "-z", r], None)?,
    };
    let listed = tree(&raw, rev.is_none());
    let links = links_in(&raw);
    let marked = marked_in(&listed, rev.is_none())?;
    let spool_dir = git_path("hyperseal-spool")?;
    let mut cat = cat_file()?;
    let mut spool = Spool::new(&spool_dir);
    // Each recipients file's stanza types, worked out once.
    let mut wanted: HashMap<String, Vec<String>> = HashMap::new();
    let mut bad = 0;
    for path in &marked {
        let file = candidates(path)?.into_iter().find(|c| listed.contains_key(c));
        if let Some(f) = file.as_ref().filter(|f| links.contains(*f)) {
            bad += 1;
            println!(
                "{path}: its {f} is a symbolic link (the filter takes recipients only from a regular file)"
            );
            continue;
        }
        let want = match &file {
            Some(f) if !wanted.contains_key(f) => {
                spool.clear()?;
                cat.blob(&listed[f], &mut spool)?;
                let text =
                    parse_bounded(spool.reader()?).map_err(|e| anyhow::Error::new(e).context(f.clone()))?;
                let recipients = crate::cmd::identity::parse_recipients_text(&text, std::path::Path::new(f))
                    .map_err(|e| anyhow::Error::new(e).context(f.clone()))?;
                wanted.insert(f.clone(), stanza_types(&recipients)?);
                wanted.get(f)
            }
            Some(f) => wanted.get(f),
            None => None,
        };
        spool.clear()?;
        cat.blob(&listed[path], &mut spool)?;
        if let Some(finding) = check(spool.reader()?, want.map(Vec::as_slice)) {
            bad += 1;
            println!("{path}: {finding}");
        }
    }
    if bad == 0 {
        eprintln!("verified: {} marked path(s)", marked.len());
        return Ok(());
    }
    Err(crate::errors::hint(
        format!("{bad} of {} marked path(s) are not stored as their recipients say", marked.len()),
        "add them again through the filter (`git add --renormalize PATH` in an unlocked work tree), then commit",
    ))
}

/// The paths that `ls-files -s -z` or `ls-tree -r -z` lists as symbolic links (mode 120000,
/// the first field of both).
fn links_in(listed: &[u8]) -> std::collections::HashSet<String> {
    listed
        .split(|b| *b == 0)
        .filter(|e| e.starts_with(b"120000 "))
        .filter_map(|e| {
            e.iter().position(|b| *b == b'\t').map(|t| String::from_utf8_lossy(&e[t + 1..]).into_owned())
        })
        .collect()
}

/// The listed paths whose `filter` attribute is this driver: the index's `.gitattributes`
/// for the index, the work tree's otherwise (git 2.39's check-attr reads no revision).
fn marked_in(listed: &HashMap<String, String>, index: bool) -> Result<Vec<String>> {
    let mut names: Vec<&String> = listed.keys().collect();
    names.sort();
    let mut input = Vec::new();
    for n in &names {
        input.extend_from_slice(n.as_bytes());
        input.push(0);
    }
    hyperseal_git::marked::marked_among(&super::repo_git(), &input, index).map_err(super::said)
}
