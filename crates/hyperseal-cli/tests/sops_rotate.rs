//! `hyperseal_sops::rotate` against the real sops 3.13.3 (`make sops`): files of every format that
//! sops made (YAML with comments and two documents, `encrypted_regex`, `mac_only_encrypted`,
//! JSON with `unencrypted_suffix` and numbers, dotenv with a comment, INI, binary) are rotated to
//! a post-quantum recipient. sops is the judge: the new key opens each to the same plaintext,
//! every sealed value changed, and the old data key, put back beside the rotated values, fails.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

use common::{age_keygen as keygen, sops_kit};
use hyperseal::recipient::{parse_identities, Identity};
use hyperseal_sops::{rotate, Format, SopsOutcome, Target};

fn sops(tools: &Path, dir: &Path, key: &Path, args: &[&str]) -> Output {
    Command::new(tools.join("sops"))
        .args(args)
        .current_dir(dir)
        .env_remove("SOPS_AGE_KEY")
        .env("XDG_CONFIG_HOME", dir.join("no-config"))
        .env("SOPS_AGE_KEY_FILE", key)
        .output()
        .unwrap()
}

/// Each file: name, plaintext, sops's options.
fn files() -> Vec<(&'static str, &'static str, Vec<&'static str>)> {
    vec![
        ("a.yaml", "# top comment\npassword: hunter2\nnested:\n  # inner comment\n  key: v1\n  n: 42\n  f: 1.5\n  ok: true\nlist:\n  # in a list (sops writes it as an item)\n  - a\n  - 7\n", vec![]),
        ("two.yaml", "# doc one\npassword: p1\n---\nsecond: d2\nnested: {a: b}\n", vec![]),
        ("regex.yaml", "secret_token: t1\nport: 8080\nname: svc\nratio: 0.25\nflag: false\n", vec!["--encrypted-regex", "^secret_"]),
        ("maconly.yaml", "secret_a: x\nplain: 3\n", vec!["--encrypted-regex", "^secret_", "--mac-only-encrypted"]),
        ("c.json", "{\"user\": \"u\", \"token_plain\": \"visible\", \"n\": 12, \"x\": 2.5, \"t\": true, \"l\": [1, \"two\"]}", vec!["--unencrypted-suffix", "_plain"]),
        ("e.env", "DB_USER=u\n# a comment\nDB_PASS=p w\n", vec![]),
        ("i.ini", "[db]\n; a note\nuser = u\npass = p\n[other]\nk = v\n", vec![]),
        // Values left in the clear, of every type sops hashes by its own rules.
        (
            "typed.yaml",
            "secret_x: s\nnums:\n  - 1\n  - -2.5e3\n  - .inf\nnothing: ~\nyes_str: yes\nday: 2001-12-14\nmulti: |\n  a\n  b\nmaps:\n  - name: a\n    v: [x, {z: 1}]\n",
            vec!["--encrypted-regex", "^secret"],
        ),
        (
            "typed.json",
            "{\"secret\": 1, \"a\": [1, 2.50, true, null, {\"c\": \"d\"}], \"big\": 12345678901234567890, \"neg\": -0, \"exp\": 1E2}",
            vec!["--encrypted-regex", "^secret"],
        ),
        ("b.bin", "binary \u{1} data\n", vec![]),
    ]
}

/// An age-keygen key: its file and its recipient.
type AgeKey = (PathBuf, String);

/// sops and age-keygen with a temporary folder, and in it an `old` classic key and a `new`
/// post-quantum one (each its file and recipient); `None` (skipped) without sops.
fn old_and_new() -> Option<(PathBuf, tempfile::TempDir, AgeKey, AgeKey)> {
    let (tools, tmp) = sops_kit()?;
    let old = keygen(&tools, tmp.path(), "old", false);
    let new = keygen(&tools, tmp.path(), "new", true);
    Some((tools, tmp, old, new))
}

