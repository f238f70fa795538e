//! `engine`: how close the streaming engine gets to the raw AEAD, in memory, without I/O.
//!
//! "Raw" is aws-lc-rs `LessSafeKey::seal_in_place_separate_tag` over chunk-sized slices of one
//! buffer (split evenly across threads for N threads): the ceiling for any chunked format. For
//! AES-256-GCM the same loop over ring is shown too, since the engine uses whichever of the two
//! is faster on the CPU (`hyperseal::AesGcmBackend`).
//! "Engine" is `hyperseal::Encryptor::encrypt_stream` from an in-memory reader to `io::sink()`:
//! everything hyperseal adds (batching, copies, the reader/writer threads) shows as the gap.
//! Also: one-shot latency of a 1 KB message, and the size where threads start to pay.
//!
//! This is the one file of the benchmark that names library internals (`stream`, `suite`) and
//! the thread-count options of the one-shot calls ([`seal`], [`open`], used by `pubkey` too), so
//! a change of those APIs touches only this file.

use std::io;

use anyhow::Result;
use aws_lc_rs::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};
use hyperseal::recipient::{self, Kind};
use hyperseal::{Identity, Options, Recipient, Suite};
use zeroize::Zeroizing;

use super::files::ratio;
use super::report::{Cell, Chart, Section, TableReport};
use super::stats::{fmt_mbps, fmt_size, time, time_alternating, with_spread, Stats};
use super::{Ctx, Table};

pub struct Engine;

const SUITES: [Suite; 2] = [Suite::Aes256Gcm, Suite::ChaCha20Poly1305];
const CHUNKS: [usize; 3] = [16 << 10, 64 << 10, 1 << 20];

impl Table for Engine {
    fn id(&self) -> &'static str {
        "engine"
    }
    fn title(&self) -> &'static str {
        "Streaming engine vs raw AEAD (in memory), one-shot latency, thread crossover"
    }
    fn mirrors(&self) -> &'static str {
        "hyperseal's own engine targets (1-thread engine ≥ 90% of raw AEAD; measured crossover size)"
    }

    fn run(&self, ctx: &Ctx, out: &mut TableReport) -> Result<()> {
        super::onefile::one_file(ctx, out)?;
        throughput(ctx, out)?;
        latency(ctx, out)?;
        crossover(ctx, out)
    }
}

