//! `check`: the repository is whole when every snapshot's every chunk is placed by an index in
//! a pack that exists; with `read_data`, every pack is opened and every chunk it holds
//! decompressed and checked against its id. What an interrupted run leaves (a pack with no id
//! list yet, packs no index names) is reported as a note, not damage: the next backup adopts
//! it and a prune removes it.

use std::collections::{HashMap, HashSet};

use crate::error::Result;
use crate::format::snapshot::Entry;
use crate::format::table::Table;
use crate::format::MAX_TABLE;
use crate::keys::ChunkId;
use crate::object::{unpack_chunk, PackReader};
use crate::repo::Reader;

/// What `check` found.
#[derive(Clone, Debug, Default)]
pub struct CheckReport {
    /// Snapshots opened.
    pub snapshots: u64,
    /// Index objects opened.
    pub indexes: u64,
    /// Packs with an id list.
    pub packs: u64,
    /// Chunks decompressed and checked against their ids (`read_data`).
    pub chunks_read: u64,
    /// Damage: a snapshot that cannot be restored whole, an object that does not open.
    pub errors: Vec<String>,
    /// Leftovers of interrupted runs, harmless.
    pub notes: Vec<String>,
}

/// Checks the repository; damage is in the report, not an `Err` (which is for a repository
/// that cannot be read at all).
pub fn check(reader: &Reader<'_>, read_data: bool) -> Result<CheckReport> {
    let store = reader.store;
    let mut rep = CheckReport::default();
    let data = store.list("data/")?;
    let names: HashSet<&str> = data.iter().map(|o| o.name.as_str()).collect();
    let mut lists: HashMap<[u8; 16], Table> = HashMap::new();
    for o in &data {
        let Some(pack) = o.name.strip_suffix(".ids") else {
            if !names.contains(format!("{}.ids", o.name).as_str()) {
                rep.notes.push(format!("{}: no id list (an upload was interrupted)", o.name));
            }
            continue;
        };
        if !names.contains(pack) {
            rep.errors.push(format!("{}: its pack is missing", o.name));
            continue;
        }
        match store.get(&o.name, MAX_TABLE).map_err(Into::into).and_then(|b| Table::decode(&b)) {
            Ok(t) => match crate::keys::hex16(&pack["data/".len()..]) {
                Ok(id) => {
                    lists.insert(id, t);
                    rep.packs += 1;
                }
                Err(_) => rep.errors.push(format!("{}: not a pack's name", o.name)),
            },
            Err(e) => rep.errors.push(format!("{}: {e}", o.name)),
        }
    }
    let merged = reader.index()?;
    let (index, indexed) = (merged.chunks, merged.packs);
    rep.indexes = merged.objects.len() as u64;
    for k in merged.skipped {
        rep.errors.push(format!("{}: does not open ({}); passed over", k.name, k.why));
    }
    for pack in &indexed {
        if !names.contains(format!("data/{}", hex::encode(pack)).as_str()) {
            rep.errors.push(format!("data/{}: an index names it, but it is missing", hex::encode(pack)));
        }
    }
    for pack in lists.keys().filter(|p| !indexed.contains(*p)) {
        rep.notes.push(format!("data/{}: in no index yet (the next backup adopts it)", hex::encode(pack)));
    }
    let skipped = reader.for_each_snapshot(|s| {
        rep.snapshots += 1;
        let missing = s.snapshot.entries.iter().flat_map(|e| match e {
            Entry::File { chunks, .. } => chunks.as_slice(),
            _ => &[],
        });
        let mut bad = 0;
        for c in missing {
            if !ChunkId::parse(c).is_ok_and(|id| index.contains_key(&id)) {
                bad += 1;
            }
        }
        if bad > 0 {
            rep.errors.push(format!("snapshot {}: {bad} chunks are in no index", s.id));
        }
        Ok(())
    })?;
    for k in skipped {
        rep.errors.push(format!("{}: does not open ({}); passed over", k.name, k.why));
    }
    if read_data {
        read_packs(reader, &lists, &mut rep);
    }
    Ok(rep)
}

/// Opens every pack that has an id list, authenticates all of it, and checks every chunk it
/// lists; memory holds one chunk at a time.
fn read_packs(reader: &Reader<'_>, lists: &HashMap<[u8; 16], Table>, rep: &mut CheckReport) {
    for (pack, table) in lists {
        let name = format!("data/{}", hex::encode(pack));
        let mut opened = match PackReader::open(reader.store, &name, reader.ids) {
            Ok(p) => p,
            Err(e) => {
                rep.errors.push(format!("{name}: {e}"));
                continue;
            }
        };
        let len = match opened.verify_all() {
            Ok(len) => len,
            Err(e) => {
                rep.errors.push(format!("{name}: {e}"));
                continue;
            }
        };
        for e in &table.entries {
            let checked = match e.offset.checked_add(e.stored as u64).is_some_and(|end| end <= len) {
                true => {
                    opened.read(e.offset, e.stored as usize).and_then(|b| unpack_chunk(reader.key(), e, &b))
                }
                false => Err(crate::error::format(format!("chunk {} lies past the pack's end", e.id))),
            };
            match checked {
                Ok(_) => rep.chunks_read += 1,
                Err(err) => rep.errors.push(format!("{name}: {err}")),
            }
        }
    }
}
