//! A running identity agent for the agent tests (`agent.rs`, `agent_hostile.rs`): started in
//! the foreground in a directory of its own, ended (SIGTERM) when dropped; and commands run
//! with `HYPERSEAL_AGENT_SOCK` pointing at it, in a session of their own (`setsid`), so no
//! command can reach a terminal to prompt on.

pub mod sshd;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_hyperseal");

/// Polls `done` every `every_ms` milliseconds for at most `within`: whether it came true. The
/// tests wait this way for a process to start or end and for a socket to come or go, and
/// assert on the answer where running out of time is a failure.
pub fn waited(within: Duration, every_ms: u64, mut done: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + within;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(every_ms));
    }
}

/// A temporary folder for an agent: its `run` folder (the agent's `XDG_RUNTIME_DIR`) made
/// 0700, as the agent demands of the folder its socket is in.
pub fn agent_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
    dir
}

pub struct Agent {
    pub dir: tempfile::TempDir,
    pub child: Child,
}

impl Agent {
    /// An agent whose `XDG_RUNTIME_DIR` is `dir/run` (made 0700), started as `prefix…
    /// hyperseal agent start --foreground ARGS`.
    pub fn start_with(prefix: &[&str], args: &[&str]) -> Agent {
        Self::start_in(agent_dir(), prefix, args)
    }

