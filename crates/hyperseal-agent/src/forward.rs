//! The agent on a remote host, over `ssh -R`: a socket of its own for each remote host named
//! (`hyperseal agent forward NAME`), so the agent knows where a request comes from, and the
//! rules that bound what a forward can do.
//!
//! A forwarded decryption agent is more dangerous than a forwarded ssh-agent: whoever reaches
//! its socket on the remote host (root there, or anyone who takes over the user's session)
//! gets file keys, which stay valid forever, not one session's signatures. So:
//! * forwarding is off by default: a request on a forward socket sees only the keys added with
//!   `--forward NAME` (or `--forward '*'`); every other key acts as absent;
//! * each forwarded unwrap is confirmed on this host (an askpass program, ssh-askpass's
//!   conventions: exit 0 means yes) unless the grant says `--no-confirm`; no askpass, no unwrap;
//! * the main socket is never served to a forward: a connection on it whose peer is a relay
//!   (`ssh`, `sshd`, `sshd-session`) is a hand-made `ssh -R` or `ssh -L` of it, treated as from
//!   an unknown host (only `*` grants);
//! * a forward socket goes when the ssh process that used it ends (its pid, learned at the first
//!   connection whose peer is a relay, is watched) or on `hyperseal agent forward --close NAME`;
//!   one never used (its login never decrypted) goes when a new one needs its place.
//!
//! What a forward may do is `origin.rs`; here it is done in that order ([`unwrap_forwarded`]).
//! Windows has no forward sockets (no `ssh -R` of a named pipe): [`Forwards`] there opens
//! none, and says why.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyperseal::format::Stanza;
use hyperseal::FileKey;

use super::keys::Key;
use super::origin::{not_granted, UNKNOWN_HOST};
use super::relay::{ConnRelay, Relay};

#[cfg(windows)]
pub use none::{serve, Forwards};
#[cfg(unix)]
pub use sockets::{serve, Forwards};

/// How long the askpass program may take to be answered before the request is refused.
pub const CONFIRM_TIME: Duration = Duration::from_secs(60);

/// One file's answer to a forward, with the key (its index among those tried) that gave it.
type FileAnswer = Option<(Option<usize>, Result<FileKey, String>)>;

/// The answers to a forward's UNWRAP from `host`: each key granted to it tried in turn on the
/// files still open, keys in the agent's memory first (a file they open costs no plugin run
/// and no confirmation of a plugin key). A plugin key that confirms is confirmed before its
/// plugin runs, for the files still open; a key in memory after it opened files, before any
/// answer leaves. `work_until`: when the work must stop (the rest is `not_tried`).
pub fn unwrap_forwarded(
    askpass: Option<&std::path::Path>,
    host: &str,
    files: &[Vec<Stanza>],
    keys: Vec<Arc<Key>>,
    relay: Option<&Arc<ConnRelay>>,
    work_until: impl Fn() -> Instant,
    not_tried: &str,
) -> Vec<Option<Result<FileKey, String>>> {
    let (mut keys, plugins): (Vec<_>, Vec<_>) =
        keys.into_iter().filter(|k| k.granted_to(host)).partition(|k| !k.is_plugin());
    keys.extend(plugins);
    let mut answers: Vec<FileAnswer> = files.iter().map(|_| None).collect();
    // The first refusal of a plugin key: what the files no key opened are answered.
    let mut refused = None;
    let confirm = |k: &Key, files: usize| {
        if let Some(relay) = relay {
            relay.tell(format!(
                "hyperseal agent: waiting for the use of {} to be confirmed on the agent's host",
                k.fingerprint()
            ));
        }
        let verdict = confirm(askpass, host, &k.describe(), k.fingerprint(), files);
        if let Some(relay) = relay {
            relay.restart();
        }
        verdict
    };
    let as_relay = || relay.map(|r| r.clone() as Arc<dyn Relay>);
    for (i, k) in keys.iter().enumerate() {
        let open: Vec<usize> = (0..files.len()).filter(|&n| answers[n].is_none()).collect();
        if open.is_empty() {
            break;
        }
        if k.is_plugin() && k.confirms() {
            if let Err(why) = confirm(k, open.len()) {
                refused.get_or_insert(why);
                continue;
            }
        }
        let window: Vec<Vec<Stanza>> = match k.is_plugin() {
            true => open.iter().map(|&n| files[n].clone()).collect(),
            false => Vec::new(),
        };
        if let Some(each) = k.unwrap_window(&window, as_relay()) {
            for (&n, a) in open.iter().zip(each) {
                answers[n] = a.map(|r| (Some(i), r.map_err(|e| e.to_string())));
            }
        } else {
            for &n in &open {
                if Instant::now() >= work_until() {
                    answers[n] = Some((None, Err(not_tried.to_string())));
                    continue;
                }
                answers[n] = k.unwrap(&files[n], as_relay()).map(|r| (Some(i), r.map_err(|e| e.to_string())));
            }
        }
        let mine = |a: &FileAnswer| matches!(a, Some((Some(j), Ok(_))) if *j == i);
        let opened = answers.iter().filter(|a| mine(a)).count();
        if !k.is_plugin() && k.confirms() && opened > 0 {
            if let Err(why) = confirm(k, opened) {
                for a in answers.iter_mut().filter(|a| mine(a)) {
                    *a = Some((Some(i), Err(why.clone())));
                }
            }
        }
    }
    let unopened = answers.iter().filter(|a| a.is_none()).count();
    let answers: Vec<_> = answers
        .into_iter()
        .map(|a| match a {
            Some((_, r)) => Some(r),
            None => refused.clone().map(Err),
        })
        .collect();
    if let (Some(relay), 1.., None) = (relay, unopened, &refused) {
        relay.tell(not_granted(host, unopened));
    }
    answers
}

