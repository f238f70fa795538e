//! Running `hyperseal` against a hostile peer under a memory cap and a deadline, as the hostile
//! suites do: the address space is capped (`RLIMIT_AS`, what `prlimit --as` sets) so a blow-up
//! fails fast instead of taking the machine, the peak resident memory is read from the kernel
//! (`wait4`'s `ru_maxrss`), and a run past its deadline is killed and reported as such.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Address space a run may reserve: threads' stacks and malloc arenas are reserved, not used,
/// so this is far above the resident budget, and far below what a blow-up reaches in seconds.
pub const ADDRESS_SPACE: u64 = 1 << 30;
/// Resident memory a hostile input may cost (the library's budget is a few MiB).
pub const RSS_BUDGET_KIB: i64 = 64 << 10;

/// How a bounded run ended.
#[derive(Debug)]
pub struct Bounded {
    /// Exit status; `None` if it was killed at the deadline (or by a signal).
    pub status: Option<i32>,
    // Read only through `Debug`, in a failed assertion's message.
    #[allow(dead_code)]
    pub stdout: Vec<u8>,
    pub stderr: String,
    /// Peak resident memory, KiB.
    pub max_rss_kib: i64,
    #[allow(dead_code)]
    pub elapsed: Duration,
}

impl Bounded {
    /// Asserts the run failed cleanly: exit status 1 well before the deadline, one error line
    /// (`hyperseal: error:`, or `age: error:` in age mode) plus at most a hint, with no terminal
    /// escape, within the memory budget. Returns the error line.
    pub fn failed_cleanly(&self) -> String {
        assert_eq!(self.status, Some(1), "{self:?}");
        assert!(self.max_rss_kib <= RSS_BUDGET_KIB, "peak RSS {} KiB: {self:?}", self.max_rss_kib);
        assert!(!self.stderr.contains('\x1b') && !self.stderr.contains('\x07'), "escape on stderr: {self:?}");
        let lines: Vec<&str> = self.stderr.lines().collect();
        let errors = lines
            .iter()
            .filter(|l| l.starts_with("hyperseal: error:") || l.starts_with("age: error:"))
            .count();
        assert_eq!(errors, 1, "{self:?}");
        assert!(lines.len() <= 2, "more than an error and a hint: {self:?}");
        lines[0].to_string()
    }
}

/// Runs `cmd` with `stdin` fed from `input` (which may never end) and kills it at `deadline`.
/// The child is reaped by `wait4` (for its resource usage), not by `Child::wait`.
#[allow(clippy::zombie_processes)]
pub fn run(cmd: &mut Command, input: Option<Box<dyn Read + Send>>, deadline: Duration) -> Bounded {
    cmd.stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() });
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit { rlim_cur: ADDRESS_SPACE, rlim_max: ADDRESS_SPACE };
            match libc::setrlimit(libc::RLIMIT_AS, &lim) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let start = Instant::now();
    let mut child = cmd.spawn().expect("start hyperseal");
    let feeder = child.stdin.take().zip(input).map(|(mut to, mut from)| {
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 << 10];
            while let Ok(n) = from.read(&mut buf) {
                if n == 0 || to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        })
    });
    let collect = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut out = Vec::new();
            let _ = r.by_ref().take(1 << 20).read_to_end(&mut out);
            let _ = std::io::copy(&mut r, &mut std::io::sink());
            out
        })
    };
    let out = collect(Box::new(child.stdout.take().unwrap()));
    let err = collect(Box::new(child.stderr.take().unwrap()));
    let pid = child.id() as libc::pid_t;
    let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
    let mut killed = false;
    loop {
        // SAFETY: plain syscall on our own child, with valid pointers.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break;
        }
        assert!(r == 0, "wait4: {}", std::io::Error::last_os_error());
        if start.elapsed() > deadline && !killed {
            let _ = child.kill();
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let elapsed = start.elapsed();
    if let Some(f) = feeder {
        let _ = f.join();
    }
    let exited = libc::WIFEXITED(status) && !killed;
    Bounded {
        status: exited.then(|| libc::WEXITSTATUS(status)),
        stdout: out.join().unwrap(),
        stderr: String::from_utf8_lossy(&err.join().unwrap()).into_owned(),
        max_rss_kib: usage.ru_maxrss,
        elapsed,
    }
}

/// A reader that yields `head` and then repeats `tail` forever.
pub fn endless(head: &[u8], tail: &[u8]) -> Box<dyn Read + Send> {
    Box::new(std::io::Cursor::new(head.to_vec()).chain(Repeat { tail: tail.to_vec(), at: 0 }))
}

struct Repeat {
    tail: Vec<u8>,
    at: usize,
}

impl Read for Repeat {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            let k = (buf.len() - n).min(self.tail.len() - self.at);
            buf[n..n + k].copy_from_slice(&self.tail[self.at..self.at + k]);
            self.at = (self.at + k) % self.tail.len();
            n += k;
        }
        Ok(n)
    }
}
