//! TPM-bound identities (`keygen --tpm`) on swtpm, Debian's TPM 2.0 emulator, started by each
//! test on free ports in a scratch folder: age v1.3.1 and rage encrypt to the printed
//! recipients, `hyperseal decrypt -i host.key` opens every file; another TPM, a changed PCR and
//! a wrong PIN fail with errors that name them; a batch in one process loads the key once (the
//! TPM commands counted by a proxy between hyperseal and swtpm).
//!
//! Without swtpm (or tpm2-tools for the PCR test) each test prints a note and passes, unless
//! `HYPERSEAL_REQUIRE_PEERS` is set (`make test`).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use crate::common::{self, peer, peer_on_path, tools_path};

const HS: &str = env!("CARGO_BIN_EXE_hyperseal");

/// One swtpm on free ports, killed when dropped.
pub struct Swtpm {
    child: Child,
    pub port: u16,
    _state: tempfile::TempDir,
}

fn free_port_pair() -> u16 {
    loop {
        let a = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = a.local_addr().unwrap().port();
        if port < 65535 && TcpListener::bind(("127.0.0.1", port + 1)).is_ok() {
            return port;
        }
    }
}

impl Swtpm {
    pub fn start() -> Option<Swtpm> {
        peer_on_path("swtpm")?;
        let state = tempfile::tempdir().unwrap();
        let port = free_port_pair();
        let child = Command::new("swtpm")
            .args(["socket", "--tpm2", "--flags", "not-need-init,startup-clear", "--server"])
            .arg(format!("type=tcp,port={port},bindaddr=127.0.0.1"))
            .arg("--ctrl")
            .arg(format!("type=tcp,port={},bindaddr=127.0.0.1", port + 1))
            .arg("--tpmstate")
            .arg(format!("dir={}", state.path().display()))
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        for _ in 0..400 {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        Some(Swtpm { child, port, _state: state })
    }

    pub fn tcti(&self) -> String {
        format!("swtpm:host=127.0.0.1,port={}", self.port)
    }
}

impl Drop for Swtpm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `hyperseal ARGS` against the TPM at `tcti`.
fn hs(tcti: &str, args: &[&str]) -> Output {
    Command::new(HS).args(args).env("TPM2TOOLS_TCTI", tcti).stdin(Stdio::null()).output().unwrap()
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn p(x: &Path) -> &str {
    x.to_str().unwrap()
}

/// `keygen --tpm EXTRA -o DIR/NAME`: the key file and the printed recipient.
pub fn keygen(tcti: &str, dir: &Path, name: &str, extra: &[&str]) -> (PathBuf, String) {
    let key = dir.join(name);
    let mut args = vec!["keygen", "--tpm", "-o", p(&key)];
    args.extend_from_slice(extra);
    let err = ok(&hs(tcti, &args));
    let line = err.lines().find_map(|l| l.strip_prefix("Public key: ")).expect("the recipient is printed");
    assert!(err.contains("recovery"), "the recovery reminder: {err}");
    (key, line.to_string())
}

fn message(o: &Output) -> String {
    assert!(!o.status.success(), "it should fail");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn age_and_rage_encrypt_and_the_tpm_key_opens_every_file() {
    let (Some(tpm), Some(age)) = (Swtpm::start(), peer("age")) else { return };
    let rage = Path::new(common::TOOLS).join("../cargo/bin/rage");
    let dir = tempfile::tempdir().unwrap();
    for (name, extra, prefix) in
        [("pq.key", &[][..], "age1tagpq1"), ("classic.key", &["--classic"][..], "age1tag1")]
    {
        let (key, recipient) = keygen(&tpm.tcti(), dir.path(), name, extra);
        assert!(recipient.starts_with(prefix), "{recipient}");
        let text = std::fs::read_to_string(&key).unwrap();
        assert!(text.lines().any(|l| l.starts_with("AGE-PLUGIN-HYPERSEAL-1")), "{text}");
        assert!(!text.contains("AGE-SECRET-KEY"), "only TPM blobs in the file");
        let mut peers = vec![age.clone()];
        if rage.exists() {
            peers.push(rage.clone());
        } else {
            eprintln!("note: rage not installed (run `make rage`); skipping the rage part");
        }
        for (i, tool) in peers.iter().enumerate() {
            for size in [0usize, 1000, 65536, 65537] {
                let plain: Vec<u8> = common::data(size, (i * 7 + size) as u64);
                let (src, enc) =
                    (dir.path().join("plain"), dir.path().join(format!("{name}-{i}-{size}.age")));
                std::fs::write(&src, &plain).unwrap();
                let made = Command::new(tool)
                    .args(["-r", &recipient, "-o", p(&enc), p(&src)])
                    .env("PATH", tools_path())
                    .output()
                    .unwrap();
                assert!(
                    made.status.success(),
                    "{}: {}",
                    tool.display(),
                    String::from_utf8_lossy(&made.stderr)
                );
                let out = Command::new(HS)
                    .args(["decrypt", "-i", p(&key), p(&enc)])
                    .env("TPM2TOOLS_TCTI", tpm.tcti())
                    .output()
                    .unwrap();
                assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
                assert!(out.stdout == plain, "{} {size} bytes", tool.display());
            }
        }
    }
}

#[test]
fn another_tpm_is_named_for_every_file() {
    let (Some(a), Some(b)) = (Swtpm::start(), Swtpm::start()) else { return };
    let dir = tempfile::tempdir().unwrap();
    let (key, recipient) = keygen(&a.tcti(), dir.path(), "host.key", &[]);
    for i in 0..3 {
        let f = dir.path().join(format!("{i}.age"));
        ok(&hs(&a.tcti(), &["encrypt", "-r", &recipient, "-o", p(&f), p(&key)]));
        let err = message(&hs(&b.tcti(), &["decrypt", "-i", p(&key), p(&f)]));
        assert!(err.contains("hyperseal: error: ") && err.contains("different TPM"), "{err}");
        assert!(err.contains("hint: ") && err.contains("recovery"), "{err}");
        assert_eq!(err.lines().count(), 2, "one error line, one hint: {err}");
    }
}

#[test]
fn a_changed_pcr_is_named() {
    let Some(tpm) = Swtpm::start() else { return };
    let Some(extend) = peer_on_path("tpm2_pcrextend") else { return };
    let dir = tempfile::tempdir().unwrap();
    let (key, recipient) = keygen(&tpm.tcti(), dir.path(), "host.key", &["--pcr", "7"]);
    let f = dir.path().join("f.age");
    ok(&hs(&tpm.tcti(), &["encrypt", "-r", &recipient, "-o", p(&f), p(&key)]));
    ok(&hs(&tpm.tcti(), &["decrypt", "-i", p(&key), "-o", p(&dir.path().join("out")), p(&f)]));
    let ext = Command::new(extend)
        .arg(format!("7:sha256={}", "11".repeat(32)))
        .env("TPM2TOOLS_TCTI", tpm.tcti())
        .output()
        .unwrap();
    assert!(ext.status.success(), "{}", String::from_utf8_lossy(&ext.stderr));
    let err = message(&hs(&tpm.tcti(), &["decrypt", "-i", p(&key), p(&f)]));
    assert!(err.contains("PCR 7 changed"), "{err}");
    assert!(err.contains("firmware") && err.contains("kernel"), "{err}");
}

/// `tpm2_getcap properties-variable`'s `TPM2_PT_LOCKOUT_COUNTER`.
pub fn lockout_counter(tcti: &str) -> Option<u32> {
    let out = Command::new(peer_on_path("tpm2_getcap")?)
        .arg("properties-variable")
        .env("TPM2TOOLS_TCTI", tcti)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = text.lines().find(|l| l.contains("TPM2_PT_LOCKOUT_COUNTER"))?;
    let v = line.split(':').nth(1)?.trim();
    Some(v.strip_prefix("0x").map_or_else(|| v.parse().unwrap(), |h| u32::from_str_radix(h, 16).unwrap()))
}

#[test]
fn a_wrong_pin_says_the_tries_left_once_for_a_batch() {
    let Some(tpm) = Swtpm::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (good, bad) = (dir.path().join("good"), dir.path().join("bad"));
    std::fs::write(&good, "2468\n").unwrap();
    std::fs::write(&bad, "1357\n").unwrap();
    let (key, recipient) = keygen(&tpm.tcti(), dir.path(), "host.key", &["--pin", "--pin-file", p(&good)]);
    let files: Vec<PathBuf> = (0..4).map(|i| dir.path().join(format!("{i}.age"))).collect();
    for f in &files {
        ok(&hs(&tpm.tcti(), &["encrypt", "-r", &recipient, "-o", p(f), p(&key)]));
    }
    let before = lockout_counter(&tpm.tcti());
    let (_, spare) = common::keypair(dir.path(), "spare", "hybrid");
    let mut args = vec!["rekey", "-i", p(&key), "--identity-passphrase-file", p(&bad), "--add", &spare];
    args.extend(files.iter().map(|f| p(f)));
    let err = message(&hs(&tpm.tcti(), &args));
    assert!(err.contains("wrong PIN (") && err.contains("tries left"), "{err}");
    assert!(err.contains("hint: check the PIN"), "{err}");
    if let (Some(b), Some(a)) = (before, lockout_counter(&tpm.tcti())) {
        assert_eq!(a, b + 1, "one failed try for the whole batch, never one per file");
    }
    // The right PIN still opens them.
    let out =
        hs(&tpm.tcti(), &["decrypt", "-i", p(&key), "--identity-passphrase-file", p(&good), p(&files[0])]);
    assert!(out.status.success() && out.stdout == std::fs::read(&key).unwrap());
}

/// Counts the TPM commands that pass between hyperseal and swtpm (the mssim protocol:
/// `TPM_SEND_COMMAND`, locality, length, command; length, response, acknowledgement).
struct Counter {
    port: u16,
    seen: Arc<Mutex<HashMap<u32, usize>>>,
    wire: Arc<Mutex<Vec<u8>>>,
}

impl Counter {
    fn start(to: u16) -> Counter {
        Counter::rewriting(to, |_, _| {})
    }

    /// A counter that also hands each answer to `rewrite` (with its command's code) on the way
    /// back: an active interposer on the TPM's bus.
    fn rewriting(to: u16, rewrite: fn(u32, &mut [u8])) -> Counter {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(HashMap::new()));
        let wire = Arc::new(Mutex::new(Vec::new()));
        let (counts, bytes) = (seen.clone(), wire.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(mut client) = client else { return };
                let mut tpm = TcpStream::connect(("127.0.0.1", to)).unwrap();
                let _ = relay(&mut client, &mut tpm, &counts, &bytes, rewrite);
            }
        });
        Counter { port, seen, wire }
    }

