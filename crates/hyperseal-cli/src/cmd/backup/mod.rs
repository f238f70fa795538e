//! `hyperseal backup …`: deduplicated backups a host can write but not read, over the
//! `hyperseal-backup` library. This module holds the command line and what the verbs share
//! (the repository, identities, exit statuses); `write.rs` the writer's verbs, `read.rs` the
//! readers', `admin.rs` the ones that delete or re-key, `s3.rs` an S3 store from the environment.

mod admin;
mod read;
mod repair;
mod s3;
mod serve;
mod write;

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};
use hyperseal::recipient::Identity;
use hyperseal_backup::{Error, LocalStore, Store};

use crate::errors::{hint, usage};

/// Exit statuses scripts can tell apart (restic's where they mean the same).
pub mod exit {
    /// The snapshot was made, but some files could not be read (skipped).
    pub const INCOMPLETE: u8 = 3;
    /// There is no repository at the place given.
    pub const NO_REPOSITORY: u8 = 10;
    /// Another run holds the repository (a prune's lock, or a backup that is running).
    pub const LOCKED: u8 = 11;
}

#[derive(Args)]
pub struct BackupArgs {
    #[command(subcommand)]
    command: Verb,
}

#[derive(Subcommand)]
enum Verb {
    /// Create a repository for readers (-r/-R) and write the writer key (no identity in it).
    Init(write::InitArgs),
    /// Back up files, folders or standard input as a new snapshot (writer key only).
    #[command(alias = "backup")]
    Create(write::CreateArgs),
    /// List the snapshots.
    Snapshots(read::SnapshotsArgs),
    /// List what a snapshot holds.
    Ls(read::LsArgs),
    /// Restore a snapshot beneath a folder (never outside it; never over a file without --overwrite).
    Restore(read::RestoreArgs),
    /// Check that every snapshot can be restored; --read-data opens every pack and chunk.
    Check(read::CheckArgs),
    /// Print an object's plaintext (config, keys/…, index/…, snapshots/…, data/…).
    Cat(read::CatArgs),
    /// Remove snapshots a --keep-* policy does not keep, per host and paths; --prune then frees what nothing uses.
    Forget(admin::ForgetArgs),
    /// Delete packs no snapshot uses (takes the prune lock).
    Prune(admin::PruneArgs),
    /// Remove the prune lock a killed prune left.
    Unlock(admin::UnlockArgs),
    /// Repair after damage: `repair index` rebuilds the indexes from the packs that are there.
    Repair(repair::RepairArgs),
    /// Give every object a new reader set by rewriting headers only (no payload byte).
    ///
    /// Removal is not revocation: a removed reader may have copied the repository or its file
    /// keys already. Give writers the new writer key (--writer-key) too.
    Rekey(admin::RekeyArgs),
    /// Serve a repository folder on standard input and output (an ssh forced command).
    Serve(serve::ServeArgs),
}

/// The repository: `--repo`, or HYPERSEAL_REPO.
#[derive(Args)]
pub(super) struct RepoArg {
    /// The repository: a folder, or s3://BUCKET/PREFIX (credentials, region and endpoint from
    /// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL),
    /// or ssh://[USER@]HOST[:PORT]/PATH (`backup serve` over ssh; HYPERSEAL_BACKUP_SSH: ssh's command).
    /// Default: HYPERSEAL_REPO.
    #[arg(long, value_name = "REPO")]
    repo: Option<String>,
}

/// Identities: `-i`, and the agent.
#[derive(Args)]
pub(super) struct IdentityArgs {
    /// An identity that opens the repository (repeatable). Not needed where HYPERSEAL_AGENT_SOCK
    /// names an agent that holds one.
    #[arg(short = 'i', long = "identity")]
    identities: Vec<PathBuf>,
    /// Passphrase of a passphrase-encrypted identity file, first line of FILE; default: ask.
    #[arg(long = "identity-passphrase-file")]
    identity_passphrase_file: Option<PathBuf>,
}

/// A repository's store, with what the verbs say about it.
pub(super) struct Repo {
    store: Box<dyn Store>,
    /// The `--repo` given, for messages.
    pub(super) name: String,
    local: Option<PathBuf>,
}

impl std::ops::Deref for Repo {
    type Target = dyn Store;
    fn deref(&self) -> &(dyn Store + 'static) {
        self.store.as_ref()
    }
}

impl Repo {
    /// Whether a repository is there, asked as a writer may (it cannot read the config): a
    /// folder with a config, or a prefix with a reader set (written before the config).
    pub(super) fn exists_for_writer(&self) -> Result<bool> {
        Ok(match &self.local {
            Some(root) => root.join("config").is_file(),
            None => !self.store.list("keys/")?.is_empty(),
        })
    }
}

