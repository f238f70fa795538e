//! No client of the agent sends a byte to a listener of another user's. A listener run as
//! `nobody` plants `hyperseal/agent.sock` in a shared, sticky `XDG_RUNTIME_DIR` first: `agent
//! add` refuses the directory before it connects, and where the planted socket is moved into a
//! directory of the user's own, `agent add`, `decrypt` and the library's `AgentIdentity` (under
//! Node, Python and `age-plugin-hyperseal` alike) refuse the listener by its credentials before
//! they send anything. `start` refuses a socket directory that another user could move away.
//! Other users come from `setpriv` (run as root); elsewhere those parts are skipped with a note.

use crate::agent_support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agent_support::{chmod, is_root, keypair, seal, BIN};

/// Accepts connections at a socket and writes, for each, how many bytes it was sent.
const LISTENER: &str = r#"
import socket, sys
path, log = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(8)
open(log, "a").close()
print("ready", flush=True)
while True:
    c, _ = s.accept()
    c.settimeout(3)
    got = b""
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            got += d
    except OSError:
        pass
    with open(log, "a") as f:
        f.write("%d\n" % len(got))
    c.close()
"#;

/// A listener of `nobody`'s at `dir/agent.sock` (`dir` is made nobody's), logging to `dir/log`.
struct Planted {
    child: Child,
    dir: PathBuf,
}

impl Planted {
    fn start(dir: &Path) -> Planted {
        std::fs::create_dir(dir).unwrap();
        chmod(dir, 0o700);
        std::os::unix::fs::chown(dir, Some(65534), Some(65534)).unwrap();
        let mut child = Command::new("setpriv")
            .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/python3", "-c", LISTENER])
            .arg(dir.join("agent.sock"))
            .arg(dir.join("log"))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ready");
        Planted { child, dir: dir.to_path_buf() }
    }

    /// What each connection so far sent, once `connections` have been logged.
    fn sent(&self, connections: usize) -> Vec<usize> {
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            let log = std::fs::read_to_string(self.dir.join("log")).unwrap_or_default();
            let sizes: Vec<usize> = log.lines().map(|l| l.parse().unwrap()).collect();
            if sizes.len() >= connections || Instant::now() > until {
                return sizes;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Planted {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn hyperseal(args: &[&str], cwd: &Path, env: &[(&str, &Path)]) -> std::process::Output {
    let mut c = Command::new("setsid");
    c.arg("-w").arg(BIN).args(args).current_dir(cwd).stdin(Stdio::null()).env_remove("HYPERSEAL_AGENT_SOCK");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn no_client_sends_a_byte_to_a_socket_another_user_planted() {
    if !is_root("what needs another user") {
        return;
    }
    let top = tempfile::tempdir().unwrap();
    let shared = top.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    chmod(&shared, 0o1777);
    let planted = Planted::start(&shared.join("hyperseal"));
    let (key, public) = keypair(top.path(), "k");
    seal(&public, b"secret", &top.path().join("f.hs"));

    // The default place, in the directory nobody made: refused before any connection.
    let o = hyperseal(&["agent", "add", key.to_str().unwrap()], top.path(), &[("XDG_RUNTIME_DIR", &shared)]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "added to a stranger: {stderr}");
    assert!(stderr.contains("belongs to another user") && stderr.contains("hint:"), "{stderr}");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(planted.sent(0), Vec::<usize>::new(), "a connection was made");

    // The same listener through a directory of the user's own: only its credentials are left.
    let mine = top.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    chmod(&mine, 0o700);
    let sock = mine.join("agent.sock");
    std::fs::rename(planted.dir.join("agent.sock"), &sock).unwrap();
    let env = [("HYPERSEAL_AGENT_SOCK", sock.as_path())];
    let o = hyperseal(&["agent", "add", key.to_str().unwrap()], top.path(), &env);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "added to a stranger: {stderr}");
    assert!(stderr.contains("runs as another user") && stderr.contains("nothing was sent"), "{stderr}");
    let o = hyperseal(&["decrypt", "f.hs"], top.path(), &env);
    assert!(!o.status.success() && o.stdout.is_empty());
    assert!(String::from_utf8_lossy(&o.stderr).contains("runs as another user"), "{o:?}");
    let stanza =
        hyperseal::format::Stanza { tag: "X25519".into(), args: vec!["x".into()], body: vec![0; 32] };
    let e = hyperseal::agent::AgentIdentity::new(&sock).unwrap_files(vec![vec![stanza]]).unwrap_err();
    assert!(e.to_string().contains("runs as another user"), "{e}");
    assert_eq!(planted.sent(3), vec![0, 0, 0], "bytes reached the stranger");
}

#[test]
fn start_refuses_a_socket_directory_another_user_could_move_away() {
    // An agent that starts where it should not is ended after a few seconds, as a failure.
    let start = |run: &Path| {
        let mut child = Command::new(BIN)
            .args(["agent", "start", "--foreground"])
            .env("XDG_RUNTIME_DIR", run)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        agent_support::waited(Duration::from_secs(5), 20, || child.try_wait().unwrap().is_some());
        let _ = child.kill();
        child.wait_with_output().unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    // Anyone may write in the runtime directory, and it is not sticky: anyone may rename
    // `hyperseal` away and put their own in its place after the check.
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    chmod(&run, 0o777);
    let o = start(&run);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "started under an open directory: {stderr}");
    assert!(stderr.contains("is not sticky") && stderr.contains("hint:"), "{stderr}");
    assert!(!run.join("hyperseal/agent.sock").exists());

    if is_root("what needs another user") {
        // Another user's runtime directory: its owner may rename anything in it.
        chmod(&run, 0o755);
        std::os::unix::fs::chown(&run, Some(65534), Some(65534)).unwrap();
        let o = start(&run);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "started under another user's directory: {stderr}");
        assert!(stderr.contains("belongs to another user (uid 65534)"), "{stderr}");
    }
}
