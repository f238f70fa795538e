//! `pubkey` (the Node hybrid library): hybrid public-key encryption of in-memory buffers from 1 KB to 500 MB,
//! sequential (one thread) against parallel (all cores), with the size expansion.
//!
//! The Node hybrid library's report compared a NaCl box ("sync") with a hybrid scheme ("async": a public key wraps an
//! AES key, AES-GCM encrypts the data). hyperseal's hybrid recipient is the counterpart of the
//! latter, so its figures stand beside ours; the NaCl figures are kept for context.

use anyhow::Result;
use hyperseal::recipient::{self, Kind};

use super::engine::{open, seal};
use super::files::ratio;
use super::report::{Cell, Chart, Section, TableReport};
use super::stats::{fmt_mbps, fmt_size, fmt_time, time_alternating, with_spread, Stats};
use super::{Ctx, Table};

pub struct Pubkey;

/// (label, bytes, encrypt figures, decrypt figures, expansion figures) of one published row.
type PublishedRow = (&'static str, u64, [f64; 4], [f64; 4], [f64; 2]);

/// The Node hybrid library's published figures (Node.js v22.15.0, another machine), per size: encrypt (sync ms, async ms, sync MB/s,
/// async MB/s), decrypt (same), expansion % (sync, async).
const PUBLISHED: [PublishedRow; 7] = [
    ("1 KB", 1 << 10, [374.71, 250.79, 0.26, 0.39], [62.38, 69.98, 1.57, 1.40], [107.03, 113.28]),
    ("10 KB", 10 << 10, [242.54, 167.40, 2.01, 2.92], [50.53, 72.61, 9.66, 6.73], [100.70, 101.33]),
    ("100 KB", 100 << 10, [96.47, 61.71, 20.25, 31.65], [22.09, 13.17, 88.42, 148.25], [100.07, 100.13]),
    ("1 MB", 1 << 20, [137.61, 37.17, 72.67, 269.05], [116.53, 16.76, 85.81, 596.52], [100.01, 100.01]),
    ("10 MB", 10 << 20, [734.40, 56.88, 68.08, 879.06], [442.52, 57.37, 112.99, 871.52], [100.00, 100.00]),
    (
        "100 MB",
        100 << 20,
        [2180.0, 843.64, 91.64, 237.07],
        [1920.0, 211.79, 104.07, 944.33],
        [100.00, 100.00],
    ),
    (
        "500 MB",
        500 << 20,
        [10360.0, 922.39, 48.25, 542.07],
        [5200.0, 908.56, 96.16, 550.32],
        [100.00, 100.00],
    ),
];

impl Table for Pubkey {
    fn id(&self) -> &'static str {
        "pubkey"
    }
    fn title(&self) -> &'static str {
        "Hybrid public-key encryption of in-memory buffers: 1 thread vs all cores"
    }
    fn mirrors(&self) -> &'static str {
        "the Node hybrid library (encryptByPublicKey vs encryptByPublicKeyAsync, Node.js)"
    }

    fn run(&self, ctx: &Ctx, out: &mut TableReport) -> Result<()> {
        let key = recipient::generate(Kind::Hybrid)?;
        let recipients = vec![recipient::parse_recipient(&key.public)?];
        let ids = recipient::parse_identities(&key.secret)?;
        let n = ctx.threads;
        out.note(format!(
            "One-shot library calls on buffers in memory, each returning a fresh buffer: `encrypt_with` (hybrid ML-KEM-768 + \
             X25519 recipient, default suite) and `decrypt_with`, threads = 1 vs threads = {n} (the library stays on one \
             thread below 4 MiB). Each time includes the key encapsulation or decapsulation."
        ));
        out.note("Node-library columns are the Node hybrid library's published figures from another machine (Node.js v22.15.0): \"hybrid\" = its async \
                  hybrid scheme (the counterpart of ours), \"NaCl\" = its sync NaCl box.");
        let cols_for = |op: &str| {
            vec![
                "size".to_string(),
                "1 thread time".into(),
                format!("{n} threads time"),
                "1 thread MB/s".into(),
                format!("{n} threads MB/s"),
                "speed-up".into(),
                format!("Node lib hybrid {op} time"),
                "Node lib hybrid MB/s".into(),
                "Node lib NaCl MB/s".into(),
            ]
        };
        let mut enc_sec = Section { title: "Encryption".into(), columns: cols_for("encrypt"), rows: vec![] };
        let mut dec_sec = Section { title: "Decryption".into(), columns: cols_for("decrypt"), rows: vec![] };
        let mut exp_sec = Section::new(
            "Size expansion (ciphertext ÷ plaintext)",
            &["size", "hyperseal", "Node lib hybrid", "Node lib NaCl"],
        );
        let mut chart = Chart::new("In-memory hybrid throughput vs size", "buffer size", "MB/s", true);
        let sizes = PUBLISHED.iter().filter(|s| ctx.full || s.1 <= 100 << 20);
        for (label, nominal, their_enc, their_dec, their_exp) in sizes {
            let size = ctx.size(*nominal);
            let pt = vec![0x5au8; size as usize];
            let reps = ctx.reps_small(size);
            ctx.progress(self.id(), format!("{}: 1 and {n} threads", fmt_size(size)));
            let ct = seal(&recipients, 1, &pt);
            let ct_len = ct.len();
            let (mut e1, mut en) = (
                || drop(std::hint::black_box(seal(&recipients, 1, &pt))),
                || drop(std::hint::black_box(seal(&recipients, n, &pt))),
            );
            let enc = time_alternating(reps, &mut [&mut e1, &mut en]);
            anyhow::ensure!(open(&ids, &ct, n) == pt, "hybrid round trip");
            let (mut d1, mut dn) = (
                || drop(std::hint::black_box(open(&ids, &ct, 1))),
                || drop(std::hint::black_box(open(&ids, &ct, n))),
            );
            let dec = time_alternating(reps, &mut [&mut d1, &mut dn]);
            let name = if ctx.scale == 1.0 { label.to_string() } else { fmt_size(size) };
            enc_sec.rows.push(row(&name, size, &enc, their_enc));
            dec_sec.rows.push(row(&name, size, &dec, their_dec));
            for (op, t) in [("encrypt", &enc), ("decrypt", &dec)] {
                chart.point(&format!("{op} 1 thread"), size as f64, t[0].rate(size).median / 1e6);
                chart.point(&format!("{op} {n} threads"), size as f64, t[1].rate(size).median / 1e6);
            }
            chart.point("Node lib hybrid encrypt (published)", *nominal as f64, their_enc[3]);
            chart.point("Node lib hybrid decrypt (published)", *nominal as f64, their_dec[3]);
            let exp = ct_len as f64 / size as f64 * 100.0;
            exp_sec.rows.push(vec![
                Cell::num(size as f64, "B", name),
                Cell::num(exp, "%", format!("{exp:.2}%")),
                Cell::num(their_exp[1], "%", format!("{:.2}%", their_exp[1])),
                Cell::num(their_exp[0], "%", format!("{:.2}%", their_exp[0])),
            ]);
        }
        out.sections.extend([enc_sec, dec_sec, exp_sec]);
        out.charts.push(chart);
        Ok(())
    }
}

fn row(name: &str, size: u64, t: &[Stats], theirs: &[f64; 4]) -> Vec<Cell> {
    let (r1, rn) = (t[0].rate(size), t[1].rate(size));
    vec![
        Cell::num(size as f64, "B", name),
        Cell::measured(t[0], "s", with_spread(fmt_time(t[0].median), &t[0])),
        Cell::measured(t[1], "s", with_spread(fmt_time(t[1].median), &t[1])),
        Cell::measured(r1.scale(1e-6), "MB/s", fmt_mbps(r1.median)),
        Cell::measured(rn.scale(1e-6), "MB/s", fmt_mbps(rn.median)),
        ratio(t[0].median / t[1].median),
        Cell::num(theirs[1] / 1e3, "s", fmt_time(theirs[1] / 1e3)),
        Cell::num(theirs[3], "MB/s", format!("{:.2} MB/s", theirs[3])),
        Cell::num(theirs[2], "MB/s", format!("{:.2} MB/s", theirs[2])),
    ]
}
