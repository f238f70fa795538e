//! The budget of everything an input controls: one list, here, that every reader enforces.
//!
//! A file, a key or a plugin can be hostile. Whatever size or count it claims or sends, a
//! reader stops at these numbers and fails at once with [`Error::Limit`] (code
//! `ERR_HYPERSEAL_LIMIT`), so no input can take more memory than a few MiB or keep a reader
//! waiting for bytes that never end. Each number is far above anything a real peer writes (the
//! largest stanza age or hyperseal writes is an ML-KEM-1024 hybrid: about 2.2 KB of base64) and
//! far below anything that could exhaust a small machine. The payload is not budgeted here: it
//! is streamed in chunks of at most [`MAX_CHUNK`](crate::format::MAX_CHUNK) bytes, in constant
//! memory whatever its length.

use crate::error::Error;

/// Bytes of a file header, from the version line through the MAC line: about 3,700 recipients
/// of the largest kind (an ML-KEM-1024 hybrid stanza is about 2.2 KB), 5,000 of age's
/// `mlkem768x25519`, 11,000 SSH RSA-4096 keys. Writers are held to it too ([`unwritable`]).
pub const HEADER_BYTES: usize = 8 << 20;
/// Bytes of one header line (stanza lines are at most 64 base64 characters of body; argument
/// lines carry a few public keys at most).
pub const HEADER_LINE: usize = 16 << 10;
/// Recipient stanzas in one header (16,384 X25519 stanzas are 1.6 MB). Trying every stanza of a
/// full header with one X25519 identity takes well under a second.
pub const STANZAS: usize = 16384;
/// Decoded bytes of one stanza body.
pub const STANZA_BODY: usize = 64 << 10;
/// Bytes of one armor line with its newline (the format's lines are 64 columns; the slack
/// admits CRLF and the BEGIN and END lines).
pub const ARMOR_LINE: usize = 128;
/// Bytes of an identity or recipients file (thousands of keys).
pub const KEY_FILE: usize = 4 << 20;
/// Bytes of one PEM or OpenSSH key (an RSA-16384 private key in PEM is about 12 KB).
pub const KEY_TEXT: usize = 256 << 10;
/// bcrypt-pbkdf rounds of a passphrase-protected OpenSSH key (`ssh-keygen -a`; its default is
/// 16, and 100 takes about a second): more would keep a reader busy for minutes or hours.
pub const SSH_KDF_ROUNDS: usize = 1024;
/// Bytes of one message (stanza) from an age plugin.
pub const PLUGIN_MESSAGE: usize = 1 << 20;
/// Messages an age plugin may send in one exchange (each `msg`, `confirm` or unknown command
/// counts), and bytes in all of them.
pub const PLUGIN_MESSAGES: usize = 4096;
/// See [`PLUGIN_MESSAGES`].
pub const PLUGIN_BYTES: usize = 16 << 20;
/// Recipient stanzas from one plugin exchange. Each exchange wraps the file key for one
/// recipient, so this is far above what any plugin sends; the header as a whole is held to
/// [`STANZAS`] when it is written. (Kept below `STANZAS` also because a plugin's flood of tiny
/// stanzas is buffered until the exchange ends.)
pub const PLUGIN_STANZAS: usize = 4096;
/// Stanzas offered to one plugin run in a batch (a tree re-key unlocks many files in one
/// run: one PIN or touch instead of one per file); more are offered in further runs.
pub const PLUGIN_BATCH: usize = 65_536;
/// Stanza bytes held for one batch (their headers are read first): up to 64 MiB.
pub const PLUGIN_BATCH_BYTES: usize = 64 << 20;
/// What a plugin may send per stanza of a batch beyond one exchange's budget (a file key or an
/// error, and grease): bytes and messages.
pub const PLUGIN_BYTES_PER_STANZA: usize = 4 << 10;
/// See [`PLUGIN_BYTES_PER_STANZA`].
pub const PLUGIN_MESSAGES_PER_STANZA: usize = 4;
/// Messages buffered between a plugin's reader thread and the exchange (the channel is
/// bounded, so a flooding plugin is paced by its own pipe, not by our memory).
pub const PLUGIN_QUEUE: usize = 16;
/// Bytes of one message to or from the identity agent (`agent/proto.rs`): a tree's window of
/// stanzas ([`PLUGIN_BATCH_BYTES`] of them, in a denser encoding) with room to spare. The
/// length prefix is checked before a byte of the message is kept.
pub const AGENT_MESSAGE: usize = 80 << 20;
/// Stanzas in one request to the agent: a window of [`PLUGIN_BATCH`], plus one file's
/// [`STANZAS`] (a window always takes its first file, whatever its size).
pub const AGENT_STANZAS: usize = PLUGIN_BATCH + STANZAS;
/// Connections the agent serves at once; more are closed at once (each has a deadline, so a
/// client that holds one open costs it for that long at most).
pub const AGENT_CONNECTIONS: usize = 32;
/// Bytes of one detached signature (`verify --sig`, a file that comes from strangers): 20× the
/// largest the toolkit writes (ML-DSA-65, 3,309 bytes; RSA-16384 is 2 KiB).
pub const SIGNATURE: usize = 64 << 10;

/// The error for `what` growing past `limit` bytes: "input too large: the header is longer
/// than 1 MiB".
pub fn too_long(what: &str, limit: usize) -> Error {
    Error::Limit(format!("{what} is longer than {}", bytes(limit)))
}

/// The error for more than `limit` of `what`: "input too large: more than 4096 stanzas".
pub fn too_many(what: &str, limit: usize) -> Error {
    Error::Limit(format!("more than {limit} {what}"))
}

/// The writer's refusal of a header some reader would refuse (`what` says which limit and the
/// count): nothing is written, so no file exists that its own reader cannot open.
pub fn unwritable(what: String) -> Error {
    Error::Limit(format!("{UNWRITABLE}{what} (nothing was written)"))
}

/// How every [`unwritable`] message begins, for frontends that give it its own hint.
pub const UNWRITABLE: &str = "the header would not be readable: ";

/// `n` bytes as a reader would say it: "1 MiB", "16 KiB", "100 bytes".
pub(crate) fn bytes(n: usize) -> String {
    match n {
        n if n >= 1 << 20 && n.is_multiple_of(1 << 20) => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n.is_multiple_of(1 << 10) => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_limit() {
        let e = too_long("the header", HEADER_BYTES);
        assert_eq!(e.to_string(), "input too large: the header is longer than 8 MiB");
        assert_eq!(e.code(), crate::error::ErrorCode::Limit);
        assert_eq!(too_long("a line", 100).to_string(), "input too large: a line is longer than 100 bytes");
        assert_eq!(too_many("stanzas", STANZAS).to_string(), "input too large: more than 16384 stanzas");
    }
}
