//! The agent process: its socket (`socket.rs`; on Windows a named pipe of the user's alone),
//! a thread per connection up to [`limits::AGENT_CONNECTIONS`], kept for the next connection
//! once done and its stack zeroed (`pool.rs`), each connection's peer checked
//! (`SO_PEERCRED`; on Windows the user of the client's process) and held to a deadline, and an
//! end that zeroizes every secret (`stop`, `--idle`, SIGTERM, SIGINT, SIGHUP).
//!
//! A client that sends garbage, a huge length, or one byte a second loses its own connection
//! and nothing else: requests are read under the protocol's limits and the deadline, and the
//! keys are shared with a request as a snapshot, never locked for its length. When every slot
//! is taken, a new connection closes the one that has waited longest for its request to
//! arrive, so connections held open without a request never keep a well-formed client out.

#[cfg(unix)]
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

#[cfg(unix)]
use crate::process as sys;
use hyperseal::agent::conn::{Conn, Listener};
use hyperseal::agent::proto::{self, Answer, Request};
use hyperseal::format::Stanza;
use hyperseal::{limits, FileKey};
use zeroize::Zeroizing;

use super::forward::{self, Forwards};
use super::keys::{AddError, Key};
use super::origin::{origin_of_main, valid_host, Origin};
use super::pool::Pool;
use super::reader::Readers;
use super::relay::{ConnRelay, Relay, ANSWER_TIME, CONNECTION_DEADLINE, NOT_TRIED};
use super::store::Store;
use crate::wipe::scrub_stack;

/// Bytes of request bodies all connections may hold at once: two of the largest messages, so a
/// tree's window is never refused for another's, and a flood of large requests costs this much.
const BODIES: usize = 2 * limits::AGENT_MESSAGE;

/// Gives back a body's reservation when the request is done.
struct Release<'a>(&'a AtomicUsize, usize);

impl Drop for Release<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(self.1, Ordering::SeqCst);
    }
}

/// The most of a request the accepting thread reads before handing it to a thread of its own.
const QUICK_BYTES: usize = 64 << 10;
/// What the accepting thread reads of a request first (more, up to [`QUICK_BYTES`], only if
/// that much has arrived).
const QUICK_FIRST: usize = 4 << 10;
/// Stanzas × keys the accepting thread tries itself (a few milliseconds at most).
const QUICK_WORK: usize = 16;

/// What the accepting thread did with a connection's first bytes.
enum Quick {
    /// Answered (or failed): the connection is done.
    Answered,
    /// Decoded, and left to the connection's thread: the accepting thread's stack held the
    /// request, so it is scrubbed.
    Decoded(Zeroizing<Vec<u8>>),
    /// Not a whole request yet: read into the buffer and nothing more.
    Undecoded(Zeroizing<Vec<u8>>),
}

/// Connections from forwards served at once, of the [`limits::AGENT_CONNECTIONS`]: a forward
/// waits on this host's askpass and on its remote user, and the remote side must never hold
/// every slot and keep local clients (and `hyperseal agent list`) out.
const FORWARD_CONNECTIONS: usize = 8;

/// A connection's slot, and a forward's where it came through one: given back when it is done
/// (or never ran: a thread that could not start), waking the accepting thread if it waits.
struct Slot {
    agent: Arc<Agent>,
    forwarded: bool,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let a = &self.agent;
        if self.forwarded {
            a.forwarded.fetch_sub(1, Ordering::SeqCst);
        }
        a.active.fetch_sub(1, Ordering::SeqCst);
        // Under the lock, so the accepting thread cannot miss it between check and wait.
        drop(a.ended_lock.lock().unwrap_or_else(|p| p.into_inner()));
        a.ended.notify_all();
    }
}

