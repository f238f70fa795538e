//! `hyperseal-bench`: re-measures on this machine the tables of the five published reports
//! hyperseal was built from — the Node hybrid library (hybrid public-key encryption in Node),
//! @ldesign/crypto, nkCryptoTool, the Go SM4 report and FISE — beside the peer tools that are
//! installed, and writes them as Markdown, JSON and a self-contained HTML page.
//!
//! ```text
//! cargo build --release -p hyperseal-cli -p hyperseal-bench
//! ./target/release/hyperseal-bench --quick --only files,hazmat --out bench-report
//! ```
//!
//! Whole-process rows run the `hyperseal` binary next to this one (`target/release/hyperseal`),
//! or the one `--hyperseal PATH` names. The `node` table runs `bindings/node/bench/bench.js` and
//! the `browser` table `bindings/wasm/bench/browser.mjs` of the repository this is run in
//! (`--repo DIR` to name another). Nothing is found through the path the
//! benchmark was built at.
//!
//! One file per table, each behind the [`Table`] trait; adding a table is one file plus one line
//! in [`tables`]. Tables that are planned but not written yet are listed in [`PLANNED`], so
//! `--only sm4` says "not yet available" instead of "unknown".

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use clap::Parser;
use hyperseal::recipient::{self, Kind};

mod agent;
mod agent_keys;
mod backup;
mod backup_corpus;
mod backup_s3;
mod browser;
mod child;
mod engine;
mod files;
mod git;
mod git_floor;
mod hazmat;
mod html;
mod machine;
mod modes;
mod node;
mod onefile;
mod peers;
mod primitives;
mod pubkey;
mod python;
mod rekey;
mod rekey_s3;
mod report;
mod rust_age;
mod sm4;
mod small;
mod sops;
mod stats;
mod tokens;
mod webapp;

use report::{Report, TableReport};

#[derive(Parser)]
#[command(name = "hyperseal-bench", version, about = "Benchmark report for hyperseal (make bench)")]
struct BenchArgs {
    /// Quick profile (the default): sizes up to 256 MiB (1 GiB for `modes`), 3–5 runs per figure.
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// Full profile: sizes up to 1 GiB (6.7 GB for `modes`), more runs per figure. Takes long.
    #[arg(long)]
    full: bool,
    /// Tables to run, comma-separated (default: all): files, pubkey, modes, peers, engine, primitives, sm4, hazmat, tokens, node, browser, webapp, python, rekey, agent, sops, git, rust-age, backup.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Directory for report.md, report.json and report.html.
    #[arg(long, default_value = "bench-report")]
    out: PathBuf,
    /// Print JSON on stdout instead of Markdown.
    #[arg(long)]
    json: bool,
    /// The `hyperseal` binary to measure (default: the one next to this program).
    #[arg(long, value_name = "PATH")]
    hyperseal: Option<PathBuf>,
    /// The repository checkout (for bindings/node); default: the current directory.
    #[arg(long, value_name = "DIR", default_value = ".")]
    repo: PathBuf,
    /// Scratch directory to work beneath (default: /dev/shm, else the system temp dir); the
    /// `backup` table's corpus and repositories (several GiB) belong on a disk.
    #[arg(long, value_name = "DIR")]
    scratch: Option<PathBuf>,
    /// Multiplies every data size by F (for tests: 0.001 runs in seconds; figures then mean nothing).
    #[arg(long, default_value_t = 1.0, value_name = "F")]
    size_scale: f64,
    /// Internal: run the program after `--` and write its wall/CPU/peak RSS to FILE.
    #[arg(long, hide = true)]
    child_stats: Option<PathBuf>,
    #[arg(last = true, hide = true)]
    child: Vec<String>,
}

/// A table of the report. `run` fills `out` as it goes, so the rows measured before an error
/// still appear in the report.
pub trait Table {
    /// The name `--only` selects.
    fn id(&self) -> &'static str;
    /// The heading.
    fn title(&self) -> &'static str;
    /// Which published report it mirrors (or what it is for).
    fn mirrors(&self) -> &'static str;
    /// Measures and fills the report.
    fn run(&self, ctx: &Ctx, out: &mut TableReport) -> Result<()>;
}

/// Every available table, in report order (`files` first).
fn tables() -> Vec<Box<dyn Table>> {
    vec![
        Box::new(files::Files),
        Box::new(small::Small),
        Box::new(pubkey::Pubkey),
        Box::new(modes::Modes),
        Box::new(peers::Peers),
        Box::new(engine::Engine),
        Box::new(primitives::Primitives),
        Box::new(sm4::Sm4Table),
        Box::new(hazmat::Hazmat),
        Box::new(tokens::Tokens),
        Box::new(node::Node),
        Box::new(browser::Browser),
        Box::new(webapp::WebApp),
        Box::new(python::Python),
        Box::new(rekey::Rekey),
        Box::new(agent::Agent),
        Box::new(sops::Sops),
        Box::new(git::Git),
        Box::new(rust_age::RustAge),
        Box::new(backup::Backup),
    ]
}

