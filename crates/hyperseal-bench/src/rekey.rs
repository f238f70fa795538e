//! `rekey`: what `hyperseal rekey` (a new header over the same payload) costs against the way
//! every other tool changes who can open a file — decrypt and encrypt again — and against `cp`
//! (the floor of anything that rewrites the file). Three parts: one large file on the scratch
//! tmpfs, many small files, and one object on a local S3 server (`rekey_s3.rs`).
//!
//! Every re-key runs back and forth (key A → key B, then B → A), so the file is the same file on
//! every run and each direction is one sample. Contenders run in turn within each round, so load
//! from elsewhere on a shared machine falls on all of them alike and their ratios hold.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context as _, Result};
use hyperseal::recipient::{self, Kind};

use super::child::{which, Job};
use super::files::{ratio, s};
use super::report::{Cell, Chart, Section, TableReport};
use super::stats::{fmt_size, fmt_time, with_spread, Stats};
use super::{Ctx, Table};

pub struct Rekey;

impl Table for Rekey {
    fn id(&self) -> &'static str {
        "rekey"
    }
    fn title(&self) -> &'static str {
        "Re-keying: hyperseal rekey vs decrypt | encrypt (hyperseal, age), cp and S3 server-side copy"
    }
    fn mirrors(&self) -> &'static str {
        "how a recipient change is done without rekey: every tool decrypts and encrypts again (age -d | age -e)"
    }

    fn run(&self, ctx: &Ctx, out: &mut TableReport) -> Result<()> {
        let exe = ctx.exe()?;
        let keys = [key(ctx, "rekey-a.key")?, key(ctx, "rekey-b.key")?];
        let age = which("age");
        if age.is_none() {
            out.note("age is not on PATH (`make bench` installs it): the age rows are missing.");
        }
        out.note(format!(
            "Files in {}; X25519 keys. A re-key is `hyperseal rekey -q --remove-own -i A.key -r B FILE` \
             (the next run B → A, so each run starts from the same file); the peers write a new file and \
             move it over the old one, as a script would (`set -o pipefail`). Times are medians of every \
             direction of every round, wall time of the whole process.",
            ctx.tmp_note
        ));
        large(ctx, out, exe, age.as_deref(), &keys)?;
        small(ctx, out, exe, age.as_deref(), &keys)?;
        super::rekey_s3::s3(ctx, out);
        Ok(())
    }
}

/// A key pair: recipient string and identity file.
pub struct Key {
    pub public: String,
    pub file: PathBuf,
}

fn key(ctx: &Ctx, name: &str) -> Result<Key> {
    let k = recipient::generate(Kind::X25519).map_err(|e| anyhow::anyhow!("{e}"))?;
    let file = ctx.path(name);
    fs::write(&file, format!("{}\n", k.secret.as_str()))?;
    Ok(Key { public: k.public, file })
}

/// One measured contender: steps run in turn each round, each step one sample; `restore`
/// (untimed) copies a pristine file over the work file first, for a case that must start
/// from a file without slack every time.
struct Contender {
    name: String,
    steps: Vec<Job>,
    restore: Option<(PathBuf, PathBuf)>,
    samples: Vec<f64>,
}

impl Contender {
    fn new(name: impl Into<String>, steps: Vec<Job>) -> Contender {
        Contender { name: name.into(), steps, restore: None, samples: vec![] }
    }
}

/// One warm-up round, then `rounds` rounds of every contender in turn.
fn measure(ctx: &Ctx, table: &str, cs: &mut [Contender], rounds: usize) -> Result<()> {
    for round in 0..=rounds {
        for c in cs.iter_mut() {
            ctx.progress(table, format!("{} (round {round} of {rounds})", c.name));
            for job in &c.steps {
                if let Some((from, to)) = &c.restore {
                    fs::copy(from, to).with_context(|| format!("cannot restore {}", to.display()))?;
                }
                let wall = job.run_once(ctx.tmp.path())?.wall;
                if round > 0 {
                    c.samples.push(wall);
                }
            }
        }
    }
    Ok(())
}

/// `hyperseal rekey` from `from` to `to` over `files`.
fn rekey_job(exe: &Path, from: &Key, to: &Key, files: &[String]) -> Job {
    let mut args =
        vec!["rekey", "-q", "--remove-own", "-i", from.file.to_str().unwrap_or(""), "-r", &to.public];
    args.extend(files.iter().map(String::as_str));
    Job::new(exe, &args)
}

