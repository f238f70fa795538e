//! Fault injection: the nothing-lost promise under signals at random moments, `ulimit -f`, a
//! read-only directory, a destination that appears during the run, FIFOs and device nodes — on
//! tmpfs (/dev/shm) and on a disk filesystem (cargo's target/tmp), through the `O_TMPFILE` path
//! and the named-temporary fallback (reached as on a filesystem without `O_TMPFILE`: the child's
//! `O_TMPFILE` opens fail with the kernel's `EOPNOTSUPP`, `common/no_tmpfile.rs`).
//!
//! After every scenario: the input is unchanged (hashed), the destination is absent, untouched,
//! or complete and authenticated, and no other file appeared. One test runs the scenarios in
//! sequence (they time kills against a measured run, so they must not compete for the CPU) and
//! prints `fault-injection: N scenarios passed`. `HYPERSEAL_FAULT_SEED=n` replays a run's kill
//! moments; `HYPERSEAL_FAULTS=fsize,fifo` runs only some groups (see `wanted`).

use std::fs;
use std::hash::Hasher;
use std::io::{Read, Write};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

#[path = "common/no_tmpfile.rs"]
mod no_tmpfile;
#[path = "common/others.rs"]
mod others;
// The read-only directory scenario, with what it needs to run as another user.
#[path = "faults_read_only.rs"]
mod read_only;
use read_only::read_only_dir;

const BIG: usize = 64 << 20;
const SMALL: usize = 4 << 20;
/// Whether the named-temporary scenarios can run here (see `no_tmpfile`).
const NAMED: bool = no_tmpfile::AVAILABLE;

/// The inputs (in `src/`) and an empty destination directory `out/`, on one filesystem.
struct Fixture {
    label: &'static str,
    _root: tempfile::TempDir,
    root: PathBuf,
    src: PathBuf,
    out: PathBuf,
    key: PathBuf,
    public: PathBuf,
    big: PathBuf,
    big_hs: PathBuf,
    small: PathBuf,
    small_hs: PathBuf,
    hashes: Vec<(PathBuf, u64)>,
    /// How long a full encrypt and decrypt of `big` took here (to place kills inside a run).
    encrypt_time: Duration,
    decrypt_time: Duration,
}

fn hyperseal() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hyperseal"));
    c.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    c
}

fn run(mut c: Command) -> Output {
    c.output().unwrap()
}

fn ok(o: &Output) {
    assert!(o.status.success(), "failed: {}", String::from_utf8_lossy(&o.stderr));
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// SipHash of the whole file: enough to see that an input was not touched.
fn hash_file(p: &Path) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    let mut f = fs::File::open(p).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).unwrap();
        if n == 0 {
            return h.finish();
        }
        h.write(&buf[..n]);
    }
}

fn hash_bytes(b: &[u8]) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    h.write(b);
    h.finish()
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// xorshift64*: reproducible kill moments and file contents without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn random_file(p: &Path, len: usize, rng: &mut Rng) {
    let mut data = vec![0u8; len];
    for c in data.chunks_mut(8) {
        let r = rng.next().to_le_bytes();
        c.copy_from_slice(&r[..c.len()]);
    }
    fs::write(p, data).unwrap();
}

