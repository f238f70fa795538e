//! `hyperseal age` and a hyperseal started as `age` (a symbolic link of that name) against the
//! real age v1.3.1 (`.tools/bin` from `make age`): the same argument lists go to all three, and
//! the exit statuses, whether stdout is empty, and the files agree; every file made by one opens
//! with the others. Covered: X25519 and post-quantum keys, `-R` files, `-e -i`, `-j` with age's
//! `age-plugin-batchpass`, armor, stdin and stdout, `-i -` and `-R -`, passphrases and the
//! binary-to-terminal refusals on a pseudo-terminal (util-linux `script`), and failures (wrong
//! key, missing files, bad flags, bad combinations), which fail in all three.
//! Without `.tools/bin/age` every test prints a note and passes (as the other age tests).

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

use crate::common;
use common::{on_terminal, peers, tools_path};

const HS: &str = env!("CARGO_BIN_EXE_hyperseal");

/// One way to run "age": a program and the words before age's own arguments.
struct Tool {
    name: &'static str,
    program: PathBuf,
    prefix: &'static [&'static str],
}

struct Setup {
    _dir: tempfile::TempDir,
    d: PathBuf,
    tools: Vec<Tool>,
    /// X25519 and post-quantum identity files (from age-keygen) and their recipients.
    key: String,
    key_pq: String,
    recipient: String,
    recipient_pq: String,
    /// A recipients file holding two X25519 recipients (the second key: `key2`).
    recipients_file: String,
    key2: String,
}

fn setup() -> Option<Setup> {
    let age = peers(&["age", "age-keygen"])?;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    // A link named `age` to the hyperseal binary, as a user would install it.
    fs::create_dir(d.join("bin")).unwrap();
    std::os::unix::fs::symlink(HS, d.join("bin/age")).unwrap();
    let tools = vec![
        Tool { name: "age", program: age, prefix: &[] },
        Tool { name: "hyperseal age", program: HS.into(), prefix: &["age"] },
        Tool { name: "link age", program: d.join("bin/age"), prefix: &[] },
    ];
    let keygen = common::TOOLS.to_string() + "/age-keygen";
    let make_key = |name: &str, pq: bool| {
        let path = d.join(name);
        let mut args = vec!["-o", path.to_str().unwrap()];
        if pq {
            args.insert(0, "-pq");
        }
        assert!(Command::new(&keygen).args(&args).output().unwrap().status.success());
        let public = Command::new(&keygen).args(["-y", path.to_str().unwrap()]).output().unwrap();
        (path.to_str().unwrap().to_string(), String::from_utf8(public.stdout).unwrap().trim().to_string())
    };
    let (key, recipient) = make_key("x.key", false);
    let (key_pq, recipient_pq) = make_key("pq.key", true);
    let (key2, recipient2) = make_key("x2.key", false);
    let recipients_file = d.join("recipients.txt");
    fs::write(&recipients_file, format!("# two keys\n{recipient}\n\n{recipient2}\n")).unwrap();
    let recipients_file = recipients_file.to_str().unwrap().to_string();
    Some(Setup { _dir: dir, d, tools, key, key_pq, recipient, recipient_pq, recipients_file, key2 })
}

/// Runs `tool ARGS` with `stdin`, PATH led by `.tools/bin` (for age-plugin-batchpass) and
/// AGE_PASSPHRASE set (batchpass reads it).
fn run(tool: &Tool, args: &[&str], stdin: &[u8]) -> Output {
    let mut c = Command::new(&tool.program);
    c.args(tool.prefix).args(args).env("PATH", tools_path());
    c.env("AGE_PASSPHRASE", "batch passphrase").env("AGE_PASSPHRASE_WORK_FACTOR", "10");
    common::fed(c, stdin)
}

