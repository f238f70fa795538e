//! The command line's OS seam: the terminal (prompts with echo off), standard input's
//! metadata, SIGPIPE and private key files, for Unix and for Windows. Everything else that
//! differs between the systems is in the library's own seam.

/// Exit status when a reader downstream went away: what a shell reports for coreutils killed by
/// SIGPIPE (128 + 13). Only reached if SIGPIPE is blocked; otherwise the signal itself ends us.
pub const BROKEN_PIPE: u8 = 141;

/// The OS error without its number: "No such file or directory", not "… (os error 2)".
pub fn reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) if e.raw_os_error().is_some() => s[..i].to_string(),
        _ => s,
    }
}

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

// A descriptor named by number (`--file-key-fd`).
pub mod fd;
