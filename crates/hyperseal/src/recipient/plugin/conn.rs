//! One running plugin, treated as an untrusted peer: the process, and the age-stanza IPC over
//! its stdin/stdout (C2SP age-plugin.md, "IPC protocol").
//!
//! - **One deadline for the exchange.** The plugin has the caller's timeout in all: every wait
//!   for a message from it and every wait for it to read what we wrote draws on that budget
//!   (the time the user takes to answer its requests, spent in [`Callbacks`], does not). A plugin
//!   that is silent, never reads its input, or trickles messages is stopped when it runs out.
//! - **Writes cannot block us.** A writer thread owns its stdin; `send` waits for that thread
//!   within the deadline, so a plugin that never reads a large stanza is stopped, not waited on.
//!   That thread blocks SIGPIPE for itself: a plugin that exits early is an error, never the
//!   death of a host that lets SIGPIPE end it.
//! - **Bounded reads.** A reader thread turns its stdout into stanzas ([`wire::StanzaReader`]:
//!   per-message and per-exchange byte budgets) on a channel of [`limits::PLUGIN_QUEUE`]
//!   messages, so a flooding plugin is paced by its own pipe, not by our memory.
//! - **Killed before waited for, with everything it started.** When the exchange ends (a
//!   timeout, a protocol error, a budget overrun, or its normal end), the plugin's whole process
//!   group (it is started as a group leader) is killed, then reaped: no `wait` on a live plugin.
//!   On Linux, so are its descendants that left the group (`setsid`) ([`super::family`], every
//!   signal through a pidfd). In a program that called [`adopt_orphans`] (the CLI) none can
//!   escape: whatever it started is killed and reaped until a scan finds nothing left, within
//!   what is left of the deadline and at least [`CONTAIN`]; should that time run out first, the
//!   exchange's error says so (one that ended well has no error to say it). Elsewhere it is best
//!   effort: what is still attached to the plugin is frozen and killed, what was orphaned to
//!   init is out of reach. The threads started here are given a moment to end and then left to
//!   end by themselves, so a pipe held open by a process that escaped anyway never delays the
//!   error; the last non-blank line of its stderr (printable, bounded) explains the failure.
//!
//! The process runs in the temporary directory, as age runs it, so it cannot depend on the
//! caller's working directory.
//!
//! [`Callbacks`]: crate::recipient::Callbacks

