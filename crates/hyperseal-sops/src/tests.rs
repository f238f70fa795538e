//! The re-key of each format on files laid out as sops 3.13 writes them (the real sops judges
//! the results in crates/hyperseal-cli/tests/rekey_sops.rs); the JSON reader; refusals.

use super::datakey::{open, wrap};
use super::formats::json::{quote, Json};
use super::formats::{ini, yaml};
use super::model::*;
use super::*;
use hyperseal::recipient::{generate, parse_identities, Kind};
use hyperseal::recipient::{parse_recipient, Identity};
use hyperseal::Error;

struct Key {
    public: String,
    ids: Vec<Box<dyn Identity>>,
}

fn key(kind: Kind) -> Key {
    let k = generate(kind).unwrap();
    Key { public: k.public.clone(), ids: parse_identities(&k.secret).unwrap() }
}

const DATA_KEY: [u8; 32] = [7; 32];

/// A file of one format around the given entries.
type Maker = fn(&[(&Key, String)]) -> String;

fn enc_for(k: &Key) -> String {
    wrap(&DATA_KEY, parse_recipient(&k.public).unwrap()).unwrap()
}

fn indent(enc: &str, by: usize) -> String {
    enc.lines().map(|l| format!("{:by$}{l}\n", "")).collect()
}

fn yaml(entries: &[(&Key, String)]) -> String {
    let mut s =
        String::from("# a comment\npassword: ENC[AES256_GCM,data:x,iv:y,tag:z,type:str]\nsops:\n    age:\n");
    for (k, enc) in entries {
        s.push_str(&format!("        - enc: |\n{}          recipient: {}\n", indent(enc, 12), k.public));
    }
    s.push_str("    lastmodified: \"2026-11-25T21:19:51Z\"\n    mac: ENC[AES256_GCM,data:m]\n    unencrypted_suffix: _unencrypted\n    version: 3.13.3\n");
    s
}

fn json(entries: &[(&Key, String)]) -> String {
    let items: Vec<String> = entries
        .iter()
        .map(|(k, enc)| {
            format!(
                "{{\n\t\t\t\t\"enc\": {},\n\t\t\t\t\"recipient\": {}\n\t\t\t}}",
                quote(enc),
                quote(&k.public)
            )
        })
        .collect();
    format!(
        "{{\n\t\"a\": \"ENC[x]\",\n\t\"sops\": {{\n\t\t\"age\": [\n\t\t\t{}\n\t\t],\n\t\t\"lastmodified\": \"2026-11-25T21:19:51Z\",\n\t\t\"mac\": \"ENC[m]\",\n\t\t\"version\": \"3.13.3\"\n\t}}\n}}\n",
        items.join(",\n\t\t\t")
    )
}

fn flat(entries: &[(&Key, String)], prefix: &str, line: impl Fn(&str, &str) -> String) -> String {
    let mut s = String::new();
    for (i, (k, enc)) in entries.iter().enumerate() {
        s.push_str(&line(&format!("{prefix}age__list_{i}__map_enc"), &enc.replace('\n', "\\n")));
        s.push_str(&line(&format!("{prefix}age__list_{i}__map_recipient"), &k.public));
    }
    for (k, v) in [("lastmodified", "2026-11-25T21:19:51Z"), ("mac", "ENC[m]"), ("version", "3.13.3")] {
        s.push_str(&line(&format!("{prefix}{k}"), v));
    }
    s
}

fn dotenv(entries: &[(&Key, String)]) -> String {
    format!("A=ENC[x]\n#ENC[c]\n{}", flat(entries, "sops_", |k, v| format!("{k}={v}\n")))
}

fn ini(entries: &[(&Key, String)]) -> String {
    format!("[s]\nk = ENC[x]\n\n[sops]\n{}", flat(entries, "", |k, v| format!("{k:<26} = {v}\n")))
}