impl Fixture {
    fn new(label: &'static str, base: &Path, rng: &mut Rng) -> Fixture {
        let root = tempfile::Builder::new().prefix("hs-faults-").tempdir_in(base).unwrap();
        let r = root.path().to_path_buf();
        let (src, out) = (r.join("src"), r.join("out"));
        fs::create_dir(&src).unwrap();
        fs::create_dir(&out).unwrap();
        let (key, public) = (src.join("k.key"), src.join("k.pub"));
        let mut c = hyperseal();
        c.args(["keygen", "--kind", "x25519", "-o", s(&key)]);
        ok(&run(c));
        let mut c = hyperseal();
        c.args(["pubkey", "-i", s(&key)]).stdout(fs::File::create(&public).unwrap());
        ok(&run(c));
        let (big, small) = (src.join("big"), src.join("small"));
        random_file(&big, BIG, rng);
        random_file(&small, SMALL, rng);
        let (big_hs, small_hs) = (src.join("big.hs"), src.join("small.hs"));
        let t = Instant::now();
        ok(&run(encrypt(&public, &big_hs, &big, false, false)));
        let encrypt_time = t.elapsed();
        ok(&run(encrypt(&public, &small_hs, &small, false, false)));
        let check = out.join("check");
        let t = Instant::now();
        ok(&run(decrypt(&key, &check, &big_hs, false, false)));
        let decrypt_time = t.elapsed();
        assert_eq!(hash_file(&check), hash_file(&big));
        fs::remove_file(&check).unwrap();
        let hashes = [&big, &big_hs, &small, &small_hs, &key, &public]
            .iter()
            .map(|p| (p.to_path_buf(), hash_file(p)))
            .collect();
        Fixture {
            label,
            root: r,
            _root: root,
            src,
            out,
            key,
            public,
            big,
            big_hs,
            small,
            small_hs,
            hashes,
            encrypt_time,
            decrypt_time,
        }
    }

    fn hash_of(&self, p: &Path) -> u64 {
        self.hashes.iter().find(|(q, _)| q == p).unwrap().1
    }

    /// The inputs are exactly as they were and nothing appeared next to them.
    fn inputs_intact(&self, what: &str) {
        for (p, h) in &self.hashes {
            assert_eq!(hash_file(p), *h, "{what}: {} changed", p.display());
        }
        assert_eq!(listing(&self.src), ["big", "big.hs", "k.key", "k.pub", "small", "small.hs"], "{what}");
    }

    /// `dest` holds exactly `plain`, authenticated: decrypted when `sealed`, else compared.
    fn complete(&self, dest: &Path, plain: &Path, sealed: bool) -> bool {
        let got = if sealed {
            let mut c = hyperseal();
            c.args(["decrypt", "-i", s(&self.key), s(dest)]).stdout(Stdio::piped());
            let o = run(c);
            if !o.status.success() {
                return false;
            }
            hash_bytes(&o.stdout)
        } else {
            hash_file(dest)
        };
        got == self.hash_of(plain)
    }
}

fn encrypt(public: &Path, dest: &Path, input: &Path, force: bool, named: bool) -> Command {
    let mut c = hyperseal();
    c.args(["encrypt", "-q", "-R", s(public), "-o", s(dest)]);
    if force {
        c.arg("--force");
    }
    if named {
        no_tmpfile::deny(&mut c);
    }
    c.arg(input);
    c
}

fn decrypt(key: &Path, dest: &Path, input: &Path, force: bool, named: bool) -> Command {
    let mut c = hyperseal();
    c.args(["decrypt", "-q", "-i", s(key), "-o", s(dest)]);
    if force {
        c.arg("--force");
    }
    if named {
        no_tmpfile::deny(&mut c);
    }
    c.arg(input);
    c
}

fn kill(child: &Child, sig: libc::c_int) {
    // SAFETY: kill(2) on our own child's pid; it may have exited already (ESRCH is fine: it
    // is not reaped until `wait`, so the pid cannot have been reused).
    unsafe { libc::kill(child.id() as libc::pid_t, sig) };
}

fn first_line(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).lines().next().unwrap_or("").to_string()
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Op {
    Encrypt,
    Decrypt,
}

struct Tally {
    scenarios: usize,
    mid_run: usize,
}

