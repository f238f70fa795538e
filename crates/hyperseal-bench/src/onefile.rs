//! The engine table's "one file on every core" section: one large file encrypted and decrypted
//! by the `hyperseal` binary at 1, 2, 4, … threads up to all cores, beside two floors measured
//! in the same run: `cp`, and a parallel copy of the same file by the same number of threads
//! with the I/O method hyperseal uses (`pwrite` at offsets; see the library's
//! `stream/positional.rs` for why never a shared mapping). On many
//! cores a parallel copy, not `cp`, is the floor for one file. age (when installed) gives the
//! peer's figure at its own speed. Run on the scratch directory (tmpfs where there is one) and
//! on a disk filesystem (the repository's `target/`), each named in the report.
//!
//! Every figure is the minimum of the runs (a single large write on tmpfs varies 1–5× run to
//! run on a shared machine; the fastest run is the one least disturbed), with the median beside.

use std::fs::{self, File};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, Result};
use hyperseal::Kind;

use super::child::{which, Job};
use super::files::{ratio, s};
use super::report::{Cell, Section, TableReport};
use super::stats::{fmt_size, Stats};
use super::{Ctx, ScratchFile};

pub fn one_file(ctx: &Ctx, out: &mut TableReport) -> Result<()> {
    // nkCryptoTool's file size in the full profile; 1 GiB in the quick one.
    let size = ctx.size(if ctx.full { 6_700_000_000 } else { 1 << 30 });
    let repo = ctx.repo.canonicalize().unwrap_or_else(|_| ctx.repo.clone());
    let disk = repo.join("target").join("bench-disk");
    let mut places = vec![(ctx.tmp.path().to_path_buf(), fs_type(ctx.tmp.path()))];
    // A second place only where it is another kind of filesystem (a checkout on tmpfs would
    // measure the same thing twice: the label names the path too, so kinds are compared).
    if fs::create_dir_all(&disk).is_ok() && fs_kind(&disk) != fs_kind(ctx.tmp.path()) {
        places.push((disk.clone(), fs_type(&disk)));
    }
    out.note(format!(
        "One file on every core: {} per run, `hyperseal encrypt -q --threads N -r X25519 -o OUT IN` and `decrypt -q --threads N`; \
         floors: `cp IN OUT`, and a parallel copy (N threads, each reading a slice with pread and writing it with pwrite, \
         then fsync: hyperseal's own I/O). hyperseal and the parallel copy make the output durable (fsync) before it is named; cp does not, which on a disk is most of the difference. Figures: minimum of {} runs (median in brackets); ratios of minima.",
        fmt_size(size),
        ctx.reps(size)
    ));
    let key = ctx.cli_key(Kind::X25519).map_err(anyhow::Error::msg)?;
    let exe = ctx.exe()?;
    let mut counts: Vec<usize> =
        std::iter::successors(Some(1usize), |n| Some(n * 2)).take_while(|n| *n < ctx.threads).collect();
    counts.push(ctx.threads);
    let age = which("age");
    for (dir, fs_name) in places {
        let input = ctx.data_file_at(dir.join("onefile.in"), size)?;
        let scratch = |name: &str| ScratchFile(dir.join(name));
        let (ct, pt, copy) = (scratch("onefile.ct"), scratch("onefile.pt"), scratch("onefile.cp"));
        let reps = ctx.reps(size);
        ctx.progress("engine", format!("one file, {fs_name}: cp"));
        let cp =
            Job::new("cp", &[&s(&input.0), &s(&copy.0)]).output(&copy.0).measure(ctx.tmp.path(), reps)?.wall;
        let _ = fs::remove_file(&copy.0);
        let mut sec = Section::new(
            format!("One file on every core: {} on {fs_name}", fmt_size(size)),
            &[
                "threads",
                "encrypt s",
                "decrypt s",
                "parallel copy s",
                "cp s",
                "encrypt ÷ parallel copy",
                "decrypt ÷ parallel copy",
                "encrypt ÷ cp",
                "decrypt ÷ cp",
            ],
        );
        let mut last: Option<(usize, f64, f64)> = None;
        for &n in &counts {
            ctx.progress("engine", format!("one file, {fs_name}: {n} threads"));
            let t = n.to_string();
            let enc = Job::new(
                exe,
                &["encrypt", "-q", "--threads", &t, "-r", &key.recipient, "-o", &s(&ct.0), &s(&input.0)],
            )
            .output(&ct.0)
            .measure(ctx.tmp.path(), reps)?
            .wall;
            let dec = Job::new(
                exe,
                &["decrypt", "-q", "--threads", &t, "-i", &s(&key.identity), "-o", &s(&pt.0), &s(&ct.0)],
            )
            .output(&pt.0)
            .measure(ctx.tmp.path(), reps)?
            .wall;
            let _ = fs::remove_file(&pt.0);
            let floor = timed_copies(&input.0, &copy.0, n, reps)?;
            let _ = fs::remove_file(&copy.0);
            last = Some((n, enc.min, dec.min));
            sec.rows.push(vec![
                Cell::num(n as f64, "", t.clone()),
                secs(&enc),
                secs(&dec),
                secs(&floor),
                secs(&cp),
                ratio(enc.min / floor.min),
                ratio(dec.min / floor.min),
                ratio(enc.min / cp.min),
                ratio(dec.min / cp.min),
            ]);
        }
        if let (Some(age), Some((n, enc, dec))) = (&age, last) {
            ctx.progress("engine", format!("one file, {fs_name}: age"));
            let age_ct = ScratchFile(dir.join("onefile.age"));
            let e = Job::new(age, &["-e", "-r", &key.recipient, "-o", &s(&age_ct.0), &s(&input.0)])
                .output(&age_ct.0)
                .measure(ctx.tmp.path(), reps)?
                .wall;
            let d = Job::new(age, &["-d", "-i", &s(&key.identity), "-o", &s(&pt.0), &s(&age_ct.0)])
                .output(&pt.0)
                .measure(ctx.tmp.path(), reps)?
                .wall;
            let _ = fs::remove_file(&pt.0);
            sec.rows.push(vec![
                Cell::text("age (its own threads)"),
                secs(&e),
                secs(&d),
                Cell::none(),
                secs(&cp),
                Cell::none(),
                Cell::none(),
                ratio(e.min / cp.min),
                ratio(d.min / cp.min),
            ]);
            out.note(format!(
                "{fs_name}: at {n} threads hyperseal encrypts {:.1}× and decrypts {:.1}× faster than age.",
                e.min / enc,
                d.min / dec
            ));
        }
        out.sections.push(sec);
    }
    let _ = fs::remove_dir(&disk);
    Ok(())
}

