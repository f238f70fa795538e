//! The agent used from a remote host through a real `sshd` (Debian's openssh-server, started
//! on 127.0.0.1 by the test with a throwaway host key and user key): `hyperseal agent forward
//! build1` gives the socket that `ssh -R` carries, and commands run over ssh (the
//! "remote" host) decrypt through it. Only headers cross (counted by a relay in between), a key
//! without the grant is refused with the command that would grant it, a forwarded use is
//! confirmed by the askpass program, `ssh -R` of the main socket is refused, `ssh -L` of it (run
//! from the other host, so sshd connects) is served as a forward from an unknown host, and a
//! forward's socket goes when its ssh ends.

use crate::agent_support;
use crate::common;

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use agent_support::{keypair, waited, Agent, BIN};

use agent_support::sshd::Sshd;

/// `Sshd` as these tests start it: forwarding of Unix sockets allowed.
fn start_sshd() -> Option<Sshd> {
    Sshd::start("", "AllowStreamLocalForwarding yes\nStreamLocalBindUnlink yes\n")
}

impl Sshd {
    /// `ssh -R remote:local 127.0.0.1 COMMAND`, run to its end.
    fn run(&self, remote: &Path, local: &Path, command: &str) -> Output {
        self.ssh(remote, local, command).output().unwrap()
    }

    fn ssh(&self, remote: &Path, local: &Path, command: &str) -> Command {
        let mut c = self.client();
        c.arg("-R").arg(format!("{}:{}", remote.display(), local.display())).arg("127.0.0.1").arg(command);
        c
    }

    /// `ssh -N -L here:there 127.0.0.1` as the other host runs it: a socket `here` whose
    /// connections this host's sshd carries to `there`. Ended when dropped.
    fn local_forward(&self, here: &Path, there: &Path) -> Forwarding {
        let child = self
            .client()
            .arg("-N")
            .arg("-L")
            .arg(format!("{}:{}", here.display(), there.display()))
            .arg("127.0.0.1")
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let forwarding = Forwarding(child);
        assert!(
            waited(Duration::from_secs(20), 50, || here.exists()),
            "ssh -L did not open {}",
            here.display()
        );
        forwarding
    }

    fn client(&self) -> Command {
        let mut c = Command::new("ssh");
        c.args(["-F", "/dev/null", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null"])
            .args(["-o", "BatchMode=yes", "-o", "ExitOnForwardFailure=yes", "-o", "LogLevel=ERROR"])
            .arg("-i")
            .arg(self.user_key())
            .args(["-p", &self.port.to_string(), "-l", "root"])
            .stdin(Stdio::null());
        c
    }
}

/// A running `ssh -L`, ended when dropped.
struct Forwarding(Child);

impl Drop for Forwarding {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A relay between ssh and the forward socket that counts every byte crossing it, both ways.
fn counting_relay(listen: &Path, to: PathBuf) -> Arc<AtomicUsize> {
    let listener = UnixListener::bind(listen).unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let c = count.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let Ok(agent) = UnixStream::connect(&to) else { continue };
            for (mut from, mut into) in
                [(conn.try_clone().unwrap(), agent.try_clone().unwrap()), (agent, conn)]
            {
                let c = c.clone();
                std::thread::spawn(move || {
                    let mut buf = [0u8; 4096];
                    while let Ok(n @ 1..) = from.read(&mut buf) {
                        c.fetch_add(n, Ordering::SeqCst);
                        if into.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                    let _ = into.shutdown(std::net::Shutdown::Write);
                });
            }
        }
    });
    count
}

/// `hyperseal agent forward HOST`: the new socket's path.
fn open_forward(a: &Agent, host: &str) -> PathBuf {
    PathBuf::from(String::from_utf8(a.ok(&["agent", "forward", host])).unwrap().trim())
}

/// `hyperseal decrypt FILE` run over ssh, through the socket `remote`.
fn remote_decrypt(file: &Path, remote: &Path) -> String {
    format!("HYPERSEAL_AGENT_SOCK={} {BIN} decrypt {}", remote.display(), file.display())
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn a_remote_host_decrypts_through_its_forward_and_only_headers_cross() {
    let Some(sshd) = start_sshd() else { return };
    let a = Agent::with_askpass(true, &[]);
    let (key, public) = keypair(a.dir.path(), "granted");
    a.ok(&["agent", "add", "--forward", "build1", "--no-confirm", key.to_str().unwrap()]);
    let listed = String::from_utf8(a.ok(&["agent", "list"])).unwrap();
    assert!(listed.contains("[forward: build1, unconfirmed]"), "{listed}");
    // 1 GiB (sparse: read fast) sealed to the granted key.
    let big = a.path("big");
    std::fs::File::create(&big).unwrap().set_len(1 << 30).unwrap();
    a.ok(&["encrypt", "-q", "-r", &public, "-o", "big.hs", "big"]);
    std::fs::remove_file(&big).unwrap();
    let forward = open_forward(&a, "build1");
    assert!(forward.exists(), "no forward socket at {}", forward.display());
    let relay = a.path("relay.sock");
    let crossed = counting_relay(&relay, forward.clone());
    let remote = a.path("remote.sock");
    let command = format!("{} | wc -c", remote_decrypt(&a.path("big.hs"), &remote));
    let o = sshd.run(&remote, &relay, &command);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), (1u64 << 30).to_string(), "{}", text(&o));
    let crossed = crossed.load(Ordering::SeqCst);
    eprintln!("note: {crossed} bytes crossed the forward for a 1 GiB decrypt");
    assert!(crossed > 0 && crossed <= 8 << 10, "{crossed} bytes crossed the forward for 1 GiB");

