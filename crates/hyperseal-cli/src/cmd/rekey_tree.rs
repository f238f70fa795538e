//! `hyperseal rekey --recursive DIR…` (and `--include/--exclude/--manifest`, or a folder among
//! the operands): every file of a tree through the library's `rekey_tree`, the identities
//! unlocked once, a line per file (or a progress bar), a summary, exit 0 only if nothing failed.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Result;
use hyperseal::recipient::Identity;
use hyperseal::rekey::{rekey_tree, Change, TreeOptions, TreeOutcome, Written, MANIFEST_NAME};

use super::rekey_common::{say_recovered, summary, warn_removal, RekeyArgs};
use crate::errors::usage;

/// Whether this command re-keys a tree: `--recursive`, a selection or a manifest, or a folder;
/// or several files opened by an identity that unlocks in batches (a plugin: one run, one
/// PIN or touch, for all of them instead of one per file).
pub(super) fn wanted(a: &RekeyArgs, identities: &[Box<dyn Identity>]) -> bool {
    let batch = a.files.len() > 1
        && identities.iter().any(|id| id.unwraps_in_batches())
        && a.output.is_none()
        && !a.rotate
        && a.passphrase_file.is_none();
    a.recursive
        || !a.include.is_empty()
        || !a.exclude.is_empty()
        || a.manifest.is_some()
        || a.files.iter().any(|f| f.is_dir())
        || batch
}

pub(super) fn run(a: &RekeyArgs, identities: &[Box<dyn Identity>], change: Change) -> Result<()> {
    if a.output.is_some() {
        return Err(usage("-o takes one input file", "re-key a tree in place (drop -o)"));
    }
    if a.rotate || a.passphrase_file.is_some() {
        return Err(usage(
            "--rotate and --passphrase-file re-key one file at a time",
            "give the files themselves, without --recursive",
        ));
    }
    let manifest = match (&a.manifest, a.recursive, &a.files[..]) {
        (Some(m), _, _) => Some(m.clone()),
        (None, true, [dir]) if dir.is_dir() => Some(dir.join(MANIFEST_NAME)),
        (None, true, _) => {
            return Err(usage(
                "--recursive over several operands needs --manifest PATH",
                "give one folder, or say where the run's manifest goes",
            ))
        }
        (None, false, _) => None,
    };
    let opts = TreeOptions {
        recursive: a.recursive,
        include: a.include.clone(),
        exclude: a.exclude.clone(),
        follow_links: a.follow_symlinks,
        dry_run: a.dry_run,
        manifest,
        split_links: a.split_links,
        threads: a.threads,
    };
    let bar = (!a.quiet && !a.dry_run && std::io::stderr().is_terminal()).then(|| {
        let b = indicatif::ProgressBar::new(0);
        b.set_style(
            indicatif::ProgressStyle::with_template("re-keying [{bar:30}] {pos}/{len} files, eta {eta}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        b
    });
    let progress = |done: usize, total: usize| {
        if let Some(b) = &bar {
            b.set_length(total as u64);
            b.set_position(done as u64);
        }
    };
    let report = rekey_tree(&a.files, identities, &change, &opts, Some(&progress))?;
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let (in_place, rewritten, done, skipped, failed) = report.counts();
    let total = report.files.len();
    let mut removed = false;
    for (path, outcome) in report.files {
        let name = path.display();
        match outcome {
            TreeOutcome::Rekeyed(r) => {
                say_recovered(&path, r.recovered.as_ref());
                let (before, after) = (summary(&r.plan.before), summary(&r.plan.after));
                removed |= r.plan.removed > 0;
                match r.written {
                    Written::Nothing => println!("{name}: {before} -> {after}"),
                    _ if a.quiet || bar.is_some() => {}
                    Written::InPlace => eprintln!("{name}: {before} -> {after} (header rewritten in place)"),
                    Written::Rewritten { bytes } => {
                        eprintln!("{name}: {before} -> {after} (rewritten ({bytes} bytes, payload copied))")
                    }
                }
            }
            TreeOutcome::AlreadyDone if !a.quiet => {
                eprintln!("{name}: already done by an earlier run (header verified)")
            }
            TreeOutcome::Skipped(why) if !a.quiet => eprintln!("{name}: skipped: {why}"),
            TreeOutcome::Failed(e) => {
                let e = anyhow::Error::new(e).context(name.to_string());
                crate::errors::report(&e);
            }
            _ => {}
        }
    }
    if removed && !a.dry_run {
        warn_removal(&PathBuf::from("these files"));
    }
    let changed = match a.dry_run {
        true => format!("would re-key {}", in_place + rewritten),
        false => format!("re-keyed {} ({in_place} in place, {rewritten} rewritten)", in_place + rewritten),
    };
    if !a.quiet || failed > 0 {
        eprintln!(
            "hyperseal: {total} files: {changed}, {done} already done, {skipped} skipped, {failed} failed"
        );
    }
    match failed {
        0 => Ok(()),
        n => {
            eprintln!("hyperseal: error: {n} of {total} files failed (each error above says what its file was left as)");
            Err(crate::errors::Reported.into())
        }
    }
}
