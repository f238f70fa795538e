//! A snapshot (`snapshots/NAME`, an age file of JSON): when, where from, and the tree as a
//! flat list of entries, every folder before what it holds. Paths are relative, `/`-separated
//! UTF-8; a restore checks each one (see `restore`), since a snapshot is input like any other.

use serde::{Deserialize, Serialize};

use crate::error::{format, Result};

/// The snapshot object's JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    /// Format version: 1.
    pub version: u32,
    /// Seconds since the Unix epoch when the backup started.
    pub time: i64,
    /// Nanoseconds past `time`: orders snapshots made within one second.
    #[serde(default)]
    pub nanos: u32,
    /// The host name the writer gave.
    pub host: String,
    /// The writer's run (its `runs/NAME` mark): a prune knows from it that the run finished.
    pub run: String,
    /// The paths backed up, as given.
    pub paths: Vec<String>,
    /// Labels the writer gave (`--tag`), for `forget` and `snapshots` to select by. Left out
    /// of the JSON when empty, so a snapshot without tags reads as it did before tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The tree.
    pub entries: Vec<Entry>,
}

/// One name in the tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum Entry {
    /// A folder.
    Dir {
        /// Relative path.
        path: String,
        /// Permission bits (`st_mode & 0o7777`).
        mode: u32,
        /// Modification time, seconds since the epoch.
        mtime: i64,
    },
    /// A regular file: its content is its chunks' plaintexts in order.
    File {
        /// Relative path.
        path: String,
        /// Permission bits.
        mode: u32,
        /// Modification time, seconds since the epoch.
        mtime: i64,
        /// Length in bytes (the sum of its chunks').
        size: u64,
        /// Chunk ids, 64 hex digits each.
        chunks: Vec<String>,
    },
    /// A symbolic link, stored as its target text (never followed).
    Symlink {
        /// Relative path.
        path: String,
        /// The link's target, as read.
        target: String,
    },
    /// Another name of a file listed earlier in this snapshot.
    Hardlink {
        /// Relative path.
        path: String,
        /// The earlier file entry's path.
        target: String,
    },
}

impl Entry {
    /// The entry's path.
    pub fn path(&self) -> &str {
        match self {
            Entry::Dir { path, .. }
            | Entry::File { path, .. }
            | Entry::Symlink { path, .. }
            | Entry::Hardlink { path, .. } => path,
        }
    }
}

impl Snapshot {
    /// Reads the JSON (its length was bounded by the caller).
    pub fn decode(b: &[u8]) -> Result<Snapshot> {
        let s: Snapshot = serde_json::from_slice(b).map_err(|e| format(format!("snapshot: {e}")))?;
        if s.version != 1 {
            return Err(format(format!("snapshot version {} is not supported", s.version)));
        }
        Ok(s)
    }

    /// The JSON.
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a snapshot always serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_round_trips_and_unknown_entries_are_refused() {
        let s = Snapshot {
            version: 1,
            time: 5,
            nanos: 6,
            host: "h".into(),
            run: "r".into(),
            paths: vec!["p".into()],
            tags: vec!["t".into()],
            entries: vec![
                Entry::Dir { path: "p".into(), mode: 0o755, mtime: 1 },
                Entry::Symlink { path: "p/l".into(), target: "x".into() },
            ],
        };
        assert_eq!(Snapshot::decode(&s.encode()).unwrap(), s);
        let text = String::from_utf8(s.encode()).unwrap();
        assert!(Snapshot::decode(text.replace("symlink", "device").as_bytes()).is_err());
        assert!(Snapshot::decode(text.replace("\"version\":1", "\"version\":2").as_bytes()).is_err());
        assert!(Snapshot::decode(text.replace("\"host\"", "\"extra\":0,\"host\"").as_bytes()).is_err());
    }
}
