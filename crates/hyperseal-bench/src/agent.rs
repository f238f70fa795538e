//! `agent`: what the identity agent costs and saves, as whole processes: a 1 KiB decrypt
//! through the agent, with the same key as a plain identity file, and with it as a
//! passphrase-protected identity file (its scrypt KDF paid on every run); a tree re-key
//! through the agent against the same key given with `-i`; and age's `-d` through
//! `age-plugin-hyperseal` against age with the plain key; and (`agent_keys.rs`) a security
//! key's plugin through the agent against the plugin run directly, and a 1 GiB decrypt through
//! a remote host's forward socket against the main socket.
//!
//! The agent runs for the table in a runtime directory of the scratch space; the runs find it
//! through `HYPERSEAL_AGENT_SOCK` (set for the whole table, so every contender pays the same
//! environment; a run with `-i` never reaches the agent, its key opens the file first).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use hyperseal::recipient::{self, Kind};
use hyperseal::{Encryptor, Options, Profile};
use zeroize::Zeroizing;

use super::child::{measure_alternating, which, Job};
use super::files::{ratio, s};
use super::report::{Cell, Chart, Section, TableReport};
use super::stats::{fmt_time, with_spread, Stats};
use super::{Ctx, Table};

pub struct Agent;

/// The agent process of the table, ended when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Table for Agent {
    fn id(&self) -> &'static str {
        "agent"
    }
    fn title(&self) -> &'static str {
        "Identity agent: protected keys unlocked once, per-process cost"
    }
    fn mirrors(&self) -> &'static str {
        "ssh-agent's promise for age keys: a protected key at the price of a plain one"
    }

    fn run(&self, ctx: &Ctx, out: &mut TableReport) -> Result<()> {
        let exe = ctx.exe()?;
        let run = ctx.path("agent-run");
        fs::create_dir_all(&run)?;
        fs::set_permissions(&run, fs::Permissions::from_mode(0o700))?;
        let sock = run.join("hyperseal/agent.sock");
        let child = Command::new(exe)
            .args(["agent", "start", "--foreground"])
            .env("XDG_RUNTIME_DIR", &run)
            // The test plugin of the security-key rows asks a PIN on every run.
            .env("HSTEST_MODE", "pin")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let _agent = Running(child);
        let until = Instant::now() + Duration::from_secs(20);
        while std::os::unix::net::UnixStream::connect(&sock).is_err() {
            if Instant::now() > until {
                bail!("the agent did not start");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // age finds `age-plugin-hyperseal` on PATH: a link to the binary under test.
        let plugins = ctx.path("agent-plugins");
        fs::create_dir_all(&plugins)?;
        let _ = fs::remove_file(plugins.join("age-plugin-hyperseal"));
        std::os::unix::fs::symlink(exe, plugins.join("age-plugin-hyperseal"))?;
        let path = format!("{}:{}", s(&plugins), std::env::var("PATH").unwrap_or_default());
        // Edition 2021, one thread here: the children inherit both.
        std::env::set_var("HYPERSEAL_AGENT_SOCK", &sock);
        std::env::set_var("PATH", &path);
        std::env::set_var("HSTEST_MODE", "pin");
        let result = measure(ctx, out, exe, &sock);
        std::env::remove_var("HYPERSEAL_AGENT_SOCK");
        std::env::remove_var("HSTEST_MODE");
        result
    }
}

/// The keys: plain, and the same key as an `age -p` identity file (age's default scrypt work).
struct Keys {
    public: String,
    plain: PathBuf,
    protected: PathBuf,
    pass_file: PathBuf,
    other_public: String,
    other_plain: PathBuf,
}

fn keys(ctx: &Ctx) -> Result<Keys> {
    let k = recipient::generate(Kind::X25519).map_err(|e| anyhow::anyhow!("{e}"))?;
    let plain = ctx.path("agent-plain.key");
    fs::write(&plain, format!("{}\n", k.secret.as_str()))?;
    let pass = Zeroizing::new("bench passphrase, typed once".to_string());
    let pass_file = ctx.path("agent-pass.txt");
    fs::write(&pass_file, format!("{}\n", pass.as_str()))?;
    let to = [recipient::passphrase_recipient(Profile::Age, pass)];
    let mut sealed = Vec::new();
    Encryptor::with_recipients(&to, Options::age())?.encrypt_slice(k.secret.as_bytes(), &mut sealed, None)?;
    let protected = ctx.path("agent-protected.age");
    fs::write(&protected, sealed)?;
    let o = recipient::generate(Kind::X25519).map_err(|e| anyhow::anyhow!("{e}"))?;
    let other_plain = ctx.path("agent-other.key");
    fs::write(&other_plain, format!("{}\n", o.secret.as_str()))?;
    Ok(Keys { public: k.public, plain, protected, pass_file, other_public: o.public, other_plain })
}

fn hs(exe: &Path, args: &[&str]) -> Result<()> {
    let o = Command::new(exe).args(args).stdin(Stdio::null()).output()?;
    if !o.status.success() {
        bail!("hyperseal {}: {}", args.join(" "), String::from_utf8_lossy(&o.stderr).trim());
    }
    Ok(())
}

fn time_cell(c: &Stats) -> Cell {
    Cell::measured(c.scale(1e3), "ms", with_spread(fmt_time(c.median), c))
}

fn goal(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "missed"
    }
}

