//! Running the built `hyperseal` binary as a user would, shared by the CLI test files.
#![allow(dead_code)]

use std::process::{Command, Output, Stdio};

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

/// Asserts success and returns stdout as text.
pub fn ok(o: &Output) -> String {
    assert!(o.status.success(), "failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}
