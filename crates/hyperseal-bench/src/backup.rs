//! `backup`: `hyperseal backup` against the backup tools people use, on one generated corpus on
//! the same disk in one run (`backup_corpus.rs`): the first backup, a second of the unchanged
//! tree, three mutation rounds, the repository's size after them, and a full restore, each with
//! its peak RSS. Peers: restic and borg (Debian's), rustic and bupstash (crates.io) and a whole-archive
//! `tar | zstd | age` pipeline, which is what pg_back-style tools do (every run stores
//! everything again). A peer that is not installed is a note, never a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context as _, Result};

use super::backup_corpus::{make, mutate, size_of};
use super::child::{which, ChildRun, Job};
use super::report::{Cell, Chart, Section, TableReport};
use super::stats::{fmt_mbps, fmt_size, fmt_time};
use super::{Ctx, Table};

pub struct Backup;

/// The corpus's nominal size (a home folder).
const CORPUS: u64 = 2 << 30;
const ROUNDS: usize = 3;
const PASSWORD: &str = "bench-password";

/// One tool: how to set up its repository, back up (run `n`), and restore the last run.
struct Tool {
    name: String,
    setup: Vec<Job>,
    backup: Box<dyn Fn(usize) -> Job>,
    restore: Job,
    repo: PathBuf,
    /// Where the full restore writes (checked against the corpus's bytes).
    target: PathBuf,
    /// Each run's figures, in order: first, unchanged, the rounds.
    runs: Vec<ChildRun>,
    failed: Option<String>,
}

fn sh(script: &str) -> Job {
    Job::new("sh", &["-c", script])
}

fn tool(
    name: &str,
    setup: Vec<Job>,
    backup: Box<dyn Fn(usize) -> Job>,
    restore: (Job, PathBuf),
    repo: PathBuf,
) -> Tool {
    let (restore, target) = restore;
    Tool { name: name.into(), setup, backup, restore, repo, target, runs: Vec::new(), failed: None }
}

/// Flushes every dirty page to the disk before a measured run, so no run pays for the
/// write-back of the corpus or of the run before it (tools differ in what they sync themselves).
fn settle() {
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe { libc::sync() };
}

