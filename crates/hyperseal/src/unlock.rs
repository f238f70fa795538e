//! One unlock for many headers: before many files are opened or re-keyed (a tree's window, a
//! batch of sops files, a git checkout's blobs), their stanzas are gathered and every identity
//! that unwraps in batches (a plugin: one process per use, perhaps a PIN or a touch each time;
//! the agent: one round trip) is asked once for all of them ([`Identity::unwrap_each`]). Each
//! file is then opened with [`Cached`] views of those identities, which answer from what the
//! batch said and ask the identity itself only about a stanza the batch never saw (a header
//! rewritten since it was read, a stanza a re-key just made).
//!
//! A stanza is offered to a batch identity only where no identity before it in the caller's
//! list opens the file ([`mark_opened`], the order decryption tries them in), so a plugin is
//! never woken for files a native key opens. A batch that fails as a whole (the plugin is
//! missing, refused, or broke the protocol) is that failure for each of its stanzas: every
//! file that needed the plugin fails with it, without one more run per file.
//!
//! The cache holds file keys (zeroized on drop) for the caller's round only: the callers keep
//! at most [`limits::PLUGIN_BATCH`](crate::limits::PLUGIN_BATCH) stanzas or
//! [`limits::PLUGIN_BATCH_BYTES`](crate::limits::PLUGIN_BATCH_BYTES) of them in a round.
//!
//! The rounds themselves are driven by [`in_windows`] (`unlock/round.rs`): items cut into
//! windows by the caller's [`Window`] rule, one unlock per window, each item worked on the
//! library's executor, the results in order, progress per item. The tree re-key, the sops
//! files' re-key and the CLI's `git rekey` run on it.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

use crate::error::Error;
use crate::file_key::FileKey;
use crate::format::Stanza;
use crate::recipient::{wrap_refs, Identity, Recipient};
use crate::rekey::Change;

mod round;

pub use round::{in_windows, Drive, Progress, Whole, Window};

/// What a batch said of one stanza: not this identity's, its file key, or why it failed.
pub type Answer = Option<Result<FileKey, String>>;

/// What a batch said, by each stanza's digest.
pub type Answers = HashMap<[u8; 32], Answer>;

/// An identity's answers for the stanzas of one window, in front of the identity itself
/// (borrowed by the tree re-key; shared across windows, `Arc`, by the sops files' re-key).
pub struct Cached<I> {
    /// The identity asked about stanzas the batch never saw.
    pub id: I,
    /// What the batch said.
    pub answers: Answers,
}

impl<I> Identity for Cached<I>
where
    I: std::ops::Deref + Send + Sync,
    I::Target: Identity,
{
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        self.unwrap_stanzas(std::slice::from_ref(stanza))
    }

    /// The first definite answer the batch gave for one of `stanzas`; else the identity itself
    /// on the stanzas the batch never saw (none: not mine).
    fn unwrap_stanzas(&self, stanzas: &[Stanza]) -> Option<Result<FileKey, Error>> {
        let mut unseen = Vec::new();
        for s in stanzas {
            match self.answers.get(&digest(s)) {
                Some(Some(Ok(key))) => return Some(Ok(key.clone())),
                Some(Some(Err(why))) => return Some(Err(Error::Plugin(why.clone()))),
                Some(None) => {}
                None => unseen.push(s.clone()),
            }
        }
        match unseen.is_empty() {
            true => None,
            false => self.id.unwrap_stanzas(&unseen),
        }
    }
}

/// Asks the batch identity `id` once about every stanza of the files not yet `opened` (each
/// stanza once, by its digest), and then about `extra`: its answers by digest, and its answers
/// for `extra` in order. A batch that fails as a whole is that failure for each stanza; with
/// nothing to ask, it is not asked.
pub fn ask(
    id: &dyn Identity,
    headers: &[Vec<Stanza>],
    opened: &[bool],
    extra: &[Stanza],
) -> (Answers, Vec<Option<Result<FileKey, Error>>>) {
    let mut offered: Vec<([u8; 32], &Stanza)> = Vec::new();
    for (file, done) in headers.iter().zip(opened) {
        if !done {
            offered.extend(file.iter().map(|s| (digest(s), s)));
        }
    }
    offered.sort_unstable_by_key(|(d, _)| *d);
    offered.dedup_by_key(|(d, _)| *d);
    let mut stanzas: Vec<&Stanza> = offered.iter().map(|(_, s)| *s).collect();
    let files = stanzas.len();
    stanzas.extend(extra.iter());
    if stanzas.is_empty() {
        return (HashMap::new(), Vec::new());
    }
    let digests = offered.iter().map(|(d, _)| *d);
    match id.unwrap_each(&stanzas) {
        Ok(mut each) => {
            let probed = each.split_off(files.min(each.len()));
            (digests.zip(each.into_iter().map(keep)).collect(), probed)
        }
        Err(e) => {
            let why = message(e);
            (digests.map(|d| (d, Some(Err(why.clone())))).collect(), Vec::new())
        }
    }
}

/// A throwaway file key and its wraps to each recipient `change` sets or adds (none where the
/// change has none, or a wrap fails: the lock-out check then asks as usual).
pub fn probes(change: &Change) -> Option<(FileKey, Vec<Stanza>)> {
    let recipients: Vec<&dyn Recipient> =
        change.set.iter().flatten().chain(&change.add).map(|r| r.as_ref()).collect();
    if recipients.is_empty() {
        return None;
    }
    // 16 bytes: age's file key, the one length every plugin wraps.
    let key = FileKey::generate(16);
    let stanzas = wrap_refs(&recipients, &key).ok()?;
    Some((key, stanzas))
}

/// Whether a batch's answers for one change's throwaway wraps (see [`probes`]) include its key:
/// the identity opens that recipient's stanza in every new header.
pub fn opens_probe(answers: &[Option<Result<FileKey, Error>>], key: &FileKey) -> bool {
    answers.iter().any(|a| matches!(a, Some(Ok(k)) if k.expose() == key.expose()))
}

/// Marks the files `id` answers for (a key or an error: either way later identities are not
/// asked, as in `open_file_key`).
pub fn mark_opened(id: &dyn Identity, headers: &[Vec<Stanza>], opened: &mut [bool]) {
    for (file, done) in headers.iter().zip(opened.iter_mut()) {
        if !*done && !file.is_empty() {
            *done = id.unwrap_stanzas(file).is_some();
        }
    }
}

fn keep(answer: Option<Result<FileKey, Error>>) -> Answer {
    answer.map(|r| r.map_err(message))
}

/// An error's text without its kind's prefix (it is rebuilt as a plugin error).
fn message(e: Error) -> String {
    match e {
        Error::Plugin(m) => m,
        e => e.to_string(),
    }
}

fn digest(s: &Stanza) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(s.tag.as_bytes());
    for a in &s.args {
        h.update([0]);
        h.update(a.as_bytes());
    }
    h.update([1]);
    h.update(&s.body);
    h.finalize().into()
}
