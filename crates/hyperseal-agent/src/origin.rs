//! Where a request comes from and what it may do; `forward.rs` does it in this order, and
//! nothing here imports another room of the agent. A process of this host on the main socket
//! is local and may do everything; a forward (a remote host's socket, or the main socket carried
//! by ssh, `-R` or `-L`, or a peer the kernel cannot name) may only list and open files, with the
//! keys granted to its host, and under these rules:
//! * nothing is done for it with a key before that key's use is confirmed on this host, where
//!   the grant asks for confirmation: a plugin key's plugin is not run (no PIN asked, no try
//!   reaching the card) until the askpass said yes; a key in the agent's own memory may open
//!   the files first, since nothing of that leaves the agent before the yes;
//! * a key not granted to its host is never tried for it: that costs private-key work the
//!   forward's deadline does not bound, and its result would tell the remote side which of its
//!   files this host can open;
//! * a secret typed on the remote side is never cached: the PIN cache serves local clients
//!   with no question, so only a local client's typing may fill it;
//! * nothing sent to it names a path on this host: keys are named by fingerprint (the askpass,
//!   on this host, also shows the file).

#[cfg(unix)]
use crate::process as sys;
use hyperseal::agent::proto::Request;

/// Where a connection came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A process of this host on the main socket.
    Local,
    /// A forward socket for this remote host, or the main socket with a relay ([`RELAYS`]) or a
    /// peer that cannot be named at its other end ([`UNKNOWN_HOST`]). Never on Windows, where
    /// no ssh forward reaches a named pipe; the policy for it is built there all the same.
    #[cfg_attr(windows, allow(dead_code))]
    Remote(String),
}

impl Origin {
    /// Why `request` is refused to this origin, if it is: a remote host may only open files
    /// and list the keys granted to it.
    pub fn refusal(&self, request: &Request) -> Option<String> {
        match self {
            Origin::Remote(host)
                if !matches!(request, Request::Unwrap(_) | Request::UnwrapAsking(_) | Request::List) =>
            {
                Some(format!("a forward from {host} may only open files: run this on the agent's host"))
            }
            _ => None,
        }
    }
}

/// The host of a forward from the main socket: ssh carrying it by hand (`-R` from this host,
/// `-L` from the other), from a host no one named, or a peer whose program cannot be named.
/// Only `*` grants reach it.
pub const UNKNOWN_HOST: &str = "?";