fn measure(ctx: &Ctx, out: &mut TableReport, exe: &Path, sock: &Path) -> Result<()> {
    let k = keys(ctx)?;
    let (agent_add, pf) = (s(&k.protected), s(&k.pass_file));
    hs(exe, &["agent", "add", "--passphrase-file", &pf, &agent_add])?;
    hs(exe, &["agent", "add", &s(&k.other_plain)])?;
    let age = which("age");

    // 1 KiB, three ways.
    let input = ctx.data_file("agent-1k.in", 1024)?;
    let ct = ctx.path("agent-1k.hs");
    hs(exe, &["encrypt", "-q", "-r", &k.public, "-o", &s(&ct), &s(&input.0)])?;
    let pt = ctx.path("agent-1k.out");
    let reps = if ctx.scale < 0.01 { 3 } else { 41 };
    let one = decrypt_1k(ctx, out, exe, &k, &ct, &pt, reps)?;

    // A tree: through the agent (it holds both keys) against the keys given with -i.
    let count = ((10_000.0 * ctx.scale.min(1.0)).round() as usize).max(10);
    let tree = ctx.path("agent-tree");
    fs::create_dir_all(&tree)?;
    let template = ctx.path("agent-tree.tmpl");
    hs(exe, &["age", "-e", "-r", &k.public, "-o", &s(&template), &s(&input.0)])?;
    for i in 0..count {
        fs::copy(&template, tree.join(format!("f{i:05}.age"))).context("tree")?;
    }
    let manifest = ctx.path("agent-tree.manifest");
    let rekey = |ids: &[&str], to: &str| {
        let mut args = vec!["rekey", "-q", "--remove-own"];
        args.extend(ids);
        args.extend(["-r", to, "--recursive", "--manifest"]);
        let (m, t) = (s(&manifest), s(&tree));
        let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        all.extend([m, t]);
        Job::new(exe, &all.iter().map(String::as_str).collect::<Vec<_>>()).output(&manifest)
    };
    let (a_id, b_id) = (s(&k.plain), s(&k.other_plain));
    let direct = [rekey(&["-i", &a_id], &k.other_public), rekey(&["-i", &b_id], &k.public)];
    let agent = [rekey(&[], &k.other_public), rekey(&[], &k.public)];
    let rounds = if ctx.scale < 0.01 { 1 } else { 3 };
    let (mut d, mut a) = (Vec::new(), Vec::new());
    for round in 0..=rounds {
        ctx.progress("agent", format!("{count}-file tree re-key (round {round} of {rounds})"));
        for (jobs, samples) in [(&agent, &mut a), (&direct, &mut d)] {
            for job in jobs.iter() {
                let wall = job.run_once(ctx.tmp.path())?.wall;
                if round > 0 {
                    samples.push(wall);
                }
            }
        }
    }
    let _ = fs::remove_dir_all(&tree);
    let (ra, rd) = (Stats::of(&a).rate(count as u64), Stats::of(&d).rate(count as u64));
    let mut sec = Section::new(
        format!("rekey --recursive over {count} files: files per second"),
        &["identities", "files/s", "÷ direct"],
    );
    for (name, r) in [("through the agent", &ra), ("-i the key files", &rd)] {
        let cell = Cell::measured(*r, "files/s", with_spread(format!("{:.0}", r.median), r));
        sec.rows.push(vec![Cell::text(name), cell, ratio(r.median / rd.median)]);
    }
    out.sections.push(sec);
    let tree_ratio = ra.median / rd.median;

    // age -d through the plugin against age with the plain key.
    let mut age_ratio = None;
    if let Some(age) = &age {
        let age_ct = ctx.path("agent-1k.age");
        hs(exe, &["age", "-e", "-r", &k.public, "-o", &s(&age_ct), &s(&input.0)])?;
        let agent_txt = ctx.path("agent.txt");
        fs::write(&agent_txt, format!("{}\n", hyperseal::agent::plugin_identity(sock)))?;
        let age_dec =
            |id: &Path| Job::new(age, &["-d", "-i", &s(id), "-o", &s(&pt), &s(&age_ct)]).output(&pt);
        let (via, direct) = (age_dec(&agent_txt), age_dec(&k.plain));
        ctx.progress("agent", "age -d: plugin, plain");
        let st = measure_alternating(&[&via, &direct], ctx.tmp.path(), reps)?;
        let mut sec = Section::new("age -d of 1 KiB, whole process", &["identity", "time", "÷ plain"]);
        for (name, c) in ["AGE-PLUGIN-HYPERSEAL-1… (the agent)", "the plain key"].iter().zip(&st) {
            sec.rows.push(vec![
                Cell::text(*name),
                time_cell(&c.wall),
                ratio(c.wall.median / st[1].wall.median),
            ]);
        }
        out.sections.push(sec);
        age_ratio = Some(st[0].wall.median / st[1].wall.median);
    } else {
        out.note("age is not on PATH (`make bench` installs it): the age rows are empty.");
    }
    let age_goal = age_ratio.map_or(String::new(), |r| {
        format!(" age through the plugin ≤ 2× age with the plain key — {} ({r:.2}×).", goal(r <= 2.0))
    });
    let pin_goal = super::agent_keys::security_key(ctx, out, exe, sock, &input.0, reps)?.map_or(String::new(), |r| {
        format!(
            " A PIN plugin through the agent costs no typing per file (one PIN per TTL), at {r:.2}× the plugin run \
             directly with its PIN from a file."
        )
    });
    let fwd = super::agent_keys::forward(ctx, out, exe, sock, &k.plain, &k.public)?;
    let fwd_goal = format!(
        " A decrypt through a forward ≤ 1.1× through the main socket — {} ({fwd:.2}×).",
        goal(fwd <= 1.1)
    );
    out.note(format!(
        "Files in {}; X25519. The protected file is an age -p identity file at age's scrypt work factor, its \
         passphrase from --identity-passphrase-file; the agent got it once (`agent add --passphrase-file`). \
         The tree is age files of 1 KiB, re-keyed back and forth between two keys with --remove-own, the manifest \
         removed before each run. Goals: through the agent ≤ 1.15× the plain file, in turn — {} ({:.2}×) \
         and each {reps} in a row — {} ({:.2}×); ≥ 20× faster than the protected file — {} ({:.1}×); the \
         tree ≥ 0.9× direct — {} ({tree_ratio:.2}×).{age_goal}{pin_goal}{fwd_goal}",
        ctx.tmp_note,
        goal(one.in_turn <= 1.15),
        one.in_turn,
        goal(one.in_a_row <= 1.15),
        one.in_a_row,
        goal(one.under_protected >= 20.0),
        one.under_protected,
        goal(tree_ratio >= 0.9),
    ));
    Ok(())
}

