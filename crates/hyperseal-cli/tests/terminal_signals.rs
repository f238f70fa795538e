//! Signals at a passphrase prompt, through a real pseudo-terminal (`terminal_signals.py`, a
//! small shell: the program runs as the terminal's foreground process group, as a person starts
//! it). `hyperseal decrypt` of a passphrase-encrypted file waits at its prompt with echo off;
//! then it gets a signal, and the terminal must have its echo back:
//!
//! - every signal whose default action ends a process: the process ends by that signal (the
//!   status a shell expects) and echo is on again;
//! - SIGTSTP (Ctrl-Z): the process stops with echo on; after SIGCONT echo is off again, the
//!   prompt is shown again, and the passphrase typed then opens the file;
//! - a signal ignored when hyperseal starts (`nohup`), and SIGXFSZ (which hyperseal ignores
//!   itself so that a full `ulimit -f` is reported, not fatal): nothing happens, the prompt
//!   keeps waiting with echo off and takes the passphrase.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

const HS: &str = env!("CARGO_BIN_EXE_hyperseal");
const PASSPHRASE: &str = "correct horse battery staple";
const PLAIN: &[u8] = b"opened after a signal\n";

/// A passphrase-encrypted file `file.hs` in `dir`.
fn fixture(dir: &Path) {
    fs::write(dir.join("pass"), format!("{PASSPHRASE}\n")).unwrap();
    fs::write(dir.join("plain"), PLAIN).unwrap();
    let o = Command::new(HS)
        .args(["encrypt", "--passphrase-file", "pass", "-o", "file.hs", "plain"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// One run of the harness: `signal` sent at the prompt of `hyperseal decrypt -o out file.hs`.
fn run(dir: &Path, signal: i32, mode: &str, ignore: &[i32]) -> Value {
    let out = dir.join("out");
    let _ = fs::remove_file(&out);
    let req = json!({
        "argv": [HS, "decrypt", "-o", "out", "file.hs"],
        "cwd": dir.display().to_string(),
        "signal": signal,
        "mode": mode,
        "ignore": ignore,
        "answer": PASSPHRASE,
    });
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/terminal_signals.py");
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), req.to_string().as_bytes()).unwrap();
    drop(child.stdin.take());
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "harness: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Checks `r` against `want` (field, value): the failures, with the run for context.
fn check(name: &str, r: &Value, want: &[(&str, Value)]) -> Vec<String> {
    want.iter()
        .filter(|(k, v)| r.get(*k) != Some(v))
        .map(|(k, v)| format!("{name}: {k} is {:?}, not {v}; run: {r}", r.get(*k)))
        .collect()
}

fn fatal_signals() -> Vec<(&'static str, i32)> {
    vec![
        ("HUP", libc::SIGHUP),
        ("INT", libc::SIGINT),
        ("QUIT", libc::SIGQUIT),
        ("TERM", libc::SIGTERM),
        ("PIPE", libc::SIGPIPE),
        ("PROF", libc::SIGPROF),
        ("ALRM", libc::SIGALRM),
        ("USR1", libc::SIGUSR1),
        ("USR2", libc::SIGUSR2),
        ("VTALRM", libc::SIGVTALRM),
        ("XCPU", libc::SIGXCPU),
        ("ABRT", libc::SIGABRT),
        ("IO", libc::SIGIO),
        ("SYS", libc::SIGSYS),
        ("PWR", libc::SIGPWR),
        ("RTMIN+3", libc::SIGRTMIN() + 3),
        ("RTMAX", libc::SIGRTMAX()),
    ]
}

#[test]
fn every_fatal_signal_at_a_prompt_restores_echo() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let mut failures = Vec::new();
    for (name, sig) in fatal_signals() {
        let r = run(dir.path(), sig, "fatal", &[]);
        failures.extend(check(
            name,
            &r,
            &[
                ("prompted", json!(true)),
                ("echo_at_prompt", json!(false)),
                ("status", json!(128 + sig)),
                ("echo_at_end", json!(true)),
            ],
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn ctrl_z_at_a_prompt_restores_echo_until_continued() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let r = run(dir.path(), libc::SIGTSTP, "stop", &[]);
    let failures = check(
        "TSTP",
        &r,
        &[
            ("prompted", json!(true)),
            ("echo_at_prompt", json!(false)),
            ("stopped", json!(true)),
            ("echo_while_stopped", json!(true)),
            ("prompted_again", json!(true)),
            ("echo_after_continue", json!(false)),
            ("status", json!(0)),
            ("echo_at_end", json!(true)),
        ],
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(fs::read(dir.path().join("out")).unwrap(), PLAIN);
    let tty = r["tty"].as_str().unwrap();
    assert_eq!(tty.matches("Enter passphrase:").count(), 2, "the prompt again after SIGCONT: {tty:?}");
}

#[test]
fn ignored_signals_leave_the_prompt_waiting() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let mut failures = Vec::new();
    // SIGXFSZ: hyperseal ignores it itself; SIGHUP and SIGPROF: ignored by whoever started it.
    let cases = [
        ("XFSZ", libc::SIGXFSZ, vec![]),
        ("HUP (nohup)", libc::SIGHUP, vec![libc::SIGHUP]),
        ("PROF (ignored)", libc::SIGPROF, vec![libc::SIGPROF]),
    ];
    for (name, sig, ignore) in cases {
        let r = run(dir.path(), sig, "ignored", &ignore);
        failures.extend(check(
            name,
            &r,
            &[
                ("prompted", json!(true)),
                ("still_waiting", json!(true)),
                ("echo_while_waiting", json!(false)),
                ("status", json!(0)),
                ("echo_at_end", json!(true)),
            ],
        ));
        if fs::read(dir.path().join("out")).ok().as_deref() != Some(PLAIN) {
            failures.push(format!("{name}: the passphrase typed afterwards did not open the file"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
