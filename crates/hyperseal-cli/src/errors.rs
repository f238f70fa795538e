//! How failures reach the user: one line `hyperseal: error: …`, at most one
//! `hyperseal: hint: …`, and an exit status that tells usage errors (2) from failures (1).
//!
//! Every line goes through [`redact`] on its way out, so a secret key typed where a file name
//! belongs is never echoed back (not even its first characters).

use std::borrow::Cow;
use std::process::ExitCode;

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// Exit status of a bad command line (clap's and ours alike).
pub const USAGE: u8 = 2;
/// Exit status when a reader downstream went away: what a shell reports for coreutils killed by
/// SIGPIPE (128 + 13). Only reached if SIGPIPE is blocked; otherwise the signal itself ends us.
pub const BROKEN_PIPE: u8 = 141;

/// A failure whose messages were already printed (per-file errors of `hash`, `mac`): exit 1
/// with nothing more to say.
#[derive(Debug)]
pub struct Reported;

impl std::fmt::Display for Reported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("reported")
    }
}

impl std::error::Error for Reported {}

/// Prints an error and returns the exit status.
pub fn report(e: &anyhow::Error) -> u8 {
    if e.is::<Reported>() {
        return 1;
    }
    if is_broken_pipe(e) {
        return BROKEN_PIPE;
    }
    eprintln!("hyperseal: error: {}", message(e));
    let hinted = e.downcast_ref::<Hinted>();
    let hint = match hinted {
        Some(h) => Some(h.hint.clone()),
        None => e
            .downcast_ref::<hyperseal::Error>()
            .and_then(crate::cmd::library_hint)
            .or_else(|| is_out_of_memory(e).then_some(OUT_OF_MEMORY_HINT))
            .map(str::to_string),
    };
    if let Some(h) = hint {
        eprintln!("hyperseal: hint: {}", redact(&h));
    }
    if hinted.is_some_and(|h| h.usage) {
        USAGE
    } else {
        1
    }
}

/// The one-line message of an error: its context chain joined with `: ` (so "cannot open X"
/// carries the OS cause), without Rust's "(os error N)" suffix, redacted.
pub fn message(e: &anyhow::Error) -> String {
    // A cause already spelled out by the error above it (the output writer names its OS reason
    // itself) is not repeated.
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        let text = strip_os_error(text.lines().next().unwrap_or(""));
        if !line.contains(text.as_str()) {
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(&text);
        }
    }
    redact(&line).into_owned()
}

pub fn strip_os_error(s: &str) -> String {
    let mut out = s.to_string();
    while let Some(at) = out.find(" (os error ") {
        let Some(len) = out[at..].find(')') else { break };
        out.replace_range(at..at + len + 1, "");
    }
    out
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        let io = c.downcast_ref::<std::io::Error>().or(match c.downcast_ref::<hyperseal::Error>() {
            Some(hyperseal::Error::Io(io)) => Some(io),
            _ => None,
        });
        io.is_some_and(crate::sys::is_closed_pipe)
    })
}

/// The hint for memory an input asked for and the process could not get (an scrypt work factor
/// the file chose, within age's cap).
const OUT_OF_MEMORY_HINT: &str =
    "the input asks for more memory than this process may use (ulimit -v, a container's limit); it may be hostile";

fn is_out_of_memory(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        let io = c.downcast_ref::<std::io::Error>().or(match c.downcast_ref::<hyperseal::Error>() {
            Some(hyperseal::Error::Io(io)) => Some(io),
            _ => None,
        });
        io.is_some_and(|io| io.kind() == std::io::ErrorKind::OutOfMemory)
    })
}

/// Prefixes of secret keys as they are written: identity lines and token keys.
const SECRET_MARKERS: [&str; 3] = ["AGE-SECRET-KEY-", "HS-MLKEM1024-SECRET-KEY-", "HYPERSEAL-TOKEN-KEY-"];

