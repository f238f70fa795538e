//! `hyperseal rekey --sops` against the real sops 3.13.3 (`make sops`, in `.tools/bin`): a
//! repository of sops files made by sops itself (YAML with comments and several documents, JSON,
//! dotenv, INI, binary; two key groups with a Shamir threshold; a PGP entry; `encrypted_regex`
//! and `unencrypted_suffix`) moved to a new `.sops.yaml` that adds an `age1pq1…` recipient and
//! removes an X25519 one. sops is the judge: the new key alone opens every file to the same plaintext, the removed key opens none,
//! `sops updatekeys` finds nothing to do, and only age-entry lines differ.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{hs, p, peers};

/// Files in the repository: each costs five sops processes (make, three opens, updatekeys),
/// run four at a time by [`par_each`].
const FILES: usize = 300;

/// A file's bytes and its plaintext (as sops opens it) before the re-key.
type Before = (Vec<u8>, Vec<u8>);

/// `f` on every item, on four threads (sops is one process per call; the test waits on them).
fn par_each<T: Sync>(items: &[T], f: impl Fn(&T) + Sync) {
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                f(item);
            });
        }
    });
}

struct Keys {
    /// X25519, kept by the new rules.
    keep: (PathBuf, String),
    /// X25519, removed by the new rules.
    gone: (PathBuf, String),
    /// ML-KEM-768 + X25519 (`age1pq1…`), added by the new rules.
    pq: (PathBuf, String),
    /// The second key group's X25519 key.
    second: (PathBuf, String),
}

use common::age_keygen as keygen;

/// A key file holding the keys of `paths` (sops reads every line of SOPS_AGE_KEY_FILE).
fn key_file(dir: &Path, name: &str, paths: &[&Path]) -> PathBuf {
    let f = dir.join(name);
    fs::write(&f, paths.iter().map(|p| fs::read_to_string(p).unwrap()).collect::<String>()).unwrap();
    f
}

fn sops(tools: &Path, repo: &Path, key: Option<&Path>, args: &[&str]) -> Output {
    let mut c = Command::new(tools.join("sops"));
    c.args(args).current_dir(repo).env_remove("SOPS_AGE_KEY").env("XDG_CONFIG_HOME", repo.join("no-config"));
    match key {
        Some(k) => c.env("SOPS_AGE_KEY_FILE", k),
        None => c.env_remove("SOPS_AGE_KEY_FILE"),
    };
    c.output().unwrap()
}

fn rules(dir: &Path, keys: &Keys, new: bool) {
    let first = if new { &keys.pq.1 } else { &keys.gone.1 };
    fs::write(
        dir.join(".sops.yaml"),
        format!(
            "creation_rules:\n  - path_regex: ^pgp/\n    pgp: {PGP_FP}\n    age: {},{first}\n  - path_regex: ^groups/\n    shamir_threshold: 2\n    key_groups:\n      - age:\n          - {}\n          - {first}\n      - age:\n          - {}\n  - path_regex: \\.(yaml|json|env|ini|bin)$\n    age: >-\n      {},{first}\n",
            keys.keep.1, keys.keep.1, keys.second.1, keys.keep.1
        ),
    )
    .unwrap();
}

/// A PGP key the `pgp/` rule names: its entry is written into the file by hand (no gpg here);
/// sops tries age first, and hyperseal must keep the entry byte for byte.
const PGP_FP: &str = "0123456789ABCDEF0123456789ABCDEF01234567";
const PGP_ENTRY: &str = "    pgp:\n        - created_at: \"2026-11-25T21:19:51Z\"\n          enc: |-\n            -----BEGIN PGP MESSAGE-----\n\n            wcFMA1234\n            =abcd\n            -----END PGP MESSAGE-----\n          fp: 0123456789ABCDEF0123456789ABCDEF01234567\n";

