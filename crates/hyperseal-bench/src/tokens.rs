//! `tokens` (FISE): latency of sealing and opening small messages as `hyperseal_toolkit::token`
//! strings, for both token suites, beside FISE's published encrypt/decrypt figures.
//!
//! FISE is not encryption (a salt plus a user cipher, XOR by default), so the comparison only says
//! what real AEAD tokens cost at the sizes FISE advertises, not that the two do the same job.

use anyhow::{ensure, Result};
use hyperseal_toolkit::token::{self, KeyRing, Suite, TokenKey};

use super::files::ratio;
use super::report::{Cell, Chart, Section, TableReport};
use super::stats::{fmt_time, time_alternating, with_spread, Stats};
use super::{Ctx, Table};

pub struct Tokens;

/// FISE's published figures (Node v22.14.0, Apple M4 Pro — another machine): (label, chars, encrypt ms,
/// decrypt ms).
const PUBLISHED: [(&str, usize, f64, f64); 6] = [
    ("100 chars", 100, 0.004, 0.054),
    ("500 chars", 500, 0.006, 0.269),
    ("1000 chars", 1000, 0.010, 0.313),
    ("4.9 KB", 5_000, 0.048, 1.564),
    ("9.8 KB", 10_000, 0.095, 6.051),
    ("48.8 KB", 50_000, 0.599, 15.239),
];

const SUITES: [(Suite, &str); 2] =
    [(Suite::XChaCha20Poly1305, "XChaCha20-Poly1305"), (Suite::Aes256GcmSiv, "AES-256-GCM-SIV")];

impl Table for Tokens {
    fn id(&self) -> &'static str {
        "tokens"
    }
    fn title(&self) -> &'static str {
        "Small-message tokens: seal and open latency"
    }
    fn mirrors(&self) -> &'static str {
        "FISE (its encrypt/decrypt of 100 chars … 48.8 KB, Node.js)"
    }

    fn run(&self, ctx: &Ctx, out: &mut TableReport) -> Result<()> {
        let test = ctx.scale < 0.01;
        out.note(
            "`token::seal(key, msg, aad, None)` and `token::open(ring, token, aad)` on one thread; each figure is the \
             median over samples of a batch of calls, divided by the batch size. A token is base64url text with a \
             key id, a random nonce and a 16-byte tag.",
        );
        out.note(
            "FISE columns are FISE's own published averages from another machine (Node v22.14.0, Apple M4 Pro). \
             FISE is not real encryption (salt + XOR by default, no authentication), so the ratio is the price of \
             authenticated encryption on this machine, not a like-for-like race.",
        );
        let mut master = [0u8; 32];
        aws_lc_rs::rand::fill(&mut master).map_err(|_| anyhow::anyhow!("no randomness"))?;
        let keys: Vec<(TokenKey, &str)> =
            SUITES.iter().map(|(s, name)| (TokenKey::from_bytes(&master).with_suite(*s), *name)).collect();
        let mut columns = vec!["size".to_string()];
        for (_, name) in &keys {
            columns.push(format!("{name} seal"));
            columns.push(format!("{name} open"));
        }
        columns.extend([
            "FISE encrypt".into(),
            "FISE decrypt".into(),
            "open ÷ FISE decrypt (XChaCha)".into(),
        ]);
        let mut sec = Section { title: "Latency per call".into(), columns, rows: vec![] };
        let mut chart = Chart::new("Token latency vs message size", "message size", "µs", true);
        let aad = b"bench";
        for (label, chars, fise_enc, fise_dec) in PUBLISHED {
            let msg: Vec<u8> = (0..chars).map(|i| b'a' + (i % 26) as u8).collect();
            // About 2 ms of work per sample outside a test run.
            let batch = if test { 2 } else { (400_000 / chars).clamp(4, 2000) };
            let reps = if test {
                3
            } else if ctx.full {
                51
            } else {
                21
            };
            ctx.progress(self.id(), format!("{label}: {reps} samples of {batch} calls"));
            let rings: Vec<KeyRing> = keys
                .iter()
                .map(|(k, _)| KeyRing::new().with(TokenKey::from_bytes(&master).with_suite(k.suite())))
                .collect();
            let sealed: Vec<String> = keys.iter().map(|(k, _)| token::seal(k, &msg, aad, None)).collect();
            for (ring, t) in rings.iter().zip(&sealed) {
                ensure!(
                    token::open(ring, t, aad).map(|p| p[..] == msg[..]).unwrap_or(false),
                    "token round trip"
                );
            }
            let (k0, k1) = (&keys[0].0, &keys[1].0);
            let (m, s0, s1) = (&msg, &sealed[0], &sealed[1]);
            let (mut a, mut b, mut c, mut d) = (
                || {
                    for _ in 0..batch {
                        std::hint::black_box(token::seal(k0, m, aad, None));
                    }
                },
                || {
                    for _ in 0..batch {
                        std::hint::black_box(token::open(&rings[0], s0, aad).ok());
                    }
                },
                || {
                    for _ in 0..batch {
                        std::hint::black_box(token::seal(k1, m, aad, None));
                    }
                },
                || {
                    for _ in 0..batch {
                        std::hint::black_box(token::open(&rings[1], s1, aad).ok());
                    }
                },
            );
            let t: Vec<Stats> = time_alternating(reps, &mut [&mut a, &mut b, &mut c, &mut d])
                .iter()
                .map(|s| s.scale(1.0 / batch as f64))
                .collect();
            let mut row = vec![Cell::num(chars as f64, "B", label)];
            for (i, s) in t.iter().enumerate() {
                row.push(Cell::measured(*s, "s", with_spread(fmt_time(s.median), s)));
                let name = format!("{} {}", keys[i / 2].1, if i % 2 == 0 { "seal" } else { "open" });
                chart.point(&name, chars as f64, s.median * 1e6);
            }
            chart.point("FISE encrypt (published)", chars as f64, fise_enc * 1e3);
            chart.point("FISE decrypt (published)", chars as f64, fise_dec * 1e3);
            row.push(Cell::num(fise_enc / 1e3, "s", fmt_time(fise_enc / 1e3)));
            row.push(Cell::num(fise_dec / 1e3, "s", fmt_time(fise_dec / 1e3)));
            row.push(ratio(t[1].median / (fise_dec / 1e3)));
            sec.rows.push(row);
        }
        out.sections.push(sec);
        out.charts.push(chart);
        Ok(())
    }
}