    fn tcti(&self) -> String {
        format!("swtpm:host=127.0.0.1,port={}", self.port)
    }

    fn count(&self, code: u32) -> usize {
        self.seen.lock().unwrap().get(&code).copied().unwrap_or(0)
    }
}

fn read_u32(s: &mut TcpStream) -> std::io::Result<u32> {
    let mut b = [0u8; 4];
    s.read_exact(&mut b)?;
    Ok(u32::from_be_bytes(b))
}

fn relay(
    client: &mut TcpStream,
    tpm: &mut TcpStream,
    seen: &Mutex<HashMap<u32, usize>>,
    wire: &Mutex<Vec<u8>>,
    rewrite: fn(u32, &mut [u8]),
) -> std::io::Result<()> {
    loop {
        let op = read_u32(client)?;
        tpm.write_all(&op.to_be_bytes())?;
        if op != 8 {
            return Ok(()); // TPM_SESSION_END
        }
        let mut head = [0u8; 5];
        client.read_exact(&mut head)?;
        let mut cmd = vec![0u8; u32::from_be_bytes(head[1..].try_into().unwrap()) as usize];
        client.read_exact(&mut cmd)?;
        let code = u32::from_be_bytes(cmd[6..10].try_into().unwrap());
        *seen.lock().unwrap().entry(code).or_default() += 1;
        wire.lock().unwrap().extend_from_slice(&cmd);
        tpm.write_all(&head)?;
        tpm.write_all(&cmd)?;
        let len = read_u32(tpm)?;
        let mut resp = vec![0u8; len as usize + 4];
        tpm.read_exact(&mut resp)?;
        rewrite(code, &mut resp[..len as usize]);
        wire.lock().unwrap().extend_from_slice(&resp);
        client.write_all(&len.to_be_bytes())?;
        client.write_all(&resp)?;
    }
}