/// The plaintext of file `i` and its name: each format, with sops's options now and then.
fn plain(i: usize) -> (String, String, Vec<&'static str>) {
    match i % 5 {
        0 if i.is_multiple_of(10) => (
            format!("app{i}.yaml"),
            format!("# settings of app {i}\nsecret_token: t{i} # keep me\nport: {i}\nlist:\n  - a\n  - b\n"),
            vec!["--encrypted-regex", "^secret_"],
        ),
        // Two documents: sops writes its metadata into each.
        0 => (
            format!("svc{i}.yaml"),
            format!("# svc {i}\npassword: p{i}\nnested:\n  key: v{i}\n---\nsecond: d{i}\n"),
            vec![],
        ),
        1 => (
            format!("cfg{i}.json"),
            format!("{{\"user\": \"u{i}\", \"token_plain\": \"visible{i}\", \"n\": {i}}}"),
            vec!["--unencrypted-suffix", "_plain"],
        ),
        2 => (format!("env{i}.env"), format!("DB_USER=u{i}\n# comment\nDB_PASS=p{i}\n"), vec![]),
        3 => (format!("ini{i}.ini"), format!("[db]\nuser = u{i}\npass = p{i}\n"), vec![]),
        _ => (format!("blob{i}.bin"), format!("binary \u{1} {i}\n"), vec![]),
    }
}

/// The lines of a sops file that are not part of an age entry, in order.
fn outside_age(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| {
            let t = l.trim();
            let armor_line = !t.is_empty()
                && t.len() <= 64
                && t.bytes().all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b));
            !(t.contains("recipient")
                || t.contains("__map_enc")
                || t.contains("\"enc\"")
                || t.starts_with("- enc: |")
                || t.contains("AGE ENCRYPTED FILE")
                || armor_line)
        })
        .map(str::to_owned)
        .collect()
}

fn setup() -> Option<(tempfile::TempDir, PathBuf, Keys)> {
    let tools = peers(&["sops", "age-keygen"])?.parent().unwrap().to_path_buf();
    let tmp = tempfile::tempdir().unwrap();
    let keys = Keys {
        keep: keygen(&tools, tmp.path(), "keep", false),
        gone: keygen(&tools, tmp.path(), "gone", false),
        pq: keygen(&tools, tmp.path(), "pq", true),
        second: keygen(&tools, tmp.path(), "second", false),
    };
    assert!(keys.pq.1.starts_with("age1pq1"));
    Some((tmp, tools, keys))
}

