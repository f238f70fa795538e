//! What the tests share: keys, a repository in a temporary folder, a tree with every kind of
//! entry, a comparison of two trees, and a store whose calls a test watches.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use hyperseal::recipient::{self, Identity};
use hyperseal::rekey::{Change, Report};
use hyperseal::Kind;
use hyperseal_backup::{
    BackupOptions, BackupSummary, LocalStore, ObjectInfo, ReadSeek, Reader, Source, Store, WriterKey,
};

pub struct Key {
    pub public: String,
    pub secret: String,
}

impl Key {
    pub fn new(kind: Kind) -> Key {
        let k = recipient::generate(kind).unwrap();
        Key { public: k.public.to_string(), secret: k.secret.to_string() }
    }

    pub fn identities(&self) -> Vec<Box<dyn Identity>> {
        recipient::parse_identities(&self.secret).unwrap()
    }
}

/// A repository with its reader key, writer key and a scratch folder.
pub struct Repo {
    pub dir: tempfile::TempDir,
    pub store: LocalStore,
    pub reader: Key,
    pub writer: WriterKey,
    /// The first reader's identities, parsed once: most tests open the repository as it.
    ids: Vec<Box<dyn Identity>>,
    /// Each backup's time: a second after the last, so "latest" is well defined.
    clock: std::sync::atomic::AtomicI64,
}

impl Repo {
    /// A repository for a post-quantum reader (and `extra` readers).
    pub fn new(extra: &[&Key]) -> Repo {
        Repo::with_reader(Kind::Hybrid, extra)
    }

    /// A repository whose first reader is of `kind`.
    pub fn with_reader(kind: Kind, extra: &[&Key]) -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalStore::new(dir.path().join("repo"));
        let reader = Key::new(kind);
        let mut list = vec![reader.public.clone()];
        list.extend(extra.iter().map(|k| k.public.clone()));
        let writer = hyperseal_backup::init(&store, &list).unwrap();
        let ids = reader.identities();
        Repo { dir, store, reader, writer, ids, clock: 1_700_000_000.into() }
    }

    /// A repository for a post-quantum reader, and [`make_tree`]'s tree in its folder `src`.
    pub fn with_tree() -> (Repo, PathBuf) {
        let repo = Repo::new(&[]);
        let src = repo.path("src");
        make_tree(&src);
        (repo, src)
    }

    /// [`Repo::with_tree`], backed up once.
    pub fn backed_up() -> (Repo, PathBuf) {
        let (repo, src) = Repo::with_tree();
        repo.backup(&[&src]);
        (repo, src)
    }

    /// The repository opened as its first reader.
    pub fn open(&self) -> Reader<'_> {
        Reader::open(&self.store, &self.ids).unwrap()
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Backs `paths` up with small packs, so that a small tree makes several.
    pub fn backup(&self, paths: &[&Path]) -> BackupSummary {
        let time = self.clock.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.backup_with(paths, &BackupOptions { time, ..small() }).unwrap()
    }

    pub fn backup_with(
        &self,
        paths: &[&Path],
        opts: &BackupOptions<'_>,
    ) -> hyperseal_backup::Result<BackupSummary> {
        let src = Source::Paths(paths.iter().map(|p| p.to_path_buf()).collect());
        hyperseal_backup::backup(&self.store, &self.writer, src, opts)
    }

    /// Every object name in the repository, relative to it.
    pub fn objects(&self) -> Vec<String> {
        let root = self.store.root();
        let mut out = Vec::new();
        for d in fs::read_dir(root).unwrap() {
            let d = d.unwrap().path();
            if d.is_file() {
                out.push(d.file_name().unwrap().to_str().unwrap().to_string());
                continue;
            }
            for f in fs::read_dir(&d).unwrap() {
                let f = f.unwrap().path();
                out.push(f.strip_prefix(root).unwrap().to_str().unwrap().to_string());
            }
        }
        out.sort();
        out
    }

    /// Makes every run mark look `secs` older to the store (prune ages marks by the store's
    /// times, as a day passing would).
    pub fn age_marks(&self, secs: u64) {
        for name in self.objects().into_iter().filter(|n| n.starts_with("runs/")) {
            let f = fs::File::options().write(true).open(self.store.root().join(&name)).unwrap();
            let t = f.metadata().unwrap().modified().unwrap() - std::time::Duration::from_secs(secs);
            f.set_modified(t).unwrap();
        }
    }

    /// The objects that are age files (all but id lists and marks).
    pub fn age_objects(&self) -> Vec<String> {
        self.objects()
            .into_iter()
            .filter(|n| {
                !n.ends_with(".ids") && !["runs/", "locks/", "repo/"].iter().any(|p| n.starts_with(p))
            })
            .collect()
    }
}

