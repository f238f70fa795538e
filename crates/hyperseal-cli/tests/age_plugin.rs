//! age plugins against the real age (v1.3.1) and two real plugins: `age-plugin-batchpass` (from
//! age v1.3.1) and `age-plugin-hstest`, built by `make tools` from tests/plugin/main.go on age's
//! own `filippo.io/age/plugin` package. Both directions, armored and not, around 64 KiB; files
//! mixing plugin and native recipients; `-j NAME`; every UI request (`msg`, `confirm`,
//! `request-public`, `request-secret`) answered on a pseudo-terminal (util-linux `script`); the
//! labels extension; plugins that crash, hang (bounded by `HYPERSEAL_PLUGIN_TIMEOUT`), print
//! garbage or refuse; hostile plugin names and a plugin planted in the current directory.
//! Without the tools every test prints a note and passes.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common;
use common::{peers, tools_path, TOOLS};

/// age and the two plugins these tests run.
/// age (with the plugins the tests use) and a temporary folder for the test's files.
fn tools() -> Option<(PathBuf, tempfile::TempDir)> {
    let age = peers(&["age", "age-plugin-batchpass", "age-plugin-hstest"])?;
    Some((age, tempfile::tempdir().unwrap()))
}

/// `dir/plain` holding `n` bytes of test data.
fn plain_file(dir: &Path, n: usize) -> PathBuf {
    let plain = dir.join("plain");
    fs::write(&plain, data(n)).unwrap();
    plain
}

const HS: &str = env!("CARGO_BIN_EXE_hyperseal");

use common::{peer_cmd as cmd, peer_run as run};

fn data(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 13 + i / 65536) as u8).collect()
}

fn p(x: &Path) -> String {
    x.to_str().unwrap().to_string()
}

/// A fresh hstest key: (identity file, recipient).
fn hstest_key(dir: &Path, name: &str) -> (PathBuf, String) {
    let o = run(&Path::new(TOOLS).join("age-plugin-hstest"), &["--keygen"], &[]);
    let text = String::from_utf8(o.stdout).unwrap();
    let mut lines = text.lines();
    let (id, r) = (lines.next().unwrap().to_string(), lines.next().unwrap().to_string());
    assert!(id.starts_with("AGE-PLUGIN-HSTEST-1") && r.starts_with("age1hstest1"));
    let file = dir.join(name);
    fs::write(&file, format!("# hstest key\n{id}\n")).unwrap();
    (file, r)
}

/// [`tools`] and a fresh hstest key in the folder: (age, folder, identity file, recipient).
fn with_key() -> Option<(PathBuf, tempfile::TempDir, PathBuf, String)> {
    let (age, dir) = tools()?;
    let (id, r) = hstest_key(dir.path(), "hstest.key");
    Some((age, dir, id, r))
}

#[test]
fn hstest_plugin_both_directions() {
    let Some((age, dir, id, r)) = with_key() else { return };
    let d = dir.path();
    let (plain, ct, out) = (d.join("plain"), d.join("ct"), d.join("out"));
    for n in [0usize, 65535, 65536, 65537] {
        fs::write(&plain, data(n)).unwrap();
        for armor in [false, true] {
            let a: &[&str] = if armor { &["-a"] } else { &[] };
            let _ = (fs::remove_file(&ct), fs::remove_file(&out));
            let mut args = vec!["encrypt", "--format", "age", "-q", "-r", &r, "-o", ct.to_str().unwrap()];
            args.extend(a);
            args.push(plain.to_str().unwrap());
            run(Path::new(HS), &args, &[]);
            assert!(armor || fs::read(&ct).unwrap().starts_with(b"age-encryption.org/v1\n-> hstest-x25519 "));
            run(&age, &["-d", "-i", &p(&id), "-o", &p(&out), &p(&ct)], &[]);
            assert_eq!(fs::read(&out).unwrap(), data(n), "hyperseal→age n={n} armor={armor}");

            let _ = (fs::remove_file(&ct), fs::remove_file(&out));
            let mut args = vec!["-e", "-r", &r, "-o", ct.to_str().unwrap()];
            args.extend(a);
            args.push(plain.to_str().unwrap());
            run(&age, &args, &[]);
            run(Path::new(HS), &["decrypt", "-q", "-i", &p(&id), "-o", &p(&out), &p(&ct)], &[]);
            assert_eq!(fs::read(&out).unwrap(), data(n), "age→hyperseal n={n} armor={armor}");
        }
    }
}

