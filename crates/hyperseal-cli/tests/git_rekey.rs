//! `hyperseal git rekey` with the real git and age v1.3.1: a member removed from
//! `.age-recipients` can no longer open the staged blobs of the files under it, the remaining
//! member can, each payload after the header is byte for byte the old one, exactly those paths
//! are staged (never `.age-recipients`, never a file under an unchanged recipients file),
//! `--dry-run` writes nothing, `--rotate` gives new payloads, and a locked repository is refused.

use crate::common;
use crate::git_support;

use common::peer;
use git_support::{age_open, git_tmp, git_tmp_and, have_git, Repo, AGE_INTRO};

const FILES: usize = 6;

/// age-keygen's key and recipient, `DIR/NAME.txt`.
fn age_key(dir: &std::path::Path, name: &str) -> Option<(String, String)> {
    let tools = peer("age")?.parent()?.to_path_buf();
    let (key, public) = common::age_keygen(&tools, dir, name, false);
    Some((key.to_str()?.to_string(), public))
}

/// `team/` (alice and bob, FILES marked files) and `ops/` (alice alone, one file), committed.
fn team_repo(tmp: &std::path::Path) -> Option<(Repo, String, String, String)> {
    let (alice, alice_pub) = age_key(tmp, "alice")?;
    let (bob, bob_pub) = age_key(tmp, "bob")?;
    let r = Repo::init(tmp, "r");
    r.hs_ok(&["git", "init", "*.env"]);
    r.write("team/.age-recipients", format!("# the team\n{alice_pub}\n{bob_pub}\n").as_bytes());
    r.write("ops/.age-recipients", format!("{alice_pub}\n").as_bytes());
    r.hs_ok(&["git", "unlock", "-i", &alice]);
    for i in 0..FILES {
        r.write(&format!("team/s{i}.env"), format!("TOKEN=team-secret-{i}\n").as_bytes());
    }
    r.write("ops/o.env", b"TOKEN=ops-secret\n");
    r.commit_all("team");
    Some((r, alice, bob, alice_pub))
}

/// The staged paths (`git diff --cached --name-only`).
fn staged(r: &Repo) -> Vec<String> {
    r.ok(&["diff", "--cached", "--name-only"]).lines().map(str::to_string).collect()
}

/// Bytes after the age header (the line `--- MAC` ends it).
fn payload(blob: &[u8]) -> &[u8] {
    let at = blob.windows(4).position(|w| w == b"\n---").expect("a header MAC line");
    let end = at + 1 + blob[at + 1..].iter().position(|b| *b == b'\n').unwrap() + 1;
    &blob[end..]
}

#[test]
fn removing_a_member_rekeys_only_the_headers_under_that_recipients_file() {
    let Some((tmp, age)) = git_tmp_and("age") else { return };
    let Some((r, alice, bob, alice_pub)) = team_repo(tmp.path()) else { return };
    let before: Vec<Vec<u8>> = (0..FILES).map(|i| r.blob(&format!("HEAD:team/s{i}.env"))).collect();
    assert_eq!(age_open(&age, &bob, &before[0]), b"TOKEN=team-secret-0\n", "bob is a member first");
    r.write("team/.age-recipients", format!("# the team\n{alice_pub}\n").as_bytes());

    let o = r.hs(&["git", "rekey", "--dry-run"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), FILES);
    assert!(staged(&r).is_empty(), "a dry run stages nothing");

    let o = r.hs(&["git", "rekey"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("payloads unchanged") && err.contains("can still read every earlier commit"),
        "{err}"
    );
    let spool = r.dir.join(".git/hyperseal-spool");
    let left: Vec<_> =
        std::fs::read_dir(&spool).map(|d| d.flatten().map(|e| e.file_name()).collect()).unwrap_or_default();
    assert!(left.is_empty(), "the new blobs' files are gone after the run: {left:?}");
    let want: Vec<String> = (0..FILES).map(|i| format!("team/s{i}.env")).collect();
    assert_eq!(staged(&r), want, "exactly the re-keyed paths: not ops/, not .age-recipients");
    for (i, old) in before.iter().enumerate() {
        let new = r.blob(&format!(":team/s{i}.env"));
        assert!(new.starts_with(AGE_INTRO));
        assert_ne!(&new, old);
        assert_eq!(payload(&new), payload(old), "the payload bytes after the header are the old ones");
        assert_eq!(age_open(&age, &alice, &new), format!("TOKEN=team-secret-{i}\n").as_bytes());
        let bob_try = std::process::Command::new(&age)
            .args(["-d", "-i", &bob])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().unwrap().write_all(&new)?;
                c.wait_with_output()
            })
            .unwrap();
        assert!(!bob_try.status.success(), "the removed member's key no longer opens the staged blob");
    }
    // The work tree's plaintext matches the new blobs: nothing shows as modified but the
    // recipients file the user stages next.
    assert_eq!(
        r.ok(&["status", "--porcelain", "--untracked-files=no"])
            .lines()
            .filter(|l| l.starts_with(' '))
            .count(),
        1
    );
    r.ok(&["add", "team/.age-recipients"]);
    r.ok(&["commit", "-qm", "bob left"]);
    r.hs_ok(&["git", "verify", "HEAD"]);
    assert_eq!(r.status(), "");
    r.assert_no_blob_holds(b"team-secret-");
}

