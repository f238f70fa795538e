//! Hostile age plugins against the release binary. Each plugin is a real executable
//! `age-plugin-NAME` (a shell script) in a directory of its own, put on PATH; hyperseal runs
//! under a memory cap (`prlimit`, see [`MEMORY`]) and a deadline, with
//! `HYPERSEAL_PLUGIN_TIMEOUT=2` (or [`COUNTED`] where a cap on messages or bytes is what must end
//! the run). Whatever the plugin does — stay silent, speak garbage, never
//! read, flood, send stanzas without end, print terminal escapes — hyperseal must end with exit
//! status 1 and one `hyperseal: error:` line naming the plugin, within the timeout and a few
//! seconds, leave nothing at `-o`, and never copy a raw ESC byte to its stderr.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;

const HS: &str = env!("CARGO_BIN_EXE_hyperseal");

/// The plugin timeout these runs set (seconds).
const TIMEOUT: u64 = 2;

/// The plugin timeout of the cases a count ends (messages, stanzas, bytes). Each message there
/// is a round trip between two processes; on a loaded machine 4096 of them can take more than
/// [`TIMEOUT`] of waiting, and the deadline would end the run before the cap it is meant to
/// show. Far more than any machine needs, so the count is what ends these runs.
const COUNTED: u64 = 60;

/// How long after the plugin's timeout a run is killed from outside (`timeout -s KILL`), so
/// that a hang fails as a kill and not as a stuck test. Far past the plugin's timeout, so that a
/// loaded machine never reaches it, and (with [`TIMEOUT`]) well short of the minute the hostile
/// plugins' sleepers live: a hyperseal that waited for them is killed and fails on its exit
/// status.
const DEADLINE: Duration = Duration::from_secs(30);

/// How long a run that kept the plugin's timeout may take: the timeout, the grace before the
/// kill and the process's own start and end on a loaded machine. A run that waited for the
/// plugin's sleepers (60 s) or was killed at [`DEADLINE`] takes longer.
const ENDED: Duration = Duration::from_secs(TIMEOUT + 20);

/// The memory cap, `prlimit --as` (address space) around the hyperseal process. Measured on
/// this binary (`prlimit --as=N hyperseal encrypt --format age -j good …` with a plugin that
/// answers at once): a 1 MiB file needs 10 MiB, a 100 MB file 16 MiB (the plugin's threads run
/// on 128 KiB stacks, and glibc falls back to its main arena when a thread arena cannot be
/// mapped). Before the plugin fixes, a flooding plugin took gigabytes within the timeout.
const MEMORY: u64 = 64 << 20;

struct Case {
    name: &'static str,
    /// The plugin: a shell script run as `age-plugin-NAME --age-plugin=STATE_MACHINE`.
    script: &'static str,
    /// Decrypt (an identity plugin, `-j NAME`) rather than encrypt (a recipient plugin).
    decrypt: bool,
    /// What the error line says besides the plugin's name.
    says: &'static str,
    /// The plugin timeout the run is given (seconds): [`TIMEOUT`], or [`COUNTED`].
    timeout: u64,
}

/// Reads phase 1 (up to our `done`) so that what follows lands in phase 2.
const PHASE1: &str = "while IFS= read -r l; do [ \"$l\" = \"-> done\" ] && break; done; IFS= read -r _";

/// Keeps reading our answers in the background (after phase 1), so that only the plugin's own
/// behaviour limits it (a background job's stdin is /dev/null unless given another descriptor).
const DRAIN: &str = "exec 3<&0; cat <&3 >/dev/null &";

