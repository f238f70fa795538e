//! `hyperseal rekey`: change who can open files without re-encrypting them (in place in
//! O(header) where the new header fits), or `--rotate` them (a fresh file key: a full
//! re-encryption at the engine's speed, never through plaintext at rest).

use std::path::Path;

use anyhow::Result;
use hyperseal::recipient::{self, Identity, Recipient};
use hyperseal::rekey::{rekey_file, rotate_file, Change, FileOptions, Written};
use hyperseal::Decryptor;

pub use super::rekey_common::RekeyArgs;
use super::rekey_common::{say_recovered, summary, warn_removal};
use crate::errors::{hint, usage};
use crate::io;

pub fn run(a: RekeyArgs) -> Result<()> {
    if a.sops {
        return super::rekey_sops::run(&a);
    }
    if a.output.is_some() && a.files.len() > 1 {
        return Err(usage(
            "-o takes one input file",
            "re-key several files in place, or one at a time with -o",
        ));
    }
    let set = !a.recipients.is_empty() || !a.recipient_files.is_empty() || a.passphrase_file.is_some();
    if !set && a.add.is_empty() && a.remove.is_empty() {
        return Err(usage("nothing to change", "give the new list (-r/-R), or --add/--remove"));
    }
    if a.rotate && !set {
        return Err(usage(
            "--rotate needs the full new list",
            "give -r/-R (or --passphrase-file) with --rotate",
        ));
    }
    let mut identities =
        super::identity::load_identities(&a.identities, a.identity_passphrase_file.as_deref())?;
    identities.extend(super::identity::agent_identity());
    if identities.is_empty() {
        return Err(usage(
            "the following required arguments were not provided: --identity <IDENTITIES>",
            "give -i with a key that opens the files, or point HYPERSEAL_AGENT_SOCK at an identity agent",
        ));
    }
    if super::rekey_tree::wanted(&a, &identities) {
        return super::rekey_tree::run(&a, &identities, change(&a, set)?);
    }
    let mut failed = 0;
    for file in &a.files {
        let change = change(&a, set)?;
        let result = match a.rotate {
            true => rotate(file, &identities, change, &a),
            false => rekey(file, &identities, &change, &a),
        };
        if let Err(e) = result {
            failed += 1;
            let e = e.context(file.display().to_string());
            crate::errors::report(&e);
        }
    }
    match failed {
        0 => Ok(()),
        _ if a.files.len() == 1 => Err(crate::errors::Reported.into()),
        n => {
            eprintln!(
                "hyperseal: error: {n} of {} files failed (each error above says what its file was left as)",
                a.files.len()
            );
            Err(crate::errors::Reported.into())
        }
    }
}

/// The change for one file (recipients wrap per file: each file has its own file key).
pub(super) fn change(a: &RekeyArgs, set: bool) -> Result<Change> {
    let parse = |list: &[String]| -> Result<Vec<Box<dyn Recipient>>> {
        list.iter()
            .map(|r| {
                super::identity::parse_recipient_arg(r).map_err(|e| super::encrypt::recipient_error(e, None))
            })
            .collect()
    };
    let mut change =
        Change { add: parse(&a.add)?, remove: parse(&a.remove)?, remove_own: a.remove_own, set: None };
    if set {
        let mut list = parse(&a.recipients)?;
        for f in &a.recipient_files {
            let text = zeroize::Zeroizing::new(io::read_small(f, "recipients file")?);
            list.extend(
                super::identity::parse_recipients_text(&text, f)
                    .map_err(|e| super::encrypt::recipient_error(e, Some(f)))?,
            );
        }
        change.set = Some(list);
    }
    Ok(change)
}

