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
//! * the main socket is never served to a forward: a connection on it whose peer is an `ssh`
//!   process is a hand-made `ssh -R` of it, treated as from an unknown host (only `*` grants);
//! * a forward socket goes when the `ssh` that used it ends (its pid, learned at the first
//!   connection whose peer is `ssh`, is watched) or on `hyperseal agent forward --close NAME`;
//!   one never used (its login never decrypted) goes when a new one needs its place.
//!
//! What a forward may do, and in which order, is `origin.rs`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hyperseal::agent::conn::Listener;

use super::origin::{is_ssh, valid_host};
use crate::sys::process as sys;

/// The most forward sockets open at once (each holds a thread waiting for connections).
const MAX_FORWARDS: usize = 64;

/// How long the askpass program may take to be answered before the request is refused.
pub const CONFIRM_TIME: Duration = Duration::from_secs(60);

/// One forward socket.
pub struct Forward {
    pub host: String,
    pub path: PathBuf,
    closed: AtomicBool,
    /// The `ssh` process that connects through it, once it has.
    ssh: Mutex<Option<u32>>,
    /// Whether any connection came through it.
    used: AtomicBool,
}

impl Forward {
    pub fn closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Notes the peer of a connection: the first `ssh` process to connect is the one whose end
    /// ends the forward. Another peer (a relay, or a local process using the socket directly)
    /// is not watched: its end says nothing about the forward.
    pub fn seen(&self, pid: Option<u32>) {
        self.used.store(true, Ordering::SeqCst);
        let mut ssh = self.ssh.lock().unwrap_or_else(|p| p.into_inner());
        if ssh.is_none() {
            *ssh = pid.filter(|&p| is_ssh(p) == Some(true));
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
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(|e| e.to_string())?;
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
    pub fn close(&self, host: &str) -> usize {
        let mut list = self.list();
        let before = list.len();
        list.retain(|f| match f.host == host {
            true => {
                f.shut();
                false
            }
            false => true,
        });
        before - list.len()
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
        super::origin::UNKNOWN_HOST => {
            "a host reached through `ssh -R` of the agent's main socket".to_string()
        }
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
