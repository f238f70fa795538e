//! What a forward may trigger, tested on forward sockets directly (their rules hold for any
//! peer of this user that reaches one, `ssh` or not; `agent_forward.rs` runs a real sshd):
//! no plugin run, no PIN asked and nothing cached before the use is confirmed on this host;
//! no key tried that the host was not granted; no path of this host in anything a forward is
//! sent; forwards unable to hold the connection slots that local clients need; unused forwards
//! making room; an `ssh` whose program file was replaced still treated as `ssh`; and each
//! refusal with a hint of its own, not "the agent is gone".

use crate::agent_support;
use crate::common;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_support::{Agent, BIN};
use hyperseal::agent::proto::{self, Answer, Request};
use hyperseal::agent::AgentIdentity;
use hyperseal::format::Stanza;
use hyperseal::recipient::Callbacks;
use zeroize::Zeroizing;

fn open_forward(a: &Agent, host: &str) -> PathBuf {
    PathBuf::from(String::from_utf8(a.ok(&["agent", "forward", host])).unwrap().trim())
}

/// The stanzas of an encrypted file.
fn stanzas(file: &Path) -> Vec<Stanza> {
    let bytes = std::fs::read(file).unwrap();
    hyperseal::Decryptor::from_slice(&bytes).unwrap().header().stanzas.clone()
}

/// A remote user: answers every PIN with `pin`, and keeps what it was shown and asked.
struct Remote {
    pin: String,
    seen: Mutex<Vec<String>>,
    secrets_asked: Mutex<usize>,
}

impl Remote {
    fn new(pin: &str) -> Arc<Remote> {
        Arc::new(Remote { pin: pin.into(), seen: Mutex::default(), secrets_asked: Mutex::new(0) })
    }
}

impl Callbacks for Remote {
    fn display_message(&self, message: &str) {
        self.seen.lock().unwrap().push(message.to_string());
    }
    fn request_passphrase(&self, description: &str) -> Option<Zeroizing<String>> {
        self.seen.lock().unwrap().push(description.to_string());
        *self.secrets_asked.lock().unwrap() += 1;
        Some(Zeroizing::new(self.pin.clone()))
    }
}

/// Asks through `socket` for `files`, as a client that can ask its user (`remote`); every text
/// the agent sent (its questions, messages and errors) goes into `remote.seen`.
fn unwrap_as(
    socket: &Path,
    remote: &Arc<Remote>,
    files: Vec<Vec<Stanza>>,
) -> Vec<Option<Result<(), String>>> {
    let agent = AgentIdentity::new(socket).with_callbacks(remote.clone());
    let answers = agent.unwrap_files(files).unwrap();
    let answers: Vec<_> =
        answers.into_iter().map(|a| a.map(|r| r.map(drop).map_err(|e| e.to_string()))).collect();
    for e in answers.iter().flatten().filter_map(|r| r.clone().err()) {
        remote.seen.lock().unwrap().push(e);
    }
    answers
}

/// An agent holding the test plugin's key (`age-plugin-hstest`, PIN mode: it asks a PIN on
/// each run and counts its runs, prompts and wrong PINs in `tmp/count`), granted to build1
/// with confirmation, and a file sealed to it. `None` where the test plugin is not built.
struct PluginAgent {
    a: Agent,
    file: PathBuf,
    count: PathBuf,
    _tmp: tempfile::TempDir,
}

fn plugin_agent(askpass: bool) -> Option<PluginAgent> {
    common::peer("age-plugin-hstest")?;
    let tmp = tempfile::tempdir().unwrap();
    let o =
        Command::new(Path::new(common::TOOLS).join("age-plugin-hstest")).arg("--keygen").output().unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    let (id, recipient) = text.split_once('\n').unwrap();
    let key = tmp.path().join("hstest.key");
    std::fs::write(&key, format!("{id}\n")).unwrap();
    std::fs::write(tmp.path().join("pin"), "1234").unwrap();
    let count = tmp.path().join("count");
    let count_var = format!("HSTEST_COUNT={}", count.display());
    let pin = format!("HSTEST_PIN_FILE={}", tmp.path().join("pin").display());
    let path = format!("PATH={}", common::tools_path());
    let a = Agent::with_askpass(askpass, &["HSTEST_MODE=pin", &count_var, &pin, &path]);
    a.ok(&["agent", "add", "--forward", "build1", key.to_str().unwrap()]);
    let file = a.path("p.age");
    let mut c = Command::new(BIN);
    c.args(["encrypt", "-q", "--format", "age", "-r", recipient.trim(), "-o"]).arg(&file);
    c.env("PATH", common::tools_path()).stdin(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"on the card").unwrap();
    assert!(child.wait().unwrap().success());
    Some(PluginAgent { a, file, count, _tmp: tmp })
}

