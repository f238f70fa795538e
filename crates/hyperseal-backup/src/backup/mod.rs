//! `backup`: what a writer does, with its key and nothing that opens an object.
//!
//! The order makes every instant safe to die at (docs/BACKUP.md, "Writing"):
//! 1. a run mark (`runs/NAME`), then a look for a prune's lock;
//! 2. the id lists of indexes and packs: what the repository holds already;
//! 3. packs, each followed by its id list;
//! 4. an index for the new packs (and for whole packs an earlier run left without one);
//! 5. the snapshot, last: it names only chunks that steps 3 and 4 made findable.

mod cache;
mod pipeline;
mod walk;

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::PathBuf;

use crate::error::{Error, Result};
use hyperseal::recipient::plugin::Plugins;

use crate::format::config::{Algorithm, Chunker, CHUNK_AVG, CHUNK_MAX, CHUNK_MIN, PACK_SIZE};
use crate::format::snapshot::{Entry, Snapshot};
use crate::format::table::{Entry as Placed, Table, MAX_ENTRIES};
use crate::format::MAX_TABLE;
use crate::keys::{hex16, random_name, ChunkId, WriterKey};
use crate::object;
use crate::store::Store;
use cache::{Cache, Cached};
use pipeline::{Packed, PackerConfig};
pub use walk::Progress;
use walk::{Excludes, Pending, Walk};

/// What to back up.
pub enum Source {
    /// Files and folders; each is stored under its own last name.
    Paths(Vec<PathBuf>),
    /// A stream stored as one file called `name`.
    Stream {
        /// The stream.
        input: Box<dyn Read + Send>,
        /// The file's name in the snapshot.
        name: String,
    },
}

/// How to back up.
pub struct BackupOptions<'a> {
    /// The host name recorded in the snapshot.
    pub host: String,
    /// Tags recorded in the snapshot (for `forget` and `snapshots` to select by).
    pub tags: Vec<String>,
    /// The snapshot's time (seconds since the epoch): the caller's clock.
    pub time: i64,
    /// Nanoseconds past `time`.
    pub nanos: u32,
    /// Globs to leave out (see the walk's rules: a name, or a path under a root).
    pub excludes: Vec<String>,
    /// Do not descend into folders on other file systems.
    pub one_file_system: bool,
    /// Hashing and compression workers (0: one per core).
    pub threads: usize,
    /// Stored bytes per pack.
    pub pack_size: u64,
    /// The writer's change-detection cache file: files whose length, times and inode match
    /// it are not read again. Read before and written after the run.
    pub cache: Option<PathBuf>,
    /// Told the files and bytes read so far, from the walking thread.
    pub progress: Option<&'a (dyn Fn(Progress) + Sync)>,
    /// Stops, as a kill would, once this many packs are stored (for tests of recovery).
    #[doc(hidden)]
    pub stop_after_packs: Option<usize>,
    /// Whether the writer key's plugin recipients may run (`age-plugin-NAME` wraps each
    /// object's file key). Refused by default.
    pub plugins: Plugins,
}

impl Default for BackupOptions<'_> {
    fn default() -> Self {
        BackupOptions {
            host: String::new(),
            tags: Vec::new(),
            time: 0,
            nanos: 0,
            excludes: Vec::new(),
            one_file_system: false,
            threads: 0,
            pack_size: PACK_SIZE,
            cache: None,
            progress: None,
            stop_after_packs: None,
            plugins: Plugins::Refuse,
        }
    }
}

/// What a backup did, in restic's terms where they apply.
#[derive(Clone, Debug, Default)]
pub struct BackupSummary {
    /// The new snapshot's id.
    pub snapshot: String,
    /// Files read.
    pub files: u64,
    /// Files with at least one chunk the repository did not hold (new or changed).
    pub files_with_new_data: u64,
    /// Files the cache showed unchanged (not read).
    pub files_cached: u64,
    /// Folders.
    pub dirs: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Chunks stored by this run, and found already stored.
    pub chunks_new: u64,
    /// Chunks already in the repository (or earlier in this run).
    pub chunks_reused: u64,
    /// Plaintext bytes of the new chunks ("added").
    pub bytes_added: u64,
    /// Bytes of every object written (packs, id lists, index, snapshot).
    pub bytes_stored: u64,
    /// Packs written.
    pub packs: u64,
    /// What was skipped, and why.
    pub warnings: Vec<String>,
}

/// The chunker every repository of this version uses (the config records it).
fn chunker() -> Chunker {
    Chunker { algorithm: Algorithm::FastCdc2020, min: CHUNK_MIN, avg: CHUNK_AVG, max: CHUNK_MAX }
}