fn data(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 65536) as u8).collect()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Encrypts with every tool and decrypts with every tool, for each way of naming the keys, with
/// and without armor, from a file and from stdin, to `-o` and to stdout.
#[test]
fn every_tool_opens_every_tools_files() {
    let Some(s) = setup() else { return };
    // (encryption arguments, decryption arguments)
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec!["-r", &s.recipient], vec!["-i", &s.key]),
        (vec!["--recipient", &s.recipient_pq], vec!["--identity", &s.key_pq]),
        (vec!["-R", &s.recipients_file], vec!["-i", &s.key2]),
        (vec!["-e", "-i", &s.key_pq], vec!["-d", "-i", &s.key_pq]),
        (vec!["-e", "-j", "batchpass"], vec!["-j", "batchpass"]),
    ];
    let (ct, out) = (s.d.join("ct"), s.d.join("out"));
    let (ct_s, out_s) = (ct.to_str().unwrap(), out.to_str().unwrap());
    for (enc_args, dec_args) in &cases {
        for &n in &[0usize, 65536, 2 * 65536 + 500] {
            let plain = data(n);
            let plain_path = s.d.join("plain");
            fs::write(&plain_path, &plain).unwrap();
            for armor in [false, true] {
                for (i, enc) in s.tools.iter().enumerate() {
                    let _ = fs::remove_file(&ct);
                    let mut args = enc_args.clone();
                    if armor {
                        args.push("-a");
                    }
                    // Alternate file and stdin, -o and stdout, between the tools.
                    let to_file = (i + n) % 2 == 0;
                    if to_file {
                        args.extend(["-o", ct_s, plain_path.to_str().unwrap()]);
                    }
                    let o = run(enc, &args, if to_file { b"" } else { &plain });
                    let label = format!("{} {args:?} n={n}", enc.name);
                    assert_eq!(o.status.code(), Some(0), "{label}: {}", err(&o));
                    assert_eq!(o.stdout.is_empty(), to_file, "{label}");
                    if !to_file {
                        fs::write(&ct, &o.stdout).unwrap();
                    }
                    let file = fs::read(&ct).unwrap();
                    assert_eq!(file.starts_with(b"-----BEGIN AGE ENCRYPTED FILE-----"), armor, "{label}");
                    assert!(armor || file.starts_with(b"age-encryption.org/v1\n"), "{label}");
                    for dec in &s.tools {
                        let _ = fs::remove_file(&out);
                        let mut d = vec!["--decrypt"];
                        d.extend(dec_args.iter().filter(|a| **a != "-d"));
                        d.extend(["-o", out_s, ct_s]);
                        let o = run(dec, &d, b"");
                        assert_eq!(o.status.code(), Some(0), "{label} → {}: {}", dec.name, err(&o));
                        assert!(o.stdout.is_empty(), "{label} → {}", dec.name);
                        assert!(fs::read(&out).unwrap() == plain, "{label} → {}", dec.name);
                        // And to stdout, from stdin.
                        let mut d = vec!["-d"];
                        d.extend(dec_args.iter().filter(|a| **a != "-d"));
                        let o = run(dec, &d, &file);
                        assert_eq!(o.status.code(), Some(0), "{label} → {} (pipe): {}", dec.name, err(&o));
                        assert!(o.stdout == plain, "{label} → {} (pipe)", dec.name);
                    }
                }
            }
        }
    }
}

/// Keys from standard input (`-i -`, `-R -`) work in all three; standard input serves one
/// purpose only.
#[test]
fn keys_from_standard_input() {
    let Some(s) = setup() else { return };
    let plain = s.d.join("plain");
    fs::write(&plain, data(1000)).unwrap();
    let recipients = fs::read(&s.recipients_file).unwrap();
    let key2 = fs::read(&s.key2).unwrap();
    for enc in &s.tools {
        let ct = s.d.join(format!("{}.age", enc.name));
        let o = run(enc, &["-R", "-", "-o", ct.to_str().unwrap(), plain.to_str().unwrap()], &recipients);
        assert_eq!(o.status.code(), Some(0), "{}: {}", enc.name, err(&o));
        for dec in &s.tools {
            let o = run(dec, &["-d", "-i", "-", ct.to_str().unwrap()], &key2);
            assert_eq!(o.status.code(), Some(0), "{} → {}: {}", enc.name, dec.name, err(&o));
            assert_eq!(o.stdout, data(1000), "{} → {}", enc.name, dec.name);
            // Keys and input both from standard input: refused by all.
            let o = run(dec, &["-d", "-i", "-"], &key2);
            assert_eq!(o.status.code(), Some(1), "{}", dec.name);
            assert!(err(&o).contains("standard input is used for multiple purposes"), "{}", dec.name);
        }
    }
}