const CREATE_PRIMARY: u32 = 0x131;
const LOAD: u32 = 0x157;
const ECDH_ZGEN: u32 = 0x154;
const UNSEAL: u32 = 0x15E;
const START_AUTH_SESSION: u32 = 0x176;

#[test]
fn a_batch_in_one_process_loads_the_key_once() {
    let Some(tpm) = Swtpm::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (key, recipient) = keygen(&tpm.tcti(), dir.path(), "host.key", &["--pcr", "0,7"]);
    // Sealed here, in this process (the recipient needs no TPM), so the count is of the one
    // re-key run below. The counts that do not grow with `n` are what a boot's thousand secrets
    // (agenix, sops-nix) rely on; 40 keeps the test short on swtpm.
    let n = 40;
    let to = [hyperseal::recipient::parse_recipient(&recipient).unwrap()];
    let files: Vec<PathBuf> = (0..n).map(|i| dir.path().join(format!("{i}.age"))).collect();
    for (i, f) in files.iter().enumerate() {
        std::fs::write(f, hyperseal::encrypt(&to, &common::data(100 + i, i as u64)).unwrap()).unwrap();
    }
    let (spare_key, spare) = common::keypair(dir.path(), "spare", "hybrid");
    let counter = Counter::start(tpm.port);
    let mut args = vec!["rekey", "-i", p(&key), "--add", &spare];
    args.extend(files.iter().map(|f| p(f)));
    ok(&hs(&counter.tcti(), &args));
    assert_eq!(counter.count(CREATE_PRIMARY), 1, "the primary once");
    assert_eq!(counter.count(LOAD), 2, "the key and the sealed seed once");
    assert_eq!(counter.count(START_AUTH_SESSION), 1, "one policy session");
    // One opening per file: an addition keeps the stanza the -i key opened, so the check that
    // the key still opens the result needs no second one. Per opening: one ECDH, one unseal,
    // no set-up.
    assert_eq!(counter.count(ECDH_ZGEN), n, "one ECDH per file");
    assert_eq!(counter.count(UNSEAL), n, "the seed unsealed per decapsulation, never kept");
    // The re-key happened: the spare key opens every file.
    let spare_ids =
        hyperseal::recipient::parse_identities(&std::fs::read_to_string(&spare_key).unwrap()).unwrap();
    for (i, f) in files.iter().enumerate() {
        let opened = hyperseal::decrypt(&spare_ids, &std::fs::read(f).unwrap()).unwrap();
        assert!(opened == common::data(100 + i, i as u64), "file {i}");
    }
}