/// Backs `source` up into the repository as one new snapshot; returns its summary.
pub fn backup(
    store: &dyn Store,
    key: &WriterKey,
    source: Source,
    opts: &BackupOptions<'_>,
) -> Result<BackupSummary> {
    let recipients = key.parsed_recipients(opts.plugins)?;
    let excludes = Excludes::new(&opts.excludes)?;
    check_key(store, key)?;
    let run = random_name();
    let mark = serde_json::json!({ "start": opts.time, "host": opts.host, "repo": hex::encode(key.repo_id) });
    store.put_new(&format!("runs/{run}"), mark.to_string().as_bytes())?;
    let done = backup_marked(store, key, &recipients, &excludes, &run, source, opts);
    // A run that ended says so, so that a prune need not wait for its mark to go stale (a
    // forgotten snapshot no longer says it either); a killed run cannot, and the wait covers
    // it. A simulated kill writes nothing, as a real one.
    if !matches!(done, Err(Error::Interrupted)) {
        let ended = store.put_new(&format!("runs/{run}.end"), b"{}");
        if let (Ok(s), Err(e)) = (&done, ended) {
            return Err(Error::Io(std::io::Error::new(
                e.kind(),
                format!("snapshot {} stored, but its run's end mark not: {e}", s.snapshot),
            )));
        }
    }
    done
}

fn backup_marked(
    store: &dyn Store,
    key: &WriterKey,
    recipients: &[Box<dyn hyperseal::Recipient>],
    excludes: &Excludes,
    run: &str,
    source: Source,
    opts: &BackupOptions<'_>,
) -> Result<BackupSummary> {
    if store.list("locks/")?.iter().any(|o| o.name == "locks/prune") {
        return Err(Error::Locked("a prune holds the repository (locks/prune)".into()));
    }
    let (known, adopted, skipped) = known_chunks(store)?;
    let repo = hex::encode(key.repo_id);
    let cache = opts.cache.as_deref().map(|p| Cache::load(p, &repo, &known)).unwrap_or_default();
    let threads = match opts.threads {
        0 => hyperseal::available_threads(),
        n => n,
    };
    // A long run says it is alive, so that a prune does not take it for a killed one once
    // `stale_after` has passed since its start (marks are aged by the store's times).
    let alive = std::sync::Mutex::new((std::time::Instant::now(), 0u32));
    let after_pack = || -> Result<()> {
        let mut a = alive.lock().unwrap_or_else(|p| p.into_inner());
        if a.0.elapsed() >= ALIVE_EVERY {
            *a = (std::time::Instant::now(), a.1 + 1);
            store.put_new(&format!("runs/{run}.alive{}", a.1), b"{}")?;
        }
        Ok(())
    };
    let cfg = PackerConfig {
        store,
        recipients,
        pack_size: opts.pack_size,
        stop_after_packs: opts.stop_after_packs,
        after_pack: &after_pack,
    };
    let mut paths = Vec::new();
    let (walked, packed) = pipeline::run(&cfg, &key.dedup_key, known, threads, |feed| {
        let mut w = Walk::new(feed, chunker(), excludes);
        w.seed = walk::chunker_seed(&key.dedup_key);
        (w.one_file_system, w.progress, w.cache) = (opts.one_file_system, opts.progress, Some(&cache));
        walk_source(&mut w, source, opts.time, &mut paths)?;
        Ok((w.out, w.warnings, w.counts, w.cached))
    })?;
    let (pending, warnings, counts, cached) = walked;
    let mut summary = BackupSummary {
        files: counts.files,
        files_cached: cached,
        bytes_read: counts.bytes,
        chunks_new: packed.chunks_new,
        chunks_reused: packed.chunks_reused,
        bytes_added: packed.raw_added,
        bytes_stored: packed.bytes_written,
        packs: packed.packs,
        warnings: skipped.into_iter().chain(warnings).collect(),
        ..BackupSummary::default()
    };
    let mut index = adopted;
    index.extend(packed.entries.iter().copied());
    summary.bytes_stored += write_index(store, recipients, index)?;
    let (entries, next_cache) = resolve(pending, &packed, &mut summary);
    let snap = Snapshot {
        version: 1,
        time: opts.time,
        nanos: opts.nanos,
        host: opts.host.clone(),
        run: run.to_string(),
        paths,
        tags: opts.tags.clone(),
        entries,
    };
    let sealed = object::seal(recipients, &snap.encode())?;
    still_standing(store, run, &packed)?;
    summary.snapshot = random_name();
    store.put_new(&format!("snapshots/{}", summary.snapshot), &sealed)?;
    summary.bytes_stored += sealed.len() as u64;
    // The snapshot is stored: a cache that fails to save costs the next run a re-read, no more.
    if let Some(path) = &opts.cache {
        if let Err(e) = Cache::save(path, &repo, next_cache) {
            summary.warnings.push(format!("{}: cache not saved: {e}", path.display()));
        }
    }
    Ok(summary)
}

