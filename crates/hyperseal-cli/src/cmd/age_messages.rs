//! Every line `hyperseal age` prints on stderr, in age v1.3.1's words, in this one table: the
//! phrases scripts grep for (each checked against the real age by `tests/age_terminal.rs`), the
//! `age: error:` / `age: hint:` / `age: warning:` prefixes, and age's exit statuses (0; 1 for every
//! failure; 2 for a flag that does not parse, as Go's `flag` package). The native `hyperseal`
//! commands keep their own `hyperseal: error: … / hint:` style (`errors.rs`).
//!
//! age ends each error with a line asking to report unhelpful errors to age's tracker; this
//! mode does not (the error is hyperseal's to fix, not age's).

use std::sync::atomic::{AtomicBool, Ordering};

use crate::errors::Hinted;
use crate::errors::{self, redact};

// The errors of age's command line (cmd/age), word for word.
pub const NO_IDENTITY_MATCHED: &str = "no identity matched any of the recipients";
pub const INCORRECT_PASSPHRASE: &str = "incorrect passphrase";
pub const PASSPHRASES_DIFFER: &str = "passphrases didn't match";
pub const NOT_PASSPHRASE_FILE: &str = "the file is not passphrase-encrypted, identities are required";
pub const NOT_PASSPHRASE_FILE_HINT: &str = "specify identities with -i/--identity or -j to decrypt this file";
pub const PASSPHRASE_FILE_WITH_IDENTITIES: &str =
    "file is passphrase-encrypted but identities were specified with -i/--identity or -j";
pub const PASSPHRASE_FILE_WITH_IDENTITIES_HINT: &str =
    "remove all -i/--identity/-j flags to decrypt passphrase-encrypted files";
pub const CHUNK_AUTH: &str =
    "failed to decrypt and authenticate payload chunk, file may be corrupted or tampered with";
pub const BAD_HEADER_MAC: &str = "bad header MAC";
pub const EMPTY_FILE: &str = "failed to read header: parsing age header: file is empty";
/// A protected SSH key's wrong passphrase (age reports Go's x509 error, for every key format).
pub const SSH_KEY_PASSPHRASE: &str = "failed to decrypt SSH key file: x509: decryption password incorrect";
pub const BINARY_TO_TERMINAL: &str = "refusing to output binary to the terminal";
pub const ARMOR_HINT: &str = "did you mean to use -a/--armor?";
pub const FORCE_HINT: &str = "force anyway with \"-o -\"";
pub const STDIN_TWICE: &str = "standard input is used for multiple purposes";
pub const MISSING_RECIPIENTS: &str = "missing recipients";
pub const MISSING_RECIPIENTS_HINT: &str =
    "did you forget to specify -r/--recipient, -R/--recipients-file or -p/--passphrase?";
pub const IDENTITY_IN_ENCRYPT: &str = "-i/--identity and -j can't be used in encryption mode unless symmetric encryption is explicitly selected with -e/--encrypt";
pub const IDENTITY_IN_ENCRYPT_HINT: &str = "did you forget to specify -d/--decrypt?";
pub const PRIVATE_KEY_HINT: &str = "did you mean to use -i/--identity to specify a private key?";
pub const ARMOR_DETECTED_HINT: &str =
    "note that armored files are detected automatically, try again without -a/--armor";
pub const PASSWORD_DETECTED_HINT: &str = "note that password protected files are detected automatically";
pub const INPUT_AFTER_FLAGS_HINT: &str = "the input file must be specified after all flags";
pub const ONE_INPUT_HINT: &str = "only a single input file may be specified at a time";
pub const PLUGINS_LIST_HINT: &str =
    "visit https://age-encryption.org/awesome#plugins for a list of available plugins";
/// The prompts (on the terminal).
pub const PROMPT_ENCRYPT: &str = "Enter passphrase (leave empty to autogenerate a secure one):";
pub const PROMPT_CONFIRM: &str = "Confirm passphrase:";
pub const PROMPT_DECRYPT: &str = "Enter passphrase:";

/// Set once age mode starts: shared code (identity files, plugins' messages) then speaks age's way.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Marks the process as running age mode.
pub fn activate() {
    ACTIVE.store(true, Ordering::Relaxed);
}

/// Whether age mode is running.
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// The prompt for an identity file's passphrase (age's wording).
pub fn prompt_identity_file(name: &str) -> String {
    format!("Enter passphrase for identity file {name:?}:")
}