#[test]
fn mixed_recipients_identity_files_and_j() {
    let Some((age, dir, hid, hr)) = with_key() else { return };
    let d = dir.path();
    let native = d.join("native.key");
    run(&Path::new(TOOLS).join("age-keygen"), &["-o", &p(&native)], &[]);
    let nr = String::from_utf8(run(&Path::new(TOOLS).join("age-keygen"), &["-y", &p(&native)], &[]).stdout)
        .unwrap();
    let nr = nr.trim();
    // One identity file holding a plugin identity and a native one.
    let both = d.join("both.keys");
    fs::write(
        &both,
        format!("{}\n{}", fs::read_to_string(&hid).unwrap(), fs::read_to_string(&native).unwrap()),
    )
    .unwrap();
    let plain = plain_file(d, 70000);
    let ct = d.join("ct");
    run(
        Path::new(HS),
        &["encrypt", "--format", "age", "-q", "-r", &hr, "-r", nr, "-o", &p(&ct), &p(&plain)],
        &[],
    );
    for id in [&hid, &native, &both] {
        let out = d.join("out-age");
        let _ = fs::remove_file(&out);
        run(&age, &["-d", "-i", &p(id), "-o", &p(&out), &p(&ct)], &[]);
        assert_eq!(fs::read(&out).unwrap(), data(70000));
    }
    let ct = d.join("ct-age");
    run(&age, &["-e", "-r", &hr, "-r", nr, "-o", &p(&ct), &p(&plain)], &[]);
    for id in [&hid, &native, &both] {
        let out = d.join("out-hs");
        let _ = fs::remove_file(&out);
        run(Path::new(HS), &["decrypt", "-q", "-i", &p(id), "-o", &p(&out), &p(&ct)], &[]);
        assert_eq!(fs::read(&out).unwrap(), data(70000));
    }
    // -j hstest (the identity without data) and -e -i with a plugin identity, both directions.
    for (enc, dec) in [("hs", "age"), ("age", "hs")] {
        let (ct, out) = (d.join(format!("j-{enc}")), d.join(format!("j-{enc}-out")));
        match enc {
            "hs" => run(
                Path::new(HS),
                &["encrypt", "--format", "age", "-q", "-j", "hstest", "-o", &p(&ct), &p(&plain)],
                &[],
            ),
            _ => run(&age, &["-e", "-j", "hstest", "-o", &p(&ct), &p(&plain)], &[]),
        };
        match dec {
            "age" => run(&age, &["-d", "-j", "hstest", "-o", &p(&out), &p(&ct)], &[]),
            _ => run(Path::new(HS), &["decrypt", "-q", "-j", "hstest", "-o", &p(&out), &p(&ct)], &[]),
        };
        assert_eq!(fs::read(&out).unwrap(), data(70000), "-j {enc}→{dec}");
    }
    let (ct, out) = (d.join("ei"), d.join("ei-out"));
    run(Path::new(HS), &["encrypt", "--format", "age", "-q", "-i", &p(&hid), "-o", &p(&ct), &p(&plain)], &[]);
    run(&age, &["-d", "-i", &p(&hid), "-o", &p(&out), &p(&ct)], &[]);
    assert_eq!(fs::read(&out).unwrap(), data(70000), "encrypt -i PLUGIN-IDENTITY");
}

