//! `encrypt` never writes what `decrypt` refuses: many recipients, the same key named again and
//! again, keys whose stanzas are large. Past the reader's budget the run fails before a byte is
//! written, in one line that names the limit and the count.

use std::fs;
use std::path::Path;

use crate::common;
use common::{hs, ok, peer};
use hyperseal::{limits, recipient, Kind};

/// `n` fresh keys of `kind`: (identities file of the last one, recipients file of all `n`).
fn keys(dir: &Path, kind: Kind, n: usize) -> (String, String) {
    let mut publics = String::new();
    let mut last = None;
    for _ in 0..n {
        let k = recipient::generate(kind).unwrap();
        publics.push_str(&k.public);
        publics.push('\n');
        last = Some(k);
    }
    let id = dir.join("last.key");
    fs::write(&id, last.unwrap().secret.as_bytes()).unwrap();
    let rec = dir.join("recipients.txt");
    fs::write(&rec, publics).unwrap();
    (id.to_str().unwrap().into(), rec.to_str().unwrap().into())
}

fn stanzas(file: &Path) -> usize {
    let bytes = fs::read(file).unwrap();
    hyperseal::format::Header::read_from(&mut &bytes[..]).unwrap().stanzas.len()
}

#[test]
fn one_key_named_600_times_is_one_stanza() {
    let d = tempfile::tempdir().unwrap();
    let (id, rec) = keys(d.path(), Kind::X25519, 1);
    let public = fs::read_to_string(&rec).unwrap();
    fs::write(&rec, public.repeat(600)).unwrap();
    let out = d.path().join("x.hs");
    let o = out.to_str().unwrap();
    ok(&hs(&["encrypt", "-R", &rec, "-r", public.trim(), "-o", o], Some(b"once")));
    assert_eq!(stanzas(&out), 1);
    assert_eq!(ok(&hs(&["decrypt", "-i", &id, o], None)), "once");
}

/// 600 ML-KEM-1024 recipients made a 1.3 MB header that `decrypt` refused; the ceiling was about
/// 475. Now such a header is within the budget, and the budget's edge is refused up front.
#[test]
fn large_post_quantum_headers_are_written_only_when_readable() {
    let d = tempfile::tempdir().unwrap();
    let (id, rec) = keys(d.path(), Kind::Mlkem1024, 600);
    let out = d.path().join("pq.hs");
    let o = out.to_str().unwrap();
    ok(&hs(&["encrypt", "-R", &rec, "-o", o], Some(b"six hundred")));
    assert!(fs::metadata(&out).unwrap().len() > 1 << 20);
    assert_eq!(ok(&hs(&["decrypt", "-i", &id, o], None)), "six hundred");

    // Past 8 MiB of header: refused, one line naming the limit and the count, nothing at -o.
    // (Four recipients files: 4000 of these keys are more than one file's 4 MiB budget.)
    let big = d.path().join("big.hs");
    let mut args = vec!["encrypt".to_string(), "-o".into(), big.to_str().unwrap().into()];
    for i in 0..4 {
        let (_, rec) = keys(d.path(), Kind::Mlkem1024, 1000);
        let part = d.path().join(format!("part{i}.txt"));
        fs::rename(&rec, &part).unwrap();
        args.extend(["-R".to_string(), part.to_str().unwrap().into()]);
    }
    let r = hs(&args.iter().map(String::as_str).collect::<Vec<_>>(), Some(b"lost?"));
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.starts_with("hyperseal: error: input too large: the header would not be readable: 4000 recipient stanzas make "), "{err}");
    assert!(err.lines().next().unwrap().contains("more than the 8 MiB a reader accepts"), "{err}");
    assert!(err.contains("hint: encrypt to fewer recipients"), "{err}");
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(!big.exists());
}

/// 4097 X25519 recipients were written in both formats and refused by `decrypt`. The reader now
/// takes up to 16,384 stanzas, and one more is refused before anything is written.
#[test]
fn stanza_count_edge_in_both_formats() {
    let d = tempfile::tempdir().unwrap();
    let (id, rec) = keys(d.path(), Kind::X25519, 4097);
    for format in ["hyperseal", "age"] {
        let out = d.path().join(format!("many.{format}"));
        let o = out.to_str().unwrap();
        ok(&hs(&["encrypt", "--format", format, "-R", &rec, "-o", o], Some(b"many")));
        assert_eq!(stanzas(&out), 4097);
        assert_eq!(ok(&hs(&["decrypt", "-i", &id, o], None)), "many");
        if format == "age" {
            assert_eq!(ok(&hs(&["age", "-d", "-i", &id, o], None)), "many");
            if let Some(age) = peer("age") {
                let real = std::process::Command::new(age).args(["-d", "-i", &id, o]).output().unwrap();
                assert_eq!(real.stdout, b"many", "{}", String::from_utf8_lossy(&real.stderr));
            }
        }
    }
    let (_, rec) = keys(d.path(), Kind::X25519, limits::STANZAS + 1);
    let out = d.path().join("too-many.hs");
    let r = hs(&["encrypt", "-R", &rec, "-o", out.to_str().unwrap()], Some(b"x"));
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains(&format!(
            "{} recipient stanzas, more than the {} a reader accepts",
            limits::STANZAS + 1,
            limits::STANZAS
        )),
        "{err}"
    );
    assert!(!out.exists());
}
