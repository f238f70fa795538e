//! The index reader on files built here byte by byte (the CLI's tests read indexes real git
//! wrote, and check git's view after a rewrite).

use super::*;

/// An index of `version` holding `paths` (regular files; the second gets extended flags in a
/// version 3 index), with `ext` appended as extensions.
fn build(version: u32, paths: &[&str], ext: &[u8], hash: HashKind) -> Vec<u8> {
    let hl = hash.len();
    let mut b = b"DIRC".to_vec();
    b.extend(version.to_be_bytes());
    b.extend((paths.len() as u32).to_be_bytes());
    for (i, p) in paths.iter().enumerate() {
        let start = b.len();
        for v in [1u32, 2, 3, 4, 5, 6, 0o100644, 1000, 1000, 1234] {
            b.extend(v.to_be_bytes());
        }
        b.extend(std::iter::repeat_n(i as u8 + 0xa0, hl));
        let extended = version == 3 && i == 1;
        let flags = (p.len().min(0xfff) as u16) | if extended { 0x4000 } else { 0 };
        b.extend(flags.to_be_bytes());
        if extended {
            b.extend(0x4000u16.to_be_bytes()); // skip-worktree
        }
        b.extend(p.as_bytes());
        let len = b.len() - start;
        b.extend(std::iter::repeat_n(0u8, ((len + 8) & !7) - len));
    }
    b.extend(ext);
    let sum = hash.digest(&b);
    b.extend(sum);
    b
}

#[test]
fn entries_read_and_stat_data_written_back_with_a_new_checksum() {
    for hash in [HashKind::Sha1, HashKind::Sha256] {
        for version in [2, 3] {
            let long = "d/".repeat(2100) + "f"; // a path past the 12-bit length field
            let tree = [b"TREE".as_slice(), &3u32.to_be_bytes(), b"abc"].concat();
            let bytes = build(version, &["a.env", "secrets/b.env", &long], &tree, hash);
            let mut index = Index::parse(bytes.clone(), hash).unwrap();
            let e = index.entries();
            assert_eq!(e.len(), 3);
            assert_eq!(
                (e[0].path.as_slice(), e[0].mode, e[0].stage, e[0].size),
                (b"a.env".as_slice(), 0o100644, 0, 1234)
            );
            assert_eq!(e[1].skip_worktree, version == 3);
            assert_eq!(e[2].path, long.as_bytes());
            assert_eq!(e[1].oid, "a1".repeat(hash.len()));

            let st = Stat { ctime: (10, 11), mtime: (12, 13), dev: 14, ino: 15, uid: 16, gid: 17, size: 18 };
            index.set_stat(1, &st);
            let out = index.to_bytes();
            assert_eq!(out.len(), bytes.len());
            let again = Index::parse(out.clone(), hash).expect("the new checksum verifies");
            assert_eq!(again.entries()[1].size, 18);
            assert_eq!(again.entries()[0].size, 1234, "other entries keep theirs");
            let at = again.entries()[1].at;
            let word = |k: usize| be32(&out, at + 4 * k);
            assert_eq!((0..10).map(word).collect::<Vec<_>>(), [10, 11, 12, 13, 14, 15, 0o100644, 16, 17, 18]);
            // Only the stat data and the checksum changed.
            let body = bytes.len() - hash.len();
            let differ: Vec<usize> = (0..body).filter(|&i| bytes[i] != out[i]).collect();
            assert!(differ.iter().all(|&i| (at..at + 40).contains(&i)), "{differ:?}");
        }
    }
}

#[test]
fn indexes_it_cannot_keep_whole_are_refused() {
    let h = HashKind::Sha1;
    let v4 = build(4, &["a"], b"", h);
    assert!(Index::parse(v4, h).unwrap_err().0.contains("version 4"));
    let link = [b"link".as_slice(), &0u32.to_be_bytes()].concat();
    assert!(Index::parse(build(2, &["a"], &link, h), h).unwrap_err().0.contains("link"));
    let sdir = [b"sdir".as_slice(), &0u32.to_be_bytes()].concat();
    assert!(Index::parse(build(3, &["a"], &sdir, h), h).is_err());

    let mut damaged = build(2, &["a", "b"], b"", h);
    damaged[20] ^= 1;
    assert!(Index::parse(damaged, h).unwrap_err().0.contains("checksum"));
    // A count the file cannot hold, an entry cut short, an extension running past the end.
    let mut lying = build(2, &["a"], b"", h);
    lying[8..12].copy_from_slice(&1_000_000u32.to_be_bytes());
    let n = lying.len() - 20;
    let sum = h.digest(&lying[..n]);
    lying[n..].copy_from_slice(&sum);
    assert!(Index::parse(lying, h).is_err());
    let ext = [b"TREE".as_slice(), &100u32.to_be_bytes(), b"x"].concat();
    assert!(Index::parse(build(2, &["a"], &ext, h), h).is_err());
    assert!(Index::parse(b"DIRC".to_vec(), h).is_err());
    // The wrong object format: the checksum is read at the wrong place.
    assert!(Index::parse(build(2, &["a"], b"", HashKind::Sha256), h).is_err());
}

#[test]
fn an_index_without_a_checksum_is_read_and_written_without_one() {
    let h = HashKind::Sha1;
    let mut bytes = build(2, &["a"], b"", h);
    let n = bytes.len();
    bytes[n - 20..].fill(0); // index.skipHash
    let mut index = Index::parse(bytes, h).unwrap();
    index.set_stat(0, &Stat { ctime: (1, 1), mtime: (1, 1), dev: 1, ino: 1, uid: 1, gid: 1, size: 1 });
    assert!(index.to_bytes()[n - 20..].iter().all(|&b| b == 0));
}

#[test]
fn blob_ids_are_gits() {
    // `printf 'hello\n' | git hash-object --stdin`, and with --object-format=sha256.
    assert_eq!(blob_id(HashKind::Sha1, b"hello\n"), "ce013625030ba8dba906f756967f9e9ca394464a");
    assert_eq!(
        blob_id(HashKind::Sha256, b"hello\n"),
        "2cf8d83d9ee29543b34a87727421fdecb7e3f3a183d337639025de576db9ebb4"
    );
}

#[test]
fn stat_data_compares_as_git_compares_it() {
    let st = Stat { ctime: (100, 5), mtime: (100, 5), dev: 1, ino: 2, uid: 3, gid: 4, size: 5 };
    let index = (200, 0);
    assert_eq!(st.compare(&st, index), Match::Same);
    assert_eq!(st.compare(&Stat { dev: 9, ..st }, index), Match::Same, "the device is not compared");
    assert_eq!(st.compare(&Stat { size: 6, ..st }, index), Match::Differs);
    assert_eq!(st.compare(&Stat { mtime: (100, 6), ..st }, index), Match::Differs);
    assert_eq!(st.compare(&Stat { ino: 7, ..st }, index), Match::Differs);
    let no_nsec = Stat { ctime: (100, 0), mtime: (100, 0), ..st };
    assert_eq!(no_nsec.compare(&st, index), Match::Same, "a git without nanoseconds recorded none");
    assert_eq!(st.compare(&st, (100, 5)), Match::Racy, "written in the index's own instant");
    assert_eq!(st.compare(&st, (100, 4)), Match::Racy);
    assert_eq!(st.compare(&st, (100, 6)), Match::Same);
}