#[test]
fn batchpass_both_directions() {
    let Some((age, dir)) = tools() else { return };
    let d = dir.path();
    let env = [("AGE_PASSPHRASE", "batch pass phrase"), ("AGE_PASSPHRASE_WORK_FACTOR", "12")];
    for armor in [false, true] {
        let a: &[&str] = if armor { &["-a"] } else { &[] };
        let plain = d.join("plain");
        fs::write(&plain, data(65537)).unwrap();
        let (ct, out) = (d.join(format!("hs{armor}")), d.join(format!("hs{armor}.out")));
        let mut args =
            vec!["encrypt", "--format", "age", "-q", "-j", "batchpass", "-o", ct.to_str().unwrap()];
        args.extend(a);
        args.push(plain.to_str().unwrap());
        run(Path::new(HS), &args, &env);
        assert!(armor || fs::read(&ct).unwrap().starts_with(b"age-encryption.org/v1\n-> scrypt "));
        run(&age, &["-d", "-j", "batchpass", "-o", &p(&out), &p(&ct)], &env);
        assert_eq!(fs::read(&out).unwrap(), data(65537));

        let (ct, out) = (d.join(format!("age{armor}")), d.join(format!("age{armor}.out")));
        let mut args = vec!["-e", "-j", "batchpass", "-o", ct.to_str().unwrap()];
        args.extend(a);
        args.push(plain.to_str().unwrap());
        run(&age, &args, &env);
        run(Path::new(HS), &["decrypt", "-q", "-j", "batchpass", "-o", &p(&out), &p(&ct)], &env);
        assert_eq!(fs::read(&out).unwrap(), data(65537));
    }
    // The plugin's own error (a wrong passphrase) is one clear line, and nothing is written.
    let ct = d.join("agefalse");
    let out = d.join("never");
    let o = cmd(
        Path::new(HS),
        &["decrypt", "-j", "batchpass", "-o", &p(&out), &p(&ct)],
        &[("AGE_PASSPHRASE", "wrong")],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.starts_with("hyperseal: error: plugin: age-plugin-batchpass"),
        "{err}"
    );
    assert!(!out.exists());
}

/// Runs `command` on a pseudo-terminal (util-linux `script`) typing `typed` into it.
fn on_terminal(command: &str, typed: &str, env: &[(&str, &str)]) -> Output {
    let path = tools_path();
    let env: Vec<_> = env.iter().copied().chain([("PATH", path.as_str())]).collect();
    common::on_terminal_env(command, typed, &env)
}

#[test]
fn every_ui_request_on_a_terminal() {
    let Some((_, dir, id, r)) = with_key() else { return };
    let d = dir.path();
    let plain = plain_file(d, 1000);
    let (ct, out) = (d.join("ct"), d.join("out"));
    let ui = [("HSTEST_MODE", "ui")];
    // confirm → "1" (yes), request-public → pub-ok, request-secret → sec-ok.
    let answers = "1\npub-ok\nsec-ok\n";
    let enc = format!("{HS} encrypt --format age -q -r {r} -o {} {}", p(&ct), p(&plain));
    let o = on_terminal(&enc, answers, &ui);
    let screen = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{screen}");
    for shown in
        ["hello from hstest", "proceed with hstest?", "yes please", "no thanks", "type pub-ok", "type sec-ok"]
    {
        assert!(screen.contains(shown), "{shown:?} not shown: {screen}");
    }
    let dec = format!("{HS} decrypt -q -i {} -o {} {}", p(&id), p(&out), p(&ct));
    let o = on_terminal(&dec, answers, &ui);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(fs::read(&out).unwrap(), data(1000));

    // Answering "no" makes the plugin refuse: one error, no file.
    fs::remove_file(&out).unwrap();
    let o = on_terminal(&dec, "2\n", &ui);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stdout).contains("confirmation refused"));
    assert!(!out.exists());
    // Without a terminal every request gets `fail`: the plugin refuses, nothing is written.
    let o = cmd(Path::new(HS), &["decrypt", "-i", &p(&id), "-o", &p(&out), &p(&ct)], &ui);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("age-plugin-hstest"));
    assert!(!out.exists());
}

