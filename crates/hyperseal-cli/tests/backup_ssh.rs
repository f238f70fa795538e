//! `--repo ssh://…` through a real sshd (Debian's openssh-server, started on 127.0.0.1 with a
//! throwaway host key and user key: `agent_support/sshd.rs`) whose authorized_keys line runs
//! `hyperseal backup serve --append-only` as a forced command: a backup goes through, every
//! reader verb through the same key is refused by the server, and the folder restores byte for
//! byte. Skipped with a note where sshd is missing or this is not root; under
//! HYPERSEAL_REQUIRE_PEERS that is a failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::agent_support::sshd::Sshd;
use crate::agent_support::BIN;
use crate::common::{keypair, ok, p};

/// An sshd whose one key runs `forced`.
fn start_sshd(forced: &str) -> Option<Sshd> {
    Sshd::start(&format!("command=\"{forced}\",restrict"), "")
}

impl Sshd {
    /// `HYPERSEAL_BACKUP_SSH`: ssh with this server's user key and no prompt or known host.
    fn ssh_program(&self) -> String {
        format!(
            "ssh -F /dev/null -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes \
             -o LogLevel=ERROR -i {}",
            self.user_key().display()
        )
    }
}

/// `hyperseal backup ARGS` with `ssh` as HYPERSEAL_BACKUP_SSH.
fn backup(ssh: &str, args: &[&str]) -> Output {
    let mut c = Command::new(BIN);
    c.arg("backup").args(args).env("HYPERSEAL_BACKUP_SSH", ssh);
    c.env_remove("HYPERSEAL_AGENT_SOCK").env_remove("HYPERSEAL_REPO").stdin(Stdio::null());
    c.output().unwrap()
}

fn files(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<(PathBuf, Vec<u8>)> = ["etc/app.conf", "db.bin", "empty"]
        .iter()
        .map(|n| (PathBuf::from(n), std::fs::read(root.join(n)).unwrap()))
        .collect();
    out.sort();
    out
}

#[test]
fn a_host_backs_up_through_an_append_only_forced_command_and_reads_nothing() {
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let repo = w.join("repo");
    let forced = format!("{BIN} backup serve --append-only {}", repo.display());
    let Some(sshd) = start_sshd(&forced) else { return };
    let ssh = sshd.ssh_program();
    let (id, public) = keypair(w, "reader", "x25519");
    let wkey = w.join("writer.key");
    ok(&backup(&ssh, &["init", "--repo", p(&repo), "-r", &public, "--writer-key", p(&wkey)]));
    let src = w.join("src");
    std::fs::create_dir_all(src.join("etc")).unwrap();
    std::fs::write(src.join("etc/app.conf"), "key = value\n".repeat(200)).unwrap();
    std::fs::write(src.join("db.bin"), crate::common::data(3 << 20, 11)).unwrap();
    std::fs::write(src.join("empty"), b"").unwrap();
    // The path in the URL is the client's wish; the forced command decides.
    let url = format!("ssh://root@127.0.0.1:{}/anywhere/else", sshd.port);
    ok(&backup(&ssh, &["create", "-q", "--no-cache", "--repo", &url, "--writer-key", p(&wkey), p(&src)]));
    let again =
        backup(&ssh, &["create", "--json", "--no-cache", "--repo", &url, "--writer-key", p(&wkey), p(&src)]);
    let text = ok(&again);
    let last = text.lines().rfind(|l| l.contains("\"summary\"")).unwrap_or_default();
    let summary: serde_json::Value = serde_json::from_str(last).unwrap();
    assert_eq!(summary["chunks_new"], 0, "{summary}");
    // The same key cannot read: the server refuses the config, one error line and a hint.
    let read = backup(&ssh, &["snapshots", "--repo", &url, "-i", &id]);
    assert!(!read.status.success());
    let err = String::from_utf8_lossy(&read.stderr);
    assert!(err.starts_with("hyperseal: error: ") && err.contains("append-only"), "{err}");
    assert_eq!(err.lines().filter(|l| l.contains("error:")).count(), 1, "{err}");
    assert!(err.lines().any(|l| l.starts_with("hyperseal: hint: ")), "{err}");
    let out = w.join("out");
    ok(&backup(&ssh, &["restore", "--repo", p(&repo), "-i", &id, "latest", "--target", p(&out)]));
    assert_eq!(files(&src), files(&out.join("src")));
}

#[test]
fn a_server_that_is_not_there_is_named_with_a_hint() {
    let ssh = "ssh -F /dev/null -o BatchMode=yes -o ConnectTimeout=5 -o LogLevel=ERROR";
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("ssh://127.0.0.1:{port}/srv/repo");
    let o = backup(ssh, &["unlock", "--repo", &url]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with(&format!("hyperseal: error: {url}")), "{err}");
    assert!(err.lines().any(|l| l.starts_with("hyperseal: hint: ")), "{err}");
}

/// An `ssh` that exits before reading a byte (a refused login, a missing program): each run
/// fails with one error line and a hint, never dies of SIGPIPE silently (the CLI keeps
/// SIGPIPE's default action for `| head`; the store's writing thread blocks it).
#[test]
fn an_ssh_that_exits_at_once_is_an_error_not_a_silent_death() {
    for _ in 0..10 {
        let o = backup("false", &["unlock", "--repo", "ssh://nowhere/srv/repo"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{:?} {err}", o.status);
        assert!(err.starts_with("hyperseal: error: ssh://nowhere/srv/repo"), "{err}");
        assert!(err.lines().any(|l| l.starts_with("hyperseal: hint: ")), "{err}");
    }
}
