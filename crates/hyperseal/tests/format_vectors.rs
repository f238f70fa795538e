//! Decrypts every test vector published in docs/FORMAT.md, so the spec and the code cannot drift.

use hyperseal::recipient::parse_identities;

fn blocks<'a>(doc: &'a str, kind: &str) -> Vec<&'a str> {
    let fence = format!("```{kind}\n");
    doc.match_indices(&fence)
        .map(|(i, _)| {
            let start = i + fence.len();
            let end = doc[start..].find("```").expect("closed block") + start;
            &doc[start..end]
        })
        .collect()
}

#[test]
fn spec_vectors_decrypt() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/FORMAT.md")).unwrap();
    let (ids, pts, files) = (blocks(&doc, "identity"), blocks(&doc, "plaintext"), blocks(&doc, "file"));
    assert!(ids.len() >= 3 && ids.len() == pts.len() && pts.len() == files.len());
    for ((id, pt), file) in ids.iter().zip(&pts).zip(&files) {
        let identities = parse_identities(id).unwrap();
        let out = hyperseal::decrypt(&identities, file.as_bytes()).unwrap();
        assert_eq!(out, pt.as_bytes());
        // And a one-byte change to the armored body is caught.
        let mut bad = file.to_string();
        let at = bad.len() / 2;
        let c = if &bad[at..at + 1] == "A" { "B" } else { "A" };
        bad.replace_range(at..at + 1, c);
        assert!(hyperseal::decrypt(&identities, bad.as_bytes()).is_err());
    }
}
