//! A PIN-protected TPM key (`keygen --tpm --pin`, on swtpm) in the identity agent: added once,
//! its PIN typed once on age's own prompt (relayed from the agent through
//! `age-plugin-hyperseal`), then many separate runs of the real age open files sealed to it
//! with no terminal at all, so with no prompt. A `lock`, a `remove` and the PIN's lifetime
//! make it asked again; a wrong PIN says the tries left, costs the TPM one failure, and is
//! neither cached nor tried again on its own; hyperseal itself, as the agent's client, asks on its
//! terminal; a file another key opens asks no PIN; a file mixing TPM lines with other keys is
//! refused; as root, the PIN is found in the agent's memory while cached and nowhere after lock.
//! The seed a decapsulation unseals (learnt here with tpm2-tools alone) is in no file a decrypt
//! wrote, nor, as root, in the agent's memory after it opened files and was locked.
//!
//! Without swtpm or age each test prints a note and passes, unless `HYPERSEAL_REQUIRE_PEERS`
//! is set (`make test`).

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use crate::agent_support::{on_terminal, Agent, BIN};
use crate::common;
use crate::tpm::{keygen, lockout_counter, Swtpm};

/// Long enough to be found, and only where it is, in the agent's memory.
const PIN: &str = "pin-5c91e7a3b2";

/// Separate age runs that must open files with the one PIN typed.
const RUNS: usize = 100;

/// An agent started with the swtpm in its environment, a PIN-protected TPM key and three files
/// sealed to it; `None` where swtpm or age is missing.
struct Setup {
    tpm: Swtpm,
    agent: Agent,
    age: PathBuf,
    /// PATH with `age-plugin-hyperseal` first.
    path: String,
    key: PathBuf,
    recipient: String,
}

fn setup() -> Option<Setup> {
    let (tpm, age) = (Swtpm::start()?, common::peer("age")?);
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
    let plugins = dir.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    std::os::unix::fs::symlink(BIN, plugins.join("age-plugin-hyperseal")).unwrap();
    let path = format!("{}:{}", plugins.display(), common::tools_path());
    let pin_file = dir.path().join("pin");
    std::fs::write(&pin_file, format!("{PIN}\n")).unwrap();
    let pin_arg = pin_file.to_str().unwrap();
    let (key, recipient) = keygen(&tpm.tcti(), dir.path(), "host.key", &["--pin", "--pin-file", pin_arg]);
    let tcti = format!("TPM2TOOLS_TCTI={}", tpm.tcti());
    let agent = Agent::start_in(dir, &["env", &tcti], &[]);
    let s = Setup { tpm, agent, age, path, key, recipient };
    for i in 0..3 {
        let out = s.agent.path(&format!("{i}.age"));
        let mut c = Command::new(BIN);
        c.args(["encrypt", "-q", "--format", "age", "-r", &s.recipient, "-o"]).arg(&out);
        let o = c.arg(&s.key).output().unwrap();
        assert!(o.status.success(), "encrypt: {}", String::from_utf8_lossy(&o.stderr));
    }
    std::fs::write(s.agent.path("agent.txt"), s.agent.ok(&["agent", "identity"])).unwrap();
    Some(s)
}

