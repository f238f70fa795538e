//! `prune` (with `forget`, the only operations that delete; both need an identity).
//!
//! Writers take no lock, so prune must never delete what a running backup may still use (a
//! chunk it found in an id list, or a pack it wrote). The rule, two marks and two looks:
//! - a writer first stores its run mark (`runs/NAME`), then looks for `locks/prune`, and
//!   gives up if it is there;
//! - prune first stores `locks/prune` (create-only: one prune at a time), then lists the run
//!   marks, and gives up if any run started less than `stale_after` ago has neither a
//!   snapshot nor an end mark (`runs/NAME.end`).
//!
//! On a store where a listing shows every object written before it, at least one of the two
//! sees the other, so a backup and a prune never overlap. A killed writer blocks prune for
//! `stale_after` (default a day), a killed prune blocks writers until `unlock`.

use std::collections::{HashMap, HashSet};
use std::io;

use crate::error::{Error, Result};
use crate::format::snapshot::Entry;
use crate::format::table::{Entry as Placed, Table, MAX_ENTRIES};
use crate::format::{MAX_MARK, MAX_TABLE};
use crate::keys::{random_name, ChunkId};
use crate::object;
use crate::repo::{repo_mark, Reader, Skipped, REPO_MARKS};
use crate::store::Store;

/// The prune lock's name.
pub const LOCK: &str = "locks/prune";

/// How to prune.
#[derive(Clone, Copy, Debug)]
pub struct PruneOptions {
    /// Now, seconds since the epoch (the caller's clock).
    pub now: i64,
    /// A run mark older than this (seconds) is a killed run's, not a running one's.
    pub stale_after: i64,
}

/// What `prune` removed.
#[derive(Clone, Debug, Default)]
pub struct PruneReport {
    /// Packs deleted.
    pub packs_removed: u64,
    /// Their bytes.
    pub bytes_freed: u64,
    /// Packs kept (each holds at least one chunk a snapshot uses).
    pub packs_kept: u64,
    /// Index objects replaced by the new one.
    pub indexes_replaced: u64,
    /// Objects that did not open (snapshots, indexes): left as they are.
    pub skipped: Vec<Skipped>,
}

/// Deletes every pack no snapshot uses, under the lock.
pub fn prune(reader: &Reader<'_>, opts: PruneOptions) -> Result<PruneReport> {
    let store = reader.store;
    match store.put_new(LOCK, format!("{{\"time\":{}}}", opts.now).as_bytes()) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            return Err(Error::Locked(format!(
                "{LOCK} exists: another prune runs, or one was killed (unlock removes it)"
            )))
        }
        r => r?,
    }
    let done = prune_locked(reader, opts);
    store.delete(LOCK)?;
    done
}

/// Removes the prune lock a killed prune left.
/// Returns whether there was one.
pub fn unlock(store: &dyn Store) -> Result<bool> {
    let there = store.list("locks/")?.iter().any(|o| o.name == LOCK);
    store.delete(LOCK)?;
    Ok(there)
}

/// The run marks that hold a prune off now (a backup running, or one killed less than
/// `stale_after` ago), by name: what `unlock` cannot remove, said instead of done.
pub fn running(reader: &Reader<'_>, opts: PruneOptions) -> Result<Vec<String>> {
    let finished: HashSet<String> = reader.snapshots()?.list.into_iter().map(|s| s.snapshot.run).collect();
    let mut runs: HashMap<String, Vec<crate::store::ObjectInfo>> = HashMap::new();
    for o in reader.store.list("runs/")? {
        let run = o.name["runs/".len()..].split('.').next().unwrap_or_default().to_string();
        runs.entry(run).or_default().push(o);
    }
    let mut held = Vec::new();
    for (run, objects) in runs {
        if let Err(Error::Locked(_)) = spent_marks(reader.store, &objects, &finished, opts) {
            held.push(format!("runs/{run}"));
        }
    }
    held.sort();
    Ok(held)
}

/// Whether a prune could run now: no prune lock, no backup running. `forget --prune` asks
/// first, so that it removes no snapshot when the prune would then refuse.
pub fn prune_ready(reader: &Reader<'_>, opts: PruneOptions) -> Result<()> {
    if reader.store.list("locks/")?.iter().any(|o| o.name == LOCK) {
        return Err(Error::Locked(format!(
            "{LOCK} exists: another prune runs, or one was killed (unlock removes it)"
        )));
    }
    match running(reader, opts)?.first() {
        Some(run) => {
            Err(Error::Locked(format!("a backup is running ({run}): nothing forgotten, nothing pruned")))
        }
        None => Ok(()),
    }
}

