//! The identity agent against other users and hostile clients: another uid is refused even
//! through a socket made 0777 (`SO_PEERCRED`); `start` refuses a symlinked, foreign or open
//! socket directory; clients that send a 4 GiB length, one byte a second, garbage, or open
//! 1,000 connections at once lose their own connections while a well-formed client is served
//! and the agent's memory stays bounded; and the agent, started by an ordinary user, is not
//! dumpable (its /proc/PID/fd belongs to root). Other users come from `setpriv` (run as root).

use crate::agent_support;

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::process::Command;
use std::time::{Duration, Instant};

use agent_support::{chmod, is_root, keypair, proc_status, seal, Agent, BIN};

#[test]
fn another_user_is_refused_even_through_an_open_socket() {
    if !is_root("what needs another user") {
        return;
    }
    let a = Agent::start(&[]);
    a.add_sealed("k", &[], b"not for nobody", "f.hs");
    // Everything on the way made reachable for nobody: only the peer check is left.
    for (p, mode) in
        [(a.dir.path().to_path_buf(), 0o755), (a.path("run"), 0o755), (a.path("run/hyperseal"), 0o755)]
    {
        chmod(&p, mode);
    }
    chmod(&a.sock(), 0o777);
    chmod(&a.path("f.hs"), 0o644);
    let o = Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
        .arg(crate::common::others::binary())
        .args(["decrypt", "f.hs"])
        .current_dir(a.dir.path())
        .env("HYPERSEAL_AGENT_SOCK", a.sock())
        .output()
        .unwrap();
    assert!(!o.status.success(), "nobody was answered");
    let stderr = String::from_utf8_lossy(&o.stderr);
    // nobody's own client refuses first (the agent runs as another user than nobody)...
    assert!(stderr.contains("runs as another user"), "{stderr}");
    assert!(o.stdout.is_empty());
    // ...and a client that sends anyway is closed on by the agent without an answer.
    let mut request = Vec::new();
    hyperseal::agent::proto::write_message(&mut request, &hyperseal::agent::proto::Request::List.encode())
        .unwrap();
    let raw = "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\ns.settimeout(5)\n\
        try:\n s.sendall(bytes.fromhex(sys.argv[2]))\n print(len(s.recv(65536)))\n\
        except (BrokenPipeError, ConnectionResetError):\n print(0)";
    let o = Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/python3", "-c", raw])
        .arg(a.sock())
        .arg(hex::encode(&request))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "0", "nobody was answered: {o:?}");
    // The owner is still served.
    assert_eq!(a.ok(&["decrypt", "f.hs"]), b"not for nobody");
}