fn secs(s: &Stats) -> Cell {
    Cell::measured(*s, "s", format!("{:.3} ({:.3})", s.min, s.median))
}

/// The filesystem's type as `stat -f` names it (tmpfs, ext2/ext3 for ext4, xfs, …) and where.
/// The kind of filesystem `p` is on, as `stat -f` names it (empty where it cannot).
fn fs_kind(p: &Path) -> String {
    let t = Command::new("stat").args(["-f", "-c", "%T"]).arg(p).output().ok();
    t.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_default()
}

/// `p`'s filesystem kind and path, as the report names a place.
fn fs_type(p: &Path) -> String {
    let t = fs_kind(p);
    match t.as_str() {
        "" => p.display().to_string(),
        "ext2/ext3" => format!("ext4 ({})", p.display()),
        _ => format!("{t} ({})", p.display()),
    }
}

/// Seconds of `reps` parallel copies after one warm-up, the previous copy removed before each
/// (outside the timing, as the whole-process jobs remove their outputs before they start).
fn timed_copies(src: &Path, dst: &Path, threads: usize, reps: usize) -> Result<Stats> {
    let mut samples = Vec::with_capacity(reps);
    for i in 0..=reps.max(1) {
        let _ = fs::remove_file(dst);
        let t = std::time::Instant::now();
        parallel_copy(src, dst, threads)?;
        if i > 0 {
            samples.push(t.elapsed().as_secs_f64());
        }
    }
    Ok(Stats::of(&samples))
}

/// Copies `src` to `dst` with `threads` threads, each a run of 1 MiB slices, the way hyperseal
/// writes one file (`pread` and `pwrite` at offsets), then `fsync`, as hyperseal's output is
/// before it is named.
fn parallel_copy(src: &Path, dst: &Path, threads: usize) -> Result<()> {
    const SLICE: u64 = 1 << 20;
    let input = File::open(src)?;
    let len = input.metadata()?.len();
    let output =
        File::options().read(true).write(true).create_new(true).open(dst).context("parallel copy")?;
    let next = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| {
                let mut buf = vec![0u8; SLICE as usize];
                loop {
                    let at = next.fetch_add(SLICE, std::sync::atomic::Ordering::Relaxed);
                    if at >= len {
                        break;
                    }
                    let n = (len - at).min(SLICE) as usize;
                    input.read_exact_at(&mut buf[..n], at).expect("read");
                    output.write_all_at(&buf[..n], at).expect("write");
                }
            });
        }
    });
    output.sync_all()?;
    Ok(())
}