/// Kills one run at a random moment; `existing`: the destination holds an old file and
/// `--force` is given (it must end old or complete, never anything else).
fn killed_run(
    fx: &Fixture,
    op: Op,
    sig: libc::c_int,
    named: bool,
    existing: bool,
    rng: &mut Rng,
    t: &mut Tally,
) {
    let dest = fx.out.join("dest");
    let _ = fs::remove_file(&dest);
    if existing {
        fs::write(&dest, b"the old file").unwrap();
    }
    let (mut cmd, span) = match op {
        Op::Encrypt => (encrypt(&fx.public, &dest, &fx.big, existing, named), fx.encrypt_time),
        Op::Decrypt => (decrypt(&fx.key, &dest, &fx.big_hs, existing, named), fx.decrypt_time),
    };
    let delay = Duration::from_micros(rng.below(span.as_micros() as u64));
    let what = format!("{} {op:?} sig {sig} named={named} existing={existing} after {delay:?}", fx.label);
    let child = cmd.spawn().unwrap();
    std::thread::sleep(delay);
    kill(&child, sig);
    let status = child.wait_with_output().unwrap().status;
    assert!(status.success() || status.signal() == Some(sig), "{what}: {status:?}");
    fx.inputs_intact(&what);
    let names = listing(&fx.out);
    let completed = if names.is_empty() {
        assert!(!existing, "{what}: the existing file vanished");
        assert!(!status.success(), "{what}: exit 0 without an output");
        false
    } else {
        assert_eq!(names, ["dest"], "{what}: stray files");
        let old = fs::read(&dest).unwrap() == b"the old file";
        let completed = !old && fx.complete(&dest, &fx.big, op == Op::Encrypt);
        assert!(
            completed || (old && existing && !status.success()),
            "{what}: destination neither old nor complete"
        );
        completed
    };
    if status.signal().is_some() && !completed {
        t.mid_run += 1;
    }
    let _ = fs::remove_file(&dest);
    t.scenarios += 1;
}

fn kills(fx: &Fixture, rng: &mut Rng, t: &mut Tally) {
    for op in [Op::Encrypt, Op::Decrypt] {
        for (sig, named) in [
            (libc::SIGINT, false),
            (libc::SIGTERM, false),
            (libc::SIGKILL, false),
            (libc::SIGINT, true),
            (libc::SIGTERM, true),
            (libc::SIGHUP, true),
        ] {
            if named && !NAMED {
                continue;
            }
            for existing in [false, true] {
                killed_run(fx, op, sig, named, existing, rng, t);
            }
        }
    }
}

/// `ulimit -f`: one line naming the destination, exit 1, nothing left (the old binary died of
/// SIGXFSZ without a word and left its partial file).
fn file_size_limit(fx: &Fixture, t: &mut Tally) {
    let dest = fx.out.join("dest");
    for named in [false, true].into_iter().filter(|&n| !n || NAMED) {
        for op in [Op::Encrypt, Op::Decrypt] {
            let mut c = match op {
                Op::Encrypt => encrypt(&fx.public, &dest, &fx.small, false, named),
                Op::Decrypt => decrypt(&fx.key, &dest, &fx.small_hs, false, named),
            };
            // SAFETY: setrlimit is async-signal-safe and touches only the struct on our stack.
            unsafe {
                c.pre_exec(|| {
                    let lim = libc::rlimit { rlim_cur: 1 << 20, rlim_max: 1 << 20 };
                    if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) == 0 {
                        Ok(())
                    } else {
                        Err(std::io::Error::last_os_error())
                    }
                })
            };
            let o = run(c);
            let what = format!("{} fsize {op:?} named={named}", fx.label);
            assert_eq!(
                o.status.code(),
                Some(1),
                "{what}: {:?} {}",
                o.status,
                String::from_utf8_lossy(&o.stderr)
            );
            assert_eq!(
                String::from_utf8_lossy(&o.stderr),
                format!("hyperseal: error: writing {}: File too large\n", dest.display()),
                "{what}"
            );
            assert_eq!(listing(&fx.out), Vec::<String>::new(), "{what}");
            fx.inputs_intact(&what);
            t.scenarios += 1;
        }
    }
}

