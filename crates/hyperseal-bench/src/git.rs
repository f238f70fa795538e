//! `git`: a repository of small marked files under `hyperseal git`, against git-crypt 0.7.0 on
//! the same shape and plain git with no filter (the floor), in one run: `git add -A && git
//! commit`, a fresh `git clone` with its unlock (which checks out every file), and removing one
//! recipient (hyperseal's header-only `git rekey`; git-crypt has no removal, so its row is what
//! it would take: a new key, every file sealed again, and the new key handed to every member).
//!
//! Every repository is made afresh outside the timing, with the same files (1 KiB each, in 100
//! folders) copied in with their times kept (`cp -p`: files written more than a second before
//! they are added, as files usually are). A file written in the same second as the index that
//! `git add` writes is "racily clean": the commit after it compares its contents again, cheaply
//! for plain git, through the filter for the others (a stored blob opened per file), which made
//! the commit row bimodal (0.02 s or 0.57 s for 2,000 files) depending on where a second
//! ended. git runs with no global or system configuration, and with `gc.auto=0`: 10,000 new
//! loose objects make `git commit` start `git gc --auto` in the background, which then packed
//! the repository while the clone row (and the next contender's rows) ran. Each repository is
//! packed instead, outside the timing, before it is cloned, as a clone from a server arrives
//! packed. The three contenders alternate within each round, so a noisy neighbour hits them
//! alike. Two more repositories in each round give hyperseal's floors, in notes: plain git
//! storing age files like the ones hyperseal stores (each 1 KiB file sealed to the same two
//! recipients: git's own work on those blobs, whose base64 stanzas zlib compresses, unlike
//! random bytes of their size), and git through a filter process that does nothing
//! (git_floor.rs) on those files.

use std::fs;
use std::path::Path;
use std::process::Command;

use anyhow::{bail, Result};
use hyperseal::recipient::{self, Kind};

use super::child::{which, Job};
use super::files::{ratio, s};
use super::report::{Cell, Section, TableReport};
use super::stats::{with_spread, Stats};
use super::{Ctx, Table};

pub struct Git;

/// The ways a repository is set up.
#[derive(Clone, Copy, PartialEq)]
enum Who {
    Plain,
    Hyperseal,
    GitCrypt,
    /// Plain git storing age files like hyperseal's, with no filter: git's own work for the
    /// blobs it stores under hyperseal (reported in a note, not a column).
    PlainSealed,
    /// git with a filter process that returns each of those files unchanged
    /// (`hyperseal-bench --git-null-filter`): what any filter process costs git, the floor for
    /// hyperseal's add (a note too; only its add is timed).
    NullFilter,
}