#[test]
fn without_a_tpm_the_error_says_where_it_looked() {
    let dir = tempfile::tempdir().unwrap();
    let err =
        message(&hs("device:/nonexistent/tpmrm0", &["keygen", "--tpm", "-o", p(&dir.path().join("k"))]));
    assert!(err.contains("cannot reach the TPM at /nonexistent/tpmrm0"), "{err}");
    assert!(err.contains("hint: ") && err.contains("TPM2TOOLS_TCTI"), "{err}");
    assert!(!dir.path().join("k").exists(), "no key file without a key");
}

/// A folder holding `age-plugin-hyperseal` (this build, by its plugin name), for a peer's PATH.
fn plugin_dir(dir: &std::path::Path) -> std::path::PathBuf {
    let plugins = dir.join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    std::os::unix::fs::symlink(HS, plugins.join("age-plugin-hyperseal")).unwrap();
    plugins
}

#[test]
fn the_real_age_decrypts_through_the_plugin() {
    let (Some(tpm), Some(age)) = (Swtpm::start(), peer("age")) else { return };
    let dir = tempfile::tempdir().unwrap();
    let plugins = plugin_dir(dir.path());
    let path = format!("{}:{}", plugins.display(), tools_path());
    for (name, extra) in [("pq.key", &[][..]), ("classic.key", &["--classic"][..])] {
        let (key, recipient) = keygen(&tpm.tcti(), dir.path(), name, extra);
        let f = dir.path().join(format!("{name}.age"));
        let made = Command::new(&age).args(["-r", &recipient, "-o", p(&f), p(&key)]).output().unwrap();
        assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
        let out = Command::new(&age)
            .args(["-d", "-i", p(&key), p(&f)])
            .env("PATH", &path)
            .env("TPM2TOOLS_TCTI", tpm.tcti())
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stdout == std::fs::read(&key).unwrap(), "{name}");
    }
}

#[test]
fn the_key_file_gives_its_recipient_and_refuses_another_keys() {
    let Some(tpm) = Swtpm::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (key, recipient) = keygen(&tpm.tcti(), dir.path(), "host.key", &[]);
    let (other, other_recipient) = keygen(&tpm.tcti(), dir.path(), "other.key", &[]);
    let out = hs(&tpm.tcti(), &["pubkey", "-i", p(&key)]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), recipient);
    // encrypt -i: to oneself, as age's -e -i
    let f = dir.path().join("self.age");
    ok(&hs(&tpm.tcti(), &["encrypt", "-i", p(&key), "-o", p(&f), p(&other)]));
    let out = hs(&tpm.tcti(), &["decrypt", "-i", p(&key), p(&f)]);
    assert!(out.status.success() && out.stdout == std::fs::read(&other).unwrap());
    // A `# public key:` line swapped for another key's is not believed.
    let text = std::fs::read_to_string(&key).unwrap().replace(&recipient, &other_recipient);
    let forged = dir.path().join("forged.key");
    std::fs::write(&forged, text).unwrap();
    let err = message(&hs(&tpm.tcti(), &["pubkey", "-i", p(&forged)]));
    assert!(err.contains("is not this key's"), "{err}");
}

