//! `primitives` (@ldesign/crypto): one 50-byte message through the toolkit's primitives — legacy AES
//! modes (hazmat), AES-256-GCM, hashes, HMAC, RSA-2048 and PBKDF2 with and without the
//! derivation cache — as ops/s and mean latency, beside @ldesign/crypto's published figures, plus the
//! resident memory growth over 1000 operations.

use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use hyperseal_toolkit::hazmat::{Block, Cipher, Mode};
use hyperseal_toolkit::kdf::{DerivationCache, HashFn, PasswordKdf, Pbkdf2Params};
use hyperseal_toolkit::sign::oaep::{RsaOaepPrivateKey, RsaOaepPublicKey};
use hyperseal_toolkit::sign::{KeyKind, SigningKey};
use hyperseal_toolkit::{aead, hash, mac};

use super::files::ratio;
use super::report::{Cell, Section, TableReport};
use super::stats::{fmt_time, time, with_spread, Stats};
use super::{Ctx, Table};

pub struct Primitives;

const MSG_LEN: usize = 50;

impl Table for Primitives {
    fn id(&self) -> &'static str {
        "primitives"
    }
    fn title(&self) -> &'static str {
        "Primitives on a 50-byte message: ops/s and latency"
    }
    fn mirrors(&self) -> &'static str {
        "@ldesign/crypto (its comparison with crypto-js / node-forge / Node crypto, 50-byte text)"
    }

    fn run(&self, ctx: &Ctx, out: &mut TableReport) -> Result<()> {
        let test = ctx.scale < 0.01;
        let reps = if test {
            3
        } else if ctx.full {
            31
        } else {
            11
        };
        // Calls per timed sample: enough that the clock's resolution does not matter.
        let (fast, slow) = if test { (2, 1) } else { (2000, 20) };
        out.note(format!(
            "Library calls of `hyperseal_toolkit` on one thread, {MSG_LEN}-byte message, fixed IV for the hazmat modes and a \
             random nonce per call for AES-256-GCM (as `Key::seal` draws one). Latency = median over {reps} samples of (batch time ÷ batch size); \
             ops/s = 1 ÷ latency."
        ));
        out.note(
            "@ldesign columns are @ldesign/crypto's published figures (i7-9700K, Chrome 120 / Node v20.10.0: another machine, \
             JavaScript libraries). \"× @ldesign\" = our ops/s ÷ its ops/s.",
        );
        let mut sec = Section::new(
            "Operations",
            &["operation", "latency", "ops/s", "@ldesign latency", "@ldesign ops/s", "× @ldesign"],
        );
        let msg = [0x61u8; MSG_LEN];
        let iv = [7u8; 16];
        let (k16, k32) = ([1u8; 16], [2u8; 32]);

        let add =
            |sec: &mut Section, name: &str, batch: usize, theirs_ms: Option<f64>, f: &mut dyn FnMut()| {
                ctx.progress("primitives", name);
                let s = time(reps, || {
                    for _ in 0..batch {
                        f();
                    }
                })
                .scale(1.0 / batch as f64);
                sec.rows.push(row(name, &s, theirs_ms));
            };

        let ciphers = [
            ("AES-128-CBC (hazmat)", 16, Mode::Cbc, Some(0.82)),
            ("AES-256-CBC (hazmat)", 32, Mode::Cbc, Some(1.10)),
            ("AES-128-CTR (hazmat)", 16, Mode::Ctr, None),
            ("AES-256-CTR (hazmat)", 32, Mode::Ctr, Some(1.05)),
        ];
        for (name, key_len, mode, theirs) in ciphers {
            let c = Cipher { block: Block::Aes, key_len, mode };
            let key: &[u8] = if key_len == 16 { &k16 } else { &k32 };
            add(&mut sec, name, fast, theirs, &mut || {
                std::hint::black_box(c.encrypt(key, Some(&iv), &msg).expect("hazmat encrypt"));
            });
        }
        let gcm = aead::Key::new(aead::Algorithm::Aes256Gcm, &k32)?;
        add(&mut sec, "AES-256-GCM seal", fast, Some(0.45), &mut || {
            std::hint::black_box(gcm.seal(&msg, b"").expect("seal"));
        });
        let hashes = [
            ("MD5 (legacy)", hash::Algorithm::LegacyMd5, Some(0.12)),
            ("SHA-1 (legacy)", hash::Algorithm::LegacySha1, Some(0.15)),
            ("SHA-256", hash::Algorithm::Sha256, Some(0.22)),
            ("SHA-512", hash::Algorithm::Sha512, Some(0.28)),
            ("BLAKE2b-512", hash::Algorithm::Blake2b512, Some(0.18)),
        ];
        for (name, alg, theirs) in hashes {
            add(&mut sec, name, fast, theirs, &mut || {
                std::hint::black_box(hash::hash(alg, &msg));
            });
        }
        for (name, alg, theirs) in [
            ("HMAC-MD5 (legacy)", mac::Algorithm::LegacyHmacMd5, Some(0.15)),
            ("HMAC-SHA-256", mac::Algorithm::HmacSha256, Some(0.25)),
            ("HMAC-SHA-512", mac::Algorithm::HmacSha512, Some(0.32)),
        ] {
            add(&mut sec, name, fast, theirs, &mut || {
                std::hint::black_box(mac::sign(alg, &k32, &msg));
            });
        }

        // RSA-2048: key generation is measured on its own, with few runs (it costs tens to hundreds of ms).
        let keygens = if test {
            1
        } else if ctx.full {
            5
        } else {
            2
        };
        ctx.progress(self.id(), format!("RSA-2048 keygen × {keygens}"));
        let mut samples = Vec::new();
        let mut sk = None;
        for _ in 0..keygens {
            let t = Instant::now();
            sk = Some(SigningKey::generate(KeyKind::Rsa2048)?);
            samples.push(t.elapsed().as_secs_f64());
        }
        let sk = sk.context("no RSA key")?;
        sec.rows.push(row("RSA-2048 key generation", &Stats::of(&samples), Some(245.0)));
        let vk = sk.verifying_key()?;
        let enc = RsaOaepPublicKey::from_spki_der(vk.to_spki_der())?;
        let dec = RsaOaepPrivateKey::from_pkcs8_der(&sk.to_pkcs8_der()?)?;
        let ct = enc.encrypt(&msg, b"")?;
        let sig = sk.sign(&msg)?;
        add(&mut sec, "RSA-2048 OAEP encrypt", slow * 5, Some(2.5), &mut || {
            std::hint::black_box(enc.encrypt(&msg, b"").expect("rsa encrypt"));
        });
        add(&mut sec, "RSA-2048 OAEP decrypt", slow, Some(15.0), &mut || {
            std::hint::black_box(dec.decrypt(&ct, b"").expect("rsa decrypt"));
        });
        add(&mut sec, "RSA-2048 sign", slow, Some(14.0), &mut || {
            std::hint::black_box(sk.sign(&msg).expect("sign"));
        });
        add(&mut sec, "RSA-2048 verify", slow * 5, Some(2.8), &mut || {
            vk.verify(&msg, &sig).expect("verify");
        });

        // PBKDF2: @ldesign/crypto's "same key" case is served from its cache, the "different key" case is not.
        let iterations = if test { 1_000 } else { 100_000 };
        let kdf = PasswordKdf::Pbkdf2(Pbkdf2Params { hash: HashFn::Sha256, iterations });
        let cache = DerivationCache::new(100, Duration::from_secs(300));
        let salt = [9u8; 16];
        add(&mut sec, &format!("PBKDF2-SHA-256 ({iterations} it.), no cache"), 1, Some(1.10), &mut || {
            std::hint::black_box(kdf.derive(b"password", &salt, 32).expect("pbkdf2"));
        });
        add(
            &mut sec,
            &format!("PBKDF2-SHA-256 ({iterations} it.), DerivationCache hit"),
            fast,
            Some(0.52),
            &mut || {
                std::hint::black_box(cache.get_or_derive(&kdf, b"password", &salt, 32).expect("pbkdf2"));
            },
        );
        out.note(format!(
            "PBKDF2 uses {iterations} iterations; @ldesign/crypto does not say how many it used (its 1.10 → 0.52 ms are \
             \"encrypt with the same key\" with and without its derivation cache), so compare the cache's effect, \
             not the absolute figures."
        ));
        out.sections.push(sec);

        // Memory: resident set before and after 1000 operations of each kind.
        let n = if test { 10 } else { 1000 };
        let mut mem = Section::new(
            format!("Memory growth over {n} operations (RSS, /proc/self/statm)"),
            &["operation", "RSS before", "RSS after", "growth"],
        );
        let mut measure = |name: &str, f: &mut dyn FnMut()| {
            let before = rss();
            for _ in 0..n {
                f();
            }
            let after = rss();
            mem.rows.push(match (before, after) {
                (Some(b), Some(a)) => vec![
                    Cell::text(name),
                    Cell::num(b as f64, "B", mib(b as f64)),
                    Cell::num(a as f64, "B", mib(a as f64)),
                    Cell::num(a as f64 - b as f64, "B", mib(a as f64 - b as f64)),
                ],
                _ => vec![Cell::text(name), Cell::none(), Cell::none(), Cell::text("no /proc/self/statm")],
            });
        };
        measure("AES-256-GCM seal", &mut || drop(std::hint::black_box(gcm.seal(&msg, b"").expect("seal"))));
        let cbc = Cipher { block: Block::Aes, key_len: 32, mode: Mode::Cbc };
        measure("AES-256-CBC encrypt", &mut || {
            drop(std::hint::black_box(cbc.encrypt(&k32, Some(&iv), &msg).expect("cbc")))
        });
        measure("SHA-256", &mut || drop(std::hint::black_box(hash::hash(hash::Algorithm::Sha256, &msg))));
        measure("HMAC-SHA-256", &mut || {
            drop(std::hint::black_box(mac::sign(mac::Algorithm::HmacSha256, &k32, &msg)))
        });
        out.note(format!(
            "Memory: {n} operations per row in this process; @ldesign/crypto's \"1000 encryptions\" grew the JS heap by \
             3.6 MB (@ldesign v2.0), 7.3 MB (crypto-js) and 9.3 MB (node-forge). Growth here is page-granular."
        ));
        out.sections.push(mem);
        Ok(())
    }
}

fn row(name: &str, s: &Stats, theirs_ms: Option<f64>) -> Vec<Cell> {
    let ops = 1.0 / s.median;
    let mut r = vec![
        Cell::text(name),
        Cell::measured(*s, "s", with_spread(fmt_time(s.median), s)),
        Cell::num(ops, "ops/s", fmt_ops(ops)),
    ];
    match theirs_ms {
        Some(ms) => {
            let theirs_ops = 1e3 / ms;
            r.push(Cell::num(ms / 1e3, "s", fmt_time(ms / 1e3)));
            r.push(Cell::num(theirs_ops, "ops/s", fmt_ops(theirs_ops)));
            r.push(ratio(ops / theirs_ops));
        }
        None => r.extend([Cell::none(), Cell::none(), Cell::none()]),
    }
    r
}

fn fmt_ops(ops: f64) -> String {
    if ops >= 100.0 {
        format!("{:.0}", ops)
    } else {
        format!("{ops:.2}")
    }
}

fn mib(bytes: f64) -> String {
    format!("{:.2} MiB", bytes / (1024.0 * 1024.0))
}

/// Resident set size in bytes, from the second field of /proc/self/statm.
fn rss() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = text.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * if page > 0 { page as u64 } else { 4096 })
}
