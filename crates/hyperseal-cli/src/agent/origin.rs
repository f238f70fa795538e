//! Where a request comes from and what it may do. A process of this host on the main socket is
//! local and may do everything; a forward (a remote host's socket, or the main socket carried
//! by `ssh -R`, or a peer the kernel cannot name) may only list and open files, with the keys
//! granted to its host, and under these rules:
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
use std::sync::Arc;
#[cfg(unix)]
use std::time::Instant;

#[cfg(unix)]
use crate::sys::process as sys;
#[cfg(unix)]
use hyperseal::format::Stanza;
#[cfg(unix)]
use hyperseal::FileKey;

#[cfg(unix)]
use super::keys::Key;
#[cfg(unix)]
use super::pin::ConnRelay;

/// Where a connection came from.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(windows, allow(dead_code))]
pub enum Origin {
    /// A process of this host on the main socket.
    Local,
    /// A forward socket for this remote host, or the main socket with `ssh` (or a peer that
    /// cannot be named) at its other end ([`UNKNOWN_HOST`]).
    Forward(String),
}

/// The host of a forward from the main socket: a hand-made `ssh -R` of it, from a host no one
/// named, or a peer whose program cannot be named. Only `*` grants reach it.
pub const UNKNOWN_HOST: &str = "?";

/// A remote host's name as grants and forward sockets' names carry it: 1 to 64 of
/// `A-Z a-z 0-9 . _ -`, not starting with a dot.
pub fn valid_host(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// What the kernel says the process `pid` is: `Some(true)` for `ssh` (by its program's file
/// name, " (deleted)" after an upgrade or not, or by its command name), `Some(false)` for
/// another program, `None` where neither name can be read.
#[cfg(unix)]
pub fn is_ssh(pid: u32) -> Option<bool> {
    let names = [sys::program_name(pid), sys::command_name(pid)];
    if names.iter().flatten().any(|n| n == "ssh") {
        return Some(true);
    }
    names.iter().any(Option::is_some).then_some(false)
}

/// The origin of a connection on the main socket. Its peer is local only when the kernel
/// names a program that is not `ssh`: `ssh` is someone's `ssh -R` of the main socket, and a
/// peer that cannot be named (another pid namespace, a process gone already) is not trusted
/// with the agent's management or its ungranted keys. Where the system names no peer at all,
/// every peer is local.
#[cfg(unix)]
pub fn origin_of_main(peer_pid: Option<u32>) -> Origin {
    if !sys::NAMES_PEERS {
        return Origin::Local;
    }
    match peer_pid.and_then(is_ssh) {
        Some(false) => Origin::Local,
        _ => Origin::Forward(UNKNOWN_HOST.to_string()),
    }
}

/// The grant that would reach a forward from `host`, as `--forward` takes it.
#[cfg_attr(windows, allow(dead_code))]
fn grant_for(host: &str) -> String {
    match host {
        UNKNOWN_HOST => "'*'".to_string(),
        host => host.to_string(),
    }
}

/// What a forward from `host` is told when `files` of its files were opened by none of the
/// keys granted to it. No other key was tried, so it says nothing of them: only how a key
/// would be granted.
#[cfg_attr(windows, allow(dead_code))]
pub fn not_granted(host: &str, files: usize) -> String {
    format!(
        "hyperseal agent: {files} file(s) not opened by the keys granted to this forward (the agent's other \
         keys are never tried for it); on the agent's host, `hyperseal agent add --forward {} FILE` grants one",
        grant_for(host)
    )
}

/// One file's answer to a forward, with the key (its index among those tried) that gave it.
#[cfg(unix)]
type FileAnswer = Option<(Option<usize>, Result<FileKey, String>)>;

/// The answers to a forward's UNWRAP from `host`: each key granted to it tried in turn on the
/// files still open, keys in the agent's memory first (a file they open costs no plugin run
/// and no confirmation of a plugin key). A plugin key that confirms is confirmed before its
/// plugin runs, for the files still open; a key in memory after it opened files, before any
/// answer leaves. `work_until`: when the work must stop (the rest is `not_tried`).
#[cfg(unix)]
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
        let verdict = super::forward::confirm(askpass, host, &k.describe(), k.fingerprint(), files);
        if let Some(relay) = relay {
            relay.restart();
        }
        verdict
    };
    let as_relay = || relay.map(|r| r.clone() as Arc<dyn super::pin::Relay>);
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

    #[cfg(unix)]
    #[test]
    fn a_peer_that_cannot_be_named_is_no_local_client() {
        if !sys::NAMES_PEERS {
            return;
        }
        assert_eq!(origin_of_main(Some(std::process::id())), Origin::Local);
        assert_eq!(origin_of_main(None), Origin::Forward(UNKNOWN_HOST.into()));
        // No such process (pids stop well below this).
        assert_eq!(origin_of_main(Some(u32::MAX - 1)), Origin::Forward(UNKNOWN_HOST.into()));
    }
}