/// A 1 KiB decrypt's ratios: through the agent ÷ the plain file, in turn and each in a row; the
/// protected file ÷ through the agent.
struct OneKib {
    in_turn: f64,
    in_a_row: f64,
    under_protected: f64,
}

/// Runs of `job` one after another, as a script decrypting many files runs them, after warm-ups
/// of the same: what the agent does after an answer (a thread's end, its stack's zeroing) falls
/// on the next run's path here, and between two runs of another program when in turn.
fn in_a_row(ctx: &Ctx, job: &Job, reps: usize) -> Result<Stats> {
    for _ in 0..10.min(reps) {
        job.run_once(ctx.tmp.path())?;
    }
    let runs = (0..reps).map(|_| Ok(job.run_once(ctx.tmp.path())?.wall)).collect::<Result<Vec<_>>>()?;
    Ok(Stats::of(&runs))
}

/// A 1 KiB decrypt three ways: through the agent and with the plain key file, in turn and each
/// in a row, and with the key as a protected identity file.
fn decrypt_1k(
    ctx: &Ctx,
    out: &mut TableReport,
    exe: &Path,
    k: &Keys,
    ct: &Path,
    pt: &Path,
    reps: usize,
) -> Result<OneKib> {
    let dec = |extra: &[&str]| {
        let mut args = vec!["decrypt", "-q"];
        args.extend(extra);
        args.extend(["-o", pt.to_str().unwrap_or(""), ct.to_str().unwrap_or("")]);
        Job::new(exe, &args).output(pt)
    };
    let (plain_id, protected_id, pf) = (s(&k.plain), s(&k.protected), s(&k.pass_file));
    let through_agent = dec(&[]);
    let plain = dec(&["-i", &plain_id]);
    let protected = dec(&["-i", &protected_id, "--identity-passphrase-file", &pf]);
    ctx.progress("agent", "1 KiB decrypt: agent and plain in turn, each in a row, then protected");
    // The agent and the plain file in turn, in both orders (A B, B A, …): the first run of a
    // pair measured consistently slower here, whichever it was. The protected file on its own:
    // its scrypt (256 MiB) would evict the agent's memory from the caches before each agent
    // run, a cost no real sequence of decrypts has.
    let (mut a_runs, mut p_runs) = (Vec::new(), Vec::new());
    for job in [&through_agent, &plain] {
        job.run_once(ctx.tmp.path())?;
    }
    for i in 0..reps {
        let (first, second) = if i % 2 == 0 { (&through_agent, &plain) } else { (&plain, &through_agent) };
        let (x, y) = (first.run_once(ctx.tmp.path())?.wall, second.run_once(ctx.tmp.path())?.wall);
        let (a, p) = if i % 2 == 0 { (x, y) } else { (y, x) };
        a_runs.push(a);
        p_runs.push(p);
    }
    let row = [in_a_row(ctx, &through_agent, reps)?, in_a_row(ctx, &plain, reps)?];
    let prot = protected.measure(ctx.tmp.path(), if ctx.scale < 0.01 { 2 } else { 11 })?.wall;
    let st = [Stats::of(&a_runs), Stats::of(&p_runs), prot];
    let mut sec = Section::new("A 1 KiB decrypt, whole process", &["identity", "time", "÷ plain file"]);
    let rows = [
        ("through the agent (no -i), in turn", &st[0], &st[1]),
        ("-i plain identity file, in turn", &st[1], &st[1]),
        (&*format!("through the agent, {reps} in a row"), &row[0], &row[1]),
        (&*format!("-i plain identity file, {reps} in a row"), &row[1], &row[1]),
        ("-i age -p identity file (scrypt)", &st[2], &st[1]),
    ];
    for (name, c, plain) in rows {
        sec.rows.push(vec![Cell::text(name), time_cell(c), ratio(c.median / plain.median)]);
    }
    out.sections.push(sec);
    // The protected file's time would flatten the others: the chart shows the two that compete.
    let mut chart = Chart::new("A 1 KiB decrypt, whole process", "identity", "ms", false);
    chart.categories = vec!["through the agent".into(), "plain identity file".into()];
    for (i, t) in st[..2].iter().enumerate() {
        chart.point("median time, in turn", (i + 1) as f64, t.median * 1e3);
    }
    for (i, t) in row.iter().enumerate() {
        chart.point("median time, in a row", (i + 1) as f64, t.median * 1e3);
    }
    out.charts.push(chart);
    Ok(OneKib {
        in_turn: st[0].median / st[1].median,
        in_a_row: row[0].median / row[1].median,
        under_protected: st[2].median / st[0].median,
    })
}
