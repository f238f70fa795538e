//! `hyperseal backup serve`: a repository folder served on standard input and output, to be
//! run by ssh as a forced command; and the client side, an `ssh://` repository, whose ssh
//! command line comes from the environment here (the library reads none).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use hyperseal_backup::{ServeOptions, SshStore};

use crate::errors::{hint, usage};

/// One request's deadline, as an S3 request's: a pack's upload on a slow link fits in it.
const TIMEOUT: Duration = Duration::from_secs(300);

#[derive(Args)]
pub struct ServeArgs {
    /// Take only what a writer does: new objects in data/, index/, snapshots/ and runs/,
    /// reads of the clear id lists, listings. Deletes, re-keys and every other read and put
    /// are refused, whatever the client asks.
    #[arg(long)]
    append_only: bool,
    /// Refuse a put that would bring the repository folder past SIZE bytes (64K, 10G, 1T).
    #[arg(long, value_name = "SIZE", value_parser = parse_quota)]
    quota: Option<u64>,
    /// The repository folder.
    path: PathBuf,
}

/// A size with an optional binary suffix (K, M, G, T; KiB… and KB… read the same).
fn parse_quota(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim().to_ascii_uppercase();
    let t = t.trim_end_matches("IB").trim_end_matches('B');
    let (num, shift) = match t.chars().last() {
        Some('K') => (&t[..t.len() - 1], 10),
        Some('M') => (&t[..t.len() - 1], 20),
        Some('G') => (&t[..t.len() - 1], 30),
        Some('T') => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or_else(|| format!("invalid size {s:?} (examples: 500M, 10G, 2T)"))
}

pub(super) fn serve(a: ServeArgs) -> Result<()> {
    let opts = ServeOptions { append_only: a.append_only, quota: a.quota };
    let (mut input, mut output) = (std::io::stdin().lock(), std::io::stdout().lock());
    hyperseal_backup::serve(&a.path, &mut input, &mut output, &opts).map_err(|e| {
        hint(
            format!("backup serve {}: {e}", a.path.display()),
            "the client is not a hyperseal backup of this version, or sent more than the protocol allows",
        )
    })
}

/// The store for `url` (`ssh://[user@]host[:port]/path`): `HYPERSEAL_BACKUP_SSH` is the ssh
/// program and its options, split on spaces (default `ssh`).
pub(super) fn store(url: &str) -> Result<SshStore> {
    let ssh = std::env::var("HYPERSEAL_BACKUP_SSH").ok().filter(|v| !v.trim().is_empty());
    let ssh: Vec<String> = ssh.as_deref().unwrap_or("ssh").split_whitespace().map(String::from).collect();
    let cmd = hyperseal_backup::ssh_command(url, &ssh).ok_or_else(|| {
        usage(format!("{url}: not an ssh repository"), "write ssh://[USER@]HOST[:PORT]/PATH")
    })?;
    SshStore::spawn(&cmd, url, TIMEOUT).map_err(|e| {
        hint(
            e,
            "check that `ssh HOST` logs in without a prompt, and that the server runs \
             `hyperseal backup serve` (its authorized_keys forced command)",
        )
    })
}
