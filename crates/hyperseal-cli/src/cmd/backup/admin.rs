//! The verbs that delete or re-key: each needs a reader's identity.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use hyperseal_backup::{ForgetOptions, Keep, Plugins, PruneOptions, Reader};

use super::read::SelectArgs;
use super::{now, IdentityArgs, RepoArg};

#[derive(Args)]
pub struct ForgetArgs {
    #[command(flatten)]
    repo: RepoArg,
    #[command(flatten)]
    ids: IdentityArgs,
    #[command(flatten)]
    select: SelectArgs,
    /// Keep the newest N snapshots (of each group).
    #[arg(long = "keep-last", value_name = "N", default_value_t = 0, hide_default_value = true)]
    keep_last: usize,
    /// Keep the newest snapshot of each of the last N hours that have one (UTC).
    #[arg(long = "keep-hourly", value_name = "N", default_value_t = 0, hide_default_value = true)]
    keep_hourly: usize,
    /// … of each of the last N days.
    #[arg(long = "keep-daily", value_name = "N", default_value_t = 0, hide_default_value = true)]
    keep_daily: usize,
    /// … of each of the last N weeks (Monday to Sunday).
    #[arg(long = "keep-weekly", value_name = "N", default_value_t = 0, hide_default_value = true)]
    keep_weekly: usize,
    /// … of each of the last N months.
    #[arg(long = "keep-monthly", value_name = "N", default_value_t = 0, hide_default_value = true)]
    keep_monthly: usize,
    /// … of each of the last N years.
    #[arg(long = "keep-yearly", value_name = "N", default_value_t = 0, hide_default_value = true)]
    keep_yearly: usize,
    /// Keep every snapshot made within DURATION (2y5m7d3h) of the group's newest.
    #[arg(long = "keep-within", value_name = "DURATION")]
    keep_within: Option<String>,
    /// Keep every snapshot that has all these tags (a,b; repeatable: any list).
    #[arg(long = "keep-tag", value_name = "TAGS")]
    keep_tag: Vec<String>,
    /// Group by host, paths and/or tags (comma-separated; '' for one group).
    #[arg(long = "group-by", value_name = "GROUPS", default_value = "host,paths")]
    group_by: String,
    /// Say what would be removed; remove nothing.
    #[arg(long = "dry-run", short = 'n')]
    dry_run: bool,
    /// One JSON array of groups on standard output, as restic's.
    #[arg(long)]
    json: bool,
    /// Then prune (see `prune`).
    #[arg(long, conflicts_with = "dry_run")]
    prune: bool,
}

pub fn forget(a: ForgetArgs) -> Result<()> {
    let keep = Keep {
        last: a.keep_last,
        hourly: a.keep_hourly,
        daily: a.keep_daily,
        weekly: a.keep_weekly,
        monthly: a.keep_monthly,
        yearly: a.keep_yearly,
        within: a.keep_within.as_deref().map(str::parse).transpose()?.unwrap_or_default(),
        tags: a.keep_tag.iter().map(|t| hyperseal_backup::tag_list(t)).collect(),
    };
    let opts =
        ForgetOptions { keep, group_by: a.group_by.parse()?, filter: a.select.filter(), dry_run: a.dry_run };
    let (store, ids) = (a.repo.store()?, a.ids.load()?);
    let mut reader = Reader::open(&*store, &ids)?;
    // Plugin recipients run, as everywhere in the CLI: a prune's index and a rekey wrap to them.
    reader.set_plugins(Plugins::Allow);
    // With --prune, nothing is forgotten unless the prune can then run.
    if a.prune {
        hyperseal_backup::prune_ready(&reader, PruneOptions { now: now(), stale_after: DAY })?;
    }
    let rep = hyperseal_backup::forget_with(&reader, &opts)?;
    super::read::skipped_warnings(&rep.skipped);
    if a.json {
        let groups: Vec<_> = rep
            .groups
            .iter()
            .map(|g| {
                let list = |l: &[hyperseal_backup::SnapshotInfo]| l.iter().map(super::read::snapshot_json).collect::<Vec<_>>();
                serde_json::json!({"host": g.host, "paths": g.paths, "tags": g.tags, "keep": list(&g.kept), "remove": list(&g.removed)})
            })
            .collect();
        println!("{}", serde_json::Value::Array(groups));
    } else {
        let verb = if a.dry_run { "would remove" } else { "removed" };
        for g in &rep.groups {
            let what = [
                ("host", g.host.clone()),
                ("paths", g.paths.as_ref().map(|p| p.join(" "))),
                ("tags", g.tags.as_ref().map(|t| t.join(","))),
            ];
            let named: Vec<String> = what
                .iter()
                .filter_map(|(k, v)| Some(format!("{k} {}", super::read::printable(v.as_ref()?))))
                .collect();
            eprintln!(
                "hyperseal: group {}: {} kept, {} {verb}",
                if named.is_empty() { "all".into() } else { named.join(", ") },
                g.kept.len(),
                g.removed.len()
            );
            for s in &g.removed {
                eprintln!("hyperseal: {verb} snapshot {} ({})", s.id, super::read::utc(s.snapshot.time));
            }
        }
    }
    eprintln!(
        "hyperseal: {} snapshots {}, {} kept",
        rep.removed.len(),
        if a.dry_run { "to remove" } else { "removed" },
        rep.kept.len()
    );
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
    let store = a.repo.store()?;
    match hyperseal_backup::unlock(&*store)? {
        true => eprintln!("hyperseal: removed locks/prune (make sure no prune is running)"),
        false => eprintln!("hyperseal: there was no prune lock to remove"),
    }
    // Run marks are not locks to remove (a backup may be running): name them, and when they
    // stop holding a prune off.
    let marks: Vec<String> =
        store.list("runs/")?.into_iter().map(|o| o.name).filter(|n| !n.contains('.')).collect();
    let ended: Vec<String> =
        store.list("runs/")?.into_iter().map(|o| o.name).filter(|n| n.ends_with(".end")).collect();
    for m in marks.iter().filter(|m| !ended.contains(&format!("{m}.end"))) {
        eprintln!(
            "hyperseal: {m}: a backup running, or one killed: unless its snapshot is stored, a prune waits until --stale-after (a day) has passed since it was last seen"
        );
    }
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
