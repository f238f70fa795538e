//! A connection against hostile plugins (shell scripts): deadlines on reads, writes and the
//! whole exchange, killing before waiting, caps, the bounded queue, printable stderr, and
//! every thread ending.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;
use crate::recipient::plugin::v1;

const SECOND: Duration = Duration::from_secs(1);

/// A plugin `age-plugin-NAME` running `script` (sh), in a directory of its own.
struct Script {
    dir: PathBuf,
    exe: PathBuf,
}

impl Script {
    fn new(name: &str, script: &str) -> Script {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("hs-plugin-conn-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join(format!("age-plugin-{name}"));
        std::fs::write(&exe, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        Script { dir, exe }
    }

    fn start(&self, timeout: Duration) -> Connection {
        Connection::start("t", &self.exe, "identity-v1", timeout).unwrap()
    }
}

impl Drop for Script {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn plugin_error(e: Error) -> String {
    assert!(matches!(e, Error::Plugin(_)), "{e:?}");
    e.to_string()
}

/// A silent plugin is stopped when the deadline runs out, and a program it started (holding
/// its pipes) goes with it: every thread ends.
#[test]
fn silent_plugin_is_stopped_with_its_children() {
    let p = Script::new("t", "sleep 30 & sleep 30");
    let started = Instant::now();
    let mut c = p.start(SECOND);
    c.send("add-identity", &["AGE-PLUGIN-T-1"], &[]).unwrap();
    let err = plugin_error(c.recv().unwrap_err());
    assert!(err.contains("age-plugin-t: no answer within 1 s; stopped it"), "{err}");
    assert!(c.stop(), "every thread ended");
    assert!(started.elapsed() < 10 * SECOND, "{:?}", started.elapsed());
}

/// Whether process `pid` still runs (a zombie does not: it only waits for its parent).
#[cfg(target_os = "linux")]
fn alive(pid: i32) -> bool {
    crate::sys::family::stat(pid).is_some_and(|p| !p.zombie)
}

/// The pids a plugin's descendants wrote into `dir`, once all of them did.
#[cfg(target_os = "linux")]
fn pids_in(dir: &std::path::Path, names: &[&str]) -> Vec<i32> {
    let until = Instant::now() + 5 * SECOND;
    loop {
        let got: Vec<i32> = names
            .iter()
            .filter_map(|n| std::fs::read_to_string(dir.join(n)).ok()?.trim().parse().ok())
            .collect();
        if got.len() == names.len() || Instant::now() > until {
            return got;
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// Processes that left the plugin's process group (`setsid`), holding its pipes, one of them
/// started by another: the deadline is kept (not waiting for those pipes to close) and each of
/// them is killed with the plugin.
#[cfg(target_os = "linux")]
#[test]
fn descendants_that_left_the_group_are_killed() {
    let out = tempfile::tempdir().unwrap();
    let d = out.path().display();
    let p = Script::new(
        "t",
        &format!(
            "setsid sh -c 'echo $$ > {d}/a; setsid sh -c \"echo \\$\\$ > {d}/b; exec sleep 60\" & exec sleep 60' &\n\
             exec sleep 60"
        ),
    );
    let started = Instant::now();
    let mut c = p.start(SECOND);
    let pids = pids_in(out.path(), &["a", "b"]);
    assert_eq!(pids.len(), 2, "the plugin's descendants started");
    assert!(pids.iter().all(|&pid| alive(pid)));
    let err = plugin_error(c.recv().unwrap_err());
    assert!(err.contains("no answer within 1 s; stopped it"), "{err}");
    let took = started.elapsed();
    assert!(took < SECOND + SECOND / 2, "{took:?}");
    assert!(c.stop(), "every thread ended: the pipes were closed");
    // Killed, but a killed process on a loaded machine may take a moment to be gone from /proc:
    // waited for, with a bound far past any honest delay (one CI run saw both still listed).
    let until = Instant::now() + 5 * SECOND;
    while pids.iter().any(|&pid| alive(pid)) && Instant::now() < until {
        thread::sleep(Duration::from_millis(10));
    }
    assert!(pids.iter().all(|&pid| !alive(pid)), "{pids:?} still run");
}

/// The deadline covers the whole exchange: a plugin that answers just in time, forever, is
/// stopped once the total runs out, not after each message.
#[test]
fn the_deadline_covers_the_whole_exchange() {
    let p = Script::new("t", "while :; do printf -- '-> msg\\naGk\\n'; sleep 0.3; done");
    let started = Instant::now();
    let mut c = p.start(SECOND);
    let mut n = 0;
    let err = loop {
        match c.recv() {
            Ok(_) => n += 1,
            Err(e) => break plugin_error(e),
        }
    };
    assert!(err.contains("no answer within 1 s"), "{err}");
    assert!(n <= 4, "{n} messages in one second");
    assert!(started.elapsed() < 30 * SECOND);
}

/// Garbage, then silence: stopped at once (killed, then reaped), not waited for.
#[test]
fn garbage_then_silence_is_killed_not_waited_for() {
    let p = Script::new("t", "printf 'garbage\\n'; exec sleep 30");
    let started = Instant::now();
    let mut c = p.start(Duration::from_secs(30));
    let err = plugin_error(c.recv().unwrap_err());
    assert!(err.contains("sent something that is not a stanza; stopped it"), "{err}");
    assert!(c.stop());
    assert!(started.elapsed() < 10 * SECOND, "{:?}", started.elapsed());
}

/// A plugin that never reads its input, sent a large stanza: the write is given up at the
/// deadline and the plugin stopped.
#[test]
fn writes_have_a_deadline() {
    let p = Script::new("t", "exec sleep 30");
    let started = Instant::now();
    let mut c = p.start(SECOND);
    let big = vec![7u8; 200 << 10];
    let err = plugin_error(c.send("recipient-stanza", &["0", "x"], &big).unwrap_err());
    assert!(err.contains("did not read its input within 1 s; stopped it"), "{err}");
    assert!(c.stop());
    assert!(started.elapsed() < 10 * SECOND, "{:?}", started.elapsed());
}

/// A crash is explained by its stderr, made printable (no escape reaches a terminal).
#[test]
fn stderr_is_quoted_printable() {
    let p = Script::new("t", "printf '\\033[31mRED \\033]0;pwned\\007\\n' >&2; exit 3");
    let mut c = p.start(10 * SECOND);
    let err = plugin_error(c.recv().unwrap_err());
    assert!(err.contains("closed its output (exit status: 3) (it said: ?[31mRED ?]0;pwned?)"), "{err}");
    assert!(!err.chars().any(|ch| ch.is_control()), "{err:?}");
}

/// The reader thread is paced by the bounded queue: with nobody receiving, it stops after
/// PLUGIN_QUEUE messages plus one buffer, however much the plugin has to send.
#[test]
fn the_queue_is_bounded() {
    struct Endless(Arc<AtomicUsize>);
    impl std::io::Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            const MSG: &[u8] = b"-> msg\naGk\n";
            let n = buf.len().min(MSG.len());
            let at = self.0.fetch_add(n, Ordering::Relaxed) % MSG.len();
            // Any phase of the repeating message: copy byte by byte.
            for (i, b) in buf[..n].iter_mut().enumerate() {
                *b = MSG[(at + i) % MSG.len()];
            }
            Ok(n)
        }
    }
    let read = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = mpsc::sync_channel(limits::PLUGIN_QUEUE);
    let endless = Endless(read.clone());
    let pump = thread::spawn(move || {
        let mut r = StanzaReader::new(BufReader::new(endless), "t");
        while tx.send(r.next()).is_ok() {}
    });
    thread::sleep(Duration::from_millis(300));
    let bytes = read.load(Ordering::Relaxed);
    assert!(bytes <= 8192 + (limits::PLUGIN_QUEUE + 2) * 11, "read {bytes} bytes with nobody receiving");
    // The queue filled (the pump refills it as this drains, so only a full queue is checked).
    assert_eq!(rx.try_iter().take(limits::PLUGIN_QUEUE).count(), limits::PLUGIN_QUEUE);
    drop(rx);
    pump.join().unwrap();
}

/// A script that drains its stdin in the background (so our answers never block) and then
/// runs `body` after phase 1.
fn draining(body: &str) -> String {
    // (A background job's stdin is /dev/null unless it is given another descriptor.)
    format!("exec 3<&0; cat <&3 >/dev/null &\n{body}")
}

/// Callbacks that answer nothing and give a plugin 60 s: a cap is reached long before on an
/// idle machine, and on a loaded one the flood still reaches it (a failing test waits a minute).
struct Quick;

impl crate::recipient::Callbacks for Quick {
    fn request_passphrase(&self, _: &str) -> Option<zeroize::Zeroizing<String>> {
        None
    }

    fn plugin_timeout(&self) -> Duration {
        60 * SECOND
    }
}

fn limit_error(e: Error) -> String {
    assert!(matches!(e, Error::Limit(_)), "{e:?}");
    assert_eq!(e.code(), crate::error::ErrorCode::Limit);
    e.to_string()
}

fn stanza() -> [Stanza; 1] {
    [Stanza::new("x", vec!["y".into()], vec![1, 2, 3])]
}

#[test]
fn unknown_commands_are_capped() {
    // `yes` floods without a process per message, so the cap (not the deadline) ends it even
    // on a loaded machine: the error says which.
    let p = Script::new("t", &draining("yes -- '-> flood\n'"));
    let e = v1::unwrap("t", &p.exe, "AGE-PLUGIN-T-1", &stanza(), &Quick).unwrap_err();
    let msg = limit_error(e);
    assert!(msg.contains("more than 4096 messages from age-plugin-t in one exchange"), "{msg}");
}

#[test]
fn recipient_stanzas_are_capped_in_number_and_size() {
    let endless = draining("yes -- '-> recipient-stanza 0 x\nAAAA'");
    let p = Script::new("t", &endless);
    let key = crate::file_key::FileKey::generate(16);
    let e = v1::wrap("t", &p.exe, "age1t1x", false, &key, &Quick).unwrap_err();
    let msg = limit_error(e);
    let want = format!("more than {} recipient stanzas from age-plugin-t", crate::limits::PLUGIN_STANZAS);
    assert!(msg.contains(&want), "{msg}");

    // One stanza of 66 KiB (1408 full lines of 64 columns, then the end).
    let big = draining(
        "printf -- '-> recipient-stanza 0 x\\n'\n\
         yes AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA | head -n 1408\n\
         printf '\\n-> done\\n\\n'; sleep 30",
    );
    let p = Script::new("t", &big);
    let e = v1::wrap("t", &p.exe, "age1t1x", false, &key, &Quick).unwrap_err();
    let msg = limit_error(e);
    assert!(msg.contains("a recipient stanza's body from age-plugin-t is longer than 64 KiB"), "{msg}");
}

#[test]
fn an_endless_line_is_capped() {
    let p = Script::new("t", &draining("printf -- '-> msg\\n'; exec tr '\\0' A </dev/zero"));
    let started = Instant::now();
    let mut c = p.start(30 * SECOND);
    let msg = limit_error(c.recv().unwrap_err());
    assert!(msg.contains("a message from age-plugin-t is longer than 1 MiB"), "{msg}");
    assert!(c.stop());
    assert!(started.elapsed() < 30 * SECOND);
}