/// A remote host's name as grants and forward sockets' names carry it: 1 to 64 of
/// `A-Z a-z 0-9 . _ -`, not starting with a dot.
pub fn valid_host(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// The programs that carry a connection for another machine, by their file names: OpenSSH's
/// client (`ssh -R` of a socket, run on this host, connects from `ssh`) and its server (`ssh -L`,
/// run on the other host, connects from the session's `sshd`, or from `sshd-session` since
/// OpenSSH 9.8). A relay the user starts by hand under another name (socat) is not among them.
pub const RELAYS: [&str; 3] = ["ssh", "sshd", "sshd-session"];

/// What the kernel appends to a program's file name once that file is replaced or removed (an
/// upgrade of openssh while a session runs): the program is still what it was.
const DELETED: &str = " (deleted)";

/// Whether a program's name, its file's or its command name, is a relay's.
fn is_relay_name(name: &str) -> bool {
    RELAYS.contains(&name.strip_suffix(DELETED).unwrap_or(name))
}

/// The rule over a process's two names, its program's file name and its command name (which the
/// kernel keeps apart from the file, so a replaced binary still has one): `Some(true)` where
/// either is a relay's, `Some(false)` where neither is, `None` where neither could be read.
fn relay_by_names(program: Option<&str>, command: Option<&str>) -> Option<bool> {
    let names = [program, command];
    if names.iter().flatten().any(|n| is_relay_name(n)) {
        return Some(true);
    }
    names.iter().any(Option::is_some).then_some(false)
}

/// What the kernel says the process `pid` is: `Some(true)` for a relay ([`RELAYS`]),
/// `Some(false)` for another program, `None` where neither of its names can be read.
#[cfg(unix)]
pub fn is_relay(pid: u32) -> Option<bool> {
    relay_by_names(sys::program_name(pid).as_deref(), sys::command_name(pid).as_deref())
}

/// The origin of a connection on the main socket. Its peer is local only when the kernel
/// names a program that is not a relay: a relay carries it for another machine (`ssh -R` of
/// the main socket from here, `ssh -L` of it from there), and a peer that cannot be named
/// (another pid namespace, a process gone already) is not trusted with the agent's management
/// or its ungranted keys either. Where the system names no peer at all, every peer is local;
/// on Windows too, where no ssh forward reaches a named pipe.
pub fn origin_of_main(peer_pid: Option<u32>) -> Origin {
    #[cfg(unix)]
    if sys::NAMES_PEERS {
        return match peer_pid.and_then(is_relay) {
            Some(false) => Origin::Local,
            _ => Origin::Remote(UNKNOWN_HOST.to_string()),
        };
    }
    let _ = peer_pid;
    Origin::Local
}

/// The grant that would reach a forward from `host`, as `--forward` takes it.
fn grant_for(host: &str) -> String {
    match host {
        UNKNOWN_HOST => "'*'".to_string(),
        host => host.to_string(),
    }
}

/// What a forward from `host` is told when `files` of its files were opened by none of the
/// keys granted to it. No other key was tried, so it says nothing of them: only how a key
/// would be granted.
pub fn not_granted(host: &str, files: usize) -> String {
    format!(
        "hyperseal agent: {files} file(s) not opened by the keys granted to this forward (the agent's other \
         keys are never tried for it); on the agent's host, `hyperseal agent add --forward {} FILE` grants one",
        grant_for(host)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_are_plain() {
        for ok in ["build1", "ci.example.org", "a_b-c"] {
            assert!(valid_host(ok), "{ok}");
        }
        for bad in ["", ".hidden", "a/b", "*", "?", "x y", "../x", &"h".repeat(65)] {
            assert!(!valid_host(bad), "{bad}");
        }
    }

    #[test]
    fn relays_are_named_by_file_or_command_whatever_their_file_became() {
        let relay = |program, command| relay_by_names(program, command);
        for name in
            ["ssh", "sshd", "sshd-session", "ssh (deleted)", "sshd (deleted)", "sshd-session (deleted)"]
        {
            assert_eq!(relay(Some(name), None), Some(true), "{name}");
            assert_eq!(relay(Some(name), Some("bash")), Some(true), "{name}");
            assert_eq!(relay(None, Some(name)), Some(true), "command name {name}");
        }
        // The command name alone is enough: the file renamed, or unreadable.
        assert_eq!(relay(Some("ssh.dpkg-tmp (deleted)"), Some("ssh")), Some(true));
        assert_eq!(relay(Some("bash"), Some("sshd-session")), Some(true));
        for other in
            ["bash", "ssh-agent", "sshfs", "socat", "ssh-add", "(deleted)", " (deleted)", "xssh", "SSH", ""]
        {
            assert_eq!(relay(Some(other), Some(other)), Some(false), "{other:?}");
        }
        assert_eq!(relay(Some("hyperseal"), None), Some(false));
        assert_eq!(relay(None, None), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_peer_that_cannot_be_named_is_no_local_client() {
        if !sys::NAMES_PEERS {
            return;
        }
        assert_eq!(origin_of_main(Some(std::process::id())), Origin::Local);
        assert_eq!(origin_of_main(None), Origin::Remote(UNKNOWN_HOST.into()));
        // No such process (pids stop well below this).
        assert_eq!(origin_of_main(Some(u32::MAX - 1)), Origin::Remote(UNKNOWN_HOST.into()));
    }
}
