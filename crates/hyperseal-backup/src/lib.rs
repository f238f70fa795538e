//! Deduplicated backups that a host can write but never read: every object in the repository
//! is a plain age v1 file to the repository's recipients, and the writer holds no identity.
//!
//! The byte layout of every object is specified in `docs/BACKUP.md`. In short:
//! - `config`: the repository's parameters and its deduplication key (age, JSON);
//! - `data/NAME`: a pack, the concatenation of zstd-compressed chunks (age), and
//!   `data/NAME.ids` beside it: its chunk ids and their places, in the clear;
//! - `index/NAME` (age) and `index/NAME.ids` (clear): the same table for several packs;
//! - `snapshots/NAME`: the tree (age, JSON);
//! - `keys/NAME`: the reader set's recipients (age, JSON), for a prune's new index;
//! - `runs/NAME`: a writer's start mark; `locks/prune`: the prune lock.
//!
//! A repository lives in a local folder ([`LocalStore`]) or under an S3 prefix ([`S3Store`]).
//!
//! The library prints nothing and reads no environment; the CLI does both.
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod backup;
mod check;
mod error;
mod forget;
pub mod format;
mod keys;
mod listing;
mod names;
mod object;
mod prune;
mod rekey;
mod repair;
mod repo;
mod restore;
mod s3;
mod serve;
mod ssh;
mod store;
mod sys;

pub use backup::{backup, BackupOptions, BackupSummary, Progress, Source};
pub use check::{check, CheckReport};
pub use error::{Error, Result};
pub use forget::{
    forget, forget_with, tag_list, Filter, ForgetGroup, ForgetOptions, ForgetReport, GroupBy, Keep, Within,
};
pub use format::snapshot::{Entry, Snapshot};
pub use hyperseal::recipient::plugin::Plugins;
pub use keys::{ChunkId, WriterKey};
pub use listing::{SnapshotInfo, Snapshots};
pub use prune::{prune, prune_ready, running, unlock, PruneOptions, PruneReport};
pub use rekey::{rekey, RekeyReport};
pub use repair::{repair_index, RepairReport};
pub use repo::{init, init_with, Index, Reader, Skipped};
pub use restore::{restore, RestoreOptions, RestoreSummary};
pub use s3::{S3Config, S3Store};
pub use serve::{serve, ServeOptions};
pub use ssh::{ssh_command, SshStore};
pub use store::{LocalStore, ObjectInfo, ReadSeek, Store};
