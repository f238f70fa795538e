//! One unlock for many files: before a window of a tree's files is re-keyed, their headers are
//! read and every identity that unwraps in batches (a plugin: one process per use, perhaps a PIN
//! or a touch each time) is asked once for all their stanzas ([`Identity::unwrap_each`]). Each
//! file is then re-keyed with [`Cached`] views of those identities, which answer from what the
//! batch said and ask the identity itself only about a stanza the batch never saw (a header
//! rewritten since it was read, a stanza the re-key just made).
//!
//! A stanza is offered to a batch identity only where no identity before it in the caller's
//! list opens the file (the order [`open_file_key`](crate::keys) tries them in), so a plugin
//! is never woken for files a native key opens. A batch that fails as a whole (the plugin is
//! missing, refused, or broke the protocol) is that failure for each of its stanzas: every
//! file that needed the plugin fails with it, without one more run per file.
//!
//! The cache holds file keys (zeroized on drop) for one window only: the tree keeps at most
//! [`limits::PLUGIN_BATCH`] stanzas or [`limits::PLUGIN_BATCH_BYTES`] of them in a window.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

use super::header::Change;
use crate::error::Error;
use crate::file_key::FileKey;
use crate::format::Stanza;
use crate::recipient::{wrap_refs, Identity, Recipient};
use crate::{limits, Decryptor};

/// What a batch said of one stanza: not this identity's, its file key, or why it failed.
type Answer = Option<Result<FileKey, String>>;

/// What a batch said, by each stanza's digest.
pub(crate) type Answers = HashMap<[u8; 32], Answer>;

/// An identity's answers for the stanzas of one window, in front of the identity itself
/// (borrowed by the tree re-key; shared across windows, `Arc`, by the sops files' re-key).
pub(crate) struct Cached<I> {
    pub(crate) id: I,
    pub(crate) answers: Answers,
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

/// The identities to re-key a window's files with: each batch identity behind the answers it
/// gave for `headers` (the stanzas of each file that has a readable header), the others as
/// they are; and whether a batch identity is known to open what `change` wraps to one of its
/// recipients.
///
/// That second answer spares the re-key's lock-out check a run per file: the check asks
/// whether the caller's identities still open the new header, whose fresh stanzas no batch has
/// seen. Whether an identity opens a recipient's wrap does not depend on the file key, so the
/// batch is also offered one stanza per recipient of the change, wrapped around a throwaway key:
/// an identity that opens one of those opens that recipient's stanza in every new header.
pub(super) fn unlock<'a>(
    identities: &'a [Box<dyn Identity>],
    headers: &[Vec<Stanza>],
    change: &Change,
) -> (Vec<Box<dyn Identity + 'a>>, bool) {
    let probes = probes(change);
    let mut opens_known = false;
    let mut out: Vec<Box<dyn Identity + 'a>> = Vec::with_capacity(identities.len());
    // Which files an identity earlier in the list opens (checked with the views made so far,
    // so a plugin's earlier batch is not asked again).
    let mut opened = vec![false; headers.len()];
    for id in identities {
        if !id.unwraps_in_batches() {
            let view: Box<dyn Identity + 'a> = Box::new(&**id);
            mark_opened(&*view, headers, &mut opened);
            out.push(view);
            continue;
        }
        let extra = probes.as_ref().map_or(&[][..], |(_, wraps)| &wraps[..]);
        let (answers, probed) = ask(&**id, headers, &opened, extra);
        if let Some((key, _)) = &probes {
            opens_known |= opens_probe(&probed, key);
        }
        let view = Box::new(Cached { id: &**id, answers });
        mark_opened(&*view, headers, &mut opened);
        out.push(view);
    }
    (out, opens_known)
}

/// Asks the batch identity `id` once about every stanza of the files not yet `opened` (each
/// stanza once, by its digest), and then about `extra`: its answers by digest, and its answers
/// for `extra` in order. A batch that fails as a whole is that failure for each stanza; with
/// nothing to ask, it is not asked.
pub(crate) fn ask(
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
pub(crate) fn probes(change: &Change) -> Option<(FileKey, Vec<Stanza>)> {
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
pub(crate) fn opens_probe(answers: &[Option<Result<FileKey, Error>>], key: &FileKey) -> bool {
    answers.iter().any(|a| matches!(a, Some(Ok(k)) if k.expose() == key.expose()))
}

/// Marks the files `id` answers for (a key or an error: either way later identities are not
/// asked, as in `open_file_key`).
pub(crate) fn mark_opened(id: &dyn Identity, headers: &[Vec<Stanza>], opened: &mut [bool]) {
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

/// Entries of a tree waiting to be re-keyed, with their files' stanzas, up to one batch's
/// worth ([`limits::PLUGIN_BATCH`] stanzas, [`limits::PLUGIN_BATCH_BYTES`] of them).
pub(super) struct Window<T> {
    pub(super) entries: Vec<T>,
    pub(super) headers: Vec<Vec<Stanza>>,
    count: usize,
    bytes: usize,
}

impl<T> Default for Window<T> {
    fn default() -> Self {
        Window { entries: Vec::new(), headers: Vec::new(), count: 0, bytes: 0 }
    }
}

impl<T> Window<T> {
    /// Whether `stanzas` fit beside what the window holds (an empty window takes anything).
    pub(super) fn fits(&self, stanzas: &[Stanza]) -> bool {
        let (n, b) = cost(stanzas);
        self.entries.is_empty()
            || (self.count + n <= limits::PLUGIN_BATCH && self.bytes + b <= limits::PLUGIN_BATCH_BYTES)
    }

    pub(super) fn push(&mut self, entry: T, stanzas: Vec<Stanza>) {
        let (n, b) = cost(&stanzas);
        (self.count, self.bytes) = (self.count + n, self.bytes + b);
        self.entries.push(entry);
        self.headers.push(stanzas);
    }
}

/// A stanza's weight in a window: one, and its bytes (the body and, roughly, its line).
fn cost(stanzas: &[Stanza]) -> (usize, usize) {
    (stanzas.len(), stanzas.iter().map(|s| s.body.len() + 64).sum())
}

/// The stanzas of the walked file (`display` to the caller, at `place`), reached as its re-key
/// will reach it; none where it has no header to read (its own re-key then says why).
pub(super) fn stanzas_of(display: &std::path::Path, place: &super::beneath::Place) -> Vec<Stanza> {
    let Ok(reached) = place.reach(display) else { return Vec::new() };
    let Ok(file) = super::beneath::open_checked(&reached.path, false, place.id, display) else {
        return Vec::new();
    };
    match Decryptor::new(&file) {
        Ok(dec) => dec.header().stanzas.clone(),
        Err(_) => Vec::new(),
    }
}
