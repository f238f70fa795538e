//! `rust-age`: 1 GiB through the Rust age API's `Encryptor`/`Decryptor` with 8 KiB `io::copy`
//! reads and writes, as Rust programs use them: hyperseal-age against the real age 0.12.1
//! crate. Both are one program (crates/hyperseal-age/peer/copy-bench), built twice by `make
//! age-crate-bench` in scratch crates outside the workspace (the real age cannot share the
//! workspace's lock): against age 0.12.1, and unchanged against hyperseal-age through the
//! `age` package's `[patch.crates-io]`. Runs alternate, so load changes hit both alike. The
//! program prints each direction's seconds; only the library is timed (memory in, `io::sink`
//! out). When the programs are not built, the table is a note.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Context as _, Result};
use serde_json::Value;

use super::files::ratio;
use super::report::{Cell, Section, TableReport};
use super::stats::{fmt_mbps, fmt_size, with_spread, Stats};
use super::{Ctx, Table};

pub struct RustAge;

/// Nominal bytes per run.
const SIZE: u64 = 1 << 30;

/// One run of one program: (encrypt seconds, decrypt seconds).
fn run(program: &PathBuf, size: u64) -> Result<(f64, f64)> {
    let o = Command::new(program)
        .arg(size.to_string())
        .output()
        .with_context(|| format!("{}", program.display()))?;
    if !o.status.success() {
        bail!("{}: {}", program.display(), String::from_utf8_lossy(&o.stderr).trim());
    }
    let v: Value = serde_json::from_slice(&o.stdout).context("the program's JSON")?;
    match (v["encrypt_s"].as_f64(), v["decrypt_s"].as_f64()) {
        (Some(e), Some(d)) => Ok((e, d)),
        _ => bail!("{}: no timings in {v}", program.display()),
    }
}

impl Table for RustAge {
    fn id(&self) -> &'static str {
        "rust-age"
    }
    fn title(&self) -> &'static str {
        "rust age: the age crate's Encryptor/Decryptor, hyperseal-age vs age 0.12.1"
    }
    fn mirrors(&self) -> &'static str {
        "Rust programs on the age crate: io::copy (8 KiB) through Encryptor::wrap_output and Decryptor::decrypt"
    }

    fn run(&self, ctx: &Ctx, out: &mut TableReport) -> Result<()> {
        let bin = ctx.repo.join(".tools/age-crate/bin");
        let (real, ours) = (bin.join("age-copy-real"), bin.join("age-copy-hyperseal"));
        if !real.is_file() || !ours.is_file() {
            out.note(format!(
                "{} missing (`make age-crate-bench` builds both programs): the table is empty.",
                bin.display()
            ));
            return Ok(());
        }
        let size = ctx.size(SIZE);
        let reps = ctx.reps(size);
        ctx.progress(self.id(), format!("{} through each, {reps} runs, alternating", fmt_size(size)));
        let (mut theirs, mut mine) = ((vec![], vec![]), (vec![], vec![]));
        for _ in 0..reps {
            let (e, d) = run(&real, size)?;
            theirs.0.push(e);
            theirs.1.push(d);
            let (e, d) = run(&ours, size)?;
            mine.0.push(e);
            mine.1.push(d);
        }
        let mut sec = Section::new(
            format!("{} through Encryptor/Decryptor, 8 KiB io::copy", fmt_size(size)),
            &["operation", "age 0.12.1", "hyperseal-age", "age ÷ hyperseal-age"],
        );
        for (op, t, m) in [("encrypt", &theirs.0, &mine.0), ("decrypt", &theirs.1, &mine.1)] {
            let (t, m) = (Stats::of(t), Stats::of(m));
            let rate = |s: &Stats| {
                let r = s.rate(size);
                Cell::measured(r, "B/s", with_spread(fmt_mbps(r.median), &r))
            };
            sec.rows.push(vec![Cell::text(op), rate(&t), rate(&m), ratio(t.median / m.median)]);
        }
        out.sections.push(sec);
        out.note(format!(
            "{} per run, median of {reps} alternating runs ({} cores); each figure is the library alone \
             (plaintext from memory, output to io::sink; the file decrypted from memory). Both programs are one \
             source; hyperseal-age's is built through [patch.crates-io] age = {{ path = crates/hyperseal-age/age }}.",
            fmt_size(size),
            ctx.threads
        ));
        Ok(())
    }
}