/// How many times the plugin logged `what` in its `count` file.
fn counted(count: &Path, what: &str) -> usize {
    std::fs::read_to_string(count).unwrap_or_default().lines().filter(|l| *l == what).count()
}

#[test]
fn a_forward_runs_no_plugin_and_caches_no_pin_before_the_local_yes() {
    for askpass in [true, false] {
        let Some(PluginAgent { a, file, count, _tmp }) = plugin_agent(askpass) else { return };
        let forward = open_forward(&a, "build1");
        // Three wrong PINs from the remote side, the askpass saying no (or absent): the
        // plugin never runs, so no PIN is asked and none reaches the card.
        let remote = Remote::new("0000");
        for _ in 0..3 {
            let answers = unwrap_as(&forward, &remote, vec![stanzas(&file)]);
            assert!(matches!(&answers[0], Some(Err(e)) if e.contains("refused")), "{answers:?}");
        }
        assert_eq!(counted(&count, "run"), 0, "the plugin ran before the use was confirmed");
        assert_eq!(*remote.secrets_asked.lock().unwrap(), 0, "a PIN was asked before the local yes");
        assert_eq!(counted(&count, "fail"), 0);
        let asked = std::fs::read_to_string(a.path("askpass.log")).unwrap_or_default();
        assert_eq!(asked.lines().count(), if askpass { 3 } else { 0 }, "{asked}");
        // Nothing the remote side saw names a path of this host.
        let here = a.dir.path().to_str().unwrap().to_string();
        for seen in remote.seen.lock().unwrap().iter() {
            assert!(!seen.contains(&here), "a local path crossed the forward: {seen}");
        }
        let Answer::Entries(listed) = AgentIdentity::new(&forward).ask(&Request::List, 0).unwrap() else {
            panic!("list")
        };
        assert_eq!(listed.len(), 1);
        assert!(listed.iter().all(|e| !e.name.contains(&here)), "a local path in a forward's list");
        if !askpass {
            continue;
        }
        // Confirmed: the right PIN typed on the remote side opens the file, and is not cached
        // for the local clients, which the cache answers with no question.
        std::fs::write(a.path("answer"), "0").unwrap();
        let remote = Remote::new("1234");
        let answers = unwrap_as(&forward, &remote, vec![stanzas(&file)]);
        assert!(matches!(answers[0], Some(Ok(()))), "{answers:?}");
        assert_eq!(counted(&count, "run"), 1);
        let local = AgentIdentity::new(a.sock()).unwrap_files(vec![stanzas(&file)]).unwrap();
        assert!(!matches!(local[0], Some(Ok(_))), "a PIN typed through a forward was cached");
    }
}

#[test]
fn a_forward_tries_no_key_it_was_not_granted() {
    let a = Agent::with_askpass(true, &[]);
    a.add_sealed("local-only", &[], b"local only", "f.hs");
    let forward = open_forward(&a, "build1");
    let remote = Remote::new("");
    let answers = unwrap_as(&forward, &remote, vec![stanzas(&a.path("f.hs"))]);
    // Not tried: the answer says nothing of whether a key here opens it.
    assert!(answers[0].is_none(), "a key not granted to the forward was tried: {answers:?}");
    let seen = remote.seen.lock().unwrap().join("\n");
    assert!(seen.contains("hyperseal agent add --forward build1"), "{seen}");
    assert!(!seen.contains("SHA256:"), "a key was named to the forward: {seen}");
    // Locally it opens.
    assert_eq!(a.ok(&["decrypt", "f.hs"]), b"local only");
}

#[test]
fn each_refusal_has_its_own_hint_and_names_no_path() {
    let a = Agent::with_askpass(true, &[]);
    a.add_sealed("granted", &["--forward", "build1"], b"granted", "g.hs");
    let forward = open_forward(&a, "build1");
    let o = a.cmd(&["decrypt", "g.hs"]).env("HYPERSEAL_AGENT_SOCK", &forward).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(stderr.contains("not confirmed"), "{stderr}");
    assert!(!stderr.contains("gone or stuck"), "a refusal called a dead agent: {stderr}");
    assert!(stderr.contains("hint: the agent's user declined"), "{stderr}");
    assert!(!stderr.contains(a.dir.path().to_str().unwrap()), "a local path crossed: {stderr}");
    let o = a.cmd(&["agent", "stop"]).env("HYPERSEAL_AGENT_SOCK", &forward).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("may only open files") && !stderr.contains("gone or stuck"), "{stderr}");
}

/// A forward's connection that sends an UNWRAP_ASKING of `file` and then never answers.
fn silent_forward_client(forward: &Path, file: &Path) -> UnixStream {
    let mut s = UnixStream::connect(forward).unwrap();
    let mut request = Vec::new();
    proto::write_message(&mut request, &Request::UnwrapAsking(vec![stanzas(file)]).encode()).unwrap();
    s.write_all(&request).unwrap();
    s
}

