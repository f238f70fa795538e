//! `hyperseal backup` on an S3 repository, configured the way the AWS tools are (AWS_* and
//! HYPERSEAL_REPO): a round trip as the repository's owner, and a backed-up host whose MinIO
//! user may only add objects: its backup succeeds, and every read it tries fails, each with
//! one error line and a hint.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{hs, keypair, ok, p};

// The backup crate's MinIO helper, shared rather than copied; not every helper is used here.
#[allow(dead_code)]
#[path = "../../hyperseal-backup/tests/suite/minio.rs"]
mod minio;

const WRITER: (&str, &str) = ("backup-host", "backup-host-secret-1");

/// `hyperseal backup ARGS` against `m` as `user`, the repository in HYPERSEAL_REPO.
fn backup(m: &minio::Minio, user: (&str, &str), repo: &str, args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hyperseal"));
    c.arg("backup").args(args);
    c.env("AWS_ACCESS_KEY_ID", user.0).env("AWS_SECRET_ACCESS_KEY", user.1);
    c.env("AWS_REGION", "us-east-1").env("AWS_ENDPOINT_URL", &m.endpoint).env("HYPERSEAL_REPO", repo);
    c.env_remove("HYPERSEAL_AGENT_SOCK");
    c.output().unwrap()
}

fn one_error(o: &Output, what: &str) -> String {
    assert!(!o.status.success(), "{what} succeeded");
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines[0].starts_with("hyperseal: error: "), "{what}: {err}");
    assert!(lines.iter().filter(|l| l.contains("error:")).count() == 1, "{what}: {err}");
    assert!(lines.iter().any(|l| l.starts_with("hyperseal: hint: ")), "{what}: {err}");
    err
}

/// A MinIO server and a reader's key in its scratch folder (identity file, recipient); `None`
/// (skipped) without MinIO.
fn with_reader() -> Option<(minio::Minio, String, String)> {
    let m = minio::Minio::start()?;
    let (id, public) = keypair(m.data(), "reader", "x25519");
    Some((m, id, public))
}

fn tree(root: &Path) {
    std::fs::create_dir_all(root.join("etc")).unwrap();
    std::fs::write(root.join("etc/app.conf"), "key = value\n".repeat(200)).unwrap();
    std::fs::write(root.join("db.bin"), crate::common::data(3 << 20, 7)).unwrap();
}

#[test]
fn a_host_that_may_only_add_objects_backs_up_to_s3_and_reads_nothing() {
    let Some((m, id, public)) = with_reader() else { return };
    let (root, dir) = (minio::root_user(), m.data());
    let repo = format!("s3://{}/hosts/web1", minio::BUCKET);
    let wkey = dir.join("writer.key");
    ok(&backup(&m, root, &repo, &["init", "-r", &public, "--writer-key", p(&wkey)]));
    // A second init is refused: the config is never replaced.
    let again = backup(&m, root, &repo, &["init", "-r", &public, "--writer-key", p(&dir.join("w2.key"))]);
    assert!(one_error(&again, "a second init").contains("never replaced"));

    m.user(WRITER.0, WRITER.1, &minio::write_only_policy("hosts/web1"));
    let src = dir.join("src");
    tree(&src);
    let made =
        backup(&m, WRITER, &repo, &["create", "--writer-key", p(&wkey), "--no-cache", "--json", p(&src)]);
    let out = ok(&made);
    assert!(out.contains("\"summary\"") || out.contains("snapshot"), "{out}");
    // Everything a reader does fails for the host, even with the reader's identity in hand:
    // the credentials stop it before any decryption.
    for args in [
        vec!["snapshots", "-i", &id],
        vec!["ls", "-i", &id, "latest"],
        vec!["cat", "-i", &id, "config"],
        vec!["restore", "-i", &id, "latest", "--target", p(&dir.join("stolen"))],
        vec!["prune", "-i", &id],
    ] {
        let err = one_error(&backup(&m, WRITER, &repo, &args), args[0]);
        assert!(err.contains("S3: hosts/web1/config: access denied"), "{args:?}: {err}");
    }
    assert!(!dir.join("stolen").exists());

    // The owner restores it whole.
    let target = dir.join("out");
    ok(&backup(&m, root, &repo, &["restore", "-i", &id, "latest", "--target", p(&target)]));
    for f in ["etc/app.conf", "db.bin"] {
        assert_eq!(
            std::fs::read(target.join("src").join(f)).unwrap(),
            std::fs::read(src.join(f)).unwrap(),
            "{f}"
        );
    }
    let listed = ok(&backup(&m, root, &repo, &["ls", "-i", &id, "latest"]));
    assert!(listed.contains("db.bin"), "{listed}");
    let check = backup(&m, root, &repo, &["check", "-i", &id, "--read-data"]);
    ok(&check);
}