    // The real age on the remote side, with the identity `hyperseal agent identity` gives there.
    if let Some(age) = common::peer("age") {
        let plugins = a.path("plugins");
        std::fs::create_dir(&plugins).unwrap();
        std::os::unix::fs::symlink(BIN, plugins.join("age-plugin-hyperseal")).unwrap();
        std::fs::write(a.path("small"), b"for age on build1").unwrap();
        a.ok(&["encrypt", "-q", "--format", "age", "-r", &public, "-o", "small.age", "small"]);
        // The first ssh has ended, and its forward with it: a new one for this connection.
        let forward = open_forward(&a, "build1");
        let command = format!(
            "HYPERSEAL_AGENT_SOCK={r} {BIN} agent identity > {d}/remote-agent.txt && \
             PATH={p}:$PATH {age} -d -i {d}/remote-agent.txt {d}/small.age",
            r = remote.display(),
            d = a.dir.path().display(),
            p = plugins.display(),
            age = age.display()
        );
        let o = sshd.run(&remote, &forward, &command);
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(o.stdout, b"for age on build1");
    }
}

#[test]
fn no_key_serves_a_forward_without_its_grant_and_confirmations_are_asked() {
    let Some(sshd) = start_sshd() else { return };
    let a = Agent::with_askpass(true, &[]);
    a.add_sealed("plain", &[], b"local only", "plain.hs");
    let (confirmed, _) = a.add_sealed("confirmed", &["--forward", "build1"], b"confirmed", "confirmed.hs");
    a.add_sealed("other-host", &["--forward", "build2", "--no-confirm"], b"build2's", "other.hs");
    let remote = a.path("remote.sock");
    // Each ssh connection gets a forward of its own (it goes when that ssh ends).
    let run =
        |file: &str| sshd.run(&remote, &open_forward(&a, "build1"), &remote_decrypt(&a.path(file), &remote));

    // Not granted: refused, and the refusal names the command that would grant it.
    for file in ["plain.hs", "other.hs"] {
        let o = run(file);
        assert!(!o.status.success(), "{file} opened without a grant: {}", text(&o));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(stderr.contains("hyperseal agent add --forward build1"), "{}", text(&o));
        // The key is named by fingerprint; where its file lies here is not the remote's to know.
        assert!(!stderr.contains(a.dir.path().to_str().unwrap()), "{}", text(&o));
    }
    // Locally, everything still opens.
    assert_eq!(a.ok(&["decrypt", "plain.hs"]), b"local only");

    // Granted with confirmation: the askpass says no, then yes.
    let o = run("confirmed.hs");
    assert!(!o.status.success(), "opened though the askpass said no: {}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not confirmed"), "{}", text(&o));
    std::fs::write(a.path("answer"), "0").unwrap();
    let o = run("confirmed.hs");
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(o.stdout, b"confirmed");
    let asked = std::fs::read_to_string(a.path("askpass.log")).unwrap();
    assert_eq!(asked.lines().count(), 2, "{asked}");
    assert!(asked.contains("allow build1 to open 1 file(s)"), "{asked}");

    // A forward may not manage the agent.
    let stop = format!("HYPERSEAL_AGENT_SOCK={} {BIN} agent stop", remote.display());
    let o = sshd.run(&remote, &open_forward(&a, "build1"), &stop);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("may only open files"), "{}", text(&o));

    // No askpass program at all: refused.
    let b = Agent::start_with(&["env", "HYPERSEAL_ASKPASS=", "SSH_ASKPASS="], &[]);
    b.ok(&["agent", "add", "--forward", "build1", confirmed.to_str().unwrap()]);
    let o = sshd.run(&remote, &open_forward(&b, "build1"), &remote_decrypt(&a.path("confirmed.hs"), &remote));
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no askpass program"), "{}", text(&o));
}