fn throughput(ctx: &Ctx, out: &mut TableReport) -> Result<()> {
    let n = ctx.threads;
    let size = ctx.size(if ctx.full { 512 << 20 } else { 128 << 20 }) as usize;
    let reps = if ctx.full { 9 } else { 5 };
    out.note(format!(
        "Throughput: {} in memory per run, GB = 10^9 bytes. Raw = aws-lc-rs seal_in_place_separate_tag per chunk (and ring's, for AES-256-GCM: the engine runs AES-256-GCM on {} on this CPU); \
         engine = Encryptor::encrypt_stream to io::sink() from a Read (copies input into its batches); borrowed = Encryptor::encrypt_slice from the same bytes in memory (no staging copy). Target: 1-thread engine ≥ 90% of raw.",
        fmt_size(size as u64),
        hyperseal::AesGcmBackend::preferred().name()
    ));
    let data = vec![0x33u8; size];
    let (mut raw_buf, mut raw_buf2) = (data.clone(), data.clone());
    let cols = [
        "suite".to_string(),
        "chunk".into(),
        "raw 1 thread GB/s".into(),
        "engine 1 thread GB/s".into(),
        "engine ÷ raw (1)".into(),
        format!("raw {n} threads GB/s"),
        format!("engine {n} threads GB/s"),
        format!("engine ÷ raw ({n})"),
        "borrowed 1 thread GB/s".into(),
        "borrowed ÷ raw (1)".into(),
        "raw ring 1 thread GB/s".into(),
    ];
    let mut sec = Section { title: "Engine vs raw AEAD".into(), columns: cols.to_vec(), rows: vec![] };
    let mut chart = Chart::new("Engine vs raw AEAD vs chunk size", "chunk size", "GB/s", true);
    let key = Zeroizing::new([7u8; 32]);
    for suite in SUITES {
        let alg = match suite {
            Suite::Aes256Gcm => &aead::AES_256_GCM,
            _ => &aead::CHACHA20_POLY1305,
        };
        let aws_key =
            LessSafeKey::new(UnboundKey::new(alg, &key[..]).map_err(|_| anyhow::anyhow!("aws-lc-rs key"))?);
        let raw_key = |nonce: [u8; 12], c: &mut [u8]| {
            let tag =
                aws_key.seal_in_place_separate_tag(Nonce::assume_unique_for_key(nonce), Aad::empty(), c);
            drop(std::hint::black_box(tag.expect("seal")));
        };
        let ring_key = ring::aead::LessSafeKey::new(
            ring::aead::UnboundKey::new(&ring::aead::AES_256_GCM, &key[..])
                .map_err(|_| anyhow::anyhow!("ring key"))?,
        );
        let ring_seal = |nonce: [u8; 12], c: &mut [u8]| {
            let n = ring::aead::Nonce::assume_unique_for_key(nonce);
            let _ = std::hint::black_box(ring_key.seal_in_place_separate_tag(n, ring::aead::Aad::empty(), c));
        };
        let mut ring_buf = data.clone();
        for chunk in CHUNKS {
            let cipher = Stream::new(suite, chunk)?;
            ctx.progress(
                "engine",
                format!("{suite} {} chunks: raw and engine, 1 and {n} threads", fmt_size(chunk as u64)),
            );
            let is_aes = suite == Suite::Aes256Gcm;
            let (mut r1, mut e1, mut rn, mut en, mut b1, mut g1) = (
                || raw_seal(&raw_key, &mut raw_buf, chunk, 1),
                || engine(&cipher, &data, 1),
                || raw_seal(&raw_key, &mut raw_buf2, chunk, n),
                || engine(&cipher, &data, n),
                || borrowed(&cipher, &data),
                || {
                    if is_aes {
                        raw_seal(&ring_seal, &mut ring_buf, chunk, 1)
                    }
                },
            );
            let figs: Vec<Stats> =
                time_alternating(reps, &mut [&mut r1, &mut e1, &mut rn, &mut en, &mut b1, &mut g1])
                    .iter()
                    .map(|t| t.rate(size as u64).scale(1e-9))
                    .collect();
            let gbps = |s: &Stats| Cell::measured(*s, "GB/s", with_spread(format!("{:.2}", s.median), s));
            for (i, name) in
                ["raw 1", "engine 1", &format!("raw {n}"), &format!("engine {n}")].iter().enumerate()
            {
                chart.point(&format!("{suite} {name}"), chunk as f64, figs[i].median);
            }
            sec.rows.push(vec![
                Cell::text(suite.name()),
                Cell::num(chunk as f64, "B", fmt_size(chunk as u64)),
                gbps(&figs[0]),
                gbps(&figs[1]),
                pct(figs[1].median / figs[0].median),
                gbps(&figs[2]),
                gbps(&figs[3]),
                pct(figs[3].median / figs[2].median),
                gbps(&figs[4]),
                pct(figs[4].median / figs[0].median),
                if is_aes { gbps(&figs[5]) } else { Cell::text("–") },
            ]);
        }
    }
    out.sections.push(sec);
    out.charts.push(chart);
    Ok(())
}

/// The library's public streaming API with a fixed suite and chunk size; a fresh X25519 file per
/// run (its ~40 µs of key work is noise next to 128 MiB).
struct Stream {
    to: Vec<Box<dyn hyperseal::Recipient>>,
    opts: Options,
}

