//! `sops`: a repository of sops files moved to a new recipient set (an `age1pq1…` key in, an
//! X25519 key out, as a post-quantum migration does), two ways: `hyperseal rekey --sops
//! --recursive` and the loop sops users run, `xargs -n1 sops updatekeys -y` with the real sops.
//!
//! The repository is made by the real sops (YAML, JSON, dotenv and INI files in turn), then
//! moved back and forth between two `.sops.yaml` rule sets, so every run starts from the same
//! state and each direction is one sample; both contenders pay the same `sh` and `cp` of the
//! rules file. `SOPS_AGE_KEY_FILE` holds the identities for both (sops reads it, and so does
//! hyperseal).

use std::fs;
use std::path::Path;
use std::process::Command;

use anyhow::{bail, Result};
use hyperseal::recipient::{self, Kind};

use super::child::{which, Job};
use super::files::{ratio, s};
use super::report::{Cell, Chart, Section, TableReport};
use super::stats::{with_spread, Stats};
use super::{Ctx, Table};

pub struct Sops;

impl Table for Sops {
    fn id(&self) -> &'static str {
        "sops"
    }
    fn title(&self) -> &'static str {
        "sops repositories: hyperseal rekey --sops --recursive vs a sops updatekeys loop"
    }
    fn mirrors(&self) -> &'static str {
        "the way sops users re-key a repository: find … | xargs -n1 sops updatekeys -y, a process per file"
    }

    fn run(&self, ctx: &Ctx, out: &mut TableReport) -> Result<()> {
        let exe = ctx.exe()?;
        let Some(sops) = which("sops") else {
            out.note("sops is not on PATH (`make sops` builds sops 3.13.3): the table is empty.");
            return Ok(());
        };
        let gen = |kind| recipient::generate(kind).map_err(|e| anyhow::anyhow!("{e}"));
        let (kept, old, pq) = (gen(Kind::X25519)?, gen(Kind::X25519)?, gen(Kind::Hybrid)?);
        let keys = ctx.path("sops-keys.txt");
        let secrets = [&kept, &old, &pq].map(|k| k.secret.as_str().to_string());
        fs::write(&keys, format!("{}\n", secrets.join("\n")))?;
        let rules = |list: &[&str]| format!("creation_rules:\n  - age: \"{}\"\n", list.join(","));
        let (from, to) = (ctx.path("sops-from.yaml"), ctx.path("sops-to.yaml"));
        fs::write(&from, rules(&[&kept.public, &old.public]))?;
        fs::write(&to, rules(&[&kept.public, &pq.public]))?;

        let repo = ctx.path("sops-repo");
        let _ = fs::remove_dir_all(&repo);
        fs::create_dir_all(&repo)?;
        fs::copy(&from, repo.join(".sops.yaml"))?;
        let count = ((1000.0 * ctx.scale.min(1.0)).round() as usize).max(8);
        // Edition 2021, one thread here: the children inherit it.
        std::env::set_var("SOPS_AGE_KEY_FILE", &keys);
        ctx.progress("sops", format!("making {count} files with sops -e"));
        for i in 0..count {
            let (name, text) = match i % 4 {
                0 => (
                    format!("s{i}.yaml"),
                    format!("# service {i}\ndb:\n  user: app{i}\n  password: pw-{i}\n"),
                ),
                1 => (format!("s{i}.json"), format!("{{\"token\": \"t-{i}\", \"n\": {i}}}\n")),
                2 => (format!("s{i}.env"), format!("API_KEY=k-{i}\nDEBUG=false\n")),
                _ => (format!("s{i}.ini"), format!("[db]\npassword = p-{i}\n")),
            };
            fs::write(repo.join(&name), text)?;
            let o = Command::new(&sops).args(["-e", "-i", &name]).current_dir(&repo).output()?;
            if !o.status.success() {
                bail!("sops -e {name}: {}", String::from_utf8_lossy(&o.stderr).trim());
            }
        }

        // Each job first puts its rule set in place, then moves the repository to it.
        let hs_job = |rules: &Path| {
            let script =
                format!("cp '{}' .sops.yaml && '{}' rekey -q --sops --recursive .", s(rules), s(exe));
            in_repo(&repo, &script)
        };
        let sops_job = |rules: &Path| {
            let script = format!(
                "cp '{}' .sops.yaml && find . -type f ! -name .sops.yaml -print0 | xargs -0 -n1 '{}' updatekeys -y",
                s(rules),
                s(&sops)
            );
            in_repo(&repo, &script)
        };
        let hs = [hs_job(&to), hs_job(&from)];
        let loop_ = [sops_job(&to), sops_job(&from)];
        let rounds = if ctx.scale < 0.01 { 1 } else { 3 };
        let (mut h, mut l) = (Vec::new(), Vec::new());
        for round in 0..=rounds {
            ctx.progress("sops", format!("{count} files, round {round} of {rounds}"));
            for (jobs, samples) in [(&hs, &mut h), (&loop_, &mut l)] {
                for job in jobs.iter() {
                    let wall = job.run_once(ctx.tmp.path())?.wall;
                    if round > 0 {
                        samples.push(wall);
                    }
                }
            }
        }
        // Rotation as sops users do it, a `sops rotate -i` per file, against `--rotate` over the
        // tree: the rules stay (the first set), every file gets a fresh data key each run.
        let rot_hs = in_repo(&repo, &format!("'{}' rekey -q --sops --rotate --recursive .", s(exe)));
        let rot_sops = in_repo(
            &repo,
            &format!("find . -type f ! -name .sops.yaml -print0 | xargs -0 -n1 '{}' rotate -i", s(&sops)),
        );
        let (mut rh_s, mut rs_s) = (Vec::new(), Vec::new());
        for round in 0..=rounds.min(2) {
            ctx.progress("sops", format!("{count} files rotated, round {round} of {}", rounds.min(2)));
            for (job, samples) in [(&rot_hs, &mut rh_s), (&rot_sops, &mut rs_s)] {
                let wall = job.run_once(ctx.tmp.path())?.wall;
                if round > 0 {
                    samples.push(wall);
                }
            }
        }

        // The end state is the first rule set again: every file still opens with sops.
        let probe = Command::new(&sops).args(["-d", "s0.yaml"]).current_dir(&repo).output()?;
        if !probe.status.success() {
            bail!("sops -d after the runs: {}", String::from_utf8_lossy(&probe.stderr).trim());
        }
        let _ = fs::remove_dir_all(&repo);
        std::env::remove_var("SOPS_AGE_KEY_FILE");

        let (rh, rl) = (Stats::of(&h).rate(count as u64), Stats::of(&l).rate(count as u64));
        let mut sec = Section::new(
            format!("{count} sops files to a new recipient set: files per second"),
            &["how", "files/s", "÷ sops loop"],
        );
        for (name, r) in
            [("hyperseal rekey --sops --recursive", &rh), ("xargs -n1 sops updatekeys -y (sops 3.13.3)", &rl)]
        {
            let cell = Cell::measured(*r, "files/s", with_spread(format!("{:.0}", r.median), r));
            sec.rows.push(vec![Cell::text(name), cell, ratio(r.median / rl.median)]);
        }
        out.sections.push(sec);
        let (qh, qs) = (Stats::of(&rh_s).rate(count as u64), Stats::of(&rs_s).rate(count as u64));
        let mut rot = Section::new(
            format!(
                "{count} sops files rotated (a fresh data key, every value sealed again): files per second"
            ),
            &["how", "files/s", "÷ sops rotate loop"],
        );
        for (name, r) in [
            ("hyperseal rekey --sops --rotate --recursive", &qh),
            ("xargs -n1 sops rotate -i (sops 3.13.3)", &qs),
        ] {
            let cell = Cell::measured(*r, "files/s", with_spread(format!("{:.0}", r.median), r));
            rot.rows.push(vec![Cell::text(name), cell, ratio(r.median / qs.median)]);
        }
        out.sections.push(rot);
        let mut chart = Chart::new("sops files re-keyed to a new recipient set", "how", "files/s", false);
        chart.categories = vec!["hyperseal rekey --sops".into(), "sops updatekeys loop".into()];
        for (i, r) in [&rh, &rl].iter().enumerate() {
            chart.point("median files/s", (i + 1) as f64, r.median);
        }
        out.charts.push(chart);
        let x = rh.median / rl.median;
        let y = qh.median / qs.median;
        out.note(format!(
            "Files in {}: YAML with a comment, JSON, dotenv and INI in turn, one key group, made by sops -e; each run \
             moves them between {{kept X25519, old X25519}} and {{kept X25519, age1pq1…}} and back, one unlock for \
             hyperseal (the kept key, from SOPS_AGE_KEY_FILE). Goal: ≥ 50× the sops loop — {} ({x:.1}×). \
             Rotation keeps the recipients and gives each file a fresh data key, every value sealed again and \
             the mac checked and sealed again. Goal: ≥ 10× the sops rotate loop — {} ({y:.1}×).",
            ctx.tmp_note,
            if x >= 50.0 { "met" } else { "missed" },
            if y >= 10.0 { "met" } else { "missed" },
        ));
        Ok(())
    }
}

/// `sh -c SCRIPT` in the repository.
fn in_repo(repo: &Path, script: &str) -> Job {
    Job::new("sh", &["-c", &format!("cd '{}' && {script}", s(repo))])
}
