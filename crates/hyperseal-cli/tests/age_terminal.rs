//! `hyperseal age` as age's users meet it, against the real age v1.3.1 in the same run: every
//! scenario runs once with age and once with hyperseal (a link named `age`), through a real
//! pseudo-terminal (`pty_run.py`: the terminal is the controlling terminal, stdin, stdout and
//! stderr redirected as scripts do), in two copies of one fixture directory (keys made by
//! age-keygen, ssh-keygen and openssl; files made by age). Compared: exit status, stdout bytes,
//! whether stderr is empty, the key phrase of each error, and what a follow-up decryption by the
//! real age gives. Where hyperseal differs on purpose, the scenario says so and why (the README's
//! age section lists the same differences).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

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
    /// Whether the run succeeds at all.
    Outcome,
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
    let mut child = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/pty_run.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    serde_json::to_writer(child.stdin.take().unwrap(), &req).unwrap();
    let out = child.wait_with_output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("pty_run.py answered");
    assert!(!v["timed_out"].as_bool().unwrap(), "{}: {program:?} timed out: {v}", sc.name);
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

fn scenarios() -> Vec<Scenario> {
    let d = Scenario::default;
    let plain_out = |name, args: &[&str]| Scenario { name, args: s(args), ..d() };
    let fails =
        |name, args: &[&str], phrases: Vec<&'static str>| Scenario { name, args: s(args), phrases, ..d() };
    let x_check = Some(("out.age", vec!["-d", "-i", "key.txt"], vec![]));
    vec![
        // --- passphrases and the terminal ---
        Scenario {
            name: "p_encrypt_prompts_on_the_terminal_with_everything_redirected",
            args: s(&["-p", "-o", "out.age", "input.txt"]),
            typed: vec!["pw", "pw"],
            tty_phrase: Some("Enter passphrase"),
            then_decrypt: Some(("out.age", vec!["-d"], vec!["pw"])),
            ..d()
        },
        Scenario {
            name: "p_encrypt_armored_to_stdout",
            args: s(&["-p", "-a", "input.txt"]),
            typed: vec!["pw", "pw"],
            ..d()
        },
        Scenario {
            name: "p_encrypt_autogenerated_passphrase_on_the_terminal",
            args: s(&["-p", "-o", "out.age", "input.txt"]),
            typed: vec![""],
            tty_phrase: Some("using autogenerated passphrase"),
            ..d()
        },
        Scenario {
            name: "p_encrypt_passphrases_differ",
            args: s(&["-p", "-o", "out.age", "input.txt"]),
            typed: vec!["pw", "other"],
            phrases: vec!["passphrases didn't match"],
            ..d()
        },
        Scenario {
            name: "p_encrypt_without_any_terminal",
            args: s(&["-p", "-o", "out.age", "input.txt"]),
            no_ctty: true,
            phrases: vec!["standard input is not a terminal"],
            ..d()
        },
        Scenario {
            name: "p_decrypt_prompts_on_the_terminal",
            args: s(&["-d", "ct_pass.age"]),
            typed: vec!["pw"],
            tty_phrase: Some("Enter passphrase:"),
            ..d()
        },
        Scenario {
            name: "p_decrypt_to_output_file",
            args: s(&["-d", "-o", "out.txt", "ct_pass.age"]),
            typed: vec!["pw"],
            output_file: Some("out.txt"),
            ..d()
        },
        Scenario {
            name: "p_decrypt_wrong_passphrase",
            args: s(&["-d", "ct_pass.age"]),
            typed: vec!["nope"],
            phrases: vec!["incorrect passphrase"],
            ..d()
        },
        Scenario {
            name: "p_decrypt_falls_back_to_a_terminal_on_stdin",
            args: s(&["-d", "ct_pass.age"]),
            no_ctty: true,
            stdin: "tty",
            typed: vec!["pw"],
            ..d()
        },
        Scenario {
            name: "p_decrypt_without_any_terminal",
            args: s(&["-d", "ct_pass.age"]),
            no_ctty: true,
            phrases: vec!["standard input is not a terminal"],
            ..d()
        },
        Scenario {
            name: "p_decrypt_ctrl_c_at_the_prompt_restores_echo",
            args: s(&["-d", "ct_pass.age"]),
            typed: vec!["\x03"],
            differs: Some((
                Aspect::EchoAfterInterrupt,
                "age leaves the terminal's echo off when Ctrl-C ends it at a passphrase prompt; \
                 hyperseal puts the terminal back as it was, then dies of the same signal",
            )),
            ..d()
        },
        Scenario {
            name: "encrypted_identity_file_prompts",
            args: s(&["-d", "-i", "key.age", "ct_x.age"]),
            typed: vec!["pw"],
            tty_phrase: Some("Enter passphrase for identity file"),
            ..d()
        },
        Scenario {
            name: "encrypted_identity_file_wrong_passphrase",
            args: s(&["-d", "-i", "key.age", "ct_x.age"]),
            typed: vec!["nope"],
            phrases: vec!["incorrect passphrase"],
            ..d()
        },
        Scenario {
            name: "encrypted_identity_file_to_encrypt",
            args: s(&["-e", "-i", "key.age", "-o", "out.age", "input.txt"]),
            typed: vec!["pw"],
            then_decrypt: x_check.clone(),
            ..d()
        },
        Scenario {
            name: "protected_ssh_key_prompts",
            args: s(&["-d", "-i", "id_edpw", "ct_edpw.age"]),
            typed: vec!["sshpw"],
            tty_phrase: Some("Enter passphrase for"),
            ..d()
        },
        Scenario {
            name: "protected_ssh_key_not_asked_for_another_keys_file",
            args: s(&["-d", "-i", "id_edpw", "-i", "key.txt", "ct_x.age"]),
            ..d()
        },
        Scenario {
            name: "protected_ssh_key_encrypts_without_a_passphrase",
            args: s(&["-e", "-i", "id_edpw", "-o", "out.age", "input.txt"]),
            then_decrypt: Some(("out.age", vec!["-d", "-i", "id_edpw"], vec!["sshpw"])),
            ..d()
        },
        // --- keys of every encoding ---
        plain_out("x25519_identity", &["-d", "-i", "key.txt", "ct_x.age"]),
        fails(
            "x25519_wrong_identity",
            &["-d", "-i", "key2.txt", "ct_x.age"],
            vec!["no identity matched any of the recipients"],
        ),
        plain_out("identity_file_with_comments_and_crlf", &["-d", "-i", "keycrlf.txt", "ct_x.age"]),
        Scenario {
            name: "identity_file_from_stdin",
            args: s(&["-d", "-i", "-", "ct_x.age"]),
            stdin: "file:key.txt",
            ..d()
        },
        Scenario {
            name: "stdin_for_two_purposes",
            args: s(&["-d", "-i", "-"]),
            stdin: "file:key.txt",
            phrases: vec!["standard input is used for multiple purposes"],
            ..d()
        },
        plain_out("ssh_ed25519_openssh", &["-d", "-i", "id_ed", "ct_ed.age"]),
        plain_out("ssh_rsa_openssh", &["-d", "-i", "id_rsa", "ct_rsa.age"]),
        plain_out("ssh_rsa_pkcs1_pem", &["-d", "-i", "id_rsa_pem", "ct_rsa_pem.age"]),
        plain_out("ssh_rsa_pkcs8_pem", &["-d", "-i", "id_rsa_p8", "ct_rsa_p8.age"]),
        plain_out("ed25519_pkcs8_from_openssl_decrypts", &["-d", "-i", "ed.pem", "ct_edpem.age"]),
        plain_out("rsa_pkcs8_from_openssl_decrypts", &["-d", "-i", "rsa8.pem", "ct_rsa8.age"]),
        Scenario {
            name: "ed25519_pkcs8_from_openssl_encrypts",
            args: s(&["-e", "-i", "ed.pem", "-o", "out.age", "input.txt"]),
            then_decrypt: Some(("out.age", vec!["-d", "-i", "ed.pem"], vec![])),
            ..d()
        },
        Scenario {
            name: "rsa_pkcs1_pem_encrypts",
            args: s(&["-e", "-i", "id_rsa_pem", "-o", "out.age", "input.txt"]),
            then_decrypt: Some(("out.age", vec!["-d", "-i", "id_rsa_pem"], vec![])),
            ..d()
        },
        Scenario {
            name: "rsa_pkcs8_pem_encrypts",
            args: s(&["-e", "-i", "rsa8.pem", "-o", "out.age", "input.txt"]),
            then_decrypt: Some(("out.age", vec!["-d", "-i", "rsa8.pem"], vec![])),
            ..d()
        },
        fails(
            "ecdsa_identity_refused",
            &["-d", "-i", "id_ecdsa", "ct_x.age"],
            vec!["unsupported SSH identity type"],
        ),
        fails("missing_identity_file", &["-d", "-i", "nosuchkey", "ct_x.age"], vec!["failed to open file"]),
        fails(
            "missing_input_file",
            &["-d", "-i", "key.txt", "nosuchfile"],
            vec!["failed to open input file"],
        ),
        fails("unknown_recipient_type", &["-r", "bogus", "input.txt"], vec!["unknown recipient type"]),
        fails(
            "malformed_ssh_recipient",
            &["-r", "ssh-ed25519", "input.txt"],
            vec!["malformed SSH recipient"],
        ),
        Scenario {
            name: "legacy_encrypted_pem_key",
            args: s(&["-d", "-i", "id_rsa_pem_pw", "ct_x.age"]),
            typed: vec!["sshpw"],
            differs: Some((
                Aspect::Outcome,
                "legacy PEM encryption (MD5-based key derivation) is refused with how to convert the \
                 key (ssh-keygen -p -f KEY); age asks for its passphrase",
            )),
            ..d()
        },
        Scenario {
            name: "recipient_flags_and_files_mixed",
            args: s(&["-r", "AGEPUB", "-R", "id_ed.pub", "-o", "out.age", "input.txt"]),
            then_decrypt: Some(("out.age", vec!["-d", "-i", "id_ed"], vec![])),
            ..d()
        },
        Scenario {
            name: "encrypt_to_own_identity",
            args: s(&["-e", "-i", "key.txt", "-o", "out.age", "input.txt"]),
            then_decrypt: x_check.clone(),
            ..d()
        },
        Scenario {
            name: "recipients_file_skips_ecdsa_with_a_warning",
            args: s(&["-R", "mixed.pub", "-o", "out.age", "input.txt"]),
            phrases: vec!["warning"],
            then_decrypt: x_check.clone(),
            ..d()
        },
        fails(
            "identity_in_recipients_file",
            &["-R", "key.txt", "-o", "out.age", "input.txt"],
            vec!["apparent identity found in recipients file"],
        ),
        fails(
            "recipient_in_identity_file",
            &["-d", "-i", "key.pub", "ct_x.age"],
            vec!["apparent recipient found in identities file"],
        ),
        fails(
            "incompatible_recipients",
            &["-r", "AGEPUB", "-r", "PQPUB", "-o", "out.age", "input.txt"],
            vec!["incompatible recipients"],
        ),
        // --- plugins ---
        Scenario {
            name: "batchpass_encrypt",
            args: s(&["-e", "-j", "batchpass", "-o", "out.age", "input.txt"]),
            env: vec![("AGE_PASSPHRASE", "pw"), ("AGE_PASSPHRASE_WORK_FACTOR", "10")],
            then_decrypt: Some(("out.age", vec!["-d"], vec!["pw"])),
            ..d()
        },
        Scenario {
            name: "batchpass_decrypt",
            args: s(&["-d", "-j", "batchpass", "ct_pass.age"]),
            env: vec![("AGE_PASSPHRASE", "pw")],
            ..d()
        },
        Scenario {
            name: "batchpass_passphrase_from_fd",
            args: s(&["-d", "-j", "batchpass", "ct_pass.age"]),
            env: vec![("AGE_PASSPHRASE_FD", "3")],
            fd3: Some("pw\n"),
            ..d()
        },
        Scenario {
            name: "batchpass_wrong_passphrase",
            args: s(&["-d", "-j", "batchpass", "ct_pass.age"]),
            env: vec![("AGE_PASSPHRASE", "nope")],
            phrases: vec!["incorrect passphrase"],
            ..d()
        },
        Scenario {
            name: "batchpass_work_factor_above_the_maximum",
            args: s(&["-d", "-j", "batchpass", "ct_pass.age"]),
            env: vec![("AGE_PASSPHRASE", "pw"), ("AGE_PASSPHRASE_MAX_WORK_FACTOR", "5")],
            phrases: vec!["work factor too large"],
            ..d()
        },
        Scenario {
            name: "batchpass_both_sources",
            args: s(&["-d", "-j", "batchpass", "ct_pass.age"]),
            env: vec![("AGE_PASSPHRASE", "pw"), ("AGE_PASSPHRASE_FD", "3")],
            phrases: vec!["mutually exclusive"],
            ..d()
        },
        fails(
            "missing_plugin_identity",
            &["-d", "-j", "nosuchplugin", "ct_x.age"],
            vec!["plugin not found", "awesome#plugins"],
        ),
        fails(
            "missing_plugin_recipient",
            &["-r", "age1nosuchplugin1qqqqqqqqqqg2gjey", "input.txt"],
            vec!["plugin not found", "awesome#plugins"],
        ),
        // --- armor and -o ---
        Scenario { name: "armor_to_stdout", args: s(&["-a", "-r", "AGEPUB", "input.txt"]), ..d() },
        plain_out("armored_input_with_leading_whitespace", &["-d", "-i", "key.txt", "ct_x_armor_ws.age"]),
        fails(
            "armor_flag_on_decrypt",
            &["-d", "-a", "-i", "key.txt", "ct_x.age"],
            vec!["-a/--armor can't be used with -d/--decrypt"],
        ),
        Scenario {
            name: "binary_refused_on_the_terminal",
            args: s(&["-r", "AGEPUB", "input.txt"]),
            stdout_tty: true,
            phrases: vec!["refusing to output binary to the terminal"],
            ..d()
        },
        Scenario {
            name: "printable_decryption_to_the_terminal",
            args: s(&["-d", "-i", "key.txt", "ct_x.age"]),
            stdout_tty: true,
            tty_phrase: Some("hello from a terminal"),
            ..d()
        },
        Scenario {
            name: "output_file_replaced",
            args: s(&["-d", "-i", "key.txt", "-o", "existing.txt", "ct_x.age"]),
            output_file: Some("existing.txt"),
            ..d()
        },
        fails(
            "output_is_the_input",
            &["-d", "-i", "key.txt", "-o", "ct_x.age", "ct_x.age"],
            vec!["input and output file are the same"],
        ),
        Scenario {
            name: "damaged_file_to_output_file",
            args: s(&["-d", "-i", "key.txt", "-o", "out.txt", "ct_bad.age"]),
            phrases: vec!["failed to decrypt and authenticate payload chunk"],
            differs: Some((
                Aspect::PartialOutput,
                "age creates out.txt once the header authenticates and leaves it behind; \
                 hyperseal leaves no file unless the whole file authenticates",
            )),
            ..d()
        },
        fails("header_cut_short", &["-d", "-i", "key.txt", "ct_cut.age"], vec!["failed to read header"]),
        fails(
            "payload_cut_short",
            &["-d", "-i", "key.txt", "ct_big_cut.age"],
            vec!["failed to decrypt and authenticate payload chunk"],
        ),
        fails(
            "damaged_file_to_stdout",
            &["-d", "-i", "key.txt", "ct_bad.age"],
            vec!["failed to decrypt and authenticate payload chunk"],
        ),
        fails("powershell_mangled_file", &["-d", "-i", "key.txt", "ct_ps.age"], vec!["invalid header intro"]),
        // --- usage errors ---
        fails("unknown_flag", &["-x"], vec!["flag provided but not defined: -x", "Usage:"]),
        fails("no_arguments", &[], vec!["Usage:"]),
        fails("missing_recipients", &["input.txt"], vec!["missing recipients"]),
        fails(
            "identity_without_encrypt_flag",
            &["-i", "key.txt", "input.txt"],
            vec!["can't be used in encryption mode unless symmetric encryption is explicitly selected"],
        ),
        fails(
            "two_inputs",
            &["-d", "-i", "key.txt", "ct_x.age", "ct_x.age"],
            vec!["too many INPUT arguments"],
        ),
        fails(
            "not_a_passphrase_file",
            &["-d", "ct_x.age"],
            vec!["the file is not passphrase-encrypted, identities are required"],
        ),
        fails(
            "passphrase_file_with_identities",
            &["-d", "-i", "key.txt", "ct_pass.age"],
            vec!["file is passphrase-encrypted but identities were specified"],
        ),
        Scenario {
            name: "duplicate_recipient_warns",
            args: s(&["-r", "AGEPUB", "-r", "AGEPUB", "-o", "out.age", "input.txt"]),
            phrases: vec!["duplicate recipient"],
            then_decrypt: x_check.clone(),
            ..d()
        },
    ]
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

    let all = scenarios();
    assert!(all.len() >= 40, "{} scenarios", all.len());
    let mut failures = Vec::new();
    for (i, sc) in all.iter().enumerate() {
        let mut runs = Vec::new();
        for (who, program) in [("age", age.clone()), ("hyperseal", hs.clone())] {
            let dir: PathBuf = root.path().join(format!("{i}-{who}"));
            copy_dir(&fixture_dir, &dir);
            let sc = resolve(sc, &dir);
            let r = run_in(&dir, &program, &sc);
            runs.push((who, dir, r));
        }
        if let Err(e) = compare(&age, sc, &runs) {
            failures.push(format!("{}: {e}\n  age: {:?}\n  hyperseal: {:?}", sc.name, runs[0].2, runs[1].2));
        }
    }
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
    let outcome_differs = matches!(sc.differs, Some((Aspect::Outcome, _)));
    if outcome_differs {
        // Recorded difference: age succeeds, hyperseal refuses with a clear error.
        if h.status == Some(0) || h.stderr.is_empty() {
            return Err("the recorded difference no longer holds".into());
        }
        return Ok(());
    }
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
