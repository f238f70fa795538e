//! Snapshots as readers see them: listed by name, opened one at a time, the tree dropped
//! unless asked for. A snapshot object is input like any other (anyone with the recipients can
//! store one), so one that does not open is named and passed over, never the end of a verb;
//! and a selector resolves by name before anything is opened, so `restore <id>` opens one.

use serde::de::IgnoredAny;
use serde::Deserialize;

use crate::error::{Error, Result};
use crate::format::snapshot::Snapshot;
use crate::format::MAX_SNAPSHOT;
use crate::object;
use crate::repo::{passable, Reader, Skipped};

/// A snapshot and its id (the object's name under `snapshots/`).
#[derive(Clone, Debug)]
pub struct SnapshotInfo {
    /// 32 hex digits.
    pub id: String,
    /// The snapshot; in a listing ([`Reader::snapshots`]) its `entries` are left empty.
    pub snapshot: Snapshot,
}

/// Every snapshot that opened, oldest first, and the objects passed over.
#[derive(Clone, Debug, Default)]
pub struct Snapshots {
    /// The snapshots, their trees left out.
    pub list: Vec<SnapshotInfo>,
    /// Snapshot objects that did not open or decode.
    pub skipped: Vec<Skipped>,
}

/// A snapshot's JSON without its tree: the tree is parsed past, never held.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Head {
    version: u32,
    time: i64,
    #[serde(default)]
    nanos: u32,
    host: String,
    run: String,
    paths: Vec<String>,
    #[serde(default)]
    tags: Vec<String>,
    #[allow(dead_code)]
    entries: IgnoredAny,
}

fn head(b: &[u8]) -> Result<Snapshot> {
    let h: Head = serde_json::from_slice(b).map_err(|e| crate::error::format(format!("snapshot: {e}")))?;
    if h.version != 1 {
        return Err(crate::error::format(format!("snapshot version {} is not supported", h.version)));
    }
    let Head { version, time, nanos, host, run, paths, tags, .. } = h;
    Ok(Snapshot { version, time, nanos, host, run, paths, tags, entries: Vec::new() })
}

impl Reader<'_> {
    /// The names under `snapshots/`, sorted (no object opened).
    pub(crate) fn snapshot_ids(&self) -> Result<Vec<String>> {
        let mut ids: Vec<String> = self
            .store
            .list("snapshots/")?
            .into_iter()
            .map(|o| o.name["snapshots/".len()..].to_string())
            .collect();
        ids.sort();
        Ok(ids)
    }

    /// Opens one snapshot, tree and all.
    pub fn load(&self, id: &str) -> Result<SnapshotInfo> {
        let json = object::open(self.store, &format!("snapshots/{id}"), self.ids, MAX_SNAPSHOT)?;
        Ok(SnapshotInfo { id: id.to_string(), snapshot: Snapshot::decode(&json)? })
    }

    /// Every snapshot without its tree, oldest first; those that do not open are named apart.
    /// One snapshot's plaintext is held at a time.
    pub fn snapshots(&self) -> Result<Snapshots> {
        let mut out = Snapshots::default();
        for id in self.snapshot_ids()? {
            let name = format!("snapshots/{id}");
            let opened = object::open(self.store, &name, self.ids, MAX_SNAPSHOT).and_then(|b| head(&b));
            match passable(opened)? {
                Ok(snapshot) => out.list.push(SnapshotInfo { id, snapshot }),
                Err(why) => out.skipped.push(Skipped { name, why }),
            }
        }
        out.list.sort_by(|a, b| {
            (a.snapshot.time, a.snapshot.nanos, &a.id).cmp(&(b.snapshot.time, b.snapshot.nanos, &b.id))
        });
        Ok(out)
    }

    /// Calls `f` with each snapshot whole, one at a time (never two trees in memory); returns
    /// the objects passed over.
    pub(crate) fn for_each_snapshot(
        &self,
        mut f: impl FnMut(SnapshotInfo) -> Result<()>,
    ) -> Result<Vec<Skipped>> {
        let mut skipped = Vec::new();
        for id in self.snapshot_ids()? {
            match passable(self.load(&id))? {
                Ok(s) => f(s)?,
                Err(why) => skipped.push(Skipped { name: format!("snapshots/{id}"), why }),
            }
        }
        Ok(skipped)
    }

    /// The snapshot `sel` names, whole: `latest`, an id, or a unique prefix of one. An id is
    /// resolved by name first, so only that object is opened, and only its failing fails.
    pub fn find(&self, sel: &str) -> Result<SnapshotInfo> {
        if sel == "latest" {
            let last = self.snapshots()?.list.pop();
            return match last {
                Some(s) => self.load(&s.id),
                None => Err(Error::NotFound("the repository has no snapshot that opens".into())),
            };
        }
        let hits: Vec<String> = match sel.is_empty() {
            true => Vec::new(),
            false => self.snapshot_ids()?.into_iter().filter(|id| id.starts_with(sel)).collect(),
        };
        match hits.len() {
            1 => self.load(&hits[0]),
            0 => Err(Error::NotFound(format!("no snapshot {sel:?}"))),
            n => Err(Error::NotFound(format!("{n} snapshots start with {sel:?}: give more digits"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::snapshot::Entry;

    #[test]
    fn a_listing_keeps_the_head_and_drops_the_tree() {
        let s = Snapshot {
            version: 1,
            time: 5,
            nanos: 6,
            host: "h".into(),
            run: "r".into(),
            paths: vec!["p".into()],
            tags: Vec::new(),
            entries: vec![Entry::Dir { path: "p".into(), mode: 0o755, mtime: 1 }],
        };
        let h = head(&s.encode()).unwrap();
        assert_eq!((h.time, h.nanos, h.host.as_str(), h.entries.len()), (5, 6, "h", 0));
        let text = String::from_utf8(s.encode()).unwrap();
        assert!(head(text.replace("\"host\"", "\"more\":1,\"host\"").as_bytes()).is_err());
        assert!(head(text.replace("\"version\":1", "\"version\":2").as_bytes()).is_err());
    }
}