impl RepoArg {
    pub(super) fn store(&self) -> Result<Repo> {
        let repo = match &self.repo {
            Some(r) => r.clone(),
            None => std::env::var("HYPERSEAL_REPO")
                .map_err(|_| usage("no repository given", "give --repo REPO, or set HYPERSEAL_REPO"))?,
        };
        if repo.starts_with("ssh://") {
            return Ok(Repo { store: Box::new(serve::store(&repo)?), name: repo, local: None });
        }
        if repo.starts_with("s3://") {
            let store = Box::new(s3::store(&repo)?);
            return Ok(Repo { store, name: repo, local: None });
        }
        let local = Some(PathBuf::from(&repo));
        Ok(Repo { store: Box::new(LocalStore::new(&repo)), name: repo, local })
    }
}

impl IdentityArgs {
    /// The `-i` identities and the agent's; at least one.
    pub(super) fn load(&self) -> Result<Vec<Box<dyn Identity>>> {
        let mut ids =
            super::identity::load_identities(&self.identities, self.identity_passphrase_file.as_deref())?;
        ids.extend(super::identity::agent_identity());
        if ids.is_empty() {
            return Err(usage(
                "reading a repository needs an identity",
                "give -i IDENTITY, or start the agent (hyperseal agent start) and add one",
            ));
        }
        Ok(ids)
    }
}

pub fn run(a: BackupArgs) -> Result<()> {
    let done = match a.command {
        Verb::Init(a) => write::init(a),
        Verb::Create(a) => write::create(a),
        Verb::Snapshots(a) => read::snapshots(a),
        Verb::Ls(a) => read::ls(a),
        Verb::Restore(a) => read::restore(a),
        Verb::Check(a) => read::check(a),
        Verb::Cat(a) => read::cat(a),
        Verb::Forget(a) => admin::forget(a),
        Verb::Prune(a) => admin::prune(a),
        Verb::Unlock(a) => admin::unlock(a),
        Verb::Repair(a) => repair::repair(a),
        Verb::Rekey(a) => admin::rekey(a),
        Verb::Serve(a) => serve::serve(a),
    };
    done.map_err(explain)
}

/// The library's errors as the CLI says them: a hint where the next step is not obvious, and
/// an exit status of their own for a missing repository and a held lock.
fn explain(e: anyhow::Error) -> anyhow::Error {
    let Some(b) = e.downcast_ref::<Error>() else { return e };
    let (msg, h, status) = match b {
        Error::NotFound(m) if m.contains("no repository") => {
            (m.clone(), "create one with `hyperseal backup init`, or check --repo", Some(exit::NO_REPOSITORY))
        }
        Error::Locked(m) => (
            m.clone(),
            "wait for the other run; a killed prune's lock goes with `hyperseal backup unlock`",
            Some(exit::LOCKED),
        ),
        Error::Refused(m) => (m.clone(), refused_hint(m), None),
        Error::Io(e) if e.kind() == std::io::ErrorKind::PermissionDenied && e.to_string().starts_with("S3") => (
            e.to_string(),
            "these S3 credentials do not allow it (a backed-up host's allow adding objects only, by design)",
            None,
        ),
        Error::Io(e) if e.to_string().contains(": append-only repository: ") => (
            e.to_string(),
            "this server serves writers only (backup serve --append-only): read the folder, or through a plain backup serve",
            None,
        ),
        Error::Crypto(hyperseal::Error::NoIdentityMatched) => (
            "none of the identities opens this repository".into(),
            "give an identity of one of the repository's readers (-i, or the agent); a writer key opens nothing by design",
            None,
        ),
        _ => return e,
    };
    if let Some(status) = status {
        crate::errors::print_error(&msg, Some(h));
        std::process::exit(status as i32);
    }
    hint(msg, h)
}

/// The next step after a refusal: the library refuses in init, backup and restore.
fn refused_hint(msg: &str) -> &'static str {
    if msg.contains("already exists there") {
        "a repository is never replaced: name another --repo, or back up into the one there"
    } else if msg.contains("exclude pattern") {
        "check the --exclude globs (`*`, `?`, `[…]`, `**`)"
    } else if msg.contains("recipient") || msg.contains("keys/") || msg.contains("policy") {
        "nothing was changed"
    } else {
        "nothing outside the target was touched"
    }
}

/// Seconds since the epoch, from this machine's clock (the library reads none).
pub(super) fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}
