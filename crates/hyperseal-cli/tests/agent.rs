//! The identity agent end to end: a passphrase-protected identity added once on a terminal,
//! then every door (decrypt, random access, `hyperseal age -d`, a 1,000-file `rekey
//! --recursive`, the real age v1.3.1 through `age-plugin-hyperseal`, and rage where `make
//! rage` built it) opens files with no prompt, byte for byte; lifetimes, lock and unlock,
//! stop; and a dead agent mid-request.

use crate::agent_support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use agent_support::{error_lines, keypair, on_terminal, seal, Agent, BIN};

const TOOLS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.tools/bin");

/// `.tools/bin/age` (make age), or `None` with a note; a failure under `make test`.
fn age() -> Option<std::path::PathBuf> {
    installed(Path::new(TOOLS).join("age"), "age")
}

/// `.tools/cargo/bin/rage` (`make rage`, part of `make tools`), or `None` with a note outside
/// `make test` (under it a missing peer fails the test).
fn rage() -> Option<std::path::PathBuf> {
    installed(Path::new(TOOLS).join("../cargo/bin/rage"), "rage")
}

/// `program` if `make TARGET` installed it; else `None` with a note, or under `make test`
/// (HYPERSEAL_REQUIRE_PEERS) a failure.
fn installed(program: std::path::PathBuf, target: &str) -> Option<std::path::PathBuf> {
    if !program.exists() {
        eprintln!("note: {} not installed (run `make {target}`); skipping that part", program.display());
        assert!(std::env::var_os("HYPERSEAL_REQUIRE_PEERS").is_none(), "a peer is missing under make test");
        return None;
    }
    Some(program)
}

/// `key` as an `age -p` identity file under `pass`, made on a terminal by `hyperseal age -p`.
fn protect(a: &Agent, key: &Path, pass: &str) -> std::path::PathBuf {
    let out = a.path("protected.age");
    let argv = [BIN, "age", "-p", "-o", out.to_str().unwrap(), key.to_str().unwrap()];
    let (status, stderr, _) = on_terminal(&argv, a.dir.path(), &[], &[pass, pass]);
    assert_eq!(status, 0, "{stderr}");
    std::fs::remove_file(key).unwrap();
    out
}