#[test]
fn a_repository_moves_to_a_post_quantum_recipient_and_sops_agrees() {
    let Some((tmp, tools, keys)) = setup() else { return };
    let repo = tmp.path().join("repo");
    fs::create_dir_all(repo.join("groups")).unwrap();
    rules(&repo, &keys, false);
    let indices: Vec<usize> = (0..FILES).collect();
    par_each(&indices, |&i| {
        let (name, text, opts) = plain(i);
        fs::write(repo.join(&name), text).unwrap();
        let mut args = vec!["-e", "-i"];
        args.extend(opts);
        args.push(&name);
        let o = sops(&tools, &repo, None, &args);
        assert!(o.status.success(), "sops -e {name}: {}", String::from_utf8_lossy(&o.stderr));
    });
    let mut files: Vec<PathBuf> = indices.iter().map(|&i| repo.join(plain(i).0)).collect();
    for name in ["groups/two.yaml", "groups/two.json", "groups/two.env", "groups/two.ini", "groups/two.bin"] {
        let text = match name.rsplit('.').next() {
            Some("yaml") => "# two groups\na: 1\nb: two\n",
            Some("json") => "{\"a\": 1}",
            Some("env") => "A=1\nB=2\n",
            Some("ini") => "[s]\na = 1\n",
            _ => "two groups\n",
        };
        fs::write(repo.join(name), text).unwrap();
        let o = sops(&tools, &repo, None, &["-e", "-i", name]);
        assert!(o.status.success(), "sops -e {name}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(fs::read_to_string(repo.join(name)).unwrap().contains("key_groups"), "{name}");
        files.push(repo.join(name));
    }
    // A file with a PGP entry beside its age entries.
    fs::create_dir(repo.join("pgp")).unwrap();
    fs::write(repo.join("pgp/p.yaml"), "a: 1\n").unwrap();
    assert!(sops(
        &tools,
        &repo,
        None,
        &["-e", "-i", "--pgp", "", "--age", &format!("{},{}", keys.keep.1, keys.gone.1), "pgp/p.yaml"]
    )
    .status
    .success());
    let with_pgp = fs::read_to_string(repo.join("pgp/p.yaml")).unwrap().replacen(
        "    lastmodified:",
        &format!("{PGP_ENTRY}    lastmodified:"),
        1,
    );
    assert!(with_pgp.contains(PGP_ENTRY));
    fs::write(repo.join("pgp/p.yaml"), with_pgp).unwrap();
    files.push(repo.join("pgp/p.yaml"));
    fs::write(repo.join("README.md"), "not a secret\n").unwrap();
    fs::write(repo.join("notes.yaml"), "a: 1\n").unwrap();

    let groups = |f: &Path| f.parent().unwrap().ends_with("groups");
    let (keep, gone, pq, second) = (&keys.keep.0, &keys.gone.0, &keys.pq.0, &keys.second.0);
    let old_only = key_file(tmp.path(), "old_only.txt", &[gone, second]);
    let new_only = key_file(tmp.path(), "new_only.txt", &[pq, second]);
    let before: Vec<std::sync::OnceLock<Before>> = files.iter().map(|_| Default::default()).collect();
    let slots: Vec<(&PathBuf, &std::sync::OnceLock<_>)> = files.iter().zip(&before).collect();
    par_each(&slots, |(f, slot)| {
        let o = sops(&tools, &repo, Some(&old_only), &["-d", p(f)]);
        assert!(o.status.success(), "sops -d {}: {}", f.display(), String::from_utf8_lossy(&o.stderr));
        slot.set((fs::read(f).unwrap(), o.stdout)).unwrap();
    });
    let before: Vec<Before> = before.into_iter().map(|s| s.into_inner().unwrap()).collect();

    rules(&repo, &keys, true);
    // Identities as sops users have them: SOPS_AGE_KEY_FILE (the kept key) and SOPS_AGE_KEY
    // (the second group's).
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_hyperseal"))
            .args(["rekey", "--sops", "--recursive", p(&repo)])
            .env("SOPS_AGE_KEY_FILE", keep)
            .env("SOPS_AGE_KEY", fs::read_to_string(second).unwrap())
            .output()
            .unwrap()
    };
    let o = run();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let n = files.len();
    assert!(err.contains(&format!("sops files: {n} changed, 0 unchanged, 2 skipped, 0 failed")), "{err}");
    assert!(err.contains("skipped") && err.contains("README.md: not a sops file"), "{err}");

    let checks: Vec<(&PathBuf, &Before)> = files.iter().zip(&before).collect();
    par_each(&checks, |&(f, (old_bytes, old_plain))| {
        let now = fs::read_to_string(f).unwrap();
        let old = String::from_utf8_lossy(old_bytes);
        assert_ne!(now.as_bytes(), &old_bytes[..], "{} unchanged", f.display());
        // Only age entries differ: every other line, `mac` and `lastmodified` too, in order.
        assert_eq!(outside_age(&old), outside_age(&now), "{}", f.display());
        assert!(now.contains(&keys.pq.1) && !now.contains(&keys.gone.1), "{}", f.display());
        assert_eq!(
            old.contains(PGP_ENTRY),
            now.contains(PGP_ENTRY),
            "{}: the PGP entry as it was",
            f.display()
        );
        // The new key opens it to the same plaintext; the removed one no longer does.
        let o = sops(&tools, &repo, Some(&new_only), &["-d", p(f)]);
        assert!(o.status.success(), "{}: {}", f.display(), String::from_utf8_lossy(&o.stderr));
        assert_eq!(&o.stdout, old_plain, "{}", f.display());
        let o = sops(&tools, &repo, Some(&old_only), &["-d", p(f)]);
        assert!(!o.status.success(), "{} still opens with the removed key", f.display());
        // Group files need both groups (threshold 2): the second alone does not open them.
        if groups(f) {
            let o = sops(&tools, &repo, Some(second), &["-d", p(f)]);
            assert!(!o.status.success(), "{}", f.display());
        }
        // sops itself finds the file up to date, and so leaves it as it is.
        let o = sops(&tools, &repo, Some(&new_only), &["updatekeys", "-y", p(f)]);
        let said = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success() && said.contains("already up to date"), "{}: {said}", f.display());
        assert_eq!(fs::read_to_string(f).unwrap(), now);
    });

    // Run again: nothing left to do.
    let o = run();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("sops files: 0 changed, {n} unchanged, 2 skipped, 0 failed")), "{err}");
}

