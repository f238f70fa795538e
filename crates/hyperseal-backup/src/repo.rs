//! Creating a repository, and the reader's view of one (an identity opens the config, the
//! indexes and the snapshots).

use std::collections::{HashMap, HashSet};
use std::io;

use hyperseal::recipient::{Identity, Recipient};
use zeroize::Zeroizing;

use crate::error::{Error, Result};
use crate::format::config::{Algorithm, Chunker, Config, CHUNK_AVG, CHUNK_MAX, CHUNK_MIN};
use crate::format::snapshot::Snapshot;
use crate::format::table::{Entry, Table};
use crate::format::{MAX_CONFIG, MAX_SNAPSHOT, MAX_TABLE};
use hyperseal::recipient::plugin::Plugins;

use crate::keys::{hex16, hex32, parse_recipients, ChunkId, WriterKey};
use crate::object;
use crate::store::Store;

/// Creates a repository for `recipients` (recipient strings) and returns the writer key.
/// Refuses where a config exists.
pub fn init(store: &dyn Store, recipients: &[String]) -> Result<WriterKey> {
    init_with(store, recipients, Plugins::Refuse)
}

/// [`init`], with plugin recipients allowed where `plugins` says so.
pub fn init_with(store: &dyn Store, recipients: &[String], plugins: Plugins) -> Result<WriterKey> {
    let parsed = parse_recipients(recipients, plugins)?;
    if parsed.is_empty() {
        return Err(Error::Refused("a repository needs at least one recipient".into()));
    }
    let mut repo_id = [0u8; 16];
    let mut dedup_key = Zeroizing::new([0u8; 32]);
    hyperseal::fill_random(&mut repo_id)?;
    hyperseal::fill_random(&mut dedup_key[..])?;
    let config = Config {
        version: 1,
        repo: hex::encode(repo_id),
        dedup_key: hex::encode(*dedup_key),
        chunker: Chunker {
            algorithm: Algorithm::FastCdc2020,
            min: CHUNK_MIN,
            avg: CHUNK_AVG,
            max: CHUNK_MAX,
        },
        compression: "zstd".into(),
    };
    let json = Zeroizing::new(serde_json::to_vec(&config).expect("config serialises"));
    // The reader set first and the config last: a repository is a folder with a config, and
    // one always has its reader set. A killed init leaves a reader set without a config, which
    // the next init refuses rather than guess between two sets.
    if store.open("config").is_ok() {
        return Err(Error::Refused("a repository already exists there".into()));
    }
    if !store.list("keys/")?.is_empty() {
        return Err(Error::Refused(
            "keys/ exists without a config (an interrupted init): remove the folder".into(),
        ));
    }
    put_recipients(store, &parsed, recipients, 0)?;
    match store.put_new("config", &object::seal(&parsed, &json)?) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            return Err(Error::Refused("a repository already exists there".into()))
        }
        r => r?,
    }
    Ok(WriterKey { repo_id, dedup_key, recipients: recipients.to_vec() })
}

/// The reader set's recipient strings (`keys/NAME`, an age file of JSON), so that a prune
/// can seal its new index to the same readers; a rekey stores a new one and removes the old.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Recipients {
    /// Orders the objects: the highest is current.
    serial: u64,
    recipients: Vec<String>,
}

/// Stores the recipient set as `keys/NAME`; returns the name.
pub(crate) fn put_recipients(
    store: &dyn Store,
    parsed: &[Box<dyn Recipient>],
    list: &[String],
    serial: u64,
) -> Result<String> {
    let json = serde_json::to_vec(&Recipients { serial, recipients: list.to_vec() }).expect("serialises");
    let name = format!("keys/{}", crate::keys::random_name());
    store.put_new(&name, &object::seal(parsed, &json)?)?;
    Ok(name)
}

/// A snapshot and its id (the object's name under `snapshots/`).
#[derive(Clone, Debug)]
pub struct SnapshotInfo {
    /// 32 hex digits.
    pub id: String,
    /// The snapshot.
    pub snapshot: Snapshot,
}

/// The indexes, merged.
pub struct Index {
    /// Every chunk the indexes place (one place each, where several do).
    pub chunks: HashMap<ChunkId, Entry>,
    /// The index objects' names.
    pub objects: Vec<String>,
    /// Every pack some index names.
    pub packs: HashSet<[u8; 16]>,
}

/// A repository opened with identities.
pub struct Reader<'a> {
    pub(crate) store: &'a dyn Store,
    pub(crate) ids: &'a [Box<dyn Identity>],
    /// The config.
    pub config: Config,
    pub(crate) dedup_key: Zeroizing<[u8; 32]>,
    /// Whether the reader set may hold plugin recipients (a prune's index and a rekey wrap to it).
    pub(crate) plugins: Plugins,
}