/// The agent's shared state.
struct Agent {
    store: Mutex<Store>,
    /// When the last request came (for `--idle`).
    last: Mutex<Instant>,
    /// Connections being served.
    active: AtomicUsize,
    /// Of them, connections from forwards (at most [`FORWARD_CONNECTIONS`]).
    forwarded: AtomicUsize,
    /// Signalled when a connection is done (with `ended_lock`): the accepting thread waits on
    /// it while every slot is taken, instead of polling.
    ended: Condvar,
    ended_lock: Mutex<()>,
    /// Bytes of request bodies being read or held, by all connections.
    bodies: AtomicUsize,
    /// Connections still reading their request, oldest first (shared, to close it).
    reading: Mutex<std::collections::VecDeque<(u64, Arc<Conn>)>>,
    /// Removed at the end (a Windows pipe goes with its handles); its directory holds the
    /// forward sockets.
    socket: PathBuf,
    /// The sockets of remote hosts (`agent forward`; none on Windows).
    forwards: Forwards,
    /// The program that confirms a forwarded use on this host (HYPERSEAL_ASKPASS, else
    /// SSH_ASKPASS, as the agent was started).
    askpass: Option<PathBuf>,
    /// The next connection's number.
    next_id: AtomicU64,
    /// The connections' threads, kept between connections.
    threads: Arc<Pool>,
}

/// Serves at `listener` until stopped; never returns. `idle`: end after that long without a
/// request.
pub fn serve(mut listener: Listener, socket: PathBuf, idle: Option<Duration>, readers: Readers) -> ! {
    let agent = Arc::new(Agent {
        store: Mutex::new(Store::with_readers(readers)),
        last: Mutex::new(Instant::now()),
        active: AtomicUsize::new(0),
        forwarded: AtomicUsize::new(0),
        ended: Condvar::new(),
        ended_lock: Mutex::new(()),
        reading: Mutex::new(Default::default()),
        bodies: AtomicUsize::new(0),
        socket,
        forwards: Forwards::default(),
        askpass: ["HYPERSEAL_ASKPASS", "SSH_ASKPASS"]
            .iter()
            .find_map(|v| std::env::var_os(v).filter(|p| !p.is_empty()))
            .map(PathBuf::from),
        next_id: AtomicU64::new(0),
        threads: Arc::default(),
    });
    #[cfg(unix)]
    {
        let a = agent.clone();
        spawn(move || {
            sys::wait_end_signal();
            a.end(0)
        });
    }
    let a = agent.clone();
    spawn(move || loop {
        std::thread::sleep(Duration::from_millis(200));
        let now = Instant::now();
        a.store.lock().unwrap_or_else(|p| p.into_inner()).expire(now);
        a.forwards.reap();
        if idle.is_some_and(|d| now.duration_since(*a.last.lock().unwrap_or_else(|p| p.into_inner())) >= d) {
            a.end(0);
        }
    });
    loop {
        let Ok(conn) = listener.accept() else { continue };
        // Another user is refused whatever the socket's mode became.
        if !conn.peer_is_same_user() {
            continue;
        }
        // The main socket is never served to a forward: ssh carrying it by hand (`-R` from
        // here, `-L` from the other host) is a forward from a host no one named.
        let origin = origin_of_main(conn.peer_pid());
        // A small question already in full is answered here, without a thread's start-up.
        let (prefix, decoded) = match origin {
            Origin::Local => match agent.quick(&conn) {
                Quick::Answered => {
                    // The answer is out: the client does not wait for this.
                    drop(conn);
                    scrub_stack();
                    continue;
                }
                Quick::Decoded(prefix) => (prefix, true),
                // Bytes read into a buffer that is zeroized: nothing of them was on this stack.
                Quick::Undecoded(prefix) => (prefix, false),
            },
            Origin::Remote(_) => (Zeroizing::new(Vec::new()), false),
        };
        agent.start_connection(conn, prefix, origin);
        // The request decoded here was on this stack: zeroed while its thread serves it.
        if decoded {
            scrub_stack();
        }
    }
}

/// A thread with a small stack (they are locked in memory with the rest of the process).
fn spawn(f: impl FnOnce() + Send + 'static) {
    let _ = std::thread::Builder::new().stack_size(1 << 20).spawn(f);
}