fn cases() -> Vec<Case> {
    vec![
        Case { name: "silent", script: "exec sleep 60", decrypt: false, says: "no answer within 2 s", timeout: TIMEOUT },
        Case {
            name: "garbage",
            script: "PHASE1; printf 'this is not a stanza\\n'; exec sleep 60",
            decrypt: false,
            says: "sent something that is not a stanza",
            timeout: TIMEOUT,
        },
        Case {
            name: "deaf",
            script: "exec sleep 60",
            decrypt: true,
            says: "did not read its input within 2 s",
            timeout: TIMEOUT,
        },
        Case {
            name: "flood",
            script: "PHASE1; DRAIN while :; do printf -- '-> flood-%s 1 2\\naGk\\n' x; done",
            decrypt: false,
            says: "more than 4096 messages from age-plugin-flood",
            timeout: COUNTED,
        },
        Case {
            name: "stanzas",
            script: "PHASE1; DRAIN while :; do printf -- '-> recipient-stanza 0 X25519 AAAA\\nAAAA\\n'; done",
            decrypt: false,
            says: "more than 4096 recipient stanzas from age-plugin-stanzas",
            timeout: COUNTED,
        },
        Case {
            name: "endless",
            script: "PHASE1; DRAIN printf -- '-> msg\\n'; exec tr '\\0' A </dev/zero",
            decrypt: true,
            says: "a message from age-plugin-endless is longer than 1 MiB",
            timeout: COUNTED,
        },
        Case {
            name: "escapes",
            // Terminal escapes (ESC[31m, an OSC window title, a bidi override) on stderr, then
            // in a message and in an error.
            script: "PHASE1; printf '\\033[31mRED \\033]0;pwned\\007\\n' >&2\n\
                     printf -- '-> msg\\nG1szMW1SRUQbXTA7cHduZWQH4oCuZXhl\\n'; IFS= read -r _; IFS= read -r _\n\
                     printf -- '-> error internal\\nG1sySiBnb25lG1szMW0\\n'; IFS= read -r _; IFS= read -r _; exit 1",
            decrypt: false,
            says: "refused to wrap: ?[2J gone?[31m",
            timeout: TIMEOUT,
        },
    ]
}

fn write_plugin(dir: &Path, case: &Case) {
    let script = case.script.replace("DRAIN", DRAIN).replace("PHASE1", PHASE1);
    let exe = dir.join(format!("age-plugin-{}", case.name));
    fs::write(&exe, format!("#!/bin/sh\n{script}\n")).unwrap();
    fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).unwrap();
}

/// An age file whose header holds five stanzas of 48 KiB (each within the header's budget, 320
/// KB of stanza text in all: far more than a pipe holds), offered to an identity plugin whole.
fn big_stanza_file(path: &Path) {
    let b64 = base64::engine::general_purpose::STANDARD_NO_PAD;
    let mut f = b"age-encryption.org/v1\n".to_vec();
    for i in 0..5u8 {
        f.extend_from_slice(format!("-> big-stanza {i}\n").as_bytes());
        let body = b64.encode(vec![i; 48 << 10]);
        for line in body.as_bytes().chunks(64) {
            f.extend_from_slice(line);
            f.push(b'\n');
        }
        if body.len() % 64 == 0 {
            f.push(b'\n');
        }
    }
    f.extend_from_slice(format!("--- {}\n", b64.encode([0u8; 32])).as_bytes());
    f.extend_from_slice(&[0u8; 16 + 40]);
    fs::write(path, f).unwrap();
}

struct Run {
    status: Option<i32>,
    stderr: Vec<u8>,
    took: Duration,
}

/// Runs hyperseal under the memory cap and the deadline (`timeout -s KILL`: a hang shows as a
/// kill, not as a stuck test).
fn run(dir: &Path, args: &[&str], memory: u64) -> Run {
    run_for(dir, args, memory, TIMEOUT)
}

/// As [`run`], with a plugin timeout of `timeout` seconds (killed [`DEADLINE`] after it).
fn run_for(dir: &Path, args: &[&str], memory: u64, timeout: u64) -> Run {
    let kill = (timeout + DEADLINE.as_secs()).to_string();
    let started = Instant::now();
    let o = Command::new("timeout")
        .args(["-s", "KILL", &kill, "prlimit", &format!("--as={memory}"), "--", HS])
        .args(args)
        .env("PATH", format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default()))
        .env("HYPERSEAL_PLUGIN_TIMEOUT", timeout.to_string())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Run { status: o.status.code(), stderr: o.stderr, took: started.elapsed() }
}