#[test]
fn an_s3_repository_without_credentials_is_a_clear_error() {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hyperseal"));
    c.args(["backup", "snapshots", "--repo", "s3://bucket/prefix", "-i", "/nonexistent"]);
    c.env_remove("AWS_ACCESS_KEY_ID").env_remove("AWS_SECRET_ACCESS_KEY").env_remove("HYPERSEAL_AGENT_SOCK");
    let o = c.output().unwrap();
    let err = one_error(&o, "no credentials");
    assert!(err.contains("AWS_ACCESS_KEY_ID"), "{err}");
    let o = hs(&["backup", "snapshots", "--repo", "s3://", "-i", "/nonexistent"], None);
    assert!(!o.status.success());
}

/// A backup killed (SIGKILL) once its k-th pack is on the store, for k = 1, 2: the repository
/// still checks, and the next backup finishes, reusing what the killed one uploaded.
#[test]
fn a_backup_killed_on_s3_leaves_a_repository_the_next_one_finishes() {
    use hyperseal_backup::Store as _;
    let Some((m, id, public)) = with_reader() else { return };
    let (root, dir) = (minio::root_user(), m.data());
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    for i in 0..4u64 {
        std::fs::write(src.join(format!("f{i}.bin")), crate::common::data(12 << 20, 20 + i)).unwrap();
    }
    for k in 1..=2usize {
        let prefix = format!("killed{k}");
        let repo = format!("s3://{}/{prefix}", minio::BUCKET);
        let wkey = dir.join(format!("w{k}.key"));
        ok(&backup(&m, root, &repo, &["init", "-r", &public, "--writer-key", p(&wkey)]));
        let store = m.store(&prefix);
        let mut c = Command::new(env!("CARGO_BIN_EXE_hyperseal"));
        c.args(["backup", "create", "--repo", &repo, "--writer-key", p(&wkey), "--no-cache", "-q", p(&src)]);
        c.env("AWS_ACCESS_KEY_ID", root.0)
            .env("AWS_SECRET_ACCESS_KEY", root.1)
            .env("AWS_ENDPOINT_URL", &m.endpoint);
        let mut child =
            c.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
        // Polls the store, not the clock: the kill comes after the k-th pack and its id list (written
        // after the pack: a pack whose list is not stored yet cannot be reused, only checked), however
        // slow the machine.
        let packs = || store.list("data/").unwrap().iter().filter(|o| o.name.ends_with(".ids")).count();
        let mut finished = false;
        while packs() < k {
            if child.try_wait().unwrap().is_some() {
                finished = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        assert!(!finished || packs() >= k, "the backup ended before its pack {k}");
        ok(&backup(&m, root, &repo, &["check", "-i", &id, "--read-data"]));
        let next = ok(&backup(
            &m,
            root,
            &repo,
            &["create", "--writer-key", p(&wkey), "--no-cache", "--json", p(&src)],
        ));
        let summary: serde_json::Value = next
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .find(|v: &serde_json::Value| v["message_type"] == "summary")
            .unwrap();
        assert!(
            summary["chunks_reused"].as_u64().unwrap() > 0,
            "the killed run's packs were not reused: {summary}"
        );
        let target = dir.join(format!("out{k}"));
        ok(&backup(&m, root, &repo, &["restore", "-i", &id, "latest", "--target", p(&target)]));
        for i in 0..4u64 {
            let back = std::fs::read(target.join(format!("src/f{i}.bin"))).unwrap();
            assert!(back == crate::common::data(12 << 20, 20 + i), "f{i}.bin differs after kill {k}");
        }
        ok(&backup(&m, root, &repo, &["check", "-i", &id, "--read-data"]));
    }
}
