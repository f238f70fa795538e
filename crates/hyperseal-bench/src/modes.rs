//! `modes` (nkCryptoTool): ECC / PQC / Hybrid recipients × file sizes, encrypt and decrypt as whole
//! processes: wall time against the child's own CPU time (user + sys), and bytes per second.
//!
//! The same algorithms as nkCryptoTool's modes: ECC = P-256 ECDH (`p256`), PQC = ML-KEM-1024
//! (`mlkem1024`), Hybrid = P-256 + ML-KEM-768 (`p256-mlkem768`). Two rows of hyperseal's own
//! beside them, with no published counterpart: X25519 (age's classic key) and X-Wing (ML-KEM-768
//! + X25519, hyperseal's default hybrid).

use anyhow::Result;
use hyperseal::Kind;

use super::child::Job;
use super::files::s;
use super::report::{Cell, Chart, Section, TableReport};
use super::stats::{fmt_size, fmt_time, with_spread};
use super::{Ctx, Table};

pub struct Modes;

const MODES: [(&str, Kind); 5] = [
    ("ECC", Kind::P256),
    ("X25519", Kind::X25519),
    ("PQC", Kind::Mlkem1024),
    ("Hybrid", Kind::P256Mlkem768),
    ("X-Wing", Kind::Hybrid),
];

/// nkCryptoTool's published figures (16 × 4.7 GHz, another machine): per size label and mode,
/// encrypt (wall s, CPU s, B/s) and decrypt (wall s, CPU s, B/s).
#[allow(clippy::approx_constant)] // published figures, not π or τ
const PUBLISHED: [(&str, &str, [f64; 3], [f64; 3]); 12] = [
    ("1KB", "ECC", [16.58e-3, 0.73e-3, 61753.0], [15.74e-3, 1.65e-3, 65054.0]),
    ("1KB", "PQC", [17.70e-3, 1.09e-3, 57839.0], [16.29e-3, 0.77e-3, 62854.0]),
    ("1KB", "Hybrid", [20.50e-3, 1.86e-3, 49949.0], [19.91e-3, 1.51e-3, 51430.0]),
    ("1MB", "ECC", [30.99e-3, 0.94e-3, 33827000.0], [30.97e-3, 2.97e-3, 33853000.0]),
    ("1MB", "PQC", [31.14e-3, 1.41e-3, 33677000.0], [31.01e-3, 2.50e-3, 33809000.0]),
    ("1MB", "Hybrid", [30.99e-3, 3.30e-3, 33837000.0], [26.91e-3, 2.34e-3, 38972000.0]),
    ("10MB", "ECC", [35.81e-3, 12.80e-3, 292820000.0], [31.84e-3, 8.33e-3, 329290000.0]),
    ("10MB", "PQC", [35.09e-3, 10.04e-3, 298820000.0], [32.18e-3, 10.01e-3, 325890000.0]),
    ("10MB", "Hybrid", [32.81e-3, 15.31e-3, 319530000.0], [33.32e-3, 13.75e-3, 314730000.0]),
    ("6.7GB", "ECC", [11.32, 6.25, 593490000.0], [15.91, 9.38, 422340000.0]),
    ("6.7GB", "PQC", [14.45, 8.53, 465050000.0], [15.79, 9.02, 425390000.0]),
    ("6.7GB", "Hybrid", [8.27, 6.28, 812060000.0], [10.69, 7.33, 628480000.0]),
];

