//! No copy of a key is left in the agent's memory once the key has left it. As root, the
//! agent's whole address space is read through `/proc/PID/mem` and searched for the key's
//! text (as written and in lower case) and its raw X25519 secret: found right after `add`
//! (the control), and nowhere after `remove --all`, after `lock`, after `lock`, `unlock` and
//! `lock` again, or after decryptions (answered on the accepting thread and on a connection's
//! own) and `remove --all`; nor a security key's PIN past its lifetime. Elsewhere the test is skipped with a line saying so.

use crate::agent_support;
use crate::common;

use std::os::unix::fs::FileExt;
use std::sync::Arc;

use agent_support::{is_root, keypair, seal, Agent};

const SCAN: &str = "reading the agent's memory through /proc/PID/mem";

/// The 32 bytes an `AGE-SECRET-KEY-1…` line encodes (bech32, checked by the agent itself).
fn raw_secret(line: &str) -> Vec<u8> {
    let out = bech32_data(line);
    assert_eq!(out.len(), 32);
    out
}

/// The bytes a bech32 line of any length encodes: after its last `1`, without the checksum
/// (unchecked: the lines come from the programs under test, which check their own).
pub(crate) fn bech32_data(line: &str) -> Vec<u8> {
    const CHARSET: &str = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
    let lower = line.to_lowercase();
    let data = &lower[lower.rfind('1').unwrap() + 1..];
    let data = &data[..data.len() - 6];
    let (mut acc, mut bits, mut out) = (0u32, 0u32, Vec::new());
    for c in data.chars() {
        acc = (acc << 5) | CHARSET.find(c).unwrap() as u32;
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// Which of `needles` occur anywhere in the readable memory of process `pid`.
pub fn found_in_memory(pid: u32, needles: &[(&'static str, Vec<u8>)]) -> Vec<&'static str> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    let mem = std::fs::File::open(format!("/proc/{pid}/mem")).unwrap();
    let longest = needles.iter().map(|(_, n)| n.len()).max().unwrap();
    let mut found = Vec::new();
    for line in maps.lines() {
        let mut parts = line.split_whitespace();
        let (range, perms) = (parts.next().unwrap(), parts.next().unwrap());
        if !perms.starts_with('r') || line.ends_with("[vvar]") || line.ends_with("[vsyscall]") {
            continue;
        }
        let (start, end) = range.split_once('-').unwrap();
        let (start, end) = (u64::from_str_radix(start, 16).unwrap(), u64::from_str_radix(end, 16).unwrap());
        // In windows that overlap by a needle's length, so none is missed at a boundary.
        let mut at = start;
        let mut buf = vec![0u8; 1 << 20];
        while at < end {
            let n = ((end - at) as usize).min(buf.len());
            let Ok(n) = mem.read_at(&mut buf[..n], at) else { break };
            if n == 0 {
                break;
            }
            for (name, needle) in needles {
                if !found.contains(name) && buf[..n].windows(needle.len()).any(|w| w == needle) {
                    found.push(*name);
                }
            }
            if at + (n as u64) >= end {
                break;
            }
            at += (n - longest.min(n - 1)) as u64;
        }
    }
    found
}

/// An agent holding one key, a file sealed to it alone, and a file sealed to it among 20
/// recipients (too much work for the accepting thread: a connection's own thread answers).
fn agent_with_a_key() -> (Agent, Vec<(&'static str, Vec<u8>)>) {
    let a = Agent::start(&[]);
    let (key, public) = keypair(a.dir.path(), "k");
    seal(&public, b"one recipient", &a.path("one.hs"));
    let mut many = vec![hyperseal::recipient::parse_recipient(&public).unwrap()];
    for _ in 0..19 {
        let other = hyperseal::recipient::generate(hyperseal::recipient::Kind::X25519).unwrap();
        many.push(hyperseal::recipient::parse_recipient(&other.public).unwrap());
    }
    std::fs::write(a.path("many.hs"), hyperseal::encrypt(&many, b"twenty recipients").unwrap()).unwrap();
    let text = std::fs::read_to_string(&key).unwrap();
    let line = text.lines().find(|l| l.starts_with("AGE-SECRET-KEY-1")).unwrap().to_string();
    let needles = vec![
        ("the key's text", line.as_bytes().to_vec()),
        ("the key's text in lower case", line.to_lowercase().into_bytes()),
        ("the raw secret", raw_secret(&line)),
    ];
    a.ok(&["agent", "add", key.to_str().unwrap()]);
    std::fs::remove_file(&key).unwrap();
    let held = found_in_memory(a.pid(), &needles);
    assert!(held.contains(&"the key's text"), "the control: the key is held right after add ({held:?})");
    (a, needles)
}

fn use_it(a: &Agent) {
    assert_eq!(a.ok(&["decrypt", "one.hs"]), b"one recipient");
    assert_eq!(a.ok(&["decrypt", "many.hs"]), b"twenty recipients");
}

/// An agent from [`agent_with_a_key`] put through `steps`, then scanned: nothing of the key may
/// be left in its memory. Skipped where the scan cannot run (not root).
fn nothing_left_after(after: &str, steps: impl FnOnce(&Agent)) {
    if !is_root(SCAN) {
        return;
    }
    let (a, needles) = agent_with_a_key();
    steps(&a);
    let left = found_in_memory(a.pid(), &needles);
    assert!(left.is_empty(), "after {after}, the agent's memory still holds {left:?}");
}

/// `agent remove --all`, after which the agent opens nothing.
fn remove_all(a: &Agent) {
    a.ok(&["agent", "remove", "--all"]);
    assert!(!a.run(&["decrypt", "one.hs"]).status.success());
}

/// `agent lock` (`on`) or `agent unlock`, asserted to succeed.
fn lock(a: &Agent, on: bool) {
    let (status, stderr) = a.lock(on, "lock pass");
    assert_eq!(status, 0, "{stderr}");
}

#[test]
fn nothing_of_a_key_is_left_after_remove() {
    nothing_left_after("remove --all", remove_all);
}

#[test]
fn nothing_of_a_key_is_left_after_it_was_used_and_removed() {
    nothing_left_after("remove --all", |a| {
        use_it(a);
        remove_all(a);
    });
}

#[test]
fn nothing_of_a_key_is_left_after_lock() {
    nothing_left_after("lock", |a| {
        use_it(a);
        lock(a, true);
    });
}

#[test]
fn nothing_of_a_key_is_left_after_a_lock_that_follows_an_unlock() {
    nothing_left_after("lock, unlock and lock", |a| {
        lock(a, true);
        lock(a, false);
        lock(a, true);
    });
}

/// A security key's PIN (the test plugin's, in PIN mode) typed once by a local client, with a
/// PIN lifetime of one second: held while it lives (the control), then zeroized on time by
/// the agent's housekeeping, with no use of the key to prune it.
#[test]
fn a_pin_past_its_lifetime_is_not_left_in_memory() {
    if !is_root(SCAN) {
        return;
    }
    let Some(plugin) = common::peer("age-plugin-hstest") else { return };
    let dir = tempfile::tempdir().unwrap();
    let o = std::process::Command::new(&plugin).arg("--keygen").output().unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    let (id, recipient) = text.split_once('\n').unwrap();
    let key = dir.path().join("hstest.key");
    std::fs::write(&key, format!("{id}\n")).unwrap();
    // A PIN no other bytes of the process could hold by chance.
    let pin = format!("pin-{}", hex::encode(hyperseal::FileKey::generate(16).expose()));
    std::fs::write(dir.path().join("pin"), &pin).unwrap();
    let pin_var = format!("HSTEST_PIN_FILE={}", dir.path().join("pin").display());
    let path = format!("PATH={}", common::tools_path());
    let a = Agent::start_with(&["env", "HSTEST_MODE=pin", &pin_var, &path], &[]);
    a.ok(&["agent", "add", "--pin-ttl", "1s", key.to_str().unwrap()]);
    // Sealed by the CLI, which runs the plugin's recipient side (the library alone runs none).
    std::fs::write(dir.path().join("x"), b"x").unwrap();
    let o = std::process::Command::new(agent_support::BIN)
        .args(["encrypt", "-q", "--format", "age", "-r", recipient.trim(), "-o"])
        .arg(dir.path().join("x.age"))
        .arg(dir.path().join("x"))
        .env("PATH", common::tools_path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(dir.path().join("x.age")).unwrap();
    let stanzas = hyperseal::Decryptor::from_slice(&bytes).unwrap().header().stanzas.clone();
    let agent = hyperseal::agent::AgentIdentity::new(a.sock()).with_callbacks(Arc::new(Types(pin.clone())));
    let answers = agent.unwrap_files(vec![stanzas]).unwrap();
    assert!(matches!(answers[0], Some(Ok(_))), "the PIN did not open the file");
    let needles = vec![("the PIN", pin.into_bytes())];
    assert_eq!(found_in_memory(a.pid(), &needles), vec!["the PIN"], "the control: the PIN is cached");
    // The lifetime is one second; the housekeeping runs every 200 ms. A wide margin for a
    // loaded machine, and no use of the key meanwhile.
    let gone = || found_in_memory(a.pid(), &needles).is_empty();
    let forgotten = agent_support::waited(std::time::Duration::from_secs(30), 500, gone);
    assert!(forgotten, "the PIN outlived its lifetime in the agent's memory");
}

/// A client's user who types its PIN at every prompt.
struct Types(String);

impl hyperseal::recipient::Callbacks for Types {
    fn request_passphrase(&self, _: &str) -> Option<zeroize::Zeroizing<String>> {
        Some(zeroize::Zeroizing::new(self.0.clone()))
    }
}