    /// An agent whose askpass program answers what the file `answer` says (0: yes; it starts
    /// as 1: no) and logs each question to `askpass.log`; with `askpass` false, no askpass at
    /// all. `env`: more of the agent's environment (`NAME=value`).
    pub fn with_askpass(askpass: bool, env: &[&str]) -> Agent {
        let dir = agent_dir();
        let d = dir.path().display();
        let program = dir.path().join("askpass");
        let script = format!("#!/bin/sh\necho \"$1\" >> {d}/askpass.log\nexit $(cat {d}/answer)\n");
        std::fs::write(&program, script).unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dir.path().join("answer"), "1").unwrap();
        let var = match askpass {
            true => format!("HYPERSEAL_ASKPASS={}", program.display()),
            false => "HYPERSEAL_ASKPASS=".to_string(),
        };
        let mut prefix = vec!["env", var.as_str(), "SSH_ASKPASS="];
        prefix.extend(env);
        Self::start_in(dir, &prefix, &[])
    }

    pub fn start(args: &[&str]) -> Agent {
        Self::start_with(&[], args)
    }

    pub fn start_in(dir: tempfile::TempDir, prefix: &[&str], args: &[&str]) -> Agent {
        let run = dir.path().join("run");
        let mut argv: Vec<&str> = prefix.to_vec();
        // Run as another user (a prefix such as setpriv), the binary is taken from where that
        // user can reach it, whatever folder the checkout is in.
        let bin = match prefix.is_empty() {
            true => BIN,
            false => crate::common::others::binary().to_str().expect("a UTF-8 path"),
        };
        argv.extend([bin, "agent", "start", "--foreground"]);
        argv.extend(args);
        let child = Command::new(argv[0])
            .args(&argv[1..])
            .env("XDG_RUNTIME_DIR", &run)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let agent = Agent { dir, child };
        let listening = || std::os::unix::net::UnixStream::connect(agent.sock()).is_ok();
        assert!(waited(Duration::from_secs(20), 20, listening), "the agent did not start");
        agent
    }

    pub fn sock(&self) -> PathBuf {
        self.dir.path().join("run/hyperseal/agent.sock")
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `hyperseal ARGS` pointed at this agent, in a new session (no terminal).
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("setsid");
        c.arg("-w").arg(BIN).args(args);
        c.env("HYPERSEAL_AGENT_SOCK", self.sock()).current_dir(self.dir.path()).stdin(Stdio::null());
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// Runs and asserts success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> Vec<u8> {
        let o = self.run(args);
        assert!(o.status.success(), "hyperseal {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    }

    /// `agent lock` (typed twice) or `agent unlock` with `pass`, on a terminal: (status,
    /// stderr).
    pub fn lock(&self, lock: bool, pass: &str) -> (i64, String) {
        let sock = self.sock();
        let env = [("HYPERSEAL_AGENT_SOCK", sock.to_str().unwrap())];
        let (verb, typed) = match lock {
            true => ("lock", vec![pass, pass]),
            false => ("unlock", vec![pass]),
        };
        let (status, stderr, _) = on_terminal(&[BIN, "agent", verb], self.dir.path(), &env, &typed);
        (status, stderr)
    }

    /// A new key `dir/NAME.key` added with `add` (`agent add` options), and `data` sealed to it
    /// in `dir/FILE`: the key file and its recipient.
    pub fn add_sealed(&self, name: &str, add: &[&str], data: &[u8], file: &str) -> (PathBuf, String) {
        let (key, public) = keypair(self.dir.path(), name);
        let mut args = vec!["agent", "add"];
        args.extend(add);
        args.push(key.to_str().unwrap());
        self.ok(&args);
        seal(&public, data, &self.path(file));
        (key, public)
    }

    /// Sends SIGTERM and waits for the end.
    pub fn stop(&mut self) {
        let _ = Command::new("kill").arg(self.pid().to_string()).status();
        let _ = self.child.wait();
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fresh X25519 key in `dir/NAME.key`: its path and recipient.
pub fn keypair(dir: &Path, name: &str) -> (PathBuf, String) {
    let key = dir.join(format!("{name}.key"));
    let o = Command::new(BIN).args(["keygen", "--kind", "x25519", "-o"]).arg(&key).output().unwrap();
    assert!(o.status.success());
    let o = Command::new(BIN).args(["pubkey", "-i"]).arg(&key).output().unwrap();
    (key, String::from_utf8(o.stdout).unwrap().trim().to_string())
}

/// `hyperseal encrypt -r PUBLIC -o OUT` of `data`.
pub fn seal(public: &str, data: &[u8], out: &Path) {
    let recipients = [hyperseal::recipient::parse_recipient(public).unwrap()];
    std::fs::write(out, hyperseal::encrypt(&recipients, data).unwrap()).unwrap();
}

/// Runs a command on a pseudo-terminal through `pty_run.py`, typing `typed` at its prompts:
/// (status, stderr, what the terminal showed).
pub fn on_terminal(argv: &[&str], cwd: &Path, env: &[(&str, &str)], typed: &[&str]) -> (i64, String, String) {
    let env: serde_json::Map<String, serde_json::Value> =
        env.iter().map(|(k, v)| (k.to_string(), serde_json::Value::from(*v))).collect();
    let req = serde_json::json!({
        "argv": argv, "cwd": cwd, "env": env, "stdin": "null", "stdout": "pipe",
        "type": typed, "ctty": true, "timeout": 60,
    });
    let v = crate::common::pty_run(&req, &format!("{argv:?}"));
    (
        v["status"].as_i64().unwrap_or(-1),
        v["stderr"].as_str().unwrap().into(),
        v["tty"].as_str().unwrap().into(),
    )
}

/// The lines of `stderr` that report an error.
pub fn error_lines(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr).lines().filter(|l| l.contains("error:")).map(str::to_string).collect()
}

/// Whether the tests run as root (other users to be, other processes' memory to read); if not,
/// says that `what` is skipped.
pub fn is_root(what: &str) -> bool {
    // SAFETY: getuid cannot fail.
    let root = unsafe { libc::getuid() } == 0;
    if !root {
        eprintln!("note: not root: skipping {what}");
    }
    root
}

pub fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The number in a `/proc/…/status` file's line `field:` (`VmRSS`, `voluntary_ctxt_switches`).
pub fn proc_status(status_file: &str, field: &str) -> u64 {
    let status = std::fs::read_to_string(status_file).unwrap();
    let line = status.lines().find(|l| l.strip_prefix(field).is_some_and(|r| r.starts_with(':'))).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

// An agent in front of the project's test plugin, `age-plugin-hstest` (a security key that
// checks its PIN and counts every run, prompt, wrong PIN and confirmation): the agent tests
// that need a PIN or a touch start the same one.

/// The PIN the test plugin accepts until a test writes another into `pin`.
pub const PIN: &str = "1234";

/// An agent started with the test plugin's environment: `HSTEST_MODE` (`pin` or `confirm`),
/// its run log in `count` and its PIN in `pin` (both in the agent's folder), and PATH.
pub struct PluginAgent {
    pub agent: Agent,
    /// PATH with `age-plugin-hyperseal` (this build) and the test plugin first.
    pub path: String,
    /// The plugin key's identity file.
    pub key: PathBuf,
    /// The plugin key's recipient (`age1hstest1…`).
    pub recipient: String,
    mode: String,
}

impl PluginAgent {
    /// A new plugin key and an agent in `mode`, with no key added yet; `None` where the test
    /// plugin is not built (a failure under `make test`).
    pub fn start(mode: &str) -> Option<PluginAgent> {
        crate::common::peers(&["age-plugin-hstest"])?;
        let dir = agent_dir();
        let plugins = dir.path().join("plugins");
        std::fs::create_dir(&plugins).unwrap();
        std::os::unix::fs::symlink(BIN, plugins.join("age-plugin-hyperseal")).unwrap();
        let path = format!("{}:{}", plugins.display(), crate::common::tools_path());
        std::fs::write(dir.path().join("pin"), PIN).unwrap();
        let keygen = Path::new(crate::common::TOOLS).join("age-plugin-hstest");
        let o = Command::new(keygen).arg("--keygen").output().unwrap();
        let text = String::from_utf8(o.stdout).unwrap();
        let (id, recipient) = text.split_once('\n').unwrap();
        let key = dir.path().join("hstest.key");
        std::fs::write(&key, format!("{id}\n")).unwrap();
        let agent = Self::agent_in(dir, mode, &path);
        Some(PluginAgent { agent, path, key, recipient: recipient.trim().to_string(), mode: mode.into() })
    }

    /// The agent, started in `dir` with the plugin's environment.
    fn agent_in(dir: tempfile::TempDir, mode: &str, path: &str) -> Agent {
        let env = |k: &str, f: &str| format!("{k}={}", dir.path().join(f).display());
        let (count, pin) = (env("HSTEST_COUNT", "count"), env("HSTEST_PIN_FILE", "pin"));
        let (mode, path_var) = (format!("HSTEST_MODE={mode}"), format!("PATH={path}"));
        Agent::start_in(dir, &["env", &mode, &count, &pin, &path_var], &[])
    }

    /// Ends the agent and starts a new one in the same folder (the files and the plugin's
    /// log stay; whatever the agent held is gone).
    pub fn restart(&mut self) {
        self.agent.stop();
        let dir = std::mem::replace(&mut self.agent.dir, tempfile::tempdir().unwrap());
        self.agent = Self::agent_in(dir, &self.mode, &self.path);
    }

    /// How many times the plugin logged `what` (run, prompt, fail, confirm).
    pub fn count(&self, what: &str) -> usize {
        let log = std::fs::read_to_string(self.agent.path("count")).unwrap_or_default();
        log.lines().filter(|l| *l == what).count()
    }
}