/// Tables that later work adds, one file each: (id, what it will mirror).
const PLANNED: &[(&str, &str)] = &[];

/// What every table may use: the profile, the scratch directory, the binary under test.
pub struct Ctx {
    pub full: bool,
    pub scale: f64,
    pub threads: usize,
    /// The `hyperseal` binary, or why there is none (see [`Ctx::exe`]).
    exe: std::result::Result<PathBuf, String>,
    /// The repository checkout the bench runs in (for `bindings/node`).
    pub repo: PathBuf,
    pub tmp: tempfile::TempDir,
    /// Human description of the scratch directory (tmpfs or disk).
    pub tmp_note: String,
}

impl Ctx {
    /// The `hyperseal` binary under test; tables that run it fail with the reason when there is none.
    pub fn exe(&self) -> Result<&Path> {
        self.exe.as_deref().map_err(|why| {
            hint(why, "build it first (`cargo build --release -p hyperseal-cli`; `make bench` does), or pass --hyperseal PATH")
        })
    }

    /// A nominal size after `--size-scale` (never below one byte).
    pub fn size(&self, nominal: u64) -> u64 {
        ((nominal as f64 * self.scale).round() as u64).max(1)
    }

    /// Runs per figure: fewer for large inputs, more in the full profile.
    pub fn reps(&self, bytes: u64) -> usize {
        if self.scale < 0.01 {
            return 2; // a test run: exercise the code, not the statistics
        }
        match (self.full, bytes >= 64 << 20) {
            (false, true) => 3,
            (false, false) => 5,
            (true, true) => 5,
            (true, false) => 9,
        }
    }

    /// Runs per figure for fast in-memory work, where noise needs more samples.
    pub fn reps_small(&self, bytes: u64) -> usize {
        if self.scale < 0.01 {
            return 3;
        }
        if bytes < 1 << 20 {
            if self.full {
                51
            } else {
                15
            }
        } else {
            self.reps(bytes)
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// A progress line on stderr.
    pub fn progress(&self, table: &str, msg: impl std::fmt::Display) {
        eprintln!("bench: [{table}] {msg}");
    }

    /// Writes a scratch file of `size` bytes of random-looking data (one random MiB repeated:
    /// none of the tools compresses, so repetition does not flatter anyone).
    pub fn data_file(&self, name: &str, size: u64) -> Result<ScratchFile> {
        self.data_file_at(self.path(name), size)
    }

    /// [`data_file`](Self::data_file) at any path (another filesystem than the scratch one).
    pub fn data_file_at(&self, path: PathBuf, size: u64) -> Result<ScratchFile> {
        let mut block = vec![0u8; 1 << 20];
        aws_lc_rs::rand::fill(&mut block).map_err(|_| anyhow::anyhow!("no randomness"))?;
        let mut f = std::io::BufWriter::with_capacity(1 << 20, fs::File::create(&path)?);
        let mut left = size;
        while left > 0 {
            let n = left.min(block.len() as u64) as usize;
            f.write_all(&block[..n])?;
            left -= n as u64;
        }
        f.flush()?;
        Ok(ScratchFile(path))
    }
}

/// A key pair written for the CLI: the recipient string and an identity file.
pub struct CliKey {
    pub kind: Kind,
    pub recipient: String,
    pub identity: PathBuf,
}

impl Ctx {
    /// Generates a key of `kind` through the library; `Err` carries the reason to note in the
    /// report when this build cannot make that kind yet.
    pub fn cli_key(&self, kind: Kind) -> std::result::Result<CliKey, String> {
        let key = recipient::generate(kind).map_err(|e| e.to_string())?;
        let identity = self.path(&format!("{}.key", kind.name()));
        fs::write(&identity, format!("{}\n", key.secret.as_str())).map_err(|e| e.to_string())?;
        Ok(CliKey { kind, recipient: key.public, identity })
    }
}

/// A scratch file removed when dropped, so big inputs do not pile up in tmpfs.
pub struct ScratchFile(pub PathBuf);

impl Drop for ScratchFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// Scratch space: tmpfs when there is one, so the disk does not dominate file-level figures.
fn scratch_dir(beneath: Option<&Path>) -> Result<(tempfile::TempDir, String)> {
    if let Some(dir) = beneath {
        let d = tempfile::Builder::new()
            .prefix("hyperseal-bench-")
            .tempdir_in(dir)
            .with_context(|| format!("cannot create a temp dir in {}", dir.display()))?;
        return Ok((d, format!("{} (--scratch)", dir.display())));
    }
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(d) = tempfile::Builder::new().prefix("hyperseal-bench-").tempdir_in(shm) {
            return Ok((d, "/dev/shm (tmpfs, in memory)".into()));
        }
    }
    let d =
        tempfile::Builder::new().prefix("hyperseal-bench-").tempdir().context("cannot create a temp dir")?;
    let note = format!("{} (system temp dir; no /dev/shm)", std::env::temp_dir().display());
    Ok((d, note))
}

/// The `hyperseal` binary: `--hyperseal PATH`, else the one next to this program.
fn find_hyperseal(arg: Option<&Path>) -> std::result::Result<PathBuf, String> {
    if let Some(p) = arg {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(format!("--hyperseal {}: no such file", p.display()))
        };
    }
    let me = std::env::current_exe().map_err(|e| format!("cannot find this program's path: {e}"))?;
    let exe = me.with_file_name(format!("hyperseal{}", std::env::consts::EXE_SUFFIX));
    if exe.is_file() {
        Ok(exe)
    } else {
        Err(format!("no hyperseal binary next to {}", me.display()))
    }
}

