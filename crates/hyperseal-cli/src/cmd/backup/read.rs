//! The readers' verbs: each opens the repository with an identity (`-i`, or the agent).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use hyperseal_backup::{Entry, Reader, RestoreOptions};

use super::{IdentityArgs, RepoArg};
use crate::errors::hint;

#[derive(Args)]
pub struct SnapshotsArgs {
    #[command(flatten)]
    repo: RepoArg,
    #[command(flatten)]
    ids: IdentityArgs,
    /// One JSON array on standard output.
    #[arg(long)]
    json: bool,
}

pub fn snapshots(a: SnapshotsArgs) -> Result<()> {
    let (store, ids) = (a.repo.store()?, a.ids.load()?);
    let reader = Reader::open(&*store, &ids)?;
    let listed = reader.snapshots()?;
    skipped_warnings(&listed.skipped);
    let all = listed.list;
    if a.json {
        let list: Vec<_> = all
            .iter()
            .map(|s| serde_json::json!({"id": s.id, "time": s.snapshot.time, "host": s.snapshot.host, "paths": s.snapshot.paths}))
            .collect();
        println!("{}", serde_json::Value::Array(list));
        return Ok(());
    }
    println!("{:<10} {:<20} {:<16} paths", "ID", "time (UTC)", "host");
    for s in &all {
        let (id, host) = (&s.id[..8], crate::errors::redact(&s.snapshot.host).into_owned());
        println!(
            "{id:<10} {:<20} {host:<16} {}",
            utc(s.snapshot.time),
            printable(&s.snapshot.paths.join(" "))
        );
    }
    println!("{} snapshots", all.len());
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
fn printable(s: &str) -> String {
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
