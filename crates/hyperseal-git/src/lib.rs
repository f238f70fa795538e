//! Transparent encryption in git repositories: the filter git runs for every marked path
//! (`filter=hyperseal` in `.gitattributes`), storing plain age v1 files.
//!
//! - [`pktline`]: git's packet framing, every length bounded.
//! - [`pipe`] (Unix): git's pipe read without blocking, so the filter works between requests
//!   and is not asleep when the next one comes.
//! - [`process`]: the long-running filter process (`filter.<driver>.process`), one per git
//!   command.
//! - [`filter`]: the clean and smudge decisions (fail closed, no churn, no deterministic
//!   encryption); `ahead.rs`: the encryptors it prepares while git is busy.
//! - [`checkout`]: many stored blobs opened at once, for a frontend that writes the work tree
//!   itself (one plugin or agent round for all of them, then every core).
//! - [`index`]: git's index file, read for the marked entries and given the stat data of the
//!   files an unlock wrote itself.
//! - [`git`]: git run as a peer, with a deadline on every run and a typed [`GitError`].
//! - [`cat_file`]: the one `git cat-file --batch` client: a blob, sizes, blobs in rounds, and
//!   the filter's stored blobs ([`cat_file::Stored`]).
//! - [`marked`]: the marked paths, which of them changed, checking them out again; the drivers
//!   and recorded identities in the local configuration.
//! - [`worktree`] (Unix): unlock's and clone's own checkout of the marked files, their stat
//!   data recorded in the index under git's lock (`IndexAt`).
//! - [`merge`]: the merge driver's 3-way merge, in memory only.
//! - [`rekey`]: a stored blob re-keyed (header only) or rotated.
//! - [`recipients`]: the nearest `.age-recipients`.
//! - [`spool`]: where a file waits while git is still sending it (ciphertext only).
//! - [`verify`]: whether a stored blob is what the filter would have stored (no key needed).
//!
//! The library runs git, but reads no environment variable and prints nothing: the git program,
//! the folder it runs in and every deadline are the frontend's arguments ([`Git`]), and a
//! failure is a [`GitError`] the frontend words for its users. It starts no thread of its own
//! (git's pipes are served by `poll` on Unix; the next round of blobs is read on the core's
//! executor). The frontend supplies the identities and the parsing of recipients through
//! [`Repo`]. It stands on the core's public API alone (`hyperseal`, its batch unlock,
//! `hyperseal::unlock`, and its output writer), as any other application of the library would.

// `unsafe` only in the pipes' system calls (`sys_pipe.rs`), each block with its reason.
#![deny(unsafe_code)]

mod ahead;
pub mod cat_file;
pub mod checkout;
pub mod filter;
pub mod git;
pub mod index;
pub mod marked;
pub mod merge;
#[cfg(unix)]
pub mod pipe;
pub mod pktline;
pub mod process;
pub mod recipients;
pub mod rekey;
pub mod spool;
#[cfg(unix)]
mod sys_pipe;
pub mod verify;
#[cfg(unix)]
pub mod worktree;

pub use checkout::{smudge_blob, unlock_blobs};
pub use filter::{Filter, FilterOutcome, Repo, AGE_INTRO};
pub use git::{Git, GitError};
#[cfg(unix)]
pub use pipe::GitPipe;
pub use process::{serve, Blocking, Input};
pub use spool::Spool;