/// Asks the user on this host, through the askpass program, whether `host` may open `files`
/// files with the key `described` (its fingerprint and file, shown on this host only). `Err`:
/// why not (declined, no askpass, no answer in time), for the forward: naming the key by
/// fingerprint, never by a path of this host.
pub fn confirm(
    askpass: Option<&Path>,
    host: &str,
    described: &str,
    key: &str,
    files: usize,
) -> Result<(), String> {
    let Some(program) = askpass else {
        return Err(format!(
            "refused: a forwarded use of {key} is confirmed on the agent's host, and it has no askpass program \
             (start the agent with HYPERSEAL_ASKPASS or SSH_ASKPASS set, or add the key with --no-confirm)"
        ));
    };
    let from = match host {
        UNKNOWN_HOST => "a host reached through ssh (-R or -L) of the agent's main socket".to_string(),
        host => host.to_string(),
    };
    let message = format!("hyperseal agent: allow {from} to open {files} file(s) with {described}?");
    let mut child = Command::new(program)
        .arg(&message)
        .env("SSH_ASKPASS_PROMPT", "confirm")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("refused: the agent's host cannot run its askpass program ({})", e.kind()))?;
    let until = Instant::now() + CONFIRM_TIME;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(_)) => {
                return Err(format!("refused on the agent's host: the use of {key} was not confirmed"))
            }
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "refused: no one confirmed the use of {key} on the agent's host in time"
                ));
            }
        }
    }
}