fn rekey(file: &Path, ids: &[Box<dyn Identity>], change: &Change, a: &RekeyArgs) -> Result<()> {
    let mut change_with_pass;
    let change = match &a.passphrase_file {
        Some(p) => {
            change_with_pass = Change { remove_own: change.remove_own, ..Change::default() };
            change_with_pass.set = Some(vec![passphrase_for(file, p)?]);
            &change_with_pass
        }
        None => change,
    };
    let report = rekey_file(file, ids, change, &file_options(a))
        .map_err(|e| output_error(before_any_write(e), a.output.as_deref()))?;
    say_recovered(file, report.recovered.as_ref());
    let p = &report.plan;
    if a.dry_run {
        println!("{}: {} -> {}", file.display(), summary(&p.before), summary(&p.after));
        return Ok(());
    }
    if !a.quiet {
        let how = match report.written {
            Written::InPlace => "header rewritten in place".to_string(),
            Written::Rewritten { bytes } => format!("rewritten ({bytes} bytes, payload copied)"),
            Written::Nothing => "unchanged".to_string(),
        };
        eprintln!("{}: {} -> {} ({how})", file.display(), summary(&p.before), summary(&p.after));
    }
    if p.removed > 0 {
        warn_removal(file);
    }
    Ok(())
}

/// `--rotate`: a new file (fresh file key and salt) from the old one's plaintext, streamed from
/// decryption into encryption in memory, into an all-or-nothing output over the file (or -o).
fn rotate(file: &Path, ids: &[Box<dyn Identity>], change: Change, a: &RekeyArgs) -> Result<()> {
    let recipients = match &a.passphrase_file {
        Some(p) => vec![passphrase_for(file, p)?],
        None => change.set.unwrap_or_default(),
    };
    let size = std::fs::metadata(file).ok().map(|m| m.len());
    let bar = io::progress_bar(a.quiet || a.dry_run, size, "rotating");
    let progress = bar.clone().map(|b| move |n: u64| b.set_position(n));
    let progress = progress.as_ref().map(|f| f as &(dyn Fn(u64) + Sync));
    let done = rotate_file(file, ids, &recipients, change.remove_own, &file_options(a), progress)
        .map_err(|e| output_error(before_any_write(e), a.output.as_deref()));
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let done = done?;
    say_recovered(file, done.recovered.as_ref());
    if a.dry_run {
        println!("{}: rotate to {} recipient(s), fresh file key", file.display(), recipients.len());
    } else if !a.quiet {
        eprintln!("{}: rotated (fresh file key, payload re-encrypted)", file.display());
    }
    Ok(())
}

fn file_options(a: &RekeyArgs) -> FileOptions {
    FileOptions { output: a.output.clone(), force: a.force, dry_run: a.dry_run, split_links: a.split_links }
}

/// The passphrase recipient for `file`'s profile (scrypt for age files, Argon2id otherwise).
fn passphrase_for(file: &Path, p: &Path) -> Result<Box<dyn Recipient>> {
    let f = std::fs::File::open(file)?;
    let profile = Decryptor::new(&f)?.header().profile;
    Ok(recipient::passphrase_recipient(profile, io::read_passphrase_file(p)?))
}

/// An output error keeps its `--force` hint.
/// A file that is empty, not a hyperseal or age file, or opened by none of the identities fails
/// before anything is read past its header: said as every other failure of a file's re-key is,
/// with what the file was left as (the library leaves these bare, for a tree to count as skipped).
fn before_any_write(e: hyperseal::Error) -> hyperseal::Error {
    use hyperseal::Error;
    match e {
        e @ (Error::NoIdentityMatched | Error::UnknownFormat | Error::EmptyInput | Error::Armor(_)) => {
            Error::Rekey { outcome: hyperseal::rekey::Outcome::Unchanged, source: Box::new(e) }
        }
        e => e,
    }
}

fn output_error(e: hyperseal::Error, output: Option<&Path>) -> anyhow::Error {
    let exists = matches!(&e, hyperseal::Error::Io(io) if io.get_ref()
        .and_then(|i| i.downcast_ref::<hyperseal::output::OutputError>())
        .is_some_and(|o| o.kind() == hyperseal::output::OutputErrorKind::AlreadyExists));
    match (exists, output) {
        (true, Some(_)) => hint(e, "use --force to replace it"),
        _ => e.into(),
    }
}
