//! The portable build (WebAssembly) has no SSH keys: their parsers and stanzas run on aws-lc. The
//! same names as the native modules, so the dispatch in `mod.rs` is one piece of code; every
//! entry fails with a clear error.

use crate::Error;

fn unavailable() -> Error {
    Error::InvalidKey("SSH keys are not available in this build (use age1… keys)".into())
}

pub mod openssh {
    /// An SSH key line, as the native parser sees it.
    pub enum AuthorizedKey {
        /// Never built here: every SSH line is refused.
        #[allow(dead_code)]
        Unsupported(String),
    }

    /// Whether `s` starts like an SSH public key line.
    pub fn looks_like_ssh(s: &str) -> bool {
        s.starts_with("ssh-")
    }

    /// Refuses every line (the caller then reports it as an unparsable recipient).
    pub fn parse_authorized_key(_: &str) -> Result<AuthorizedKey, String> {
        Err("SSH keys are not available in this build".into())
    }
}

pub mod openssh_key {
    use crate::Error;

    /// The first line of an OpenSSH private key file.
    pub const BEGIN: &str = "-----BEGIN OPENSSH PRIVATE KEY-----";

    /// Never built: parsing fails.
    pub struct OpensshKeyFile(());

    /// Never built: there is no key file to take it from.
    pub struct Public(());

    impl OpensshKeyFile {
        pub fn parse(_: &str) -> Result<Self, Error> {
            Err(super::unavailable())
        }
        pub fn public(&self) -> Public {
            Public(())
        }
    }

    impl Public {
        pub fn to_authorized_key(&self) -> String {
            String::new()
        }
    }
}

pub mod ssh {
    use std::sync::Arc;

    use crate::recipient::{Callbacks, Identity, Recipient};
    use crate::Error;

    pub fn parse_recipient(_: &str) -> Result<Box<dyn Recipient>, Error> {
        Err(super::unavailable())
    }

    pub fn parse_identity(_: &str, _: Arc<dyn Callbacks>) -> Result<(Box<dyn Identity>, ()), Error> {
        Err(super::unavailable())
    }
}
