//! The writer's verbs: `init` (a reader makes the repository and hands out the writer key) and
//! `create` (the writer backs up with that key alone).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use hyperseal_backup::{BackupOptions, BackupSummary, Plugins, Progress, Source, WriterKey};

use super::{exit, RepoArg};
use crate::errors::{hint, usage};

#[derive(Args)]
pub struct InitArgs {
    #[command(flatten)]
    repo: RepoArg,
    /// A reader's recipient (repeatable); default kind: post-quantum (age1pq1…).
    #[arg(short = 'r', long = "recipient", allow_hyphen_values = true)]
    recipients: Vec<String>,
    /// A file of reader recipients (repeatable).
    #[arg(short = 'R', long = "recipients-file")]
    recipient_files: Vec<PathBuf>,
    /// Where to write the writer key (0600, never over an existing file).
    #[arg(long = "writer-key", value_name = "FILE")]
    writer_key: PathBuf,
}

/// Recipient strings from `-r` and `-R` files, each checked as the rest of the CLI checks them.
pub(super) fn recipient_strings(list: &[String], files: &[PathBuf]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for r in list {
        super::super::identity::parse_recipient_arg(r)
            .map_err(|e| super::super::encrypt::recipient_error(e, None))?;
        out.push(r.trim().to_string());
    }
    for f in files {
        let text = crate::io::read_small(f, "recipients file")?;
        super::super::identity::parse_recipients_text(&text, f)
            .map_err(|e| super::super::encrypt::recipient_error(e, Some(f)))?;
        out.extend(
            text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_string),
        );
    }
    if out.is_empty() {
        return Err(usage(
            "no reader recipients",
            "give -r RECIPIENT or -R FILE (hyperseal keygen makes a key pair)",
        ));
    }
    Ok(out)
}

/// Writes a writer key file: owner-only, never over another file.
pub(super) fn write_key(path: &std::path::Path, key: &WriterKey) -> Result<()> {
    let mut f = crate::sys::create_private(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => {
            hint(format!("{}: exists", path.display()), "a writer key is never overwritten: name a new file")
        }
        _ => anyhow::Error::new(e).context(format!("cannot create {}", path.display())),
    })?;
    f.write_all(key.encode().as_bytes())
        .and_then(|_| f.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))
}

pub fn init(a: InitArgs) -> Result<()> {
    let recipients = recipient_strings(&a.recipients, &a.recipient_files)?;
    let store = a.repo.store()?;
    if a.writer_key.exists() {
        return Err(hint(
            format!("{}: exists", a.writer_key.display()),
            "a writer key is never overwritten: name a new file",
        ));
    }
    let key = hyperseal_backup::init_with(&*store, &recipients, Plugins::Allow)?;
    write_key(&a.writer_key, &key)?;
    eprintln!(
        "hyperseal: repository {} created for {} reader(s); writer key in {} (it opens nothing: keep it on the backed-up host)",
        store.name,
        recipients.len(),
        a.writer_key.display()
    );
    Ok(())
}

#[derive(Args)]
pub struct CreateArgs {
    #[command(flatten)]
    repo: RepoArg,
    /// The writer key (from `init`): recipients and a deduplication key, no identity.
    #[arg(long = "writer-key", value_name = "FILE")]
    writer_key: PathBuf,
    /// Leave out names matching GLOB (repeatable): without `/` a name at any depth (`*.tmp`),
    /// with `/` a path under a backed-up folder (`docs/cache`, or `home/docs/cache` with its name).
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Read --exclude globs from FILE, one a line (`#` comments).
    #[arg(long = "exclude-file", value_name = "FILE")]
    exclude_file: Vec<PathBuf>,
    /// Do not descend into folders on other file systems.
    #[arg(long = "one-file-system", short = 'x')]
    one_file_system: bool,
    /// Back up standard input as one file (name it with --stdin-filename).
    #[arg(long, requires = "stdin_filename", conflicts_with = "paths")]
    stdin: bool,
    /// The file name standard input gets in the snapshot.
    #[arg(long = "stdin-filename", value_name = "NAME")]
    stdin_filename: Option<String>,
    /// The change-detection cache (files whose length, times and inode match are not read
    /// again). Default: $XDG_CACHE_HOME/hyperseal/backup/REPO-ID.json (or ~/.cache/…).
    #[arg(long, value_name = "FILE", conflicts_with = "no_cache")]
    cache: Option<PathBuf>,
    /// Read every file, and keep no cache.
    #[arg(long = "no-cache")]
    no_cache: bool,
    /// The host name recorded (default: this machine's).
    #[arg(long)]
    host: Option<String>,
    /// A tag recorded in the snapshot (repeatable; a,b gives two), for forget and snapshots.
    #[arg(long, value_name = "TAG")]
    tag: Vec<String>,
    /// The time recorded, 'YYYY-MM-DD HH:MM:SS' UTC (default: now). forget counts a snapshot
    /// as no later than when the repository received it.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    time: Option<i64>,
    /// JSON lines on standard output: progress, then a summary.
    #[arg(long)]
    json: bool,
    /// No progress and no summary.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Files and folders to back up.
    #[arg(required_unless_present = "stdin")]
    paths: Vec<PathBuf>,
}

