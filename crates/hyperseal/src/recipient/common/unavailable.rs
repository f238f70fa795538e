//! What the portable build (WebAssembly) lacks, and why: RSA and SSH keys. Each stand-in has
//! the native module's names, so the parsing that chooses between kinds (`parse.rs`) is one piece
//! of code for both builds; every entry fails with a clear error.

use crate::error::Error;

/// RSA-OAEP recipients: not available.
///
/// Why: the only pure-Rust RSA (RustCrypto `rsa`) is not constant-time (the Marvin attack,
/// RUSTSEC-2023-0071, unfixed), and an RSA private-key operation that leaks timing in a page is
/// exactly what an attacker with a script on the same machine can measure. RSA keys also exist
/// for PKI interop, which a browser rarely needs. So the portable build parses no RSA key and says
/// so with a `Key` error; files with RSA stanzas still open with another recipient's identity
/// (an RSA stanza is then "not mine").
pub mod rsa {
    use crate::format::Stanza;
    use crate::recipient::traits::{GeneratedKey, Identity, Labels, Recipient};
    use crate::{error::Error, file_key::FileKey};

    /// RSA keys are PEM, not bech32; this is the PEM line that introduces a recipient.
    pub const RECIPIENT_HRP: &str = "-----BEGIN PUBLIC KEY-----";
    /// The PEM line that introduces an identity.
    pub const IDENTITY_HRP: &str = "-----BEGIN PRIVATE KEY-----";

    const UNAVAILABLE: &str = "RSA keys are not available in this build (WebAssembly has no constant-time \
                               RSA): use an x25519, hybrid or mlkem1024 key";

    /// An RSA public key: none can be made in this build.
    #[derive(Debug)]
    pub enum RsaRecipient {}

    impl RsaRecipient {
        /// Always an error in this build.
        pub fn from_spki_pem(_: &str) -> Result<Self, Error> {
            Err(Error::InvalidRecipient(UNAVAILABLE.into()))
        }
    }

    impl Recipient for RsaRecipient {
        fn wrap_file_key(&self, _: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> {
            match *self {}
        }
    }

    /// An RSA private key: none can be made in this build.
    #[derive(Debug)]
    pub enum RsaIdentity {}

    impl RsaIdentity {
        /// Always an error in this build.
        pub fn from_pkcs8_pem(_: &str) -> Result<Self, Error> {
            Err(Error::InvalidKey(UNAVAILABLE.into()))
        }
    }

    impl Identity for RsaIdentity {
        fn unwrap_stanza(&self, _: &Stanza) -> Option<Result<FileKey, Error>> {
            match *self {}
        }
    }

    /// Always an error in this build.
    pub fn public_pem_from_pkcs8_pem(_: &str) -> Result<String, Error> {
        Err(Error::InvalidKey(UNAVAILABLE.into()))
    }

    /// Always an error in this build.
    pub fn generate(_: usize) -> Result<GeneratedKey, Error> {
        Err(Error::InvalidArgument(UNAVAILABLE.into()))
    }
}

/// SSH keys: their parsers and stanzas run on aws-lc.
pub mod ssh {
    use std::sync::Arc;

    use crate::error::Error;
    use crate::recipient::callbacks::Callbacks;
    use crate::recipient::traits::{Identity, Recipient};

    pub fn parse_recipient(_: &str) -> Result<Box<dyn Recipient>, Error> {
        Err(super::ssh_unavailable())
    }

    pub fn parse_identity(_: &str, _: Arc<dyn Callbacks>) -> Result<(Box<dyn Identity>, ()), Error> {
        Err(super::ssh_unavailable())
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
        use crate::error::Error;

        /// The first line of an OpenSSH private key file.
        pub const BEGIN: &str = "-----BEGIN OPENSSH PRIVATE KEY-----";

        /// Never built: parsing fails.
        pub struct OpensshKeyFile(());

        /// Never built: there is no key file to take it from.
        pub struct Public(());

        impl OpensshKeyFile {
            pub fn parse(_: &str) -> Result<Self, Error> {
                Err(super::super::ssh_unavailable())
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
}

fn ssh_unavailable() -> Error {
    Error::InvalidKey("SSH keys are not available in this build (use age1… keys)".into())
}
