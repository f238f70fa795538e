//! `rekey`: every age object of the repository gets a new header for a new reader set; no
//! payload byte is rewritten where the header's room holds the new stanzas (every object is
//! written with that room). Id lists and marks are not age files and stay as they are.
//!
//! Removal is not revocation: a removed reader may have copied objects or their file keys
//! already. A writer still holding the old writer key keeps encrypting to the old set, so a
//! new writer key goes with every removal.

use hyperseal::rekey::{Change, Written};

use crate::error::Result;
use crate::keys::parse_recipients;
use crate::repo::{put_recipients, Reader};
use crate::store::Store;

/// What a repository re-key did (or, dry, would do).
#[derive(Clone, Debug, Default)]
pub struct RekeyReport {
    /// Age objects seen.
    pub objects: u64,
    /// Headers rewritten in place (payload untouched).
    pub in_place: u64,
    /// Objects rewritten whole (a new header too long for the room: payload copied as it is).
    pub rewritten: u64,
    /// Bytes of the rewritten objects.
    pub rewritten_bytes: u64,
    /// Most stanzas one object's old header had that its new one does not carry as they were
    /// (a whole new list wraps every reader afresh, so this counts kept readers too).
    pub removed: usize,
    /// Stanza types before and after, of the config (all objects share the set).
    pub before: Vec<String>,
    /// See `before`.
    pub after: Vec<String>,
    /// Objects that failed, and why; a run again finishes them.
    pub failed: Vec<(String, String)>,
}

/// The age objects: the config first, so a wrong identity stops the run before anything
/// changes; then indexes, snapshots and packs.
fn objects(store: &dyn Store) -> Result<Vec<String>> {
    let mut names = vec!["config".to_string()];
    for folder in ["index/", "snapshots/", "data/"] {
        let mut list: Vec<String> =
            store.list(folder)?.into_iter().map(|o| o.name).filter(|n| !n.ends_with(".ids")).collect();
        list.sort();
        names.extend(list);
    }
    Ok(names)
}

/// Re-keys every object to the reader set `recipients` (the whole new list), telling
/// `progress` (done, total) after each. The new set is stored first (`keys/`), so a prune or
/// a resumed run already seals to it.
pub fn rekey(
    reader: &Reader<'_>,
    recipients: &[String],
    dry_run: bool,
    progress: Option<&dyn Fn(u64, u64)>,
) -> Result<RekeyReport> {
    let (store, ids) = (reader.store, reader.ids);
    let change = Change { set: Some(parse_recipients(recipients, reader.plugins)?), ..Change::default() };
    if !dry_run {
        let (serial, old) = reader.keys_objects()?;
        let mac_key = reader.reader_key()?;
        let parsed = parse_recipients(recipients, reader.plugins)?;
        put_recipients(store, &parsed, recipients, serial + 1, mac_key.as_deref(), reader.key())?;
        for name in old {
            store.delete(&name)?;
        }
    }
    let names = objects(store)?;
    let total = names.len() as u64;
    let mut report = RekeyReport::default();
    for (i, name) in names.iter().enumerate() {
        match store.rekey(name, ids, &change, dry_run) {
            Ok(r) => {
                report.objects += 1;
                report.removed = report.removed.max(r.plan.removed);
                if i == 0 {
                    (report.before, report.after) = (r.plan.before.clone(), r.plan.after.clone());
                }
                match r.written {
                    Written::InPlace => report.in_place += 1,
                    Written::Rewritten { bytes } => {
                        report.rewritten += 1;
                        report.rewritten_bytes += bytes;
                    }
                    Written::Nothing => {}
                }
            }
            // The config decides whether the identities fit at all: nothing else is tried.
            Err(e) if i == 0 => return Err(e),
            Err(e) => report.failed.push((name.clone(), e.to_string())),
        }
        if let Some(p) = progress {
            p(i as u64 + 1, total);
        }
    }
    Ok(report)
}