#[test]
fn forwards_left_unanswered_keep_no_local_client_out() {
    let a = Agent::with_askpass(true, &[]);
    a.add_sealed("granted", &["--forward", "build1"], b"granted", "g.hs");
    let forward = open_forward(&a, "build1");
    // More silent clients than the agent has slots, all on the forward.
    let n = hyperseal::limits::AGENT_CONNECTIONS + 8;
    let silent: Vec<_> = (0..n).map(|_| silent_forward_client(&forward, &a.path("g.hs"))).collect();
    std::thread::sleep(Duration::from_secs(1));
    let started = Instant::now();
    let listed = a.run(&["agent", "list"]);
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    // Served now, not after a forward's user time (300 s) ran out.
    assert!(started.elapsed() < Duration::from_secs(60), "list waited {:?}", started.elapsed());
    // A message left unacknowledged costs its connection the normal deadline, not minutes:
    // the answer (the askpass said no) comes.
    let mut first = silent.into_iter().next().unwrap();
    first.set_read_timeout(Some(Duration::from_secs(150))).unwrap();
    let started = Instant::now();
    let mut answers = 0;
    loop {
        let mut len = [0u8; 4];
        if first.read_exact(&mut len).is_err() {
            break;
        }
        let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
        first.read_exact(&mut body).unwrap();
        answers += 1;
        if let Ok(Answer::Unwrapped(_)) = Answer::decode(&body) {
            break;
        }
    }
    assert!(answers >= 1, "no answer at all");
    assert!(
        started.elapsed() < Duration::from_secs(150),
        "the message held the forward {:?}",
        started.elapsed()
    );
}

#[test]
fn unused_forwards_make_room_and_used_ones_stay() {
    let a = Agent::with_askpass(true, &[]);
    a.add_sealed("granted", &["--forward", "build1", "--no-confirm"], b"granted", "g.hs");
    let used = open_forward(&a, "build1");
    let o = a.cmd(&["decrypt", "g.hs"]).env("HYPERSEAL_AGENT_SOCK", &used).output().unwrap();
    assert_eq!(o.stdout, b"granted");
    // Logins that never decrypt, more of them than the agent keeps forwards.
    let unused: Vec<_> = (0..80).map(|_| open_forward(&a, "build1")).collect();
    assert!(used.exists(), "a used forward made room for an unused one");
    assert!(!unused[0].exists(), "the oldest unused forward is still open");
    assert!(unused[79].exists());
}

/// Run by `a_replaced_ssh_is_still_ssh` as a copy of this test binary named `ssh`: once the
/// copy's file is removed (the test then writes `go`), asks the agent to stop and prints its
/// answer. In the ordinary test run it does nothing.
#[test]
fn peer_named_ssh() {
    let (Some(sock), Some(go)) = (std::env::var_os("PEER_SOCK"), std::env::var_os("PEER_GO")) else { return };
    // Asked to go or not, it asks: the test that started it judges the answer.
    agent_support::waited(Duration::from_secs(60), 20, || Path::new(&go).exists());
    let answer = AgentIdentity::new(PathBuf::from(sock)).ask(&Request::Stop, 0);
    match answer {
        Ok(Answer::Refused(why)) => println!("ANSWER refused: {why}"),
        Ok(Answer::Done(said)) => println!("ANSWER done: {said}"),
        other => println!("ANSWER other: {}", other.is_ok()),
    }
}

#[test]
fn a_replaced_ssh_is_still_ssh() {
    let a = Agent::with_askpass(true, &[]);
    let ssh = a.path("ssh");
    // Copied by a child process: a copy written here holds a write descriptor that every
    // process the other tests fork meanwhile inherits until it execs, and running the copy then
    // fails with ETXTBSY ("Text file busy").
    let copied = Command::new("cp").arg(std::env::current_exe().unwrap()).arg(&ssh).status().unwrap();
    assert!(copied.success());
    let go = a.path("go");
    // libtest names a test by its path in the binary, less the crate's name.
    let peer = format!("{}::peer_named_ssh", module_path!().split_once("::").unwrap().1);
    let child = Command::new(&ssh)
        .args([peer.as_str(), "--exact", "--nocapture", "--test-threads=1"])
        .env("PEER_SOCK", a.sock())
        .env("PEER_GO", &go)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // An upgrade of openssh replaces the running ssh's file.
    std::thread::sleep(Duration::from_millis(200));
    std::fs::remove_file(&ssh).unwrap();
    std::fs::write(&go, "").unwrap();
    let out = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    assert!(out.contains("ANSWER refused") && out.contains("may only open files"), "{out}");
    assert!(a.run(&["agent", "list"]).status.success(), "the agent was stopped by ssh");
}