#[test]
fn rotate_gives_new_payloads_and_all_takes_every_marked_path() {
    let Some((tmp, age)) = git_tmp_and("age") else { return };
    let Some((r, alice, _, _)) = team_repo(tmp.path()) else { return };
    let o = r.hs(&["git", "rekey"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("nothing to re-key"));
    assert!(staged(&r).is_empty());
    r.hs_ok(&["git", "rekey", "--all", "--rotate"]);
    assert_eq!(staged(&r).len(), FILES + 1, "every marked path");
    let (old, new) = (r.blob("HEAD:ops/o.env"), r.blob(":ops/o.env"));
    assert_ne!(payload(&old), payload(&new), "a rotation seals a new payload");
    assert_eq!(age_open(&age, &alice, &new), b"TOKEN=ops-secret\n");
    r.assert_no_blob_holds(b"team-secret-");
}

#[test]
fn a_locked_repository_is_refused_and_nothing_is_staged() {
    let Some(tmp) = git_tmp() else { return };
    let Some((r, _, _, alice_pub)) = team_repo(tmp.path()) else { return };
    r.hs_ok(&["git", "lock"]);
    r.write("team/.age-recipients", format!("{alice_pub}\n").as_bytes());
    let o = r.hs(&["git", "rekey"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("hyperseal: error:") && err.contains("locked"), "{err}");
    assert!(staged(&r).is_empty());
}

/// Files sealed to a plugin's recipient (the test plugin, age-plugin-hstest, as a security
/// key's plugin would be) and an X25519 key: removing the X25519 key re-keys every file with
/// one run of the plugin (one PIN, one touch), and a one-step clone opens every file with one
/// run too.
#[test]
fn a_plugin_runs_once_for_a_rekey_and_for_a_clone() {
    if !have_git() || common::peers(&["age-plugin-hstest"]).is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let o = std::process::Command::new(std::path::Path::new(common::TOOLS).join("age-plugin-hstest"))
        .arg("--keygen")
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    let (id, plugin_r) = text.split_once('\n').unwrap();
    let id_file = d.join("hstest.key");
    std::fs::write(&id_file, format!("{id}\n")).unwrap();
    let (_, x_pub) = common::keypair(d, "x", "x25519");
    let r = Repo::init(d, "r");
    // The test plugin found on PATH, its runs counted where `HSTEST_COUNT` says.
    let tools = common::tools_path();
    let ok = |args: &[&str], count: Option<&std::path::Path>| {
        let mut env = vec![("PATH", std::ffi::OsStr::new(&tools))];
        env.extend(count.map(|c| ("HSTEST_COUNT", c.as_os_str())));
        let o = r.hs_env(args, &env);
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    ok(&["git", "init", "*.env"], None);
    r.write(".age-recipients", format!("{}\n{x_pub}\n", plugin_r.trim()).as_bytes());
    ok(&["git", "unlock", "-i", id_file.to_str().unwrap()], None);
    for i in 0..12 {
        r.write(&format!("d{}/s{i}.env", i % 3), format!("TOKEN=plugin-secret-{i}\n").as_bytes());
    }
    r.commit_all("secrets");

    r.write(".age-recipients", format!("{}\n", plugin_r.trim()).as_bytes());
    let count = d.join("count");
    let said = ok(&["git", "rekey"], Some(&count));
    assert!(said.contains("re-keyed and staged 12 marked file(s)"), "{said}");
    assert!(said.contains("12 from 2 to 1 recipient stanza(s)"), "{said}");
    assert_eq!(std::fs::read_to_string(&count).unwrap(), "run\n", "one plugin run for 12 files");
    for i in 0..12 {
        let blob = r.blob(&format!(":d{}/s{i}.env", i % 3));
        assert_eq!(blob.windows(4).filter(|w| w == b"\n-> ").count(), 1, "one stanza left in s{i}");
    }
    r.ok(&["add", ".age-recipients"]);
    r.ok(&["commit", "-qm", "x left"]);

    let count = d.join("count-clone");
    let copy = d.join("copy");
    let args =
        ["git", "clone", "-i", id_file.to_str().unwrap(), r.dir.to_str().unwrap(), copy.to_str().unwrap()];
    ok(&args, Some(&count));
    assert_eq!(std::fs::read_to_string(&count).unwrap(), "run\n", "one plugin run for 12 files");
    assert_eq!(std::fs::read(copy.join("d1/s7.env")).unwrap(), b"TOKEN=plugin-secret-7\n");
}
