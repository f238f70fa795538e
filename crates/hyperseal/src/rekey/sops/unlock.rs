//! One unlock for many sops files: an identity that unwraps in batches (a plugin: a process,
//! perhaps a PIN or a touch per use; the agent: a round trip) is asked once about the stanzas of
//! every `enc` of a window of files, and then answers each file from what it said, as the age
//! tree re-key does (`rekey/unlock.rs`). It is asked itself again only about a stanza the batch
//! never saw (one the re-key just wrote, for the lock-out guard).
//!
//! The views own what they hold (the identity shared, the file keys zeroized on drop), so a
//! window's identities are plain `Box<dyn Identity>`s the decryptor takes.

use std::collections::HashMap;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::{parse, Format, MAX_ENC};
use crate::error::Error;
use crate::file_key::FileKey;
use crate::format::Stanza;
use crate::recipient::Identity;
use crate::{limits, Decryptor};

/// What the batch said of one stanza: not this identity's, its key, or why it failed.
type Answer = Option<Result<FileKey, String>>;

/// An identity shared between windows.
struct Shared(Arc<dyn Identity>);

impl Identity for Shared {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        self.0.unwrap_stanza(stanza)
    }
    fn unwrap_stanzas(&self, stanzas: &[Stanza]) -> Option<Result<FileKey, Error>> {
        self.0.unwrap_stanzas(stanzas)
    }
}

/// A batch identity in front of what it answered for the window.
struct Cached {
    id: Arc<dyn Identity>,
    answers: HashMap<[u8; 32], Answer>,
}

impl Identity for Cached {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        self.unwrap_stanzas(std::slice::from_ref(stanza))
    }
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

/// The identities to re-key `files` with: each batch identity asked once about every stanza
/// of their age entries that no identity before it opens (at most [`limits::PLUGIN_BATCH`]
/// stanzas; past that, it is asked per file), the others as they are. A file that does not
/// parse adds nothing (its re-key says why).
pub fn unlock(files: &[(&[u8], Format)], identities: &[Arc<dyn Identity>]) -> Vec<Box<dyn Identity>> {
    let mut encs: Vec<Vec<Stanza>> = Vec::new();
    'files: for (bytes, format) in files {
        let Ok(text) = std::str::from_utf8(bytes) else { continue };
        let Ok(layout) = parse(text, *format) else { continue };
        for e in layout.meta().groups.iter().flat_map(|g| &g.entries) {
            if e.enc.len() > MAX_ENC {
                continue;
            }
            let Ok(dec) = Decryptor::from_slice(e.enc.as_bytes()) else { continue };
            if encs.iter().map(Vec::len).sum::<usize>() + dec.header().stanzas.len() > limits::PLUGIN_BATCH {
                break 'files;
            }
            encs.push(dec.header().stanzas.clone());
        }
    }
    let mut opened = vec![false; encs.len()];
    let mut out: Vec<Box<dyn Identity>> = Vec::with_capacity(identities.len());
    for id in identities {
        let view: Box<dyn Identity> = if id.unwraps_in_batches() {
            // Each stanza once, by its digest, from the entries no earlier identity opens.
            let mut offered: Vec<([u8; 32], &Stanza)> = Vec::new();
            for (stanzas, done) in encs.iter().zip(&opened) {
                if !done {
                    offered.extend(stanzas.iter().map(|s| (digest(s), s)));
                }
            }
            offered.sort_unstable_by_key(|(d, _)| *d);
            offered.dedup_by_key(|(d, _)| *d);
            let stanzas: Vec<&Stanza> = offered.iter().map(|(_, s)| *s).collect();
            let answers = match stanzas.is_empty() {
                true => HashMap::new(),
                false => match id.unwrap_each(&stanzas) {
                    Ok(each) => offered
                        .iter()
                        .map(|(d, _)| *d)
                        .zip(each.into_iter().map(|a| a.map(|r| r.map_err(message))))
                        .collect(),
                    // The batch failed as a whole: that failure for each stanza, not one more
                    // run per file.
                    Err(e) => {
                        let why = message(e);
                        offered.iter().map(|(d, _)| (*d, Some(Err(why.clone())))).collect()
                    }
                },
            };
            Box::new(Cached { id: id.clone(), answers })
        } else {
            Box::new(Shared(id.clone()))
        };
        for (stanzas, done) in encs.iter().zip(opened.iter_mut()) {
            if !*done {
                *done = view.unwrap_stanzas(stanzas).is_some();
            }
        }
        out.push(view);
    }
    out
}

fn message(e: Error) -> String {
    match e {
        Error::Plugin(m) => m,
        e => e.to_string(),
    }
}