#[test]
fn labels_are_enforced() {
    let Some((_, dir, _, r)) = with_key() else { return };
    let d = dir.path();
    let plain = plain_file(d, 10);
    let keygen = Path::new(TOOLS).join("age-keygen");
    let (classic, pq) = (d.join("classic.key"), d.join("pq.key"));
    run(&keygen, &["-o", &p(&classic)], &[]);
    run(&keygen, &["-pq", "-o", &p(&pq)], &[]);
    let public =
        |k: &Path| String::from_utf8(run(&keygen, &["-y", &p(k)], &[]).stdout).unwrap().trim().to_string();
    let pq_env = [("HSTEST_MODE", "pq")];
    // A plugin that says "postquantum" mixes with age1pq1… but not with a classic X25519 key;
    // without the label, the same plugin mixes with the classic key and not with the pq one.
    for (env, other, mixes) in
        [(&pq_env[..], &pq, true), (&pq_env, &classic, false), (&[], &classic, true), (&[], &pq, false)]
    {
        let out = d.join(format!("{}-{}", env.len(), other.file_name().unwrap().to_str().unwrap()));
        let (other_r, o, pl) = (public(other), p(&out), p(&plain));
        let o = cmd(
            Path::new(HS),
            &["encrypt", "--format", "age", "-q", "-r", &r, "-r", &other_r, "-o", &o, &pl],
            env,
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.success(), mixes, "{env:?} with {other_r}: {err}");
        assert_eq!(out.exists(), mixes, "{env:?} with {other_r}");
        if !env.is_empty() && !mixes {
            assert!(err.contains("incompatible recipients"), "{err}");
        }
    }
}

#[test]
fn misbehaving_plugins_give_one_clear_error_and_no_file() {
    let Some((age, dir, id, r)) = with_key() else { return };
    let d = dir.path();
    let plain = plain_file(d, 1000);
    let ct = d.join("ct");
    run(&age, &["-e", "-r", &r, "-o", &p(&ct), &p(&plain)], &[]);
    let out = d.join("never");
    for (mode, want) in [
        ("crash", "hstest crashed on purpose"),
        ("hang", "no answer within 2 s"),
        ("garbage", "not a stanza"),
        ("error", "hstest refuses on purpose"),
    ] {
        let env = [("HSTEST_MODE", mode), ("HYPERSEAL_PLUGIN_TIMEOUT", "2")];
        for args in [
            vec!["decrypt", "-i", id.to_str().unwrap(), "-o", out.to_str().unwrap(), ct.to_str().unwrap()],
            vec![
                "encrypt",
                "--format",
                "age",
                "-r",
                &r,
                "-o",
                out.to_str().unwrap(),
                plain.to_str().unwrap(),
            ],
        ] {
            let started = std::time::Instant::now();
            let o = cmd(Path::new(HS), &args, &env);
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(!o.status.success(), "{mode} {}", args[0]);
            assert_eq!(err.lines().count(), 1, "{mode}: {err}");
            assert!(
                err.starts_with("hyperseal: error: plugin: age-plugin-hstest") && err.contains(want),
                "{mode}: {err}"
            );
            assert!(!out.exists(), "{mode}: no output file");
            assert!(started.elapsed().as_secs() < 30, "{mode}: bounded");
        }
    }
}

#[test]
fn hostile_names_and_the_current_directory() {
    let Some((_, dir)) = tools() else { return };
    let d = dir.path();
    let plain = plain_file(d, 10);
    let out = d.join("never");
    for name in ["../../bin/sh", "a/b", "x y", "", "$(touch pwned)"] {
        let o =
            cmd(Path::new(HS), &["encrypt", "--format", "age", "-j", name, "-o", &p(&out), &p(&plain)], &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains("invalid plugin name"), "{name:?}: {err}");
        assert!(!out.exists());
    }
    // A plugin planted in the current directory is never run, whatever PATH says about ".".
    let marker = d.join("planted-plugin-ran");
    let planted = d.join("age-plugin-planted");
    fs::write(&planted, format!("#!/bin/sh\ntouch {}\n", p(&marker))).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&planted, fs::Permissions::from_mode(0o755)).unwrap();
    let o = Command::new(HS)
        .args(["encrypt", "--format", "age", "-j", "planted", "-o", &p(&out), &p(&plain)])
        .current_dir(d)
        .env("PATH", format!(":.:{}", tools_path()))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("age-plugin-planted not found on PATH"), "{err}");
    assert!(err.contains("hint: plugins are programs named age-plugin-NAME"), "{err}");
    assert!(!marker.exists(), "the planted plugin never ran");
    assert!(!out.exists());
}