/// `decrypt | encrypt` of FILE into FILE.new, moved over FILE, for each FILE of `loop_over`.
fn pipe_job(loop_over: &str, dec: &str, enc: &str) -> Job {
    let script = format!(
        "set -eo pipefail; for f in {loop_over}; do {dec} \"$f\" | {enc} -o \"$f.new\"; mv \"$f.new\" \"$f\"; done"
    );
    Job::new("bash", &["-c", &script])
}

/// What `hyperseal rekey` reports it did with `file` (A → B, then back), checked before
/// measuring, so a row never claims an in-place re-key that was a rewrite.
fn mode_of(exe: &Path, keys: &[Key; 2], file: &Path, add: bool) -> Result<&'static str> {
    let run = |from: &Key, to: &Key, add: bool| -> Result<String> {
        let mut cmd = Command::new(exe);
        cmd.args(["rekey", "--remove-own", "-i"]).arg(&from.file);
        cmd.args([if add { "--add" } else { "-r" }, &to.public]).arg(file);
        let o = cmd.output()?;
        if !o.status.success() {
            bail!("hyperseal rekey failed: {}", String::from_utf8_lossy(&o.stderr).trim());
        }
        Ok(format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
    };
    let said = run(&keys[0], &keys[1], add)?;
    if !add {
        run(&keys[1], &keys[0], false)?;
    }
    Ok(if said.contains("in place") {
        "in place"
    } else if said.contains("rewritten") {
        "rewritten"
    } else {
        "?"
    })
}

/// A ratio that stays readable far below 1 (an in-place re-key is a fraction of a copy).
fn small_ratio(r: f64) -> Cell {
    if r >= 0.1 {
        ratio(r)
    } else {
        Cell::num(r, "×", format!("{r:.4}×"))
    }
}

fn time_cell(st: &Stats) -> Cell {
    Cell::measured(st.scale(1e3), "ms", with_spread(fmt_time(st.median), st))
}

