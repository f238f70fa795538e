//! `sm4` (the Go SM4 report): SM4 ECB vs CBC at 1 KB / 1 MB / 10 MB, plus CTR and GCM, on every backend of
//! `sm4_simd` this CPU runs, beside OpenSSL's SM4 (`openssl speed`) and the Go SM4 report's figures; and
//! `hyperseal encrypt --suite sm4-gcm` of a file against `cp`.

use std::process::Command;

use anyhow::{ensure, Result};
use hyperseal::Kind;
use sm4_simd::aes_gcm::AeadInOut;
use sm4_simd::cipher::array::Array;
use sm4_simd::cipher::block_padding::Pkcs7;
use sm4_simd::cipher::consts::U16;
use sm4_simd::cipher::{BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt, InnerIvInit, StreamCipher};
use sm4_simd::{Backend, Sm4, Sm4CbcDec, Sm4CbcEnc, Sm4Ctr, Sm4Gcm};

use super::child::{which, Job};
use super::files::{ratio, s};
use super::report::{Cell, Chart, Section, TableReport};
use super::stats::{fmt_mbps, fmt_size, fmt_time, time_alternating, with_spread, Stats};
use super::{Ctx, Table};

pub struct Sm4Table;

/// The Go SM4 report's published figures (Go 1.21, tjfoc/gmsm, i7-11800H — another machine): (label, bytes, ECB encrypt s,
/// CBC encrypt s, ECB MB/s, CBC MB/s).
const PUBLISHED: [(&str, u64, f64, f64, f64, f64); 3] = [
    ("1 KB", 1 << 10, 8.2e-6, 9.7e-6, 122.0, 103.0),
    ("1 MB", 1 << 20, 7.8e-3, 9.3e-3, 128.0, 107.0),
    ("10 MB", 10 << 20, 78e-3, 94e-3, 127.0, 106.0),
];

const MODES: [&str; 5] = ["ECB encrypt", "CBC encrypt", "CBC decrypt", "CTR", "GCM seal"];

fn blocks(d: &mut [u8]) -> &mut [Array<u8, U16>] {
    Array::slice_as_chunks_mut(d).0
}