fn run(a: BenchArgs) -> Result<()> {
    if let Some(stats) = &a.child_stats {
        return child::helper_main(stats, &a.child);
    }
    if !(a.size_scale > 0.0 && a.size_scale.is_finite()) {
        bail!("--size-scale must be a positive number");
    }
    let all = tables();
    let mut selected: Vec<&dyn Table> = Vec::new();
    let mut unavailable = Vec::new();
    if a.only.is_empty() {
        selected = all.iter().map(|t| t.as_ref()).collect();
    } else {
        for name in a.only.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
            if let Some(t) = all.iter().find(|t| t.id() == name) {
                if !selected.iter().any(|s| s.id() == name) {
                    selected.push(t.as_ref());
                }
            } else if let Some((id, what)) = PLANNED.iter().find(|(id, _)| *id == name) {
                unavailable.push((id.to_string(), what.to_string()));
            } else {
                let known: Vec<&str> =
                    all.iter().map(|t| t.id()).chain(PLANNED.iter().map(|p| p.0)).collect();
                return Err(hint(
                    format!("unknown table {name:?}"),
                    format!("choose from: {}", known.join(", ")),
                ));
            }
        }
    }

    let (tmp, tmp_note) = scratch_dir(a.scratch.as_deref())?;
    let ctx = Ctx {
        full: a.full,
        scale: a.size_scale,
        threads: hyperseal::available_threads(),
        exe: find_hyperseal(a.hyperseal.as_deref()),
        repo: a.repo.clone(),
        tmp,
        tmp_note,
    };
    let started = Instant::now();
    let mut report = Report::new(&ctx, machine::Machine::detect(), machine::peer_versions());
    report.unavailable = unavailable;
    let mut failed = false;
    for t in selected {
        ctx.progress(t.id(), "start");
        let t0 = Instant::now();
        let mut tr = TableReport::new(t.id(), t.title(), t.mirrors());
        if let Err(e) = t.run(&ctx, &mut tr) {
            ctx.progress(t.id(), format!("failed: {e:#}"));
            tr.error = Some(format!("{e:#}"));
            failed = true;
        }
        tr.seconds = t0.elapsed().as_secs_f64();
        ctx.progress(t.id(), format!("done in {:.1} s", tr.seconds));
        report.tables.push(tr);
    }
    report.seconds = started.elapsed().as_secs_f64();

    fs::create_dir_all(&a.out).with_context(|| format!("cannot create {}", a.out.display()))?;
    let md = report::markdown(&report);
    let json = serde_json::to_string_pretty(&report.to_json())?;
    fs::write(a.out.join("report.md"), &md)?;
    fs::write(a.out.join("report.json"), &json)?;
    fs::write(a.out.join("report.html"), html::render(&report))?;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(if a.json { json.as_bytes() } else { md.as_bytes() })?;
    stdout.write_all(b"\n")?;
    eprintln!("bench: wrote {}/report.{{md,json,html}} in {:.1} s", a.out.display(), report.seconds);
    if failed {
        bail!("some tables failed (see the report)");
    }
    Ok(())
}

/// An error with a hint line, for errors where the next step is not obvious.
#[derive(Debug)]
struct Hinted {
    msg: String,
    hint: String,
}

impl std::fmt::Display for Hinted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for Hinted {}

/// Attaches a hint to an error message.
pub fn hint(err: impl std::fmt::Display, hint: impl std::fmt::Display) -> anyhow::Error {
    anyhow::Error::new(Hinted { msg: err.to_string(), hint: hint.to_string() })
}

fn main() -> ExitCode {
    // The `git` table's do-nothing filter process, started by git itself (see git_floor.rs).
    if std::env::args_os().nth(1).is_some_and(|a| a == "--git-null-filter") {
        return match git_floor::serve() {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("hyperseal-bench: error: the null filter: {e:#}");
                ExitCode::from(1)
            }
        };
    }
    match run(BenchArgs::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hyperseal-bench: error: {e:#}");
            if let Some(h) = e.downcast_ref::<Hinted>() {
                eprintln!("hyperseal-bench: hint: {}", h.hint);
            }
            ExitCode::from(1)
        }
    }
}
