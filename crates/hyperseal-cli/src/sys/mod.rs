//! The command line's OS seam: the terminal (prompts with echo off), standard input's
//! metadata, SIGPIPE and private key files, for Unix and for Windows. Everything else that
//! differs between the systems is in the library's own seam.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

// The identity agent's own calls (peer credentials, no dumps, locked memory, signals, a
// Windows pipe) are the library's: `hyperseal::agent::os`.

// A descriptor named by number (`--file-key-fd`).
pub mod fd;

// Zeroing what a key passed through in the agent process (its allocator and stacks).
pub mod wipe;
