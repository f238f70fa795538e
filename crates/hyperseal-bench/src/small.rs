//! `small`: whole-process time of small files, where start-up and not the cipher decides: the
//! same file through `cp` (the floor), `hyperseal` and `age`, run in turn so load from elsewhere
//! falls on all three alike. What a script that encrypts many small files pays per file.

use anyhow::Result;
use hyperseal::Kind;

use super::child::{measure_alternating, which, ChildStats, Job};
use super::files::{ratio, s};
use super::report::{Cell, Section, TableReport};
use super::stats::{fmt_size, fmt_time, with_spread};
use super::{Ctx, Table};

pub struct Small;

/// Sizes where start-up dominates (1 KiB), is about even (64 KiB), and has just stopped (1 MiB).
const SIZES: [u64; 3] = [1 << 10, 64 << 10, 1 << 20];

impl Table for Small {
    fn id(&self) -> &'static str {
        "small"
    }
    fn title(&self) -> &'static str {
        "Small files, whole process: hyperseal vs cp and age"
    }
    fn mirrors(&self) -> &'static str {
        "FISE's \"microsecond\" claim and the per-file cost of the Node hybrid library's CLI, on real files"
    }

    fn run(&self, ctx: &Ctx, out: &mut TableReport) -> Result<()> {
        let exe = ctx.exe()?;
        let age = which("age");
        out.note(format!(
            "Files in {}; X25519 for both tools (`hyperseal encrypt -q -r age1… -o OUT IN`, \
             `age -r age1… -o OUT IN`; decrypt with `-i KEY`). Runs alternate cp, hyperseal, age; \
             medians of wall time including process start.",
            ctx.tmp_note
        ));
        if age.is_none() {
            out.note("age is not on PATH (`make bench` installs it): its columns are empty.");
        }
        let key = ctx.cli_key(Kind::X25519).map_err(anyhow::Error::msg)?;
        let mut sec = Section::new(
            "Median time per file",
            &["size", "operation", "cp", "hyperseal", "age", "hyperseal ÷ cp", "hyperseal ÷ age"],
        );
        for nominal in SIZES {
            let size = ctx.size(nominal);
            let input = ctx.data_file("small.in", size)?;
            let (inp, copy) = (s(&input.0), ctx.path("small.cp"));
            let (hs_ct, age_ct) = (ctx.path("small.hs"), ctx.path("small.age"));
            let (pt, reps) = (ctx.path("small.pt"), runs(ctx));
            let cp = Job::new("cp", &[&inp, &s(&copy)]).output(&copy);
            let hs_enc = Job::new(exe, &["encrypt", "-q", "-r", &key.recipient, "-o", &s(&hs_ct), &inp])
                .output(&hs_ct);
            let hs_dec =
                Job::new(exe, &["decrypt", "-q", "-i", &s(&key.identity), "-o", &s(&pt), &s(&hs_ct)])
                    .output(&pt);
            let age_jobs = age.as_ref().map(|a| {
                let enc = Job::new(a, &["-r", &key.recipient, "-o", &s(&age_ct), &inp]).output(&age_ct);
                let dec =
                    Job::new(a, &["-d", "-i", &s(&key.identity), "-o", &s(&pt), &s(&age_ct)]).output(&pt);
                (enc, dec)
            });
            for (op, hs, peer) in [
                ("encrypt", &hs_enc, age_jobs.as_ref().map(|j| &j.0)),
                ("decrypt", &hs_dec, age_jobs.as_ref().map(|j| &j.1)),
            ] {
                ctx.progress(self.id(), format!("{} {op}", fmt_size(size)));
                let mut jobs = vec![&cp, hs];
                jobs.extend(peer);
                let stats = measure_alternating(&jobs, ctx.tmp.path(), reps)?;
                let t = |c: &ChildStats| {
                    Cell::measured(c.wall.scale(1e3), "ms", with_spread(fmt_time(c.wall.median), &c.wall))
                };
                let (cp_t, hs_t) = (&stats[0], &stats[1]);
                sec.rows.push(vec![
                    Cell::num(size as f64, "B", fmt_size(size)),
                    Cell::text(op),
                    t(cp_t),
                    t(hs_t),
                    stats.get(2).map_or(Cell::text("—"), t),
                    ratio(hs_t.wall.median / cp_t.wall.median),
                    stats.get(2).map_or(Cell::text("—"), |a| ratio(hs_t.wall.median / a.wall.median)),
                ]);
            }
            // Decrypting needs the ciphertexts the encrypt runs left; remove them for the next size.
            for p in [&copy, &hs_ct, &age_ct, &pt] {
                let _ = std::fs::remove_file(p);
            }
        }
        out.sections.push(sec);
        Ok(())
    }
}

/// Runs per figure: a few milliseconds each, so many (a test run only exercises the code).
fn runs(ctx: &Ctx) -> usize {
    match (ctx.scale < 0.01, ctx.full) {
        (true, _) => 3,
        (false, false) => 41,
        (false, true) => 101,
    }
}
