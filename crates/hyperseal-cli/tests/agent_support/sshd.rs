//! A throwaway sshd (Debian's openssh-server) on 127.0.0.1 with its own host key and user key,
//! for the tests that need a real ssh hop: the agent forwarded over `ssh -R`
//! (`agent_forward.rs`) and backups through an `ssh://` forced command (`backup_ssh.rs`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::{is_root, waited};

/// A running sshd, ended when dropped.
pub struct Sshd {
    pub dir: tempfile::TempDir,
    pub port: u16,
    child: Child,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Sshd {
    /// An sshd whose one authorized key is the user key, with `key_options` before it in
    /// `authorized_keys` (`command="…",restrict`, or nothing) and `config` lines added to its
    /// sshd_config. `None` (a failure under `make test`) where sshd is not installed or this is
    /// not root (sshd needs root to run logins with privilege separation).
    pub fn start(key_options: &str, config: &str) -> Option<Sshd> {
        let sshd = Path::new("/usr/sbin/sshd");
        if !sshd.exists() || !is_root("a real sshd") {
            eprintln!("note: /usr/sbin/sshd (Debian's openssh-server) not usable here; skipping");
            assert!(
                std::env::var_os("HYPERSEAL_REQUIRE_PEERS").is_none(),
                "a peer is missing under make test"
            );
            return None;
        }
        std::fs::create_dir_all("/run/sshd").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for key in ["host", "user"] {
            let o = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(d.join(key))
                .output()
                .unwrap();
            assert!(o.status.success(), "ssh-keygen: {o:?}");
        }
        let public = std::fs::read_to_string(d.join("user.pub")).unwrap();
        let line = match key_options {
            "" => public,
            options => format!("{options} {public}"),
        };
        std::fs::write(d.join("authorized_keys"), line).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let base = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host\nAuthorizedKeysFile {d}/authorized_keys\n\
             PidFile {d}/sshd.pid\nStrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             UsePAM no\nPermitRootLogin yes\n",
            d = d.display()
        );
        std::fs::write(d.join("sshd_config"), base + config).unwrap();
        let child = Command::new(sshd)
            .args(["-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let listening = || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
        assert!(waited(Duration::from_secs(20), 50, listening), "sshd did not start");
        Some(Sshd { dir, port, child })
    }

    /// The user's private key file.
    pub fn user_key(&self) -> PathBuf {
        self.dir.path().join("user")
    }
}