/// A tree of files for a plugin identity that asks for a PIN once per run (as a hardware
/// key's plugin does) is re-keyed with one run and one prompt, not one per file; files the
/// plugin does not open never wake it, and the ones it opens keep their payload byte for byte.
#[test]
fn a_tree_is_unlocked_with_one_plugin_run() {
    let Some((_, dir, id, r)) = with_key() else { return };
    let d = dir.path();
    let (new_id, new_r) = common::keypair(d, "new.key", "x25519");
    let (_, other_r) = common::keypair(d, "other.key", "x25519");
    let tree = d.join("tree");
    let mut ours = Vec::new();
    for i in 0..24 {
        let sub = tree.join(format!("d{}", i % 3));
        fs::create_dir_all(&sub).unwrap();
        let (plain, ct) = (d.join(format!("plain{i}")), sub.join(format!("f{i}.age")));
        fs::write(&plain, data(100 + i * 997)).unwrap();
        run(Path::new(HS), &["encrypt", "--format", "age", "-q", "-r", &r, "-o", &p(&ct), &p(&plain)], &[]);
        ours.push((ct, data(100 + i * 997)));
    }
    let theirs = tree.join("d0/other.age");
    run(Path::new(HS), &["encrypt", "-q", "-r", &other_r, "-o", &p(&theirs), &p(&d.join("plain0"))], &[]);
    let theirs_before = fs::read(&theirs).unwrap();

    let count = d.join("count");
    let env = [("HSTEST_MODE", "pin"), ("HSTEST_COUNT", count.to_str().unwrap())];
    let rekey = format!("{HS} rekey -q --recursive -i {} --add {new_r} {}", p(&id), p(&tree));
    // The PIN, then wrong ones: a second prompt gets a wrong PIN and fails (instead of waiting).
    let typed = format!("1234\n{}", "0000\n".repeat(40));
    let o = on_terminal(&rekey, &typed, &env);
    let screen = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{screen}");
    assert!(screen.contains("PIN for hstest"), "{screen}");
    assert_eq!(fs::read_to_string(&count).unwrap(), "run\nprompt\n", "one plugin run, one prompt");
    for (ct, plain) in &ours {
        let out = d.join("out");
        let _ = fs::remove_file(&out);
        run(Path::new(HS), &["decrypt", "-q", "-i", &new_id, "-o", &p(&out), &p(ct)], &[]);
        assert_eq!(&fs::read(&out).unwrap(), plain, "{}", ct.display());
    }
    assert_eq!(fs::read(&theirs).unwrap(), theirs_before, "a file the plugin does not open is untouched");

    // Several files named on the command line (no --recursive) share one run too.
    fs::remove_file(&count).unwrap();
    let (_, third_r) = common::keypair(d, "third.key", "x25519");
    let files: Vec<String> = ours.iter().take(5).map(|(ct, _)| p(ct)).collect();
    let rekey = format!("{HS} rekey -q -i {} --add {third_r} {}", p(&id), files.join(" "));
    let o = on_terminal(&rekey, &typed, &env);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(fs::read_to_string(&count).unwrap(), "run\nprompt\n");

    // A full recipient list that keeps the plugin's own recipient: the lock-out check needs no
    // run per file either (the batch was asked about the recipients once).
    fs::remove_file(&count).unwrap();
    let files: Vec<String> = ours.iter().take(8).map(|(ct, _)| p(ct)).collect();
    let rekey = format!("{HS} rekey -q -i {} -r {r} -r {other_r} {}", p(&id), files.join(" "));
    let o = on_terminal(&rekey, &typed, &env);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(fs::read_to_string(&count).unwrap(), "run\nprompt\n", "one run and one PIN for 8 files");
}
