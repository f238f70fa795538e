//! `forget` and `prune`: the only operations that delete, and both need an identity.
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
use crate::format::MAX_MARK;
use crate::keys::{random_name, ChunkId};
use crate::object;
use crate::repo::Reader;
use crate::store::Store;

/// The prune lock's name.
pub const LOCK: &str = "locks/prune";

/// What `forget` removed.
#[derive(Clone, Debug, Default)]
pub struct ForgetReport {
    /// Snapshot ids removed.
    pub removed: Vec<String>,
    /// Snapshot ids kept.
    pub kept: Vec<String>,
}

/// Which snapshots `forget` keeps, as restic's policy: the newest `last`, and the newest of
/// each of the `daily`, `weekly` (Monday to Sunday) and `monthly` most recent periods that
/// have one (UTC). A snapshot any rule keeps is kept.
#[derive(Clone, Copy, Debug, Default)]
pub struct Keep {
    /// The newest N snapshots.
    pub last: usize,
    /// The newest snapshot of each of the last N days that have one.
    pub daily: usize,
    /// … of each of the last N weeks.
    pub weekly: usize,
    /// … of each of the last N months.
    pub monthly: usize,
}

/// The period a snapshot's time falls in, for each rule (days, Monday-weeks, months since the
/// epoch); `last` puts every snapshot in its own.
fn periods(time: i64, i: usize) -> [i64; 4] {
    let days = time.div_euclid(86_400);
    // 1970-01-01 was a Thursday: +3 makes weeks start on Mondays.
    let week = (days + 3).div_euclid(7);
    let (y, m, _) = hyperseal::time::civil_from_days(days);
    [i as i64, days, week, y * 12 + m]
}

/// Removes every snapshot the policy does not keep. Deletes only snapshot objects, so it needs
/// no lock: a writer never reads snapshots. A policy that keeps nothing is refused.
pub fn forget(reader: &Reader<'_>, keep: Keep) -> Result<ForgetReport> {
    let mut left = [keep.last, keep.daily, keep.weekly, keep.monthly];
    if left.iter().all(|n| *n == 0) {
        return Err(Error::Refused("a policy that keeps no snapshot: give --keep-last and the like".into()));
    }
    let mut all = reader.snapshots()?;
    all.reverse();
    let mut seen: [Option<i64>; 4] = [None; 4];
    let mut rep = ForgetReport::default();
    for (i, s) in all.into_iter().enumerate() {
        let mut kept = false;
        for (rule, period) in periods(s.snapshot.time, i).into_iter().enumerate() {
            if left[rule] > 0 && seen[rule] != Some(period) {
                (seen[rule], left[rule], kept) = (Some(period), left[rule] - 1, true);
            }
        }
        if kept {
            rep.kept.push(s.id);
        } else {
            reader.store.delete(&format!("snapshots/{}", s.id))?;
            rep.removed.push(s.id);
        }
    }
    Ok(rep)
}

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
pub fn unlock(store: &dyn Store) -> Result<()> {
    Ok(store.delete(LOCK)?)
}

fn prune_locked(reader: &Reader<'_>, opts: PruneOptions) -> Result<PruneReport> {
    let store = reader.store;
    let snapshots = reader.snapshots()?;
    let finished: HashSet<&str> = snapshots.iter().map(|s| s.snapshot.run.as_str()).collect();
    let marks = store.list("runs/")?;
    let ended: HashSet<&str> = marks.iter().filter_map(|o| o.name.strip_suffix(".end")).collect();
    let mut spent = Vec::new();
    for m in marks.iter().filter(|o| !o.name.ends_with(".end")) {
        let run = &m.name["runs/".len()..];
        let start = serde_json::from_slice::<serde_json::Value>(&store.get(&m.name, MAX_MARK)?)
            .ok()
            .and_then(|v| v["start"].as_i64())
            .unwrap_or(0);
        if finished.contains(run) || ended.contains(m.name.as_str()) || start < opts.now - opts.stale_after {
            spent.push(m.name.clone());
        } else {
            return Err(Error::Locked(format!("a backup is running ({} started at {start})", m.name)));
        }
    }
    let used: HashSet<ChunkId> = snapshots
        .iter()
        .flat_map(|s| s.snapshot.entries.iter())
        .flat_map(|e| match e {
            Entry::File { chunks, .. } => chunks.as_slice(),
            _ => &[],
        })
        .map(|c| ChunkId::parse(c))
        .collect::<Result<_>>()?;
    let merged = reader.index()?;
    let (index, old_indexes) = (merged.chunks, merged.objects);
    let kept: Vec<Placed> = used.iter().filter_map(|id| index.get(id).copied()).collect();
    if kept.len() < used.len() {
        return Err(Error::Damaged(
            "some snapshot uses chunks no index places: run check; nothing pruned".into(),
        ));
    }
    let keep: HashSet<[u8; 16]> = kept.iter().map(|e| e.pack).collect();
    let recipients = reader.recipients()?;
    // The new index first: until the old ones are gone, chunks are placed twice, never zero times.
    for part in kept.chunks(MAX_ENTRIES / 2) {
        let table = Table { entries: part.to_vec() }.encode()?;
        let name = format!("index/{}", random_name());
        store.put_new(&name, &object::seal(&recipients, &table)?)?;
        store.put_new(&format!("{name}.ids"), &table)?;
    }
    let mut rep = PruneReport { indexes_replaced: old_indexes.len() as u64, ..PruneReport::default() };
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
        store.delete(&format!("{m}.end"))?;
        store.delete(&m)?;
    }
    Ok(rep)
}