/// Each format: removing one X25519 recipient and adding a post-quantum one changes the age
/// entries only; the new entry opens to the same data key; the same target again is unchanged.
#[test]
fn every_format_changes_only_its_age_entries() {
    let (a, b, pq) = (key(Kind::X25519), key(Kind::X25519), key(Kind::Hybrid));
    let makers: [(Format, Maker); 4] =
        [(Format::Yaml, yaml), (Format::Json, json), (Format::Dotenv, dotenv), (Format::Ini, ini)];
    for (format, make) in makers {
        let input = make(&[(&a, enc_for(&a)), (&b, enc_for(&b))]);
        let target = Target::Groups(vec![TargetGroup {
            age: vec![a.public.clone(), pq.public.clone()],
            others: None,
        }]);
        let SopsOutcome::Changed { bytes, added, removed } =
            rekey(input.as_bytes(), format, &target, &a.ids, false).unwrap()
        else {
            panic!("{format:?}: unchanged")
        };
        assert_eq!((added, removed), (1, 1), "{format:?}");
        let out = String::from_utf8(bytes).unwrap();
        // The first entry and everything before it, and everything after the list, as they were.
        let same_start = input.bytes().zip(out.bytes()).take_while(|(x, y)| x == y).count();
        let same_end = input.bytes().rev().zip(out.bytes().rev()).take_while(|(x, y)| x == y).count();
        assert!(same_start >= input.find(&a.public).unwrap() + a.public.len(), "{format:?}\n{out}");
        assert!(input.len() - same_end <= input.find("lastmodified").unwrap(), "{format:?}\n{out}");
        assert!(!out.contains(&b.public) && out.contains(&pq.public), "{format:?}");
        // Read back: the post-quantum entry opens to the data key.
        let layout = format.layout(&out).unwrap();
        let entries = &layout.meta().groups[0].entries;
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[1].recipient, pq.public);
        assert_eq!(&open(&entries[1].enc, &pq.ids).unwrap()[..], &DATA_KEY[..]);
        assert!(matches!(
            rekey(out.as_bytes(), format, &target, &pq.ids, false).unwrap(),
            SopsOutcome::Unchanged
        ));
        // A removal alone, by name.
        let edit = Target::Edit { add: vec![], remove: vec![a.public.clone()] };
        let SopsOutcome::Changed { bytes, .. } =
            rekey(out.as_bytes(), format, &edit, &pq.ids, false).unwrap()
        else {
            panic!()
        };
        let once = String::from_utf8(bytes).unwrap();
        assert!(!once.contains(&a.public) && once.contains(&pq.public), "{format:?}");
    }
}

#[test]
fn an_entry_written_recipient_first_and_comments_in_the_metadata_are_kept() {
    let (a, pq) = (key(Kind::X25519), key(Kind::Hybrid));
    let input = format!(
        "x: 1\nsops:\n  # who can open it\n  age:\n  - recipient: {}\n    enc: |\n{}  mac: m\n  version: 3.13.3\n",
        a.public,
        indent(&enc_for(&a), 6)
    );
    let target = Target::Edit { add: vec![pq.public.clone()], remove: vec![] };
    let SopsOutcome::Changed { bytes, .. } =
        rekey(input.as_bytes(), Format::Yaml, &target, &a.ids, false).unwrap()
    else {
        panic!()
    };
    let out = String::from_utf8(bytes).unwrap();
    assert!(out.starts_with(&input[..input.find("  mac").unwrap()]), "{out}");
    assert!(out.ends_with("  mac: m\n  version: 3.13.3\n"));
    assert!(out.contains("  - enc: |\n      -----BEGIN AGE ENCRYPTED FILE-----\n"));
    assert!(out.contains(&format!("    recipient: {}\n", pq.public)));
    let y = yaml::Yaml::parse(&out).unwrap();
    assert_eq!(&open(&y.meta().groups[0].entries[1].enc, &pq.ids).unwrap()[..], &DATA_KEY[..]);
}

#[test]
fn every_document_of_a_yaml_file_changes_alike() {
    let (a, b) = (key(Kind::X25519), key(Kind::X25519));
    let one = yaml(&[(&a, enc_for(&a))]);
    let two = format!("{one}---\n{one}");
    let target = Target::Edit { add: vec![b.public.clone()], remove: vec![] };
    let SopsOutcome::Changed { bytes, added, .. } =
        rekey(two.as_bytes(), Format::Yaml, &target, &a.ids, false).unwrap()
    else {
        panic!()
    };
    assert_eq!(added, 1);
    let out = String::from_utf8(bytes).unwrap();
    let (first, second) = out.split_once("\n---\n").unwrap();
    assert_eq!(format!("{first}\n"), second, "the same entries in both documents");
    assert!(first.contains(&b.public));
    // Documents that disagree about the recipients are refused.
    let other = yaml(&[(&b, enc_for(&b))]);
    let err =
        rekey(format!("{one}---\n{other}").as_bytes(), Format::Yaml, &target, &a.ids, false).unwrap_err();
    assert!(err.to_string().contains("documents' age entries differ"), "{err}");
}