/// Failures fail in all three, with the same status, nothing on stdout and no output file.
#[test]
fn failures_agree() {
    let Some(s) = setup() else { return };
    let plain = s.d.join("plain");
    fs::write(&plain, data(70_000)).unwrap();
    let p = plain.to_str().unwrap();
    let ct = s.d.join("x.age");
    let c = ct.to_str().unwrap();
    assert!(run(&s.tools[0], &["-r", &s.recipient, "-o", c, p], b"").status.success());
    let pass = s.d.join("pass.age");
    assert!(run(&s.tools[0], &["-e", "-j", "batchpass", "-o", pass.to_str().unwrap(), p], b"")
        .status
        .success());
    let cut = s.d.join("cut.age");
    let whole = fs::read(&ct).unwrap();
    fs::write(&cut, &whole[..whole.len() - 100]).unwrap();
    let missing = s.d.join("missing").to_str().unwrap().to_string();
    let out = s.d.join("never");
    let o = out.to_str().unwrap();
    let cases: Vec<(Vec<&str>, i32)> = vec![
        (vec![], 1),
        (vec!["-d", "-i", &s.key2, "-o", o, c], 1),   // wrong key
        (vec!["-d", "-i", &s.key_pq, "-o", o, c], 1), // wrong kind of key
        (vec!["-d", "-i", &missing, "-o", o, c], 1),
        (vec!["-d", "-i", &s.key, "-o", o, &missing], 1),
        (vec!["-r", &s.recipient, "-o", o, &missing], 1),
        (vec!["-R", &missing, "-o", o, p], 1),
        (vec!["-r", "age1notarecipient", "-o", o, p], 1),
        (vec!["-r", &s.recipient, "-r", &s.recipient_pq, "-o", o, p], 1), // mixed PQ and classic
        (vec!["-d", "-i", &s.key, "-o", o, p], 1),                        // not an age file
        (vec!["-d", "-o", o, c], 1),                                      // no identity, not -p
        (vec!["-d", "-i", &s.key, "-o", o, pass.to_str().unwrap()], 1),   // passphrase file with -i
        (vec!["-d", "-a", "-i", &s.key, c], 1),
        (vec!["-e", "-d", "-i", &s.key, c], 1),
        (vec!["-d", "-r", &s.recipient, c], 1),
        (vec!["-i", &s.key, "-o", o, p], 1), // -i to encrypt needs -e
        (vec!["-o", o, p], 1),               // no recipients
        (vec!["-p", "-r", &s.recipient, "-o", o, p], 1),
        (vec!["-r", &s.recipient, p, "-o", o], 1), // input before flags
        (vec!["-r", &s.recipient, p, p], 1),
        (vec!["-r", &s.recipient, "-o", p, p], 1), // output is the input
        (vec!["-e", "-i", &s.key, "-o", &s.key, p], 1), // output is a key file
        (vec!["-x", p], 2),
        (vec!["-da", "-i", &s.key, c], 2),
        (vec!["-r"], 2),
        (vec!["-d=maybe", c], 2),
        (vec!["---d", c], 2),
    ];
    for (args, code) in &cases {
        for t in &s.tools {
            let _ = fs::remove_file(&out);
            let r = run(t, args, b"");
            assert_eq!(r.status.code(), Some(*code), "{} {args:?}: {}", t.name, err(&r));
            assert!(r.stdout.is_empty(), "{} {args:?}", t.name);
            assert!(!err(&r).is_empty(), "{} {args:?}", t.name);
            assert!(!out.exists(), "{} {args:?} left an output file", t.name);
        }
    }
    // A passphrase left over on the command line is not repeated by hyperseal (age quotes it).
    for t in &s.tools[1..] {
        let r = run(t, &["-r", &s.recipient, p, "hunter2-left-over"], b"");
        assert_eq!(r.status.code(), Some(1), "{}", t.name);
        assert!(!err(&r).contains("hunter2"), "{}: {}", t.name, err(&r));
    }
    // A file cut short: every tool fails. age has written the authenticated chunks to -o by
    // then; hyperseal leaves no output file (the README's difference).
    for t in &s.tools {
        let _ = fs::remove_file(&out);
        let r = run(t, &["-d", "-i", &s.key, "-o", o, cut.to_str().unwrap()], b"");
        assert_eq!(r.status.code(), Some(1), "{}: {}", t.name, err(&r));
        assert_eq!(out.exists(), t.name == "age", "{}", t.name);
    }
    // An existing output file is replaced, as age replaces it.
    for t in &s.tools {
        fs::write(&out, b"old contents").unwrap();
        let r = run(t, &["-d", "-i", &s.key, "-o", o, c], b"");
        assert_eq!(r.status.code(), Some(0), "{}: {}", t.name, err(&r));
        assert!(fs::read(&out).unwrap() == data(70_000), "{}", t.name);
    }
    // Help (status 0) and version (stdout) work in all three.
    for t in &s.tools {
        for help in ["-h", "--help"] {
            let r = run(t, &[help], b"");
            assert_eq!(r.status.code(), Some(0), "{} {help}", t.name);
            assert!(r.stdout.is_empty() && err(&r).contains("-i, --identity PATH"), "{} {help}", t.name);
        }
        let r = run(t, &["--version"], b"");
        assert_eq!(r.status.code(), Some(0), "{}", t.name);
        assert!(!r.stdout.is_empty(), "{}", t.name);
    }
}