fn run(program: &Path, args: &[&str]) -> Result<String> {
    let o = Command::new(program).args(args).output().with_context(|| program.display().to_string())?;
    if !o.status.success() {
        bail!("{} {}: {}", program.display(), args.join(" "), String::from_utf8_lossy(&o.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

fn hyperseal(ctx: &Ctx, src: &str) -> Result<Tool> {
    let exe = ctx.exe()?.to_path_buf();
    let (key, repo, wkey) = (ctx.path("hs-reader.key"), ctx.path("hs-repo"), ctx.path("hs-writer.key"));
    let e = exe.to_str().context("exe path")?.to_string();
    run(&exe, &["keygen", "-o", key.to_str().unwrap()])?;
    let public = run(&exe, &["pubkey", "-i", key.to_str().unwrap()])?;
    // A second reader, whom the rekey section removes.
    let leaving = ctx.path("hs-leaving.key");
    run(&exe, &["keygen", "-o", leaving.to_str().unwrap()])?;
    let leaving = run(&exe, &["pubkey", "-i", leaving.to_str().unwrap()])?;
    let (r, w, k) = (repo.display().to_string(), wkey.display().to_string(), key.display().to_string());
    let cache = ctx.path("hs-cache.json").display().to_string();
    let init = ["backup", "init", "--repo", &r, "-r", &public, "-r", &leaving, "--writer-key", &w];
    let setup = vec![Job::new(&exe, &init)];
    let src = src.to_string();
    let (r2, e2) = (r.clone(), e.clone());
    let backup = Box::new(move |_: usize| {
        Job::new(&e2, &["backup", "create", "--repo", &r2, "--writer-key", &w, "--cache", &cache, "-q", &src])
    });
    let target = ctx.path("hs-restored");
    let t = target.display().to_string();
    let restore = Job::new(&e, &["backup", "restore", "--repo", &r, "-i", &k, "latest", "--target", &t]);
    Ok(tool("hyperseal backup", setup, backup, (restore, target), repo))
}

/// restic and rustic take nearly the same command line (rustic's password variable is its own,
/// and its restore target is an argument).
fn restic_like(ctx: &Ctx, name: &str, program: &Path, src: &str) -> Tool {
    let repo = ctx.path(&format!("{name}-repo"));
    let env = format!("{}_PASSWORD={PASSWORD}", name.to_uppercase());
    let (p, r) = (program.display().to_string(), repo.display().to_string());
    let setup = vec![Job::new("env", &[&env, &p, "-r", &r, "init"])];
    let (p2, r2, env2, src) = (p.clone(), r.clone(), env.clone(), src.to_string());
    let backup = Box::new(move |_: usize| Job::new("env", &[&env2, &p2, "-r", &r2, "backup", &src]));
    let target = ctx.path(&format!("{name}-restored"));
    let t = target.display().to_string();
    let restore = match name {
        "rustic" => Job::new("env", &[&env, &p, "-r", &r, "restore", "latest", &t]),
        _ => Job::new("env", &[&env, &p, "-r", &r, "restore", "latest", "--target", &t]),
    };
    tool(name, setup, backup, (restore, target), repo)
}

fn borg(ctx: &Ctx, program: &Path, src: &str) -> Tool {
    let repo = ctx.path("borg-repo");
    let env = format!("BORG_PASSPHRASE={PASSWORD}");
    let (p, r) = (program.display().to_string(), repo.display().to_string());
    let setup = vec![Job::new("env", &[&env, &p, "init", "-e", "repokey-blake2", &r])];
    let (p2, r2, env2, src) = (p.clone(), r.clone(), env.clone(), src.to_string());
    let backup =
        Box::new(move |n: usize| Job::new("env", &[&env2, &p2, "create", &format!("{r2}::run{n}"), &src]));
    let target = ctx.path("borg-restored");
    let last = format!("{r}::run{}", ROUNDS + 1);
    let restore =
        sh(&format!("mkdir -p '{t}' && cd '{t}' && {env} '{p}' extract '{last}'", t = target.display()));
    tool("borg", setup, backup, (restore, target), repo)
}

/// bupstash: each run a `put` tagged with its number, the last one restored `--into` a folder.
fn bupstash(ctx: &Ctx, program: &Path, src: &str) -> Result<Tool> {
    let key = ctx.path("bupstash.key");
    run(program, &["new-key", "-o", key.to_str().unwrap()])?;
    let repo = ctx.path("bupstash-repo");
    let (p, k) = (program.display().to_string(), key.display().to_string());
    let env = format!("BUPSTASH_REPOSITORY={}", repo.display());
    let setup = vec![Job::new("env", &[&env, &p, "init"])];
    // Its change cache (the send log) in the scratch folder, as hyperseal's is.
    let log = format!("BUPSTASH_SEND_LOG={}", ctx.path("bupstash.sendlog").display());
    let (p2, k2, env2, src) = (p.clone(), k.clone(), env.clone(), src.to_string());
    let backup = Box::new(move |n: usize| {
        Job::new("env", &[&env2, &log, &p2, "put", "-k", &k2, &format!("run={n}"), &src])
    });
    let target = ctx.path("bupstash-restored");
    let restore = sh(&format!(
        "mkdir -p '{t}' && {env} '{p}' restore -k '{k}' --into '{t}' run={}",
        ROUNDS + 1,
        t = target.display()
    ));
    Ok(tool("bupstash", setup, backup, (restore, target), repo))
}

/// The whole-archive pipeline: every run a new `tar | zstd | age` file of the whole tree.
fn pipeline(ctx: &Ctx, age: &Path, keygen: &Path, parent: &Path) -> Result<Tool> {
    let key = ctx.path("pipe.key");
    run(keygen, &["-o", key.to_str().unwrap()])?;
    let public = run(keygen, &["-y", key.to_str().unwrap()])?;
    let repo = ctx.path("pipe-repo");
    std::fs::create_dir_all(&repo)?;
    let (a, r, p) = (age.display().to_string(), repo.display().to_string(), parent.display().to_string());
    let (a2, r2, p2) = (a.clone(), r.clone(), p.clone());
    let backup = Box::new(move |n: usize| {
        sh(&format!(
            "tar -C '{p2}' -cf - corpus | zstd -q -T0 | '{a2}' -r {public} -o '{r2}/run{n}.tar.zst.age'"
        ))
    });
    let target = ctx.path("pipe-restored");
    let restore = sh(&format!(
        "mkdir -p '{t}' && '{a}' -d -i '{}' '{r}/run{}.tar.zst.age' | zstd -dq | tar -C '{t}' -xf -",
        key.display(),
        ROUNDS + 1,
        t = target.display()
    ));
    // Named without `|`, which would split a Markdown table's cell.
    Ok(tool("tar, zstd, age (whole archive)", Vec::new(), backup, (restore, target), repo))
}

fn peer(name: &str, ctx: &Ctx) -> Option<PathBuf> {
    which(name).or_else(|| Some(ctx.repo.join(".tools/bin").join(name)).filter(|p| p.is_file()))
}

/// Every tool that is installed; notes for the others.
fn tools(ctx: &Ctx, src: &Path, out: &mut TableReport) -> Result<Vec<Tool>> {
    let s = src.display().to_string();
    let mut all = vec![hyperseal(ctx, &s)?];
    match peer("restic", ctx) {
        Some(p) => all.push(restic_like(ctx, "restic", &p, &s)),
        None => out.note("restic is not installed (Debian: apt-get install restic): its row is left out."),
    }
    match peer("borg", ctx) {
        Some(p) => all.push(borg(ctx, &p, &s)),
        None => out.note("borg is not installed (Debian: apt-get install borgbackup): its row is left out."),
    }
    match peer("rustic", ctx) {
        Some(p) => all.push(restic_like(ctx, "rustic", &p, &s)),
        None => {
            out.note("rustic is not installed (crates.io: cargo install rustic-rs): its row is left out.")
        }
    }
    match peer("bupstash", ctx) {
        Some(p) => all.push(bupstash(ctx, &p, &s)?),
        None => out.note("bupstash is not installed (crates.io: cargo install bupstash, with Debian's libsodium-dev): its row is left out."),
    }
    match (peer("age", ctx), peer("age-keygen", ctx), which("zstd")) {
        (Some(a), Some(k), Some(_)) => all.push(pipeline(ctx, &a, &k, src.parent().unwrap())?),
        _ => out.note("age, age-keygen or zstd is missing: the tar | zstd | age row is left out."),
    }
    Ok(all)
}

impl Table for Backup {
    fn id(&self) -> &'static str {
        "backup"
    }
    fn title(&self) -> &'static str {
        "backup: hyperseal backup vs restic, borg, rustic, bupstash and a tar, zstd, age pipeline (same corpus, same disk)"
    }
    fn mirrors(&self) -> &'static str {
        "deduplicated backups: first run, unchanged re-run, mutation rounds, repository size, full restore, peak RSS"
    }

    fn run(&self, ctx: &Ctx, out: &mut TableReport) -> Result<()> {
        let total = ctx.size(CORPUS);
        let src = ctx.path("corpus");
        ctx.progress(self.id(), format!("writing a {} corpus", fmt_size(total)));
        let mut files = make(&src, total, 7)?;
        let corpus_bytes = size_of(&src);
        let mut all = tools(ctx, &src, out)?;
        for t in &mut all {
            for j in &t.setup {
                if let Err(e) = j.run_once(ctx.tmp.path()) {
                    t.failed = Some(format!("set-up: {e}"));
                }
            }
        }
        // Every tool backs up each state of the tree in turn: the first, the unchanged, and
        // each round's; so the load of the machine falls on all alike.
        for n in 0..ROUNDS + 2 {
            if n >= 2 {
                mutate(&src, &mut files, n as u64 - 1)?;
            }
            for t in all.iter_mut().filter(|t| t.failed.is_none()) {
                ctx.progress("backup", format!("{}: run {}", t.name, n + 1));
                settle();
                match (t.backup)(n).run_once(ctx.tmp.path()) {
                    Ok(r) => t.runs.push(r),
                    Err(e) => t.failed = Some(format!("run {}: {e}", n + 1)),
                }
            }
        }
        let mut sec = Section::new(
            format!(
                "{} corpus ({} files), {ROUNDS} rounds of 2% of the files",
                fmt_size(corpus_bytes),
                files.len()
            ),
            &[
                "tool",
                "first backup",
                "unchanged",
                "round 1",
                "round 2",
                "round 3",
                "repository",
                "full restore",
                "peak RSS backup",
                "peak RSS restore",
                "CPU first backup / restore",
            ],
        );
        for t in &mut all {
            if let Some(why) = &t.failed {
                out.note(format!("{}: {why}; its row is left out.", t.name));
                continue;
            }
            ctx.progress("backup", format!("{}: full restore", t.name));
            settle();
            let restored = t.restore.run_once(ctx.tmp.path());
            // A restore is checked for its bytes (every tool lays the tree out its own way).
            let back = size_of(&t.target);
            let final_bytes = size_of(&src);
            if restored.is_ok() && back != final_bytes {
                out.note(format!("{}: the full restore holds {back} bytes, the tree {final_bytes}", t.name));
            }
            sec.rows.push(row(t, corpus_bytes, restored, out));
            // Measured: the restored tree goes, and a peer's repository too (hyperseal's stays
            // for the rekey), so the run needs the disk of one restore, not of six (the S3
            // section's MinIO writes the corpus once more).
            let _ = std::fs::remove_dir_all(&t.target);
            if t.name != "hyperseal backup" {
                let _ = std::fs::remove_dir_all(&t.repo);
            }
        }
        out.sections.push(sec);
        out.charts.push(chart(&all));
        if let Some(t) = all.iter().find(|t| t.name == "hyperseal backup" && t.failed.is_none()) {
            rekey_section(ctx, t, out)?;
        }
        if let Err(e) = super::backup_s3::one_file(ctx, &src, out) {
            out.note(format!("the one-file restore from S3 failed: {e}"));
        }
        out.note(format!(
            "One run of each figure ({} cores, scratch on {}): the corpus is 25% source-like text, 60% \
             incompressible files of 1 KiB to {} (log-uniform), 15% copies (half shifted by a few bytes); each \
             round inserts in the middle, appends, deletes or adds 2% of the files. Backup figures are \
             wall time (and throughput over the corpus), each run after a sync(2) so none pays for the \
             write-back of the one before; CPU is user + system seconds of the tool's process tree; hyperseal uses its change cache as restic and borg use \
             their parent snapshot. The one-file restore from S3 restores the corpus's largest media file with a \
             fresh reader.",
            ctx.threads,
            ctx.tmp_note,
            fmt_size((total / 8).clamp(1024, 256 << 20))
        ));
        Ok(())
    }
}

fn row(t: &Tool, corpus: u64, restored: Result<ChildRun>, out: &mut TableReport) -> Vec<Cell> {
    let time = |r: &ChildRun| {
        Cell::num(r.wall, "s", format!("{} ({})", fmt_time(r.wall), fmt_mbps(corpus as f64 / r.wall)))
    };
    let mut cells = vec![Cell::text(t.name.clone())];
    cells.extend(t.runs.iter().map(time));
    let size = size_of(&t.repo);
    cells.push(Cell::num(size as f64, "B", fmt_size(size)));
    let rss = |k: u64| Cell::num(k as f64 * 1024.0, "B", fmt_size(k * 1024));
    let backup_rss = t.runs.iter().map(|r| r.max_rss_kib).max().unwrap_or(0);
    let first_cpu = t.runs.first().map_or(0.0, |r| r.cpu);
    match restored {
        Ok(r) => {
            cells.push(time(&r));
            cells.push(rss(backup_rss));
            cells.push(rss(r.max_rss_kib));
            cells.push(Cell::num(first_cpu, "s", format!("{} / {}", fmt_time(first_cpu), fmt_time(r.cpu))));
        }
        Err(e) => {
            out.note(format!("{}: restore failed: {e}", t.name));
            cells.extend([Cell::none(), rss(backup_rss), Cell::none()]);
            cells.push(Cell::num(first_cpu, "s", format!("{} / –", fmt_time(first_cpu))));
        }
    }
    cells
}

/// Each tool's wall time per run, as bars: the first, the unchanged and each round's.
fn chart(all: &[Tool]) -> Chart {
    let mut c = Chart::new("Backup runs: wall time", "run", "s", false);
    c.categories = ["first", "unchanged", "round 1", "round 2", "round 3"].map(String::from).to_vec();
    for t in all.iter().filter(|t| t.failed.is_none()) {
        for (i, r) in t.runs.iter().enumerate() {
            c.point(&t.name, i as f64 + 1.0, r.wall);
        }
    }
    c
}

/// Removing a reader from hyperseal's repositories after the rounds: `backup rekey` to the
/// remaining reader alone, on the corpus's repository and on one of 10,000 objects (below). Its
/// closing line says how many headers went in place and how many objects were rewritten whole,
/// with their bytes (the payload bytes a rekey writes); no peer can remove a reader (restic's
/// keys share one master key, borg's and rustic's too, bupstash has no re-key).
fn rekey_section(ctx: &Ctx, t: &Tool, out: &mut TableReport) -> Result<()> {
    let exe = ctx.exe()?;
    let key = ctx.path("hs-reader.key");
    let public = run(exe, &["pubkey", "-i", key.to_str().unwrap()])?;
    let leaving = run(exe, &["pubkey", "-i", ctx.path("hs-leaving.key").to_str().unwrap()])?;
    let mut sec = Section::new(
        "Removing a reader (hyperseal backup rekey)",
        &["repository", "objects", "headers in place", "rewritten", "bytes rewritten", "time", "peak RSS"],
    );
    let many = ctx.path("hs-rekey-repo");
    let objects = ctx.size(OBJECTS) as usize;
    many_objects(ctx, &many, objects, &[public.clone(), leaving])?;
    let repos = [
        (format!("the corpus's, {}", fmt_size(size_of(&t.repo))), &t.repo),
        (format!("{objects} packs of 1 KiB, {}", fmt_size(size_of(&many))), &many),
    ];
    for (what, repo) in repos {
        let (r, k) = (repo.display().to_string(), key.display().to_string());
        ctx.progress("backup", format!("hyperseal: rekey (a reader removed), {what}"));
        let job = Job::new(exe, &["backup", "rekey", "--repo", &r, "-i", &k, "-r", &public]);
        let done = job.run_once(ctx.tmp.path())?;
        let said = std::fs::read_to_string(ctx.tmp.path().join("child-stderr.log")).unwrap_or_default();
        let line = said.lines().find(|l| l.contains("objects re-keyed")).unwrap_or("").to_string();
        let number_before = |word: &str| -> Option<u64> {
            let at = line.find(word)?;
            line[..at].split_whitespace().last()?.trim_start_matches('(').parse().ok()
        };
        let num = |v: Option<u64>, unit: &'static str| match v {
            Some(v) => Cell::num(v as f64, unit, if unit == "B" { fmt_size(v) } else { v.to_string() }),
            None => Cell::none(),
        };
        sec.rows.push(vec![
            Cell::text(what),
            num(number_before("objects re-keyed"), ""),
            num(number_before("headers in place"), ""),
            num(number_before("rewritten ("), ""),
            num(number_before("bytes through"), "B"),
            Cell::num(done.wall, "s", fmt_time(done.wall)),
            Cell::num(done.max_rss_kib as f64 * 1024.0, "B", fmt_size(done.max_rss_kib * 1024)),
        ]);
        if line.is_empty() {
            out.note(format!("hyperseal rekey printed no summary: {}", said.trim()));
        }
    }
    out.sections.push(sec);
    Ok(())
}