fn prune_locked(reader: &Reader<'_>, opts: PruneOptions) -> Result<PruneReport> {
    let store = reader.store;
    // The run marks before the snapshots: a run that stores its snapshot after this listing
    // shows here as running (and holds the prune off), never as ended with its snapshot
    // unseen, which would make its new packs look unused.
    let marks = store.list("runs/")?;
    let mut finished = HashSet::new();
    let mut used: HashSet<ChunkId> = HashSet::new();
    let mut snapshot_names = HashSet::new();
    let mut skipped = reader.for_each_snapshot(|s| {
        finished.insert(s.snapshot.run.clone());
        snapshot_names.insert(s.id.clone());
        for e in &s.snapshot.entries {
            if let Entry::File { chunks, .. } = e {
                for c in chunks {
                    used.insert(ChunkId::parse(c).map_err(|_| {
                        Error::Damaged(format!(
                            "snapshots/{}: a chunk id that is not one: nothing pruned",
                            s.id
                        ))
                    })?);
                }
            }
        }
        Ok(())
    })?;
    // Snapshots that do not open are not counted (what they use is not kept); each is named.
    snapshot_names.extend(skipped.iter().map(|k| k.name["snapshots/".len()..].to_string()));
    let spent = spent_marks(store, &marks, &finished, opts)?;
    let (kept, keep, old_indexes, more) = verified_places(reader, &used)?;
    skipped.extend(more);
    // Anything new since the first look (a run, a snapshot) stops the prune before it deletes:
    // on a store whose listings lag, the two looks above may have missed a run that finished.
    let seen: HashSet<&str> = marks.iter().map(|o| o.name.as_str()).collect();
    let new_run = store.list("runs/")?.into_iter().find(|o| !seen.contains(o.name.as_str()));
    let new_snap = reader.snapshot_ids()?.into_iter().find(|id| !snapshot_names.contains(id));
    if let Some(what) = new_run.map(|o| o.name).or(new_snap.map(|id| format!("snapshots/{id}"))) {
        return Err(Error::Locked(format!(
            "{what} appeared while the prune read the repository: nothing deleted, run it again"
        )));
    }
    let recipients = reader.recipients()?;
    // The new index first: until the old ones are gone, chunks are placed twice, never zero times.
    for part in kept.chunks(MAX_ENTRIES / 2) {
        let table = Table { entries: part.to_vec() }.encode()?;
        let name = format!("index/{}", random_name());
        store.put_new(&name, &object::seal(&recipients, &table)?)?;
        store.put_new(&format!("{name}.ids"), &table)?;
    }
    let mut rep =
        PruneReport { indexes_replaced: old_indexes.len() as u64, skipped, ..PruneReport::default() };
    for name in &old_indexes {
        store.delete(&format!("{name}.ids"))?;
        store.delete(name)?;
    }
    let sizes: HashMap<String, u64> = store.list("data/")?.into_iter().map(|o| (o.name, o.size)).collect();
    for (name, size) in &sizes {
        let Some(pack) = crate::keys::hex16(&name["data/".len()..]).ok() else { continue };
        if keep.contains(&pack) {
            rep.packs_kept += 1;
            continue;
        }
        // The id list goes first: no writer dedups against a pack that is about to go.
        store.delete(&format!("{name}.ids"))?;
        store.delete(name)?;
        rep.packs_removed += 1;
        rep.bytes_freed += size + sizes.get(&format!("{name}.ids")).copied().unwrap_or(0);
    }
    for m in spent {
        store.delete(&m)?;
    }
    // A repository made before writers could check its id gets its mark from a reader.
    let id = crate::keys::hex16(&reader.config.repo)?;
    if store.list(REPO_MARKS)?.is_empty() {
        store.put_new(&repo_mark(&id), b"")?;
    }
    Ok(rep)
}