#[test]
fn the_pin_never_crosses_the_wire() {
    let Some(tpm) = Swtpm::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let pin = "pin-7f3a9c11";
    let pin_file = dir.path().join("pin");
    std::fs::write(&pin_file, format!("{pin}\n")).unwrap();
    let counter = Counter::start(tpm.port);
    let (key, recipient) =
        keygen(&counter.tcti(), dir.path(), "host.key", &["--pin", "--pin-file", p(&pin_file)]);
    let f = dir.path().join("f.age");
    ok(&hs(&tpm.tcti(), &["encrypt", "-r", &recipient, "-o", p(&f), p(&key)]));
    let out =
        hs(&counter.tcti(), &["decrypt", "-i", p(&key), "--identity-passphrase-file", p(&pin_file), p(&f)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (u, e) = (counter.count(UNSEAL), counter.count(ECDH_ZGEN));
    assert!(u >= 1 && e >= 1, "the traffic was seen: {u} {e}");
    let wire = counter.wire.lock().unwrap().clone();
    let found = wire.windows(pin.len()).any(|w| w == pin.as_bytes());
    assert!(!found, "the PIN crossed the wire in the clear");
}

#[test]
fn the_real_sops_opens_a_file_for_the_tpm_key_through_the_plugin() {
    let (Some(tpm), Some(sops)) = (Swtpm::start(), peer("sops")) else { return };
    let dir = tempfile::tempdir().unwrap();
    let plugins = plugin_dir(dir.path());
    let (key, recipient) = keygen(&tpm.tcti(), dir.path(), "host.key", &[]);
    assert!(recipient.starts_with("age1tagpq1"), "{recipient}");
    let (plain_key, plain) = common::age_keygen(sops.parent().unwrap(), dir.path(), "admin", false);
    let file = dir.path().join("secrets.yaml");
    std::fs::write(&file, "db_password: correct horse battery staple\n").unwrap();
    let sops_cmd = |with: &Path, args: &[&str]| {
        let mut c = Command::new(&sops);
        c.args(args)
            .env_remove("SOPS_AGE_KEY")
            .env("XDG_CONFIG_HOME", dir.path().join("no-config"))
            .env("SOPS_AGE_KEY_FILE", with)
            .env("PATH", format!("{}:{}", plugins.display(), tools_path()))
            .env("TPM2TOOLS_TCTI", tpm.tcti());
        c.output().unwrap()
    };
    // sops 3.13.3 seals to age's tag recipients only through an `age-plugin-tagpq`, so the file
    // is made for an ordinary key and the TPM key's recipient added by hyperseal's sops re-key.
    let made = sops_cmd(&plain_key, &["-e", "-i", "--age", &plain, p(&file)]);
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    ok(&hs(&tpm.tcti(), &["rekey", "--sops", "--add", &recipient, "-i", p(&plain_key), p(&file)]));
    assert!(std::fs::read_to_string(&file).unwrap().contains("age1tagpq1"));
    // The TPM key file alone: sops runs age-plugin-hyperseal, which does the ECDH in the TPM.
    let opened = sops_cmd(&key, &["-d", p(&file)]);
    assert!(opened.status.success(), "{}", String::from_utf8_lossy(&opened.stderr));
    assert_eq!(String::from_utf8_lossy(&opened.stdout), "db_password: correct horse battery staple\n");
}

/// The error and hint lines of a failed run, each checked to be one of hyperseal's.
fn error_and_hint(o: &Output) -> (String, String) {
    let err = message(o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "one error line, one hint: {err}");
    let e = lines[0].strip_prefix("hyperseal: error: ").unwrap_or_else(|| panic!("{err}"));
    let h = lines[1].strip_prefix("hyperseal: hint: ").unwrap_or_else(|| panic!("{err}"));
    assert!(!e.contains('\u{1f}') && !h.contains('\u{1f}'), "{err:?}");
    (e.to_string(), h.to_string())
}

#[test]
fn an_unsupported_tcti_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let tcti = "tabrmd:bus_name=com.intel.tss2.Tabrmd";
    let (e, h) = error_and_hint(&hs(tcti, &["keygen", "--tpm", "-o", p(&dir.path().join("k"))]));
    assert!(e.contains("tabrmd") && e.contains("not supported"), "{e}");
    assert!(h.contains("device:/dev/tpmrm0") && h.contains("swtpm:host="), "{h}");
    assert!(!dir.path().join("k").exists(), "no key file without a key");
    // The same for a key that is used, not made.
    let Some(tpm) = Swtpm::start() else { return };
    let (key, recipient) = keygen(&tpm.tcti(), dir.path(), "host.key", &[]);
    let f = dir.path().join("f.age");
    ok(&hs(&tpm.tcti(), &["encrypt", "-r", &recipient, "-o", p(&f), p(&key)]));
    let (e, h) = error_and_hint(&hs(tcti, &["decrypt", "-i", p(&key), p(&f)]));
    assert!(e.contains("tabrmd") && e.contains("not supported"), "{e}");
    assert!(h.contains("device:/dev/tpmrm0"), "{h}");
}

#[test]
fn a_pcr_out_of_range_is_named_not_taken_for_a_damaged_file() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k");
    let (e, h) =
        error_and_hint(&hs("device:/nonexistent/tpmrm0", &["keygen", "--tpm", "--pcr", "99", "-o", p(&k)]));
    assert!(e.contains("PCR 99") && e.contains("0 to 23"), "{e}");
    assert!(!e.contains("identity") && !h.contains("damaged"), "{e} | {h}");
    assert!(h.contains("--pcr"), "{h}");
    assert!(!k.exists(), "no key file without a key");
}

