//! One module per subcommand.

pub mod c2sp;
pub mod decrypt;
pub mod encrypt;
pub mod inspect;
pub mod keys;

use hyperseal::Error;

/// Hints for library errors whose next step is not obvious from the message.
pub fn library_hint(e: &Error) -> Option<&'static str> {
    Some(match e {
        Error::NoIdentityMatched => {
            "the file was encrypted to other keys: check -i (`hyperseal inspect FILE` lists the recipient kinds)"
        }
        Error::UnknownFormat => "the input is not a hyperseal or age file (or it is damaged at the start)",
        Error::ChunkAuth(_) | Error::Truncated(_) | Error::HeaderMac => {
            "the file is damaged or was modified; no output file was written"
        }
        Error::WrongKey => "check --key-file and --context; if both are right, the data was modified",
        Error::WrongPassphrase => "check the passphrase (files made with -p need the same passphrase)",
        Error::WorkFactorTooHigh(_) => "the file demands an unreasonable amount of work; it may be hostile",
        Error::IncompatibleRecipients(_) => "encrypt separately for post-quantum and classic recipients",
        _ => return None,
    })
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
