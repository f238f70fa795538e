//! Security keys through the agent: a plugin identity (the project's test plugin,
//! `age-plugin-hstest`, which checks its PIN and counts every prompt, wrong PIN and
//! confirmation) added once. The real age then opens any number of files in separate runs with
//! one PIN typed; the PIN is asked again after its lifetime, a lock or a restart; a PIN changed
//! behind the cache costs the card one failure, never a loop; a confirmation (a touch) is
//! relayed every time; and `age -e -i agent.txt` encrypts to the agent's keys, its plugin keys among them.

use crate::agent_support;
use crate::common;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use agent_support::{keypair, on_terminal, BIN};
use agent_support::{PluginAgent, PIN};

/// An agent holding an hstest plugin key, in `mode` (`pin` or `confirm`), with files sealed to
/// it; `None` where age or the test plugin is not built (a failure under `make test`).
struct Setup {
    plugin: PluginAgent,
    age: PathBuf,
}

fn setup(mode: &str) -> Option<Setup> {
    let age = common::peers(&["age", "age-plugin-hstest"])?;
    let s = Setup { plugin: PluginAgent::start(mode)?, age };
    for i in 0..3 {
        s.seal(&s.recipient, format!("file {i}").as_bytes(), &format!("{i}.age"));
    }
    std::fs::write(s.agent.path("agent.txt"), s.agent.ok(&["agent", "identity"])).unwrap();
    Some(s)
}

/// The plugin agent's fields (`agent`, `path`, `key`, `recipient`) read as the set-up's own.
impl std::ops::Deref for Setup {
    type Target = PluginAgent;
    fn deref(&self) -> &PluginAgent {
        &self.plugin
    }
}

impl Setup {
    /// `hyperseal encrypt -r RECIPIENT` of `data` into `name` (the plugin's recipient).
    fn seal(&self, recipient: &str, data: &[u8], name: &str) {
        let mut c = Command::new(BIN);
        c.args(["encrypt", "-q", "--format", "age", "-r", recipient, "-o"]).arg(self.agent.path(name));
        let o = self.pipe(c, data);
        assert!(o.status.success(), "encrypt: {}", String::from_utf8_lossy(&o.stderr));
    }

    fn pipe(&self, mut c: Command, data: &[u8]) -> Output {
        c.env("PATH", &self.path).env("HSTEST_MODE", "").current_dir(self.agent.dir.path());
        let mut child =
            c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), data).unwrap();
        child.wait_with_output().unwrap()
    }

    /// `age -d -i agent.txt FILE` with no terminal at all (a new session): it succeeds only if
    /// nothing had to be asked.
    fn age_quiet(&self, file: &str) -> Output {
        Command::new("setsid")
            .args(["-w", self.age.to_str().unwrap(), "-d", "-i", "agent.txt", file])
            .current_dir(self.agent.dir.path())
            .env("PATH", &self.path)
            .env_remove("HYPERSEAL_AGENT_SOCK")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// `age -d -i agent.txt -o out FILE` on a terminal, typing `typed` at its prompts:
    /// (status, stderr, what the terminal showed), and the file it wrote.
    fn age_typed(&self, file: &str, typed: &[&str]) -> (i64, String, String, Vec<u8>) {
        let out = self.agent.path("out");
        let _ = std::fs::remove_file(&out);
        let argv = [self.age.to_str().unwrap(), "-d", "-i", "agent.txt", "-o", out.to_str().unwrap(), file];
        let (status, stderr, tty) =
            on_terminal(&argv, self.agent.dir.path(), &[("PATH", self.path.as_str())], typed);
        (status, stderr, tty, std::fs::read(&out).unwrap_or_default())
    }

    fn add(&self, args: &[&str]) {
        let mut argv = vec!["agent", "add"];
        argv.extend(args);
        argv.push(self.key.to_str().unwrap());
        self.agent.ok(&argv);
    }
}