/// The prompt for a protected SSH key's passphrase (age's wording).
pub fn prompt_ssh_key(name: &str) -> String {
    format!("Enter passphrase for {name:?}:")
}

/// The context age gives a recipients file's error.
pub fn recipients_file(path: &std::path::Path) -> String {
    format!("failed to parse recipient file {:?}", path.display().to_string())
}

/// An error already in age's words, with age's hints (each printed on its own line).
pub fn fail(msg: impl std::fmt::Display, hints: &[&str]) -> anyhow::Error {
    crate::errors::hint(msg, hints.join("\n"))
}

/// An `age: warning:` line.
pub fn warning(msg: &str) {
    eprintln!("age: warning: {}", redact(msg));
}

/// A note from a plugin or a key file, as age's terminal UI prints it (`age: …`); the library's
/// note for a skipped SSH key becomes age's warning for it.
pub fn note(file: &str, msg: &str) {
    let skipped = msg
        .strip_prefix("ignoring an SSH key of unsupported type ")
        .and_then(|rest| rest.split_once(" at line "));
    match skipped {
        Some((kind, line)) => warning(&format!(
            "recipients file {file:?}: ignoring unsupported SSH key of type {kind:?} at line {line}"
        )),
        None => eprintln!("age: {}", redact(msg)),
    }
}

/// age's error for a file whose first line was mangled by PowerShell's redirection (CRLF or
/// UTF-16): `Some` with it when `start` (the first bytes) shows one.
pub fn mangled_intro(start: &[u8]) -> Option<anyhow::Error> {
    const CRLF: &[u8] = b"age-encryption.org/v1\r";
    const UTF16: &[u8] = b"\xff\xfea\x00g\x00e\x00-\x00e\x00n\x00c\x00r\x00y\x00p\x00";
    (start.starts_with(CRLF) || start.starts_with(UTF16)).then(|| {
        fail(
            "invalid header intro",
            &[
                "it looks like this file was corrupted by PowerShell redirection",
                "consider using -o or -a to encrypt files in PowerShell",
            ],
        )
    })
}

/// Prints `e` in age's words and returns age's exit status for it.
pub fn report(e: &anyhow::Error) -> u8 {
    if e.is::<errors::Reported>() {
        return 1;
    }
    let (msg, hints) = words(e);
    if msg.is_empty() {
        // A broken pipe: errors::report knows the status and prints nothing.
        return errors::report(e);
    }
    eprintln!("age: error: {}", redact(&msg));
    for h in hints {
        eprintln!("age: hint: {}", redact(&h));
    }
    1
}

/// A library error's meaning in age's words, with age's hints; `None` keeps the library's text.
fn library_words(e: &hyperseal::Error) -> Option<(String, Vec<String>)> {
    use hyperseal::recipient::{IDENTITY_NOT_RECIPIENT, RECIPIENT_NOT_IDENTITY};
    use hyperseal::Error as E;
    let plain = |m: &str| Some((m.to_string(), Vec::new()));
    match e {
        E::NoIdentityMatched => plain(NO_IDENTITY_MATCHED),
        E::WrongPassphrase => plain(INCORRECT_PASSPHRASE),
        E::WorkFactorTooHigh(detail) => {
            // age names the file's work factor, log2 N ("log2 N = 22, limit 18").
            let n = detail
                .strip_prefix("log2 N = ")
                .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
                .unwrap_or(detail);
            Some((format!("scrypt work factor too large: {n}"), Vec::new()))
        }
        // age says the same of a cut file: its last chunk does not authenticate as the last.
        E::ChunkAuth(_) | E::Truncated(_) => plain(CHUNK_AUTH),
        E::HeaderMac => plain(BAD_HEADER_MAC),
        E::EmptyInput => plain(EMPTY_FILE),
        E::InvalidKey(m) if m.starts_with("incorrect passphrase for SSH key") => plain(SSH_KEY_PASSPHRASE),
        E::InvalidKey(m) if m == hyperseal::recipient::ssh::MISMATCHED_PUBLIC_KEY => plain(m),
        E::MalformedHeader(d) | E::Armor(d) => Some((format!("failed to read header: {d}"), Vec::new())),
        E::InvalidRecipient(m) if m == IDENTITY_NOT_RECIPIENT => {
            plain("apparent identity found in recipients file")
        }
        E::InvalidKey(m) if m == RECIPIENT_NOT_IDENTITY => {
            plain("apparent recipient found in identities file")
        }
        // age quotes the argument; it is not repeated here, in case it is a secret.
        E::InvalidRecipient(m) if m.starts_with("unrecognised recipient") => plain("unknown recipient type"),
        E::InvalidRecipient(m) if m.starts_with("SSH recipient: ") => {
            Some((format!("malformed SSH recipient: {}", &m["SSH recipient: ".len()..]), Vec::new()))
        }
        E::InvalidKey(m)
            if m.contains("unsupported SSH key type") || m.contains("unsupported SSH identity type") =>
        {
            let kind = m.rsplit("type").next().unwrap_or("").trim();
            Some((format!("malformed SSH identity: unsupported SSH identity type: {kind}"), Vec::new()))
        }
        E::Plugin(m) if m.contains("not found on PATH") => {
            let name =
                m.split_whitespace().next().unwrap_or("").trim_start_matches("age-plugin-").to_string();
            Some((
                format!("{name:?} plugin not found: exec: \"age-plugin-{name}\": executable file not found in $PATH"),
                vec![format!("you might want to install the {name:?} plugin"), PLUGINS_LIST_HINT.to_string()],
            ))
        }
        _ => None,
    }
}