/// Replaces anything that looks like a secret key (a marker followed by at least six key
/// characters) with `<secret key>`. The bare markers stay: hints name them ("AGE-SECRET-KEY-…").
pub fn redact(line: &str) -> Cow<'_, str> {
    let upper = line.to_ascii_uppercase();
    let mut hits: Vec<(usize, usize)> = Vec::new();
    for marker in SECRET_MARKERS {
        let mut from = 0;
        while let Some(pos) = upper[from..].find(marker) {
            let start = from + pos;
            let tail = line[start + marker.len()..]
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_')
                .count();
            let end = start + marker.len() + tail;
            if tail >= 6 {
                hits.push((start, end));
            }
            from = end.max(start + 1);
        }
    }
    if hits.is_empty() {
        return Cow::Borrowed(line);
    }
    hits.sort_unstable();
    let mut out = String::with_capacity(line.len());
    let mut at = 0;
    for (start, end) in hits {
        if start >= at {
            out.push_str(&line[at..start]);
            out.push_str("<secret key>");
            at = end;
        } else {
            at = at.max(end);
        }
    }
    out.push_str(&line[at..]);
    Cow::Owned(out)
}

/// clap's errors in our shape: one `hyperseal: error:` line, one hint, exit status 2.
/// `--help` and `--version` print as clap prints them (stdout, status 0).
pub fn clap_error(e: clap::Error) -> ExitCode {
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    let text = e.render().to_string();
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("invalid command line");
    let mut msg = first.strip_prefix("error: ").unwrap_or(first).to_string();
    let rest: Vec<&str> = lines.collect();
    // A stray word is most often a value put where none was expected; it could be a passphrase
    // (`encrypt f -p hunter2`), so it is not repeated.
    let stray = e.kind() == ErrorKind::UnknownArgument
        && matches!(e.get(ContextKind::InvalidArg), Some(ContextValue::String(a)) if !a.starts_with('-'));
    if stray {
        msg = "unexpected extra argument (not repeated here, in case it is a secret)".into();
    }
    // clap names the missing arguments on the lines below its first: say them on the one line.
    if e.kind() == ErrorKind::MissingRequiredArgument {
        if let Some(ContextValue::Strings(missing)) = e.get(ContextKind::InvalidArg) {
            msg = format!("missing {}", missing.join(", "));
        }
    }
    let hint = rest
        .iter()
        .find_map(|l| l.strip_prefix("tip: "))
        .filter(|_| !stray)
        .map(str::to_string)
        .or_else(|| {
            rest.iter()
                .find_map(|l| l.strip_prefix("[possible values: ")?.strip_suffix(']'))
                .map(|v| format!("possible values: {v}"))
        })
        .or_else(|| {
            let usage = rest.iter().find_map(|l| l.strip_prefix("Usage: "))?;
            let words: Vec<&str> = usage.split(' ').take_while(|w| !w.starts_with(['[', '<', '-'])).collect();
            Some(format!("see '{} --help'", words.join(" ")))
        });
    eprintln!("hyperseal: error: {}", redact(&msg));
    if let Some(h) = hint {
        eprintln!("hyperseal: hint: {}", redact(&h));
    }
    ExitCode::from(USAGE)
}

/// An error with a hint line, for errors where the next step is not obvious. `usage` marks a
/// bad command line (exit status 2, as for clap's own errors).
#[derive(Debug)]
pub struct Hinted {
    pub(crate) msg: String,
    pub(crate) hint: String,
    pub(crate) usage: bool,
}

impl std::fmt::Display for Hinted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for Hinted {}

/// Attaches a hint to an error message.
pub fn hint(err: impl std::fmt::Display, hint: impl std::fmt::Display) -> anyhow::Error {
    anyhow::Error::new(Hinted { msg: err.to_string(), hint: hint.to_string(), usage: false })
}

/// A usage error found after parsing (options that exclude each other by value): exit status 2.
pub fn usage(err: impl std::fmt::Display, hint: impl std::fmt::Display) -> anyhow::Error {
    anyhow::Error::new(Hinted { msg: err.to_string(), hint: hint.to_string(), usage: true })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_secret_keys_but_not_their_names() {
        let key = "AGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGP";
        assert_eq!(redact(&format!("cannot open {key}: gone")), "cannot open <secret key>: gone");
        assert_eq!(redact(&format!("x {}", key.to_lowercase())), "x <secret key>");
        assert_eq!(redact("HYPERSEAL-TOKEN-KEY-1abc_-xyz9"), "<secret key>");
        for kept in ["holds AGE-SECRET-KEY-… lines", "expected AGE-SECRET-KEY-1…", "AGE-SECRET-KEY-PQ-1…"]
        {
            assert_eq!(redact(kept), kept);
        }
    }

    #[test]
    fn os_error_suffix_goes() {
        assert_eq!(
            strip_os_error("cannot open x: No such file or directory (os error 2)"),
            "cannot open x: No such file or directory"
        );
    }
}
