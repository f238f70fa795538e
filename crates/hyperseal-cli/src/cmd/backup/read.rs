//! The readers' verbs: each opens the repository with an identity (`-i`, or the agent).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use hyperseal_backup::{Entry, Filter, GroupBy, Reader, RestoreOptions, SnapshotInfo};

use super::{IdentityArgs, RepoArg};
use crate::errors::hint;

#[derive(Args)]
pub struct SnapshotsArgs {
    #[command(flatten)]
    repo: RepoArg,
    #[command(flatten)]
    ids: IdentityArgs,
    #[command(flatten)]
    select: SelectArgs,
    /// Group by host, paths and/or tags (comma-separated), each group under its own heading.
    #[arg(long = "group-by", value_name = "GROUPS", default_value = "")]
    group_by: String,
    /// One JSON array on standard output (of groups, with --group-by).
    #[arg(long)]
    json: bool,
}

/// The snapshots a verb looks at, as restic selects them.
#[derive(Args)]
pub(super) struct SelectArgs {
    /// Only snapshots of this host (repeatable: any of them).
    #[arg(long, value_name = "HOST")]
    host: Vec<String>,
    /// Only snapshots that have all these tags (a,b; repeatable: any list).
    #[arg(long, value_name = "TAGS")]
    tag: Vec<String>,
    /// Only snapshots that name this path (repeatable: every one).
    #[arg(long, value_name = "PATH")]
    path: Vec<String>,
}

impl SelectArgs {
    pub(super) fn filter(&self) -> Filter {
        Filter {
            hosts: self.host.clone(),
            tags: self.tag.iter().map(|t| hyperseal_backup::tag_list(t)).collect(),
            paths: self.path.clone(),
        }
    }
}

/// A snapshot in JSON, without its tree.
pub(super) fn snapshot_json(s: &SnapshotInfo) -> serde_json::Value {
    let t = &s.snapshot;
    serde_json::json!({"id": s.id, "short_id": &s.id[..8], "time": t.time, "host": t.host, "paths": t.paths, "tags": t.tags})
}

pub fn snapshots(a: SnapshotsArgs) -> Result<()> {
    let (filter, group_by): (_, GroupBy) = (a.select.filter(), a.group_by.parse()?);
    let (store, ids) = (a.repo.store()?, a.ids.load()?);
    let reader = Reader::open(&*store, &ids)?;
    let listed = reader.snapshots()?;
    skipped_warnings(&listed.skipped);
    let mut groups: BTreeMap<Vec<String>, Vec<SnapshotInfo>> = BTreeMap::new();
    for s in listed.list.into_iter().filter(|s| filter.matches(&s.snapshot)) {
        let (mut paths, mut tags) = (s.snapshot.paths.clone(), s.snapshot.tags.clone());
        paths.sort();
        tags.sort();
        let key = [
            (group_by.host, s.snapshot.host.clone()),
            (group_by.paths, paths.join(" ")),
            (group_by.tags, tags.join(",")),
        ];
        groups
            .entry(key.into_iter().map(|(on, v)| if on { v } else { String::new() }).collect())
            .or_default()
            .push(s);
    }
    let grouped = group_by.host || group_by.paths || group_by.tags;
    if a.json {
        let list: Vec<_> = if grouped {
            groups.values().map(|g| {
                let t = &g[0].snapshot;
                let key = serde_json::json!({"host": group_by.host.then_some(&t.host), "paths": group_by.paths.then_some(&t.paths), "tags": group_by.tags.then_some(&t.tags)});
                serde_json::json!({"group_key": key, "snapshots": g.iter().map(snapshot_json).collect::<Vec<_>>()})
            }).collect()
        } else {
            groups.values().flatten().map(snapshot_json).collect()
        };
        println!("{}", serde_json::Value::Array(list));
        return Ok(());
    }
    let mut count = 0;
    for (key, list) in &groups {
        if grouped {
            let t = &list[0].snapshot;
            let what = [
                (group_by.host, "host", t.host.clone()),
                (group_by.paths, "paths", key[1].clone()),
                (group_by.tags, "tags", key[2].clone()),
            ];
            let named: Vec<String> =
                what.iter().filter(|w| w.0).map(|(_, k, v)| format!("{k} [{}]", printable(v))).collect();
            println!("snapshots for {}:", named.join(", "));
        }
        println!("{:<10} {:<20} {:<16} {:<16} paths", "ID", "time (UTC)", "host", "tags");
        for s in list {
            let (id, host) = (&s.id[..8], crate::errors::redact(&s.snapshot.host).into_owned());
            let tags = printable(&s.snapshot.tags.join(","));
            println!(
                "{id:<10} {:<20} {host:<16} {tags:<16} {}",
                utc(s.snapshot.time),
                printable(&s.snapshot.paths.join(" "))
            );
        }
        count += list.len();
    }
    println!("{count} snapshots");
    Ok(())
}

/// Objects a reader passed over (they do not open with these identities, or do not decode):
/// one warning each, so a planted or damaged object is seen and never stops the verb.
pub(super) fn skipped_warnings(list: &[hyperseal_backup::Skipped]) {
    for k in list {
        eprintln!("hyperseal: warning: {}: passed over: {}", k.name, printable(&k.why));
    }
}

/// `YYYY-MM-DD HH:MM:SS` from seconds since the epoch, UTC.
pub(super) fn utc(t: i64) -> String {
    let (days, secs) = (t.div_euclid(86_400), t.rem_euclid(86_400));
    let (y, m, d) = hyperseal::time::civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
}

