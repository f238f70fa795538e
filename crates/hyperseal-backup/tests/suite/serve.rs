//! `backup serve` and its client, without ssh: the server runs in a thread on a pair of pipes,
//! as ssh would run it on its standard input and output. Every request round-trips; an
//! append-only server refuses, by itself, all that a writer never does; the quota and the
//! message bound hold; a hung or ended server is named within the deadline; and a backup
//! through an append-only server restores byte for byte through a plain one.

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hyperseal_backup::{restore, serve, Reader, RestoreOptions, ServeOptions, Source, SshStore, Store};

use hyperseal::Kind;

use crate::common::{describe, make_tree, noise, small, Key, Repo};

const NAME: &str = "ssh://backup@test/srv/repo";

/// A server on `root` in a thread, and a client connected to it by two pipes.
fn served(root: &Path, opts: ServeOptions) -> (SshStore, JoinHandle<io::Result<()>>) {
    let (to_server, from_client) = std::io::pipe().unwrap();
    let (to_client, from_server) = std::io::pipe().unwrap();
    let root = root.to_path_buf();
    let server = std::thread::spawn(move || {
        let (mut input, mut output) = (to_server, from_server);
        serve(&root, &mut input, &mut output, &opts)
    });
    let store =
        SshStore::over(Box::new(to_client), Box::new(from_client), NAME, Duration::from_secs(30)).unwrap();
    (store, server)
}

fn append_only() -> ServeOptions {
    ServeOptions { append_only: true, ..ServeOptions::default() }
}

fn kind<T: std::fmt::Debug>(r: io::Result<T>) -> (io::ErrorKind, String) {
    let e = r.unwrap_err();
    (e.kind(), e.to_string())
}

/// Every temporary left in the repository's folders (a put's, half-written or not).
fn temporaries(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for d in std::fs::read_dir(root).unwrap().flatten().filter(|d| d.path().is_dir()) {
        for f in std::fs::read_dir(d.path()).unwrap().flatten() {
            let n = f.file_name().to_string_lossy().to_string();
            if n.starts_with('.') {
                out.push(n);
            }
        }
    }
    out
}

#[test]
fn every_request_round_trips_through_a_plain_server() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _server) = served(dir.path(), ServeOptions::default());
    assert!(!store.append_only());
    // Larger than one frame: the upload and the reads travel in several.
    let big = noise(7, 9 << 20);
    store.put_new("data/big", &big).unwrap();
    store.put_new("data/small.ids", b"ids").unwrap();
    store.put_new("data/empty", b"").unwrap();
    assert_eq!(std::fs::read(dir.path().join("data/big")).unwrap(), big);
    assert_eq!(store.get("data/big", 10 << 20).unwrap(), big);
    assert_eq!(store.get("data/empty", 10).unwrap(), b"");
    let (k, msg) = kind(store.get("data/big", 1 << 20));
    assert_eq!(k, io::ErrorKind::InvalidData, "{msg}");
    let mut r = store.open("data/big").unwrap();
    r.seek(SeekFrom::Start(5 << 20)).unwrap();
    let mut part = vec![0u8; 100_000];
    r.read_exact(&mut part).unwrap();
    assert_eq!(part, big[5 << 20..(5 << 20) + 100_000]);
    assert_eq!(r.seek(SeekFrom::End(0)).unwrap(), big.len() as u64);
    let mut listed: Vec<(String, u64)> =
        store.list("data/").unwrap().into_iter().map(|o| (o.name, o.size)).collect();
    listed.sort();
    assert_eq!(
        listed,
        [("data/big".into(), big.len() as u64), ("data/empty".into(), 0), ("data/small.ids".into(), 3)]
    );
    assert!(store.list("nothing/").unwrap().is_empty());
    // A taken name is refused as taken (prune's lock counts on the kind); nothing replaced.
    assert_eq!(kind(store.put_new("data/small.ids", b"other")).0, io::ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read(dir.path().join("data/small.ids")).unwrap(), b"ids");
    store.delete("data/small.ids").unwrap();
    store.delete("data/small.ids").unwrap();
    assert_eq!(kind(store.get("data/small.ids", 10)).0, io::ErrorKind::NotFound);
    for bad in ["../x", "data/../../x", "/etc/passwd", "data/.tmp-x", "data//x", ""] {
        assert_eq!(kind(store.put_new(bad, b"x")).0, io::ErrorKind::InvalidInput, "{bad}");
    }
    assert!(temporaries(dir.path()).is_empty());
    // A refused request leaves the connection usable.
    assert_eq!(store.get("data/big", 10 << 20).unwrap().len(), big.len());
}

