//! A repository behind `hyperseal backup serve` (`ssh://[user@]host[:port]/path`): the system
//! `ssh` run as a child with piped standard input and output, and [`Store`] spoken over it in
//! the frames of `serve/wire.rs`.
//!
//! The peer may hang (a dead link, a stopped server), so no call waits on it unbounded: one
//! thread writes frames to the child and one reads them, and a call waits for its answer on a
//! channel with a deadline. A connection that missed one is out of step and is not used again:
//! every later call fails with the same error, naming the repository.

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use hyperseal::recipient::Identity;
use hyperseal::rekey::{Change, Report, Written};

use crate::error::{Error, Result};
use crate::serve::wire::{self, Msg, Parse};
use crate::store::{check_name, ObjectInfo, Ranged, ReadSeek, Store};

/// A ranged reader fetches at least this much at once (the decrypting reader's batch).
const READ_AHEAD: usize = 1 << 20;
/// How much of the child's standard error is kept for a message (its last lines).
const STDERR_KEPT: usize = 2048;
/// Most objects a listing takes from the server (the server's own bound, and the S3 store's):
/// a server that sends more is not believed.
const MAX_LIST: usize = 1 << 22;

/// A store served by `hyperseal backup serve` over a child process's pipes (or any stream).
pub struct SshStore {
    conn: Arc<Conn>,
}

struct Conn {
    /// The repository as the user named it, for every message.
    name: String,
    timeout: Duration,
    append_only: bool,
    state: Mutex<State>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

struct State {
    tx: Option<SyncSender<Vec<u8>>>,
    rx: Receiver<io::Result<Vec<u8>>>,
    /// Why the connection can no longer be used.
    broken: Option<(io::ErrorKind, String)>,
    child: Option<Child>,
}

/// The command that reaches `url` (`ssh://[user@]host[:port]/path`): `ssh` (program and
/// options, given) then `[-p PORT] [USER@]HOST hyperseal backup serve 'PATH'`. A forced
/// command on the server replaces the remote part. `None` if `url` is not one.
pub fn ssh_command(url: &str, ssh: &[String]) -> Option<Vec<String>> {
    let rest = url.strip_prefix("ssh://")?;
    let (authority, path) = rest.split_at(rest.find('/')?);
    let (user, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let (host, port) = match hostport.strip_prefix('[') {
        Some(v6) => {
            let (h, after) = v6.split_once(']')?;
            (h, after.strip_prefix(':'))
        }
        None => match hostport.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        },
    };
    // A host or user that ssh would read as an option is refused, not passed.
    let odd = |s: &str| {
        s.is_empty() || s.starts_with('-') || s.chars().any(|c| c.is_whitespace() || c.is_control())
    };
    if odd(host) || user.is_some_and(odd) || port.is_some_and(|p| p.parse::<u16>().is_err()) || path.len() < 2
    {
        return None;
    }
    let mut cmd: Vec<String> = ssh.to_vec();
    if let Some(p) = port {
        cmd.extend(["-p".into(), p.into()]);
    }
    cmd.push(match user {
        Some(u) => format!("{u}@{host}"),
        None => host.into(),
    });
    // The remote shell reads this line: the path quoted whole.
    cmd.push(format!("hyperseal backup serve '{}'", path.replace('\'', r"'\''")));
    Some(cmd)
}

impl SshStore {
    /// Runs `command` (program, then arguments) and speaks the protocol on its pipes; `name`
    /// is the repository in messages, `timeout` each request's deadline.
    pub fn spawn(command: &[String], name: &str, timeout: Duration) -> io::Result<SshStore> {
        let (program, args) = command.split_first().ok_or_else(|| io::Error::other("no command"))?;
        let mut child = Command::new(program)
            .args(args.iter().map(OsString::from))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| io::Error::new(e.kind(), format!("{name}: cannot run {program}: {e}")))?;
        let (input, output) = (child.stdout.take().expect("piped"), child.stdin.take().expect("piped"));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        if let Some(mut err) = child.stderr.take() {
            let kept = stderr.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 1024];
                while let Ok(n @ 1..) = err.read(&mut buf) {
                    let mut k = kept.lock().unwrap_or_else(|p| p.into_inner());
                    k.extend_from_slice(&buf[..n]);
                    let over = k.len().saturating_sub(STDERR_KEPT);
                    k.drain(..over);
                }
            });
        }
        SshStore::start(Box::new(input), Box::new(output), name, timeout, Some(child), stderr)
    }

    /// Speaks the protocol on a stream already connected to a server (a test's socket).
    pub fn over(
        input: Box<dyn Read + Send>,
        output: Box<dyn Write + Send>,
        name: &str,
        timeout: Duration,
    ) -> io::Result<SshStore> {
        SshStore::start(input, output, name, timeout, None, Arc::default())
    }

    fn start(
        mut input: Box<dyn Read + Send>,
        mut output: Box<dyn Write + Send>,
        name: &str,
        timeout: Duration,
        child: Option<Child>,
        stderr: Arc<Mutex<Vec<u8>>>,
    ) -> io::Result<SshStore> {
        let (tx, to_write) = mpsc::sync_channel::<Vec<u8>>(1);
        std::thread::spawn(move || {
            crate::sys::block_sigpipe_in_this_thread();
            for f in to_write {
                if output.write_all(&f).and_then(|_| output.flush()).is_err() {
                    break;
                }
            }
        });
        let (answers, rx) = mpsc::sync_channel(2);
        std::thread::spawn(move || loop {
            let f = wire::read_frame(&mut input, wire::MAX_FRAME)
                .and_then(|f| f.ok_or_else(|| io::ErrorKind::UnexpectedEof.into()));
            let end = f.is_err();
            if answers.send(f).is_err() || end {
                break;
            }
        });
        let state = State { tx: Some(tx), rx, broken: None, child };
        let mut conn =
            Conn { name: name.to_string(), timeout, append_only: false, state: Mutex::new(state), stderr };
        let hello = Msg::new(wire::HELLO).bytes(wire::MAGIC).u32(wire::VERSION).0;
        let answer = conn.call(&[hello])?;
        let mut p = Parse(&answer);
        let theirs = p.rest();
        match theirs.strip_prefix(wire::MAGIC).and_then(|r| r.strip_prefix(&wire::VERSION.to_be_bytes()[..]))
        {
            Some([flags]) => conn.append_only = flags & 1 == 1,
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{name}: the server does not speak protocol version {}", wire::VERSION),
                ))
            }
        }
        Ok(SshStore { conn: Arc::new(conn) })
    }

    /// Whether the server refuses all but a writer's requests.
    pub fn append_only(&self) -> bool {
        self.conn.append_only
    }
}