/// One file of 256 MiB (1 GiB with `--full`) on the scratch tmpfs.
fn large(ctx: &Ctx, out: &mut TableReport, exe: &Path, age: Option<&Path>, keys: &[Key; 2]) -> Result<()> {
    let size = ctx.size(if ctx.full { 1 << 30 } else { 256 << 20 });
    let rounds = ctx.reps(size);
    let (hs, nofit, work, age_ct, copy) = (
        ctx.path("rekey.hs"),
        ctx.path("rekey-noslack.age"),
        ctx.path("rekey-work.age"),
        ctx.path("rekey.age"),
        ctx.path("rekey.cp"),
    );
    {
        let input = ctx.data_file("rekey.in", size)?;
        let inp = s(&input.0);
        let pa = keys[0].public.as_str();
        Job::new(exe, &["encrypt", "-q", "-r", pa, "-o", &s(&hs), &inp]).run_once(ctx.tmp.path())?;
        // `hyperseal age -e` writes an age file as age does: a header with no slack to grow into.
        Job::new(exe, &["age", "-e", "-r", pa, "-o", &s(&nofit), &inp]).run_once(ctx.tmp.path())?;
        fs::copy(&nofit, &age_ct)?;
    }
    let fits = mode_of(exe, keys, &hs, false)?;
    fs::copy(&nofit, &work)?;
    let grows = mode_of(exe, keys, &work, true)?;
    let (k0, k1) = (s(&keys[0].file), s(&keys[1].file));
    let hs_s = s(&hs);
    let cp = Contender::new("cp", vec![Job::new("cp", &[&hs_s, &s(&copy)]).output(&copy); 2]);
    let rekey = Contender::new(
        format!("hyperseal rekey ({fits})"),
        vec![
            rekey_job(exe, &keys[0], &keys[1], std::slice::from_ref(&hs_s)),
            rekey_job(exe, &keys[1], &keys[0], std::slice::from_ref(&hs_s)),
        ],
    );
    let x = s(exe);
    let hs_pipe = Contender::new(
        "hyperseal decrypt piped to hyperseal encrypt",
        vec![
            pipe_job(
                &hs_s,
                &format!("{x} decrypt -q -i {k0}"),
                &format!("{x} encrypt -q -r {}", keys[1].public),
            ),
            pipe_job(
                &hs_s,
                &format!("{x} decrypt -q -i {k1}"),
                &format!("{x} encrypt -q -r {}", keys[0].public),
            ),
        ],
    );
    let mut nofit_c = Contender::new(
        format!("hyperseal rekey --add, header grows ({grows})"),
        vec![Job::new(exe, &["rekey", "-q", "-i", &k0, "--add", &keys[1].public, &s(&work)]); 2],
    );
    nofit_c.restore = Some((nofit.clone(), work.clone()));
    let mut cs = vec![cp, rekey, hs_pipe, nofit_c];
    if let Some(age) = age {
        let (a, ac) = (s(age), s(&age_ct));
        cs.push(Contender::new(
            "age -d piped to age -e",
            vec![
                pipe_job(&ac, &format!("{a} -d -i {k0}"), &format!("{a} -e -r {}", keys[1].public)),
                pipe_job(&ac, &format!("{a} -d -i {k1}"), &format!("{a} -e -r {}", keys[0].public)),
            ],
        ));
    }
    let measured = measure(ctx, "rekey", &mut cs, rounds);
    for p in [&hs, &nofit, &work, &age_ct, &copy] {
        let _ = fs::remove_file(p);
    }
    measured?;

    let st: Vec<Stats> = cs.iter().map(|c| Stats::of(&c.samples)).collect();
    let (cp_t, rk_t) = (st[0].median, st[1].median);
    let mut sec = Section::new(
        format!("One {} file on tmpfs: time per re-key", fmt_size(size)),
        &["size", "how", "time", "÷ cp", "÷ hyperseal rekey"],
    );
    for (c, t) in cs.iter().zip(&st) {
        sec.rows.push(vec![
            Cell::num(size as f64, "B", fmt_size(size)),
            Cell::text(&c.name),
            time_cell(t),
            small_ratio(t.median / cp_t),
            ratio(t.median / rk_t),
        ]);
    }
    out.sections.push(sec);
    let mut chart = Chart::new(&format!("Time per re-key, {} file", fmt_size(size)), "how", "ms", false);
    chart.categories = cs.iter().map(|c| c.name.clone()).collect();
    for (i, t) in st.iter().enumerate() {
        chart.point("median time", (i + 1) as f64, t.median * 1e3);
    }
    out.charts.push(chart);
    let verdict = |ok: bool| if ok { "met" } else { "missed" };
    out.note(format!(
        "{}: goal ≤ 10 ms where the header fits — {} (median {}, slowest {}; {}); ≤ cp where it \
         does not — {} ({} vs cp {}, {:.2}×). The rewrite case restores the file without slack \
         before each run (untimed). {} rounds after one warm-up, 2 samples each.",
        fmt_size(size),
        verdict(fits == "in place" && rk_t <= 0.010),
        fmt_time(rk_t),
        fmt_time(st[1].max),
        fits,
        verdict(st[3].median <= cp_t),
        fmt_time(st[3].median),
        fmt_time(cp_t),
        st[3].median / cp_t,
        rounds,
    ));
    Ok(())
}