fn args_for(case: &Case, input: &Path, out: &Path) -> Vec<String> {
    let (i, o) = (input.display().to_string(), out.display().to_string());
    if case.decrypt {
        vec!["decrypt".into(), "-j".into(), case.name.into(), "-o".into(), o, i]
    } else {
        vec![
            "encrypt".into(),
            "--format".into(),
            "age".into(),
            "-j".into(),
            case.name.into(),
            "-o".into(),
            o,
            i,
        ]
    }
}

fn has(program: &str) -> bool {
    Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success())
}

#[test]
fn hostile_plugins_end_in_one_clear_error() {
    assert!(has("prlimit") && has("timeout"), "util-linux prlimit and coreutils timeout are needed");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (plain, file) = (d.join("plain"), d.join("big-stanzas.age"));
    fs::write(&plain, b"hello").unwrap();
    big_stanza_file(&file);
    let mut failures = Vec::new();
    for case in cases() {
        write_plugin(d, &case);
        let out = d.join(format!("out-{}", case.name));
        let args = args_for(&case, if case.decrypt { &file } else { &plain }, &out);
        let r = run_for(d, &args.iter().map(String::as_str).collect::<Vec<_>>(), MEMORY, case.timeout);
        let err = String::from_utf8_lossy(&r.stderr).into_owned();
        let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("hyperseal: error:")).collect();
        let checks = [
            (r.status == Some(1), "exit status 1"),
            (errors.len() == 1, "one error line"),
            (
                errors.first().is_some_and(|l| l.contains(&format!("age-plugin-{}", case.name))),
                "names the plugin",
            ),
            (errors.first().is_some_and(|l| l.contains(case.says)), "says why"),
            // A counted case is not timed: its deadline is there only to end a hang.
            (case.timeout == COUNTED || r.took < ENDED, "within the plugin's timeout"),
            (!out.exists(), "nothing at -o"),
            (!r.stderr.contains(&0x1b), "no raw ESC on stderr"),
        ];
        for (ok, what) in checks {
            if !ok {
                failures.push(format!(
                    "{}: {what}: status {:?} in {:?}, stderr {err:?}",
                    case.name, r.status, r.took
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The cap is not what fails the runs above: a well-behaved plugin's run passes under it.
#[test]
fn the_memory_cap_admits_a_normal_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Answers one recipient stanza and done, as a real plugin does.
    write_plugin(
        d,
        &Case {
            name: "good",
            script: "PHASE1; printf -- '-> recipient-stanza 0 good-stanza\\nAAAA\\n'; IFS= read -r _; IFS= read -r _\n\
                     printf -- '-> done\\n\\n'; IFS= read -r _; IFS= read -r _",
            decrypt: false,
            says: "",
            timeout: TIMEOUT,
        },
    );
    let (plain, out) = (d.join("plain"), d.join("out.age"));
    fs::write(&plain, vec![7u8; 1 << 20]).unwrap();
    let args =
        ["encrypt", "--format", "age", "-j", "good", "-o", out.to_str().unwrap(), plain.to_str().unwrap()];
    let r = run(d, &args, MEMORY);
    assert_eq!(r.status, Some(0), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(fs::read(&out).unwrap().starts_with(b"age-encryption.org/v1\n-> good-stanza\nAAAA\n"));
}

/// Whether process `pid` runs (has a `/proc` entry and is not a zombie waiting to be reaped).
fn alive(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
}

/// A plugin whose programs leave its process group (`setsid`) and keep its stdout and stderr
/// open: one stays its child, one is orphaned at once (its parent, a subshell, exits), as a
/// daemon does. hyperseal keeps the deadline (it does not wait for the pipes they hold, open
/// for a minute) and none of them outlives it: the child is found by its parent chain, the
/// orphan because hyperseal adopts its descendants' orphans (Linux's child subreaper).
#[test]
fn plugin_descendants_that_leave_its_group_do_not_survive() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pids = d.join("pids");
    fs::create_dir(&pids).unwrap();
    let p = pids.display();
    let script = format!(
        "setsid sh -c 'echo $$ > {p}/child; exec sleep 60' &\n\
         (setsid sh -c 'echo $$ > {p}/orphan; exec sleep 60' &)\n\
         while [ ! -s {p}/child ] || [ ! -s {p}/orphan ]; do sleep 0.01; done\n\
         exec sleep 60"
    );
    let (r, out) = encrypt_through(d, "escape", &script);
    let err = String::from_utf8_lossy(&r.stderr);
    let found: Vec<i32> = ["child", "orphan"]
        .iter()
        .filter_map(|n| fs::read_to_string(pids.join(n)).ok()?.trim().parse().ok())
        .collect();
    let survivors: Vec<i32> = found.iter().copied().filter(|&pid| alive(pid)).collect();
    for &pid in &survivors {
        // Not to leave them behind after a failure (each was checked alive a moment ago).
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    assert_eq!(found.len(), 2, "both descendants started: {err}");
    assert_eq!(r.status, Some(1), "{err}");
    assert!(err.contains("age-plugin-escape: no answer within 2 s; stopped it"), "{err}");
    assert!(r.took < ENDED, "took {:?}, more than {ENDED:?}", r.took);
    assert!(survivors.is_empty(), "descendants {survivors:?} of {found:?} outlived hyperseal");
    assert!(!out.exists());
}

/// The pids of the processes still running `script` (their command line names it), zombies
/// left out.
/// Installs `script` as the plugin `age-plugin-NAME` in `d`, and runs `encrypt -j NAME` of a
/// small file there under the memory cap: the run, and the output file it was asked to write.
fn encrypt_through(d: &Path, name: &str, script: &str) -> (Run, std::path::PathBuf) {
    let exe = d.join(format!("age-plugin-{name}"));
    fs::write(&exe, format!("#!/bin/sh\n{script}\n")).unwrap();
    fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).unwrap();
    let (plain, out) = (d.join("plain"), d.join("out"));
    fs::write(&plain, b"hello").unwrap();
    let args =
        ["encrypt", "--format", "age", "-j", name, "-o", out.to_str().unwrap(), plain.to_str().unwrap()];
    (run(d, &args, MEMORY), out)
}

fn running(script: &Path) -> Vec<i32> {
    let needle = script.as_os_str().as_encoded_bytes();
    let Ok(dir) = fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| alive(pid))
        .filter(|pid| {
            fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.windows(needle.len()).any(|w| w == needle))
        })
        .collect()
}

/// A plugin whose descendant is a fork-and-exit chain: each link leaves its session
/// (`setsid`), starts the next and exits at once, so at any moment the chain is one short-lived
/// process that no `/proc` scan need catch alive (an outside review saw it escape the
/// freeze-and-kill rounds in 3 of 6 runs). A link that finds the file `exited`, which this test
/// makes once hyperseal has ended, writes the marker and ends the chain: the marker proves an
/// escape. None may appear within 3 s, and no link may still run.
#[test]
fn a_fork_and_exit_chain_does_not_outlive_hyperseal() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (link, exited, marker) = (d.join("link"), d.join("exited"), d.join("marker"));
    // The chain also ends once the directory is gone (the next link's script cannot be read),
    // so a failed run leaves nothing running for long.
    fs::write(
        &link,
        format!(
            "if [ -e {e} ]; then echo $$ > {m}; exit 0; fi\nsetsid sh {l} &\nexit 0\n",
            e = exited.display(),
            m = marker.display(),
            l = link.display()
        ),
    )
    .unwrap();
    let (r, out) = encrypt_through(d, "chain", &format!("setsid sh {} &\nexec sleep 60", link.display()));
    fs::write(&exited, b"").unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let (escaped, left) = (marker.exists(), running(&link));
    // A link that escaped reads `exited` and ends the chain; removing the directory ends any
    // other (its next link cannot start).
    drop(dir);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status, Some(1), "{err}");
    assert!(err.contains("age-plugin-chain: no answer within 2 s; stopped it"), "{err}");
    assert!(r.took < ENDED, "took {:?}", r.took);
    assert!(!escaped, "a link of the chain outlived hyperseal and wrote the marker ({err})");
    assert!(left.is_empty(), "links {left:?} still run");
    assert!(!out.exists());
}
