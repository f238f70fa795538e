//! The `agent` table's rows for the keys people carry and the hosts they log into:
//! * a 1 KiB decrypt with a security key's plugin (the project's test plugin,
//!   `age-plugin-hstest`, asking a PIN on every run) through the agent, with the PIN cached,
//!   against the same plugin run directly by `hyperseal decrypt -i` with the PIN from a file;
//! * a 1 GiB decrypt through a forward socket (`agent forward`, the path `ssh -R` carries)
//!   against the same decrypt through the main socket. ssh's own transport is not in it: this
//!   is what the agent adds, and only headers cross a forward (tests/agent_forward.rs counts
//!   them through a real sshd).

use std::fs;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use hyperseal::agent::AgentIdentity;
use hyperseal::recipient::{Callbacks, Identity};
use zeroize::Zeroizing;

use super::child::{measure_alternating, which, Job};
use super::files::{ratio, s};
use super::report::{Cell, Section, TableReport};
use super::stats::{fmt_time, with_spread};
use super::Ctx;

/// The test plugin's PIN in its `pin` mode.
const PIN: &str = "1234";

/// Types the PIN once, as a user would at the first prompt.
struct TypedOnce;

impl Callbacks for TypedOnce {
    fn request_passphrase(&self, _description: &str) -> Option<Zeroizing<String>> {
        Some(Zeroizing::new(PIN.to_string()))
    }
}

fn run(program: &Path, args: &[&str]) -> Result<Vec<u8>> {
    let o = Command::new(program).args(args).output().with_context(|| format!("{}", program.display()))?;
    if !o.status.success() {
        bail!("{} {}: {}", program.display(), args.join(" "), String::from_utf8_lossy(&o.stderr).trim());
    }
    Ok(o.stdout)
}

/// The security-key rows; `Some(ratio)` of through-the-agent to direct. The agent was started
/// with `HYPERSEAL_AGENT_SOCK` and `HSTEST_MODE=pin` set for the whole table.
pub fn security_key(
    ctx: &Ctx,
    out: &mut TableReport,
    exe: &Path,
    sock: &Path,
    input: &Path,
    reps: usize,
) -> Result<Option<f64>> {
    let Some(plugin) = which("age-plugin-hstest") else {
        out.note("age-plugin-hstest (`make test-plugin`) is not on PATH: the security-key rows are empty.");
        return Ok(None);
    };
    let text = String::from_utf8(run(&plugin, &["--keygen"])?)?;
    let (id, recipient) = text.split_once('\n').context("age-plugin-hstest --keygen")?;
    let (key, pin) = (ctx.path("agent-hstest.key"), ctx.path("agent-hstest.pin"));
    fs::write(&key, format!("{id}\n"))?;
    fs::write(&pin, format!("{PIN}\n"))?;
    let ct = ctx.path("agent-hstest-1k.age");
    run(exe, &["encrypt", "-q", "--format", "age", "-r", recipient.trim(), "-o", &s(&ct), &s(input)])?;
    run(exe, &["agent", "add", &s(&key)])?;
    // The PIN typed once, through the library's own client of the agent.
    let agent = AgentIdentity::new(sock).with_callbacks(Arc::new(TypedOnce));
    let ids: Vec<Box<dyn Identity>> = vec![Box::new(agent)];
    hyperseal::decrypt(&ids, &fs::read(&ct)?).context("the first decrypt through the agent")?;

    let pt = ctx.path("agent-hstest-1k.out");
    let via = Job::new(exe, &["decrypt", "-q", "-o", &s(&pt), &s(&ct)]).output(&pt);
    let direct_args =
        ["decrypt", "-q", "-i", &s(&key), "--identity-passphrase-file", &s(&pin), "-o", &s(&pt), &s(&ct)];
    let direct = Job::new(exe, &direct_args).output(&pt);
    ctx.progress("agent", "1 KiB decrypt with a PIN plugin: through the agent, direct");
    let st = measure_alternating(&[&via, &direct], ctx.tmp.path(), reps)?;
    let mut sec = Section::new(
        "A 1 KiB decrypt with a security key's plugin (a PIN each run), whole process",
        &["identity", "time", "÷ direct"],
    );
    for (name, c) in ["through the agent (PIN cached: none typed)", "the plugin directly (PIN from a file)"]
        .iter()
        .zip(&st)
    {
        let cell = Cell::measured(c.wall.scale(1e3), "ms", with_spread(fmt_time(c.wall.median), &c.wall));
        sec.rows.push(vec![Cell::text(*name), cell, ratio(c.wall.median / st[1].wall.median)]);
    }
    out.sections.push(sec);
    Ok(Some(st[0].wall.median / st[1].wall.median))
}

/// The forward rows; the ratio of the forward's time to the main socket's. The agent holds the
/// key `key` opens with; it is added again with a grant for the table's forward.
pub fn forward(
    ctx: &Ctx,
    out: &mut TableReport,
    exe: &Path,
    sock: &Path,
    key: &Path,
    public: &str,
) -> Result<f64> {
    run(exe, &["agent", "add", "--forward", "bench-host", "--no-confirm", &s(key)])?;
    let fwd = String::from_utf8(run(exe, &["agent", "forward", "bench-host"])?)?.trim().to_string();
    let size = ctx.size(1 << 30);
    let input = ctx.data_file("agent-forward.in", size)?;
    let ct = ctx.path("agent-forward.hs");
    run(exe, &["encrypt", "-q", "-r", public, "-o", &s(&ct), &s(&input.0)])?;
    drop(input);
    let pt = ctx.path("agent-forward.out");
    let (exe_s, ct_s, pt_s) = (s(exe), s(&ct), s(&pt));
    // Both through env(1), so the two differ in the socket alone.
    let through = |socket: &str| {
        let var = format!("HYPERSEAL_AGENT_SOCK={socket}");
        let args = [var.as_str(), exe_s.as_str(), "decrypt", "-q", "-o", pt_s.as_str(), ct_s.as_str()];
        Job::new("env", &args).output(&pt)
    };
    let (via_forward, local) = (through(&fwd), through(&s(sock)));
    ctx.progress(
        "agent",
        format!("{} decrypt: through a forward, through the main socket", super::stats::fmt_size(size)),
    );
    let st = measure_alternating(&[&via_forward, &local], ctx.tmp.path(), ctx.reps(size))?;
    let _ = fs::remove_file(&ct);
    let _ = fs::remove_file(&pt);
    let _ = run(exe, &["agent", "forward", "--close", "bench-host"]);
    let mut sec = Section::new(
        format!("A {} decrypt from a remote host's forward, whole process", super::stats::fmt_size(size)),
        &["socket", "time", "÷ local"],
    );
    for (name, c) in
        ["agent forward bench-host (what ssh -R carries)", "the main socket (local)"].iter().zip(&st)
    {
        let cell = Cell::measured(c.wall.scale(1e3), "ms", with_spread(fmt_time(c.wall.median), &c.wall));
        sec.rows.push(vec![Cell::text(*name), cell, ratio(c.wall.median / st[1].wall.median)]);
    }
    out.sections.push(sec);
    Ok(st[0].wall.median / st[1].wall.median)
}
