//! `hyperseal rekey`: change who can open files without re-encrypting them (in place in
//! O(header) where the new header fits), or `--rotate` them (a fresh file key: a full
//! re-encryption at the engine's speed, never through plaintext at rest).

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;
use hyperseal::recipient::{self, Identity, Recipient};
use hyperseal::rekey::{rekey_file, rotate_file, Change, FileOptions, Recovered, Written};
use hyperseal::Decryptor;

use crate::errors::{hint, usage};
use crate::io;

#[derive(Args)]
pub struct RekeyArgs {
    /// An identity that opens the files (repeatable); its stanza is kept unless removed. Not
    /// needed where HYPERSEAL_AGENT_SOCK names an agent that holds one.
    #[arg(short = 'i', long = "identity")]
    pub(super) identities: Vec<PathBuf>,
    /// Passphrase of a passphrase-encrypted identity file, first line of FILE; default: ask.
    #[arg(long = "identity-passphrase-file")]
    pub(super) identity_passphrase_file: Option<PathBuf>,
    /// The full new recipient list (repeatable): replaces every stanza.
    #[arg(short = 'r', long = "recipient", allow_hyphen_values = true)]
    pub(super) recipients: Vec<String>,
    /// File of the full new recipient list (repeatable).
    #[arg(short = 'R', long = "recipients-file")]
    pub(super) recipient_files: Vec<PathBuf>,
    /// Replace every stanza with the passphrase on the first line of FILE.
    #[arg(long = "passphrase-file", conflicts_with_all = ["recipients", "recipient_files", "add", "remove"])]
    pub(super) passphrase_file: Option<PathBuf>,
    /// Add a recipient, keeping every other stanza (repeatable).
    #[arg(long, allow_hyphen_values = true, conflicts_with_all = ["recipients", "recipient_files"])]
    pub(super) add: Vec<String>,
    /// Remove a recipient whose stanzas name it: SSH, RSA-OAEP, age1tag… (repeatable). X25519
    /// and post-quantum stanzas are anonymous: give the full new list with -r/-R instead.
    #[arg(long, allow_hyphen_values = true, conflicts_with_all = ["recipients", "recipient_files"])]
    pub(super) remove: Vec<String>,
    /// Allow a result that none of the -i identities opens.
    #[arg(long = "remove-own")]
    pub(super) remove_own: bool,
    /// A fresh file key and salt: re-encrypts the payload (needs the full list: -r/-R or
    /// --passphrase-file). Only this protects what is written from now on against a removed
    /// recipient who kept the old file key.
    #[arg(long, conflicts_with_all = ["add", "remove"])]
    pub(super) rotate: bool,
    /// Show the recipients before and after; change nothing.
    #[arg(long = "dry-run")]
    pub(super) dry_run: bool,
    /// Write the result here instead of over the file (one input file only).
    #[arg(short = 'o', long = "output")]
    pub(super) output: Option<PathBuf>,
    /// Overwrite an existing -o file.
    #[arg(long)]
    pub(super) force: bool,
    /// Rewrite a file that has other hard links (they keep the old header and recipients);
    /// without it such a file is re-keyed only in place.
    #[arg(long = "split-links")]
    pub(super) split_links: bool,
    /// Walk directories: every file under them that hyperseal or age can open (others are
    /// listed as skipped, never touched). Keeps a manifest, so a killed run resumes.
    #[arg(long)]
    pub(super) recursive: bool,
    /// Only files matching GLOB (repeatable): `*` and `?` within a name, `**` across folders; a
    /// GLOB with `/` is matched against the path under the folder given, else the file name.
    #[arg(long, value_name = "GLOB")]
    pub(super) include: Vec<String>,
    /// No file matching GLOB (repeatable; as --include).
    #[arg(long, value_name = "GLOB")]
    pub(super) exclude: Vec<String>,
    /// Follow symbolic links (skipped by default).
    #[arg(long = "follow-symlinks")]
    pub(super) follow_symlinks: bool,
    /// The run's manifest (header digests per file, no keys), for resuming a killed run with the
    /// same command; default with --recursive on one folder: FOLDER/.hyperseal-rekey.manifest.
    #[arg(long, value_name = "PATH")]
    pub(super) manifest: Option<PathBuf>,
    /// Files re-keyed at once in a tree (default and most: one per CPU).
    #[arg(long, value_name = "N", default_value_t = 0, hide_default_value = true)]
    pub(super) threads: usize,
    /// No progress bar, no per-file lines.
    #[arg(short = 'q', long)]
    pub(super) quiet: bool,
    /// Encrypted files to re-key.
    #[arg(required = true)]
    pub(super) files: Vec<PathBuf>,
}