/// Packs in the many-object repository (nominal; `--size-scale` scales it): one 1 KiB file each.
const OBJECTS: u64 = 10_000;

/// A repository of `objects` packs for `readers`: as many incompressible 1 KiB files, each
/// stored in a pack of its own (the library's pack size set to one byte), plus the config,
/// key, index and snapshot objects.
fn many_objects(ctx: &Ctx, repo: &Path, objects: usize, readers: &[String]) -> Result<()> {
    ctx.progress("backup", format!("hyperseal: a repository of {objects} packs"));
    let tree = ctx.path("rekey-tree");
    let mut g = super::backup_corpus::Gen::new(99);
    for i in 0..objects {
        let dir = tree.join(format!("d{}", i % 100));
        std::fs::create_dir_all(&dir)?;
        let bytes: Vec<u8> = (0..128).flat_map(|_| g.next().to_le_bytes()).collect();
        std::fs::write(dir.join(format!("f{i}")), bytes)?;
    }
    let store = hyperseal_backup::LocalStore::new(repo);
    let w = hyperseal_backup::init(&store, readers)?;
    let opts = hyperseal_backup::BackupOptions {
        host: "bench".into(),
        time: 1,
        pack_size: 1,
        ..hyperseal_backup::BackupOptions::default()
    };
    hyperseal_backup::backup(&store, &w, hyperseal_backup::Source::Paths(vec![tree.clone()]), &opts)?;
    std::fs::remove_dir_all(&tree)?;
    Ok(())
}