/// One sops YAML file in a fresh folder with a rule for `keep` and `gone`.
fn one_file(tools: &Path, dir: &Path, keys: &Keys) -> PathBuf {
    fs::write(dir.join(".sops.yaml"), format!("creation_rules:\n  - age: {},{}\n", keys.keep.1, keys.gone.1))
        .unwrap();
    fs::write(dir.join("s.yaml"), "a: 1\n").unwrap();
    assert!(sops(tools, dir, None, &["-e", "-i", "s.yaml"]).status.success());
    dir.join("s.yaml")
}

#[test]
fn a_change_that_locks_out_every_identity_is_refused_and_the_file_kept() {
    let Some((tmp, tools, keys)) = setup() else { return };
    let f = one_file(&tools, tmp.path(), &keys);
    let before = fs::read(&f).unwrap();
    let o = hs(&["rekey", "--sops", "-r", &keys.pq.1, "-i", p(&keys.keep.0), p(&f)], None);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("none of the identities given would open key group 1"), "{err}");
    assert_eq!(err.lines().filter(|l| l.starts_with("hyperseal: error:")).count(), 1, "{err}");
    assert_eq!(fs::read(&f).unwrap(), before);
    // --force makes it, and the new key opens it.
    let o = hs(&["rekey", "--sops", "--force", "-r", &keys.pq.1, "-i", p(&keys.keep.0), p(&f)], None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(sops(&tools, tmp.path(), Some(&keys.pq.0), &["-d", p(&f)]).status.success());
    assert!(!sops(&tools, tmp.path(), Some(&keys.keep.0), &["-d", p(&f)]).status.success());
}

#[test]
fn add_and_remove_by_name_and_hostile_files_fail_alone() {
    let Some((tmp, tools, keys)) = setup() else { return };
    let f = one_file(&tools, tmp.path(), &keys);
    let o = hs(
        &[
            "rekey",
            "--sops",
            "--add",
            &keys.pq.1,
            "--remove",
            &keys.gone.1,
            "-i",
            p(&keys.gone.0),
            "-i",
            p(&keys.pq.0),
            p(&f),
        ],
        None,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(sops(&tools, tmp.path(), Some(&keys.pq.0), &["-d", p(&f)]).status.success());
    assert!(!sops(&tools, tmp.path(), Some(&keys.gone.0), &["-d", p(&f)]).status.success());

    // An SSH recipient, written as sops writes one: sops opens it with the SSH key.
    if let Some(keygen) = common::peer_on_path("ssh-keygen") {
        let ssh = tmp.path().join("id_ed25519");
        let o = Command::new(keygen)
            .args(["-q", "-t", "ed25519", "-N", "", "-C", "", "-f", p(&ssh)])
            .output()
            .unwrap();
        assert!(o.status.success());
        let public = fs::read_to_string(ssh.with_extension("pub")).unwrap().trim().to_owned();
        let o = hs(&["rekey", "--sops", "--add", &public, "-i", p(&keys.pq.0), p(&f)], None);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let o = Command::new(tools.join("sops"))
            .args(["-d", p(&f)])
            .env_remove("SOPS_AGE_KEY_FILE")
            .env("XDG_CONFIG_HOME", tmp.path().join("no-config"))
            .env("SOPS_AGE_SSH_PRIVATE_KEY_FILE", &ssh)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let o = hs(&["rekey", "--sops", "--remove", &public, "-i", p(&keys.pq.0), p(&f)], None);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }

    // A tree with broken files beside a good one: each broken one gets one line and stays.
    let good = fs::read_to_string(&f).unwrap();
    let tree = tmp.path().join("tree");
    fs::create_dir(&tree).unwrap();
    fs::write(
        tree.join(".sops.yaml"),
        format!("creation_rules:\n  - age: {},{}\n", keys.keep.1, keys.second.1),
    )
    .unwrap();
    fs::write(tree.join("good.yaml"), &good).unwrap();
    let hostile = [
        ("nomac.yaml", good.replace("    mac: ", "    not_mac: ")),
        ("notage.yaml", {
            let start = good.find("-----BEGIN").unwrap();
            let end = good[start..].find("-----END").unwrap() + start;
            format!(
                "{}-----BEGIN AGE ENCRYPTED FILE-----\n            bm90IGFuIGFnZSBmaWxl\n            {}",
                &good[..start],
                &good[end..]
            )
        }),
        (
            "bad.json",
            "{\"sops\": {\"mac\": \"x\", \"version\": \"3\", \"age\": [{\"recipient\": 1".to_owned(),
        ),
        ("flow.yaml", "a: 1\nsops: {age: [{recipient: x, enc: y}], mac: m, version: v}\n".to_owned()),
        // A 17 MB value: past the 16 MiB a sops file may have, refused before it is parsed.
        ("huge.yaml", format!("big: {}\n{}", "x".repeat(17 << 20), &good[good.find("sops:").unwrap()..])),
    ];
    for (name, text) in &hostile {
        fs::write(tree.join(name), text).unwrap();
    }
    let o =
        hs(&["rekey", "--sops", "--recursive", "-i", p(&keys.pq.0), "-i", p(&keys.keep.0), p(&tree)], None);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("sops files: 1 changed, 0 unchanged, 0 skipped, 5 failed"), "{err}");
    assert!(err.contains("huge.yaml: input too large"), "{err}");
    for (name, text) in &hostile {
        assert_eq!(&fs::read_to_string(tree.join(name)).unwrap(), text, "{name} was touched");
        assert_eq!(
            err.lines().filter(|l| l.starts_with("hyperseal: error:") && l.contains(name)).count(),
            1,
            "{err}"
        );
    }
    assert!(sops(&tools, &tree, Some(&keys.second.0), &["-d", "good.yaml"]).status.success());
}