impl Stream {
    fn new(suite: Suite, chunk_size: usize) -> anyhow::Result<Stream> {
        let key = recipient::generate(Kind::X25519)?;
        let to = vec![recipient::parse_recipient(&key.public)?];
        Ok(Stream { to, opts: Options { suite, chunk_size, ..Options::default() } })
    }
    fn encryptor(&self, threads: usize) -> hyperseal::Encryptor {
        hyperseal::Encryptor::with_recipients(&self.to, self.opts.clone())
            .expect("encryptor")
            .threads(threads)
    }
}

/// `Encryptor::encrypt_stream` from an in-memory `Read` (copies input into its batches).
fn engine(e: &Stream, data: &[u8], threads: usize) {
    let mut input: &[u8] = data;
    e.encryptor(threads).encrypt_stream(&mut input, &mut io::sink(), None).expect("engine");
}

/// `Encryptor::encrypt_slice`, the engine on a borrowed input: no copy into a staging buffer,
/// one thread.
fn borrowed(e: &Stream, data: &[u8]) {
    e.encryptor(1).encrypt_slice(data, &mut io::sink(), None).expect("slice engine");
}

/// A one-shot encrypt on `threads` threads into a fresh buffer (as `hyperseal::encrypt`).
pub fn seal(rs: &[Box<dyn Recipient>], threads: usize, pt: &[u8]) -> Vec<u8> {
    let enc =
        hyperseal::Encryptor::with_recipients(rs, Options::default()).expect("encryptor").threads(threads);
    let mut out = hyperseal::output_buffer(enc.encrypted_len(pt.len()));
    enc.encrypt_into(pt, &mut out).expect("encrypt");
    out
}

/// A one-shot decrypt on `threads` threads into a fresh buffer (as `hyperseal::decrypt`).
pub fn open(ids: &[Box<dyn Identity>], ct: &[u8], threads: usize) -> Vec<u8> {
    let mut out = hyperseal::output_buffer(ct.len());
    let n = hyperseal::Decryptor::from_slice(ct)
        .and_then(|d| d.threads(threads).decrypt_into(ids, &mut out))
        .expect("decrypt");
    out.truncate(n);
    out
}

/// Seals `data` chunk by chunk in place with `seal_one(nonce, chunk)` (tags are dropped: only
/// the work matters here).
fn raw_seal(seal_one: &(dyn Fn([u8; 12], &mut [u8]) + Sync), data: &mut [u8], chunk: usize, threads: usize) {
    let seal = |part: &mut [u8], first: u64| {
        for (i, c) in part.chunks_mut(chunk).enumerate() {
            let mut nonce = [0u8; 12];
            nonce[3..11].copy_from_slice(&(first + i as u64).to_be_bytes());
            seal_one(nonce, c);
        }
    };
    if threads <= 1 {
        return seal(data, 0);
    }
    let chunks = data.len().div_ceil(chunk);
    let per = chunks.div_ceil(threads) * chunk;
    std::thread::scope(|s| {
        for (t, part) in data.chunks_mut(per.max(1)).enumerate() {
            s.spawn(move || seal(part, (t * per / chunk) as u64));
        }
    });
}

fn pct(r: f64) -> Cell {
    Cell::num(r * 100.0, "%", format!("{:.0}%", r * 100.0))
}

fn iterations(ctx: &Ctx, base: usize) -> usize {
    let n = if ctx.full { base * 5 } else { base };
    // The hidden test knob shrinks work; keep enough samples for a median.
    if ctx.scale < 1.0 {
        (n as f64 * ctx.scale.sqrt()).max(5.0) as usize
    } else {
        n
    }
}

