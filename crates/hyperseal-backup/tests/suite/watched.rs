//! A local store whose calls a test watches: the tests that count what a restore reads, record
//! what a backup calls, or kill a backup at its k-th write all need every `Store` call passed
//! down unchanged, so that forwarding is written once here and each test says only what it
//! watches.

use std::io;

use hyperseal::recipient::Identity;
use hyperseal::rekey::{Change, Report};
use hyperseal_backup::{LocalStore, ObjectInfo, ReadSeek, Store};

/// What a test does as a call goes by. Each method defaults to doing nothing.
pub trait Watch: Send + Sync {
    /// Before the call `op` (`put`, `get`, `open`, `list`, `delete`, `rekey`) on `name` reaches
    /// the local store; `bytes` is what a `put` writes.
    fn before(&self, _op: &str, _name: &str, _bytes: &[u8], _inner: &LocalStore) {}

    /// The reader an `open` of `name` returns, in place of the local store's.
    fn opened(&self, _name: &str, reader: Box<dyn ReadSeek>) -> Box<dyn ReadSeek> {
        reader
    }
}

/// A local store with a [`Watch`] on every call.
pub struct Watched<W> {
    pub inner: LocalStore,
    pub watch: W,
}

impl<W: Watch> Store for Watched<W> {
    fn put_new(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.watch.before("put", name, bytes, &self.inner);
        self.inner.put_new(name, bytes)
    }
    fn get(&self, name: &str, limit: u64) -> io::Result<Vec<u8>> {
        self.watch.before("get", name, &[], &self.inner);
        self.inner.get(name, limit)
    }
    fn open(&self, name: &str) -> io::Result<Box<dyn ReadSeek>> {
        self.watch.before("open", name, &[], &self.inner);
        Ok(self.watch.opened(name, self.inner.open(name)?))
    }
    fn list(&self, folder: &str) -> io::Result<Vec<ObjectInfo>> {
        self.watch.before("list", folder, &[], &self.inner);
        self.inner.list(folder)
    }
    fn delete(&self, name: &str) -> io::Result<()> {
        self.watch.before("delete", name, &[], &self.inner);
        self.inner.delete(name)
    }
    fn rekey(
        &self,
        name: &str,
        ids: &[Box<dyn Identity>],
        change: &Change,
        dry: bool,
    ) -> hyperseal_backup::Result<Report> {
        self.watch.before("rekey", name, &[], &self.inner);
        self.inner.rekey(name, ids, change, dry)
    }
}
