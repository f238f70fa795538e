//! `age::agent::Identity` against a real `hyperseal agent`: files open through it as through
//! any identity, many files are asked about in one round trip, a file that is not the agent's
//! is no match, and an agent that is gone fails the file with an error. The agent is the workspace's
//! own `hyperseal` binary, beside this test executable in the target directory (cargo builds
//! it for the command line's tests in the same run); without it these tests pass with a note,
//! unless HYPERSEAL_REQUIRE_PEERS is set (as `make test` sets it).
#![cfg(unix)]

use std::io::{Read, Write};
use std::iter;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use age::secrecy::ExposeSecret;
use hyperseal_age as age;

fn hyperseal_bin() -> Option<PathBuf> {
    // target/<profile>/deps/suite-… → target/<profile>/hyperseal
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?.parent()?.join("hyperseal");
    if bin.is_file() {
        return Some(bin);
    }
    assert!(
        std::env::var_os("HYPERSEAL_REQUIRE_PEERS").is_none(),
        "{} is missing under make test",
        bin.display()
    );
    eprintln!("note: {} missing (build hyperseal-cli): skipped", bin.display());
    None
}

/// `hyperseal agent start --foreground` in a directory of its own; killed when dropped.
struct Agent {
    dir: tempfile::TempDir,
    child: Child,
    bin: PathBuf,
}

impl Agent {
    fn start(bin: PathBuf) -> Agent {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        std::fs::create_dir(&run).unwrap();
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
        let child = Command::new(&bin)
            .args(["agent", "start", "--foreground"])
            .env("XDG_RUNTIME_DIR", &run)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let agent = Agent { dir, child, bin };
        let until = Instant::now() + Duration::from_secs(20);
        while std::os::unix::net::UnixStream::connect(agent.sock()).is_err() {
            assert!(Instant::now() < until, "the agent did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        agent
    }

    fn sock(&self) -> PathBuf {
        self.dir.path().join("run/hyperseal/agent.sock")
    }

    /// `hyperseal agent add KEY`, in a session of its own (no terminal to prompt on).
    fn add(&self, key: &Path) {
        let o = Command::new("setsid")
            .arg("-w")
            .arg(&self.bin)
            .args(["agent", "add"])
            .arg(key)
            .env("HYPERSEAL_AGENT_SOCK", self.sock())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(o.status.success(), "agent add: {}", String::from_utf8_lossy(&o.stderr));
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn seal(to: &age::x25519::Recipient, text: &str) -> Vec<u8> {
    let e = age::Encryptor::with_recipients(iter::once(to as &dyn age::Recipient)).unwrap();
    let mut file = vec![];
    let mut w = e.wrap_output(&mut file).unwrap();
    w.write_all(text.as_bytes()).unwrap();
    w.finish().unwrap();
    file
}

fn open(file: &[u8], with: &dyn age::Identity) -> Result<String, age::DecryptError> {
    let mut text = String::new();
    age::Decryptor::new(file)?.decrypt(iter::once(with))?.read_to_string(&mut text)?;
    Ok(text)
}

#[test]
fn files_open_through_the_agent() {
    let Some(bin) = hyperseal_bin() else { return };
    let mut agent = Agent::start(bin);
    let key = age::x25519::Identity::generate();
    let key_file = agent.dir.path().join("key.txt");
    std::fs::write(&key_file, format!("{}\n", key.to_string().expose_secret())).unwrap();
    agent.add(&key_file);
    let through = age::agent::Identity::new(agent.sock());

    // As any identity, through the Decryptor.
    let files: Vec<Vec<u8>> = (0..5).map(|i| seal(&key.to_public(), &format!("file {i}"))).collect();
    assert_eq!(open(&files[0], &through).unwrap(), "file 0");

    // Many files in one question; a stranger's file is none of the agent's.
    let stranger = seal(&age::x25519::Identity::generate().to_public(), "not yours");
    let decryptors: Vec<_> =
        files.iter().chain([&stranger]).map(|f| age::Decryptor::new(&f[..]).unwrap()).collect();
    let stanzas: Vec<_> = decryptors.iter().map(|d| d.stanzas()).collect();
    let refs: Vec<&[_]> = stanzas.iter().map(|s| &s[..]).collect();
    let keys = through.unwrap_files(&refs).unwrap();
    assert!(keys[5].is_none(), "the stranger's file");
    for (i, (d, k)) in decryptors.into_iter().zip(keys).take(5).enumerate() {
        let mut text = String::new();
        d.decrypt_with_file_key(k.expect("the agent's").unwrap()).unwrap().read_to_string(&mut text).unwrap();
        assert_eq!(text, format!("file {i}"));
    }
    assert!(matches!(open(&stranger, &through), Err(age::DecryptError::NoMatchingKeys)));

    // An agent that is gone fails the file with an error, not as "no match".
    let _ = agent.child.kill();
    let _ = agent.child.wait();
    let e = open(&files[1], &through).unwrap_err();
    assert!(!matches!(e, age::DecryptError::NoMatchingKeys), "{e:?}");
}
