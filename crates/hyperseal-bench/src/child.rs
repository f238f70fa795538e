//! Whole-process measurements: run a command, reap it with `wait4` to get its own CPU time and
//! peak RSS (not those of earlier children, as `RUSAGE_CHILDREN` would mix in), through a small
//! helper process so the peak RSS is the tool's own (see [`helper_main`]).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context as _, Result};

use super::stats::Stats;

/// One run of a child process.
#[derive(Clone, Copy, Debug)]
pub struct ChildRun {
    pub wall: f64,
    /// User + system seconds of the child.
    pub cpu: f64,
    pub max_rss_kib: u64,
}

/// Medians over several runs.
pub struct ChildStats {
    pub wall: Stats,
    pub cpu: Stats,
    pub max_rss_kib: u64,
}

/// A command line to measure: program, arguments, optional stdout file, and outputs to delete
/// before each run (tools refuse to overwrite, and deleting is not part of the work).
#[derive(Clone)]
pub struct Job {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub stdout_to: Option<PathBuf>,
    pub remove_first: Vec<PathBuf>,
}

impl Job {
    pub fn new(program: impl Into<PathBuf>, args: &[&str]) -> Job {
        Job {
            program: program.into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            stdout_to: None,
            remove_first: vec![],
        }
    }
    /// Deletes `p` before each run.
    pub fn output(mut self, p: &Path) -> Job {
        self.remove_first.push(p.to_path_buf());
        self
    }

    /// Runs once; fails (with the tail of stderr) on a non-zero exit.
    pub fn run_once(&self, scratch: &Path) -> Result<ChildRun> {
        for p in &self.remove_first {
            let _ = fs::remove_file(p);
        }
        let log = scratch.join("child-stderr.log");
        let stats = scratch.join("child-stats.txt");
        let _ = fs::remove_file(&stats);
        // Through the helper (see `helper_main`), so ru_maxrss is the tool's own peak.
        let mut cmd = Command::new(std::env::current_exe()?);
        cmd.arg("--child-stats").arg(&stats).arg("--").arg(&self.program).args(&self.args);
        cmd.stdin(Stdio::null()).stderr(fs::File::create(&log)?);
        match &self.stdout_to {
            Some(p) => cmd.stdout(fs::File::create(p)?),
            None => cmd.stdout(Stdio::null()),
        };
        let status = cmd.status().context("cannot run the measuring helper")?;
        let text = fs::read_to_string(&stats).unwrap_or_default();
        let f: Vec<f64> = text.split_whitespace().filter_map(|x| x.parse().ok()).collect();
        if !status.success() || f.len() != 4 || f[3] != 0.0 {
            let err = fs::read_to_string(&log).unwrap_or_default();
            let tail: Vec<&str> = err.lines().rev().take(3).collect();
            bail!(
                "{} {} failed: {}",
                self.program.display(),
                self.args.join(" "),
                tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
            );
        }
        Ok(ChildRun { wall: f[0], cpu: f[1], max_rss_kib: f[2] as u64 })
    }

    /// One warm-up run (page cache, binary loading), then `reps` measured runs.
    pub fn measure(&self, scratch: &Path, reps: usize) -> Result<ChildStats> {
        self.run_once(scratch)?;
        let runs: Vec<ChildRun> = (0..reps.max(1)).map(|_| self.run_once(scratch)).collect::<Result<_>>()?;
        Ok(ChildStats::of(&runs))
    }
}

impl ChildStats {
    fn of(runs: &[ChildRun]) -> ChildStats {
        ChildStats {
            wall: Stats::of(&runs.iter().map(|r| r.wall).collect::<Vec<_>>()),
            cpu: Stats::of(&runs.iter().map(|r| r.cpu).collect::<Vec<_>>()),
            max_rss_kib: runs.iter().map(|r| r.max_rss_kib).max().unwrap_or(0),
        }
    }
}

/// Like [`Job::measure`] for several jobs run in turn (A B, A B, …) after one warm-up each, so
/// load from elsewhere on a shared machine falls on all of them alike and their ratio holds.
pub fn measure_alternating(jobs: &[&Job], scratch: &Path, reps: usize) -> Result<Vec<ChildStats>> {
    for j in jobs {
        j.run_once(scratch)?;
    }
    let mut runs = vec![Vec::with_capacity(reps); jobs.len()];
    for _ in 0..reps.max(1) {
        for (i, j) in jobs.iter().enumerate() {
            runs[i].push(j.run_once(scratch)?);
        }
    }
    Ok(runs.iter().map(|r| ChildStats::of(r)).collect())
}

/// The measuring helper (`hyperseal-bench --child-stats FILE -- PROGRAM ARGS…`): runs PROGRAM with
/// the inherited stdio and writes "wall cpu max_rss_kib status" to FILE.
///
/// Why a helper: Linux folds the RSS high-water mark of the address space a process had before
/// `exec` into its ru_maxrss, and a child spawned straight from the benchmark starts from the
/// benchmark's own (large, after the in-memory tables) address space. Spawned from this small
/// fresh process instead, the floor is the helper's few MiB.
pub fn helper_main(stats: &Path, argv: &[String]) -> Result<()> {
    let (program, args) = argv.split_first().context("--child-stats needs -- PROGRAM ARGS")?;
    let t = Instant::now();
    let child = Command::new(program).args(args).spawn().with_context(|| format!("cannot run {program}"))?;
    let (status, ru) = wait4(child.id() as libc::pid_t)?;
    let wall = t.elapsed().as_secs_f64();
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { 128 + libc::WTERMSIG(status) };
    fs::write(stats, format!("{wall} {} {} {code}\n", secs(ru.ru_utime) + secs(ru.ru_stime), ru.ru_maxrss))?;
    if code != 0 {
        bail!("{program} exited with status {code}");
    }
    Ok(())
}

/// Reaps `pid`, returning its wait status and its own resource usage.
fn wait4(pid: libc::pid_t) -> Result<(libc::c_int, libc::rusage)> {
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is a plain C struct for which all-zero bytes are a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our own child, not yet reaped (std's `Child` is never waited on), and
        // both out-pointers refer to live, writable locals.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            return Ok((status, ru));
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e).context("wait4");
        }
    }
}

/// Where `name` is on PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

/// Runs a peer's benchmark script (`what` names it in a note: "node web/bench.mjs") that writes
/// its figures as JSON to `json`, and returns them; or, when the script cannot start, fails or
/// writes nothing readable, the one line that says why (the table becomes that note).
pub fn script_json(
    cmd: &mut Command,
    what: &str,
    json: &Path,
) -> std::result::Result<serde_json::Value, String> {
    match cmd.output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            let last = String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or("").to_owned();
            return Err(format!("{what} failed ({}): {last}", o.status));
        }
        Err(e) => return Err(format!("cannot run {what}: {e}")),
    }
    let bytes = std::fs::read(json).map_err(|e| format!("{what} wrote no JSON ({e})"))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{what} wrote no readable JSON ({e})"))
}

/// The note that skips `table` when one of `needed` is missing: each a path under `repo`, what
/// it is, and how to make it ("make web").
pub fn missing_note(repo: &Path, table: &str, needed: &[(&str, &str, &str)]) -> Option<String> {
    let (_, what, how) = needed.iter().find(|(path, _, _)| !repo.join(path).exists())?;
    Some(format!("{what} missing ({how}); {table} table skipped"))
}