impl Table for Git {
    fn id(&self) -> &'static str {
        "git"
    }
    fn title(&self) -> &'static str {
        "git repositories: hyperseal git vs git-crypt 0.7.0 vs plain git"
    }
    fn mirrors(&self) -> &'static str {
        "how teams keep secrets in git: git-crypt's filter (a process per file), and git with no filter as the floor"
    }

    fn run(&self, ctx: &Ctx, out: &mut TableReport) -> Result<()> {
        let exe = ctx.exe()?;
        if which("git").is_none() {
            out.note("git is not on PATH (`make git-tools` installs Debian's): the table is empty.");
            return Ok(());
        }
        let crypt = which("git-crypt");
        let nominal = if ctx.full { 10_000.0 } else { 1_000.0 };
        let count = ((nominal * ctx.scale.min(1.0)).round() as usize).max(20);
        // Edition 2021, one thread here: the children inherit it.
        for (k, v) in [
            ("GIT_CONFIG_GLOBAL", "/dev/null"),
            ("GIT_CONFIG_NOSYSTEM", "1"),
            ("GIT_AUTHOR_NAME", "bench"),
            ("GIT_AUTHOR_EMAIL", "bench@example.com"),
            ("GIT_COMMITTER_NAME", "bench"),
            ("GIT_COMMITTER_EMAIL", "bench@example.com"),
            ("GIT_CONFIG_COUNT", "1"),
            ("GIT_CONFIG_KEY_0", "gc.auto"),
            ("GIT_CONFIG_VALUE_0", "0"),
        ] {
            std::env::set_var(k, v);
        }
        let base = ctx.path("git-table");
        let _ = fs::remove_dir_all(&base);
        fs::create_dir_all(&base)?;
        ctx.progress("git", format!("making {count} files of 1 KiB"));
        let src = base.join("src");
        make_tree(&src, count, 1024)?;
        let gen = |kind| recipient::generate(kind).map_err(|e| anyhow::anyhow!("{e}"));
        let (kept, leaver) = (gen(Kind::Hybrid)?, gen(Kind::Hybrid)?);
        let src_sealed = base.join("src-sealed");
        let sealed_size = make_sealed_tree(&src, &src_sealed, count, &[&kept.public, &leaver.public])?;
        let key = base.join("kept.key");
        fs::write(&key, format!("{}\n", kept.secret.as_str()))?;
        let both = format!("{}\n{}\n", kept.public, leaver.public);
        let one = format!("{}\n", kept.public);
        let crypt_key = base.join("git-crypt.key");

        let mut who = vec![Who::Plain, Who::Hyperseal];
        if crypt.is_some() {
            who.push(Who::GitCrypt);
        }
        who.push(Who::PlainSealed);
        who.push(Who::NullFilter);
        let me = s(&std::env::current_exe()?);
        let rounds = if ctx.scale < 0.01 || !ctx.full { 1 } else { 2 };
        let mut add: Vec<Vec<f64>> = vec![Vec::new(); 5];
        let mut clone: Vec<Vec<f64>> = vec![Vec::new(); 5];
        let mut rekey: Vec<Vec<f64>> = vec![Vec::new(); 5];
        // `hyperseal git clone` (clone and unlock in one step), against plain git's clone.
        let mut one_step: Vec<Vec<f64>> = vec![Vec::new(); 5];
        for round in 1..=rounds {
            for &w in &who {
                let i = w as usize;
                ctx.progress("git", format!("round {round} of {rounds}: {}", name(w)));
                let repo = base.join(format!("repo-{i}"));
                let _ = fs::remove_dir_all(&repo);
                let setup = match w {
                    Who::Plain | Who::PlainSealed => String::new(),
                    Who::Hyperseal => format!(
                        "'{exe}' git init 'secrets/**' 2>/dev/null && printf '%s' '{both}' > .age-recipients && '{exe}' git unlock -i '{key}' 2>/dev/null",
                        exe = s(exe),
                        key = s(&key),
                    ),
                    Who::GitCrypt => format!(
                        "git-crypt init >/dev/null && echo 'secrets/** filter=git-crypt diff=git-crypt' > .gitattributes && git-crypt export-key '{}'",
                        s(&crypt_key)
                    ),
                    Who::NullFilter => format!(
                        "git config filter.null.process \"'{me}' --git-null-filter\" && git config filter.null.required true && echo 'secrets/** filter=null -text' > .gitattributes"
                    ),
                };
                sh(
                    &base,
                    &format!(
                        "git init -q -b main '{r}' && cd '{r}' && {setup}{and} cp -rp '{src}/secrets' .",
                        r = s(&repo),
                        and = if setup.is_empty() { "" } else { " &&" },
                        src = s(if matches!(w, Who::PlainSealed | Who::NullFilter) {
                            &src_sealed
                        } else {
                            &src
                        }),
                    ),
                )?;
                add[i].push(in_dir(&repo, "git add -A && git commit -qm add").run_once(ctx.tmp.path())?.wall);
                if w == Who::NullFilter {
                    // A clone of it checks out what plain git's does: only its add is timed.
                    let _ = fs::remove_dir_all(&repo);
                    continue;
                }
                sh(&repo, "git repack -adq")?;

                let copy = base.join(format!("clone-{i}"));
                let _ = fs::remove_dir_all(&copy);
                let unlock = match w {
                    Who::Plain | Who::PlainSealed | Who::NullFilter => String::new(),
                    Who::Hyperseal => format!(" && '{}' git unlock -i '{}' 2>/dev/null", s(exe), s(&key)),
                    Who::GitCrypt => format!(" && git-crypt unlock '{}'", s(&crypt_key)),
                };
                let script =
                    format!("git clone -q '{}' '{}' && cd '{}'{unlock}", s(&repo), s(&copy), s(&copy));
                clone[i].push(in_dir(&base, &script).run_once(ctx.tmp.path())?.wall);
                let _ = fs::remove_dir_all(&copy);
                if w == Who::Hyperseal {
                    let script = format!(
                        "'{}' git clone -i '{}' '{}' '{}' 2>/dev/null",
                        s(exe),
                        s(&key),
                        s(&repo),
                        s(&copy)
                    );
                    one_step[i].push(in_dir(&base, &script).run_once(ctx.tmp.path())?.wall);
                    check_unlocked(&copy)?;
                    let _ = fs::remove_dir_all(&copy);
                }

                // One recipient removed. git-crypt has one symmetric key for everyone: removing
                // a member means a new key, every file sealed again, and the key sent to the rest.
                let rekey_script = match w {
                    Who::Plain | Who::PlainSealed | Who::NullFilter => None,
                    Who::Hyperseal => {
                        fs::write(repo.join(".age-recipients"), &one)?;
                        Some(format!("'{}' git rekey >/dev/null 2>&1", s(exe)))
                    }
                    Who::GitCrypt => Some(
                        "rm -rf .git/git-crypt && git-crypt init >/dev/null && git add --renormalize . && git commit -qm newkey"
                            .to_string(),
                    ),
                };
                if let Some(script) = rekey_script {
                    rekey[i].push(in_dir(&repo, &script).run_once(ctx.tmp.path())?.wall);
                }
                if w == Who::Hyperseal {
                    check_rekeyed(&repo)?;
                }
                let _ = fs::remove_dir_all(&repo);
            }
        }
        let _ = fs::remove_dir_all(&base);
        for k in [
            "GIT_CONFIG_GLOBAL",
            "GIT_CONFIG_NOSYSTEM",
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "GIT_CONFIG_COUNT",
        ] {
            std::env::remove_var(k);
        }
        std::env::remove_var("GIT_COMMITTER_NAME");
        std::env::remove_var("GIT_COMMITTER_EMAIL");
        std::env::remove_var("GIT_CONFIG_KEY_0");
        std::env::remove_var("GIT_CONFIG_VALUE_0");

        let mut sec = Section::new(
            format!("{count} marked files of 1 KiB: seconds (lower is better)"),
            &[
                "step",
                "plain git (floor)",
                "hyperseal git",
                "git-crypt 0.7.0",
                "hyperseal ÷ plain",
                "git-crypt ÷ hyperseal",
            ],
        );
        let cell = |v: &[f64]| match v.is_empty() {
            true => Cell::text("—"),
            false => {
                let st = Stats::of(v);
                Cell::measured(st, "s", with_spread(format!("{:.2}", st.median), &st))
            }
        };
        let median = |v: &[f64]| (!v.is_empty()).then(|| Stats::of(v).median);
        let mut goals = Vec::new();
        // The one-step clone's floor is plain git's clone.
        one_step[0] = clone[0].clone();
        for (step, v) in [
            ("git add -A && git commit", &add),
            ("git clone + unlock (every file checked out)", &clone),
            ("hyperseal git clone (clone and unlock in one step)", &one_step),
            ("one recipient removed (git-crypt: a new key for everyone)", &rekey),
        ] {
            let (p, h, c) = (median(&v[0]), median(&v[1]), median(&v[2]));
            let over_plain = match (h, p) {
                (Some(h), Some(p)) if p > 0.0 => ratio(h / p),
                _ => Cell::text("—"),
            };
            let over_hs = match (c, h) {
                (Some(c), Some(h)) if h > 0.0 => ratio(c / h),
                _ => Cell::text("—"),
            };
            if let (Some(h), Some(p)) = (h, p) {
                goals.push(format!("{step}: {:.1}× plain git", h / p));
            }
            if let (Some(h), Some(c)) = (h, c) {
                goals.push(format!("{step}: git-crypt {:.1}× hyperseal's time", c / h));
            }
            sec.rows.push(vec![Cell::text(step), cell(&v[0]), cell(&v[1]), cell(&v[2]), over_plain, over_hs]);
        }
        out.sections.push(sec);
        if let (Some(a), Some(c), Some(ha), Some(hc)) =
            (median(&add[3]), median(&clone[3]), median(&add[1]), median(&clone[1]))
        {
            out.note(format!(
                "Plain git storing the age files themselves, with no filter (each 1 KiB file sealed to \
                 the two recipients, {sealed_size} bytes, most of it the post-quantum stanzas' base64, \
                 which zlib compresses and git inflates again at checkout), the same rounds: add + \
                 commit {a:.2} s, clone {c:.2} s. hyperseal's rows are {:.1}× and {:.1}× that: what the \
                 filter protocol, the sealing and the unlock add to git's own work on these blobs.",
                ha / a,
                hc / c
            ));
        }
        if let (Some(n), Some(ha)) = (median(&add[4]), median(&add[1])) {
            out.note(format!(
                "git with a filter process that does nothing (`hyperseal-bench --git-null-filter`: each \
                 file returned as it came, one write per answer, as hyperseal's filter answers), on the \
                 same age files: add + commit {n:.2} s, {:.1}× plain git's on the 1 KiB files. That is \
                 what git spends on any filter process storing these blobs, so no filter storing these \
                 age files can come within 2× of plain git; hyperseal's add + commit is {:.2}× it.",
                median(&add[0]).map_or(f64::NAN, |p| n / p),
                ha / n
            ));
        }
        if crypt.is_none() {
            out.note(
                "git-crypt is not on PATH (`make git-tools` installs Debian's 0.7.0): its column is empty.",
            );
        }
        out.note(format!(
            "Files in {}: {count} files of 1 KiB (random bytes) in {} folders under secrets/, marked \
             `secrets/**`; hyperseal seals to two hybrid post-quantum recipients (ML-KEM-768 + X25519) \
             and unlocks with an identity file; git-crypt 0.7.0 uses its symmetric key (`git-crypt unlock \
             KEYFILE`). Removing one recipient: hyperseal git rekey re-keys every header and stages it \
             (payloads unchanged); git-crypt cannot remove a member, so its row is a new key (`git-crypt \
             init` again), every file sealed again (`git add --renormalize .`) and committed, and the new \
             key still has to reach every remaining member. Goals: within 2× plain git, ≥ 5× faster than \
             git-crypt. {}",
            ctx.tmp_note,
            count.min(100),
            goals.join("; ")
        ));
        Ok(())
    }
}