fn sealed_values(text: &str) -> Vec<&str> {
    text.match_indices("ENC[AES256_GCM,data:")
        .map(|(i, _)| &text[i..i + text[i..].find(']').unwrap()])
        .collect()
}

#[test]
fn rotated_files_open_with_sops_under_the_new_key_only() {
    let Some((tools, tmp, old, new)) = old_and_new() else { return };
    let (tools, dir) = (tools.as_path(), tmp.path());
    let ids: Vec<Box<dyn Identity>> = parse_identities(&fs::read_to_string(&old.0).unwrap()).unwrap();
    let target = Target::Edit { add: vec![new.1.clone()], remove: vec![old.1.clone()] };
    for (name, plain, opts) in files() {
        let path = dir.join(name);
        fs::write(&path, plain).unwrap();
        let mut args = vec!["-e", "-i", "--age", &old.1];
        args.extend(opts);
        args.push(name);
        let o = sops(tools, dir, &old.0, &args);
        assert!(o.status.success(), "sops -e {name}: {}", String::from_utf8_lossy(&o.stderr));
        let before = fs::read_to_string(&path).unwrap();
        let clear = sops(tools, dir, &old.0, &["-d", name]).stdout;
        assert!(!clear.is_empty(), "{name}");

        let SopsOutcome::Changed { bytes, added, removed } =
            rotate(before.as_bytes(), Format::for_path(&path), &target, &ids, true, SystemTime::now())
                .unwrap_or_else(|e| panic!("rotate {name}: {e}"))
        else {
            panic!("{name}: unchanged")
        };
        assert_eq!((added, removed), (1, 1), "{name}");
        let after = String::from_utf8(bytes).unwrap();
        fs::write(&path, &after).unwrap();

        let o = sops(tools, dir, &new.0, &["-d", name]);
        assert!(
            o.status.success(),
            "sops -d {name} after rotate: {}\n{after}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(o.stdout, clear, "{name}: the same plaintext");
        assert!(!sops(tools, dir, &old.0, &["-d", name]).status.success(), "{name}: the old key opens it");

        // Every sealed value changed, and as many are there.
        let (b, a) = (sealed_values(&before), sealed_values(&after));
        assert_eq!(b.len(), a.len(), "{name}");
        assert!(b.iter().all(|v| !a.contains(v)), "{name}: a sealed value kept");

        // The old data key beside the rotated values: its entry put back opens nothing.
        let old_entry_file = before.clone();
        let spliced = splice_old_entries(&after, &old_entry_file, name);
        fs::write(&path, spliced).unwrap();
        let o = sops(tools, dir, &old.0, &["-d", name]);
        assert!(!o.status.success(), "{name}: the old data key opens the rotated values");
        fs::write(&path, &after).unwrap();
    }
}

/// `after` with its age entries swapped for `before`'s (which wrap the old data key): the lines
/// from the first line naming a recipient's `enc` to the last naming a `recipient`.
fn splice_old_entries(after: &str, before: &str, name: &str) -> String {
    let region = |t: &str| {
        let lines: Vec<&str> = t.split_inclusive('\n').collect();
        let first = lines
            .iter()
            .position(|l| {
                l.contains("enc")
                    && (l.contains("- enc: |") || l.contains("__map_enc") || l.contains("\"enc\""))
            })
            .unwrap();
        let last = lines.iter().rposition(|l| l.contains("recipient")).unwrap();
        let start: usize = lines[..first].iter().map(|l| l.len()).sum();
        let end: usize = lines[..=last].iter().map(|l| l.len()).sum();
        (start, end)
    };
    let (a0, a1) = region(after);
    let (b0, b1) = region(before);
    let _ = name;
    format!("{}{}{}", &after[..a0], &before[b0..b1], &after[a1..])
}

/// A file changed behind sops's back is refused, not signed again: a plain value edited (the
/// `mac` covers it), and two sealed values swapped (each is bound to its path).
#[test]
fn a_file_changed_outside_sops_is_not_rotated() {
    let Some((tools, tmp)) = sops_kit() else { return };
    let (tools, dir) = (tools.as_path(), tmp.path());
    let old = keygen(tools, dir, "old", false);
    let ids: Vec<Box<dyn Identity>> = parse_identities(&fs::read_to_string(&old.0).unwrap()).unwrap();
    let target = Target::Edit { add: vec![], remove: vec![] };
    fs::write(dir.join("f.yaml"), "secret_a: one\nsecret_b: two\nport: 8080\n").unwrap();
    let o =
        sops(tools, dir, &old.0, &["-e", "-i", "--age", &old.1, "--encrypted-regex", "^secret_", "f.yaml"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let good = fs::read_to_string(dir.join("f.yaml")).unwrap();
    let rot = |text: &str| rotate(text.as_bytes(), Format::Yaml, &target, &ids, false, SystemTime::now());
    assert!(matches!(rot(&good), Ok(SopsOutcome::Changed { .. })), "the untouched file rotates");

    let edited = good.replace("port: 8080", "port: 8081");
    let err = rot(&edited).unwrap_err().to_string();
    assert!(err.contains("mac does not match"), "{err}");

    let lines: Vec<&str> = good.lines().collect();
    let (a, b) = (lines[0].split_once(": ").unwrap().1, lines[1].split_once(": ").unwrap().1);
    let swapped = good.replacen(a, "@A@", 1).replacen(b, a, 1).replacen("@A@", b, 1);
    let err = rot(&swapped).unwrap_err().to_string();
    assert!(err.contains("does not open at its place"), "{err}");

    // A stray sealed value in a string the tree does not seal (a block scalar) is a value, and
    // one sops never wrote is refused by its shape.
    let stray = good.replace("port: 8080", "port: ENC[AES256_GCM,data:AAAA,iv:short,tag:x,type:str]");
    assert!(rot(&stray).is_err());
}

/// `hyperseal rekey --sops --rotate --recursive` over a folder, to its `.sops.yaml`'s new rule:
/// every file opens with the new key alone, none with the old, and `sops updatekeys` agrees.
#[test]
fn the_cli_rotates_a_folder_to_its_rules() {
    let Some((tools, tmp, old, new)) = old_and_new() else { return };
    let (tools, dir) = (tools.as_path(), tmp.path());
    let both = dir.join("both.txt");
    fs::write(&both, fs::read_to_string(&old.0).unwrap() + &fs::read_to_string(&new.0).unwrap()).unwrap();
    let repo = dir.join("repo");
    fs::create_dir_all(repo.join("sub")).unwrap();
    let rule = |r: &str| format!("creation_rules:\n  - age: {r}\n");
    fs::write(repo.join(".sops.yaml"), rule(&old.1)).unwrap();
    let mut clear = Vec::new();
    for (name, plain, _) in files() {
        let name = format!("sub/{name}");
        fs::write(repo.join(&name), plain).unwrap();
        assert!(sops(tools, &repo, &old.0, &["-e", "-i", &name]).status.success(), "{name}");
        clear.push((name.clone(), sops(tools, &repo, &old.0, &["-d", &name]).stdout));
    }
    fs::write(repo.join(".sops.yaml"), rule(&new.1)).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_hyperseal"))
        .args(["rekey", "--sops", "--rotate", "--recursive", "-q"])
        .arg(&repo)
        .env("SOPS_AGE_KEY_FILE", &both)
        .env_remove("SOPS_AGE_KEY")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for (name, plain) in clear {
        let o = sops(tools, &repo, &new.0, &["-d", &name]);
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(o.stdout, plain, "{name}");
        assert!(!sops(tools, &repo, &old.0, &["-d", &name]).status.success(), "{name}: the old key opens it");
        let o = sops(tools, &repo, &new.0, &["updatekeys", "-y", &name]);
        let said = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success() && said.contains("already up to date"), "{name}: {said}");
    }
}

/// Files with key groups: the old key is combined from the shares the identities open, the new
/// one split again as sops splits it, and sops opens the result with any `threshold` groups.
#[test]
fn key_groups_get_new_shares_that_sops_combines() {
    let Some((tools, tmp)) = sops_kit() else { return };
    let (tools, dir) = (tools.as_path(), tmp.path());
    let k: Vec<(PathBuf, String)> = (0..3).map(|i| keygen(tools, dir, &format!("g{i}"), i == 2)).collect();
    let keys = |which: &[usize]| {
        let f = dir.join(format!("keys{which:?}.txt"));
        fs::write(&f, which.iter().map(|&i| fs::read_to_string(&k[i].0).unwrap()).collect::<String>())
            .unwrap();
        f
    };
    fs::write(
        dir.join(".sops.yaml"),
        format!(
            "creation_rules:\n  - path_regex: two\n    key_groups:\n      - age: [{}]\n      - age: [{}]\n  - path_regex: three\n    shamir_threshold: 2\n    key_groups:\n      - age: [{}]\n      - age: [{}]\n      - age: [{}]\n",
            k[0].1, k[1].1, k[0].1, k[1].1, k[2].1
        ),
    )
    .unwrap();
    let all = keys(&[0, 1, 2]);
    for (name, text, holders, need) in [
        ("two.yaml", "a: 1\nb: secret\n", &[0usize, 1][..], 2usize),
        ("two.env", "A=1\nB=secret\n", &[0, 1][..], 2),
        ("three.json", "{\"a\": \"x\", \"n\": 3}", &[0, 1][..], 2),
        ("three.ini", "[s]\na = x\n", &[1, 2][..], 2),
    ] {
        fs::write(dir.join(name), text).unwrap();
        let o = sops(tools, dir, &all, &["-e", "-i", name]);
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        let before = fs::read_to_string(dir.join(name)).unwrap();
        assert!(before.contains("key_groups"), "{name}");
        let clear = sops(tools, dir, &all, &["-d", name]).stdout;

        // Only some groups' keys at hand: `need` of them is enough to rotate.
        let ids: Vec<Box<dyn Identity>> =
            parse_identities(&fs::read_to_string(keys(holders)).unwrap()).unwrap();
        let target = Target::Edit { add: vec![], remove: vec![] };
        let fewer: Vec<Box<dyn Identity>> =
            parse_identities(&fs::read_to_string(&k[holders[0]].0).unwrap()).unwrap();
        let err = rotate(
            before.as_bytes(),
            Format::for_path(&dir.join(name)),
            &target,
            &fewer,
            false,
            SystemTime::now(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains(&format!("needs {need}")), "{name}: {err}");
        let SopsOutcome::Changed { bytes, .. } = rotate(
            before.as_bytes(),
            Format::for_path(&dir.join(name)),
            &target,
            &ids,
            false,
            SystemTime::now(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}")) else {
            panic!("{name}: unchanged")
        };
        fs::write(dir.join(name), &bytes).unwrap();
        let after = String::from_utf8(bytes).unwrap();
        let (b, a) = (sealed_values(&before), sealed_values(&after));
        assert!(b.len() == a.len() && b.iter().all(|v| !a.contains(v)), "{name}: every sealed value changed");
        // Each threshold of groups opens it with sops; one group alone does not.
        let o = sops(tools, dir, &keys(holders), &["-d", name]);
        assert!(o.status.success(), "{name}: {}\n{after}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(o.stdout, clear, "{name}");
        if name.starts_with("three") {
            assert_eq!(
                sops(tools, dir, &keys(&[0, 2]), &["-d", name]).stdout,
                clear,
                "{name}: groups 1 and 3"
            );
        }
        assert!(!sops(tools, dir, &keys(&[holders[0]]), &["-d", name]).status.success(), "{name}: one group");
    }
}