fn shell_line(t: &Tool, args: &[&str]) -> String {
    let mut words = vec![t.program.to_str().unwrap().to_string()];
    words.extend(t.prefix.iter().chain(args).map(|w| format!("'{w}'")));
    words.join(" ")
}

/// On a terminal: binary is refused (status 1, unless `-o -`), armor and text are printed,
/// and passphrases typed into one tool open files in the others.
#[test]
fn terminal_rules_and_passphrases() {
    let Some(s) = setup() else { return };
    let text = s.d.join("text");
    fs::write(&text, "a line of text\n").unwrap();
    let t = text.to_str().unwrap();
    let bin = s.d.join("bin.age");
    assert!(run(&s.tools[0], &["-r", &s.recipient, "-o", bin.to_str().unwrap(), t], b"").status.success());
    let binary_plain = s.d.join("binary");
    fs::write(&binary_plain, [0u8, 1, 2, 3, 200, 7]).unwrap();
    let bin2 = s.d.join("bin2.age");
    let b2 = bin2.to_str().unwrap();
    assert!(run(&s.tools[0], &["-r", &s.recipient, "-o", b2, binary_plain.to_str().unwrap()], b"")
        .status
        .success());
    let b = bin.to_str().unwrap();
    for tool in &s.tools {
        let cases: [(&[&str], i32, Option<&str>); 5] = [
            (&["-r", &s.recipient, t], 1, None),
            (&["-r", &s.recipient, "-a", t], 0, Some("-----BEGIN AGE ENCRYPTED FILE-----")),
            (&["-d", "-i", &s.key, b], 0, Some("a line of text")),
            (&["-d", "-i", &s.key, b2], 1, None),
            (&["-d", "-i", &s.key, "-o", "-", b2], 0, None),
        ];
        for (args, code, shows) in cases {
            let o = on_terminal(&shell_line(tool, args), "");
            let screen = String::from_utf8_lossy(&o.stdout);
            assert_eq!(o.status.code(), Some(code), "{} {args:?}: {screen}", tool.name);
            if code == 1 {
                assert!(
                    screen.contains("refusing to output binary to the terminal"),
                    "{} {args:?}",
                    tool.name
                );
            }
            if let Some(s) = shows {
                assert!(screen.contains(s), "{} {args:?}: {screen}", tool.name);
            }
        }
    }
    // -p: typed twice to encrypt, once to decrypt, across all pairs; a wrong one fails.
    let pass = "a typed passphrase";
    for enc in &s.tools {
        let ct = s.d.join(format!("{}-p.age", enc.name.replace(' ', "-")));
        let c = ct.to_str().unwrap();
        let o = on_terminal(&shell_line(enc, &["-p", "-o", c, t]), &format!("{pass}\n{pass}\n"));
        assert_eq!(o.status.code(), Some(0), "{}: {}", enc.name, String::from_utf8_lossy(&o.stdout));
        for dec in &s.tools {
            let out = s.d.join("p-out");
            let _ = fs::remove_file(&out);
            let o =
                on_terminal(&shell_line(dec, &["-d", "-o", out.to_str().unwrap(), c]), &format!("{pass}\n"));
            assert_eq!(o.status.code(), Some(0), "{} → {}", enc.name, dec.name);
            assert_eq!(fs::read_to_string(&out).unwrap(), "a line of text\n", "{} → {}", enc.name, dec.name);
            let o = on_terminal(&shell_line(dec, &["-d", c]), "not it\n");
            assert_eq!(o.status.code(), Some(1), "{} → {} wrong passphrase", enc.name, dec.name);
        }
    }
}