/// P-256's generator: a valid point whose scalar (1) everyone knows.
const GENERATOR: [u8; 64] = [
    0x6B, 0x17, 0xD1, 0xF2, 0xE1, 0x2C, 0x42, 0x47, 0xF8, 0xBC, 0xE6, 0xE5, 0x63, 0xA4, 0x40, 0xF2, 0x77,
    0x03, 0x7D, 0x81, 0x2D, 0xEB, 0x33, 0xA0, 0xF4, 0xA1, 0x39, 0x45, 0xD8, 0x98, 0xC2, 0x96, 0x4F, 0xE3,
    0x42, 0xE2, 0xFE, 0x1A, 0x7F, 0x9B, 0x8E, 0xE7, 0xEB, 0x4A, 0x7C, 0x0F, 0x9E, 0x16, 0x2B, 0xCE, 0x33,
    0x57, 0x6B, 0x31, 0x5E, 0xCE, 0xCB, 0xB6, 0x40, 0x68, 0x37, 0xBF, 0x51, 0xF5,
];

/// Puts the generator in place of the storage primary's point in `CreatePrimary`'s answer,
/// leaving its name field as the TPM wrote it.
fn swap_primary_point(code: u32, resp: &mut [u8]) {
    if code != CREATE_PRIMARY || resp[6..10] != [0; 4] {
        return;
    }
    // handle, parameterSize, then TPM2B_PUBLIC: the point's two 32-byte coordinates end it.
    let end = 20 + usize::from(u16::from_be_bytes([resp[18], resp[19]]));
    resp[end - 66..end - 34].copy_from_slice(&GENERATOR[..32]);
    resp[end - 32..end].copy_from_slice(&GENERATOR[32..]);
}

#[test]
fn a_point_swapped_on_the_bus_stops_the_decrypt_before_any_session() {
    let Some(tpm) = Swtpm::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (key, recipient) = keygen(&tpm.tcti(), dir.path(), "host.key", &[]);
    let f = dir.path().join("f.age");
    ok(&hs(&tpm.tcti(), &["encrypt", "-r", &recipient, "-o", p(&f), p(&key)]));
    let proxy = Counter::rewriting(tpm.port, swap_primary_point);
    let (e, h) = error_and_hint(&hs(&proxy.tcti(), &["decrypt", "-i", p(&key), p(&f)]));
    assert!(e.contains("CreatePrimary") && e.contains("altered"), "{e}");
    assert!(!e.contains("PIN") && !e.contains("different TPM"), "{e}");
    assert!(h.contains("TPM2TOOLS_TCTI"), "{h}");
    assert_eq!(proxy.count(START_AUTH_SESSION), 0, "no session was started after the altered answer");
    // Without the interposer the same file opens.
    let out = hs(&tpm.tcti(), &["decrypt", "-i", p(&key), p(&f)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout == std::fs::read(&key).unwrap());
}