impl Table for Sm4Table {
    fn id(&self) -> &'static str {
        "sm4"
    }
    fn title(&self) -> &'static str {
        "SM4: ECB vs CBC (and CTR, GCM) per backend, vs OpenSSL"
    }
    fn mirrors(&self) -> &'static str {
        "the Go SM4 report (tjfoc/gmsm SM4 ECB vs CBC, 1 KB / 1 MB / 10 MB)"
    }

    fn run(&self, ctx: &Ctx, out: &mut TableReport) -> Result<()> {
        let test = ctx.scale < 0.01;
        // Every backend the CPU runs, the opt-in GFNI ones included.
        let backends: Vec<Backend> = Backend::ALL.into_iter().filter(|b| b.is_supported()).collect();
        out.note(format!(
            "`sm4_simd::Sm4::with_backend` on one thread for each backend this CPU supports ({}; default: {}), \
             through the crate's mode types: ECB without padding on whole blocks, CBC with PKCS#7, CTR, GCM \
             (12-byte nonce, detached tag). Every figure is the median of the runs; modes alternate.",
            backends.iter().map(|b| b.name()).collect::<Vec<_>>().join(", "),
            sm4_simd::backend_name()
        ));
        out.note("Go columns are the Go SM4 report's published figures (tjfoc/gmsm, Go 1.21, i7-11800H: another machine).");
        let key = [0x42u8; 16];
        let iv = [0x24u8; 16];
        let nonce = [0x11u8; 12];
        let mut sec = Section::new(
            "Time per operation and throughput",
            &["size", "backend", "mode", "time", "MB/s", "Go report time", "Go report MB/s", "÷ Go report"],
        );
        let mut chart = Chart::new("SM4 throughput by backend and mode", "size", "MB/s", true);
        for (label, nominal, ecb_s, cbc_s, ecb_mbs, cbc_mbs) in PUBLISHED {
            let size = (ctx.size(nominal).div_ceil(16) * 16) as usize;
            let reps = ctx.reps_small(size as u64);
            // Small inputs: time a batch per sample so the clock's resolution does not matter.
            let batch = if test { 1 } else { ((1usize << 20) / size).clamp(1, 1000) };
            let name = if ctx.scale == 1.0 { label.to_string() } else { fmt_size(size as u64) };
            for &b in &backends {
                let sm4 = Sm4::with_backend(b, &key).expect("supported backend");
                ctx.progress(self.id(), format!("{name} {}", b.name()));
                let pt = vec![0x5au8; size];
                let ct = Sm4CbcEnc::inner_iv_init(sm4.clone(), (&iv).into()).encrypt_padded_vec::<Pkcs7>(&pt);
                let back = Sm4CbcDec::inner_iv_init(sm4.clone(), (&iv).into())
                    .decrypt_padded_vec::<Pkcs7>(&ct)
                    .map_err(|_| anyhow::anyhow!("SM4-CBC round trip failed"))?;
                ensure!(back == pt, "SM4-CBC round trip on {}", b.name());
                let (mut e_buf, mut c_buf, mut g_buf) = (pt.clone(), pt.clone(), pt.clone());
                let (mut ecb, mut cbc_e, mut cbc_d, mut ctr, mut gcm) = (
                    || (0..batch).for_each(|_| sm4.encrypt_blocks(blocks(&mut e_buf))),
                    || {
                        (0..batch).for_each(|_| {
                            std::hint::black_box(
                                Sm4CbcEnc::inner_iv_init(sm4.clone(), (&iv).into())
                                    .encrypt_padded_vec::<Pkcs7>(&pt),
                            );
                        })
                    },
                    || {
                        (0..batch).for_each(|_| {
                            std::hint::black_box(
                                Sm4CbcDec::inner_iv_init(sm4.clone(), (&iv).into())
                                    .decrypt_padded_vec::<Pkcs7>(&ct)
                                    .ok(),
                            );
                        })
                    },
                    || {
                        (0..batch).for_each(|_| {
                            Sm4Ctr::from_core(InnerIvInit::inner_iv_init(sm4.clone(), (&iv).into()))
                                .apply_keystream(&mut c_buf)
                        })
                    },
                    || {
                        (0..batch).for_each(|_| {
                            std::hint::black_box(
                                Sm4Gcm::from(sm4.clone())
                                    .encrypt_inout_detached((&nonce).into(), b"", g_buf.as_mut_slice().into())
                                    .ok(),
                            );
                        })
                    },
                );
                let t: Vec<Stats> =
                    time_alternating(reps, &mut [&mut ecb, &mut cbc_e, &mut cbc_d, &mut ctr, &mut gcm])
                        .iter()
                        .map(|s| s.scale(1.0 / batch as f64))
                        .collect();
                for (mode, st) in MODES.iter().zip(&t) {
                    let rate = st.rate(size as u64);
                    let theirs = match *mode {
                        "ECB encrypt" => Some((ecb_s, ecb_mbs)),
                        "CBC encrypt" => Some((cbc_s, cbc_mbs)),
                        _ => None,
                    };
                    chart.point(&format!("{} {mode}", b.name()), size as f64, rate.median / 1e6);
                    let mut row = vec![
                        Cell::num(size as f64, "B", name.clone()),
                        Cell::text(b.name()),
                        Cell::text(*mode),
                        Cell::measured(*st, "s", with_spread(fmt_time(st.median), st)),
                        Cell::measured(rate.scale(1e-6), "MB/s", with_spread(fmt_mbps(rate.median), &rate)),
                    ];
                    match theirs {
                        // The report's figures belong to the nominal sizes only.
                        Some((secs, mbs)) if ctx.scale == 1.0 => row.extend([
                            Cell::num(secs, "s", fmt_time(secs)),
                            Cell::num(mbs, "MB/s", format!("{mbs:.0} MB/s")),
                            ratio(rate.median / 1e6 / mbs),
                        ]),
                        _ => row.extend([Cell::none(), Cell::none(), Cell::none()]),
                    }
                    sec.rows.push(row);
                }
            }
        }
        out.sections.push(sec);
        openssl(ctx, test, out);
        file_row(ctx, out)?;
        out.charts.push(chart);
        Ok(())
    }
}

