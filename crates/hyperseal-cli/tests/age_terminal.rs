//! `hyperseal age` as age's users meet it, against the real age v1.3.1 in the same run: every
//! scenario runs once with age and once with hyperseal (a link named `age`), through a real
//! pseudo-terminal (`pty_run.py`: the terminal is the controlling terminal, stdin, stdout and
//! stderr redirected as scripts do), in two copies of one fixture directory (keys made by
//! age-keygen, ssh-keygen and openssl; files made by age). Compared: exit status, stdout bytes,
//! whether stderr is empty, the key phrase of each error, and what a follow-up decryption by the
//! real age gives. Where hyperseal differs on purpose, the scenario says so and why (the README's
//! age section lists the same differences).

use crate::common;
#[path = "age_terminal/scenarios.rs"]
mod scenarios;

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine;
use common::{peers, tools_path, TOOLS};

const PLAIN: &[u8] = b"hello from a terminal\n";

/// How one run ended.
#[derive(Debug)]
struct Run {
    status: Option<i64>,
    stdout: Vec<u8>,
    stderr: String,
    tty: String,
    echo: bool,
}

#[derive(Clone, Default)]
struct Scenario {
    name: &'static str,
    args: Vec<String>,
    /// "null", "tty" or "file:NAME" (relative to the fixture directory).
    stdin: &'static str,
    stdout_tty: bool,
    /// Lines typed at the prompts.
    typed: Vec<&'static str>,
    no_ctty: bool,
    env: Vec<(&'static str, &'static str)>,
    fd3: Option<&'static str>,
    /// Phrases both must print on stderr (empty: stderr must be empty on success).
    phrases: Vec<&'static str>,
    /// A phrase that must appear on the terminal for both.
    tty_phrase: Option<&'static str>,
    /// After the run: real age decrypts this file in the run's directory with these arguments
    /// and must get PLAIN.
    then_decrypt: Option<(&'static str, Vec<&'static str>, Vec<&'static str>)>,
    /// The output file (if any) must hold PLAIN.
    output_file: Option<&'static str>,
    /// A deliberate difference: what hyperseal does instead, and why. Exit status and phrases
    /// are still compared; the named aspect is not.
    differs: Option<(Aspect, &'static str)>,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Aspect {
    /// The output file age leaves behind on failure.
    PartialOutput,
    /// The terminal's echo after Ctrl-C at a prompt (hyperseal must restore it).
    EchoAfterInterrupt,
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

fn run_in(dir: &Path, program: &Path, sc: &Scenario) -> Run {
    let mut argv = vec![program.display().to_string()];
    argv.extend(sc.args.iter().cloned());
    let mut env = serde_json::Map::new();
    env.insert("PATH".into(), tools_path().into());
    for (k, v) in &sc.env {
        env.insert(k.to_string(), (*v).into());
    }
    let stdin = match sc.stdin {
        "" => "null".to_string(),
        s if s.starts_with("file:") => format!("file:{}", dir.join(&s[5..]).display()),
        s => s.to_string(),
    };
    let req = serde_json::json!({
        "argv": argv, "cwd": dir, "env": env, "stdin": stdin,
        "stdout": if sc.stdout_tty { "tty" } else { "pipe" },
        "type": sc.typed, "ctty": !sc.no_ctty, "fd3": sc.fd3, "timeout": 60,
    });
    let v = common::pty_run(&req, &format!("{}: {program:?}", sc.name));
    Run {
        status: v["status"].as_i64(),
        stdout: base64::engine::general_purpose::STANDARD.decode(v["stdout"].as_str().unwrap()).unwrap(),
        stderr: v["stderr"].as_str().unwrap().to_string(),
        tty: v["tty"].as_str().unwrap().to_string(),
        echo: v["echo"].as_bool().unwrap(),
    }
}

fn sh(dir: &Path, cmd: &str) {
    let o =
        Command::new("bash").arg("-c").arg(cmd).current_dir(dir).env("PATH", tools_path()).output().unwrap();
    assert!(o.status.success(), "{cmd}: {}", String::from_utf8_lossy(&o.stderr));
}

/// Keys of every kind and files made by the real age.
fn fixture(dir: &Path) {
    std::fs::write(dir.join("input.txt"), PLAIN).unwrap();
    let wf = "AGE_PASSPHRASE_WORK_FACTOR=10";
    for cmd in [
        "age-keygen -o key.txt 2>/dev/null && age-keygen -y key.txt > key.pub",
        "age-keygen -o key2.txt 2>/dev/null",
        "age-keygen -pq -o pq.txt 2>/dev/null && age-keygen -y pq.txt > pq.pub",
        "(printf '# created: today\\r\\n\\r\\n'; grep -v '^#' key.txt | tr -d '\\n'; printf '\\r\\n') > keycrlf.txt",
        "ssh-keygen -q -t ed25519 -N '' -C a -f id_ed",
        "ssh-keygen -q -t ed25519 -N sshpw -C a -f id_edpw",
        "ssh-keygen -q -t rsa -b 3072 -N '' -C a -f id_rsa",
        "ssh-keygen -q -t rsa -b 2048 -m PEM -N '' -C a -f id_rsa_pem",
        "ssh-keygen -q -t rsa -b 2048 -m PKCS8 -N '' -C a -f id_rsa_p8",
        "ssh-keygen -q -t rsa -b 2048 -m PEM -N sshpw -C a -f id_rsa_pem_pw",
        "ssh-keygen -q -t ecdsa -N '' -C a -f id_ecdsa",
        "openssl genpkey -algorithm ed25519 -out ed.pem 2>/dev/null",
        "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa8.pem 2>/dev/null",
        // PEM keys with legacy encryption as OpenSSL writes them (ssh-keygen's is id_rsa_pem_pw),
        // their `.pub` files beside them as age wants them; one without, one with another's.
        "openssl genrsa -traditional -aes256 -passout pass:sslpw -out rsa_aes.pem 2048 2>/dev/null \
         && ssh-keygen -y -P sslpw -f rsa_aes.pem > rsa_aes.pem.pub",
        "openssl rsa -in rsa8.pem -traditional -des3 -passout pass:sslpw -out rsa_des3.pem 2>/dev/null \
         && ssh-keygen -y -P sslpw -f rsa_des3.pem > rsa_des3.pem.pub",
        "cp id_rsa_pem_pw nopub_pw && cp id_rsa_pem_pw mismatched_pw && cp id_rsa.pub mismatched_pw.pub",
        "age -R id_rsa_pem_pw.pub -o ct_rsa_pem_pw.age input.txt",
        "age -R rsa_aes.pem.pub -o ct_rsa_aes.age input.txt",
        ": > empty.age",
        "age -r $(cat key.pub) -o ct_x.age input.txt",
        "age -a -r $(cat key.pub) -o ct_x_armor.age input.txt",
        "(printf '  \\n'; cat ct_x_armor.age) > ct_x_armor_ws.age",
        &format!("{wf} AGE_PASSPHRASE=pw age -e -j batchpass -o ct_pass.age input.txt"),
        &format!("{wf} AGE_PASSPHRASE=pw age -e -j batchpass -o key.age key.txt"),
        "age -R id_ed.pub -o ct_ed.age input.txt",
        "age -R id_edpw.pub -o ct_edpw.age input.txt",
        "age -R id_rsa.pub -o ct_rsa.age input.txt",
        "age -e -i id_rsa_pem -o ct_rsa_pem.age input.txt",
        "age -e -i id_rsa_p8 -o ct_rsa_p8.age input.txt",
        "age -e -i ed.pem -o ct_edpem.age input.txt",
        "age -e -i rsa8.pem -o ct_rsa8.age input.txt",
        "head -c 100 ct_x.age > ct_cut.age",
        "head -c 200000 /dev/zero > big.bin && age -r $(cat key.pub) -o ct_big.age big.bin",
        "head -c $(( $(stat -c %s ct_big.age) - 1000 )) ct_big.age > ct_big_cut.age",
        "cp ct_x.age ct_bad.age && printf 'X' | dd of=ct_bad.age bs=1 seek=$(( $(stat -c %s ct_x.age) - 5 )) conv=notrunc 2>/dev/null",
        "sed 's/$/\\r/' ct_x_armor.age > ct_crlf.age; printf 'age-encryption.org/v1\\r\\n-> X25519 x\\r\\n' > ct_ps.age",
        "cat key.pub id_ecdsa.pub > mixed.pub",
        "echo old > existing.txt",
    ] {
        sh(dir, cmd);
    }
}

/// `AGEPUB`/`PQPUB` in arguments stand for the fixture's public keys.
fn resolve(sc: &Scenario, dir: &Path) -> Scenario {
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap().trim().to_string();
    let mut sc = sc.clone();
    for a in &mut sc.args {
        if a == "AGEPUB" {
            *a = read("key.pub");
        } else if a == "PQPUB" {
            *a = read("pq.pub");
        }
    }
    sc
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

#[test]
fn scenarios_match_the_real_age() {
    let Some(age) = peers(&["age", "age-keygen", "age-plugin-batchpass"]) else { return };
    if Command::new("python3").arg("-c").arg("import pty").status().map(|s| !s.success()).unwrap_or(true)
        || Command::new("ssh-keygen").arg("-?").output().is_err()
        || Command::new("openssl").arg("version").output().is_err()
    {
        assert!(
            std::env::var_os("HYPERSEAL_REQUIRE_PEERS").is_none(),
            "python3, ssh-keygen or openssl missing"
        );
        return;
    }
    let _ = TOOLS;
    let root = tempfile::tempdir().unwrap();
    let fixture_dir = root.path().join("fixture");
    std::fs::create_dir(&fixture_dir).unwrap();
    fixture(&fixture_dir);
    // hyperseal as `age`: a link of that name, as users install it.
    let hs = root.path().join("bin/age");
    std::fs::create_dir(root.path().join("bin")).unwrap();
    // HYPERSEAL_UNDER_TEST names another build to try the same scenarios on (an older one, to
    // see which scenarios it fails).
    let binary = std::env::var_os("HYPERSEAL_UNDER_TEST").unwrap_or(env!("CARGO_BIN_EXE_hyperseal").into());
    std::os::unix::fs::symlink(binary, &hs).unwrap();

    let all = scenarios::scenarios();
    assert!(all.len() >= 40, "{} scenarios", all.len());
    // Scenarios are independent (each pair in its own copies of the fixture) and mostly wait on
    // a terminal or a key derivation, so a few run at once; the two runs of one scenario stay in
    // order. The failures are listed in the scenarios' order.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(sc) = all.get(i) else { break };
                let mut runs = Vec::new();
                for (who, program) in [("age", &age), ("hyperseal", &hs)] {
                    let dir: PathBuf = root.path().join(format!("{i}-{who}"));
                    copy_dir(&fixture_dir, &dir);
                    let sc = resolve(sc, &dir);
                    let r = run_in(&dir, program, &sc);
                    runs.push((who, dir, r));
                }
                if let Err(e) = compare(&age, sc, &runs) {
                    let line =
                        format!("{}: {e}\n  age: {:?}\n  hyperseal: {:?}", sc.name, runs[0].2, runs[1].2);
                    failures.lock().unwrap().push((i, line));
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    let failures: Vec<String> = failures.into_iter().map(|(_, line)| line).collect();
    let differences: Vec<String> = all
        .iter()
        .filter_map(|sc| sc.differs.map(|(a, why)| format!("{} ({a:?}): {why}", sc.name)))
        .collect();
    eprintln!("{} scenarios; deliberate differences:\n  {}", all.len(), differences.join("\n  "));
    assert!(
        failures.is_empty(),
        "{} of {} scenarios differ from age:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

fn compare(age: &Path, sc: &Scenario, runs: &[(&str, PathBuf, Run)]) -> Result<(), String> {
    let (a, h) = (&runs[0].2, &runs[1].2);
    if a.status != h.status {
        return Err(format!("exit status {:?} vs {:?}", a.status, h.status));
    }
    if a.stderr.is_empty() != h.stderr.is_empty() {
        return Err("one printed on stderr, the other did not".into());
    }
    let echo_differs = matches!(sc.differs, Some((Aspect::EchoAfterInterrupt, _)));
    if (a.echo != h.echo && !echo_differs) || !h.echo {
        return Err(format!("terminal echo at the end: age {} hyperseal {}", a.echo, h.echo));
    }
    for p in &sc.phrases {
        for (who, _, r) in runs {
            if !r.stderr.contains(p) {
                return Err(format!("{who}'s stderr lacks {p:?}"));
            }
        }
    }
    if let Some(p) = sc.tty_phrase {
        for (who, _, r) in runs {
            if !r.tty.contains(p) {
                return Err(format!("{who}'s terminal lacks {p:?}"));
            }
        }
    }
    // Encryption output is random: compare stdout only for decryptions and errors.
    let encrypting = !sc.args.iter().any(|a| a == "-d");
    if !encrypting && a.stdout != h.stdout {
        return Err("stdout bytes differ".into());
    }
    if encrypting && a.status == Some(0) && sc.args.iter().all(|a| a != "-o") {
        // Encrypted to stdout: real age must open hyperseal's output like its own.
        for (who, dir, r) in runs {
            std::fs::write(dir.join("stdout.age"), &r.stdout).unwrap();
            let key = if sc.args.iter().any(|a| a == "-p") { None } else { Some("key.txt") };
            let mut args = vec!["-d"];
            if let Some(k) = key {
                args.extend(["-i", k]);
            }
            let typed = if key.is_none() { vec!["pw"] } else { vec![] };
            check_decrypts(age, dir, "stdout.age", &args, &typed).map_err(|e| format!("{who}: {e}"))?;
        }
    }
    if let Some(f) = sc.output_file {
        for (who, dir, _) in runs {
            if std::fs::read(dir.join(f)).ok().as_deref() != Some(PLAIN) {
                return Err(format!("{who}'s {f} does not hold the plaintext"));
            }
        }
    }
    if let Some((file, args, typed)) = &sc.then_decrypt {
        for (who, dir, _) in runs {
            check_decrypts(age, dir, file, args, typed).map_err(|e| format!("{who}: {e}"))?;
        }
    }
    if sc.args.iter().any(|a| a == "-o") && a.status != Some(0) {
        let out = sc.args[sc.args.iter().position(|a| a == "-o").unwrap() + 1].clone();
        let exists = |d: &PathBuf| d.join(&out).exists() && !std::fs::read(d.join(&out)).unwrap().is_empty();
        let (ae, he) = (exists(&runs[0].1), exists(&runs[1].1));
        let partial_ok = matches!(sc.differs, Some((Aspect::PartialOutput, _)));
        if he && out != "ct_x.age" {
            return Err(format!("hyperseal left {out} behind after a failure"));
        }
        if ae != he && !partial_ok && out != "ct_x.age" {
            return Err(format!("{out} left behind: age {ae}, hyperseal {he}"));
        }
    }
    Ok(())
}

/// The real age opens `file` in `dir` with `args` (typing `typed`) and gets the plaintext.
fn check_decrypts(
    age: &Path,
    dir: &Path,
    file: &str,
    args: &[&str],
    typed: &[&'static str],
) -> Result<(), String> {
    let mut all: Vec<String> = s(args);
    all.push(file.to_string());
    let sc = Scenario { name: "check", args: all, typed: typed.to_vec(), ..Default::default() };
    let r = run_in(dir, age, &sc);
    if r.status != Some(0) || r.stdout != PLAIN {
        return Err(format!("age could not decrypt {file}: {}", r.stderr));
    }
    Ok(())
}