pub fn run(a: RekeyArgs) -> Result<()> {
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
    let report =
        rekey_file(file, ids, change, &file_options(a)).map_err(|e| output_error(e, a.output.as_deref()))?;
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
        .map_err(|e| output_error(e, a.output.as_deref()));
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

/// An interrupted re-key resolved before this one: always said, even with -q (it changed or
/// confirmed who can open the file).
pub(super) fn say_recovered(file: &Path, r: Option<&Recovered>) {
    let Some(r) = r else { return };
    let (before, after) = (summary(&r.before), summary(&r.after));
    if r.old_copy_removed {
        eprintln!(
            "hyperseal: note: {}: a re-key was interrupted while it replaced the file; the old version's second name ({}) was removed",
            file.display(),
            hyperseal::rekey::old_copy_path(file).display()
        );
    }
    if r.new_copy_removed {
        eprintln!(
            "hyperseal: note: {}: a re-key was killed as it replaced the file; its new version, which never took the file's name, was removed (the file is as it was)",
            file.display()
        );
    }
    if r.cut_short {
        eprintln!(
            "hyperseal: note: {}: an interrupted re-key had stopped before changing anything (its journal was incomplete); the journal was removed",
            file.display()
        );
        return;
    }
    if r.before.is_empty() {
        return;
    }
    match r.completed {
        true => eprintln!(
            "hyperseal: note: {}: an interrupted re-key was completed first: {before} -> {after}",
            file.display()
        ),
        false => eprintln!(
            "hyperseal: note: {}: an interrupted re-key ({before} -> {after}) had not been written; it was undone",
            file.display()
        ),
    }
}

/// The passphrase recipient for `file`'s profile (scrypt for age files, Argon2id otherwise).
fn passphrase_for(file: &Path, p: &Path) -> Result<Box<dyn Recipient>> {
    let f = std::fs::File::open(file)?;
    let profile = Decryptor::new(&f)?.header().profile;
    Ok(recipient::passphrase_recipient(profile, io::read_passphrase_file(p)?))
}

pub(super) fn warn_removal(file: &Path) {
    eprintln!(
        "hyperseal: warning: {}: a removed recipient can still open every old copy, backup, git revision and S3 \
         version of this file, and may have kept its file key; only --rotate protects what is written from now on",
        file.display()
    );
}

/// "2 X25519, 1 mlkem768x25519" from stanza types in order.
pub(super) fn summary(types: &[String]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for t in types {
        match counts.iter_mut().find(|(n, _)| n == t) {
            Some((_, c)) => *c += 1,
            None => counts.push((t, 1)),
        }
    }
    let parts: Vec<String> = counts.iter().map(|(t, c)| format!("{c} {t}")).collect();
    format!("[{}]", parts.join(", "))
}

/// An output error keeps its `--force` hint.
fn output_error(e: hyperseal::Error, output: Option<&Path>) -> anyhow::Error {
    let exists = matches!(&e, hyperseal::Error::Io(io) if io.get_ref()
        .and_then(|i| i.downcast_ref::<hyperseal::output::OutputError>())
        .is_some_and(|o| o.kind() == hyperseal::output::OutputErrorKind::AlreadyExists));
    match (exists, output) {
        (true, Some(_)) => hint(e, "use --force to replace it"),
        _ => e.into(),
    }
}