/// Feeds the walk from the source; `paths` gets what the snapshot records as backed up.
fn walk_source(w: &mut Walk<'_, '_>, source: Source, time: i64, paths: &mut Vec<String>) -> Result<()> {
    match source {
        Source::Paths(list) => {
            let mut names = HashSet::new();
            for p in &list {
                let name = root_name(p)?;
                if !names.insert(name.clone()) {
                    return Err(Error::Refused(format!(
                        "two paths are named {name:?}: back them up separately"
                    )));
                }
                w.root(p, &name)?;
                paths.push(p.display().to_string());
            }
        }
        Source::Stream { mut input, name } => {
            check_stream_name(&name)?;
            w.stream(&mut input, &name, time)?;
            paths.push(name);
        }
    }
    Ok(())
}

/// The name a root is stored under: its last component (`/` itself is refused: name a folder).
fn root_name(p: &std::path::Path) -> Result<String> {
    let abs = std::path::absolute(p)?;
    let name = abs.file_name().and_then(|n| n.to_str()).map(str::to_string);
    let name = match name {
        Some(n) if n != ".." => n,
        _ => match std::fs::canonicalize(p)?.file_name().and_then(|n| n.to_str()) {
            Some(n) => n.to_string(),
            None => return Err(Error::Refused(format!("{}: give a folder with a name", p.display()))),
        },
    };
    check_stream_name(&name)?;
    Ok(name)
}

fn check_stream_name(name: &str) -> Result<()> {
    match crate::names::safe_component(name) {
        true => Ok(()),
        false => Err(Error::Refused(format!("{name:?} cannot be a name in a snapshot"))),
    }
}

/// Chunk ids the repository holds, read from the clear id lists only; the places of chunks
/// in packs that no index names yet (an interrupted run's), which this run's index adopts so
/// that its snapshot may use them; and the id lists passed over. Anyone who can add objects
/// can add an id list, so one that does not decode is named and passed over (its chunks are
/// stored again), never the end of every host's backups.
fn known_chunks(store: &dyn Store) -> Result<(HashSet<ChunkId>, Vec<Placed>, Vec<String>)> {
    let mut known = HashSet::new();
    let mut covered = HashSet::new();
    let mut skipped = Vec::new();
    let read = |name: &str, skipped: &mut Vec<String>| -> Result<Option<Table>> {
        match store.get(name, MAX_TABLE).map_err(Error::from).and_then(|b| Table::decode(&b)) {
            Ok(t) => Ok(Some(t)),
            Err(Error::Io(e))
                if e.kind() != std::io::ErrorKind::NotFound
                    && e.kind() != std::io::ErrorKind::InvalidData =>
            {
                Err(Error::Io(e))
            }
            Err(e) => {
                skipped.push(format!("{name}: {e}; passed over (its chunks are stored again)"));
                Ok(None)
            }
        }
    };
    let data = store.list("data/")?;
    let packs: HashSet<&str> = data.iter().map(|o| o.name.as_str()).collect();
    let present: HashSet<[u8; 16]> =
        data.iter().filter_map(|o| o.name.strip_prefix("data/").and_then(|n| hex16(n).ok())).collect();
    for o in store.list("index/")?.iter().filter(|o| o.name.ends_with(".ids")) {
        for e in read(&o.name, &mut skipped)?.map(|t| t.entries).unwrap_or_default() {
            // A chunk whose pack is gone is stored again: an index outlives a lost pack.
            if present.contains(&e.pack) {
                known.insert(e.id);
            }
            covered.insert(e.pack);
        }
    }
    let mut adopted = Vec::new();
    for o in data.iter().filter(|o| o.name.ends_with(".ids")) {
        let pack_name = &o.name[..o.name.len() - 4];
        let Ok(pack) = hex16(&pack_name["data/".len()..]) else { continue };
        if covered.contains(&pack) || !packs.contains(pack_name) {
            continue;
        }
        let entries = read(&o.name, &mut skipped)?.map(|t| t.entries).unwrap_or_default();
        for e in entries.into_iter().filter(|e| e.pack == pack) {
            if known.insert(e.id) {
                adopted.push(e);
            }
        }
    }
    Ok((known, adopted, skipped))
}

