//! One module per subcommand.

pub mod age;
pub mod age_legacy_pem;
pub mod age_messages;
#[cfg(any(unix, windows))]
pub mod agent;
pub mod c2sp;
pub mod completions;
pub mod decrypt;
pub mod encrypt;
pub mod header;
pub mod identity;
pub mod inspect;
pub mod keys;
pub mod rekey;
mod rekey_common;
mod rekey_sops;
mod rekey_tree;

use hyperseal::{Error, Suite};

/// Hints for library errors whose next step is not obvious from the message.
pub fn library_hint(e: &Error) -> Option<&'static str> {
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

/// Most worker threads `--threads` accepts; larger values are a usage error (exit 2), not
/// silently changed: 256 covers the largest machines, and anything beyond is a typo.
pub const MAX_THREADS: usize = 256;

/// `--threads N` for every subcommand that takes it: 1 to [`MAX_THREADS`], or 0 for all cores.
/// Parsed as text, so no number (`18446744073709551616`, `-1`) can panic or overflow. More
/// threads than cores are not started: they add no speed, and the pipeline keeps chunks in
/// flight for each worker (256 workers held ~310 MiB), so the cores cap keeps every accepted
/// value inside the 64 MiB memory budget.
pub fn parse_threads(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        // 0 = all cores; the library never uses more threads than cores.
        Ok(n) if n <= MAX_THREADS => Ok(n),
        _ => Err(format!("expected 1 to {MAX_THREADS}, or 0 for all cores")),
    }
}

/// `--chunk-size`: a size (see [`parse_size`]) that is a power of two from 16 KiB to 16 MiB.
pub fn parse_chunk_size(s: &str) -> Result<usize, String> {
    const RULE: &str = "expected a power of two from 16K to 16M (e.g. 64K, 1M)";
    let n = parse_size(s).map_err(|_| RULE.to_string())?;
    if n.is_power_of_two() && ((16 << 10)..=(16 << 20)).contains(&n) {
        Ok(n)
    } else {
        Err(RULE.to_string())
    }
}

/// `--suite`.
pub fn parse_suite(s: &str) -> Result<Suite, String> {
    Suite::from_name(s).ok_or_else(|| "expected aes-256-gcm, chacha20-poly1305 or sm4-gcm".to_string())
}

/// Parses a size such as `65536`, `64K`, `64KiB`, `1M`, `16MiB`.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim().to_ascii_uppercase();
    let t = t.trim_end_matches("IB").trim_end_matches('B');
    let (num, mult) = match t.chars().last() {
        Some('K') => (&t[..t.len() - 1], 1usize << 10),
        Some('M') => (&t[..t.len() - 1], 1 << 20),
        Some('G') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("invalid size {s:?} (examples: 65536, 64K, 1M)"))
}
