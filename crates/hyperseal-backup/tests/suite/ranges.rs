//! A one-file restore reads only the byte ranges it needs: a chunk inside a pack is reached
//! through the payload's 64 KiB STREAM chunks, not by reading the pack.

use std::io::{self, Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use hyperseal_backup::{restore, BackupOptions, LocalStore, ReadSeek, Reader, RestoreOptions};

use crate::common::{noise, small, Repo};
use crate::common::{Watch, Watched};

struct Counted {
    inner: Box<dyn ReadSeek>,
    read: Arc<AtomicU64>,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl Seek for Counted {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.inner.seek(to)
    }
}

/// Counts the bytes read from packs.
struct PackBytes(Arc<AtomicU64>);

impl Watch for PackBytes {
    fn opened(&self, name: &str, inner: Box<dyn ReadSeek>) -> Box<dyn ReadSeek> {
        match name.starts_with("data/") {
            true => Box::new(Counted { inner, read: self.0.clone() }),
            false => inner,
        }
    }
}

#[test]
fn a_one_file_restore_reads_little_more_than_that_file() {
    let repo = Repo::new(&[]);
    let src = repo.path("src");
    std::fs::create_dir_all(&src).unwrap();
    // One 16 MiB pack: a large file first, the small one after it.
    std::fs::write(src.join("a-large.bin"), noise(31, 12 << 20)).unwrap();
    let small_file = noise(32, 100 << 10);
    std::fs::write(src.join("b-small.bin"), &small_file).unwrap();
    let opts = BackupOptions { pack_size: 32 << 20, threads: 1, ..small() };
    let sum = repo.backup_with(&[&src], &opts).unwrap();
    assert_eq!(sum.packs, 1);
    let store = Watched { inner: LocalStore::new(repo.store.root()), watch: PackBytes(Arc::default()) };
    let ids = repo.reader.identities();
    let reader = Reader::open(&store, &ids).unwrap();
    let snap = reader.find("latest").unwrap().snapshot;
    let only = RestoreOptions { include: vec!["src/b-small.bin".into()], ..RestoreOptions::default() };
    restore(&reader, &snap, &repo.path("out"), &only).unwrap();
    assert_eq!(std::fs::read(repo.path("out/src/b-small.bin")).unwrap(), small_file);
    let read = store.watch.0.load(Ordering::Relaxed);
    eprintln!(
        "one-file restore: {read} bytes read from a pack of {} bytes",
        std::fs::metadata(
            repo.store.root().join(
                repo.objects().iter().find(|n| n.starts_with("data/") && !n.ends_with(".ids")).unwrap()
            )
        )
        .unwrap()
        .len()
    );
    // Its stored chunk (random data: ~100 KiB), the STREAM chunks around it, the pack's header
    // and its final chunk (a seek authenticates the end first): well under 2× plus a little.
    assert!(read < 2 * (100 << 10) + (256 << 10), "read {read} bytes of a 12 MiB pack");
}
