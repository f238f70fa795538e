//! The verbs that delete or re-key: each needs a reader's identity.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use hyperseal_backup::{Keep, Plugins, PruneOptions, Reader};

use super::{now, IdentityArgs, RepoArg};

#[derive(Args)]
pub struct ForgetArgs {
    #[command(flatten)]
    repo: RepoArg,
    #[command(flatten)]
    ids: IdentityArgs,
    /// Keep the newest N snapshots.
    #[arg(long = "keep-last", value_name = "N", default_value_t = 0, hide_default_value = true)]
    keep_last: usize,
    /// Keep the newest snapshot of each of the last N days that have one (UTC).
    #[arg(long = "keep-daily", value_name = "N", default_value_t = 0, hide_default_value = true)]
    keep_daily: usize,
    /// … of each of the last N weeks (Monday to Sunday).
    #[arg(long = "keep-weekly", value_name = "N", default_value_t = 0, hide_default_value = true)]
    keep_weekly: usize,
    /// … of each of the last N months.
    #[arg(long = "keep-monthly", value_name = "N", default_value_t = 0, hide_default_value = true)]
    keep_monthly: usize,
    /// Then prune (see `prune`).
    #[arg(long)]
    prune: bool,
}

pub fn forget(a: ForgetArgs) -> Result<()> {
    let (store, ids) = (a.repo.store()?, a.ids.load()?);
    let mut reader = Reader::open(&*store, &ids)?;
    // Plugin recipients run, as everywhere in the CLI: a prune's index and a rekey wrap to them.
    reader.set_plugins(Plugins::Allow);
    let keep =
        Keep { last: a.keep_last, daily: a.keep_daily, weekly: a.keep_weekly, monthly: a.keep_monthly };
    let rep = hyperseal_backup::forget(&reader, keep)?;
    super::read::skipped_warnings(&rep.skipped);
    for id in &rep.removed {
        eprintln!("hyperseal: removed snapshot {id}");
    }
    eprintln!("hyperseal: {} snapshots removed, {} kept", rep.removed.len(), rep.kept.len());
    if a.prune {
        run_prune(&reader, DAY)?;
    }
    Ok(())
}

/// How long a backup's run mark without a snapshot holds a prune off.
const DAY: i64 = 86_400;

#[derive(Args)]
pub struct PruneArgs {
    #[command(flatten)]
    repo: RepoArg,
    #[command(flatten)]
    ids: IdentityArgs,
    /// A backup that started this many seconds ago and has not finished counts as killed.
    #[arg(long = "stale-after", value_name = "SECONDS", default_value_t = DAY)]
    stale_after: i64,
}

pub fn prune(a: PruneArgs) -> Result<()> {
    let (store, ids) = (a.repo.store()?, a.ids.load()?);
    let mut reader = Reader::open(&*store, &ids)?;
    // Plugin recipients run, as everywhere in the CLI: a prune's index and a rekey wrap to them.
    reader.set_plugins(Plugins::Allow);
    run_prune(&reader, a.stale_after)
}

fn run_prune(reader: &Reader<'_>, stale_after: i64) -> Result<()> {
    let rep = hyperseal_backup::prune(reader, PruneOptions { now: now(), stale_after })?;
    super::read::skipped_warnings(&rep.skipped);
    eprintln!(
        "hyperseal: {} packs removed ({} freed), {} kept; {} indexes replaced by one",
        rep.packs_removed,
        super::write::size(rep.bytes_freed),
        rep.packs_kept,
        rep.indexes_replaced
    );
    Ok(())
}

#[derive(Args)]
pub struct UnlockArgs {
    #[command(flatten)]
    repo: RepoArg,
}

pub fn unlock(a: UnlockArgs) -> Result<()> {
    hyperseal_backup::unlock(&*a.repo.store()?)?;
    eprintln!("hyperseal: the prune lock is gone (make sure no prune is running)");
    Ok(())
}

#[derive(Args)]
pub struct RekeyArgs {
    #[command(flatten)]
    repo: RepoArg,
    #[command(flatten)]
    ids: IdentityArgs,
    /// The whole new reader list (repeatable): every object is re-keyed to exactly these.
    #[arg(short = 'r', long = "recipient", allow_hyphen_values = true)]
    recipients: Vec<String>,
    /// A file of the whole new reader list (repeatable).
    #[arg(short = 'R', long = "recipients-file")]
    recipient_files: Vec<PathBuf>,
    /// Also write a new writer key for the new readers here (the old one still seals to the old set).
    #[arg(long = "writer-key", value_name = "FILE")]
    writer_key: Option<PathBuf>,
    /// Show the change; change nothing.
    #[arg(long = "dry-run")]
    dry_run: bool,
}

pub fn rekey(a: RekeyArgs) -> Result<()> {
    let recipients = super::write::recipient_strings(&a.recipients, &a.recipient_files)?;
    let (store, ids) = (a.repo.store()?, a.ids.load()?);
    let mut reader = Reader::open(&*store, &ids)?;
    // Plugin recipients run, as everywhere in the CLI: a prune's index and a rekey wrap to them.
    reader.set_plugins(Plugins::Allow);
    // A reader set that cannot be told (several, none authenticated) may hold anyone: warn.
    let removes =
        reader.recipient_strings().map_or(true, |(old, ..)| old.iter().any(|r| !recipients.contains(r)));
    let bar = (!a.dry_run && std::io::stderr().is_terminal()).then(|| indicatif::ProgressBar::new(0));
    let progress = |done: u64, total: u64| {
        if let Some(b) = &bar {
            b.set_length(total);
            b.set_position(done);
        }
    };
    let rep = hyperseal_backup::rekey(&reader, &recipients, a.dry_run, Some(&progress))?;
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let summary = super::super::rekey_common::summary;
    let (before, after) = (summary(&rep.before), summary(&rep.after));
    if a.dry_run {
        println!("would re-key {} objects: {before} -> {after} (headers only)", rep.objects);
        return Ok(());
    }
    for (name, e) in &rep.failed {
        eprintln!("hyperseal: error: {name}: {e}");
    }
    eprintln!(
        "hyperseal: {} objects re-keyed: {before} -> {after}; {} headers in place, {} rewritten ({} bytes through this machine)",
        rep.objects, rep.in_place, rep.rewritten, rep.rewritten_bytes
    );
    if removes {
        eprintln!("hyperseal: warning: a removed reader may have copied the repository, or its file keys, already: removal protects only what is written from now on with the new writer key");
    }
    if let Some(path) = &a.writer_key {
        super::write::write_key(path, &reader.writer_key(&recipients)?)?;
        eprintln!(
            "hyperseal: new writer key in {}: give it to every writer, and retire the old one",
            path.display()
        );
    }
    match rep.failed.len() {
        0 => Ok(()),
        n => Err(crate::errors::hint(
            format!("{n} objects were not re-keyed"),
            "run the same command again: it resumes",
        )),
    }
}