#[test]
fn a_protected_identity_added_once_opens_every_door_without_a_prompt() {
    let a = Agent::start(&[]);
    let (key, public) = keypair(a.dir.path(), "me");
    let protected = protect(&a, &key, "correct horse");
    let sock = a.sock();
    let env = [("HYPERSEAL_AGENT_SOCK", sock.to_str().unwrap())];

    // Added once: the passphrase is typed once, at add time.
    let argv = [BIN, "agent", "add", protected.to_str().unwrap()];
    let (status, stderr, tty) = on_terminal(&argv, a.dir.path(), &env, &["correct horse"]);
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(tty.matches("Enter passphrase").count(), 1, "{tty}");
    let list = String::from_utf8(a.ok(&["agent", "list"])).unwrap();
    assert!(list.contains(&public) && list.contains("SHA256:"), "{list}");
    assert!(!list.contains("AGE-SECRET-KEY"), "{list}");

    // Three separate decrypt processes, no terminal to prompt on.
    let data = b"the agent opens this, three times over".repeat(30);
    seal(&public, &data, &a.path("f.hs"));
    for i in 0..3 {
        let out = a.path(&format!("out{i}"));
        a.ok(&["decrypt", "-o", out.to_str().unwrap(), "f.hs"]);
        assert_eq!(std::fs::read(&out).unwrap(), data);
    }
    // Random access and age mode.
    let part = a.ok(&["decrypt", "--offset", "4", "--length", "10", "f.hs"]);
    assert_eq!(part, &data[4..14]);
    let mut sealed_age = a.cmd(&["age", "-e", "-r", &public, "-o", "g.age"]);
    let mut child = sealed_age.stdin(std::process::Stdio::piped()).spawn().unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &data).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(a.ok(&["age", "-d", "g.age"]), data);

    // The real age through age-plugin-hyperseal: the identity names the socket, no secret.
    let id = a.ok(&["agent", "identity"]);
    assert!(id.starts_with(b"AGE-PLUGIN-HYPERSEAL-1"));
    std::fs::write(a.path("agent.txt"), &id).unwrap();
    let plugins = a.path("plugins");
    std::fs::create_dir(&plugins).unwrap();
    std::os::unix::fs::symlink(BIN, plugins.join("age-plugin-hyperseal")).unwrap();
    let path = format!("{}:{}", plugins.display(), std::env::var("PATH").unwrap());
    for tool in [age(), rage()].into_iter().flatten() {
        let o = Command::new("setsid")
            .args(["-w", tool.to_str().unwrap(), "-d", "-i", "agent.txt", "g.age"])
            .current_dir(a.dir.path())
            .env("PATH", &path)
            .env_remove("HYPERSEAL_AGENT_SOCK")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(o.status.success(), "{} -d: {}", tool.display(), String::from_utf8_lossy(&o.stderr));
        assert_eq!(o.stdout, data, "{}", tool.display());
    }

    // A 1,000-file tree re-keyed through the agent; every file still opens, to the new key too.
    let tree = a.path("tree");
    std::fs::create_dir_all(tree.join("sub")).unwrap();
    for i in 0..1000 {
        let dir = if i % 2 == 0 { tree.clone() } else { tree.join("sub") };
        seal(&public, format!("file {i}").as_bytes(), &dir.join(format!("{i}.hs")));
    }
    let (_, other) = keypair(a.dir.path(), "other");
    let o = a.run(&["rekey", "--recursive", "--add", &other, "tree"]);
    assert!(o.status.success(), "rekey: {}", String::from_utf8_lossy(&o.stderr));
    for i in [0, 1, 499, 998, 999] {
        let f = if i % 2 == 0 { format!("tree/{i}.hs") } else { format!("tree/sub/{i}.hs") };
        assert_eq!(a.ok(&["decrypt", &f]), format!("file {i}").as_bytes());
        assert_eq!(a.ok(&["decrypt", "-i", "other.key", &f]), format!("file {i}").as_bytes());
    }
}

/// An agent holding key `a`, added with `--lifetime LIFETIME`, and key `b`, added without:
/// `a.hs` sealed to `a` ("for a"), `b.hs` to `b` ("for b"). The agent, `b`'s key file, and both
/// recipients.
fn a_with_lifetime_and_b(lifetime: &str) -> (Agent, std::path::PathBuf, String, String) {
    let a = Agent::start(&[]);
    let (_, public_a) = a.add_sealed("a", &["--lifetime", lifetime], b"for a", "a.hs");
    let (key_b, public_b) = a.add_sealed("b", &[], b"for b", "b.hs");
    (a, key_b, public_a, public_b)
}