/// Another program creates the destination while we write: without `--force` it is left alone
/// and the run fails saying so; with `--force` it is replaced by the complete output. The input
/// comes through a pipe so the file appears at a known point: after the first half was read.
fn destination_appears(fx: &Fixture, t: &mut Tally) {
    let dest = fx.out.join("dest");
    for (op, input) in [(Op::Encrypt, &fx.small), (Op::Decrypt, &fx.small_hs)] {
        let data = fs::read(input).unwrap();
        for named in [false, true] {
            for force in [false, true] {
                let stdin = PathBuf::from("-");
                let mut c = match op {
                    Op::Encrypt => encrypt(&fx.public, &dest, &stdin, force, named),
                    Op::Decrypt => decrypt(&fx.key, &dest, &stdin, force, named),
                };
                let mut child = c.stdin(Stdio::piped()).spawn().unwrap();
                let mut pipe = child.stdin.take().unwrap();
                // A pipe holds 64 KiB: once 2 MiB went in, the output was opened long ago.
                pipe.write_all(&data[..data.len() / 2]).unwrap();
                fs::write(&dest, b"appeared meanwhile").unwrap();
                pipe.write_all(&data[data.len() / 2..]).unwrap();
                drop(pipe);
                let o = child.wait_with_output().unwrap();
                let what = format!("{} appears {op:?} named={named} force={force}", fx.label);
                assert_eq!(listing(&fx.out), ["dest"], "{what}");
                if force {
                    ok(&o);
                    assert!(fx.complete(&dest, &fx.small, op == Op::Encrypt), "{what}");
                } else {
                    assert_eq!(o.status.code(), Some(1), "{what}");
                    assert_eq!(
                        String::from_utf8_lossy(&o.stderr),
                        format!(
                            "hyperseal: error: output file {} already exists\nhyperseal: hint: use --force to overwrite it\n",
                            dest.display()
                        ),
                        "{what}"
                    );
                    assert_eq!(fs::read(&dest).unwrap(), b"appeared meanwhile", "{what}");
                }
                fx.inputs_intact(&what);
                fs::remove_file(&dest).unwrap();
                t.scenarios += 1;
            }
        }
    }
}

/// A FIFO is written through (no `--force` needed) and stays a FIFO.
fn fifo(fx: &Fixture, t: &mut Tally) {
    let fifo = fx.out.join("fifo");
    for op in [Op::Encrypt, Op::Decrypt] {
        // A new FIFO for each operation: a child forked meanwhile may hold the last reader's
        // copy of the read end until it execs, and a writer opening against that copy would
        // lose its bytes with it, leaving the next reader blocked for ever.
        assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read(fifo).unwrap())
        };
        let o = run(match op {
            Op::Encrypt => encrypt(&fx.public, &fifo, &fx.small, false, false),
            Op::Decrypt => decrypt(&fx.key, &fifo, &fx.small_hs, false, false),
        });
        if !o.status.success() {
            // It never opened the FIFO: open it ourselves so the reader sees EOF, not a hang.
            drop(fs::OpenOptions::new().write(true).open(&fifo).unwrap());
        }
        let got = reader.join().unwrap();
        let what = format!("{} fifo {op:?}", fx.label);
        ok(&o);
        let plain = match op {
            Op::Decrypt => got,
            Op::Encrypt => {
                let mut c = hyperseal();
                c.args(["decrypt", "-i", s(&fx.key)]).stdin(Stdio::piped()).stdout(Stdio::piped());
                let mut child = c.spawn().unwrap();
                let mut pipe = child.stdin.take().unwrap();
                let feeder = std::thread::spawn(move || pipe.write_all(&got).unwrap());
                let o = child.wait_with_output().unwrap();
                feeder.join().unwrap();
                ok(&o);
                o.stdout
            }
        };
        assert_eq!(hash_bytes(&plain), fx.hash_of(&fx.small), "{what}");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "{what}");
        assert_eq!(listing(&fx.out), ["fifo"], "{what}");
        fx.inputs_intact(&what);
        t.scenarios += 1;
        fs::remove_file(&fifo).unwrap();
    }
}