impl Agent {
    /// Serves `conn` on a thread of its own (a kept one, or a new one), once a slot is free:
    /// when all are taken, the longest-waiting reader is closed and this waits for its
    /// connection to end (or for an answer to go out, where every slot is answering), asleep
    /// until one ends.
    fn start_connection(self: &Arc<Self>, conn: Conn, prefix: Zeroizing<Vec<u8>>, origin: Origin) {
        // A forward past its budget is told so at once (it sent its request or will: the
        // answer waits in the socket), and never waits here for a slot.
        let forwarded = match origin {
            Origin::Local => false,
            Origin::Remote(_) => {
                let taken = self.forwarded.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                    (n < FORWARD_CONNECTIONS).then_some(n + 1)
                });
                if taken.is_err() {
                    let why = format!(
                        "the agent serves {FORWARD_CONNECTIONS} forwarded requests at once, and that many are waiting: try again"
                    );
                    return reply(&conn, Answer::Refused(why), Instant::now() + Duration::from_millis(100));
                }
                true
            }
        };
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        while self.active.load(Ordering::SeqCst) >= limits::AGENT_CONNECTIONS {
            let before = self.active.load(Ordering::SeqCst);
            self.evict_oldest();
            let ended = self.ended_lock.lock().unwrap_or_else(|p| p.into_inner());
            let _ = self.ended.wait_timeout_while(ended, Duration::from_secs(1), |_| {
                self.active.load(Ordering::SeqCst) >= before
            });
        }
        let conn = Arc::new(conn);
        self.reading.lock().unwrap_or_else(|p| p.into_inner()).push_back((id, conn.clone()));
        self.active.fetch_add(1, Ordering::SeqCst);
        let slot = Slot { agent: self.clone(), forwarded };
        let job = Box::new(move || {
            slot.agent.connection(id, conn, prefix, origin);
            // The answer is out and the connection closed: the client does not wait for this.
            // The thread serves the next connection on this stack: no key's copy stays on it.
            scrub_stack();
            drop(slot);
        });
        self.threads.run(job, spawn);
    }

    /// One connection: one request, one answer, within [`CONNECTION_DEADLINE`]. Any failure
    /// (garbage, a limit, the deadline) closes it.
    fn connection(self: &Arc<Self>, id: u64, conn: Arc<Conn>, prefix: Zeroizing<Vec<u8>>, origin: Origin) {
        let deadline = Instant::now() + CONNECTION_DEADLINE;
        let mut timed = io::Read::chain(&prefix[..], conn.until(deadline));
        // Memory for bodies is shared by all connections: one that does not fit is refused.
        let mut reserved = 0;
        let read = proto::read_length(&mut timed).and_then(|len| match self.reserve(len) {
            true => {
                reserved = len;
                proto::read_body(&mut timed, len)
            }
            false => Err(hyperseal::Error::Limit("the agent is busy with other large requests".into())),
        });
        self.reading.lock().unwrap_or_else(|p| p.into_inner()).retain(|(i, _)| *i != id);
        let _release = Release(&self.bodies, reserved);
        let body = match read {
            Ok(body) => body,
            Err(hyperseal::Error::Limit(why)) => return reply(&conn, Answer::Refused(why), deadline),
            Err(_) => return,
        };
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
        let mut stop = false;
        let (answer, relay) = match Request::decode(&body) {
            Ok(request) => {
                stop = matches!(request, Request::Stop) && origin == Origin::Local;
                let relay = Arc::new(ConnRelay {
                    conn: conn.clone(),
                    deadline: Mutex::new(deadline),
                    asking: matches!(request, Request::UnwrapAsking(_)),
                    gone: AtomicBool::new(false),
                    forwarded: origin != Origin::Local,
                });
                (self.answer(request, deadline, Some(relay.clone()), &origin), Some(relay))
            }
            Err(e) => (Answer::Refused(e.to_string()), None),
        };
        drop(body);
        // The answer gets its ANSWER_TIME however late the work ended (a loaded machine): a
        // client that reads gets it, one that does not is cut off that much later. (This
        // connection's own thread: never the accepting one.)
        let by = relay.map_or(deadline, |r| r.deadline()).max(Instant::now() + ANSWER_TIME);
        reply(&conn, answer, by);
        if stop {
            self.end(1);
        }
    }

    /// The answer to `request` from `origin`, due by `deadline` (which `relay`, the request's
    /// connection, moves on after each answer of its user). A forward may only unwrap and list,
    /// with the keys granted to its host.
    fn answer(
        self: &Arc<Self>,
        request: Request,
        deadline: Instant,
        relay: Option<Arc<ConnRelay>>,
        origin: &Origin,
    ) -> Answer {
        if let Some(why) = origin.refusal(&request) {
            return Answer::Refused(why);
        }
        match request {
            Request::Unwrap(files) | Request::UnwrapAsking(files) => {
                self.unwrap(&files, deadline, relay, origin)
            }
            Request::Add { name, bytes, passphrase, lifetime, pin_ttl, forward, confirm } => {
                self.add(&name, &bytes, passphrase, lifetime, pin_ttl, forward, confirm)
            }
            Request::List => self.list(origin),
            Request::Wrap(file_keys) => self.wrap(&file_keys),
            Request::Remove(selector) => done(self.store().remove(&selector).map(|n| n.to_string())),
            Request::Lock(p) => done(lock_with(p, |p| self.store().lock(p))),
            Request::Unlock(p) => done(lock_with(p, |p| self.store().unlock(p))),
            Request::Stop => Answer::Done("stopped".into()),
            Request::Forward { name, close } => self.forward(&name, close),
            Request::Reply(_) => Answer::Refused("a reply to a question that was not asked".into()),
        }
    }

    fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An UNWRAP: its files are tried until [`ANSWER_TIME`] before the deadline, so the answer
    /// goes out in time, and the rest answered [`NOT_TRIED`]. A forward's is `forward.rs`'s.
    fn unwrap(
        &self,
        files: &[Vec<Stanza>],
        deadline: Instant,
        relay: Option<Arc<ConnRelay>>,
        origin: &Origin,
    ) -> Answer {
        let work_until = || {
            let d = relay.as_ref().map_or(deadline, |r| r.deadline());
            d.checked_sub(ANSWER_TIME).unwrap_or(d)
        };
        let keys = match self.store().snapshot() {
            Ok(keys) => keys,
            Err(why) => return Answer::Refused(why),
        };
        let now = Instant::now();
        let keys: Vec<_> = keys.into_iter().filter(|k| !k.expired(now)).collect();
        if let Origin::Remote(host) = origin {
            let askpass = self.askpass.as_deref();
            return Answer::Unwrapped(forward::unwrap_forwarded(
                askpass,
                host,
                files,
                keys,
                relay.as_ref(),
                work_until,
                NOT_TRIED,
            ));
        }
        // A plugin key (and a read one, a TPM key) takes a window in one run of its plugin, as a
        // direct run does. It runs when the first file no earlier key opened reaches it: a
        // request the other keys answer costs no plugin run, no TPM use and no PIN.
        let mut windows: Vec<_> = keys.iter().map(|_| None).collect();
        // Each file's keys are tried only while time is left; a file reached after
        // that is answered NOT_TRIED, never silently "not ours".
        let mut try_file = |n: usize, f: &Vec<Stanza>| {
            for (i, k) in keys.iter().enumerate() {
                if windows[i].is_none() {
                    if Instant::now() >= work_until() {
                        return Some(Err(NOT_TRIED.to_string()));
                    }
                    windows[i] = Some(k.unwrap_window(files, relay.clone().map(|r| r as Arc<dyn Relay>)));
                }
                if let Some(Some(window)) = &mut windows[i] {
                    match window[n].take() {
                        Some(r) => return Some(r.map_err(|e| e.to_string())),
                        None => continue,
                    }
                }
                if Instant::now() >= work_until() {
                    return Some(Err(NOT_TRIED.to_string()));
                }
                let relay = relay.clone().map(|r| r as Arc<dyn Relay>);
                if let Some(r) = k.unwrap(f, relay) {
                    return Some(r.map_err(|e| e.to_string()));
                }
            }
            None
        };
        Answer::Unwrapped(files.iter().enumerate().map(|(n, f)| try_file(n, f)).collect())
    }

    /// An ADD: the key proven and loaded, its grants checked.
    #[allow(clippy::too_many_arguments)]
    fn add(
        &self,
        name: &str,
        bytes: &[u8],
        passphrase: Option<Zeroizing<String>>,
        lifetime: u64,
        pin_ttl: u64,
        forward: Vec<String>,
        confirm: bool,
    ) -> Answer {
        if let Some(bad) = forward.iter().find(|h| *h != "*" && !valid_host(h)) {
            return Answer::Refused(format!(
                "--forward {bad:?}: not a host name (1 to 64 of A-Z a-z 0-9 . _ -, or '*')"
            ));
        }
        let readers = self.store().readers();
        match Key::load(name, bytes, passphrase, lifetime, pin_ttl, &readers) {
            Ok(key) => done(self.store().add(key.with_grants(forward, confirm))),
            Err(AddError::NeedPassphrase(why)) => Answer::NeedPassphrase(why),
            Err(AddError::Refused(why)) => Answer::Refused(why),
        }
    }

    /// A LIST. A forward sees the keys granted to it, named by fingerprint: their files' paths
    /// on this host are not the remote side's to know.
    fn list(&self, origin: &Origin) -> Answer {
        match (self.store().list(), origin) {
            (Answer::Entries(e), Origin::Remote(host)) => Answer::Entries(
                e.into_iter()
                    .filter(|e| e.forward.iter().any(|h| h == "*" || h == host))
                    .map(|e| proto::Entry { name: ON_THIS_HOST.into(), ..e })
                    .collect(),
            ),
            (answer, _) => answer,
        }
    }

    /// A WRAP: each file key wrapped to every plugin key's recipient.
    fn wrap(&self, file_keys: &[FileKey]) -> Answer {
        let keys = match self.store().snapshot() {
            Ok(keys) => keys,
            Err(why) => return Answer::Refused(why),
        };
        let now = Instant::now();
        let plugins: Vec<_> = keys.iter().filter(|k| k.is_plugin() && !k.expired(now)).collect();
        if plugins.is_empty() {
            return Answer::Refused("the agent holds no plugin key".into());
        }
        let mut each = Vec::with_capacity(file_keys.len());
        for fk in file_keys {
            let mut stanzas = Vec::new();
            for k in &plugins {
                match k.wrap(fk) {
                    Some(Ok(s)) => stanzas.extend(s),
                    Some(Err(e)) => {
                        return Answer::Refused(format!("{}: {e}", k.fingerprint()));
                    }
                    None => {}
                }
            }
            each.push(stanzas);
        }
        Answer::Wrapped(each)
    }

    /// Opens a socket for the remote host `host` (its path is the answer) or closes its
    /// sockets.
    fn forward(self: &Arc<Self>, host: &str, close: bool) -> Answer {
        if close {
            return match self.forwards.close(host) {
                Ok(0) => Answer::Refused(format!("no forward for {host} is open")),
                Ok(n) => Answer::Done(format!("closed {n} forward(s) for {host}")),
                Err(why) => Answer::Refused(why),
            };
        }
        let dir = self.socket.parent().unwrap_or(Path::new("."));
        match self.forwards.open(dir, host) {
            Ok((socket, listener)) => {
                let path = socket.path().display().to_string();
                let a = self.clone();
                spawn(move || {
                    forward::serve(&socket, listener, |conn, origin| {
                        a.start_connection(conn, Zeroizing::new(Vec::new()), origin)
                    })
                });
                Answer::Done(path)
            }
            Err(why) => Answer::Refused(why),
        }
    }

    /// Answers an UNWRAP of a few stanzas (the request whole in what has arrived, within
    /// [`QUICK_BYTES`], its work within [`QUICK_WORK`]) on the accepting thread. Otherwise the
    /// bytes read so far, for the connection's own thread to go on from.
    fn quick(self: &Arc<Self>, conn: &Conn) -> Quick {
        // A small first read: the buffer is zeroed when allocated and twice when freed, and a
        // request of one file is a few hundred bytes.
        let mut buf = Zeroizing::new(vec![0u8; QUICK_FIRST]);
        let Ok(mut n) = conn.read_arrived(&mut buf) else { return Quick::Answered };
        if n == buf.len() {
            buf.resize(QUICK_BYTES, 0);
            let Ok(more) = conn.read_arrived(&mut buf[n..]) else { return Quick::Answered };
            n += more;
        }
        buf.truncate(n);
        let whole = n >= 4 && u32::from_be_bytes(buf[..4].try_into().expect("4 bytes")) as usize == n - 4;
        if !whole {
            return Quick::Undecoded(buf);
        }
        // An UNWRAP_ASKING is answered here too while no key could ask anything.
        let Ok(Request::Unwrap(files) | Request::UnwrapAsking(files)) = Request::decode(&buf[4..]) else {
            return Quick::Decoded(buf);
        };
        let keys = self.store.lock().unwrap_or_else(|p| p.into_inner()).snapshot().unwrap_or_default();
        // A plugin key runs a program (and may wait on a card): never on the accepting thread.
        if files.iter().map(Vec::len).sum::<usize>() * keys.len().max(1) > QUICK_WORK
            || keys.iter().any(|k| k.is_plugin())
        {
            return Quick::Decoded(buf);
        }
        drop(keys);
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
        let answer =
            self.answer(Request::Unwrap(files), Instant::now() + CONNECTION_DEADLINE, None, &Origin::Local);
        let _ = proto::write_message(
            &mut conn.until(Instant::now() + Duration::from_millis(100)),
            &answer.encode(),
        );
        Quick::Answered
    }

    /// Reserves `len` bytes of [`BODIES`] for one request's body.
    fn reserve(&self, len: usize) -> bool {
        self.bodies
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
                (used + len <= BODIES).then_some(used + len)
            })
            .is_ok()
    }

    /// Closes the connection that has waited longest for its request (its thread then ends).
    fn evict_oldest(&self) {
        if let Some((_, conn)) = self.reading.lock().unwrap_or_else(|p| p.into_inner()).pop_front() {
            conn.close();
        }
    }

    /// Zeroizes every secret, removes the socket and ends the process. Requests still in
    /// flight get a moment to drop their snapshot of the keys first.
    fn end(&self, own: usize) -> ! {
        self.store.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.forwards.close_all();
        #[cfg(unix)]
        let _ = fs::remove_file(&self.socket);
        let until = Instant::now() + Duration::from_secs(1);
        while self.active.load(Ordering::SeqCst) > own && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        std::process::exit(0)
    }
}

/// What a forward's `list` shows in place of a key's file.
const ON_THIS_HOST: &str = "(a file on the agent's host)";

fn done(r: Result<String, String>) -> Answer {
    r.map_or_else(Answer::Refused, Answer::Done)
}

fn lock_with(
    p: Zeroizing<String>,
    f: impl FnOnce(Zeroizing<String>) -> Result<(), String>,
) -> Result<String, String> {
    if p.is_empty() {
        return Err("the lock passphrase is empty".into());
    }
    f(p).map(|()| String::new())
}

fn reply(conn: &Conn, answer: Answer, deadline: Instant) {
    let deadline = deadline.max(Instant::now() + Duration::from_millis(10));
    let _ = proto::write_message(&mut conn.until(deadline), &answer.encode());
}