impl Table for Modes {
    fn id(&self) -> &'static str {
        "modes"
    }
    fn title(&self) -> &'static str {
        "ECC / PQC / Hybrid file encryption (nkCryptoTool's algorithms, plus X25519 and X-Wing): wall vs CPU time"
    }
    fn mirrors(&self) -> &'static str {
        "nkCryptoTool (its ECC / PQC / Hybrid benchmark)"
    }

    fn run(&self, ctx: &Ctx, out: &mut TableReport) -> Result<()> {
        // (nkCryptoTool's label, nominal bytes): the largest size stands in for its 6.7 GB row.
        let big: (&str, u64) = if ctx.full { ("6.7GB", 6_700_000_000) } else { ("6.7GB", 1 << 30) };
        let sizes = [("1KB", 1u64 << 10), ("1MB", 1 << 20), ("10MB", 10 << 20), big];
        out.note(format!(
            "Whole processes (`hyperseal encrypt/decrypt -q`, default suite, all cores) on files in {}. CPU = user + sys of \
             that child (wait4). nkCryptoTool columns: its published figures, from another machine.",
            ctx.tmp_note
        ));
        if !ctx.full {
            out.note(format!(
                "Quick profile: the largest size is {} (nkCryptoTool's is 6.7 GB; `--full` runs 6.7 GB).",
                fmt_size(ctx.size(big.1))
            ));
        } else {
            out.note("Full profile: the 6.7 GB decryption writes to stdout → /dev/null, so tmpfs holds only two copies.");
        }
        let mut keys = Vec::new();
        for (mode, kind) in MODES {
            match ctx.cli_key(kind) {
                Ok(k) => keys.push((mode, k)),
                Err(e) => out.note(format!("{mode} ({}) skipped: {e}", kind.name())),
            }
        }
        let columns = [
            "size",
            "mode",
            "wall",
            "CPU (user+sys)",
            "CPU ÷ wall",
            "bytes/s",
            "nkCryptoTool wall",
            "nkCryptoTool CPU",
            "nkCryptoTool bytes/s",
        ];
        let mut secs = [Section::new("Encryption", &columns), Section::new("Decryption", &columns)];
        let mut chart = Chart::new("Whole-file throughput vs size", "file size", "MB/s", true);
        let exe = ctx.exe()?;
        for (label, nominal) in sizes {
            let size = ctx.size(nominal);
            let input = ctx.data_file("modes.in", size)?;
            let (ct, pt) = (ctx.path("modes.ct"), ctx.path("modes.pt"));
            let reps = if size < 1 << 20 && ctx.scale >= 0.01 { ctx.reps(size) * 3 } else { ctx.reps(size) };
            for (mode, key) in &keys {
                ctx.progress(self.id(), format!("{} {mode} encrypt", fmt_size(size)));
                let enc =
                    Job::new(exe, &["encrypt", "-q", "-r", &key.recipient, "-o", &s(&ct), &s(&input.0)])
                        .output(&ct)
                        .measure(ctx.tmp.path(), reps)?;
                ctx.progress(self.id(), format!("{} {mode} decrypt", fmt_size(size)));
                let mut dec_job =
                    Job::new(exe, &["decrypt", "-q", "-i", &s(&key.identity), "-o", &s(&pt), &s(&ct)]);
                if size > 4 << 30 {
                    dec_job = Job::new(exe, &["decrypt", "-q", "-i", &s(&key.identity), &s(&ct)]);
                }
                let dec = dec_job.output(&pt).measure(ctx.tmp.path(), reps)?;
                let _ = (std::fs::remove_file(&ct), std::fs::remove_file(&pt));
                let theirs = PUBLISHED.iter().find(|r| r.0 == label && r.1 == *mode);
                for (i, (m, op)) in [(&enc, "encrypt"), (&dec, "decrypt")].into_iter().enumerate() {
                    let rate = m.wall.rate(size);
                    chart.point(&format!("{mode} {op}"), size as f64, rate.median / 1e6);
                    let theirs = theirs.map(|r| if i == 0 { r.2 } else { r.3 });
                    let size_cell = if label == "6.7GB" && nominal != 6_700_000_000 || ctx.scale != 1.0 {
                        format!("{} (nkCryptoTool: {label})", fmt_size(size))
                    } else {
                        label.replace("KB", " KB").replace("MB", " MB").replace("GB", " GB")
                    };
                    secs[i].rows.push(vec![
                        Cell::num(size as f64, "B", size_cell),
                        Cell::text(*mode),
                        Cell::measured(m.wall, "s", with_spread(fmt_time(m.wall.median), &m.wall)),
                        Cell::measured(m.cpu, "s", with_spread(fmt_time(m.cpu.median), &m.cpu)),
                        Cell::num(
                            m.cpu.median / m.wall.median,
                            "×",
                            format!("{:.2}", m.cpu.median / m.wall.median),
                        ),
                        Cell::measured(rate, "B/s", format!("{:.0}", rate.median)),
                        theirs.map_or_else(Cell::none, |f| Cell::num(f[0], "s", fmt_time(f[0]))),
                        theirs.map_or_else(Cell::none, |f| Cell::num(f[1], "s", fmt_time(f[1]))),
                        theirs.map_or_else(Cell::none, |f| Cell::num(f[2], "B/s", format!("{:.0}", f[2]))),
                    ]);
                }
            }
        }
        for (label, mode, enc, _) in PUBLISHED {
            let x = match label {
                "1KB" => 1024.0,
                "1MB" => 1048576.0,
                "10MB" => 10485760.0,
                _ => 6.7e9,
            };
            chart.point(&format!("nkCryptoTool {mode} encrypt (published)"), x, enc[2] / 1e6);
        }
        out.sections.extend(secs);
        out.charts.push(chart);
        Ok(())
    }
}