/// Device nodes made with mknod in our own directory (never the real /dev): char 1,3 (null)
/// is written through and stays a device even with `--force`; char 1,7 (full) gives the
/// disk-full line naming the destination.
fn devices(fx: &Fixture, t: &mut Tally) -> bool {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return false;
    }
    let (null, full) = (fx.out.join("null"), fx.out.join("full"));
    for (p, minor) in [(&null, "3"), (&full, "7")] {
        assert!(Command::new("mknod").arg(p).args(["c", "1", minor]).status().unwrap().success());
    }
    for op in [Op::Encrypt, Op::Decrypt] {
        for force in [false, true] {
            let what = format!("{} device {op:?} force={force}", fx.label);
            let o = run(match op {
                Op::Encrypt => encrypt(&fx.public, &null, &fx.small, force, false),
                Op::Decrypt => decrypt(&fx.key, &null, &fx.small_hs, force, false),
            });
            ok(&o);
            let o = run(match op {
                Op::Encrypt => encrypt(&fx.public, &full, &fx.small, force, false),
                Op::Decrypt => decrypt(&fx.key, &full, &fx.small_hs, force, false),
            });
            assert_eq!(o.status.code(), Some(1), "{what}");
            assert_eq!(
                first_line(&o),
                format!("hyperseal: error: writing {}: No space left on device", full.display()),
                "{what}"
            );
            for p in [&null, &full] {
                assert!(fs::symlink_metadata(p).unwrap().file_type().is_char_device(), "{what}");
            }
            assert_eq!(listing(&fx.out), ["full", "null"], "{what}");
            fx.inputs_intact(&what);
            t.scenarios += 2;
        }
    }
    fs::remove_file(&null).unwrap();
    fs::remove_file(&full).unwrap();
    true
}

/// The named scenarios test the fallback only if the filter really refuses `O_TMPFILE` there
/// while the same open works without it: a probe in Python, on the filesystem of `dir`.
fn filter_takes_effect(dir: &Path) {
    let probe = |filtered: bool| {
        let mut c = Command::new("python3");
        c.arg("-c").arg("import os, sys\ntry:\n os.close(os.open(sys.argv[1], os.O_TMPFILE | os.O_WRONLY, 0o600))\nexcept OSError as e:\n sys.exit(e.errno)");
        c.arg(dir);
        if filtered {
            no_tmpfile::deny(&mut c);
        }
        c.status().unwrap().code()
    };
    let plain = probe(false);
    if plain != Some(0) {
        eprintln!(
            "fault-injection: {} has no O_TMPFILE (errno {plain:?}): both paths are the fallback",
            dir.display()
        );
        return;
    }
    assert_eq!(probe(true), Some(libc::EOPNOTSUPP), "the filter must refuse O_TMPFILE in {}", dir.display());
}

/// `HYPERSEAL_FAULTS=fsize,fifo` runs only those groups (kills, fsize, readonly, appears, fifo,
/// devices); unset, all of them.
fn wanted(group: &str) -> bool {
    std::env::var("HYPERSEAL_FAULTS").map_or(true, |v| v.split(',').any(|g| g.trim() == group))
}

#[test]
fn fault_injection() {
    let seed = std::env::var("HYPERSEAL_FAULT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 | 1
    });
    let mut rng = Rng(seed);
    let mut t = Tally { scenarios: 0, mid_run: 0 };
    let mut bases = vec![("disk", PathBuf::from(env!("CARGO_TARGET_TMPDIR")))];
    if Path::new("/dev/shm").is_dir() {
        bases.insert(0, ("tmpfs", PathBuf::from("/dev/shm")));
    } else {
        eprintln!("fault-injection: no /dev/shm, tmpfs scenarios skipped");
    }
    let mut devices_run = false;
    for (label, base) in bases {
        let fx = Fixture::new(label, &base, &mut rng);
        if NAMED {
            filter_takes_effect(&fx.out);
        }
        if wanted("kills") {
            kills(&fx, &mut rng, &mut t);
        }
        if wanted("fsize") {
            file_size_limit(&fx, &mut t);
        }
        if wanted("readonly") {
            read_only_dir(&fx, &mut t);
        }
        if wanted("appears") {
            destination_appears(&fx, &mut t);
        }
        if wanted("fifo") {
            fifo(&fx, &mut t);
        }
        if wanted("devices") {
            devices_run |= devices(&fx, &mut t);
        }
    }
    // Written to the terminal directly: the harness captures print! and eprint!.
    let mut err = std::io::stderr();
    if !devices_run {
        let _ = writeln!(err, "fault-injection: device-node scenarios skipped (mknod needs root)");
    }
    let _ = writeln!(
        err,
        "fault-injection: {} scenarios passed ({} kills landed mid-run; seed {seed})",
        t.scenarios, t.mid_run
    );
    assert!(t.mid_run > 0 || !wanted("kills"), "no kill landed inside a run: the scenarios tested nothing");
}