#[test]
fn an_append_only_server_refuses_all_but_a_writer_s_requests() {
    let (repo, _src) = Repo::backed_up();
    let root = repo.store.root().to_path_buf();
    let before = repo.objects();
    let pack = before.iter().find(|n| n.starts_with("data/") && !n.ends_with(".ids")).unwrap().clone();
    let snapshot = before.iter().find(|n| n.starts_with("snapshots/")).unwrap().clone();
    let key = before.iter().find(|n| n.starts_with("keys/")).unwrap().clone();
    let (store, _server) = served(&root, append_only());
    assert!(store.append_only());
    let denied = |r: io::Result<()>, what: &str| {
        let (k, msg) = kind(r);
        assert_eq!(k, io::ErrorKind::PermissionDenied, "{what}: {msg}");
        assert!(msg.starts_with(NAME) && msg.contains("append-only"), "{what}: {msg}");
    };
    // Deletes, and reads of every age object and of the marks.
    for name in [&pack, &snapshot, &key, "config", "locks/prune", "runs/x"] {
        denied(store.delete(name), name);
        denied(store.get(name, 1 << 30).map(drop), name);
        denied(store.open(name).map(drop), name);
    }
    // Puts anywhere but where a writer adds objects.
    for name in ["config", "keys/1-aa", "repo/00", "locks/prune", "data/sub/x", "other/x", "x"] {
        denied(store.put_new(name, b"planted"), name);
    }
    // An overwrite is refused as taken; the object is unchanged.
    let ids = format!("{pack}.ids");
    let old = std::fs::read(root.join(&ids)).unwrap();
    assert_eq!(kind(store.put_new(&ids, b"garbage")).0, io::ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read(root.join(&ids)).unwrap(), old);
    // A re-key (it rewrites) is not offered over the protocol.
    let reader = repo.reader.identities();
    let change = hyperseal::rekey::Change::default();
    assert!(store.rekey(&pack, &reader, &change, false).is_err());
    assert_eq!(repo.objects(), before, "nothing was removed, replaced or added");
    // What a writer does is served: listings, the id lists, new objects.
    assert_eq!(store.get(&ids, 1 << 20).unwrap(), old);
    assert!(!store.list("keys/").unwrap().is_empty());
    store.put_new("runs/0123", b"{}").unwrap();
    // A reader gets nothing through it.
    let opened = Reader::open(&store, &reader).err().expect("the config is not read");
    assert!(opened.to_string().contains("append-only"), "{opened}");
}

#[test]
fn a_put_past_the_quota_is_refused_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    std::fs::write(dir.path().join("data/old"), vec![1u8; 4000]).unwrap();
    let opts = ServeOptions { append_only: true, quota: Some(5000) };
    let (store, _server) = served(dir.path(), opts);
    store.put_new("data/a", &[2u8; 600]).unwrap();
    let (k, msg) = kind(store.put_new("data/b", &[3u8; 600]));
    assert_eq!(k, io::ErrorKind::QuotaExceeded, "{msg}");
    assert!(msg.contains("quota of 5000"), "{msg}");
    assert!(!dir.path().join("data/b").exists());
    store.put_new("data/c", &[4u8; 400]).unwrap();
    assert_eq!(kind(store.put_new("data/d", b"x")).0, io::ErrorKind::QuotaExceeded);
    assert!(temporaries(dir.path()).is_empty());
}

/// A frame whose length says more than the bound: answered with an error and the connection
/// ended at once, its body never sent (a server that waited for it would hang here).
#[test]
fn an_oversized_message_is_refused_before_its_body_is_read() {
    for after_hello in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let (to_server, mut from_client) = std::io::pipe().unwrap();
        let (mut to_client, from_server) = std::io::pipe().unwrap();
        let root = dir.path().to_path_buf();
        let server = std::thread::spawn(move || {
            let (mut input, mut output) = (to_server, from_server);
            serve(&root, &mut input, &mut output, &append_only())
        });
        let frame = |w: &mut std::io::PipeWriter, body: &[u8]| {
            w.write_all(&(body.len() as u32).to_be_bytes()).unwrap();
            w.write_all(body).unwrap();
        };
        let answer = |r: &mut std::io::PipeReader| {
            let mut len = [0u8; 4];
            r.read_exact(&mut len).unwrap();
            let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
            r.read_exact(&mut body).unwrap();
            body
        };
        if after_hello {
            frame(
                &mut from_client,
                &[b"\x01hyperseal-backup-serve".as_slice(), &1u32.to_be_bytes()].concat(),
            );
            assert_eq!(answer(&mut to_client)[0], 0, "hello answered");
        }
        from_client.write_all(&0xffff_fff0u32.to_be_bytes()).unwrap();
        let refused = answer(&mut to_client);
        assert_eq!(refused[0], 1, "an error answer");
        let text = String::from_utf8_lossy(&refused);
        assert!(text.contains("over the protocol's bound"), "{text}");
        let until = Instant::now() + Duration::from_secs(10);
        while !server.is_finished() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(server.is_finished(), "the server waits for a body it refused");
        assert!(server.join().unwrap().is_err());
        drop(from_client);
    }
}