/// OpenSSL's SM4 through `openssl speed -evp`, one second per figure.
fn openssl(ctx: &Ctx, test: bool, out: &mut TableReport) {
    if which("openssl").is_none() {
        out.note("`openssl` is not on PATH: no OpenSSL SM4 figures");
        return;
    }
    let mut sec =
        Section::new("OpenSSL SM4 (`openssl speed -evp`, 1 s per figure)", &["cipher", "block size", "MB/s"]);
    let (ciphers, sizes): (&[&str], &[u64]) = if test {
        (&["sm4-ecb"], &[1024])
    } else {
        (&["sm4-ecb", "sm4-cbc", "sm4-ctr"], &[1 << 10, 1 << 20, 10 << 20])
    };
    for cipher in ciphers {
        for &bytes in sizes {
            ctx.progress("sm4", format!("openssl speed -evp {cipher} -bytes {bytes}"));
            let res = Command::new("openssl")
                .args(["speed", "-evp", cipher, "-bytes", &bytes.to_string(), "-seconds", "1"])
                .output();
            let parsed = res.ok().filter(|o| o.status.success()).and_then(|o| {
                let text = String::from_utf8_lossy(&o.stdout).into_owned();
                // Last line: `SM4-ECB   123456.78k` (thousands of bytes per second).
                let last = text.lines().rev().find(|l| !l.trim().is_empty())?.to_string();
                let v: f64 = last.split_whitespace().last()?.trim_end_matches('k').parse().ok()?;
                Some(v * 1e3)
            });
            match parsed {
                Some(bps) => sec.rows.push(vec![
                    Cell::text(*cipher),
                    Cell::num(bytes as f64, "B", fmt_size(bytes)),
                    Cell::num(bps / 1e6, "MB/s", fmt_mbps(bps)),
                ]),
                None => {
                    out.note(format!("`openssl speed -evp {cipher}` failed or printed no figure: skipped"));
                    return finish(out, sec);
                }
            }
        }
    }
    finish(out, sec)
}

fn finish(out: &mut TableReport, sec: Section) {
    if !sec.rows.is_empty() {
        out.note("OpenSSL's `speed` encrypts only (CBC without padding), in its own process on one core.");
        out.sections.push(sec);
    }
}

/// `hyperseal encrypt --suite sm4-gcm` of a file against `cp` of the same file.
fn file_row(ctx: &Ctx, out: &mut TableReport) -> Result<()> {
    let key = match ctx.cli_key(Kind::X25519) {
        Ok(k) => k,
        Err(e) => {
            out.note(format!("file row skipped: {e}"));
            return Ok(());
        }
    };
    let size = ctx.size(64 << 20);
    let input = ctx.data_file("sm4.in", size)?;
    let (ct, copy) = (ctx.path("sm4.ct"), ctx.path("sm4.cp"));
    let reps = ctx.reps(size);
    ctx.progress("sm4", format!("{} hyperseal encrypt --suite sm4-gcm vs cp", fmt_size(size)));
    let cp = Job::new("cp", &[&s(&input.0), &s(&copy)])
        .output(&copy)
        .measure(ctx.tmp.path(), reps)?
        .wall
        .rate(size);
    let enc = Job::new(
        ctx.exe()?,
        &["encrypt", "-q", "--suite", "sm4-gcm", "-r", &key.recipient, "-o", &s(&ct), &s(&input.0)],
    )
    .output(&ct)
    .measure(ctx.tmp.path(), reps)?
    .wall
    .rate(size);
    let _ = (std::fs::remove_file(&ct), std::fs::remove_file(&copy));
    let mut sec = Section::new(
        "File: `hyperseal encrypt --suite sm4-gcm` (x25519, all cores) vs cp",
        &["size", "encrypt MB/s", "cp MB/s", "encrypt ÷ cp"],
    );
    sec.rows.push(vec![
        Cell::num(size as f64, "B", fmt_size(size)),
        Cell::measured(enc.scale(1e-6), "MB/s", with_spread(fmt_mbps(enc.median), &enc)),
        Cell::measured(cp.scale(1e-6), "MB/s", with_spread(fmt_mbps(cp.median), &cp)),
        ratio(enc.median / cp.median),
    ]);
    out.sections.push(sec);
    Ok(())
}