fn latency(ctx: &Ctx, out: &mut TableReport) -> Result<()> {
    let size = ctx.size(1 << 10) as usize;
    let pt = vec![0x42u8; size];
    let iters = iterations(ctx, 300);
    let mut sec = Section::new(
        format!("One-shot latency of a {} message (median of {iters})", fmt_size(size as u64)),
        &["recipient", "encrypt µs", "decrypt µs", "encrypt + decrypt µs", "ciphertext bytes"],
    );
    for kind in [Kind::Hybrid, Kind::X25519] {
        ctx.progress("engine", format!("1 KB latency, {}", kind.name()));
        let key = recipient::generate(kind)?;
        let rs = vec![recipient::parse_recipient(&key.public)?];
        let ids = recipient::parse_identities(&key.secret)?;
        let mut ct = Vec::new();
        let enc = time(iters, || ct = seal(&rs, 1, &pt)).scale(1e6);
        let dec = time(iters, || {
            std::hint::black_box(open(&ids, &ct, 1));
        })
        .scale(1e6);
        let both = time(iters, || {
            let c = seal(&rs, 1, &pt);
            std::hint::black_box(open(&ids, &c, 1));
        })
        .scale(1e6);
        let us = |s: &Stats| Cell::measured(*s, "µs", with_spread(format!("{:.1}", s.median), s));
        sec.rows.push(vec![
            Cell::text(kind.name()),
            us(&enc),
            us(&dec),
            us(&both),
            Cell::num(ct.len() as f64, "B", ct.len().to_string()),
        ]);
    }
    out.sections.push(sec);
    Ok(())
}

fn crossover(ctx: &Ctx, out: &mut TableReport) -> Result<()> {
    let n = ctx.threads;
    let key = recipient::generate(Kind::X25519)?;
    let rs = vec![recipient::parse_recipient(&key.public)?];
    let cols = [
        "size".to_string(),
        "1 thread".into(),
        format!("{n} threads"),
        format!("{n} threads ÷ 1 thread (speed-up)"),
    ];
    let mut sec = Section {
        title: "Crossover: one-shot encrypt, 1 thread vs all cores".into(),
        columns: cols.to_vec(),
        rows: vec![],
    };
    let mut chart = Chart::new("One-shot encrypt: 1 thread vs all cores", "message size", "MB/s", true);
    let mut speedups = Vec::new();
    let nominal: Vec<u64> = (0..=12).step_by(1).map(|i| 1024u64 << i).filter(|s| *s <= 4 << 20).collect();
    for nom in nominal {
        let size = ctx.size(nom);
        let pt = vec![0x24u8; size as usize];
        let iters = iterations(ctx, if size < 256 << 10 { 101 } else { 21 });
        ctx.progress("engine", format!("crossover {}", fmt_size(size)));
        let (mut f1, mut fn_) = (
            || {
                std::hint::black_box(seal(&rs, 1, &pt));
            },
            || {
                std::hint::black_box(seal(&rs, n, &pt));
            },
        );
        let figs = time_alternating(iters, &mut [&mut f1, &mut fn_]);
        let (r1, rn) = (figs[0].rate(size), figs[1].rate(size));
        chart.point("1 thread", size as f64, r1.median / 1e6);
        chart.point(&format!("{n} threads"), size as f64, rn.median / 1e6);
        let speedup = figs[0].median / figs[1].median;
        speedups.push((size, speedup));
        sec.rows.push(vec![
            Cell::num(size as f64, "B", fmt_size(size)),
            Cell::measured(r1.scale(1e-6), "MB/s", with_spread(fmt_mbps(r1.median), &r1)),
            Cell::measured(rn.scale(1e-6), "MB/s", with_spread(fmt_mbps(rn.median), &rn)),
            ratio(speedup),
        ]);
    }
    // Parallel "wins" from the smallest size beyond which every larger size is ≥ 5% faster.
    let win =
        (0..speedups.len()).find(|&i| speedups[i..].iter().all(|(_, s)| *s >= 1.05)).map(|i| speedups[i].0);
    out.note(match win {
        Some(s) => format!(
            "Crossover (X25519 recipient, default suite and chunk size): {n} threads beat 1 thread by ≥ 5% from {} up.",
            fmt_size(s)
        ),
        None => format!("Crossover: {n} threads never beat 1 thread by ≥ 5% up to the largest size measured."),
    });
    out.sections.push(sec);
    out.charts.push(chart);
    Ok(())
}