#[test]
fn refusals_say_why_and_change_nothing() {
    let (a, b) = (key(Kind::X25519), key(Kind::X25519));
    let good = yaml(&[(&a, enc_for(&a))]);
    let to = |age: Vec<String>| Target::Groups(vec![TargetGroup { age, others: None }]);
    let err = |input: &str, target: &Target, ids: &[Box<dyn Identity>]| {
        rekey(input.as_bytes(), Format::Yaml, target, ids, false).unwrap_err().to_string()
    };
    let t = to(vec![a.public.clone(), b.public.clone()]);
    assert!(err("a: 1\n", &t, &a.ids).contains("without `sops` metadata"));
    assert!(err(&good.replace("    mac:", "    nomac:"), &t, &a.ids).contains("no `mac`"));
    assert!(err(&format!("{good}sops: 1\n"), &t, &a.ids).contains("key \"sops\" appears twice"));
    // No identity opens the group.
    assert!(err(&good, &t, &b.ids).contains("none of the identities given opens key group 1"));
    // The lock-out guard, and --force.
    let only_b = to(vec![b.public.clone()]);
    assert!(err(&good, &only_b, &a.ids).contains("would open key group 1"));
    assert!(rekey(good.as_bytes(), Format::Yaml, &only_b, &a.ids, true).is_ok());
    // Nothing left in the group.
    assert!(err(&good, &to(vec![]), &a.ids).contains("leaves no age entry"));
    // Another group count than the file's.
    let two = Target::Groups(vec![TargetGroup::default(), TargetGroup::default()]);
    assert!(err(&good, &two, &a.ids).contains("2 key group(s) and the file 1"));
    // A rule that names other key sources than the file has.
    let pgp = Target::Groups(vec![TargetGroup {
        age: vec![a.public.clone()],
        others: Some(vec!["pgp:AB".into()]),
    }]);
    assert!(err(&good, &pgp, &a.ids).contains("other key sources"));
    // An enc that holds more than a data key.
    let big = wrap(&[1; 65], parse_recipient(&a.public).unwrap()).unwrap();
    assert!(err(&yaml(&[(&a, big)]), &t, &a.ids).contains("more than a sops data key"));
    // Too large a file, before any parsing.
    let huge = vec![b'a'; MAX_FILE + 1];
    assert!(matches!(rekey(&huge, Format::Yaml, &t, &a.ids, false), Err(Error::Limit(_))));
}

#[test]
fn the_json_reader_is_strict_and_quotes_as_go_does() {
    let ok = |s: &str| Json::parse(s).map(|_| ()).map_err(|e| e.to_string());
    let k = key(Kind::X25519);
    let base = json(&[(&k, enc_for(&k))]);
    assert!(ok(&base).is_ok());
    for bad in [
        "",
        "[]",
        "{",
        "{\"a\":}",
        "{\"a\":1,}",
        "{\"a\":01x}",
        "{\"a\":\"\\ud800\"}",
        "{\"a\":\"\\q\"}",
        "{} {}",
    ] {
        assert!(ok(bad).is_err(), "{bad}");
    }
    // Escapes and numbers elsewhere in the file are read, not misread as structure.
    let tricky = base.replacen(
        "\"a\": \"ENC[x]\"",
        "\"a\": \"}\\\"sops\\\"{\\u00e9\\ud83d\\ude00\", \"n\": -1.5e+3, \"t\": [true, null]",
        1,
    );
    assert!(ok(&tricky).is_ok(), "{:?}", ok(&tricky));
    assert_eq!(quote("a<b>&\n\"\\"), "\"a\\u003cb\\u003e\\u0026\\n\\\"\\\\\"");
    let deep = format!("{{\"x\": {}{}}}", "[".repeat(300), "]".repeat(300));
    assert!(ok(&deep).unwrap_err().contains("nesting"));
}