/// How often a running backup stores a sign of life (`runs/RUN.aliveN`).
const ALIVE_EVERY: std::time::Duration = std::time::Duration::from_secs(600);

/// Refuses a writer key that is not this repository's, or that seals to a reader set `rekey`
/// has since replaced, before anything is uploaded. Both show to a writer as names only
/// (`repo/ID`; `keys/SERIAL-TAG`, the tag keyed with the deduplication key): a repository
/// made before them has none, and is not checked.
fn check_key(store: &dyn Store, key: &WriterKey) -> Result<()> {
    let marks = store.list(crate::repo::REPO_MARKS)?;
    let ours = crate::repo::repo_mark(&key.repo_id);
    if !marks.is_empty() && !marks.iter().any(|o| o.name == ours) {
        return Err(Error::Refused(format!(
            "this writer key is for repository {}, not the one there: give that repository's writer key",
            hex::encode(key.repo_id)
        )));
    }
    let tags: Vec<String> =
        store.list("keys/")?.into_iter().filter_map(|o| crate::repo::set_tag_of(&o.name)).collect();
    let tag = crate::keys::set_tag(&key.dedup_key, &key.recipients);
    if !tags.is_empty() && !tags.contains(&tag) {
        return Err(Error::Refused(
            "this writer key seals to a reader set that rekey has since replaced: ask a reader for a new one \
             (hyperseal backup rekey --writer-key)"
                .into(),
        ));
    }
    Ok(())
}

/// Before the snapshot is stored: the run's mark and the packs it wrote are still there. A
/// run that went on past a prune's `stale_after` without a sign of life may have had its
/// packs taken; it then fails, and stores no snapshot that names what is gone.
fn still_standing(store: &dyn Store, run: &str, packed: &Packed) -> Result<()> {
    let mark = format!("runs/{run}");
    if !store.list("runs/")?.iter().any(|o| o.name == mark) {
        return Err(Error::Locked(format!(
            "{mark} was removed by a prune that took this run for a killed one: no snapshot stored, back up again"
        )));
    }
    let packs: HashSet<String> = store.list("data/")?.into_iter().map(|o| o.name).collect();
    if let Some(e) = packed.entries.iter().find(|e| !packs.contains(&format!("data/{}", hex::encode(e.pack))))
    {
        return Err(Error::Damaged(format!(
            "data/{}, stored by this run, is gone: no snapshot stored, back up again",
            hex::encode(e.pack)
        )));
    }
    Ok(())
}

/// Stores the index of `entries` (several objects past a table's bound); returns bytes written.
fn write_index(
    store: &dyn Store,
    recipients: &[Box<dyn hyperseal::Recipient>],
    entries: Vec<Placed>,
) -> Result<u64> {
    let mut written = 0;
    for part in entries.chunks(MAX_ENTRIES / 2) {
        let table = Table { entries: part.to_vec() }.encode()?;
        let name = format!("index/{}", random_name());
        let sealed = object::seal(recipients, &table)?;
        store.put_new(&name, &sealed)?;
        store.put_new(&format!("{name}.ids"), &table)?;
        written += (sealed.len() + table.len()) as u64;
    }
    Ok(written)
}

/// The snapshot's entries, each file given its chunk ids; and the next cache.
fn resolve(
    pending: Vec<Pending>,
    packed: &Packed,
    summary: &mut BackupSummary,
) -> (Vec<Entry>, HashMap<String, Cached>) {
    let new: HashSet<ChunkId> = packed.entries.iter().map(|e| e.id).collect();
    let mut out = Vec::with_capacity(pending.len());
    let mut cache = HashMap::new();
    for p in pending {
        match p {
            Pending::Done(e) => {
                summary.dirs += matches!(e, Entry::Dir { .. }) as u64;
                out.push(e)
            }
            Pending::File { path, mode, mtime, size, first, count, stat } => {
                let ids = &packed.ids[first..first + count];
                summary.files_with_new_data += ids.iter().any(|i| new.contains(i)) as u64;
                let chunks: Vec<String> = ids.iter().map(ChunkId::to_string).collect();
                if let Some(st) = stat {
                    cache.insert(path.clone(), Cached::new(&st, chunks.clone()));
                }
                out.push(Entry::File { path, mode, mtime, size, chunks });
            }
            Pending::Cached { path, stat, chunks } => {
                cache.insert(path.clone(), Cached::new(&stat, chunks.clone()));
                let (mode, mtime, size) = (stat.mode, stat.mtime, stat.size);
                out.push(Entry::File { path, mode, mtime, size, chunks });
            }
        }
    }
    (out, cache)
}
