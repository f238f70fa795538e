//! `{ sops: true }`: sops files re-keyed (or rotated) over `hyperseal-sops`. Files
//! and folders go through `rekey_files` (its walk, `.sops.yaml` rules, one unlock per window of
//! files and atomic write-over); bytes through `rekey_with` / `rotate_with`. This converts the
//! options into the library's `Target` and its report into the JS shapes, nothing else.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use hyperseal::recipient::plugin::Plugins;
use hyperseal::recipient::{self, Recipient};
use hyperseal_sops::{self as sops, FileOutcome, FilesOptions, FilesReport, Format, SopsOutcome, Target};
use napi::bindgen_prelude::Either;

use super::report::{count, Entry};
use super::{Identities, RekeyPlan, RekeyReport, RekeyTreeReport, RekeyTreeSummary};
use crate::errors::Fail;
use crate::keys::PublicKeys;

/// The keys and flags a sops re-key takes, from either options object.
pub struct SopsArgs<'a> {
    pub recipients: &'a Option<PublicKeys>,
    pub add: &'a Option<PublicKeys>,
    pub remove: &'a Option<PublicKeys>,
    pub passphrase: &'a Option<String>,
    pub remove_own: Option<bool>,
    pub rotate: Option<bool>,
    pub allow_plugins: Option<bool>,
}

fn strings(keys: &Option<PublicKeys>) -> Vec<String> {
    match keys {
        None => Vec::new(),
        Some(Either::A(s)) => vec![s.clone()],
        Some(Either::B(v)) => v.clone(),
    }
}

/// The library's target (`Target::from_lists`): `recipients` (the one key group's list) or
/// `add`/`remove`; `None` (each file's `.sops.yaml` rule) when neither is given.
fn target(a: &SopsArgs<'_>) -> Result<Option<Target>, Fail> {
    if a.passphrase.is_some() {
        return Err(Fail::arg("sops files are opened with age identities, not a passphrase"));
    }
    let set = strings(a.recipients);
    if a.recipients.is_some() && set.is_empty() {
        return Err(Fail::arg("recipients: give at least one public key"));
    }
    Target::from_lists(set, strings(a.add), strings(a.remove)).map_err(argument)
}

/// A library refusal of the caller's arguments, as the argument error it is.
fn argument(e: hyperseal::Error) -> Fail {
    match e {
        hyperseal::Error::InvalidArgument(why) => Fail::arg(why),
        e => Fail::arg(e.to_string()),
    }
}

/// The library's options for files.
pub fn files_options(a: &SopsArgs<'_>, dry_run: bool, recursive: bool) -> Result<FilesOptions, Fail> {
    Ok(FilesOptions {
        target: target(a)?,
        force: a.remove_own.unwrap_or(false),
        rotate: a.rotate.unwrap_or(false).then(SystemTime::now),
        dry_run,
        recursive,
        threads: 0,
    })
}

/// A recipient string read as the other re-keys read it: plugins only where allowed.
fn reader(allow: bool) -> impl Fn(&str) -> Result<Box<dyn Recipient>, hyperseal::Error> + Sync {
    move |r| recipient::parse_recipient_with(r, Arc::new(Plugins::allowed(allow)))
}

/// A sops re-key of files on the libuv pool.
pub struct SopsJob {
    pub paths: Vec<PathBuf>,
    pub options: FilesOptions,
    pub allow_plugins: bool,
}

impl SopsJob {
    pub fn run(
        &self,
        ids: &Identities,
        progress: Option<&(dyn Fn(usize, usize) + Sync)>,
    ) -> Result<FilesReport, Fail> {
        Ok(sops::rekey_files(&self.paths, ids, &self.options, &reader(self.allow_plugins), progress)?)
    }
}

/// One file's report as {@link rekeyFile} resolves it; its failure as the call's.
pub fn file_report(report: FilesReport) -> Result<RekeyReport, Fail> {
    let (added, removed) = match report.files.into_iter().next().map(|(_, o)| o) {
        Some(FileOutcome::Changed { added, removed }) => (added, removed),
        Some(FileOutcome::Unchanged) => (0, 0),
        Some(FileOutcome::Failed(e)) => return Err(e.into()),
        Some(FileOutcome::Skipped(why)) => return Err(Fail::arg(why)),
        None => return Err(Fail::arg("paths: give at least one file or folder")),
    };
    Ok(RekeyReport {
        before: Vec::new(),
        after: Vec::new(),
        removed: count(removed),
        added: count(added),
        in_place: false,
    })
}

/// The files' report as {@link rekeyTree} resolves it: a sops file is always written whole, so
/// a change counts as `'rewritten'`, and its summary adds `unchanged`.
pub fn tree_report(report: FilesReport, dry_run: bool) -> RekeyTreeReport {
    let (changed, unchanged, skipped, failed) = report.counts();
    let summary = RekeyTreeSummary {
        in_place: 0,
        rewritten: count(changed),
        already_done: 0,
        unchanged: Some(count(unchanged)),
        skipped: count(skipped),
        failed: count(failed),
    };
    super::report::report(report.files, summary, |outcome| match outcome {
        FileOutcome::Changed { added, removed } => {
            let plan = RekeyPlan {
                before: Vec::new(),
                after: Vec::new(),
                removed: count(removed),
                added: count(added),
            };
            Entry::Changed(if dry_run { "planned" } else { "rewritten" }, plan)
        }
        FileOutcome::Unchanged => Entry::Kept("unchanged"),
        FileOutcome::Skipped(why) => Entry::Skipped(why.to_string()),
        FileOutcome::Failed(e) => Entry::Failed(e),
    })
}

/// `format`: how sops stores bytes held in memory (it picks it from a file's name).
fn format(name: Option<&str>) -> Result<Format, Fail> {
    match name {
        Some(name) => Format::from_name(name).map_err(argument),
        None => Err(Fail::arg(
            "format: give the sops file's format ('yaml', 'json', 'binary', 'dotenv' or 'ini')",
        )),
    }
}

/// A sops file held in memory, re-keyed (or rotated): its new bytes, or the same bytes when it
/// is already the target.
pub fn rekey_bytes(
    data: &[u8],
    ids: &Identities,
    a: &SopsArgs<'_>,
    format_name: Option<&str>,
) -> Result<Vec<u8>, Fail> {
    let format = format(format_name)?;
    let Some(target) = target(a)? else {
        return Err(Fail::arg("bytes have no .sops.yaml: give recipients, or add and remove"));
    };
    let force = a.remove_own.unwrap_or(false);
    let read = reader(a.allow_plugins.unwrap_or(false));
    let done = match a.rotate.unwrap_or(false) {
        true => sops::rotate_with(data, format, &target, ids, force, &read, SystemTime::now()),
        false => sops::rekey_with(data, format, &target, ids, force, &read),
    }?;
    Ok(match done {
        SopsOutcome::Unchanged => data.to_vec(),
        SopsOutcome::Changed { bytes, .. } => bytes,
    })
}