/// A plugin identity (age-plugin-hstest, counting its runs) opens a whole tree in one run: the
/// stanzas of every file's entries are asked in one batch, and the lock-out guard is answered
/// from it (the plugin's own entry is kept).
#[test]
fn a_tree_is_opened_with_one_plugin_run() {
    let Some((tmp, tools, keys)) = setup() else { return };
    let Some(plugin) = peers(&["age-plugin-hstest"]) else { return };
    let d = tmp.path();
    let out = Command::new(&plugin).arg("--keygen").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let (id, r) = text.split_once('\n').unwrap();
    let id_file = d.join("hstest.key");
    fs::write(&id_file, format!("{id}\n")).unwrap();
    let tree = d.join("tree");
    fs::create_dir(&tree).unwrap();
    fs::write(
        tree.join(".sops.yaml"),
        format!("creation_rules:\n  - age: {},{}\n", keys.keep.1, keys.gone.1),
    )
    .unwrap();
    for i in 0..12 {
        fs::write(tree.join(format!("s{i}.yaml")), format!("a: {i}\n")).unwrap();
        assert!(sops(&tools, &tree, None, &["-e", "-i", &format!("s{i}.yaml")]).status.success());
    }
    let hs_in = |args: &[&str], count: &Path| {
        Command::new(env!("CARGO_BIN_EXE_hyperseal"))
            .args(args)
            .env("PATH", common::tools_path())
            .env("HSTEST_COUNT", count)
            .env_remove("SOPS_AGE_KEY_FILE")
            .env_remove("SOPS_AGE_KEY")
            .env("XDG_CONFIG_HOME", d.join("no-config"))
            .output()
            .unwrap()
    };
    let count = d.join("count");
    let o = hs_in(
        &["rekey", "--sops", "--recursive", "-q", "--add", r.trim(), "-i", p(&keys.keep.0), p(&tree)],
        &count,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let _ = fs::remove_file(&count);
    let o =
        hs_in(&["rekey", "--sops", "--recursive", "--add", &keys.pq.1, "-i", p(&id_file), p(&tree)], &count);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("sops files: 12 changed, 0 unchanged, 0 skipped, 0 failed"), "{err}");
    assert_eq!(fs::read_to_string(&count).unwrap(), "run\n", "one plugin run for 12 files");
    for i in 0..12 {
        assert!(sops(&tools, &tree, Some(&keys.pq.0), &["-d", &format!("s{i}.yaml")]).status.success());
    }
}