/// The run marks a prune may delete: every object of a run (`runs/RUN`, `.end`, `.aliveN`)
/// that has a snapshot or an end mark, or whose newest object the store received longer than
/// `stale_after` ago (the store's times: a writer's clock says nothing; a long run stores a
/// sign of life now and then). Any other run is running: the prune stops.
fn spent_marks(
    store: &dyn Store,
    marks: &[crate::store::ObjectInfo],
    finished: &HashSet<String>,
    opts: PruneOptions,
) -> Result<Vec<String>> {
    struct Run<'m> {
        ended: bool,
        newest: Option<i64>,
        names: Vec<&'m str>,
    }
    let mut runs: HashMap<&str, Run<'_>> = HashMap::new();
    for o in marks {
        let rest = &o.name["runs/".len()..];
        let (run, suffix) = rest.split_once('.').unwrap_or((rest, ""));
        let r = runs.entry(run).or_insert(Run { ended: false, newest: None, names: Vec::new() });
        r.ended |= suffix == "end";
        r.newest = r.newest.max(secs(o.modified));
        r.names.push(&o.name);
    }
    // The store's now: when it received this prune's lock.
    let store_now = store.list("locks/")?.into_iter().find(|o| o.name == LOCK).and_then(|o| secs(o.modified));
    let mut spent = Vec::new();
    for (run, r) in runs {
        let (newest, now) = match (r.newest, store_now) {
            (Some(t), Some(now)) => (t, now),
            // A store that gives no times: the mark's own start, as the writer wrote it.
            _ => {
                let mark = store.get(&format!("runs/{run}"), MAX_MARK).unwrap_or_default();
                let start =
                    serde_json::from_slice::<serde_json::Value>(&mark).ok().and_then(|v| v["start"].as_i64());
                (start.unwrap_or(0), opts.now)
            }
        };
        if finished.contains(run) || r.ended || newest <= now - opts.stale_after {
            // The end mark last: a prune killed halfway leaves a run that still reads as ended.
            let mut names = r.names;
            names.sort_by_key(|n| n.ends_with(".end"));
            spent.extend(names.into_iter().map(str::to_string));
        } else {
            return Err(Error::Locked(format!("a backup is running (runs/{run}, last seen at {newest})")));
        }
    }
    Ok(spent)
}

fn secs(t: Option<std::time::SystemTime>) -> Option<i64> {
    t.and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map(|d| d.as_secs() as i64)
}

/// Every place of a chunk in use that the prune keeps, the packs they lie in, the index
/// objects read, and those passed over. An index is a writer's word (a writer key seals one),
/// so a place counts only where its pack exists and the pack's own id list places the chunk
/// the same way; every agreeing place is kept, so a planted index that names another pack
/// cannot make the real one look unused. A place in a missing pack, or one its pack's id list
/// disagrees with, stops the prune, naming the index.
type Verified = (Vec<Placed>, HashSet<[u8; 16]>, Vec<String>, Vec<Skipped>);

fn verified_places(reader: &Reader<'_>, used: &HashSet<ChunkId>) -> Result<Verified> {
    let store = reader.store;
    let packs: HashSet<String> = store.list("data/")?.into_iter().map(|o| o.name).collect();
    let mut lists: HashMap<[u8; 16], HashMap<ChunkId, Placed>> = HashMap::new();
    let (mut kept, mut keep, mut names) = (Vec::new(), HashSet::new(), Vec::new());
    let mut placed: HashSet<ChunkId> = HashSet::new();
    let mut seen: HashSet<(ChunkId, [u8; 16], u64)> = HashSet::new();
    let skipped = reader.for_each_index(|name, table| {
        names.push(name.to_string());
        for e in table.entries.into_iter().filter(|e| used.contains(&e.id)) {
            let pack = format!("data/{}", hex::encode(e.pack));
            if !packs.contains(&pack) || !packs.contains(&format!("{pack}.ids")) {
                return Err(Error::Damaged(format!(
                    "{name} places chunk {} in {pack}, which is missing: nothing pruned",
                    e.id
                )));
            }
            if let std::collections::hash_map::Entry::Vacant(v) = lists.entry(e.pack) {
                let table = store
                    .get(&format!("{pack}.ids"), MAX_TABLE)
                    .map_err(Error::from)
                    .and_then(|b| Table::decode(&b));
                let table =
                    table.map_err(|err| Error::Damaged(format!("{pack}.ids: {err}: nothing pruned")))?;
                v.insert(table.entries.into_iter().filter(|x| x.pack == e.pack).map(|x| (x.id, x)).collect());
            }
            if lists[&e.pack].get(&e.id) != Some(&e) {
                return Err(Error::Damaged(format!(
                    "{name} places chunk {} in {pack} where its id list does not: nothing pruned",
                    e.id
                )));
            }
            keep.insert(e.pack);
            if seen.insert((e.id, e.pack, e.offset)) {
                kept.push(e);
            }
            placed.insert(e.id);
        }
        Ok(())
    })?;
    if let Some(id) = used.iter().find(|id| !placed.contains(id)) {
        return Err(Error::Damaged(format!(
            "a snapshot uses chunk {id}, which no index places: run check; nothing pruned"
        )));
    }
    Ok((kept, keep, names, skipped))
}
