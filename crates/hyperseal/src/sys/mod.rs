//! The operating system seam: every call the library makes that differs between Unix and
//! Windows is here, behind one set of names, so the file writer (`output`), the re-key
//! (`rekey::file` and its journal) and the plugin runner read the same on both.
//!
//! What each side does where the systems differ, in one place:
//!
//! | concern | Unix | Windows |
//! |---|---|---|
//! | "the same file" | device and inode | volume serial and file index (`GetFileInformationByHandle`) |
//! | positional I/O | `pread`/`pwrite` | `ReadFile`/`WriteFile` at an offset |
//! | an output's space before it is written | a free-space check (`fstatvfs`) | the file extended to its length (NTFS allocates) |
//! | one output written from many threads | `pwrite` (never a shared mapping: see `stream/positional.rs`) | `WriteFile` at an offset |
//! | new private files | mode 0600 | the directory's inherited ACL (as age's files get there) |
//! | unnamed output | `O_TMPFILE` + `linkat` (Linux) | none: a named `.partial`, marked delete-on-close until it is committed |
//! | cleanup on interrupt | SIGINT/SIGTERM/SIGHUP handler | the delete-on-close mark (Ctrl-C, a closed console, a kill: the system removes it) |
//! | a re-key's write lease | `F_SETLEASE` (Linux) | none: the checks alone |
//! | kept attributes | owner, group, mode, xattrs | the read-only flag |
//! | a plugin's descendants | process group, subreaper, pidfds (Linux) | a Job Object that kills them all when closed |
//! | the agent's transport | a Unix socket, the peer's user and pid from `SO_PEERCRED` (`getpeereid` on the BSDs): `unix/peer.rs` | a named pipe of the user's SID alone, the peer's user from its process token: `windows/pipe.rs` |
//!
//! The agent process's own calls (no dumps, locked memory, its session and signals, naming a
//! peer's program) are not the library's: they are the CLI's `sys/`.
//!
//! Nothing here prints or reads the environment.

// System calls without safe wrappers; each `unsafe` block says why it holds.
#![allow(unsafe_code)]
// Most of the seam (outputs, re-keying in place, leases, attributes) serves the `fs` feature's
// modules: a build without it (in-memory users, the age crate's drop-in) leaves it unused.
#![cfg_attr(not(feature = "fs"), allow(dead_code, unused_imports))]

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(crate) use unix::*;
#[cfg(unix)]
pub use unix::{ignore_file_size_signal, process::adopt_orphans};

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub(crate) use windows::*;
#[cfg(windows)]
pub use windows::{ignore_file_size_signal, process::adopt_orphans};

#[cfg(not(any(unix, windows)))]
mod other;
#[cfg(not(any(unix, windows)))]
pub use other::process::adopt_orphans;
#[cfg(not(any(unix, windows)))]
pub(crate) use other::*;

#[cfg(any(unix, windows))]
mod positional;
#[cfg(any(unix, windows))]
pub use positional::read_exact_at;
#[cfg(all(feature = "fs", any(unix, windows)))]
pub(crate) use positional::{pread_most, pwrite_all};
#[cfg(any(unix, windows))]
pub(crate) use positional::{read_at_most, sync_parent_dir, write_all_at};