impl<'a> Reader<'a> {
    /// Opens the config: the first thing an identity must open.
    pub fn open(store: &'a dyn Store, ids: &'a [Box<dyn Identity>]) -> Result<Reader<'a>> {
        let json = Zeroizing::new(object::open(store, "config", ids, MAX_CONFIG).map_err(|e| match e {
            Error::Io(e) if e.kind() == io::ErrorKind::NotFound => {
                Error::NotFound("no repository there (no config)".into())
            }
            e => e,
        })?);
        let config = Config::decode(&json)?;
        let dedup_key = Zeroizing::new(hex32(&config.dedup_key)?);
        Ok(Reader { store, ids, config, dedup_key, plugins: Plugins::Refuse })
    }

    /// Lets plugin recipients in the reader set run (refused by default).
    pub fn set_plugins(&mut self, plugins: Plugins) {
        self.plugins = plugins;
    }

    /// A writer key for `recipients` (a new reader set, or a lost key file).
    pub fn writer_key(&self, recipients: &[String]) -> Result<WriterKey> {
        parse_recipients(recipients, self.plugins)?;
        Ok(WriterKey {
            repo_id: hex16(&self.config.repo)?,
            dedup_key: self.dedup_key.clone(),
            recipients: recipients.to_vec(),
        })
    }

    /// Every snapshot, oldest first.
    pub fn snapshots(&self) -> Result<Vec<SnapshotInfo>> {
        let mut out = Vec::new();
        for o in self.store.list("snapshots/")? {
            let json = object::open(self.store, &o.name, self.ids, MAX_SNAPSHOT)?;
            let id = o.name["snapshots/".len()..].to_string();
            out.push(SnapshotInfo { id, snapshot: Snapshot::decode(&json)? });
        }
        out.sort_by(|a, b| {
            (a.snapshot.time, a.snapshot.nanos, &a.id).cmp(&(b.snapshot.time, b.snapshot.nanos, &b.id))
        });
        Ok(out)
    }

    /// The snapshot `sel` names: `latest`, an id, or a unique prefix of one.
    pub fn find(&self, sel: &str) -> Result<SnapshotInfo> {
        let all = self.snapshots()?;
        if sel == "latest" {
            return all
                .into_iter()
                .next_back()
                .ok_or_else(|| Error::NotFound("the repository has no snapshot".into()));
        }
        let mut hits: Vec<SnapshotInfo> = all.into_iter().filter(|s| s.id.starts_with(sel)).collect();
        match (sel.is_empty(), hits.len()) {
            (false, 1) => Ok(hits.remove(0)),
            (_, 0) | (true, _) => Err(Error::NotFound(format!("no snapshot {sel:?}"))),
            (false, n) => Err(Error::NotFound(format!("{n} snapshots start with {sel:?}: give more digits"))),
        }
    }

    /// Every index, read and merged.
    pub fn index(&self) -> Result<Index> {
        let mut map = HashMap::new();
        let mut names = Vec::new();
        let mut packs = HashSet::new();
        for o in self.store.list("index/")? {
            if o.name.ends_with(".ids") {
                continue;
            }
            let table = Table::decode(&object::open(self.store, &o.name, self.ids, MAX_TABLE)?)?;
            for e in table.entries {
                packs.insert(e.pack);
                map.entry(e.id).or_insert(e);
            }
            names.push(o.name);
        }
        Ok(Index { chunks: map, objects: names, packs })
    }

    /// An object's plaintext (for `cat`): the config, an index, a snapshot or a pack.
    pub fn cat(&self, name: &str) -> Result<Vec<u8>> {
        // A pack is about 16 MiB; more than this is not one this crate wrote.
        let limit = if name.starts_with("data/") { 256 << 20 } else { MAX_SNAPSHOT };
        object::open(self.store, name, self.ids, limit)
    }

    /// The current reader set (the `keys/` object with the highest serial), its serial and
    /// the names of every `keys/` object.
    pub fn recipient_strings(&self) -> Result<(Vec<String>, u64, Vec<String>)> {
        let mut best: Option<Recipients> = None;
        let mut names = Vec::new();
        for o in self.store.list("keys/")? {
            let r: Recipients =
                serde_json::from_slice(&object::open(self.store, &o.name, self.ids, MAX_CONFIG)?)
                    .map_err(|e| crate::error::format(format!("{}: {e}", o.name)))?;
            if best.as_ref().is_none_or(|b| r.serial > b.serial) {
                best = Some(r);
            }
            names.push(o.name);
        }
        let best = best.ok_or_else(|| Error::NotFound("the repository has no keys/ object".into()))?;
        Ok((best.recipients, best.serial, names))
    }

    /// The current reader set, parsed.
    pub fn recipients(&self) -> Result<Vec<Box<dyn Recipient>>> {
        parse_recipients(&self.recipient_strings()?.0, self.plugins)
    }

    /// The deduplication key (readers check chunk ids with it).
    pub(crate) fn key(&self) -> &[u8; 32] {
        &self.dedup_key
    }
}