pub fn create(a: CreateArgs) -> Result<()> {
    let text = crate::io::read_small(&a.writer_key, "writer key")?;
    let key = WriterKey::parse(&text).with_context(|| a.writer_key.display().to_string())?;
    let store = a.repo.store()?;
    // A writer cannot open the config, but a folder without one is a mistyped --repo, not a
    // repository to fill.
    if !store.exists_for_writer()? {
        return Err(hyperseal_backup::Error::NotFound("no repository there (no config)".into()).into());
    }
    let mut excludes = a.exclude.clone();
    for f in &a.exclude_file {
        let text = crate::io::read_small(f, "exclude file")?;
        excludes.extend(
            text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_string),
        );
    }
    let source = match (&a.stdin_filename, a.stdin) {
        (Some(name), true) => Source::Stream { input: Box::new(std::io::stdin()), name: name.clone() },
        _ => Source::Paths(a.paths.clone()),
    };
    let bar = (!a.quiet && !a.json && std::io::stderr().is_terminal()).then(|| {
        let b = indicatif::ProgressBar::new_spinner();
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} {msg} {bytes} read, {bytes_per_sec}, {elapsed}",
            )
            .expect("valid template"),
        );
        b
    });
    if let (Some(b), Source::Paths(paths)) = (&bar, &source) {
        count_ahead(b.clone(), paths.clone());
    }
    let json = a.json && !a.quiet;
    let step = std::sync::atomic::AtomicU64::new(0);
    let progress = |p: Progress| {
        if let Some(b) = &bar {
            b.set_message(format!("{} files,", p.files));
            b.set_position(p.bytes + p.unchanged);
        } else if json && step.fetch_add(1, std::sync::atomic::Ordering::Relaxed).is_multiple_of(64) {
            println!(
                "{}",
                serde_json::json!({"message_type": "status", "files_done": p.files, "bytes_done": p.bytes})
            );
        }
    };
    let clock = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let opts = BackupOptions {
        host: a.host.clone().unwrap_or_else(hostname),
        tags: tags(&a.tag),
        time: a.time.unwrap_or(clock.as_secs() as i64),
        nanos: if a.time.is_some() { 0 } else { clock.subsec_nanos() },
        excludes,
        one_file_system: a.one_file_system,
        cache: cache_path(&a, &key),
        progress: Some(&progress),
        // Plugin recipients run, as in age: the reader set named them.
        plugins: Plugins::Allow,
        ..BackupOptions::default()
    };
    let started = std::time::Instant::now();
    let sum = hyperseal_backup::backup(&*store, &key, source, &opts)?;
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    for w in &sum.warnings {
        eprintln!("hyperseal: warning: {w}");
    }
    if !a.quiet {
        report(&sum, started.elapsed().as_secs_f64(), a.json);
    }
    if !sum.warnings.is_empty() {
        eprintln!(
            "hyperseal: snapshot {} is incomplete: {} names were skipped (above)",
            &sum.snapshot[..8],
            sum.warnings.len()
        );
        std::process::exit(exit::INCOMPLETE as i32);
    }
    Ok(())
}