/// The sockets of remote hosts (Unix).
#[cfg(unix)]
mod sockets {
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};

    use hyperseal::agent::conn::{Conn, Listener};

    use super::super::origin::{is_relay, valid_host, Origin};
    use crate::process as sys;

    /// The most forward sockets open at once (each holds a thread waiting for connections).
    const MAX_FORWARDS: usize = 64;

    /// Until `forward` is closed, hands each connection of this user's to `start`, as coming from
    /// its host (the first one's process that is ssh's, `ssh` or `sshd`, is watched).
    pub fn serve(forward: &Forward, mut listener: Listener, start: impl Fn(Conn, Origin)) {
        while !forward.closed() {
            let Ok(conn) = listener.accept() else { continue };
            if forward.closed() {
                break;
            }
            if !conn.peer_is_same_user() {
                continue;
            }
            forward.seen(conn.peer_pid());
            start(conn, Origin::Remote(forward.host.clone()));
        }
    }

    /// One forward socket.
    pub struct Forward {
        pub host: String,
        pub path: PathBuf,
        closed: AtomicBool,
        /// The ssh process (`ssh`, `sshd` or `sshd-session`) that connects through it, once one has.
        ssh: Mutex<Option<u32>>,
        /// Whether any connection came through it.
        used: AtomicBool,
    }

    impl Forward {
        pub fn path(&self) -> &Path {
            &self.path
        }

        pub fn closed(&self) -> bool {
            self.closed.load(Ordering::SeqCst)
        }

        /// Notes the peer of a connection: the first ssh process to connect (`ssh -R` from here,
        /// or the session's `sshd` for `ssh -L` from the remote host) is the one whose end ends
        /// the forward. Another peer (a relay of the user's own, or a local process using the
        /// socket directly) is not watched: its end says nothing about the forward.
        pub fn seen(&self, pid: Option<u32>) {
            self.used.store(true, Ordering::SeqCst);
            let mut ssh = self.ssh.lock().unwrap_or_else(|p| p.into_inner());
            if ssh.is_none() {
                *ssh = pid.filter(|&p| is_relay(p) == Some(true));
            }
        }

        /// Closes it: marks it, wakes its accepting thread (which sees the mark and ends) and
        /// removes the socket.
        fn shut(&self) {
            if self.closed.swap(true, Ordering::SeqCst) {
                return;
            }
            let _ = std::os::unix::net::UnixStream::connect(&self.path);
            let _ = std::fs::remove_file(&self.path);
        }
    }

    /// The open forwards.
    #[derive(Default)]
    pub struct Forwards {
        list: Mutex<Vec<Arc<Forward>>>,
    }

    impl Forwards {
        fn list(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Forward>>> {
            self.list.lock().unwrap_or_else(|p| p.into_inner())
        }

        /// A new socket for `host` in `dir` (the main socket's directory, already checked), its
        /// name made unique by the time, so an old path never reaches a new forward.
        pub fn open(&self, dir: &Path, host: &str) -> Result<(Arc<Forward>, Listener), String> {
            if !valid_host(host) {
                return Err(format!("{host:?} is not a host name (1 to 64 of A-Z a-z 0-9 . _ -)"));
            }
            // A forward learns its ssh only when the remote side first uses it: one never used
            // may belong to a login that ended without decrypting. The oldest such one makes room.
            {
                let mut list = self.list();
                if list.len() >= MAX_FORWARDS {
                    if let Some(at) = list.iter().position(|f| !f.used.load(Ordering::SeqCst)) {
                        list.remove(at).shut();
                    }
                }
                if list.len() >= MAX_FORWARDS {
                    return Err(format!(
                    "{MAX_FORWARDS} forwards are open and in use: close some (hyperseal agent forward --close NAME)"
                ));
                }
            }
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            let path = dir.join(format!("forward-{host}-{:x}.sock", now.as_nanos()));
            let listener =
                Listener::bind(&path).map_err(|e| format!("cannot listen at {}: {e}", path.display()))?;
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
                .map_err(|e| e.to_string())?;
            let forward = Arc::new(Forward {
                host: host.to_string(),
                path,
                closed: AtomicBool::new(false),
                ssh: Mutex::new(None),
                used: AtomicBool::new(false),
            });
            self.list().push(forward.clone());
            Ok((forward, listener))
        }

        /// Closes every forward of `host`; how many.
        pub fn close(&self, host: &str) -> Result<usize, String> {
            let mut list = self.list();
            let before = list.len();
            list.retain(|f| match f.host == host {
                true => {
                    f.shut();
                    false
                }
                false => true,
            });
            Ok(before - list.len())
        }

        /// Closes the forwards whose `ssh` has ended.
        pub fn reap(&self) {
            self.list().retain(|f| {
                let ssh = *f.ssh.lock().unwrap_or_else(|p| p.into_inner());
                match ssh {
                    Some(pid) if !sys::alive(pid) => {
                        f.shut();
                        false
                    }
                    _ => !f.closed(),
                }
            });
        }

        /// Closes them all (the agent ends).
        pub fn close_all(&self) {
            self.list().drain(..).for_each(|f| f.shut());
        }
    }
}

/// No forwards on Windows: a forward is an `ssh -R` of a Unix socket.
#[cfg(windows)]
mod none {
    use std::path::Path;

    use hyperseal::agent::conn::{Conn, Listener};

    use super::super::origin::Origin;

    const NOT_HERE: &str = "forwarding to a remote host is over ssh -R of a Unix socket: not on Windows";

    /// A forward socket, of which Windows has none.
    pub enum Forward {}

    impl Forward {
        pub fn path(&self) -> &Path {
            match *self {}
        }
    }

    /// Accepts nothing: no forward is ever open.
    pub fn serve(forward: &Forward, _: Listener, _: impl Fn(Conn, Origin)) {
        match *forward {}
    }

    #[derive(Default)]
    pub struct Forwards;

    impl Forwards {
        pub fn open(&self, _: &Path, _: &str) -> Result<(std::sync::Arc<Forward>, Listener), String> {
            Err(NOT_HERE.into())
        }

        pub fn close(&self, _: &str) -> Result<usize, String> {
            Err(NOT_HERE.into())
        }

        pub fn reap(&self) {}

        pub fn close_all(&self) {}
    }
}
