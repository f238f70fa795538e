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
/// Exit status when a reader downstream went away (the OS seam's: its panic hook exits with it).
pub use crate::sys::BROKEN_PIPE;

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
    if let Some((line, hint)) = tpm_error(e) {
        print_error(&line, Some(&redact(&hint)));
        return 1;
    }
    let hinted = e.downcast_ref::<Hinted>();
    let hint = match hinted {
        Some(h) => Some(h.hint.clone()),
        None => e
            .downcast_ref::<hyperseal::Error>()
            .and_then(library_hint)
            .or_else(|| is_out_of_memory(e).then_some(OUT_OF_MEMORY_HINT))
            .map(str::to_string),
    };
    print_error(&message(e), hint.map(|h| redact(&h).into_owned()).as_deref());
    if hinted.is_some_and(|h| h.usage) {
        USAGE
    } else {
        1
    }
}

/// A TPM failure (`hyperseal-tpm` carries its hint inside the library error): the line, with
/// the library's `plugin:` prefix dropped, and the hint.
fn tpm_error(e: &anyhow::Error) -> Option<(String, String)> {
    let (m, h) =
        e.chain().find_map(|c| c.downcast_ref::<hyperseal::Error>().and_then(hyperseal_tpm::split_hint))?;
    let full = message(e);
    let at = full.find(hyperseal_tpm::ERROR_PREFIX).unwrap_or(full.len());
    let before = full[..at].trim_end_matches("plugin: ");
    Some((format!("{before}{m}"), h))
}

/// Writes `hyperseal: error: MESSAGE` and its `hyperseal: hint:` line to stderr in one write, so
/// that a program sharing our stderr (git, around its filter process) cannot cut into them:
/// `eprintln!` writes each piece of its format on its own.
pub fn print_error(message: &str, hint: Option<&str>) {
    use std::io::Write;
    let mut text = format!("hyperseal: error: {message}\n");
    if let Some(h) = hint {
        text.push_str(&format!("hyperseal: hint: {h}\n"));
    }
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
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
    print_error(&redact(&msg), hint.map(|h| redact(&h).into_owned()).as_deref());
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

/// Hints for library errors whose next step is not obvious from the message.
fn library_hint(e: &hyperseal::Error) -> Option<&'static str> {
    use hyperseal::Error;
    Some(match e {
        Error::NoIdentityMatched => {
            "the file was encrypted to other keys: check -i (`hyperseal inspect FILE` lists the recipient kinds)"
        }
        Error::UnknownFormat => "the input is not a hyperseal or age file (or it is damaged at the start)",
        Error::EmptyInput => {
            "the input has no bytes at all: check the file name, or the command that writes to the pipe"
        }
        Error::ChunkAuth(_) | Error::Truncated(_) | Error::HeaderMac => {
            "the file is damaged or was modified; no output file was written"
        }
        Error::WrongKey => "check --key-file and --context; if both are right, the data was modified",
        Error::WrongPassphrase => "check the passphrase (files made with -p need the same passphrase)",
        Error::WorkFactorTooHigh(_) => "the file demands an unreasonable amount of work; it may be hostile",
        Error::IncompatibleRecipients(m) if m.contains("rotate instead") => {
            "keep post-quantum recipients, or rekey --rotate to a fresh file key (the payload is re-encrypted)"
        }
        Error::IncompatibleRecipients(_) => "encrypt separately for post-quantum and classic recipients",
        Error::Rekey { outcome: hyperseal::rekey::Outcome::Pending(_), .. } => {
            "run the same rekey command again: it finishes or undoes the change and says which"
        }
        Error::Rekey { outcome: hyperseal::rekey::Outcome::Changed, .. } => {
            "the new recipients are in force; fix the cause above (a later rekey of the file cleans up)"
        }
        Error::Rekey { source, .. } if source.to_string().contains("changed by another program") => {
            "another program saved the file meanwhile, and its version wins: re-key the new version if that is still wanted"
        }
        Error::Rekey { source, .. } if source.to_string().contains("open in another program") => {
            "close the file in the other program (or re-key to a new file with -o)"
        }
        Error::Rekey { source, .. } if source.to_string().contains("hard links") => {
            "pass --split-links to rewrite it anyway (the other names keep the old recipients), or re-key each name's file with -o"
        }
        Error::Rekey { source, .. } => return library_hint(source),
        Error::InvalidArgument(m) if m.contains("leave out every key this file was opened with") => {
            "add one of your own keys to the list, or pass --remove-own if that is what you mean"
        }
        Error::Limit(m) if m.starts_with(hyperseal::limits::UNWRITABLE) => {
            "encrypt to fewer recipients (each key counts once), or split them across several files (limits: docs/SECURITY.md)"
        }
        Error::Limit(_) => {
            "real files, keys and plugins stay far below this limit; the input is damaged or hostile (limits: docs/SECURITY.md)"
        }
        Error::Plugin(m) if m.contains("not found on PATH") || m.contains("invalid plugin name") => {
            "plugins are programs named age-plugin-NAME, looked up in PATH's absolute directories (never the current one)"
        }
        Error::Agent(m) if m.contains("locked") => "unlock it with `hyperseal agent unlock`",
        // The agent answered, and refused: each refusal says what would change it.
        Error::Agent(m) if m.starts_with("refused on the agent's host") => {
            "the agent's user declined this use on the agent's host; ask them to allow it when it is asked again"
        }
        Error::Agent(m) if m.contains("no askpass program") => {
            "on the agent's host, start the agent with HYPERSEAL_ASKPASS (or SSH_ASKPASS) set, or grant the key with --no-confirm"
        }
        Error::Agent(m) if m.contains("no one confirmed") => {
            "no one answered the confirmation on the agent's host in time: try again while its user is there"
        }
        Error::Agent(m) if m.contains("askpass program") => {
            "the agent's askpass program cannot run on its host: fix HYPERSEAL_ASKPASS there and restart the agent"
        }
        Error::Agent(m) if m.contains("may only open files") => {
            "manage the agent on its own host: a forward only lists and opens files"
        }
        Error::Agent(m) if m.starts_with("not tried") => "ask for fewer files at once",
        Error::Agent(m) if m.contains("forwarded requests at once") => {
            "other forwarded requests are waiting for their confirmation: try again once they are answered"
        }
        Error::Agent(m)
            if m.starts_with("cannot connect to the agent")
                || m.starts_with("the agent at ")
                || m.starts_with("malformed message")
                || m.contains("connection closed") =>
        {
            "the agent named by HYPERSEAL_AGENT_SOCK is gone or stuck: `hyperseal agent list` checks it; start one, or unset the variable to use -i only"
        }
        Error::Agent(_) => "the agent answered and refused, for the reason above",
        _ => return None,
    })
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
