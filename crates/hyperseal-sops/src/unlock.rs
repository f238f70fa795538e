//! One unlock for many sops files: an identity that unwraps in batches (a plugin: a process,
//! perhaps a PIN or a touch per use; the agent: a round trip) is asked once about the stanzas of
//! every `enc` of a window of files, and then answers each file from what it said. The asking
//! and the answering are the age tree re-key's own (`rekey/unlock.rs`: [`ask`], [`Cached`]);
//! this finds the stanzas in sops files. The identity itself is asked again only about a stanza
//! the batch never saw (one the re-key just wrote, for the lock-out guard).
//!
//! The views own what they hold (the identity shared, the file keys zeroized on drop), so a
//! window's identities are plain `Box<dyn Identity>`s the decryptor takes.

use std::collections::HashMap;
use std::sync::Arc;

use super::model::MAX_ENC;
use super::Format;
use hyperseal::format::Stanza;
use hyperseal::recipient::Identity;
use hyperseal::unlock::{ask, mark_opened, Cached};
use hyperseal::{limits, Decryptor};

/// The identities to re-key `files` with: each batch identity asked once about every stanza
/// of their age entries that no identity before it opens (at most [`limits::PLUGIN_BATCH`]
/// stanzas; past that, it is asked per file), the others as they are. A file that does not
/// parse adds nothing (its re-key says why).
pub fn unlock(files: &[(&[u8], Format)], identities: &[Arc<dyn Identity>]) -> Vec<Box<dyn Identity>> {
    let mut encs: Vec<Vec<Stanza>> = Vec::new();
    'files: for (bytes, format) in files {
        let Ok(text) = std::str::from_utf8(bytes) else { continue };
        let Ok(layout) = format.layout(text) else { continue };
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
        // An identity that does not batch is asked itself: no answers in front of it.
        let answers = match id.unwraps_in_batches() {
            true => ask(&**id, &encs, &opened, &[]).0,
            false => HashMap::new(),
        };
        let view: Box<dyn Identity> = Box::new(Cached { id: id.clone(), answers });
        mark_opened(&*view, &encs, &mut opened);
        out.push(view);
    }
    out
}