#[test]
fn a_hundred_age_runs_cost_one_pin_typed_once() {
    let Some(s) = setup("pin") else { return };
    s.add(&[]);
    // Nothing cached yet: a run with no terminal cannot be given the PIN, and gives none.
    let o = s.age_quiet("0.age");
    assert!(!o.status.success(), "opened without a PIN");
    assert_eq!(s.count("fail"), 0, "a PIN was guessed");
    // Typed once, on age's own prompt (relayed from the plugin through the agent).
    let (status, stderr, tty, out) = s.age_typed("0.age", &[PIN]);
    assert_eq!(status, 0, "age on a terminal: {stderr}\n{tty}");
    assert!(tty.contains("PIN for hstest"), "the plugin's prompt was not shown: {tty}");
    assert_eq!(out, b"file 0");
    // 100 more runs, each a new age, a new age-plugin-hyperseal and a new plugin process, none
    // with a terminal: the agent answers the plugin's PIN itself.
    let runs_before = s.count("run");
    for i in 0..100 {
        let o = s.age_quiet(&format!("{}.age", i % 3));
        assert!(o.status.success(), "run {i}: {}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(o.stdout, format!("file {}", i % 3).as_bytes());
    }
    assert_eq!(s.count("run") - runs_before, 100, "each age run is a plugin run");
    assert_eq!(s.count("fail"), 0);
    // `hyperseal decrypt` through the agent uses the same cache.
    let o = s.agent.run(&["decrypt", "1.age"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn the_pin_is_asked_again_after_its_lifetime_a_lock_and_a_restart() {
    let Some(mut s) = setup("pin") else { return };
    s.add(&["--pin-ttl", "2s"]);
    assert_eq!(s.age_typed("0.age", &[PIN]).0, 0);
    assert!(s.age_quiet("1.age").status.success(), "the PIN was not cached");
    std::thread::sleep(std::time::Duration::from_millis(2500));
    assert!(!s.age_quiet("1.age").status.success(), "a PIN outlived its --pin-ttl");

    // No TTL: kept until lock; an unlock does not bring it back.
    s.agent.ok(&["agent", "remove", "--all"]);
    s.add(&[]);
    assert_eq!(s.age_typed("0.age", &[PIN]).0, 0);
    assert!(s.age_quiet("1.age").status.success());
    assert_eq!(s.agent.lock(true, "lock pass").0, 0);
    assert_eq!(s.agent.lock(false, "lock pass").0, 0);
    assert!(!s.age_quiet("1.age").status.success(), "a PIN survived a lock");
    assert_eq!(s.age_typed("2.age", &[PIN]).0, 0, "the key itself came back after the unlock");

    // A new agent knows nothing.
    s.plugin.restart();
    s.add(&[]);
    assert!(!s.age_quiet("1.age").status.success(), "a PIN survived the agent's end");
    assert_eq!(s.count("fail"), 0);
}

#[test]
fn a_pin_changed_behind_the_cache_costs_one_failure_never_a_loop() {
    let Some(s) = setup("pin") else { return };
    s.add(&[]);
    assert_eq!(s.age_typed("0.age", &[PIN]).0, 0);
    std::fs::write(s.agent.path("pin"), "5678").unwrap();
    // The cached PIN is tried once, rejected, and forgotten.
    assert!(!s.age_quiet("1.age").status.success());
    assert_eq!(s.count("fail"), 1);
    for _ in 0..3 {
        assert!(!s.age_quiet("1.age").status.success());
    }
    assert_eq!(s.count("fail"), 1, "a rejected PIN was sent again");
    // The user types the new one, and it is cached.
    let (status, stderr, _, out) = s.age_typed("1.age", &["5678"]);
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(out, b"file 1");
    assert!(s.age_quiet("2.age").status.success());
    // A wrong PIN typed is not cached either.
    std::fs::write(s.agent.path("pin"), "0000").unwrap();
    assert!(!s.age_quiet("0.age").status.success());
    assert_eq!(s.count("fail"), 2);
    let (status, ..) = s.age_typed("0.age", &["9999"]);
    assert_ne!(status, 0);
    assert_eq!(s.count("fail"), 3);
    assert!(!s.age_quiet("0.age").status.success());
    assert_eq!(s.count("fail"), 3, "a PIN the plugin rejected was cached");
}

#[test]
fn a_confirmation_is_relayed_every_time_and_never_cached() {
    let Some(s) = setup("confirm") else { return };
    s.add(&[]);
    for i in 0..3 {
        let (status, stderr, tty, out) = s.age_typed(&format!("{i}.age"), &["1"]);
        assert_eq!(status, 0, "{stderr}\n{tty}");
        assert!(tty.contains("use hstest?"), "the confirmation was not shown: {tty}");
        assert_eq!(out, format!("file {i}").as_bytes());
    }
    assert_eq!(s.count("confirm"), 3);
    // No terminal: no one to confirm, so nothing opens.
    assert!(!s.age_quiet("0.age").status.success(), "a confirmation was cached");
    assert_eq!(s.count("confirm"), 4);
}

#[test]
fn age_encrypts_to_the_agents_keys() {
    let Some(s) = setup("pin") else { return };
    let (x, _) = keypair(s.agent.dir.path(), "x");
    s.agent.ok(&["agent", "add", x.to_str().unwrap()]);
    s.add(&[]);
    let mut c = Command::new(&s.age);
    c.args(["-e", "-i", "agent.txt", "-o", "to-agent.age"]);
    let o = s.pipe(c, b"sealed to the agent");
    assert!(o.status.success(), "age -e -i agent.txt: {}", String::from_utf8_lossy(&o.stderr));
    // The X25519 key opens it directly, and the agent opens it for age.
    let o =
        Command::new(&s.age).args(["-d", "-i"]).arg(&x).arg(s.agent.path("to-agent.age")).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.stdout, b"sealed to the agent");
    let o = s.age_quiet("to-agent.age");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.stdout, b"sealed to the agent");
    // hyperseal's own `encrypt -i agent.txt` the same way (through age-plugin-hyperseal).
    let mut c = Command::new(BIN);
    c.args(["encrypt", "-q", "-i", "agent.txt", "-o", "by-hyperseal.hs"]);
    let o = s.pipe(c, b"sealed by hyperseal");
    assert!(o.status.success(), "hyperseal encrypt -i agent.txt: {}", String::from_utf8_lossy(&o.stderr));
    let o = s.agent.run(&["decrypt", "-i", x.to_str().unwrap(), "by-hyperseal.hs"]);
    assert_eq!(o.stdout, b"sealed by hyperseal", "{}", String::from_utf8_lossy(&o.stderr));
    // An agent of plugin keys alone: the agent runs the plugin's recipient side for them, as
    // age does for a plugin identity file, and the file opens with the plugin key.
    s.agent.ok(&["agent", "remove", x.to_str().unwrap()]);
    let mut c = Command::new(&s.age);
    c.args(["-e", "-i", "agent.txt", "-o", "to-plugin.age"]);
    let o = s.pipe(c, b"sealed to the card");
    assert!(o.status.success(), "age -e -i agent.txt: {}", String::from_utf8_lossy(&o.stderr));
    let header = hyperseal::Decryptor::from_slice(&std::fs::read(s.agent.path("to-plugin.age")).unwrap())
        .unwrap()
        .header()
        .stanzas
        .iter()
        .map(|st| st.tag.clone())
        .collect::<Vec<_>>();
    assert_eq!(header, ["hstest-x25519"], "sealed to the plugin key alone");
    let (status, stderr, _, out) = s.age_typed("to-plugin.age", &[PIN]);
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(out, b"sealed to the card");
    // An agent with no key has no recipient to encrypt to: one clear error.
    s.agent.ok(&["agent", "remove", "--all"]);
    let mut c = Command::new(&s.age);
    c.args(["-e", "-i", "agent.txt", "-o", "none.age"]);
    let o = s.pipe(c, b"x");
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no key with a recipient"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_tree_through_the_agent_costs_one_plugin_run_for_its_window() {
    let Some(s) = setup("pin") else { return };
    s.add(&[]);
    assert_eq!(s.age_typed("0.age", &[PIN]).0, 0);
    std::fs::create_dir(s.agent.path("tree")).unwrap();
    for i in 0..8 {
        s.seal(&s.recipient, format!("tree file {i}").as_bytes(), &format!("tree/{i}.age"));
    }
    let (x, x_pub) = keypair(s.agent.dir.path(), "x");
    let runs = s.count("run");
    let o = s.agent.run(&["rekey", "-q", "--recursive", "--add", &x_pub, "tree"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(s.count("run") - runs, 1, "one plugin run for the whole window");
    assert_eq!(s.count("fail"), 0);
    for i in 0..8 {
        let file = format!("tree/{i}.age");
        assert_eq!(
            s.agent.ok(&["decrypt", "-i", x.to_str().unwrap(), &file]),
            format!("tree file {i}").as_bytes()
        );
    }
}
