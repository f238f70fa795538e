//! What `hyperseal rekey` on files and on a tree share: the command line, and the lines both
//! print for a file. The tree command and the files command import them from here, and the
//! files command hands a tree over to the tree command: imports run one way.

use std::path::{Path, PathBuf};

use clap::Args;
use hyperseal::rekey::Recovered;

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
    /// recipient who kept the old file key. With --sops: a fresh data key, every value sealed
    /// again (the recipients from .sops.yaml or -r/-R).
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
    /// sops files: change only the age entries of their `sops` metadata, to each file's
    /// `.sops.yaml` creation rule unless -r/--add/--remove say otherwise.
    #[arg(long)]
    pub(super) sops: bool,
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
