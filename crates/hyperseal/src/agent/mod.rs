//! The identity agent's client side: a long-lived process (the CLI's `hyperseal agent`) holds
//! unlocked identities and answers one question, "here are a file's stanzas: which file key do
//! they open?". It never hands out an identity and never sees a payload.
//!
//! * `proto.rs`: the wire format (docs/FORMAT.md, "The identity agent protocol"), one request
//!   and one answer per connection, every size bounded by [`limits`](crate::limits);
//! * `client.rs`: [`AgentIdentity`], the agent as an [`Identity`](crate::Identity) that asks in
//!   batches, so a tree re-key sends a whole window of headers in one round trip;
//! * `conn.rs`: the transport both ends use, [`conn::Conn`] and [`conn::Listener`]: a Unix
//!   socket, or on Windows a named pipe of the user's alone (the OS seam's `sys/windows/pipe.rs`),
//!   every read and write under a deadline, the peer's user checked by the kernel's word
//!   (`sys/unix/peer.rs`).
//!
//! The agent process's own system calls (no dumps, locked memory, its session and end
//! signals, naming a peer's program) are the agent's, not the library's: the CLI's `sys/`.
//!
//! The library reads no environment variable: the caller gives the path.
//! The agent's plugin identity (`AGE-PLUGIN-HYPERSEAL-1…`, [`plugin_identity`]) carries the
//! socket path and no secret, so age and every age client reach the agent through
//! `age-plugin-hyperseal`.

mod client;
pub mod conn;
pub mod proto;

use std::path::{Path, PathBuf};

/// This user's pipe name for the agent on Windows, `\\.\pipe\hyperseal-agent-<SID>` (on Unix
/// the socket's place is the caller's: the CLI's is `$XDG_RUNTIME_DIR/hyperseal/agent.sock`).
#[cfg(windows)]
pub use crate::sys::pipe::default_name as default_pipe_name;
pub use client::{AgentIdentity, DEFAULT_TIMEOUT, PER_STANZA};

use crate::error::Error;
use crate::recipient::plugin;

/// The plugin name of the agent: age runs `age-plugin-hyperseal` for its identities.
pub const PLUGIN_NAME: &str = "hyperseal";

/// The identity string that sends age (and every age client) to the agent at `socket`
/// through `age-plugin-hyperseal`: the path, bech32-encoded; no secret.
pub fn plugin_identity(socket: &Path) -> String {
    plugin::identity_string(PLUGIN_NAME, socket.as_os_str().as_encoded_bytes())
}

/// The socket path of an identity written by [`plugin_identity`].
pub fn socket_of(identity: &str) -> Result<PathBuf, Error> {
    match plugin::identity_data(identity)? {
        // A NUL byte is in no path: it starts the other identities the plugin serves (a TPM
        // key's blobs, `hyperseal-tpm`).
        (name, data) if name == PLUGIN_NAME && !data.is_empty() && !data.contains(&0) => {
            let path = String::from_utf8(data)
                .map_err(|_| Error::InvalidKey("the agent identity's socket path is not UTF-8".into()))?;
            Ok(PathBuf::from(path))
        }
        _ => Err(Error::InvalidKey("not an agent identity (AGE-PLUGIN-HYPERSEAL-1…)".into())),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_plugin_identity_carries_the_path() {
        let path = std::path::Path::new("/run/user/1000/hyperseal/agent.sock");
        let id = super::plugin_identity(path);
        assert!(id.starts_with("AGE-PLUGIN-HYPERSEAL-1"), "{id}");
        assert_eq!(super::socket_of(&id).unwrap(), path);
        assert!(super::socket_of("AGE-PLUGIN-YUBIKEY-1QQQQQQQ").is_err());
    }
}
