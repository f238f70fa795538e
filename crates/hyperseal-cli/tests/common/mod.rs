//! Running the built `hyperseal` binary as a user would, shared by the CLI test files.

pub mod bounded;
pub mod others;
pub mod peak;
pub mod swap;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// `.tools/bin`: age v1.3.1, its keygen and inspect, and the test plugins (`make tools`).
pub const TOOLS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.tools/bin");

/// `.tools/bin/<first name>` when every one of `names` is installed there, else `None` with a
/// note. `make test` sets HYPERSEAL_REQUIRE_PEERS: there a missing peer fails the test instead
/// of skipping it quietly.
pub fn peers(names: &[&str]) -> Option<PathBuf> {
    if let Some(t) = names.iter().find(|t| !Path::new(TOOLS).join(t).exists()) {
        eprintln!("note: {TOOLS}/{t} not installed (run `make tools`); skipping");
        assert!(std::env::var_os("HYPERSEAL_REQUIRE_PEERS").is_none(), "a peer is missing under make test");
        return None;
    }
    Some(Path::new(TOOLS).join(names[0]))
}

/// For the sops tests: `.tools/bin` (sops and age-keygen there, as [`peers`]) and a scratch
/// folder.
pub fn sops_kit() -> Option<(PathBuf, tempfile::TempDir)> {
    let sops = peers(&["sops", "age-keygen"])?;
    Some((sops.parent().unwrap().to_path_buf(), tempfile::tempdir().unwrap()))
}

/// `.tools/bin/NAME`, as [`peers`].
pub fn peer(name: &str) -> Option<PathBuf> {
    peers(&[name])
}

/// A new key of `kind` in `dir/NAME.key`: its path and its public key.
pub fn keypair(dir: &Path, name: &str, kind: &str) -> (String, String) {
    let key = dir.join(format!("{name}.key"));
    ok(&hs(&["keygen", "--kind", kind, "-o", key.to_str().unwrap()], None));
    let public = ok(&hs(&["pubkey", "-i", key.to_str().unwrap()], None)).trim().to_string();
    (key.to_str().unwrap().to_string(), public)
}

/// A key made by the real `age-keygen` in `tools` (`-pq` for a post-quantum one), as
/// `DIR/NAME.txt`, and its recipient.
pub fn age_keygen(tools: &Path, dir: &Path, name: &str, pq: bool) -> (PathBuf, String) {
    let path = dir.join(format!("{name}.txt"));
    let mut c = Command::new(tools.join("age-keygen"));
    if pq {
        c.arg("-pq");
    }
    assert!(c.arg("-o").arg(&path).output().unwrap().status.success());
    let out = Command::new(tools.join("age-keygen")).arg("-y").arg(&path).output().unwrap();
    (path, String::from_utf8(out.stdout).unwrap().trim().to_owned())
}

/// A system tool found on PATH (strace, from Debian's package: `make test` installs it), or
/// `None` with a note, which `make test` turns into a failure.
pub fn peer_on_path(name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH")
        .and_then(|p| std::env::split_paths(&p).map(|d| d.join(name)).find(|f| f.is_file()));
    if found.is_none() {
        eprintln!("note: {name} not installed (run `make tools`); skipping");
        assert!(std::env::var_os("HYPERSEAL_REQUIRE_PEERS").is_none(), "a peer is missing under make test");
    }
    found
}

/// PATH led by `.tools/bin`, where age finds its plugins.
pub fn tools_path() -> String {
    format!("{TOOLS}:{}", std::env::var("PATH").unwrap_or_default())
}

/// Runs `hyperseal ARGS` with `stdin` and returns everything it printed.
pub fn hs(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hyperseal"));
    c.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let input = child.stdin.take().unwrap();
    let data = stdin.map(|d| d.to_vec());
    // Feed stdin from another thread so a child that writes a lot before reading cannot block us.
    let feeder = std::thread::spawn(move || {
        use std::io::Write;
        let mut input = input;
        if let Some(d) = data {
            let _ = input.write_all(&d);
        }
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

/// `BIN ARGS` (age, its plugins, hyperseal) with `env`, PATH led by `.tools/bin` so age finds
/// its plugins, and nothing on standard input.
pub fn peer_cmd(bin: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(bin)
        .args(args)
        .envs(env.iter().copied())
        .env("PATH", tools_path())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// [`peer_cmd`], asserted to succeed.
pub fn peer_run(bin: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let o = peer_cmd(bin, args, env);
    assert!(o.status.success(), "{} {args:?} failed: {}", bin.display(), String::from_utf8_lossy(&o.stderr));
    o
}

/// A new temporary folder with two X25519 keys in it: `me` (the caller's) and `new` (one to
/// add), each as its identity file's path and its recipient.
pub struct TwoKeys {
    pub dir: tempfile::TempDir,
    pub me: String,
    pub me_pub: String,
    pub new: String,
    pub new_pub: String,
}

pub fn two_keys() -> TwoKeys {
    let dir = tempfile::tempdir().unwrap();
    let (me, me_pub) = keypair(dir.path(), "me", "x25519");
    let (new, new_pub) = keypair(dir.path(), "new", "x25519");
    TwoKeys { dir, me, me_pub, new, new_pub }
}

/// What a run printed on standard error, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The names of what `dir` holds, sorted: what a run left behind, compared whole.
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Asserts success and returns stdout as text.
pub fn ok(o: &Output) -> String {
    assert!(o.status.success(), "failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Deterministic pseudo-random bytes (xorshift): large test inputs without a random source.
pub fn data(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Runs `command` on a pseudo-terminal (util-linux `script`) with `env` added, typing `typed`
/// into it: the prompts that read /dev/tty, answered as a user would.
pub fn on_terminal_env(command: &str, typed: &str, env: &[(&str, &str)]) -> Output {
    use std::io::Write;
    let mut child = Command::new("script")
        .args(["-qec", command, "/dev/null"])
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("util-linux script");
    child.stdin.take().unwrap().write_all(typed.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// [`on_terminal_env`] in the test's own environment.
pub fn on_terminal(command: &str, typed: &str) -> Output {
    on_terminal_env(command, typed, &[])
}

/// Runs `command` with `stdin` written to it from a thread (so that a program that writes
/// before it has read everything cannot block on a full pipe) and returns what it printed.
pub fn fed(mut command: Command, stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child =
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

/// A path as the `&str` argument of a command line (the tests' paths are UTF-8).
pub fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Runs one request through `tests/pty_run.py` (a command on a pseudo-terminal, its prompts
/// answered; the request's fields are documented there) and returns its JSON answer. `what`
/// names the run if it times out.
pub fn pty_run(req: &serde_json::Value, what: &str) -> serde_json::Value {
    let mut child = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/pty_run.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    serde_json::to_writer(child.stdin.take().unwrap(), req).unwrap();
    let out = child.wait_with_output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("pty_run.py answered");
    assert!(!v["timed_out"].as_bool().unwrap(), "{what} timed out: {v}");
    v
}
