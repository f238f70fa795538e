//! `peers`: the same file through hyperseal and whichever peer tools are on PATH (age, rage,
//! openssl, gpg), with `cp` as the floor: wall, CPU, peak RSS, MB/s and the ratio to hyperseal.

use std::path::Path;

use anyhow::{bail, Result};
use hyperseal::Kind;

use super::child::{which, Job};
use super::files::{ratio, s};
use super::report::{Cell, Chart, Section, TableReport};
use super::stats::{fmt_mbps, fmt_size, fmt_time, with_spread};
use super::{Ctx, Table};

pub struct Peers;

/// A tool under test: how to encrypt `IN` to `CT` and decrypt `CT` to `PT`.
struct Tool {
    name: String,
    enc: Job,
    dec: Option<Job>,
}

impl Table for Peers {
    fn id(&self) -> &'static str {
        "peers"
    }
    fn title(&self) -> &'static str {
        "hyperseal vs age, rage, openssl, gpg (same file, whole process)"
    }
    fn mirrors(&self) -> &'static str {
        "the peer comparisons of @ldesign/crypto and nkCryptoTool, with the file tools people actually use"
    }

    fn run(&self, ctx: &Ctx, out: &mut TableReport) -> Result<()> {
        let size = ctx.size(if ctx.full { 1 << 30 } else { 256 << 20 });
        let input = ctx.data_file("peers.in", size)?;
        let (inp, ct, pt) = (s(&input.0), ctx.path("peers.ct"), ctx.path("peers.pt"));
        let (cts, pts) = (s(&ct), s(&pt));
        out.note(format!("One {} file in {}; output files in the same place.", fmt_size(size), ctx.tmp_note));
        out.note("\"vs hyperseal\" = that tool's MB/s ÷ hyperseal's (native, hybrid, aes-256-gcm) MB/s for the same operation.");
        out.note("Peak RSS is the child's own ru_maxrss (wait4); for gpg it excludes gpg-agent.");

        let mut tools = Vec::new();
        let exe = ctx.exe()?;
        let hybrid = ctx.cli_key(Kind::Hybrid).map_err(anyhow::Error::msg)?;
        let enc = Job::new(
            exe,
            &["encrypt", "-q", "--suite", "aes-256-gcm", "-r", &hybrid.recipient, "-o", &cts, &inp],
        );
        let dec = Job::new(exe, &["decrypt", "-q", "-i", &s(&hybrid.identity), "-o", &pts, &cts]);
        tools.push(Tool { name: "hyperseal (hybrid, aes-256-gcm)".into(), enc, dec: Some(dec) });

        let x = ctx.cli_key(Kind::X25519).map_err(anyhow::Error::msg)?;
        let enc = Job::new(exe, &["encrypt", "-q", "--format", "age", "-r", &x.recipient, "-o", &cts, &inp]);
        let dec = Job::new(exe, &["decrypt", "-q", "-i", &s(&x.identity), "-o", &pts, &cts]);
        match enc.clone().output(&ct).run_once(ctx.tmp.path()) {
            Ok(_) => tools.push(Tool { name: "hyperseal --format age (X25519)".into(), enc, dec: Some(dec) }),
            Err(e) => out.note(format!("hyperseal --format age left out: {e}")),
        }

        let mut missing = Vec::new();
        match (which("age"), which("age-keygen")) {
            (Some(age), Some(keygen)) => {
                let key = ctx.path("age.key");
                let _ = std::fs::remove_file(&key);
                Job::new(&keygen, &["-o", &s(&key)]).run_once(ctx.tmp.path())?;
                let r = std::process::Command::new(&keygen).args(["-y", &s(&key)]).output()?;
                let recipient = String::from_utf8_lossy(&r.stdout).trim().to_string();
                if recipient.is_empty() {
                    bail!("age-keygen -y printed no recipient");
                }
                tools.push(Tool {
                    name: "age (X25519)".into(),
                    enc: Job::new(&age, &["-r", &recipient, "-o", &cts, &inp]),
                    dec: Some(Job::new(&age, &["-d", "-i", &s(&key), "-o", &pts, &cts])),
                });
                if let Some(rage) = which("rage") {
                    tools.push(Tool {
                        name: "rage (X25519)".into(),
                        enc: Job::new(&rage, &["-e", "-r", &recipient, "-o", &cts, &inp]),
                        dec: Some(Job::new(&rage, &["-d", "-i", &s(&key), "-o", &pts, &cts])),
                    });
                } else {
                    missing.push("rage");
                }
            }
            _ => missing.extend(["age", "rage"]),
        }
        if let Some(openssl) = which("openssl") {
            let common = ["-aes-256-ctr", "-pbkdf2", "-pass", "pass:x"];
            let mut e = vec!["enc"];
            e.extend(common);
            let mut d = vec!["enc", "-d"];
            d.extend(common);
            tools.push(Tool {
                name: "openssl enc -aes-256-ctr -pbkdf2".into(),
                enc: Job::new(&openssl, &[&e[..], &["-in", &inp, "-out", &cts]].concat()),
                dec: Some(Job::new(&openssl, &[&d[..], &["-in", &cts, "-out", &pts]].concat())),
            });
        } else {
            missing.push("openssl");
        }
        let gnupg_home = ctx.path("gnupg");
        if let Some(gpg) = which("gpg") {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::create_dir_all(&gnupg_home)?;
            std::fs::set_permissions(&gnupg_home, std::fs::Permissions::from_mode(0o700))?;
            let home = s(&gnupg_home);
            let common = [
                "--homedir",
                &home,
                "--batch",
                "--yes",
                "--quiet",
                "--passphrase",
                "x",
                "--pinentry-mode",
                "loopback",
            ];
            let mut e = common.to_vec();
            e.extend(["--symmetric", "--cipher-algo", "AES256", "-z", "0", "-o", &cts, &inp]);
            let mut d = common.to_vec();
            d.extend(["-o", &pts, "-d", &cts]);
            tools.push(Tool {
                name: "gpg --symmetric AES256 -z 0".into(),
                enc: Job::new(&gpg, &e),
                dec: Some(Job::new(&gpg, &d)),
            });
        } else {
            missing.push("gpg");
        }
        tools.push(Tool { name: "cp (floor)".into(), enc: Job::new("cp", &[&inp, &cts]), dec: None });
        if !missing.is_empty() {
            out.note(format!("Not on PATH, left out: {}.", missing.join(", ")));
        }

        let reps = ctx.reps(size);
        let columns = ["tool", "operation", "wall", "CPU (user+sys)", "peak RSS", "MB/s", "vs hyperseal"];
        let mut sec = Section::new(format!("{} file", fmt_size(size)), &columns);
        let mut chart = Chart::new("Throughput by tool", "operation", "MB/s", false);
        chart.categories = vec!["encrypt".into(), "decrypt".into()];
        let mut base = [0.0f64; 2];
        for tool in &tools {
            let jobs = [Some(&tool.enc), tool.dec.as_ref()];
            for (i, job) in jobs.into_iter().enumerate() {
                let Some(job) = job else { continue };
                let op = if tool.dec.is_none() {
                    "copy"
                } else if i == 0 {
                    "encrypt"
                } else {
                    "decrypt"
                };
                ctx.progress(self.id(), format!("{} {op}", tool.name));
                let target = if i == 0 { &ct } else { &pt };
                let m = match job.clone().output(target).measure(ctx.tmp.path(), reps) {
                    Ok(m) => m,
                    Err(e) => {
                        out.note(format!("{} {op} failed: {e}", tool.name));
                        continue;
                    }
                };
                if i == 1 {
                    check_len(&pt, size, &tool.name)?;
                }
                let rate = m.wall.rate(size);
                if base[i] == 0.0 {
                    base[i] = rate.median;
                }
                chart.point(&tool.name, (i + 1) as f64, rate.median / 1e6);
                sec.rows.push(vec![
                    Cell::text(tool.name.clone()),
                    Cell::text(op),
                    Cell::measured(m.wall, "s", with_spread(fmt_time(m.wall.median), &m.wall)),
                    Cell::measured(m.cpu, "s", with_spread(fmt_time(m.cpu.median), &m.cpu)),
                    Cell::num(
                        m.max_rss_kib as f64 / 1024.0,
                        "MiB",
                        format!("{:.1} MiB", m.max_rss_kib as f64 / 1024.0),
                    ),
                    Cell::measured(rate.scale(1e-6), "MB/s", with_spread(fmt_mbps(rate.median), &rate)),
                    ratio(rate.median / base[i]),
                ]);
            }
            // Decrypting needs this tool's own ciphertext: measure decryption right after.
        }
        let _ = (std::fs::remove_file(&ct), std::fs::remove_file(&pt));
        if which("gpg").is_some() {
            let _ = std::process::Command::new("gpgconf")
                .args(["--homedir", &s(&gnupg_home), "--kill", "gpg-agent"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status();
        }
        out.sections.push(sec);
        out.charts.push(chart);
        Ok(())
    }
}

fn check_len(p: &Path, size: u64, tool: &str) -> Result<()> {
    let got = std::fs::metadata(p)?.len();
    if got != size {
        bail!("{tool} decrypted {got} bytes, expected {size}");
    }
    Ok(())
}