/// Options with 1 MiB packs and a fixed clock.
pub fn small() -> BackupOptions<'static> {
    BackupOptions { host: "test".into(), time: 1_700_000_000, pack_size: 1 << 20, ..BackupOptions::default() }
}

/// Deterministic bytes (xorshift), incompressible enough to make real chunks.
pub fn noise(mut state: u64, n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n + 8);
    while out.len() < n {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.extend_from_slice(&state.to_le_bytes());
    }
    out.truncate(n);
    out
}

/// A tree with folders, files of several sizes (one of several chunks), an empty file, links
/// of both kinds and modes.
pub fn make_tree(root: &Path) {
    fs::create_dir_all(root.join("docs/deep/er")).unwrap();
    fs::create_dir_all(root.join("empty-dir")).unwrap();
    fs::write(root.join("readme.txt"), "hello backups\n".repeat(100)).unwrap();
    fs::write(root.join("docs/big.bin"), noise(1, 3 << 20)).unwrap();
    fs::write(root.join("docs/deep/er/mid.bin"), noise(2, 700 << 10)).unwrap();
    fs::write(root.join("docs/empty"), b"").unwrap();
    fs::write(root.join("script.sh"), "#!/bin/sh\necho hi\n").unwrap();
    fs::set_permissions(root.join("script.sh"), fs::Permissions::from_mode(0o750)).unwrap();
    std::os::unix::fs::symlink("docs/big.bin", root.join("link-rel")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", root.join("link-abs")).unwrap();
    fs::hard_link(root.join("docs/deep/er/mid.bin"), root.join("hard-twin")).unwrap();
}

/// What a tree holds, by relative path: kind, content or target, mode; and which paths share
/// an inode (hard links).
pub fn describe(root: &Path) -> (Vec<(String, String)>, Vec<Vec<String>>) {
    let mut out = Vec::new();
    let mut inodes: HashMap<u64, Vec<String>> = HashMap::new();
    walk(root, root, &mut out, &mut inodes);
    out.sort();
    let mut links: Vec<Vec<String>> = inodes.into_values().filter(|v| v.len() > 1).collect();
    links.iter_mut().for_each(|v| v.sort());
    links.sort();
    (out, links)
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>, inodes: &mut HashMap<u64, Vec<String>>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let rel = p.strip_prefix(root).unwrap().to_str().unwrap().to_string();
        let m = fs::symlink_metadata(&p).unwrap();
        let what = if m.file_type().is_symlink() {
            format!("link {}", fs::read_link(&p).unwrap().display())
        } else if m.is_dir() {
            walk(root, &p, out, inodes);
            format!("dir {:o}", m.mode() & 0o7777)
        } else {
            inodes.entry(m.ino()).or_default().push(rel.clone());
            let h = blake3::hash(&fs::read(&p).unwrap());
            format!("file {:o} {} {}", m.mode() & 0o7777, m.len(), h)
        };
        out.push((rel, what));
    }
}

// A local store whose calls a test watches: the tests that count what a restore reads, record
// what a backup calls, or kill a backup at its k-th write all need every `Store` call passed
// down unchanged, so that forwarding is written once here and each test says only what it
// watches.

/// What a test does as a call goes by. Each method defaults to doing nothing.
pub trait Watch: Send + Sync {
    /// Before the call `op` (`put`, `get`, `open`, `list`, `delete`, `rekey`) on `name` reaches
    /// the local store; `bytes` is what a `put` writes.
    fn before(&self, _op: &str, _name: &str, _bytes: &[u8], _inner: &LocalStore) {}

    /// The reader an `open` of `name` returns, in place of the local store's.
    fn opened(&self, _name: &str, reader: Box<dyn ReadSeek>) -> Box<dyn ReadSeek> {
        reader
    }

    /// What a `list` of `folder` returns, in place of the local store's listing (after it).
    fn listed(&self, _folder: &str, list: Vec<ObjectInfo>) -> Vec<ObjectInfo> {
        list
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
        Ok(self.watch.listed(folder, self.inner.list(folder)?))
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
