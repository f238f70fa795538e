//! What the portable build (WebAssembly) lacks, and why: RSA private keys (hyperseal's
//! `rsa-oaep` keys, and `ssh-rsa` identities). Each stand-in has the native module's names, so
//! the parsing that chooses between kinds (`parse.rs`, `ssh/mod.rs`) is one piece of code for
//! both builds; every entry fails with a clear error. `ssh-rsa` recipients are not missing:
//! encrypting is a public-key operation, which the portable backend does (`ssh/rsa_recipient.rs`).

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

/// `ssh-rsa` identities: not available; `ssh-rsa` recipients are (the native module's names).
///
/// Why: opening an `ssh-rsa` stanza is an RSA private-key operation, and the only pure-Rust RSA
/// (RustCrypto `rsa`) does not run it in constant time (RUSTSEC-2023-0071, see [`rsa`]). So an
/// OpenSSH RSA private key is refused when it is read, before any passphrase is asked for, and a
/// file with `ssh-rsa` stanzas opens here only with another recipient's identity.
pub mod ssh_rsa {
    use crate::format::Stanza;
    use crate::recipient::ssh::openssh_key::RsaComponents;
    use crate::recipient::traits::Identity;
    use crate::{error::Error, file_key::FileKey};

    pub use crate::recipient::ssh::rsa_recipient::SshRsaRecipient;

    /// The error for every `ssh-rsa` private key in this build.
    pub fn identity_unavailable() -> Error {
        Error::InvalidKey(
            "ssh-rsa private keys are not available in this build, since RSA decryption in \
             WebAssembly is not constant time and its timing could reveal the key (encrypting to \
             ssh-rsa keys works; decrypt with the hyperseal or age command, or use an ssh-ed25519 key)"
                .into(),
        )
    }

    /// An `ssh-rsa` private key: none can be made in this build.
    #[derive(Debug)]
    pub enum SshRsaIdentity {}

    impl SshRsaIdentity {
        /// Always an error in this build.
        pub fn new(_: &RsaComponents) -> Result<Self, Error> {
            Err(identity_unavailable())
        }
    }

    impl Identity for SshRsaIdentity {
        fn unwrap_stanza(&self, _: &Stanza) -> Option<Result<FileKey, Error>> {
            match *self {}
        }
    }
}
