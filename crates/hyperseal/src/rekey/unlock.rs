//! The tree re-key's windows, each unlocked once (`crate::unlock`, its windows driven by
//! `crate::unlock::in_windows`): a window of a tree's files holds at most
//! [`limits::PLUGIN_BATCH`] stanzas or [`limits::PLUGIN_BATCH_BYTES`] of them, and their
//! identities are asked once for all of it.

use super::header::Change;
use crate::format::Stanza;
use crate::recipient::Identity;
use crate::unlock::{ask, mark_opened, opens_probe, probes, Cached, Window};
use crate::{limits, Decryptor};

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

/// The tree's window rule ([`crate::unlock::in_windows`]): a window of entries, each with its
/// file's stanzas, holds up to one batch's worth ([`limits::PLUGIN_BATCH`] stanzas,
/// [`limits::PLUGIN_BATCH_BYTES`] of them).
#[derive(Default)]
pub(super) struct Batch {
    count: usize,
    bytes: usize,
}

impl<T> Window<(T, Vec<Stanza>)> for Batch {
    fn fits(&self, (_, stanzas): &(T, Vec<Stanza>)) -> bool {
        let (n, b) = cost(stanzas);
        self.count + n <= limits::PLUGIN_BATCH && self.bytes + b <= limits::PLUGIN_BATCH_BYTES
    }

    fn add(&mut self, (_, stanzas): &(T, Vec<Stanza>)) {
        let (n, b) = cost(stanzas);
        (self.count, self.bytes) = (self.count + n, self.bytes + b);
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