use std::io::{BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use zeroize::{Zeroize, Zeroizing};

use super::wire::{self, ReadError, StanzaReader};
use crate::format::Stanza;
use crate::{error::Error, limits, sys};

/// How long a plugin that just ended its output (or misbehaved) gets to exit and finish its
/// stderr before it is killed: enough for a crashing program to say why, short enough to
/// add nothing noticeable to a failure.
const GRACE: Duration = Duration::from_millis(100);

/// How long the threads get to end once the plugin and its descendants are dead (their pipes
/// closed, so this is enough); after that they are left to end by themselves.
const THREADS_END: Duration = Duration::from_millis(200);

/// The least time the end of an exchange gets to end what the plugin started (more if more of
/// the exchange's deadline is left): a plugin stopped for running out of time has none left.
const CONTAIN: Duration = Duration::from_secs(1);

pub(super) struct Connection {
    name: String,
    child: Child,
    /// What ends everything the plugin started.
    family: sys::process::Family,
    /// Whether the process group was killed and the child reaped.
    stopped: bool,
    /// Whether something the plugin started was still running when its end gave up.
    loose: bool,
    to_plugin: Option<SyncSender<Zeroizing<Vec<u8>>>>,
    written: Receiver<bool>,
    from_plugin: Receiver<Result<Stanza, ReadError>>,
    stderr: Arc<Mutex<String>>,
    threads: Vec<JoinHandle<()>>,
    timeout: Duration,
    /// What is left of the exchange's deadline.
    left: Duration,
}

impl Connection {
    /// Starts `binary --age-plugin=STATE_MACHINE`; the exchange may take `timeout` of the
    /// plugin's time in all, and send [`limits::PLUGIN_BYTES`].
    pub(super) fn start(
        name: &str,
        binary: &Path,
        state_machine: &str,
        timeout: Duration,
    ) -> Result<Self, Error> {
        Self::start_for(name, binary, state_machine, timeout, limits::PLUGIN_BYTES)
    }

    /// As [`start`](Self::start), the plugin's output budgeted at `budget` bytes (a batch of
    /// many files gets more than one file's exchange).
    pub(super) fn start_for(
        name: &str,
        binary: &Path,
        state_machine: &str,
        timeout: Duration,
        budget: usize,
    ) -> Result<Self, Error> {
        let mut cmd = Command::new(binary);
        cmd.arg(format!("--age-plugin={state_machine}"))
            .current_dir(std::env::temp_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let (mut child, family) = sys::process::spawn(&mut cmd)
            .map_err(|e| Error::Plugin(format!("cannot start age-plugin-{name}: {e}")))?;
        let (stdin, stdout, stderr_pipe) = (
            child.stdin.take().expect("piped"),
            child.stdout.take().expect("piped"),
            child.stderr.take().expect("piped"),
        );

        let (tx, from_plugin) = mpsc::sync_channel(limits::PLUGIN_QUEUE);
        let who = name.to_string();
        let reader = move || {
            let mut r = StanzaReader::with_budget(BufReader::new(stdout), budget, &who);
            loop {
                let s = r.next();
                let end = s.is_err();
                // A full queue blocks here (and the plugin on its pipe) until the exchange
                // reads on; a dropped receiver ends the thread.
                if tx.send(s).is_err() || end {
                    return;
                }
            }
        };
        let (to_plugin, rx) = mpsc::sync_channel::<Zeroizing<Vec<u8>>>(1);
        let (ack, written) = mpsc::channel();
        let stderr = Arc::new(Mutex::new(String::new()));
        let keep = stderr.clone();

        let mut threads = Vec::with_capacity(3);
        let spawned = spawn(&mut threads, reader)
            .and_then(|()| spawn(&mut threads, move || write_all(stdin, rx, ack)))
            .and_then(|()| spawn(&mut threads, move || wire::tail_lines(stderr_pipe, |l| *lock(&keep) = l)));
        if let Err(e) = spawned {
            // Out of threads or memory: the plugin must not outlive the failure.
            sys::process::end_all(&mut child, &family, timeout.max(CONTAIN));
            return Err(Error::Plugin(format!(
                "cannot start age-plugin-{name}: no thread to talk to it: {e}"
            )));
        }

        Ok(Connection {
            name: name.to_string(),
            child,
            family,
            stopped: false,
            loose: false,
            to_plugin: Some(to_plugin),
            written,
            from_plugin,
            stderr,
            threads,
            timeout,
            left: timeout,
        })
    }

    /// An error naming the plugin, with its last stderr line (printable) if it wrote one.
    pub(super) fn error(&self, what: &str) -> Error {
        let what = match self.loose {
            true => format!("{what}; some processes it started were still running at the deadline"),
            false => what.to_string(),
        };
        let said = lock(&self.stderr).clone();
        if said.is_empty() {
            Error::Plugin(format!("age-plugin-{}: {what}", self.name))
        } else {
            Error::Plugin(format!("age-plugin-{}: {what} (it said: {said})", self.name))
        }
    }

    /// Stops the plugin and returns `e`: for the caller's own refusals (a malformed answer, a
    /// cap on stanzas), so the plugin is never left running after the exchange failed.
    pub(super) fn abort(&mut self, e: Error) -> Error {
        self.stop();
        e
    }

    /// Sends one stanza, waiting (within the deadline) until the plugin has read it.
    pub(super) fn send(&mut self, tag: &str, args: &[&str], body: &[u8]) -> Result<(), Error> {
        // Bodies can be file keys or PINs: every copy is wiped.
        let mut s = Stanza::new(tag, args.iter().map(|a| a.to_string()).collect(), body.to_vec());
        let mut buf = Zeroizing::new(Vec::new());
        s.write_to(&mut buf);
        s.body.zeroize();
        let queued = self.to_plugin.as_ref().is_some_and(|w| w.send(buf).is_ok());
        if !queued {
            return Err(self.fail("stopped reading its input"));
        }
        let started = Instant::now();
        let r = self.written.recv_timeout(self.left);
        self.spend(started);
        match r {
            Ok(true) => Ok(()),
            Ok(false) | Err(RecvTimeoutError::Disconnected) => Err(self.fail("stopped reading its input")),
            Err(RecvTimeoutError::Timeout) => {
                self.stop();
                Err(self.error(&format!("did not read its input within {} s; stopped it", self.secs())))
            }
        }
    }

    /// Sends an already-built stanza under a command prefix: `-> PREFIX... TAG ARGS`.
    pub(super) fn send_wrapped(&mut self, prefix: &[&str], s: &Stanza) -> Result<(), Error> {
        let mut args: Vec<&str> = prefix[1..].to_vec();
        args.push(&s.tag);
        args.extend(s.args.iter().map(String::as_str));
        self.send(prefix[0], &args, &s.body)
    }

    /// Sends a grease stanza (random command, arguments and body) two times out of three, as
    /// age does, so that plugins keep ignoring unknown commands.
    pub(super) fn grease(&mut self) -> Result<(), Error> {
        let r: [u8; 8] = crate::recipient::primitives::random()?;
        if r[0].is_multiple_of(3) {
            return Ok(());
        }
        let tag = format!("grease-{}", crate::format::encode_b64(&r[1..5]).replace(['+', '/'], "x"));
        let args: Vec<String> = (0..r[5] % 3).map(|i| (r[6].wrapping_add(i) % 100).to_string()).collect();
        let body = if r[7].is_multiple_of(2) { vec![r[7]; usize::from(r[7] % 100)] } else { Vec::new() };
        self.send(&tag, &args.iter().map(String::as_str).collect::<Vec<_>>(), &body)
    }

    /// The next stanza from the plugin, within what is left of the deadline.
    pub(super) fn recv(&mut self) -> Result<Stanza, Error> {
        let started = Instant::now();
        let r = self.from_plugin.recv_timeout(self.left);
        self.spend(started);
        match r {
            Ok(Ok(s)) => Ok(s),
            Ok(Err(ReadError::Limit(e))) => Err(self.abort(e)),
            Ok(Err(ReadError::Protocol(why))) => Err(self.fail(why)),
            Ok(Err(ReadError::Closed)) | Err(RecvTimeoutError::Disconnected) => {
                Err(self.fail("closed its output"))
            }
            Err(RecvTimeoutError::Timeout) => {
                self.stop();
                Err(self.error(&format!("no answer within {} s; stopped it", self.secs())))
            }
        }
    }

    /// The plugin answered one more file of a batch: the deadline starts again, so a batch of
    /// many files gets `timeout` per file answered and a plugin that stalls is still stopped
    /// `timeout` after its last answer. Called once per file, so the whole exchange stays
    /// bounded (files + 1 timeouts).
    pub(super) fn progress(&mut self) {
        self.left = self.timeout;
    }

    fn spend(&mut self, started: Instant) {
        self.left = self.left.saturating_sub(started.elapsed());
    }

    fn secs(&self) -> u64 {
        self.timeout.as_secs()
    }

    /// The error for a broken exchange: the plugin gets [`GRACE`] to exit by itself (a crash
    /// explains itself on stderr), then is stopped; its exit status is quoted if it had one.
    fn fail(&mut self, why: &str) -> Error {
        let status = self.exit_within(GRACE);
        self.stop();
        match status {
            Some(s) => self.error(&format!("{why} ({s})")),
            None => self.error(&format!("{why}; stopped it")),
        }
    }

    /// The plugin's exit status if it exits within `grace` (polled: returns as soon as it does).
    fn exit_within(&mut self, grace: Duration) -> Option<std::process::ExitStatus> {
        let until = Instant::now() + grace;
        loop {
            match self.child.try_wait() {
                Ok(Some(s)) => return Some(s),
                Ok(None) if Instant::now() < until => thread::sleep(Duration::from_millis(2)),
                _ => return None,
            }
        }
    }

    /// Kills the plugin with everything it started ([`end_all`]), reaps it, and gives the
    /// threads [`THREADS_END`] to end (once): the pipes are closed by then, so each finishes at
    /// once. Returns whether all of them did (one survives only if a process escaped and still
    /// holds a pipe; it ends when that process closes it, without us waiting for it).
    fn stop(&mut self) -> bool {
        if !self.stopped {
            self.stopped = true;
            self.to_plugin = None;
            self.loose = !sys::process::end_all(&mut self.child, &self.family, self.left.max(CONTAIN));
            let until = Instant::now() + THREADS_END;
            while self.threads.iter().any(|t| !t.is_finished()) && Instant::now() < until {
                thread::sleep(Duration::from_millis(2));
            }
        }
        let (done, running): (Vec<_>, Vec<_>) = self.threads.drain(..).partition(|t| t.is_finished());
        done.into_iter().for_each(|t| drop(t.join()));
        let all = running.is_empty();
        self.threads = running;
        all
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if !self.stopped {
            // Closing stdin is the polite end (age also sends SIGINT); a plugin that does not
            // exit on it is killed, with anything it started.
            self.to_plugin = None;
            let _ = self.exit_within(GRACE);
        }
        self.stop();
    }
}

/// The writer thread: writes each message to the plugin's stdin and acknowledges it. A write
/// that fails (the plugin exited or was killed) ends the thread; the end of the queue closes
/// stdin.
fn write_all(mut stdin: ChildStdin, queue: Receiver<Zeroizing<Vec<u8>>>, ack: mpsc::Sender<bool>) {
    sys::process::ignore_sigpipe_here();
    for buf in queue {
        let ok = stdin.write_all(&buf).and_then(|()| stdin.flush()).is_ok();
        drop(buf);
        if ack.send(ok).is_err() || !ok {
            return;
        }
    }
}

/// Stack of the connection's threads: each holds a few small buffers on the heap and one of
/// 4 KiB on its stack, far from the 2 MiB a thread gets by default.
const STACK: usize = 128 << 10;

/// Starts a connection thread; an error (no thread or no memory for one) instead of a panic.
fn spawn(threads: &mut Vec<JoinHandle<()>>, f: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    threads.push(thread::Builder::new().name("age-plugin".into()).stack_size(STACK).spawn(f)?);
    Ok(())
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
#[path = "conn_tests.rs"]
mod tests;

/// Reads `output` as a plugin's stdout through the exchange's own reader and budgets: the
/// stanzas up to the end, and the error that stopped it (`None` at a clean end). For the fuzzer;
/// always built (hidden, and it only reads bytes it is given), so that the fuzz crate needs no
/// feature of the core and the core the tests build is the one the CLI ships with.
#[doc(hidden)]
pub fn read_plugin_output(output: &[u8]) -> (Vec<Stanza>, Option<Error>) {
    let (mut r, mut got) = (super::wire::StanzaReader::new(output, "fuzz"), Vec::new());
    loop {
        match r.next() {
            Ok(s) => got.push(s),
            Err(super::wire::ReadError::Closed) => return (got, None),
            Err(super::wire::ReadError::Limit(e)) => return (got, Some(e)),
            Err(super::wire::ReadError::Protocol(why)) => return (got, Some(Error::Plugin(why.into()))),
        }
    }
}