fn name(w: Who) -> &'static str {
    match w {
        Who::Plain => "plain git",
        Who::Hyperseal => "hyperseal git",
        Who::GitCrypt => "git-crypt",
        Who::PlainSealed => "plain git storing the age files",
        Who::NullFilter => "git with a do-nothing filter, the age files",
    }
}

/// `src`'s `count` files (as `make_tree` names them) sealed to `recipients` as the filter seals
/// them (age, binary), under the same names in `dir`; returns the first one's size.
fn make_sealed_tree(src: &Path, dir: &Path, count: usize, recipients: &[&str]) -> Result<usize> {
    let parsed = recipients
        .iter()
        .map(|r| recipient::parse_recipient(r))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut first = 0;
    for i in 0..count {
        let name = format!("secrets/d{:02}/f{i:05}.env", i % 100);
        let mut file = Vec::new();
        let mut w = hyperseal::Encryptor::with_recipients(&parsed, hyperseal::Options::age())
            .and_then(|e| e.wrap_output(&mut file))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        std::io::Write::write_all(&mut w, &fs::read(src.join(&name))?)?;
        w.finish().map_err(|e| anyhow::anyhow!("{e}"))?;
        if i == 0 {
            first = file.len();
        }
        write_old(&dir.join(&name), &file)?;
    }
    Ok(first)
}