#[test]
fn start_refuses_a_symlinked_foreign_or_open_directory() {
    let start = |run: &std::path::Path| {
        Command::new(BIN)
            .args(["agent", "start", "--foreground"])
            .env("XDG_RUNTIME_DIR", run)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    chmod(&elsewhere, 0o700);
    std::os::unix::fs::symlink(&elsewhere, run.join("hyperseal")).unwrap();
    let o = start(&run);
    assert!(!o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("is a symbolic link") && stderr.contains("hint:"), "{stderr}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0, "nothing made through the link");

    std::fs::remove_file(run.join("hyperseal")).unwrap();
    std::fs::create_dir(run.join("hyperseal")).unwrap();
    chmod(&run.join("hyperseal"), 0o755);
    let o = start(&run);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("mode is not 0700"), "{o:?}");

    if is_root("what needs another user") {
        chmod(&run.join("hyperseal"), 0o700);
        std::os::unix::fs::chown(run.join("hyperseal"), Some(65534), Some(65534)).unwrap();
        let o = start(&run);
        assert!(!o.status.success());
        assert!(String::from_utf8_lossy(&o.stderr).contains("belongs to another user"), "{o:?}");
    }
}

#[test]
fn hostile_clients_lose_their_own_connections_while_a_good_one_is_served() {
    let a = Agent::start(&[]);
    let (key, public) = keypair(a.dir.path(), "k");
    let data = b"served all along".to_vec();
    seal(&public, &data, &a.path("f.hs"));
    a.ok(&["agent", "add", key.to_str().unwrap()]);
    let before = proc_status(&format!("/proc/{}/status", a.pid()), "VmRSS");
    let sock = a.sock();

    // A 4 GiB length prefix: refused from the prefix, the connection closed.
    let mut huge = UnixStream::connect(&sock).unwrap();
    huge.write_all(&[0xff, 0xff, 0xff, 0xff, 1, 2, 3]).unwrap();
    huge.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut answer = Vec::new();
    let _ = huge.read_to_end(&mut answer);
    assert!(String::from_utf8_lossy(&answer).contains("longer than 80 MiB"), "{answer:?}");

    // Garbage of every shape: the agent answers a refusal or closes, and goes on.
    for junk in [&b"GET / HTTP/1.1\r\n\r\n"[..], &[0, 0, 0, 2, 9, 9], &[0, 0, 0, 1, 1], &[0; 3]] {
        let mut c = UnixStream::connect(&sock).unwrap();
        let _ = c.write_all(junk);
        let _ = c.shutdown(std::net::Shutdown::Write);
        c.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
        let _ = c.read_to_end(&mut Vec::new());
    }

    // One byte a second, in the background.
    let slow_sock = sock.clone();
    let slow = std::thread::spawn(move || {
        let mut c = UnixStream::connect(&slow_sock).unwrap();
        for b in [0u8, 0, 0, 9, 1, 3] {
            if c.write_all(&[b]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    });
    // 1,000 connections at once, held open without a request.
    let crowd: Vec<UnixStream> = (0..1000).filter_map(|_| UnixStream::connect(&sock).ok()).collect();
    assert!(crowd.len() >= 100, "only {} connections", crowd.len());

    // Meanwhile a well-formed client is served, promptly.
    let t = Instant::now();
    for _ in 0..3 {
        assert_eq!(a.ok(&["decrypt", "f.hs"]), data);
    }
    assert!(t.elapsed() < Duration::from_secs(8), "served in {:?}", t.elapsed());
    let during = proc_status(&format!("/proc/{}/status", a.pid()), "VmRSS");
    drop(crowd);
    slow.join().unwrap();
    assert_eq!(a.ok(&["decrypt", "f.hs"]), data);
    let after = proc_status(&format!("/proc/{}/status", a.pid()), "VmRSS");
    // Bounded: threads' stacks for the capped connections and nothing that grows with them.
    assert!(
        during < before + 64 * 1024 && after < before + 64 * 1024,
        "RSS {before} → {during} → {after} KiB"
    );
}

#[test]
fn the_agent_is_not_dumpable() {
    if !is_root("what needs another user") {
        return;
    }
    // An ordinary user's agent: its own runtime directory, the binary it can run.
    let dir = tempfile::tempdir().unwrap();
    chmod(dir.path(), 0o755);
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    chmod(&run, 0o700);
    std::os::unix::fs::chown(&run, Some(65534), Some(65534)).unwrap();
    let a = Agent::start_in(dir, &["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"], &[]);
    let pid = a.pid();
    // The kernel makes a non-dumpable process's /proc entries root's.
    let meta = std::fs::metadata(format!("/proc/{pid}/fd")).unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&meta), 0, "/proc/{pid}/fd belongs to uid {}", {
        std::os::unix::fs::MetadataExt::uid(&meta)
    });
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    assert!(status.lines().any(|l| l.starts_with("Uid:") && l.contains("65534")), "{status}");
    // And its socket is the user's, mode 0600.
    let sock = std::fs::symlink_metadata(a.sock()).unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&sock), 65534);
    assert_eq!(sock.permissions().mode() & 0o777, 0o600);
}

#[test]
fn large_requests_share_one_memory_budget() {
    let a = Agent::start(&[]);
    // Three clients announce 80 MiB each and send little: two fit the agent's budget for
    // bodies (two of the largest messages), the third is refused at once.
    let big = (80u32 << 20).to_be_bytes();
    let clients: Vec<UnixStream> = (0..3)
        .map(|_| {
            let mut c = UnixStream::connect(a.sock()).unwrap();
            c.write_all(&big).unwrap();
            // The agent may refuse on the length alone and close before these arrive.
            let _ = c.write_all(&[1, 1]);
            c.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
            c
        })
        .collect();
    let busy = clients
        .into_iter()
        .filter(|c| {
            let mut answer = Vec::new();
            let _ = (&*c).read_to_end(&mut answer);
            String::from_utf8_lossy(&answer).contains("busy")
        })
        .count();
    assert_eq!(busy, 1);
    let before = proc_status(&format!("/proc/{}/status", a.pid()), "VmRSS");
    assert!(before < 64 * 1024, "the announced bodies were not allocated up front: {before} KiB");
}
