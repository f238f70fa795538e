//! Creating a repository, and the reader's view of one (an identity opens the config, the
//! indexes and the snapshots).

use std::collections::{HashMap, HashSet};
use std::io;

use hyperseal::recipient::{Identity, Recipient};
use zeroize::Zeroizing;

use crate::error::{Error, Result};
use crate::format::config::{Algorithm, Chunker, Config, CHUNK_AVG, CHUNK_MAX, CHUNK_MIN};
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
    let mut reader_key = Zeroizing::new([0u8; 32]);
    hyperseal::fill_random(&mut repo_id)?;
    hyperseal::fill_random(&mut dedup_key[..])?;
    hyperseal::fill_random(&mut reader_key[..])?;
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
        reader_key: Some(hex::encode(*reader_key)),
    };
    let json = Zeroizing::new(serde_json::to_vec(&config).expect("config serialises"));
    // The reader set first and the config last: a repository is a folder with a config, and
    // one always has its reader set. A killed init leaves a reader set without a config, which
    // the next init refuses rather than guess between two sets.
    if store.open("config").is_ok() {
        return Err(Error::Refused("a repository already exists there".into()));
    }
    if !store.list("keys/")?.is_empty() || !store.list(REPO_MARKS)?.is_empty() {
        return Err(Error::Refused(
            "keys/ exists without a config (an interrupted init): remove the folder".into(),
        ));
    }
    put_recipients(store, &parsed, recipients, 0, Some(&reader_key), &dedup_key)?;
    store.put_new(&repo_mark(&repo_id), b"")?;
    match store.put_new("config", &object::seal(&parsed, &json)?) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            return Err(Error::Refused("a repository already exists there".into()))
        }
        r => r?,
    }
    Ok(WriterKey { repo_id, dedup_key, recipients: recipients.to_vec() })
}

/// Where the repository's id shows to a writer, as an object's name (`repo/ID`, empty): a
/// writer reads no age object, but lists, so it can tell before it uploads anything that its
/// key is this repository's.
pub(crate) const REPO_MARKS: &str = "repo/";

pub(crate) fn repo_mark(id: &[u8; 16]) -> String {
    format!("{REPO_MARKS}{}", hex::encode(id))
}

/// The tag of a reader set's object name (`keys/SERIAL-TAG`); none for older random names.
pub(crate) fn set_tag_of(name: &str) -> Option<String> {
    let (serial, tag) = name.strip_prefix("keys/")?.split_once('-')?;
    let ok = serial.bytes().all(|b| b.is_ascii_digit())
        && tag.len() == 32
        && tag.bytes().all(|b| b.is_ascii_hexdigit());
    ok.then(|| tag.to_string())
}

/// The reader set's recipient strings (`keys/NAME`, an age file of JSON), so that a prune
/// can seal its new index to the same readers; a rekey stores a new one and removes the old.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Recipients {
    /// Orders the objects: the highest is current.
    serial: u64,
    recipients: Vec<String>,
    /// BLAKE3 keyed with the config's `reader_key` over the serial and the recipients
    /// ([`reader_mac`]): only a reader holds that key. Absent in repositories made before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mac: Option<String>,
}

/// The reader set's MAC (docs/BACKUP.md §4.2): keyed BLAKE3 over a label, the serial and
/// each recipient with its length, so no two sets share an input.
pub(crate) fn reader_mac(key: &[u8; 32], serial: u64, recipients: &[String]) -> blake3::Hash {
    let mut h = blake3::Hasher::new_keyed(key);
    h.update(b"hyperseal backup v1 reader set\0");
    h.update(&serial.to_be_bytes());
    for r in recipients {
        h.update(&(r.len() as u64).to_be_bytes());
        h.update(r.as_bytes());
    }
    h.finalize()
}

/// Splits what a reader passes over (an object that does not open with these identities, is
/// damaged or does not decode: its reason) from what stops it (the store, a plugin or the
/// agent failing: an error, so that a passing fault never makes an object look foreign).
pub(crate) fn passable<T>(r: Result<T>) -> Result<std::result::Result<T, String>> {
    use hyperseal::Error as E;
    match r {
        Ok(v) => Ok(Ok(v)),
        // Gone between the listing and the read (a forget or prune meanwhile).
        Err(Error::Io(e)) if e.kind() == io::ErrorKind::NotFound => {
            Ok(Err("gone since it was listed".into()))
        }
        Err(Error::Io(e)) if e.kind() == io::ErrorKind::InvalidData => Ok(Err(e.to_string())),
        Err(e @ (Error::Io(_) | Error::Interrupted | Error::Locked(_))) => Err(e),
        Err(Error::Crypto(
            e @ (E::Io(_) | E::Plugin(_) | E::Agent(_) | E::WrongPassphrase | E::WorkFactorTooHigh(_)),
        )) => Err(Error::Crypto(e)),
        Err(e) => Ok(Err(e.to_string())),
    }
}

/// Stores the recipient set as `keys/NAME`; returns the name.
pub(crate) fn put_recipients(
    store: &dyn Store,
    parsed: &[Box<dyn Recipient>],
    list: &[String],
    serial: u64,
    reader_key: Option<&[u8; 32]>,
    dedup_key: &[u8; 32],
) -> Result<String> {
    let mac = reader_key.map(|k| reader_mac(k, serial, list).to_hex().to_string());
    let json =
        serde_json::to_vec(&Recipients { serial, recipients: list.to_vec(), mac }).expect("serialises");
    let name = format!("keys/{serial}-{}", crate::keys::set_tag(dedup_key, list));
    store.put_new(&name, &object::seal(parsed, &json)?)?;
    Ok(name)
}