#[test]
fn json_on_one_line_stays_on_one_line() {
    let (a, b) = (key(Kind::X25519), key(Kind::X25519));
    let input = format!(
        "{{\"a\":\"ENC[x]\",\"sops\":{{\"age\":[{{\"enc\":{},\"recipient\":{}}}],\"mac\":\"m\",\"version\":\"3.13.3\"}}}}",
        quote(&enc_for(&a)),
        quote(&a.public)
    );
    let target = Target::Edit { add: vec![b.public.clone()], remove: vec![] };
    let SopsOutcome::Changed { bytes, .. } =
        rekey(input.as_bytes(), Format::Json, &target, &a.ids, false).unwrap()
    else {
        panic!()
    };
    let out = String::from_utf8(bytes).unwrap();
    assert!(!out.contains('\n'), "{out}");
    let entries = &Json::parse(&out).unwrap().meta().groups[0]
        .entries
        .iter()
        .map(|e| e.recipient.clone())
        .collect::<Vec<_>>();
    assert_eq!(entries, &[a.public.clone(), b.public.clone()]);
}

#[test]
fn looks_like_sops_sorts_files_for_a_walk() {
    assert!(looks_like_sops(b"a: 1\nsops:\n  mac: x\n", Format::Yaml));
    assert!(!looks_like_sops(b"a: 1\nsops:\n", Format::Yaml), "a null is no metadata");
    assert!(!looks_like_sops(b"a: 1\n", Format::Yaml));
    assert!(looks_like_sops(b"{\"sops\": {}}", Format::Json));
    assert!(looks_like_sops(b"A=1\nsops_mac=x\n", Format::Dotenv));
    assert!(looks_like_sops(b"[sops]\n", Format::Ini));
    assert!(!looks_like_sops(b"[db]\n", Format::Ini));
}

/// A name written twice where sops would read another member than hyperseal (Go's
/// encoding/json and go-ini keep the last, the readers here the first), or where sops refuses
/// the file (yaml.v3, the dotenv metadata): refused by the re-key's and the rotation's readers.
#[test]
fn names_written_twice_are_refused_in_every_reader() {
    let (a, b) = (key(Kind::X25519), key(Kind::X25519));
    let twice = |e: Result<(), Error>| e.unwrap_err().to_string();
    let both = |text: &str, format: Format| -> [String; 2] {
        let rotate = format.values(text).map(drop);
        [twice(format.layout(text).map(drop)), twice(rotate)]
    };

    // JSON: a second `age` list in `sops` (sops reads it, the first would be re-keyed), a name
    // twice at the top level, and inside an age entry.
    let j = json(&[(&a, enc_for(&a))]);
    let second = format!(
        "\"age\": [{{\"enc\": {}, \"recipient\": {}}}],\n\t\t\"age\": [",
        quote(&enc_for(&b)),
        quote(&b.public)
    );
    for text in [
        j.replacen("\"age\": [", &second, 1),
        j.replacen("\t\"a\": ", "\t\"a\": \"plain\",\n\t\"a\": ", 1),
        j.replacen("\"recipient\": ", &format!("\"recipient\": {},\n\"recipient\": ", quote(&b.public)), 1),
    ] {
        for e in both(&text, Format::Json) {
            assert!(e.contains("appears twice in one object"), "{e}\n{text}");
        }
    }
    let e = rekey(
        j.replacen("\"age\": [", &second, 1).as_bytes(),
        Format::Json,
        &Target::Edit { add: vec![], remove: vec![a.public.clone()] },
        &a.ids,
        true,
    )
    .unwrap_err();
    assert!(e.to_string().contains("JSON member name \"age\" appears twice"), "{e}");

    // YAML: every mapping, as yaml.v3 refuses them: the top level, `sops`, an age entry, data.
    let y = yaml(&[(&a, enc_for(&a))]);
    for text in [
        y.replacen("password:", "password: x\npassword:", 1),
        y.replacen("    lastmodified:", "    version: 3.13.2\n    lastmodified:", 1),
        y.replacen(
            "          recipient:",
            &format!("          recipient: {}\n          recipient:", b.public),
            1,
        ),
        format!("db:\n  user: a\n  user: b\n{y}"),
    ] {
        for e in both(&text, Format::Yaml) {
            assert!(e.contains("appears twice in one mapping"), "{e}\n{text}");
        }
    }

    // dotenv: a metadata key twice (sops: "Duplicate value").
    let d = dotenv(&[(&a, enc_for(&a))]);
    let dup = d.replacen("sops_mac=", "sops_mac=ENC[n]\nsops_mac=", 1);
    for e in both(&dup, Format::Dotenv) {
        assert!(e.contains("key \"mac\" appears twice"), "{e}");
    }

    // INI: a key twice in [sops] (go-ini keeps the last), and in a data section for the rotation.
    let i = ini(&[(&a, enc_for(&a))]);
    let dup = i.replacen("\nmac ", &format!("\nage__list_0__map_recipient = {}\nmac ", b.public), 1);
    for e in both(&dup, Format::Ini) {
        assert!(e.contains("\"age__list_0__map_recipient\" appears twice"), "{e}");
    }
    let e = twice(ini::values(&i.replacen("k = ENC[x]", "k = plain\nk = ENC[x]", 1)).map(drop));
    assert!(e.contains("INI key \"k\" appears twice in section [s]"), "{e}");
}