impl Setup {
    fn add(&self, args: &[&str]) -> String {
        let mut argv = vec!["agent", "add"];
        argv.extend(args);
        argv.push(self.key.to_str().unwrap());
        let o = self.agent.run(&argv);
        assert!(o.status.success(), "agent add: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    }

    /// `age -d -i agent.txt FILE` with no terminal (a new session): it opens the file only if
    /// nothing had to be asked.
    fn age_quiet(&self, file: &str) -> Output {
        Command::new("setsid")
            .args(["-w", self.age.to_str().unwrap(), "-d", "-i", "agent.txt", file])
            .current_dir(self.agent.dir.path())
            .env("PATH", &self.path)
            .env_remove("HYPERSEAL_AGENT_SOCK")
            .env_remove("TPM2TOOLS_TCTI")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// `age -d -i agent.txt FILE` on a terminal, typing `typed` at its prompts: (status, stderr,
    /// what the terminal showed, the plaintext).
    fn age_typed(&self, file: &str, typed: &[&str]) -> (i64, String, String, Vec<u8>) {
        let out = self.agent.path("out");
        let _ = std::fs::remove_file(&out);
        let argv = [self.age.to_str().unwrap(), "-d", "-i", "agent.txt", "-o", out.to_str().unwrap(), file];
        let (status, stderr, tty) =
            on_terminal(&argv, self.agent.dir.path(), &[("PATH", self.path.as_str())], typed);
        (status, stderr, tty, std::fs::read(&out).unwrap_or_default())
    }

    /// The PIN prompts a terminal showed.
    fn prompts(tty: &str) -> usize {
        tty.matches("TPM PIN for host.key").count()
    }

    fn plain(&self) -> Vec<u8> {
        std::fs::read(&self.key).unwrap()
    }

    fn failures(&self) -> Option<u32> {
        lockout_counter(&self.tpm.tcti())
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn many_age_runs_through_the_agent_cost_one_tpm_pin() {
    let Some(s) = setup() else { return };
    let said = s.add(&[]);
    assert!(said.contains(&s.recipient), "the agent names the TPM key's recipient: {said}");
    let list = String::from_utf8(s.agent.ok(&["agent", "list"])).unwrap();
    assert!(list.contains(&s.recipient) && list.contains("host.key"), "{list}");
    // Nothing cached yet: no terminal, no PIN, and no try at the TPM without one.
    let before = s.failures();
    let o = s.age_quiet("0.age");
    assert!(!o.status.success(), "opened without a PIN");
    assert!(stderr(&o).contains("needs its PIN"), "{}", stderr(&o));
    // Typed once, on age's own prompt.
    let (status, err, tty, out) = s.age_typed("0.age", &[PIN]);
    assert_eq!(status, 0, "age on a terminal: {err}\n{tty}");
    assert_eq!(Setup::prompts(&tty), 1, "one PIN prompt: {tty}");
    assert_eq!(out, s.plain());
    // Then each run is a new age and a new age-plugin-hyperseal, none able to ask anyone.
    for i in 0..RUNS {
        let o = s.age_quiet(&format!("{}.age", i % 3));
        assert!(o.status.success(), "run {i}: {}", stderr(&o));
        assert_eq!(o.stdout, s.plain(), "run {i}");
    }
    if let (Some(b), Some(a)) = (before, s.failures()) {
        assert_eq!(a, b, "no failed authorization at the TPM");
    }
    // hyperseal's own decrypt through the agent uses the same cache.
    let o = s.agent.run(&["decrypt", "1.age"]);
    assert!(o.status.success() && o.stdout == s.plain(), "{}", stderr(&o));
}

#[test]
fn lock_remove_and_the_pin_lifetime_make_the_pin_asked_again() {
    let Some(s) = setup() else { return };
    s.add(&[]);
    assert_eq!(s.age_typed("0.age", &[PIN]).0, 0);
    assert!(s.age_quiet("1.age").status.success(), "the PIN was not cached");
    assert_eq!(s.agent.lock(true, "lock pass").0, 0);
    assert!(!s.age_quiet("1.age").status.success(), "opened while locked");
    assert_eq!(s.agent.lock(false, "lock pass").0, 0);
    let o = s.age_quiet("1.age");
    assert!(!o.status.success(), "the PIN survived a lock");
    assert!(stderr(&o).contains("needs its PIN"), "{}", stderr(&o));
    let (status, err, tty, out) = s.age_typed("2.age", &[PIN]);
    assert_eq!((status, Setup::prompts(&tty)), (0, 1), "the key came back, its PIN asked: {err}\n{tty}");
    assert_eq!(out, s.plain());
    assert!(s.age_quiet("1.age").status.success());

    // remove forgets it; the same file added again knows no PIN.
    s.agent.ok(&["agent", "remove", "--all"]);
    s.add(&[]);
    assert!(!s.age_quiet("1.age").status.success(), "the PIN survived a remove");

    // --pin-ttl: kept that long, then forgotten.
    s.agent.ok(&["agent", "remove", "--all"]);
    s.add(&["--pin-ttl", "2s"]);
    assert_eq!(s.age_typed("0.age", &[PIN]).0, 0);
    assert!(s.age_quiet("1.age").status.success());
    std::thread::sleep(std::time::Duration::from_millis(2600));
    assert!(!s.age_quiet("1.age").status.success(), "a PIN outlived its --pin-ttl");
}

#[test]
fn a_wrong_pin_says_the_tries_left_and_is_never_cached_nor_retried() {
    let Some(s) = setup() else { return };
    s.add(&[]);
    let before = s.failures();
    let (status, err, tty, _) = s.age_typed("0.age", &["1357"]);
    assert_ne!(status, 0, "opened with a wrong PIN");
    assert_eq!(Setup::prompts(&tty), 1, "asked once, not again in a loop: {tty}");
    let shown = format!("{err}{tty}");
    assert!(shown.contains("wrong PIN (") && shown.contains("tries left"), "{shown}");
    // Not cached: the next run has nothing to give, and makes no try at the TPM.
    for _ in 0..3 {
        assert!(!s.age_quiet("1.age").status.success(), "a wrong PIN was cached");
    }
    if let (Some(b), Some(a)) = (before, s.failures()) {
        assert_eq!(a, b + 1, "one failed try at the TPM, never more");
    }
    // The right PIN still opens it, and is cached.
    let (status, err, _, out) = s.age_typed("1.age", &[PIN]);
    assert_eq!(status, 0, "{err}");
    assert_eq!(out, s.plain());
    assert!(s.age_quiet("2.age").status.success());
}

/// hyperseal's own decrypt, a client of the agent, asks the PIN on its terminal once; age then
/// needs none.
#[test]
fn hyperseal_decrypt_types_the_pin_for_every_client() {
    let Some(s) = setup() else { return };
    s.add(&[]);
    let sock = s.agent.sock();
    let out = s.agent.path("out.txt");
    let argv = [BIN, "decrypt", "-o", out.to_str().unwrap(), "0.age"];
    let env = [("HYPERSEAL_AGENT_SOCK", sock.to_str().unwrap())];
    let (status, err, tty) = on_terminal(&argv, s.agent.dir.path(), &env, &[PIN]);
    assert_eq!((status, Setup::prompts(&tty)), (0, 1), "{err}\n{tty}");
    assert_eq!(std::fs::read(&out).unwrap(), s.plain());
    let o = s.age_quiet("1.age");
    assert!(o.status.success() && o.stdout == s.plain(), "{}", stderr(&o));
}

/// A file that a key added before the TPM key opens costs no PIN and no TPM use.
#[test]
fn a_file_another_key_opens_asks_no_tpm_pin() {
    let Some(s) = setup() else { return };
    let (other, other_public) = common::keypair(s.agent.dir.path(), "other", "hybrid");
    s.agent.ok(&["agent", "add", &other]);
    s.add(&[]);
    let both = s.agent.path("both.age");
    let o = Command::new(BIN)
        .args(["encrypt", "-q", "--format", "age", "-r", &other_public, "-r", &s.recipient, "-o"])
        .arg(&both)
        .arg(&s.key)
        .output()
        .unwrap();
    assert!(o.status.success(), "encrypt: {}", stderr(&o));
    let (status, err, tty, out) = s.age_typed("both.age", &[]);
    assert_eq!(status, 0, "{err}\n{tty}");
    assert_eq!(Setup::prompts(&tty), 0, "the TPM key's PIN was asked: {tty}");
    assert_eq!(out, s.plain());
}

/// A TPM file that also holds another kind of key is refused whole, with why.
#[test]
fn a_tpm_file_mixed_with_other_keys_is_refused() {
    let Some(s) = setup() else { return };
    let (other, _) = crate::agent_support::keypair(s.agent.dir.path(), "x");
    let mixed = s.agent.path("mixed.key");
    let text = std::fs::read_to_string(&s.key).unwrap() + &std::fs::read_to_string(other).unwrap();
    std::fs::write(&mixed, text).unwrap();
    let o = s.agent.run(&["agent", "add", mixed.to_str().unwrap()]);
    assert!(!o.status.success(), "a mixed file was taken");
    assert!(stderr(&o).contains("TPM lines only"), "{}", stderr(&o));
}

/// As root, the agent's memory is searched for the PIN: there while it is cached (the
/// control), nowhere once the agent is locked, nor after an unlock.
#[test]
fn nothing_of_the_pin_is_left_in_the_agent_after_lock() {
    if !crate::agent_support::is_root("the TPM PIN search of the agent's memory") {
        return;
    }
    let Some(s) = setup() else { return };
    s.add(&[]);
    assert_eq!(s.age_typed("0.age", &[PIN]).0, 0);
    let needles = [("the PIN", PIN.as_bytes().to_vec())];
    let found = crate::agent_memory::found_in_memory(s.agent.pid(), &needles);
    assert_eq!(found, ["the PIN"], "the control: the cached PIN is found");
    assert_eq!(s.agent.lock(true, "lock pass").0, 0);
    let found = crate::agent_memory::found_in_memory(s.agent.pid(), &needles);
    assert!(found.is_empty(), "the PIN is in the agent's memory after lock");
    assert_eq!(s.agent.lock(false, "lock pass").0, 0);
    let found = crate::agent_memory::found_in_memory(s.agent.pid(), &needles);
    assert!(found.is_empty(), "the PIN is in the agent's memory after unlock");
}

/// The bytes of an `AGE-PLUGIN-HYPERSEAL-1…` line (bech32 of any length, its checksum dropped).
fn plugin_line_bytes(key: &std::path::Path) -> Vec<u8> {
    let text = std::fs::read_to_string(key).unwrap();
    let line = text.lines().find(|l| l.starts_with("AGE-PLUGIN-HYPERSEAL-1")).unwrap();
    crate::agent_memory::bech32_data(line)
}

/// Runs tpm2-tools' `TOOL ARGS` in `dir` against `tcti`, then flushes every transient object:
/// swtpm has no resource manager, and three objects fill it.
fn tpm2(tcti: &str, dir: &std::path::Path, tool: &str, args: &[&str]) -> Vec<u8> {
    let run = |tool: &str, args: &[&str]| {
        let o = Command::new(tool).args(args).current_dir(dir).env("TPM2TOOLS_TCTI", tcti).output().unwrap();
        assert!(o.status.success(), "{tool}: {}", stderr(&o));
        o.stdout
    };
    let out = run(tool, args);
    run("tpm2_flushcontext", &["-t"]);
    out
}

/// The 64-byte ML-KEM seed sealed in `key`, unsealed with tpm2-tools alone (FORMAT.md §12): the
/// storage primary re-created from the SRK template, the sealed object's blobs loaded under it,
/// `tpm2_unseal` with the PIN. The seed goes only to this process's memory; `None` without
/// tpm2-tools.
fn seed_by_tpm2_tools(tcti: &str, key: &std::path::Path, pin: &str) -> Option<Vec<u8>> {
    common::peer_on_path("tpm2_unseal")?;
    let b = plugin_line_bytes(key);
    assert_eq!(&b[..6], b"\0TPM\x01\x03", "a post-quantum key with a PIN");
    let b16 = |at: &mut usize| {
        let n = u16::from_be_bytes([b[*at], b[*at + 1]]) as usize;
        *at += 2 + n;
        b[*at - 2 - n..*at].to_vec()
    };
    let mut at = 6;
    let parent_name = b16(&mut at)[2..].to_vec();
    at += 1 + 33 * b[at] as usize;
    let (_ecdh_private, _ecdh_public) = (b16(&mut at), b16(&mut at));
    let (private, public) = (b16(&mut at), b16(&mut at));
    assert_eq!(at, b.len(), "the sealed seed's blobs end the identity");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("seal.priv"), private).unwrap();
    std::fs::write(dir.path().join("seal.pub"), public).unwrap();
    // tpm2-tools reads the unique field as its C struct: x and y, each a little-endian length
    // and a 128-byte buffer; the SRK template's are 32 zero bytes each.
    let mut unique = vec![0u8; 2 * 130];
    unique[0] = 32;
    unique[130] = 32;
    std::fs::write(dir.path().join("unique"), unique).unwrap();
    let attrs = "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|noda|restricted|decrypt";
    let primary = ["-Q", "-C", "o", "-g", "sha256", "-G", "ecc256:aes128cfb", "-a", attrs, "-u", "unique"];
    tpm2(tcti, dir.path(), "tpm2_createprimary", &[&primary[..], &["-c", "p.ctx"]].concat());
    tpm2(tcti, dir.path(), "tpm2_readpublic", &["-Q", "-c", "p.ctx", "-n", "p.name"]);
    let name = std::fs::read(dir.path().join("p.name")).unwrap();
    assert_eq!(name, parent_name, "tpm2-tools made the key's parent again");
    let load = ["-Q", "-C", "p.ctx", "-u", "seal.pub", "-r", "seal.priv", "-c", "seal.ctx"];
    tpm2(tcti, dir.path(), "tpm2_load", &load);
    let seed = tpm2(tcti, dir.path(), "tpm2_unseal", &["-c", "seal.ctx", "-p", pin]);
    assert_eq!(seed.len(), 64, "d || z");
    Some(seed)
}

/// What must never be found: the seed, each of its halves (d and z, FIPS 203) and its hex.
fn seed_needles(seed: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("the seed", seed.to_vec()),
        ("d", seed[..32].to_vec()),
        ("z", seed[32..].to_vec()),
        ("the seed in hex", hex::encode(seed).into_bytes()),
    ]
}

/// Every file under `dir`, each with the needles it holds.
fn files_holding(dir: &std::path::Path, needles: &[(&'static str, Vec<u8>)]) -> Vec<(PathBuf, &'static str)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files_holding(&path, needles));
        } else if let Ok(bytes) = std::fs::read(&path) {
            for (name, needle) in needles {
                if bytes.windows(needle.len()).any(|w| w == needle) {
                    found.push((path.clone(), *name));
                }
            }
        }
    }
    found
}

/// `hyperseal decrypt` with the TPM key opens files (one per run, and a batch in one `rekey`),
/// with its own folder as HOME and TMPDIR: no file written there, and nothing it printed,
/// holds the seed.
#[test]
fn no_file_a_decrypt_wrote_holds_the_unsealed_seed() {
    let Some(tpm) = Swtpm::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (home, tmp) = (dir.path().join("home"), dir.path().join("tmp"));
    std::fs::create_dir(&home).unwrap();
    std::fs::create_dir(&tmp).unwrap();
    let pin_file = dir.path().join("pin");
    std::fs::write(&pin_file, format!("{PIN}\n")).unwrap();
    let pin_arg = pin_file.to_str().unwrap();
    let (key, recipient) = keygen(&tpm.tcti(), dir.path(), "host.key", &["--pin", "--pin-file", pin_arg]);
    let Some(seed) = seed_by_tpm2_tools(&tpm.tcti(), &key, PIN) else { return };
    let hs = |args: &[&str]| {
        let o = Command::new(BIN)
            .args(args)
            .current_dir(dir.path())
            .env("HOME", &home)
            .env("TMPDIR", &tmp)
            .env("TPM2TOOLS_TCTI", tpm.tcti())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        [o.stdout, o.stderr].concat()
    };
    let mut printed = Vec::new();
    for (i, size) in [0usize, 1024, 200_000].into_iter().enumerate() {
        std::fs::write(dir.path().join(format!("{i}")), common::data(size, i as u64)).unwrap();
        let (plain, sealed) = (format!("{i}"), format!("{i}.age"));
        printed.extend(hs(&["encrypt", "-q", "--format", "age", "-r", &recipient, "-o", &sealed, &plain]));
        let out = format!("{i}.out");
        printed.extend(hs(&[
            "decrypt",
            "-i",
            "host.key",
            "--identity-passphrase-file",
            pin_arg,
            "-o",
            &out,
            &sealed,
        ]));
        assert_eq!(std::fs::read(dir.path().join(out)).unwrap(), common::data(size, i as u64));
        printed.extend(hs(&["decrypt", "-i", "host.key", "--identity-passphrase-file", pin_arg, &sealed]));
    }
    let (_, spare) = common::keypair(dir.path(), "spare", "hybrid");
    let rekey = ["rekey", "-i", "host.key", "--identity-passphrase-file", pin_arg, "--add", &spare];
    printed.extend(hs(&[&rekey[..], &["0.age", "1.age", "2.age"]].concat()));
    let needles = seed_needles(&seed);
    assert!(files_holding(dir.path(), &needles).is_empty(), "{:?}", files_holding(dir.path(), &needles));
    let shown: Vec<_> = needles.iter().filter(|(_, n)| printed.windows(n.len()).any(|w| w == n)).collect();
    assert!(shown.is_empty(), "printed: {:?}", shown.iter().map(|n| n.0).collect::<Vec<_>>());
}

/// As root: the agent opens files with the TPM key (age through the plugin, and hyperseal as
/// its client), is locked, and its whole memory is searched for the seed tpm2-tools unsealed.
#[test]
fn the_unsealed_seed_is_not_in_the_agent_after_use_and_lock() {
    if !crate::agent_support::is_root("the TPM seed search of the agent's memory") {
        return;
    }
    let Some(s) = setup() else { return };
    let Some(seed) = seed_by_tpm2_tools(&s.tpm.tcti(), &s.key, PIN) else { return };
    s.add(&[]);
    assert_eq!(s.age_typed("0.age", &[PIN]).0, 0);
    for i in 0..5 {
        assert!(s.age_quiet(&format!("{}.age", i % 3)).status.success());
    }
    let o = s.agent.run(&["decrypt", "1.age"]);
    assert!(o.status.success() && o.stdout == s.plain(), "{}", stderr(&o));
    assert_eq!(s.agent.lock(true, "lock pass").0, 0);
    let found = crate::agent_memory::found_in_memory(s.agent.pid(), &seed_needles(&seed));
    assert!(found.is_empty(), "the agent's memory holds {found:?} after lock");
}