/// A run killed partway (SIGKILL) leaves every file either as it was or re-keyed, never torn
/// and no temporary beside it; the same command again finishes the rest. The one thing a kill
/// may leave is, for at most one file, a documented second name of the file being replaced:
/// the old inode, whole (`.NAME.hyperseal-old`), or the new version killed in the instant
/// before its rename (`.NAME.hyperseal-link`); the next run removes it.
#[test]
fn a_killed_run_is_finished_by_running_it_again() {
    let Some((tmp, tools, keys)) = setup() else { return };
    let tree = tmp.path().join("tree");
    fs::create_dir(&tree).unwrap();
    rules(&tree, &keys, false);
    let names: Vec<String> =
        (0..30).map(|i| format!("s{i}.{}", ["yaml", "json", "env", "ini"][i % 4])).collect();
    for (i, name) in names.iter().enumerate() {
        let text = match i % 4 {
            0 => format!("a: {i}\n"),
            1 => format!("{{\"a\": {i}}}"),
            2 => format!("A={i}\n"),
            _ => format!("[s]\na = {i}\n"),
        };
        fs::write(tree.join(name), text).unwrap();
        assert!(sops(&tools, &tree, None, &["-e", "-i", name]).status.success());
    }
    rules(&tree, &keys, true);
    let cmd = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_hyperseal"));
        c.args(["rekey", "--sops", "--recursive", "--threads", "1", "-i", p(&keys.keep.0), p(&tree)]);
        c
    };
    let listing = || {
        let mut now: Vec<String> =
            fs::read_dir(&tree).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        now.sort();
        now
    };
    let mut want: Vec<String> = names.iter().cloned().chain([".sops.yaml".to_owned()]).collect();
    want.sort();
    // Killed after a few milliseconds, again and again, until a run had time to change a file.
    for delay in [5u64, 10, 20, 40, 80] {
        let mut child = cmd().stderr(std::process::Stdio::null()).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay));
        let _ = child.kill();
        let _ = child.wait();
        let (second_names, rest): (Vec<String>, Vec<String>) = listing().into_iter().partition(|n| {
            names
                .iter()
                .any(|name| *n == format!(".{name}.hyperseal-old") || *n == format!(".{name}.hyperseal-link"))
        });
        assert_eq!(rest, want, "nothing left beside the files but a second name");
        assert!(second_names.len() <= 1, "one file at a time is replaced: {second_names:?}");
    }
    let o = cmd().output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("0 skipped, 0 failed"), "{err}");
    assert_eq!(listing(), want, "the last run removed any second name");
    // The same for a file that is already re-keyed (so never rewritten): its stale second
    // name is removed by a run that changes nothing.
    for second in ["hyperseal-old", "hyperseal-link"] {
        fs::copy(tree.join(&names[0]), tree.join(format!(".{}.{second}", names[0]))).unwrap();
        let o = cmd().arg("-q").output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{err}");
        assert_eq!(listing(), want, "a run with nothing to change removed .{}.{second}", names[0]);
        // And said so, as the age re-key does, even with -q.
        let said = format!(".{}.{second}) was removed", names[0]);
        let said_link = format!(".{}.{second}), was removed", names[0]);
        assert!(err.contains(&said) || err.contains(&said_link), "{err}");
    }
    for name in &names {
        let o = sops(&tools, &tree, Some(&keys.pq.0), &["-d", name]);
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        let o = sops(&tools, &tree, Some(&keys.gone.0), &["-d", name]);
        assert!(!o.status.success(), "{name}");
        let o = sops(&tools, &tree, Some(&keys.pq.0), &["updatekeys", "-y", name]);
        assert!(String::from_utf8_lossy(&o.stderr).contains("already up to date"), "{name}");
    }
}