/// Many small files: 10,000 of 4 KiB, age files as `hyperseal age -e` writes them, one copy
/// for each contender. The loops (one or two processes per file, a constant cost a file) run
/// over 1,000 of them: their files/s is the same over 10,000, in a tenth of the time.
fn small(ctx: &Ctx, out: &mut TableReport, exe: &Path, age: Option<&Path>, keys: &[Key; 2]) -> Result<()> {
    let count = ((10_000.0 * ctx.scale.min(1.0)).round() as usize).max(10);
    let loop_count = count.min(1_000);
    // Small whatever --size-scale says (it scales the large file up), tiny in a test run.
    let size = ((4096.0 * ctx.scale.min(1.0)).round() as u64).max(1);
    let template = ctx.path("rekey-small.age");
    {
        let input = ctx.data_file("rekey-small.in", size)?;
        let args = ["age", "-e", "-r", &keys[0].public, "-o", &s(&template), &s(&input.0)];
        Job::new(exe, &args).run_once(ctx.tmp.path())?;
    }
    let mut dirs = Vec::new();
    let mut make_dir = |name: &str, count: usize| -> Result<(PathBuf, Vec<String>)> {
        let dir = ctx.path(name);
        fs::create_dir_all(&dir)?;
        let files: Vec<String> = (0..count).map(|i| s(&dir.join(format!("f{i:05}.age")))).collect();
        for f in &files {
            fs::copy(&template, f)?;
        }
        dirs.push(dir.clone());
        Ok((dir, files))
    };
    let (_, one_files) = make_dir("rekey-one", count)?;
    let (loop_dir, _) = make_dir("rekey-loop", loop_count)?;
    let (age_dir, _) = make_dir("rekey-ageloop", loop_count)?;
    let (tree_dir, _) = make_dir("rekey-tree", count)?;
    let (x, k0, k1) = (s(exe), s(&keys[0].file), s(&keys[1].file));
    let glob = |d: &Path| format!("{}/*.age", s(d));
    let (pa, pb) = (&keys[0].public, &keys[1].public);
    // The one-invocation run is short: several back-and-forth pairs per round.
    let pair =
        [rekey_job(exe, &keys[0], &keys[1], &one_files), rekey_job(exe, &keys[1], &keys[0], &one_files)];
    let one = Contender::new(
        format!("hyperseal rekey, {count} files in one process"),
        pair.iter().cycle().take(6).cloned().collect(),
    );
    let per_file = |from: &str, to: &str| {
        let script = format!(
            "set -e; for f in {}; do {x} rekey -q --remove-own -i {from} -r {to} \"$f\"; done",
            glob(&loop_dir)
        );
        Job::new("bash", &["-c", &script])
    };
    // The whole folder with `--recursive`, keeping its manifest (removed before each run, so
    // every run re-keys every file: the back-and-forth changes are two different changes).
    let manifest = ctx.path("rekey-tree.manifest");
    let tree = |from: &Key, to: &Key| {
        let args = ["rekey", "-q", "--remove-own", "-i", &s(&from.file), "-r", &to.public, "--recursive"];
        let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        all.extend(["--manifest".into(), s(&manifest), s(&tree_dir)]);
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        Job::new(exe, &all).output(&manifest)
    };
    let mut cs = vec![
        one,
        Contender::new(
            "hyperseal rekey --recursive (the folder, with its manifest)".to_string(),
            vec![tree(&keys[0], &keys[1]), tree(&keys[1], &keys[0])],
        ),
        Contender::new("hyperseal rekey, one process per file", vec![per_file(&k0, pb), per_file(&k1, pa)]),
    ];
    if let Some(age) = age {
        let a = s(age);
        cs.push(Contender::new(
            "age -d piped to age -e, per file",
            vec![
                pipe_job(&glob(&age_dir), &format!("{a} -d -i {k0}"), &format!("{a} -e -r {pb}")),
                pipe_job(&glob(&age_dir), &format!("{a} -d -i {k1}"), &format!("{a} -e -r {pa}")),
            ],
        ));
    }
    let rounds = if ctx.scale < 0.01 { 1 } else { 2 };
    let measured = measure(ctx, "rekey", &mut cs, rounds);
    let _ = fs::remove_file(&template);
    for d in &dirs {
        let _ = fs::remove_dir_all(d);
    }
    measured?;

    let st: Vec<Stats> = cs.iter().map(|c| Stats::of(&c.samples)).collect();
    // The one-process and tree runs (the first two) go over every file, the loops over fewer.
    let files_of = |i: usize| if i < 2 { count } else { loop_count };
    let rate = |i: usize, t: &Stats| t.rate(files_of(i) as u64);
    let mut sec = Section::new(
        format!("{count} files of {} each: files per second", fmt_size(size)),
        &["files", "how", "time", "files/s", "÷ age loop (files/s)"],
    );
    // The age loop is the last contender when age is installed.
    let age_rate = age.and(st.last()).map(|t| rate(st.len() - 1, t).median);
    for (i, (c, t)) in cs.iter().zip(&st).enumerate() {
        let r = rate(i, t);
        let n = files_of(i);
        sec.rows.push(vec![
            Cell::num(n as f64, "", n.to_string()),
            Cell::text(&c.name),
            time_cell(t),
            Cell::measured(r, "files/s", with_spread(format!("{:.0}", r.median), &r)),
            age_rate.map_or(Cell::none(), |a| ratio(r.median / a)),
        ]);
    }
    out.sections.push(sec);
    let goal = match age_rate {
        Some(a) => {
            let x = rate(1, &st[1]).median / a;
            format!(
                " Goal: the tree ≥ 50× the age loop's files/s — {} ({x:.1}×).",
                if x >= 50.0 { "met" } else { "missed" }
            )
        }
        None => String::new(),
    };
    out.note(format!(
        "Small files: age files of {} (`hyperseal age -e`, no slack: every re-key rewrites the file); \
         the one-process run over all {count} files is `hyperseal rekey … FILE…`, the folder's `hyperseal rekey … \
         --recursive --manifest M DIR` (M removed before each run, one file per CPU at once); the loops are bash \
         `for` loops, one or two processes per file, over {loop_count} of the files (a constant cost a file). \
         {rounds} rounds after one warm-up.{goal}",
        fmt_size(size)
    ));
    Ok(())
}
