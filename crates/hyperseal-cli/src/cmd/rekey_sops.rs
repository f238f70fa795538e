//! `hyperseal rekey --sops`: the age entries of sops files moved to a new recipient set, every
//! other byte kept (`hyperseal-sops`). The target is each file's `.sops.yaml`
//! creation rule (as `sops updatekeys` reads it), or `-r`/`--add`/`--remove`. Identities are
//! `-i`, the agent, and where sops looks for age keys: `SOPS_AGE_KEY`, `SOPS_AGE_KEY_FILE`, and
//! its default key file. The environment is read here: the library takes keys as arguments.
//! The walk, the rules, the windows of files unlocked once and each file's atomic write are
//! the library's (`hyperseal_sops::rekey_files`); this prints the progress and the summary.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use anyhow::{anyhow, Result};
use hyperseal::recipient::{self, Identity};
use hyperseal_sops::{self as sops, FileOutcome, FilesOptions, FilesReport, Target};

use super::rekey_common::RekeyArgs;
use crate::errors::usage;

pub fn run(a: &RekeyArgs) -> Result<()> {
    // Each file is written whole and atomically, so a stopped run needs no manifest: run again.
    if a.output.is_some()
        || a.passphrase_file.is_some()
        || a.manifest.is_some()
        || !a.include.is_empty()
        || !a.exclude.is_empty()
    {
        return Err(usage(
            "--sops takes -r/-R, --add, --remove, -i, --recursive, --rotate, --threads, --dry-run, --force and -q",
            "re-key sops files in place; select them with .sops.yaml's path_regex",
        ));
    }
    let identities = identities(a)?;
    if identities.is_empty() {
        return Err(usage(
            "no identity to open the files with",
            "give -i, set SOPS_AGE_KEY_FILE or SOPS_AGE_KEY, or point HYPERSEAL_AGENT_SOCK at an agent",
        ));
    }
    if let Some(f) = a.files.iter().find(|f| !a.recursive && f.is_dir()) {
        return Err(usage(
            format!("{} is a folder", f.display()),
            "add --recursive to re-key the sops files under it",
        ));
    }
    let options = FilesOptions {
        target: explicit_target(a)?,
        force: a.force,
        rotate: a.rotate.then(SystemTime::now),
        dry_run: a.dry_run,
        recursive: a.recursive,
        threads: a.threads,
    };
    let bar = progress(a);
    let on_progress = |done: usize, total: usize| {
        if let Some(b) = bar.as_ref().filter(|_| total > 1) {
            b.set_length(total as u64);
            b.set_position(done as u64);
        }
    };
    let report = sops::rekey_files(
        &a.files,
        &Arc::new(identities),
        &options,
        &super::identity::parse_recipient_arg,
        Some(&on_progress),
    )
    .map_err(|e| anyhow!(reason(&e)))?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    summary(a, &report)
}

/// `-r`/`-R` (the one group's list) or `--add`/`--remove`; `None`: each file's rule.
fn explicit_target(a: &RekeyArgs) -> Result<Option<Target>> {
    let mut set = a.recipients.clone();
    for f in &a.recipient_files {
        let text = crate::io::read_small(f, "recipients file")?;
        set.extend(
            text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_owned),
        );
    }
    for r in set.iter().chain(&a.add) {
        super::identity::parse_recipient_arg(r).map_err(|e| super::encrypt::recipient_error(e, None))?;
    }
    Target::from_lists(set, a.add.clone(), a.remove.clone()).map_err(|e| anyhow!(reason(&e)))
}

/// `-i`, the agent, then sops's own places for age keys.
fn identities(a: &RekeyArgs) -> Result<Vec<Box<dyn Identity>>> {
    let mut ids = super::identity::load_identities(&a.identities, a.identity_passphrase_file.as_deref())?;
    ids.extend(super::identity::agent_identity());
    if let Some(text) = std::env::var_os("SOPS_AGE_KEY").filter(|v| !v.is_empty()) {
        let text = zeroize::Zeroizing::new(text.to_string_lossy().into_owned());
        ids.extend(recipient::parse_identities(&text).map_err(|e| anyhow!("SOPS_AGE_KEY: {e}"))?);
    }
    let file =
        std::env::var_os("SOPS_AGE_KEY_FILE").filter(|v| !v.is_empty()).map(PathBuf::from).or_else(|| {
            // sops's default: $XDG_CONFIG_HOME/sops/age/keys.txt (~/.config without it).
            let base = std::env::var_os("XDG_CONFIG_HOME")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
            Some(base.join("sops/age/keys.txt")).filter(|p| p.is_file())
        });
    if let Some(f) = file {
        ids.extend(super::identity::load_identities(&[f], a.identity_passphrase_file.as_deref())?);
    }
    Ok(ids)
}

/// A bar on a terminal, its length set by the library's first call (after the walk).
fn progress(a: &RekeyArgs) -> Option<indicatif::ProgressBar> {
    if a.quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(0).with_style(
        indicatif::ProgressStyle::with_template("re-keying sops files [{bar:30}] {pos}/{len} eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    Some(bar)
}

/// A failed file's reason: the library's refusals are `InvalidArgument`s whose text is the
/// whole reason; whatever a file put in it is shown with anything like a key redacted.
fn reason(e: &hyperseal::Error) -> String {
    let text = match e {
        hyperseal::Error::InvalidArgument(why) => why.clone(),
        hyperseal::Error::Io(e) => crate::errors::strip_os_error(&e.to_string()),
        e => e.to_string(),
    };
    crate::errors::redact(&text).into_owned()
}

fn summary(a: &RekeyArgs, report: &FilesReport) -> Result<()> {
    let (changed, unchanged, skipped, failed) = report.counts();
    let verb = if a.dry_run { "would change" } else { "changed" };
    for (file, done) in &report.files {
        let name = file.display();
        match done {
            FileOutcome::Changed { added: add, removed: rm } => {
                if !a.quiet {
                    eprintln!(
                        "{verb} {name}: {add} age entr{} added, {rm} removed",
                        if *add == 1 { "y" } else { "ies" }
                    );
                }
            }
            FileOutcome::Unchanged => {
                if !a.quiet {
                    eprintln!("unchanged {name}: already the target");
                }
            }
            FileOutcome::Skipped(why) => {
                if !a.quiet {
                    eprintln!("skipped {name}: {why}");
                }
            }
            FileOutcome::Failed(e) => {
                eprintln!("hyperseal: error: {name}: {}; nothing changed", reason(e));
            }
        }
    }
    // Always said, even with -q, as the age re-key says it: the old version opened for the
    // recipients it had.
    for p in &report.cleared {
        match p.to_string_lossy().ends_with(".hyperseal-old") {
            true => eprintln!(
                "hyperseal: note: a re-key was interrupted while it replaced a file; the old version's second name ({}) was removed",
                p.display()
            ),
            false => eprintln!(
                "hyperseal: note: a re-key was killed as it replaced a file; its new version, which never took the file's name ({}), was removed",
                p.display()
            ),
        }
    }
    if !a.quiet || failed > 0 {
        eprintln!("sops files: {changed} {verb}, {unchanged} unchanged, {skipped} skipped, {failed} failed");
    }
    match failed {
        0 => Ok(()),
        _ => {
            eprintln!("hyperseal: hint: each failed file is as it was; fix what its line says and run again");
            Err(crate::errors::Reported.into())
        }
    }
}