/// The message and hints of `e` ("" for a broken pipe, which prints nothing): the context
/// lines as they are (`reading "key.txt"`), then the library's error in age's words.
fn words(e: &anyhow::Error) -> (String, Vec<String>) {
    let broken_pipe = e.chain().any(|c| {
        let io = c.downcast_ref::<std::io::Error>().or(match c.downcast_ref::<hyperseal::Error>() {
            Some(hyperseal::Error::Io(io)) => Some(io),
            _ => None,
        });
        io.is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    });
    if broken_pipe {
        return (String::new(), Vec::new());
    }
    // A hint added as context (anyhow finds it through the context layer).
    let mut hints: Vec<String> = e
        .downcast_ref::<Hinted>()
        .map(|h| h.hint.lines().filter(|l| !l.is_empty()).map(str::to_string).collect())
        .unwrap_or_default();
    let causes: Vec<&(dyn std::error::Error + 'static)> = e.chain().collect();
    let mut parts: Vec<String> = Vec::new();
    for (i, cause) in causes.iter().enumerate() {
        if let Some((text, h)) = cause.downcast_ref::<hyperseal::Error>().and_then(library_words) {
            // The library's meaning replaces any hyperseal hint given for it.
            hints = h;
            parts.push(text);
            break;
        }
        let text = cause.to_string();
        // A layer that only repeats the error under it (a hint attached as context) adds nothing.
        if causes.get(i + 1).is_some_and(|next| next.to_string() == text) {
            continue;
        }
        let line = text.lines().next().unwrap_or("").to_string();
        if !parts.iter().any(|p| p.contains(&line)) {
            parts.push(line);
        }
    }
    (errors::strip_os_error(&parts.join(": ")), hints)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_errors_in_age_words() {
        let w = |e: hyperseal::Error| words(&anyhow::Error::new(e)).0;
        assert_eq!(w(hyperseal::Error::NoIdentityMatched), NO_IDENTITY_MATCHED);
        assert_eq!(w(hyperseal::Error::WrongPassphrase), "incorrect passphrase");
        assert_eq!(w(hyperseal::Error::EmptyInput), EMPTY_FILE);
        assert_eq!(
            w(hyperseal::Error::InvalidKey("incorrect passphrase for SSH key ssh-rsa AbCd".into())),
            SSH_KEY_PASSPHRASE
        );
        assert_eq!(
            w(hyperseal::Error::WorkFactorTooHigh("log2 N = 22, limit 18".into())),
            "scrypt work factor too large: 22"
        );
        let (msg, hints) =
            words(&anyhow::Error::new(hyperseal::Error::Plugin("age-plugin-nope not found on PATH".into())));
        assert!(msg.starts_with("\"nope\" plugin not found"), "{msg}");
        assert_eq!(hints[1], PLUGINS_LIST_HINT);
        // Context around a library error stays, and does not hide its meaning.
        let e = anyhow::Error::new(hyperseal::Error::WrongPassphrase).context("reading \"k\"");
        assert_eq!(words(&e).0, "reading \"k\": incorrect passphrase");
        let (msg, hints) = words(&fail(MISSING_RECIPIENTS, &[MISSING_RECIPIENTS_HINT]));
        assert_eq!((msg.as_str(), hints.len()), (MISSING_RECIPIENTS, 1));
    }
}