#[test]
fn ssh_forwarding_the_main_socket_is_refused_and_a_forward_ends_with_its_ssh() {
    let Some(sshd) = start_sshd() else { return };
    let a = Agent::with_askpass(true, &[]);
    a.add_sealed("build1", &["--forward", "build1", "--no-confirm"], b"build1", "b.hs");
    a.add_sealed("any", &["--forward", "*", "--no-confirm"], b"anywhere", "any.hs");
    let remote = a.path("remote.sock");

    // ssh -R of the main socket: a forward from a host no one named; only '*' reaches it.
    let o = sshd.run(&remote, &a.sock(), &remote_decrypt(&a.path("b.hs"), &remote));
    assert!(!o.status.success(), "the main socket served a forward: {}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--forward '*'"), "{}", text(&o));
    let o = sshd.run(&remote, &a.sock(), &remote_decrypt(&a.path("any.hs"), &remote));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(o.stdout, b"anywhere");

    // A forward's socket goes when the ssh that used it ends.
    let forward = open_forward(&a, "build1");
    let o = sshd.run(&remote, &forward, &remote_decrypt(&a.path("b.hs"), &remote));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(o.stdout, b"build1");
    let gone = waited(Duration::from_secs(5), 50, || !forward.exists());
    assert!(gone, "the forward socket outlived its ssh");
    // A peer that is not ssh (a local process, a relay) says nothing about the forward's end:
    // the forward stays after it has gone. Then --close ends it.
    let forward = open_forward(&a, "build1");
    let o = a.cmd(&["decrypt", "b.hs"]).env("HYPERSEAL_AGENT_SOCK", &forward).output().unwrap();
    assert_eq!(o.stdout, b"build1", "{}", text(&o));
    std::thread::sleep(Duration::from_millis(600));
    assert!(forward.exists(), "a forward ended with a local client");
    a.ok(&["agent", "forward", "--close", "build1"]);
    assert!(!forward.exists(), "--close left the socket");
    assert!(!a.run(&["agent", "forward", "../x"]).status.success(), "a host name with a path in it");
}

/// `ssh -L` of the main socket, run on the other host: the agent's peer is this host's sshd,
/// which carries the connection for that host, so it is a forward from a host no one named,
/// as `ssh -R` of the main socket is: only '*' grants, no management, no local paths.
#[test]
fn ssh_local_forward_of_the_main_socket_is_a_forward() {
    let Some(sshd) = start_sshd() else { return };
    let a = Agent::with_askpass(true, &[]);
    let (plain, _) = a.add_sealed("plain", &[], b"local only", "plain.hs");
    let (any, _) = a.add_sealed("any", &["--forward", "*", "--no-confirm"], b"anywhere", "any.hs");
    // A directory of the user's alone, as the client asks of one that `agent forward` reaches.
    let there = a.path("there");
    std::fs::create_dir(&there).unwrap();
    agent_support::chmod(&there, 0o700);
    let there = there.join("agent.sock");
    let _forwarding = sshd.local_forward(&there, &a.sock());
    let through = |args: &[&str]| a.cmd(args).env("HYPERSEAL_AGENT_SOCK", &there).output().unwrap();

    let o = through(&["decrypt", "plain.hs"]);
    assert!(!o.status.success(), "a key with no grant served ssh -L: {}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--forward '*'"), "{}", text(&o));
    let o = through(&["decrypt", "any.hs"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(o.stdout, b"anywhere");

    // Its list holds the '*' key alone, and no path of this host.
    let o = through(&["agent", "list"]);
    assert!(o.status.success(), "{}", text(&o));
    let listed = String::from_utf8_lossy(&o.stdout);
    assert_eq!(listed.lines().filter(|l| !l.trim().is_empty()).count(), 1, "{listed}");
    assert!(!listed.contains(a.dir.path().to_str().unwrap()), "{listed}");

    // No management: the agent stays, with both keys.
    for args in [&["agent", "stop"][..], &["agent", "remove", "--all"], &["agent", "forward", "build1"]] {
        let o = through(args);
        assert!(!o.status.success(), "{args:?} through ssh -L: {}", text(&o));
        assert!(String::from_utf8_lossy(&o.stderr).contains("may only open files"), "{args:?}: {}", text(&o));
    }
    let listed = String::from_utf8(a.ok(&["agent", "list"])).unwrap();
    assert!(listed.contains(plain.to_str().unwrap()) && listed.contains(any.to_str().unwrap()), "{listed}");
    assert_eq!(a.ok(&["decrypt", "plain.hs"]), b"local only");
}