#[test]
fn a_server_that_hangs_or_ends_is_named_within_the_deadline() {
    // Hangs: the pipes stay open and nobody answers.
    let (to_server, from_client) = std::io::pipe().unwrap();
    let (to_client, from_server) = std::io::pipe().unwrap();
    let start = Instant::now();
    let hung = SshStore::over(Box::new(to_client), Box::new(from_client), NAME, Duration::from_secs(1));
    let e = hung.err().expect("no answer, no store");
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    assert_eq!(e.kind(), io::ErrorKind::TimedOut);
    assert!(e.to_string().starts_with(NAME) && e.to_string().contains("did not answer"), "{e}");
    drop((to_server, from_server));
    // Ends: the server side closes without a word.
    let (to_server, from_client) = std::io::pipe().unwrap();
    let (to_client, from_server) = std::io::pipe().unwrap();
    drop((to_server, from_server));
    let e = SshStore::over(Box::new(to_client), Box::new(from_client), NAME, Duration::from_secs(5))
        .err()
        .unwrap();
    assert!(e.to_string().starts_with(NAME) && e.to_string().contains("ended the connection"), "{e}");
}

#[test]
fn a_backup_through_an_append_only_server_restores_byte_for_byte_through_a_plain_one() {
    let (repo, src) = Repo::with_tree();
    let root = repo.store.root().to_path_buf();
    let (writer, _w) = served(&root, append_only());
    let source = || Source::Paths(vec![src.clone()]);
    let first = hyperseal_backup::backup(&writer, &repo.writer, source(), &small()).unwrap();
    assert!(first.packs >= 2, "{first:?}");
    // The second run deduplicates through the id lists the server lets it read.
    let opts = hyperseal_backup::BackupOptions { time: 1_700_000_100, ..small() };
    let second = hyperseal_backup::backup(&writer, &repo.writer, source(), &opts).unwrap();
    assert_eq!(second.chunks_new, 0, "{second:?}");
    drop(writer);
    let (plain, _r) = served(&root, ServeOptions::default());
    let ids = repo.reader.identities();
    let reader = Reader::open(&plain, &ids).unwrap();
    let snap = reader.find(&first.snapshot).unwrap();
    let out = repo.path("out");
    restore(&reader, &snap.snapshot, &out, &RestoreOptions::default()).unwrap();
    assert_eq!(describe(&src), describe(&out.join("src")));
    let rep = hyperseal_backup::check(&reader, true).unwrap();
    assert!(rep.errors.is_empty(), "{rep:?}");
}

#[test]
fn an_ssh_url_becomes_one_ssh_command_and_an_option_in_disguise_is_refused() {
    let ssh = ["ssh".to_string(), "-i".into(), "/k".into()];
    assert_eq!(
        hyperseal_backup::ssh_command("ssh://bk@host.example:2222/srv/bk/it's", &ssh).unwrap(),
        ["ssh", "-i", "/k", "-p", "2222", "bk@host.example", r"hyperseal backup serve '/srv/bk/it'\''s'"]
    );
    assert_eq!(
        hyperseal_backup::ssh_command("ssh://[::1]/r", &ssh[..1]).unwrap(),
        ["ssh", "::1", "hyperseal backup serve '/r'"]
    );
    for bad in
        ["ssh://-oProxyCommand=x/r", "ssh://-l@h/r", "ssh://h:port/r", "ssh://h", "ssh://h/", "s3://b/p"]
    {
        assert!(hyperseal_backup::ssh_command(bad, &ssh).is_none(), "{bad}");
    }
}

/// A reader's re-key through a plain server: only headers cross; the server puts each new one
/// before the old payload, which stays byte for byte.
#[test]
fn a_rekey_through_a_plain_server_sends_headers_only_and_keeps_every_payload() {
    let leaving = Key::new(Kind::Hybrid);
    let repo = Repo::new(&[&leaving]);
    let src = repo.path("src");
    make_tree(&src);
    repo.backup(&[&src]);
    let payloads = || -> Vec<(String, String)> {
        let mut out: Vec<_> = (repo.age_objects().into_iter().filter(|n| !n.starts_with("keys/")))
            .map(|n| {
                let bytes = std::fs::read(repo.store.root().join(&n)).unwrap();
                let head = hyperseal::Decryptor::from_slice(&bytes).unwrap().header().encode_len();
                (n, blake3::hash(&bytes[head..]).to_hex().to_string())
            })
            .collect();
        out.sort();
        out
    };
    let before = payloads();
    let (plain, _server) = served(repo.store.root(), ServeOptions::default());
    let ids = repo.reader.identities();
    let reader = Reader::open(&plain, &ids).unwrap();
    let keep = vec![repo.reader.public.clone()];
    let done = hyperseal_backup::rekey(&reader, &keep, false, None).unwrap();
    assert!(done.failed.is_empty(), "{:?}", done.failed);
    assert_eq!(done.rewritten as usize, before.len(), "{done:?}");
    assert_eq!(payloads(), before, "no payload byte changed");
    assert!(temporaries(repo.store.root()).is_empty());
    assert!(Reader::open(&repo.store, &leaving.identities()).is_err(), "the removed reader opens nothing");
    let rep = hyperseal_backup::check(&repo.open(), true).unwrap();
    assert!(rep.errors.is_empty(), "{rep:?}");
}
