//! One running plugin: the process, and the age-stanza IPC over its stdin/stdout (C2SP
//! age-plugin.md, "IPC protocol").
//!
//! Every read waits at most the caller's timeout: a reader thread turns the plugin's stdout into
//! stanzas on a channel, so a plugin that hangs is killed and reported instead of hanging
//! hyperseal. Its stderr is kept (the last line) to explain a crash. The process runs in the
//! temporary directory, as age runs it, so it cannot depend on the caller's working directory,
//! and it is killed and reaped when the connection is dropped, on every path.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use zeroize::{Zeroize, Zeroizing};

use crate::format::Stanza;
use crate::Error;

/// A plugin's message may not exceed this (a stanza body is a key, a message or a prompt).
const MAX_STANZA: usize = 1 << 20;

pub(super) struct Connection {
    name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    stanzas: Receiver<Result<Stanza, String>>,
    stderr: Arc<Mutex<String>>,
    timeout: Duration,
}

impl Connection {
    /// Starts `binary --age-plugin=STATE_MACHINE`.
    pub(super) fn start(
        name: &str,
        binary: &Path,
        state_machine: &str,
        timeout: Duration,
    ) -> Result<Self, Error> {
        let mut child = Command::new(binary)
            .arg(format!("--age-plugin={state_machine}"))
            .current_dir(std::env::temp_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::Plugin(format!("cannot start age-plugin-{name}: {e}")))?;
        let stdout = child.stdout.take().expect("piped");
        let stderr_pipe = child.stderr.take().expect("piped");
        let (tx, stanzas) = mpsc::channel();
        thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let s = read_stanza(&mut r);
                let end = !matches!(s, Ok(Some(_)));
                if tx.send(s.and_then(|s| s.ok_or_else(|| "closed its output".to_string()))).is_err() || end {
                    return;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let keep = stderr.clone();
        thread::spawn(move || {
            for line in BufReader::new(stderr_pipe.take(MAX_STANZA as u64)).lines().map_while(Result::ok) {
                if !line.trim().is_empty() {
                    *keep.lock().unwrap() = line.chars().take(200).collect();
                }
            }
        });
        let stdin = child.stdin.take();
        Ok(Connection { name: name.to_string(), child, stdin, stanzas, stderr, timeout })
    }

    /// An error naming the plugin, with its last stderr line if it wrote one.
    pub(super) fn error(&self, what: &str) -> Error {
        let said = self.stderr.lock().unwrap().clone();
        if said.is_empty() {
            Error::Plugin(format!("age-plugin-{}: {what}", self.name))
        } else {
            Error::Plugin(format!("age-plugin-{}: {what} (it said: {said})", self.name))
        }
    }

    /// Sends one stanza.
    pub(super) fn send(&mut self, tag: &str, args: &[&str], body: &[u8]) -> Result<(), Error> {
        // Bodies can be file keys or PINs: every copy is wiped.
        let mut s = Stanza::new(tag, args.iter().map(|a| a.to_string()).collect(), body.to_vec());
        let mut buf = Zeroizing::new(Vec::new());
        s.write_to(&mut buf);
        s.body.zeroize();
        let r = self.stdin.as_mut().map(|w| w.write_all(&buf).and_then(|_| w.flush()));
        match r {
            Some(Ok(())) => Ok(()),
            _ => Err(self.error("stopped reading its input")),
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
        let r: [u8; 8] = super::super::primitives::random()?;
        if r[0].is_multiple_of(3) {
            return Ok(());
        }
        let tag = format!("grease-{}", crate::format::encode_b64(&r[1..5]).replace(['+', '/'], "x"));
        let args: Vec<String> = (0..r[5] % 3).map(|i| (r[6].wrapping_add(i) % 100).to_string()).collect();
        let body = if r[7].is_multiple_of(2) { vec![r[7]; usize::from(r[7] % 100)] } else { Vec::new() };
        self.send(&tag, &args.iter().map(String::as_str).collect::<Vec<_>>(), &body)
    }

    /// The next stanza from the plugin, within the timeout.
    pub(super) fn recv(&mut self) -> Result<Stanza, Error> {
        match self.stanzas.recv_timeout(self.timeout) {
            Ok(Ok(s)) => Ok(s),
            Ok(Err(why)) => {
                // Let a crashing plugin finish writing to stderr before quoting it.
                let _ = self.child.wait();
                thread::sleep(Duration::from_millis(20));
                let status = self.status();
                Err(self.error(&format!("{why} ({status})")))
            }
            Err(RecvTimeoutError::Timeout) => {
                let _ = self.child.kill();
                Err(self.error(&format!("no answer within {} s; stopped it", self.timeout.as_secs())))
            }
            Err(RecvTimeoutError::Disconnected) => Err(self.error("closed its output")),
        }
    }

    fn status(&mut self) -> String {
        match self.child.try_wait() {
            Ok(Some(s)) => s.to_string(),
            _ => "still running".into(),
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // Closing stdin is the polite end (age also sends SIGINT); then make sure it is gone.
        drop(self.stdin.take());
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            thread::sleep(Duration::from_millis(10));
            if !matches!(self.child.try_wait(), Ok(Some(_))) {
                let _ = self.child.kill();
            }
        }
        let _ = self.child.wait();
    }
}

/// Reads one stanza: `-> TAG ARGS` then base64 body lines ending with a short line. `Ok(None)`
/// at a clean end of input.
fn read_stanza(r: &mut impl BufRead) -> Result<Option<Stanza>, String> {
    let mut line = Vec::new();
    let mut total = 0;
    let mut next = |line: &mut Vec<u8>| -> Result<usize, String> {
        line.clear();
        let n = r.by_ref().take(MAX_STANZA as u64).read_until(b'\n', line).map_err(|e| e.to_string())?;
        total += n;
        if total > MAX_STANZA {
            return Err("sent an oversized message".into());
        }
        if n > 0 && line.pop() != Some(b'\n') {
            return Err("sent a truncated line".into());
        }
        Ok(n)
    };
    if next(&mut line)? == 0 {
        return Ok(None);
    }
    let args = line.strip_prefix(b"-> ").ok_or("sent something that is not a stanza")?;
    let (tag, args) = Stanza::parse_args(args).map_err(|_| "sent a malformed stanza line".to_string())?;
    let mut body = Vec::new();
    loop {
        if next(&mut line)? == 0 {
            return Err("ended in the middle of a stanza".into());
        }
        let (b, last) =
            Stanza::parse_body_line(&line).map_err(|_| "sent a malformed stanza body".to_string())?;
        body.extend(b);
        if last {
            return Ok(Some(Stanza { tag, args, body }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> Result<Option<Stanza>, String> {
        read_stanza(&mut &bytes[..])
    }

    #[test]
    fn stanza_reader() {
        let s = read(b"-> file-key 0\nAAECAwQFBgcICQoLDA0ODw\n").unwrap().unwrap();
        assert_eq!(
            (s.tag.as_str(), s.args.as_slice(), s.body.len()),
            ("file-key", &["0".to_string()][..], 16)
        );
        let s = read(b"-> done\n\n").unwrap().unwrap();
        assert!(s.tag == "done" && s.args.is_empty() && s.body.is_empty());
        assert_eq!(read(b"").unwrap(), None, "clean end");
        for (bad, why) in [
            (&b"hello\n"[..], "not a stanza"),
            (b"-> done\n", "ended in the middle"),
            (b"-> done", "truncated"),
            (b"-> ok\nAA=\n", "malformed stanza body"),
            (b"->  two  spaces\n\n", "malformed stanza line"),
        ] {
            let err = read(bad).unwrap_err();
            assert!(err.contains(why), "{bad:?}: {err}");
        }
        let mut huge = b"-> msg\n".to_vec();
        for _ in 0..(MAX_STANZA / 65 + 2) {
            huge.extend_from_slice(&[b'A'; 64]);
            huge.push(b'\n');
        }
        assert!(read(&huge).unwrap_err().contains("oversized"));
    }
}