/// A snapshot's names are input: control characters never reach the terminal as they are.
pub(super) fn printable(s: &str) -> String {
    s.chars()
        .flat_map(|c| if c.is_control() { c.escape_default().collect::<Vec<_>>() } else { vec![c] })
        .collect()
}

#[derive(Args)]
pub struct LsArgs {
    #[command(flatten)]
    repo: RepoArg,
    #[command(flatten)]
    ids: IdentityArgs,
    /// JSON lines, one per entry.
    #[arg(long)]
    json: bool,
    /// A snapshot id, a unique prefix of one, or `latest`.
    snapshot: String,
}

pub fn ls(a: LsArgs) -> Result<()> {
    let (store, ids) = (a.repo.store()?, a.ids.load()?);
    let reader = Reader::open(&*store, &ids)?;
    let snap = reader.find(&a.snapshot)?;
    let mut out = std::io::stdout().lock();
    for e in &snap.snapshot.entries {
        if a.json {
            writeln!(out, "{}", serde_json::to_string(e)?)?;
            continue;
        }
        let line = match e {
            Entry::Dir { path, mode, .. } => format!("d {mode:04o} {:>12} {path}/", ""),
            Entry::File { path, mode, size, .. } => format!("- {mode:04o} {size:>12} {path}"),
            Entry::Symlink { path, target } => format!("l      {:>12} {path} -> {target}", ""),
            Entry::Hardlink { path, target } => format!("h      {:>12} {path} => {target}", ""),
        };
        writeln!(out, "{}", printable(&line))?;
    }
    Ok(())
}

#[derive(Args)]
pub struct RestoreArgs {
    #[command(flatten)]
    repo: RepoArg,
    #[command(flatten)]
    ids: IdentityArgs,
    /// The folder to restore beneath (made if missing).
    #[arg(long, value_name = "DIR")]
    target: PathBuf,
    /// Only this path of the snapshot and what is under it (repeatable).
    #[arg(long, value_name = "PATH")]
    include: Vec<String>,
    /// Replace files and links that exist.
    #[arg(long)]
    overwrite: bool,
    /// No summary.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// A snapshot id, a unique prefix of one, or `latest`.
    snapshot: String,
}

pub fn restore(a: RestoreArgs) -> Result<()> {
    let (store, ids) = (a.repo.store()?, a.ids.load()?);
    let reader = Reader::open(&*store, &ids)?;
    let snap = reader.find(&a.snapshot)?;
    let opts = RestoreOptions { overwrite: a.overwrite, include: a.include.clone() };
    let started = std::time::Instant::now();
    let done = hyperseal_backup::restore(&reader, &snap.snapshot, &a.target, &opts)?;
    if !a.quiet {
        eprintln!(
            "hyperseal: restored snapshot {} to {}: {} files, {} folders, {} links, {} in {:.1}s",
            &snap.id[..8],
            a.target.display(),
            done.files,
            done.dirs,
            done.links,
            super::write::size(done.bytes),
            started.elapsed().as_secs_f64()
        );
    }
    for (path, why) in &done.failed {
        eprintln!("hyperseal: error: {}: not restored: {}", printable(path), printable(why));
    }
    match done.failed.len() {
        0 => Ok(()),
        n => Err(hint(
            format!("{n} files could not be restored (named above); every other file was"),
            "hyperseal backup check --read-data names the damaged objects",
        )),
    }
}

#[derive(Args)]
pub struct CheckArgs {
    #[command(flatten)]
    repo: RepoArg,
    #[command(flatten)]
    ids: IdentityArgs,
    /// Also open every pack and check every chunk against its id.
    #[arg(long = "read-data")]
    read_data: bool,
}

pub fn check(a: CheckArgs) -> Result<()> {
    let (store, ids) = (a.repo.store()?, a.ids.load()?);
    let reader = Reader::open(&*store, &ids)?;
    let rep = hyperseal_backup::check(&reader, a.read_data)?;
    for n in &rep.notes {
        eprintln!("hyperseal: note: {n}");
    }
    for e in &rep.errors {
        eprintln!("hyperseal: error: {e}");
    }
    let read =
        if a.read_data { format!(", {} chunks read and verified", rep.chunks_read) } else { String::new() };
    eprintln!("hyperseal: {} snapshots, {} indexes, {} packs{read}", rep.snapshots, rep.indexes, rep.packs);
    match rep.errors.len() {
        0 => {
            eprintln!("hyperseal: no errors were found");
            Ok(())
        }
        n => Err(hint(
            format!("{n} problems found (above)"),
            "a snapshot with missing chunks cannot be restored whole; back up again to store them anew",
        )),
    }
}

#[derive(Args)]
pub struct CatArgs {
    #[command(flatten)]
    repo: RepoArg,
    #[command(flatten)]
    ids: IdentityArgs,
    /// The object: `config`, `keys/…`, `index/…`, `snapshots/…` (or a snapshot id or `latest`), `data/…`.
    object: String,
}

pub fn cat(a: CatArgs) -> Result<()> {
    let (store, ids) = (a.repo.store()?, a.ids.load()?);
    let reader = Reader::open(&*store, &ids)?;
    let name = match a.object.contains('/') || a.object == "config" {
        true => a.object.clone(),
        false => format!("snapshots/{}", reader.find(&a.object)?.id),
    };
    let bytes = reader.cat(&name)?;
    std::io::stdout().lock().write_all(&bytes)?;
    Ok(())
}