impl Conn {
    /// Sends `frames` and waits for one answer: its body after `OK`, or the error it carries.
    fn call(&self, frames: &[Vec<u8>]) -> io::Result<Vec<u8>> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        self.exchange(&mut st, frames, true)
    }

    fn exchange(&self, st: &mut State, frames: &[Vec<u8>], answer: bool) -> io::Result<Vec<u8>> {
        if let Some((kind, msg)) = &st.broken {
            return Err(io::Error::new(*kind, msg.clone()));
        }
        let deadline = Instant::now() + self.timeout;
        let sent = frames.iter().try_for_each(|f| self.send(st, wire::frame(f), deadline));
        let got = sent.and_then(|_| match answer {
            true => self.receive(st, deadline),
            false => Ok(Vec::new()),
        });
        let body = match got {
            Ok(body) => body,
            Err(e) => {
                st.broken = Some((e.kind(), e.to_string()));
                return Err(e);
            }
        };
        if !answer {
            return Ok(body);
        }
        let mut p = Parse(&body);
        match p.u8() {
            Ok(wire::OK) => Ok(p.rest().to_vec()),
            _ => Err(wire::answer_error(&mut p, &self.name)),
        }
    }

    fn send(&self, st: &mut State, mut frame: Vec<u8>, deadline: Instant) -> io::Result<()> {
        let tx = st.tx.as_ref().expect("kept until drop");
        loop {
            match tx.try_send(frame) {
                Ok(()) => return Ok(()),
                Err(TrySendError::Full(f)) if Instant::now() < deadline => {
                    frame = f;
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(TrySendError::Full(_)) => return Err(self.hung()),
                Err(TrySendError::Disconnected(_)) => return Err(self.ended()),
            }
        }
    }

    fn receive(&self, st: &mut State, deadline: Instant) -> io::Result<Vec<u8>> {
        match st.rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(Ok(f)) => Ok(f),
            Ok(Err(e)) if e.kind() == io::ErrorKind::UnexpectedEof => Err(self.ended()),
            Ok(Err(e)) => Err(io::Error::new(e.kind(), format!("{}: {e}", self.name))),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(self.hung()),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(self.ended()),
        }
    }

    fn hung(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!("{}: the server did not answer within {} s", self.name, self.timeout.as_secs_f32()),
        )
    }

    /// The connection's end, with the last line the child (ssh, or the server through it)
    /// wrote to its standard error: usually the reason.
    fn ended(&self) -> io::Error {
        // The stderr thread may still be reading the child's last words.
        std::thread::sleep(Duration::from_millis(100));
        let err = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        let text = String::from_utf8_lossy(&err);
        let last = text.lines().rev().find(|l| !l.trim().is_empty()).map(str::trim);
        let msg = match last {
            Some(l) => format!("{}: the server ended the connection ({l})", self.name),
            None => format!("{}: the server ended the connection", self.name),
        };
        io::Error::new(io::ErrorKind::ConnectionAborted, msg)
    }

    /// One frame of a listing into `out`; whether more follow. A listing is the server's word:
    /// a name that leaves the folder, or a listing past the bound, is refused.
    fn listed(&self, body: &[u8], folder: &str, out: &mut Vec<ObjectInfo>) -> io::Result<bool> {
        let mut p = Parse(body);
        let more = p.u8()?;
        while !p.0.is_empty() {
            let (n, size, secs, nanos) = (p.str()?, p.u64()?, p.u64()?, p.u32()?);
            let name = format!("{folder}/{n}");
            check_name(&name)?;
            if n.contains('/') || out.len() >= MAX_LIST {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{}: a listing of {folder}/ past the bound or with {n:?}", self.name),
                ));
            }
            let modified = (secs != u64::MAX)
                .then(|| SystemTime::UNIX_EPOCH + Duration::new(secs, nanos.min(999_999_999)));
            out.push(ObjectInfo { name, size, modified });
        }
        Ok(more == 1)
    }

    /// A ranged read: the object's size and the bytes.
    fn get_range(&self, name: &str, offset: u64, len: usize) -> io::Result<(u64, Vec<u8>)> {
        let body = self.call(&[Msg::new(wire::GET).str(name).u64(offset).u32(len as u32).0])?;
        let mut p = Parse(&body);
        let size = p.u64().map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.name)))?;
        Ok((size, p.rest().to_vec()))
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        let st = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
        // The server ends at the end of its input; a child that does not is not waited for.
        st.tx = None;
        if let Some(mut child) = st.child.take() {
            let until = Instant::now() + Duration::from_secs(2);
            while matches!(child.try_wait(), Ok(None)) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Store for SshStore {
    fn put_new(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let c = &self.conn;
        let mut st = c.state.lock().unwrap_or_else(|p| p.into_inner());
        c.exchange(&mut st, &[Msg::new(wire::PUT).str(name).u64(bytes.len() as u64).0], true)?;
        for part in bytes.chunks(wire::MAX_DATA) {
            c.exchange(&mut st, &[Msg::new(wire::DATA).bytes(part).0], false)?;
        }
        c.exchange(&mut st, &[], true).map(|_| ())
    }

    fn get(&self, name: &str, limit: u64) -> io::Result<Vec<u8>> {
        let first = (limit.saturating_add(1)).min(wire::MAX_DATA as u64) as usize;
        let (size, mut out) = self.conn.get_range(name, 0, first)?;
        if size > limit {
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("{name} is over {limit} bytes")));
        }
        while (out.len() as u64) < size {
            let (_, more) = self.conn.get_range(name, out.len() as u64, wire::MAX_DATA)?;
            if more.is_empty() {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("{name} shrank while read"),
                ));
            }
            out.extend_from_slice(&more);
        }
        Ok(out)
    }

    fn open(&self, name: &str) -> io::Result<Box<dyn ReadSeek>> {
        let (size, _) = self.conn.get_range(name, 0, 0)?;
        let (conn, owned) = (self.conn.clone(), name.to_string());
        let fetch = move |at: u64, len: u64| conn.get_range(&owned, at, len as usize).map(|(_, b)| b);
        Ok(Box::new(Ranged::new(name, size, (READ_AHEAD as u64, wire::MAX_DATA as u64), fetch)))
    }

    fn list(&self, folder: &str) -> io::Result<Vec<ObjectInfo>> {
        let c = &self.conn;
        let mut st = c.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = Vec::new();
        let mut body = c.exchange(&mut st, &[Msg::new(wire::LIST).str(folder).0], true)?;
        loop {
            match c.listed(&body, folder.trim_end_matches('/'), &mut out) {
                Ok(false) => return Ok(out),
                Ok(true) => body = c.exchange(&mut st, &[], true)?,
                Err(e) => {
                    // The rest of the listing's frames are unread: out of step from here.
                    st.broken = Some((e.kind(), e.to_string()));
                    return Err(e);
                }
            }
        }
    }

    fn delete(&self, name: &str) -> io::Result<()> {
        self.conn.call(&[Msg::new(wire::DELETE).str(name).0]).map(|_| ())
    }

    /// The header is re-made here from the object's head (the identities never leave this
    /// machine) and sent; the server puts it in front of the old payload, which never crosses
    /// the link. The old header goes with it, and the server refuses if the object changed.
    fn rekey(
        &self,
        name: &str,
        identities: &[Box<dyn Identity>],
        change: &Change,
        dry_run: bool,
    ) -> Result<Report> {
        // A header is far shorter than this (256 post-quantum stanzas are about 400 KiB).
        let (_, head) = self.conn.get_range(name, 0, wire::MAX_DATA / 2)?;
        let (header, old_len, plan) = hyperseal::rekey::rekey_head(&head, identities, change)?;
        if dry_run {
            return Ok(Report { plan, written: Written::Nothing, recovered: None });
        }
        let req =
            Msg::new(wire::REHEAD).str(name).u32(old_len as u32).bytes(&head[..old_len]).bytes(&header).0;
        if req.len() > wire::MAX_FRAME {
            return Err(Error::Io(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {name}'s headers are over the protocol's bound", self.conn.name),
            )));
        }
        let body = self.conn.call(&[req])?;
        let bytes = Parse(&body).u64()?;
        Ok(Report { plan, written: Written::Rewritten { bytes }, recovered: None })
    }
}
