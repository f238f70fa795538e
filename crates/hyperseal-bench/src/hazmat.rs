//! `hazmat`: the legacy modes as whole processes — `hyperseal hazmat encrypt|decrypt` against
//! `openssl enc` on the same file, in the same run, alternating — for every AES and SM4 mode the
//! toolkit offers: wall time, peak RSS and MB/s. Both tools read and write files in the scratch
//! directory, so the figures include start-up, I/O and (for hyperseal) its threads.
//!
//! Before timing, the two tools' ciphertexts are compared byte for byte: a fast wrong answer
//! would not count.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use anyhow::{bail, Context as _, Result};
use hyperseal_toolkit::hazmat::{Block, Cipher};

use super::child::{measure_alternating, which, ChildStats, Job};
use super::files::{ratio, s};
use super::report::{Cell, Chart, Section, TableReport};
use super::stats::{fmt_mbps, fmt_size, fmt_time, with_spread};
use super::{Ctx, Table};

pub struct Hazmat;

impl Table for Hazmat {
    fn id(&self) -> &'static str {
        "hazmat"
    }
    fn title(&self) -> &'static str {
        "Legacy AES and SM4 modes, whole process: hyperseal hazmat vs openssl enc"
    }
    fn mirrors(&self) -> &'static str {
        "the Go SM4 report's ECB and CBC and @ldesign/crypto's AES-CBC/CTR, as file commands against `openssl enc`"
    }

    fn run(&self, ctx: &Ctx, out: &mut TableReport) -> Result<()> {
        let Some(openssl) = which("openssl") else {
            out.note("`openssl` is not on PATH: no hazmat comparison");
            return Ok(());
        };
        let exe = ctx.exe()?;
        // SM4's targets are stated for 256 MiB: smaller files let start-up weigh on CTR's ratio.
        let (aes_size, sm4_size) = if ctx.full {
            (ctx.size(1 << 30), ctx.size(1 << 30))
        } else {
            (ctx.size(256 << 20), ctx.size(256 << 20))
        };
        out.note(format!(
            "`hyperseal hazmat encrypt|decrypt --algo A --key K [--iv IV] -o OUT IN` vs `openssl enc [-d] -A -K K [-iv IV] \
             -in IN -out OUT` on a {} (AES) / {} (SM4) file in {}; the two alternate run by run, after one warm-up \
             each. \"hyperseal ÷ openssl\" = hyperseal's MB/s ÷ OpenSSL's. Decryption reads hyperseal's ciphertext, \
             which is first checked to equal OpenSSL's byte for byte.",
            fmt_size(aes_size),
            fmt_size(sm4_size),
            ctx.tmp_note
        ));
        out.note(
            "hyperseal streams in 4 MiB batches, reading and writing on their own threads; CTR, ECB and CBC decryption \
             split each batch across cores, CBC encryption is serial by construction. Targets: at least OpenSSL's \
             speed for every AES mode and for SM4-CBC encryption (constant time), at least 4× for SM4-CTR and \
             SM4-ECB on CPUs with VAES and 10× for SM4-CTR with GFNI + AVX-512; peak RSS ≤ 64 MiB.",
        );
        out.note(format!(
            "SM4 backend on this CPU: `{}` (CBC encryption runs one block at a time: its latency, not the backend's \
             width, sets the speed).",
            sm4_simd::backend_name()
        ));
        let columns = [
            "cipher",
            "operation",
            "hyperseal wall",
            "hyperseal peak RSS",
            "hyperseal MB/s",
            "openssl wall",
            "openssl peak RSS",
            "openssl MB/s",
            "hyperseal ÷ openssl",
        ];
        let mut sec = Section::new("Whole process, same file, same run", &columns);
        let mut chart = Chart::new("Legacy modes: MB/s by cipher", "cipher", "MB/s", false);
        chart.categories = Cipher::ALL.iter().map(|c| c.name().to_string()).collect();
        let key_hex = "5a".repeat(32);
        let iv_hex = "a5".repeat(16);
        let mut last_size = 0;
        let mut input = None;
        for (i, c) in Cipher::ALL.into_iter().enumerate() {
            let size = if c.block == Block::Sm4 { sm4_size } else { aes_size };
            if size != last_size {
                drop(input.take()); // delete the previous input first (tmpfs is memory)
                input = Some(ctx.data_file("hazmat.in", size)?);
                last_size = size;
            }
            let inp = s(&input.as_ref().expect("input written").0);
            let (ct, ct2, pt) = (ctx.path("hazmat.ct"), ctx.path("hazmat.ct2"), ctx.path("hazmat.pt"));
            let key = &key_hex[..2 * c.key_len];
            let mut ours = vec!["--algo", c.name(), "--key", key];
            let mut theirs = vec![format!("-{}", c.name()), "-K".into(), key.to_string()];
            if c.needs_iv() {
                ours.extend(["--iv", &iv_hex]);
                theirs.extend(["-iv".into(), iv_hex.clone()]);
            }
            let theirs: Vec<&str> = theirs.iter().map(String::as_str).collect();
            let hs_enc = Job::new(exe, &[&["hazmat", "encrypt"], &ours[..], &["-o", &s(&ct), &inp]].concat())
                .output(&ct);
            let os_enc =
                Job::new(&openssl, &[&["enc"], &theirs[..], &["-in", &inp, "-out", &s(&ct2)]].concat())
                    .output(&ct2);
            hs_enc.run_once(ctx.tmp.path())?;
            os_enc.run_once(ctx.tmp.path())?;
            same_bytes(&ct, &ct2)
                .with_context(|| format!("{c}: hyperseal and openssl ciphertexts differ"))?;
            let _ = std::fs::remove_file(&ct2);
            let hs_dec =
                Job::new(exe, &[&["hazmat", "decrypt"], &ours[..], &["-o", &s(&pt), &s(&ct)]].concat())
                    .output(&pt);
            let os_dec = Job::new(
                &openssl,
                &[&["enc", "-d"], &theirs[..], &["-in", &s(&ct), "-out", &s(&pt)]].concat(),
            )
            .output(&pt);
            let reps = ctx.reps(size);
            for (op, hs, os) in [("encrypt", &hs_enc, &os_enc), ("decrypt", &hs_dec, &os_dec)] {
                ctx.progress(self.id(), format!("{} {c} {op}: hyperseal and openssl enc", fmt_size(size)));
                let m = measure_alternating(&[hs, os], ctx.tmp.path(), reps)?;
                if op == "decrypt" && std::fs::metadata(&pt)?.len() != size {
                    bail!("{c}: decryption gave {} bytes, expected {size}", std::fs::metadata(&pt)?.len());
                }
                let (h, o) = (m[0].wall.rate(size), m[1].wall.rate(size));
                chart.point(&format!("hyperseal {op}"), (i + 1) as f64, h.median / 1e6);
                chart.point(&format!("openssl enc {op}"), (i + 1) as f64, o.median / 1e6);
                let mut row = vec![Cell::text(c.name()), Cell::text(op)];
                for (st, rate) in [(&m[0], h), (&m[1], o)] {
                    row.extend(cells(st, rate));
                }
                row.push(ratio(h.median / o.median));
                sec.rows.push(row);
            }
            let _ = (std::fs::remove_file(&ct), std::fs::remove_file(&pt));
        }
        out.sections.push(sec);
        out.charts.push(chart);
        Ok(())
    }
}

/// Wall, peak RSS and MB/s of one tool.
fn cells(m: &ChildStats, rate: super::stats::Stats) -> [Cell; 3] {
    let mib = m.max_rss_kib as f64 / 1024.0;
    [
        Cell::measured(m.wall, "s", with_spread(fmt_time(m.wall.median), &m.wall)),
        Cell::num(mib, "MiB", format!("{mib:.1} MiB")),
        Cell::measured(rate.scale(1e-6), "MB/s", with_spread(fmt_mbps(rate.median), &rate)),
    ]
}

/// Whether two files hold the same bytes (read in 1 MiB pieces, not into memory).
fn same_bytes(a: &Path, b: &Path) -> Result<()> {
    let (mut fa, mut fb) = (File::open(a)?, File::open(b)?);
    if fa.metadata()?.len() != fb.metadata()?.len() {
        bail!("lengths {} and {}", fa.metadata()?.len(), fb.metadata()?.len());
    }
    let (mut ba, mut bb) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    loop {
        let n = fa.read(&mut ba)?;
        if n == 0 {
            return Ok(());
        }
        fb.read_exact(&mut bb[..n])?;
        if ba[..n] != bb[..n] {
            bail!("contents differ");
        }
    }
}
