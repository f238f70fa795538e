//! `repair index`: the indexes rebuilt from the packs' own id lists. After a pack is lost or an
//! index lies (one planted, one damaged), a prune refuses to delete on the indexes' word; this
//! gives it a word it can take: one place per chunk per pack that exists, as the pack's own id
//! list says, and with `read_data` only chunks that decrypt, decompress and match their ids.
//! It deletes indexes only, never a pack, under the prune lock (a concurrent prune waits).

use std::collections::HashSet;
use std::io;

use crate::error::{Error, Result};
use crate::format::table::{Entry as Placed, Table, MAX_ENTRIES};
use crate::format::MAX_TABLE;
use crate::keys::{hex16, random_name};
use crate::object::{self, unpack_chunk, PackReader};
use crate::prune::LOCK;
use crate::repo::Reader;

/// What `repair index` did.
#[derive(Clone, Debug, Default)]
pub struct RepairReport {
    /// Packs whose chunks the new index places.
    pub packs: u64,
    /// Chunk places in the new index.
    pub chunks: u64,
    /// Index objects replaced.
    pub indexes_replaced: u64,
    /// What was left out, and why (an id list that does not decode, a chunk that does not
    /// verify, an id list whose pack is gone).
    pub dropped: Vec<String>,
}

/// Rebuilds the index from every pack's id list (with `read_data`, from what each pack really
/// holds), then deletes every index object listed before.
pub fn repair_index(reader: &Reader<'_>, now: i64, read_data: bool) -> Result<RepairReport> {
    let store = reader.store;
    match store.put_new(LOCK, format!("{{\"time\":{now}}}").as_bytes()) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            return Err(Error::Locked(format!(
                "{LOCK} exists: a prune runs, or one was killed (unlock removes it)"
            )))
        }
        r => r?,
    }
    let done = rebuild(reader, read_data);
    store.delete(LOCK)?;
    done
}

fn rebuild(reader: &Reader<'_>, read_data: bool) -> Result<RepairReport> {
    let store = reader.store;
    let old: Vec<String> = store.list("index/")?.into_iter().map(|o| o.name).collect();
    let data = store.list("data/")?;
    let names: HashSet<&str> = data.iter().map(|o| o.name.as_str()).collect();
    let mut rep = RepairReport::default();
    let mut entries: Vec<Placed> = Vec::new();
    let mut orphans = Vec::new();
    for o in data.iter().filter(|o| o.name.ends_with(".ids")) {
        let pack_name = &o.name[..o.name.len() - 4];
        let Ok(pack) = hex16(&pack_name["data/".len()..]) else { continue };
        if !names.contains(pack_name) {
            rep.dropped.push(format!("{}: its pack is gone (removed)", o.name));
            orphans.push(o.name.clone());
            continue;
        }
        let table = match store.get(&o.name, MAX_TABLE).map_err(Error::from).and_then(|b| Table::decode(&b)) {
            Ok(t) => t,
            Err(e) => {
                rep.dropped.push(format!("{}: {e}", o.name));
                continue;
            }
        };
        let mut placed: Vec<Placed> = table.entries.into_iter().filter(|e| e.pack == pack).collect();
        if read_data {
            placed = verified(reader, pack_name, placed, &mut rep.dropped);
        }
        if !placed.is_empty() {
            rep.packs += 1;
            entries.extend(placed);
        }
    }
    rep.chunks = entries.len() as u64;
    let recipients = reader.recipients()?;
    // The new index first, then the old ones go: a chunk is never placed zero times.
    for part in entries.chunks(MAX_ENTRIES / 2) {
        let table = Table { entries: part.to_vec() }.encode()?;
        let name = format!("index/{}", random_name());
        store.put_new(&name, &object::seal(&recipients, &table)?)?;
        store.put_new(&format!("{name}.ids"), &table)?;
    }
    let mut replaced = 0;
    for name in old.iter().filter(|n| !n.ends_with(".ids")) {
        store.delete(&format!("{name}.ids"))?;
        store.delete(name)?;
        replaced += 1;
    }
    // Clear copies whose index was already gone, and id lists whose pack is: no writer may
    // count on what they list.
    for name in old.iter().filter(|n| n.ends_with(".ids")).chain(&orphans) {
        store.delete(name)?;
    }
    rep.indexes_replaced = replaced;
    Ok(rep)
}

/// The places of `pack` whose chunk the pack really holds; the rest named in `dropped`.
fn verified(reader: &Reader<'_>, name: &str, placed: Vec<Placed>, dropped: &mut Vec<String>) -> Vec<Placed> {
    let mut opened = match PackReader::open(reader.store, name, reader.ids) {
        Ok(p) => p,
        Err(e) => {
            dropped.push(format!("{name}: {e}"));
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for e in placed {
        match opened.read(e.offset, e.stored as usize).and_then(|b| unpack_chunk(reader.key(), &e, &b)) {
            Ok(_) => out.push(e),
            Err(err) => dropped.push(format!("{name}: chunk {}: {err}", e.id)),
        }
    }
    out
}
