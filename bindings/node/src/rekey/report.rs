//! The report both re-keys of many files resolve with (`rekeyTree`, and a sops tree through
//! it): its JS objects, and the one converter that builds them from either library report. It
//! stands below `tree.rs` and `sops.rs`, which each map their own outcomes into [`Entry`].

use std::path::PathBuf;

use napi_derive::napi;

use crate::errors::Fail;

/// The change a file's re-key made (or, for a dry run, would make).
#[napi(object, object_from_js = false)]
pub struct RekeyPlan {
    /// Stanza types before, in order (slack stanzas left out).
    pub before: Vec<String>,
    /// Stanza types after, in order.
    pub after: Vec<String>,
    /// Stanzas of the old header that are not in the new one.
    pub removed: u32,
    /// Stanzas wrapped for new recipients.
    pub added: u32,
}

/// One file of {@link rekeyTree}'s walk and what became of it.
#[napi(object, object_from_js = false)]
pub struct RekeyTreeFile {
    /// The path as the walk found it (a root joined with the names below it).
    pub path: String,
    /// `'in_place'` (only the header rewritten), `'rewritten'` (written anew, payload copied),
    /// `'planned'` (a dry run), `'already_done'` (by an earlier run of this change, as its
    /// manifest records), `'unchanged'` (a sops file already the target), `'skipped'` (never
    /// touched: see `reason`) or `'failed'` (see `error`; the file is as its message says, as
    /// it was unless it says otherwise).
    #[napi(
        ts_type = "'in_place' | 'rewritten' | 'planned' | 'already_done' | 'unchanged' | 'skipped' | 'failed'"
    )]
    pub outcome: String,
    /// Why a skipped file was skipped (not encrypted, not opened by these identities, a link…).
    pub reason: Option<String>,
    /// A failed file's error: the `Error`, with its `code`, that {@link rekeyFile} rejects with.
    #[napi(ts_type = "Error & { code: HypersealErrorCode }")]
    pub error: Option<Fail>,
    /// What changed, for `'in_place'`, `'rewritten'` and `'planned'`.
    pub plan: Option<RekeyPlan>,
}

/// How many files ended each way.
#[napi(object, object_from_js = false)]
pub struct RekeyTreeSummary {
    /// Re-keyed in place (a dry run's planned files are counted here).
    pub in_place: u32,
    /// Written anew (the new header did not fit the old one's length).
    pub rewritten: u32,
    /// Found done by an earlier run of the same change.
    pub already_done: u32,
    /// Sops files already the target (only in a sops re-key's summary).
    pub unchanged: Option<u32>,
    /// Never touched.
    pub skipped: u32,
    /// Failed, each left as its error says.
    pub failed: u32,
}

/// What {@link rekeyTree} did: every file in walk order, and the counts.
#[napi(object, object_from_js = false)]
pub struct RekeyTreeReport {
    /// Every file the walk found (skipped ones included), in walk order: names sorted.
    pub files: Vec<RekeyTreeFile>,
    /// The counts of `files` by outcome.
    pub summary: RekeyTreeSummary,
}

/// A count as JS receives it (saturated: no walk comes near 2^32 files).
pub(crate) fn count(c: usize) -> u32 {
    c.min(u32::MAX as usize) as u32
}

/// One file's outcome in the terms both re-key reports share. The tree and the sops reports
/// name their outcomes differently (and a sops change has no stanza lists), so each maps its
/// own outcome here and [`report`] builds the JS entries once.
pub(crate) enum Entry {
    /// Re-keyed (or, for a dry run, planned): the outcome's name and the change.
    Changed(&'static str, RekeyPlan),
    /// Nothing to do: `'already_done'` or `'unchanged'`.
    Kept(&'static str),
    Skipped(String),
    Failed(hyperseal::Error),
}

/// The report {@link rekeyTree} resolves with, from a library report's files and counts.
pub(crate) fn report<O>(
    files: Vec<(PathBuf, O)>,
    summary: RekeyTreeSummary,
    entry: impl Fn(O) -> Entry,
) -> RekeyTreeReport {
    let files = files
        .into_iter()
        .map(|(path, outcome)| {
            let mut file = RekeyTreeFile {
                path: path.to_string_lossy().into_owned(),
                outcome: String::new(),
                reason: None,
                error: None,
                plan: None,
            };
            let name = match entry(outcome) {
                Entry::Changed(name, plan) => {
                    file.plan = Some(plan);
                    name
                }
                Entry::Kept(name) => name,
                Entry::Skipped(why) => {
                    file.reason = Some(why);
                    "skipped"
                }
                Entry::Failed(e) => {
                    file.error = Some(Fail::from(e));
                    "failed"
                }
            };
            file.outcome = name.to_string();
            file
        })
        .collect();
    RekeyTreeReport { files, summary }
}