/// `count` files of `size` bytes in 100 folders under `dir/secrets/`, each its own bytes.
fn make_tree(dir: &Path, count: usize, size: usize) -> Result<()> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..count {
        let mut data = vec![0u8; size];
        for b in data.iter_mut() {
            // xorshift64: cheap bytes that no tool compresses.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
        write_old(&dir.join(format!("secrets/d{:02}/f{i:05}.env", i % 100)), &data)?;
    }
    Ok(())
}

/// Writes `file` (its folder made if needed), an hour old, as files usually are when they are
/// added (see the module's docs): made just now, they would be racily clean in the first
/// round's commit.
fn write_old(file: &Path, data: &[u8]) -> Result<()> {
    if let Some(folder) = file.parent() {
        fs::create_dir_all(folder)?;
    }
    fs::write(file, data)?;
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    fs::File::options().write(true).open(file)?.set_modified(old)?;
    Ok(())
}

/// After `hyperseal git clone`: a marked file is plaintext, and the work tree is clean.
fn check_unlocked(copy: &Path) -> Result<()> {
    let first = fs::read(copy.join("secrets/d00/f00000.env"))?;
    let o = Command::new("git").args(["status", "--porcelain"]).current_dir(copy).output()?;
    if first.starts_with(b"age-encryption.org/v1\n") || !o.status.success() || !o.stdout.is_empty() {
        bail!("hyperseal git clone left a locked or changed work tree");
    }
    Ok(())
}

/// After hyperseal's rekey: every marked path staged, and nothing else.
fn check_rekeyed(repo: &Path) -> Result<()> {
    let o = Command::new("git").args(["diff", "--cached", "--name-only"]).current_dir(repo).output()?;
    let staged = String::from_utf8_lossy(&o.stdout);
    if staged.lines().any(|l| !l.starts_with("secrets/")) || staged.lines().count() == 0 {
        bail!("hyperseal git rekey staged something other than the marked files");
    }
    Ok(())
}

/// Runs `sh -c SCRIPT` in `dir` now (setup, not timed).
fn sh(dir: &Path, script: &str) -> Result<()> {
    let o = Command::new("sh").args(["-c", script]).current_dir(dir).output()?;
    if !o.status.success() {
        bail!("setup failed: {}", String::from_utf8_lossy(&o.stderr).trim());
    }
    Ok(())
}

/// `sh -c SCRIPT` in `dir`, to be timed.
fn in_dir(dir: &Path, script: &str) -> Job {
    Job::new("sh", &["-c", &format!("cd '{}' && {script}", s(dir))])
}