/// A `sops` member that is a plain value is no sops metadata: the file is not a sops file (a
/// walk skips it), where a damaged `sops` mapping still is one, and is refused.
#[test]
fn a_sops_member_that_is_a_plain_value_is_no_sops_file() {
    let k = key(Kind::X25519);
    let t = Target::Edit { add: vec![], remove: vec![] };
    for (text, format) in [
        ("{\"plain\": true, \"sops\": \"a note\"}", Format::Json),
        ("{\"sops\": [1]}", Format::Json),
        ("plain: true\nsops: a note\n", Format::Yaml),
        ("sops:\n  - a\n", Format::Yaml),
    ] {
        assert!(!looks_like_sops(text.as_bytes(), format), "{text}");
        let e = rekey(text.as_bytes(), format, &t, &k.ids, false).unwrap_err().to_string();
        assert!(e.contains("not a sops file"), "{e}");
    }
    for (text, format) in [
        ("{\"sops\": {\"age\": 1}}", Format::Json),
        ("{\"sops\": {\"age\": ", Format::Json),
        ("sops:\n  age: 1\n", Format::Yaml),
        ("sops:\n  age: [\n", Format::Yaml),
    ] {
        assert!(looks_like_sops(text.as_bytes(), format), "{text}");
        let e = rekey(text.as_bytes(), format, &t, &k.ids, false).unwrap_err().to_string();
        assert!(!e.contains("member is not a mapping"), "{text}: {e}");
    }
}

mod hostile {
    use super::*;
    use proptest::prelude::*;

    /// Valid files of each format around two entries, made once (key generation is the slow
    /// part).
    /// Files of each format, the key that stays and the key removed.
    type Corpus = (Vec<(Format, String)>, Key, Key);

    fn corpus() -> &'static Corpus {
        static CORPUS: std::sync::OnceLock<Corpus> = std::sync::OnceLock::new();
        CORPUS.get_or_init(|| {
            let (a, b) = (key(Kind::X25519), key(Kind::X25519));
            let entries = [(&a, enc_for(&a)), (&b, enc_for(&b))];
            let files = vec![
                (Format::Yaml, yaml(&entries)),
                (Format::Json, json(&entries)),
                (Format::Dotenv, dotenv(&entries)),
                (Format::Ini, ini(&entries)),
            ];
            (files, a, b)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

        /// A file cut, spliced or overwritten anywhere is re-keyed or refused, never a panic;
        /// what comes out parses again, without the recipient removed.
        #[test]
        fn damaged_files_are_refused_or_rekeyed(
            which in 0usize..4,
            at in any::<prop::sample::Index>(),
            len in 0usize..40,
            with in prop::collection::vec(prop::sample::select(&b"\n\r\t :-|\"\\{}[],#=x0\xc3\xa9"[..]), 0..8),
        ) {
            let (files, a, b) = corpus();
            let (format, text) = &files[which];
            let mut bytes = text.as_bytes().to_vec();
            let start = at.index(bytes.len());
            let end = (start + len).min(bytes.len());
            bytes.splice(start..end, with);
            let target = Target::Edit { add: vec![], remove: vec![b.public.clone()] };
            if let Ok(SopsOutcome::Changed { bytes: out, .. }) = rekey(&bytes, *format, &target, &a.ids, false) {
                let out = String::from_utf8(out).unwrap();
                let layout = format.layout(&out).unwrap();
                let entries = &layout.meta().groups[0].entries;
                prop_assert!(!entries.is_empty() && entries.iter().all(|e| e.recipient != b.public));
            }
        }
    }
}
