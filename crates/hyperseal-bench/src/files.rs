//! `files`: whole-process file encryption and decryption with the `hyperseal` binary itself, per
//! suite and recipient kind, against `cp` of the same file as the floor (no tool that reads and
//! writes the whole file can beat a copy).

use anyhow::Result;
use hyperseal::{Kind, Suite};

use super::child::Job;
use super::report::{Cell, Chart, Section, TableReport};
use super::stats::{fmt_mbps, fmt_size, with_spread};
use super::{Ctx, Table};

pub struct Files;

const SUITES: [Suite; 2] = [Suite::Aes256Gcm, Suite::ChaCha20Poly1305];
const KINDS: [Kind; 3] = [Kind::Hybrid, Kind::X25519, Kind::Mlkem1024];

impl Table for Files {
    fn id(&self) -> &'static str {
        "files"
    }
    fn title(&self) -> &'static str {
        "File encryption throughput (whole process) vs cp"
    }
    fn mirrors(&self) -> &'static str {
        "the headline figure of every published report: how fast a file goes through the tool (the Node hybrid library, nkCryptoTool)"
    }

    fn run(&self, ctx: &Ctx, out: &mut TableReport) -> Result<()> {
        let mut nominal: Vec<u64> = vec![1 << 20, 16 << 20, 256 << 20];
        if ctx.full {
            nominal.push(1 << 30);
        }
        out.note(format!(
            "Files in {}; each figure is the median of the runs after one warm-up.",
            ctx.tmp_note
        ));
        out.note("`hyperseal encrypt -q --suite S -r R -o OUT IN` and `hyperseal decrypt -q -i KEY -o OUT IN`, all cores.");
        let mut keys = Vec::new();
        for kind in KINDS {
            match ctx.cli_key(kind) {
                Ok(k) => keys.push(k),
                Err(e) => out.note(format!("kind {} skipped: {e}", kind.name())),
            }
        }
        let exe = ctx.exe()?;
        let mut sec = Section::new(
            "Throughput",
            &[
                "size",
                "suite",
                "kind",
                "encrypt MB/s",
                "decrypt MB/s",
                "cp MB/s",
                "encrypt ÷ cp",
                "decrypt ÷ cp",
            ],
        );
        let mut chart = Chart::new("File throughput vs size", "file size", "MB/s", true);
        for n in nominal {
            let size = ctx.size(n);
            let input = ctx.data_file("files.in", size)?;
            let (ct, pt, copy) = (ctx.path("files.ct"), ctx.path("files.pt"), ctx.path("files.cp"));
            let reps = ctx.reps(size);
            ctx.progress(self.id(), format!("{} cp", fmt_size(size)));
            let cp =
                Job::new("cp", &[&input.0.display().to_string(), &copy.display().to_string()]).output(&copy);
            let cp_rate = cp.measure(ctx.tmp.path(), reps)?.wall.rate(size);
            let _ = std::fs::remove_file(&copy);
            chart.point("cp", size as f64, cp_rate.median / 1e6);
            for suite in SUITES {
                for key in &keys {
                    let label = format!("{} {} {}", fmt_size(size), suite, key.kind.name());
                    ctx.progress(self.id(), format!("{label} encrypt"));
                    let enc = Job::new(
                        exe,
                        &[
                            "encrypt",
                            "-q",
                            "--suite",
                            suite.name(),
                            "-r",
                            &key.recipient,
                            "-o",
                            &s(&ct),
                            &s(&input.0),
                        ],
                    )
                    .output(&ct)
                    .measure(ctx.tmp.path(), reps)?
                    .wall
                    .rate(size);
                    ctx.progress(self.id(), format!("{label} decrypt"));
                    let dec =
                        Job::new(exe, &["decrypt", "-q", "-i", &s(&key.identity), "-o", &s(&pt), &s(&ct)])
                            .output(&pt)
                            .measure(ctx.tmp.path(), reps)?
                            .wall
                            .rate(size);
                    let _ = (std::fs::remove_file(&ct), std::fs::remove_file(&pt));
                    let name = format!("{} {}", suite, key.kind.name());
                    chart.point(&format!("{name} encrypt"), size as f64, enc.median / 1e6);
                    chart.point(&format!("{name} decrypt"), size as f64, dec.median / 1e6);
                    sec.rows.push(vec![
                        Cell::num(size as f64, "B", fmt_size(size)),
                        Cell::text(suite.name()),
                        Cell::text(key.kind.name()),
                        Cell::measured(enc.scale(1e-6), "MB/s", with_spread(fmt_mbps(enc.median), &enc)),
                        Cell::measured(dec.scale(1e-6), "MB/s", with_spread(fmt_mbps(dec.median), &dec)),
                        Cell::measured(
                            cp_rate.scale(1e-6),
                            "MB/s",
                            with_spread(fmt_mbps(cp_rate.median), &cp_rate),
                        ),
                        ratio(enc.median / cp_rate.median),
                        ratio(dec.median / cp_rate.median),
                    ]);
                }
            }
        }
        out.sections.push(sec);
        out.charts.push(chart);
        Ok(())
    }
}

pub fn s(p: &std::path::Path) -> String {
    p.display().to_string()
}

pub fn ratio(r: f64) -> Cell {
    Cell::num(r, "×", format!("{r:.2}×"))
}