#[test]
fn a_lifetime_ends_and_remove_forgets() {
    let (a, key_b, public_a, public_b) = a_with_lifetime_and_b("2s");
    assert_eq!(a.ok(&["decrypt", "a.hs"]), b"for a");
    std::thread::sleep(Duration::from_millis(2600));
    let o = a.run(&["decrypt", "a.hs"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no identity matched"), "{o:?}");
    assert_eq!(a.ok(&["decrypt", "b.hs"]), b"for b");
    let list = String::from_utf8(a.ok(&["agent", "list"])).unwrap();
    assert!(!list.contains(&public_a) && list.contains(&public_b), "{list}");
    assert!(key_b.ends_with("b.key"));
    a.ok(&["agent", "remove", "b.key"]);
    assert!(!a.run(&["decrypt", "b.hs"]).status.success());
}

#[test]
fn lock_refuses_until_the_right_passphrase_unlocks() {
    let a = Agent::start(&[]);
    let (_, public) = a.add_sealed("k", &[], b"locked away", "f.hs");
    let sock = a.sock();
    let env = [("HYPERSEAL_AGENT_SOCK", sock.to_str().unwrap())];
    let (status, stderr, _) =
        on_terminal(&[BIN, "agent", "lock"], a.dir.path(), &env, &["lock pass", "lock pass"]);
    assert_eq!(status, 0, "{stderr}");
    let o = a.run(&["decrypt", "f.hs"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("locked"), "{o:?}");
    // The list still shows what is held; nothing secret.
    assert!(String::from_utf8(a.ok(&["agent", "list"])).unwrap().contains(&public));
    let (status, stderr, _) = on_terminal(&[BIN, "agent", "unlock"], a.dir.path(), &env, &["wrong"]);
    assert_ne!(status, 0);
    assert!(stderr.contains("incorrect lock passphrase"), "{stderr}");
    assert!(!a.run(&["decrypt", "f.hs"]).status.success());
    let (status, stderr, _) = on_terminal(&[BIN, "agent", "unlock"], a.dir.path(), &env, &["lock pass"]);
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(a.ok(&["decrypt", "f.hs"]), b"locked away");
}

#[test]
fn stop_removes_the_socket_and_a_gone_agent_is_one_clear_line() {
    let mut a = Agent::start(&[]);
    let (key, _) = a.add_sealed("k", &[], b"x", "f.hs");
    a.ok(&["agent", "stop"]);
    let status = a.child.wait().unwrap();
    assert!(status.success());
    assert!(!a.sock().exists());
    let o = a.run(&["decrypt", "-o", "out", "f.hs"]);
    assert!(!o.status.success());
    let errors = error_lines(&o.stderr);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("agent: cannot connect"), "{errors:?}");
    assert!(!a.path("out").exists());
    // The -i identities are tried first: with the agent gone, a key given directly still works.
    assert_eq!(a.ok(&["decrypt", "-i", key.to_str().unwrap(), "f.hs"]), b"x");
}

#[test]
fn an_agent_killed_mid_request_fails_the_client_with_one_line_and_no_output() {
    let a = Agent::start(&[]);
    a.add_sealed("k", &[], b"never written", "f.hs");
    // Stopped, the agent holds the request unanswered; killed, it closes the connection.
    let pid = a.pid().to_string();
    assert!(Command::new("kill").args(["-STOP", &pid]).status().unwrap().success());
    let client =
        a.cmd(&["decrypt", "-o", "out", "f.hs"]).stderr(std::process::Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(700));
    assert!(Command::new("kill").args(["-KILL", &pid]).status().unwrap().success());
    let o = client.wait_with_output().unwrap();
    assert!(!o.status.success());
    let errors = error_lines(&o.stderr);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("closed the connection without answering"), "{errors:?}");
    let mut left: Vec<String> = std::fs::read_dir(a.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, ["f.hs", "k.key", "run"], "nothing but what was there");
}

#[test]
fn start_prints_the_shell_lines_and_the_background_agent_answers() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    let start = |flag: Option<&str>| {
        let mut c = Command::new(BIN);
        c.args(["agent", "start"]).args(flag).env("XDG_RUNTIME_DIR", &run).env_remove("HYPERSEAL_AGENT_SOCK");
        c.output().unwrap()
    };
    let o = start(None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let sock = run.join("hyperseal/agent.sock");
    let sh = String::from_utf8(o.stdout).unwrap();
    assert_eq!(sh, format!("HYPERSEAL_AGENT_SOCK='{}'; export HYPERSEAL_AGENT_SOCK;\n", sock.display()));
    // A second start finds it running and says so.
    let again = start(Some("--csh"));
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already listening"));
    let stop = Command::new(BIN).args(["agent", "stop"]).env("HYPERSEAL_AGENT_SOCK", &sock).output().unwrap();
    assert!(stop.status.success(), "{}", String::from_utf8_lossy(&stop.stderr));
    assert!(agent_support::waited(Duration::from_secs(5), 20, || !sock.exists()));
    for (flag, line) in
        [("--csh", "setenv HYPERSEAL_AGENT_SOCK '"), ("--fish", "set -gx HYPERSEAL_AGENT_SOCK '")]
    {
        let o = start(Some(flag));
        assert!(String::from_utf8_lossy(&o.stdout).starts_with(line), "{o:?}");
        Command::new(BIN).args(["agent", "stop"]).env("HYPERSEAL_AGENT_SOCK", &sock).output().unwrap();
        // Gone before the next start, which would otherwise find it listening.
        agent_support::waited(Duration::from_secs(10), 20, || !sock.exists());
    }
}

#[test]
fn a_protected_ssh_key_is_proven_at_add_and_refused_with_a_wrong_passphrase() {
    if Command::new("ssh-keygen").arg("-?").output().is_err() {
        eprintln!("note: ssh-keygen not installed (make ssh-keygen); skipping");
        assert!(std::env::var_os("HYPERSEAL_REQUIRE_PEERS").is_none(), "a peer is missing under make test");
        return;
    }
    let a = Agent::start(&[]);
    let key = a.path("id");
    let o = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "ssh pass", "-C", "t", "-f", key.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success());
    std::fs::write(a.path("right"), "ssh pass\n").unwrap();
    std::fs::write(a.path("wrong"), "not it\n").unwrap();
    a.ok(&["encrypt", "-R", "id.pub", "-o", "f.hs", "id.pub"]);
    let o = a.run(&["agent", "add", "--passphrase-file", "wrong", "id"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("incorrect passphrase"), "{o:?}");
    // Without a terminal and without a passphrase, nothing is added and nothing hangs.
    assert!(!a.run(&["agent", "add", "id"]).status.success());
    assert!(!a.run(&["decrypt", "f.hs"]).status.success());
    a.ok(&["agent", "add", "--passphrase-file", "right", "id"]);
    assert_eq!(a.ok(&["decrypt", "f.hs"]), std::fs::read(a.path("id.pub")).unwrap());
    // The agent's own identity would have it ask itself: refused (other plugins' identities
    // are run by the agent: agent_pin.rs).
    std::fs::write(a.path("plugin.txt"), a.ok(&["agent", "identity"])).unwrap();
    let o = a.run(&["agent", "add", "plugin.txt"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("it would ask itself"), "{o:?}");
}

#[test]
fn idle_ends_the_agent_and_its_socket() {
    let mut a = Agent::start(&["--idle", "1s"]);
    let ended = agent_support::waited(Duration::from_secs(10), 50, || a.child.try_wait().unwrap().is_some());
    assert!(ended, "the idle agent did not end");
    assert!(!a.sock().exists());
}

#[test]
fn a_key_whose_lifetime_ended_while_locked_never_comes_back_and_the_others_keep_their_own() {
    let (a, _, public_a, public_b) = a_with_lifetime_and_b("3s");
    let (status, stderr) = a.lock(true, "lock pass");
    assert_eq!(status, 0, "{stderr}");
    std::thread::sleep(Duration::from_millis(3500));
    let (status, stderr) = a.lock(false, "lock pass");
    assert_eq!(status, 0, "{stderr}");
    let o = a.run(&["decrypt", "a.hs"]);
    assert!(!o.status.success(), "a's key came back after its lifetime");
    assert_eq!(a.ok(&["decrypt", "b.hs"]), b"for b");
    let list = String::from_utf8(a.ok(&["agent", "list"])).unwrap();
    let lines: Vec<_> = list.lines().collect();
    assert_eq!(lines.len(), 1, "{list}");
    assert!(lines[0].contains(&public_b) && lines[0].ends_with("b.key"), "{list}");
    assert!(!lines[0].contains("forgotten in"), "b had no lifetime: {list}");
    assert!(!list.contains(&public_a), "{list}");
}

#[test]
fn a_socket_named_by_its_file_name_alone_is_in_the_working_directory() {
    let a = Agent::start(&[]);
    let (key, public) = keypair(a.dir.path(), "k");
    let o = Command::new(BIN)
        .args(["agent", "add", key.to_str().unwrap()])
        .current_dir(a.path("run/hyperseal"))
        .env("HYPERSEAL_AGENT_SOCK", "agent.sock")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8(a.ok(&["agent", "list"])).unwrap().contains(&public));
}