/// The indexes, merged.
pub struct Index {
    /// Every place the indexes give each chunk. An index is a writer's word, so where several
    /// indexes place a chunk every place is kept, and a reader takes the first that holds it.
    pub chunks: HashMap<ChunkId, Vec<Entry>>,
    /// The index objects' names.
    pub objects: Vec<String>,
    /// Every pack some index names.
    pub packs: HashSet<[u8; 16]>,
    /// Index objects that did not open or decode, and why.
    pub skipped: Vec<Skipped>,
}

/// An object a reader passed over: it did not open with the identities (sealed to other
/// recipients, another repository's) or did not decode. Anyone who can add objects can add
/// such a one, so it is named, never the end of a listing.
#[derive(Clone, Debug)]
pub struct Skipped {
    /// The object's name.
    pub name: String,
    /// Why it was passed over.
    pub why: String,
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

    /// Calls `f` with each index object's table, one at a time; returns the objects that did
    /// not open or decode. A store that fails (not an object) is an error.
    pub(crate) fn for_each_index(
        &self,
        mut f: impl FnMut(&str, Table) -> Result<()>,
    ) -> Result<Vec<Skipped>> {
        let mut skipped = Vec::new();
        for o in self.store.list("index/")? {
            if o.name.ends_with(".ids") {
                continue;
            }
            match passable(
                object::open(self.store, &o.name, self.ids, MAX_TABLE).and_then(|b| Table::decode(&b)),
            )? {
                Ok(table) => f(&o.name, table)?,
                Err(why) => skipped.push(Skipped { name: o.name, why }),
            }
        }
        Ok(skipped)
    }

    /// Every index, read and merged.
    pub fn index(&self) -> Result<Index> {
        let mut map: HashMap<ChunkId, Vec<Entry>> = HashMap::new();
        let mut names = Vec::new();
        let mut packs = HashSet::new();
        let skipped = self.for_each_index(|name, table| {
            for e in table.entries {
                packs.insert(e.pack);
                let places = map.entry(e.id).or_default();
                if !places.contains(&e) {
                    places.push(e);
                }
            }
            names.push(name.to_string());
            Ok(())
        })?;
        Ok(Index { chunks: map, objects: names, packs, skipped })
    }

    /// An object's plaintext (for `cat`): the config, an index, a snapshot or a pack.
    pub fn cat(&self, name: &str) -> Result<Vec<u8>> {
        // A pack is about 16 MiB; more than this is not one this crate wrote.
        let limit = if name.starts_with("data/") { 256 << 20 } else { MAX_SNAPSHOT };
        object::open(self.store, name, self.ids, limit)
    }

    /// The current reader set, its serial and the names of every `keys/` object. Only a set
    /// that carries the config's reader MAC counts (§4.2): a writer can store a `keys/` object,
    /// but cannot make one that decides the readers. A repository made before the MAC has none
    /// to check, and is read only while it holds exactly one set (as `init` and `rekey` leave).
    pub fn recipient_strings(&self) -> Result<(Vec<String>, u64, Vec<String>)> {
        let mac_key = self.reader_key()?;
        let mut best: Option<Recipients> = None;
        let (mut names, mut refused) = (Vec::new(), Vec::new());
        for o in self.store.list("keys/")? {
            names.push(o.name.clone());
            let opened = object::open(self.store, &o.name, self.ids, MAX_CONFIG).and_then(|b| {
                serde_json::from_slice::<Recipients>(&b).map_err(|e| crate::error::format(e.to_string()))
            });
            let r = match passable(opened)? {
                Ok(r) => r,
                Err(why) => {
                    refused.push(format!("{} ({why})", o.name));
                    continue;
                }
            };
            if let Some(k) = &mac_key {
                // blake3::Hash compares in constant time.
                let given = r.mac.as_deref().and_then(|m| blake3::Hash::from_hex(m).ok());
                if given != Some(reader_mac(k, r.serial, &r.recipients)) {
                    refused.push(format!("{} (no valid reader MAC: not written by a reader)", o.name));
                    continue;
                }
            } else if best.is_some() {
                return Err(Error::Refused(format!(
                    "several reader sets under keys/ and this repository's config has no key to tell \
                     which a reader wrote: remove the one a writer planted, or give the readers \
                     again with rekey -r ({})",
                    names.join(", ")
                )));
            }
            if best.as_ref().is_none_or(|b| r.serial > b.serial) {
                best = Some(r);
            }
        }
        let best = best.ok_or_else(|| match refused.is_empty() {
            true => Error::NotFound("the repository has no keys/ object".into()),
            false => Error::Refused(format!("no reader set a reader wrote: {}", refused.join(", "))),
        })?;
        Ok((best.recipients, best.serial, names))
    }

    /// The config's reader MAC key, where it has one.
    pub(crate) fn reader_key(&self) -> Result<Option<Zeroizing<[u8; 32]>>> {
        Ok(match &self.config.reader_key {
            Some(k) => Some(Zeroizing::new(hex32(k)?)),
            None => None,
        })
    }

    /// Every `keys/` object's name and the highest serial among those that open, trusted or
    /// not: a rekey gives the whole new set, stores it above them all and deletes them all.
    pub(crate) fn keys_objects(&self) -> Result<(u64, Vec<String>)> {
        let (mut serial, mut names) = (0, Vec::new());
        for o in self.store.list("keys/")? {
            let opened = object::open(self.store, &o.name, self.ids, MAX_CONFIG).and_then(|b| {
                serde_json::from_slice::<Recipients>(&b).map_err(|e| crate::error::format(e.to_string()))
            });
            if let Ok(r) = passable(opened)? {
                serial = serial.max(r.serial);
            }
            names.push(o.name);
        }
        Ok((serial, names))
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