/// The tags of repeated `--tag a,b` values, each once, in the order given (as restic records them).
fn tags(given: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in given.iter().flat_map(|g| g.split(',')).map(str::trim).filter(|t| !t.is_empty()) {
        if !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    }
    out
}

/// Seconds since the epoch of `YYYY-MM-DD HH:MM:SS` (or `YYYY-MM-DD`), UTC.
fn parse_time(s: &str) -> std::result::Result<i64, String> {
    let bad = || format!("{s:?} is not YYYY-MM-DD HH:MM:SS (UTC)");
    let (date, clock) = s.trim().split_once(' ').unwrap_or((s.trim(), "00:00:00"));
    let num = |v: Option<&str>| v.and_then(|v| v.parse::<i64>().ok()).ok_or_else(bad);
    let (mut d, mut c) = (date.splitn(3, '-'), clock.splitn(3, ':'));
    let (y, m, day) = (num(d.next())?, num(d.next())?, num(d.next())?);
    let (h, mi, sec) = (num(c.next())?, num(c.next())?, num(c.next())?);
    if !(1..=12).contains(&m)
        || !(1..=31).contains(&day)
        || h > 23
        || mi > 59
        || sec > 59
        || !(0..=9999).contains(&y)
    {
        return Err(bad());
    }
    // Howard Hinnant's days_from_civil; the date must round-trip (no February 30).
    let yy = if m <= 2 { y - 1 } else { y };
    let (era, yoe) = (yy.div_euclid(400), yy.rem_euclid(400));
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    if hyperseal::time::civil_from_days(days) != (y, m, day) {
        return Err(bad());
    }
    Ok(days * 86_400 + h * 3600 + mi * 60 + sec)
}

/// Sums the sizes under `paths` on a thread of its own (links not followed, excludes not
/// applied: an estimate), then gives the bar a length, so that it shows a total and an ETA.
/// The backup does not wait for it.
fn count_ahead(bar: indicatif::ProgressBar, paths: Vec<PathBuf>) {
    std::thread::spawn(move || {
        let (mut total, mut stack) = (0u64, paths);
        while let Some(p) = stack.pop() {
            let Ok(m) = std::fs::symlink_metadata(&p) else { continue };
            if m.is_dir() {
                stack.extend(std::fs::read_dir(&p).into_iter().flatten().flatten().map(|e| e.path()));
            } else if m.is_file() {
                total += m.len();
            }
        }
        bar.set_length(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg} [{bar:30}] {bytes}/{total_bytes}, {bytes_per_sec}, eta {eta}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
    });
}

/// restic's closing lines, or its summary message in JSON.
fn report(s: &BackupSummary, secs: f64, json: bool) {
    if json {
        let v = serde_json::json!({
            "message_type": "summary", "snapshot_id": s.snapshot, "files_new_or_changed": s.files_with_new_data,
            "files_unmodified": s.files - s.files_with_new_data, "files_cached": s.files_cached, "dirs": s.dirs, "total_files_processed": s.files,
            "total_bytes_processed": s.bytes_read, "data_added": s.bytes_added, "data_stored": s.bytes_stored,
            "chunks_new": s.chunks_new, "chunks_reused": s.chunks_reused, "packs": s.packs, "total_duration": secs,
        });
        println!("{v}");
        return;
    }
    println!(
        "Files:       {} new or changed, {} unmodified ({} not read: unchanged since the last run)",
        s.files_with_new_data,
        s.files - s.files_with_new_data,
        s.files_cached
    );
    println!("Dirs:        {}", s.dirs);
    println!(
        "Added to the repository: {} ({} stored, {} chunks new, {} reused)",
        size(s.bytes_added),
        size(s.bytes_stored),
        s.chunks_new,
        s.chunks_reused
    );
    println!("processed {} files, {} in {secs:.1}s", s.files, size(s.bytes_read));
    println!("snapshot {} saved", s.snapshot);
}

/// Where the change-detection cache lives: per repository, in the user's cache folder.
fn cache_path(a: &CreateArgs, key: &WriterKey) -> Option<PathBuf> {
    if a.no_cache {
        return None;
    }
    if a.cache.is_some() {
        return a.cache.clone();
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("hyperseal/backup").join(format!("{}.json", hex::encode(key.repo_id))))
}

pub(super) fn size(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.2} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.2} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.2} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}
