//! The passphrase recipient type, native to age (scrypt), on the core's scrypt kind.

use std::collections::HashSet;

use age_core::format::{FileKey, Stanza};
use age_core::secrecy::{ExposeSecret, SecretString};
use hyperseal::recipient::scrypt as core;
use zeroize::Zeroizing;

use crate::{bridge, DecryptError, EncryptError};

/// The stanza type of a passphrase.
pub(crate) const TAG: &str = "scrypt";

/// The work factor (log2 N) age writes; also the "target" reported with
/// [`DecryptError::ExcessiveWork`].
const TARGET_LOG_N: u8 = 18;

/// The highest work factor an identity computes unless told otherwise (log2 N = 22: seconds
/// and 4 GiB, as the core caps it).
const DEFAULT_MAX_LOG_N: u8 = 22;

fn passphrase_of(p: &SecretString) -> Zeroizing<String> {
    Zeroizing::new(p.expose_secret().to_string())
}

/// A passphrase-based recipient. Anyone with the passphrase can decrypt the file.
///
/// It must be the only recipient of a file: its wrap carries a unique label, so
/// [`Encryptor::with_recipients`](crate::Encryptor::with_recipients) refuses any other beside
/// it.
pub struct Recipient {
    passphrase: SecretString,
    log_n: Option<u8>,
}

impl Recipient {
    /// Constructs a new `Recipient` with the given passphrase.
    pub fn new(passphrase: SecretString) -> Self {
        Recipient { passphrase, log_n: None }
    }

    /// Sets the scrypt work factor to `N = 2^log_n` (1..=30; the default is age's).
    pub fn set_work_factor(&mut self, log_n: u8) {
        assert!(0 < log_n && log_n < 64, "log_n must be in 1..64");
        self.log_n = Some(log_n);
    }
}

impl crate::Recipient for Recipient {
    fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, HashSet<String>), EncryptError> {
        let mut r = core::ScryptRecipient::new(passphrase_of(&self.passphrase));
        if let Some(log_n) = self.log_n {
            r = r.with_work_factor(log_n).map_err(bridge::encrypt_error)?;
        }
        bridge::wrap_with(&r, file_key)
    }
}

/// A passphrase-based identity.
///
/// It caps the work a [`Decryptor`](crate::Decryptor) may have to do for a file (log2 N = 22
/// unless [`set_max_work_factor`](Identity::set_max_work_factor) says otherwise).
pub struct Identity {
    passphrase: SecretString,
    max_work_factor: u8,
}

impl Identity {
    /// Constructs a new `Identity` with the given passphrase.
    pub fn new(passphrase: SecretString) -> Self {
        Identity { passphrase, max_work_factor: DEFAULT_MAX_LOG_N }
    }

    /// Sets the maximum accepted scrypt work factor to `N = 2^max_log_n`.
    pub fn set_max_work_factor(&mut self, max_log_n: u8) {
        self.max_work_factor = max_log_n;
    }
}

impl crate::Identity for Identity {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, DecryptError>> {
        if stanza.tag != TAG {
            return None;
        }
        // The core refuses a work factor above the cap without saying which; age's error
        // carries the number, read here from the stanza's own argument.
        if let [_, log_n] = &stanza.args[..] {
            if let Ok(required) = log_n.parse::<u8>() {
                let canonical = !log_n.starts_with('0') && log_n.bytes().all(|b| b.is_ascii_digit());
                if canonical && required > self.max_work_factor {
                    return Some(Err(DecryptError::ExcessiveWork { required, target: TARGET_LOG_N }));
                }
            }
        }
        let id = core::ScryptIdentity::new(passphrase_of(&self.passphrase))
            .with_max_work_factor(self.max_work_factor);
        bridge::unwrap_with(&id, stanza)
    }

    fn unwrap_stanzas(&self, stanzas: &[Stanza]) -> Option<Result<FileKey, DecryptError>> {
        // A passphrase stands alone (age's header rule): anything beside it is a broken header.
        if stanzas.len() != 1 && stanzas.iter().any(|s| s.tag == TAG) {
            return Some(Err(DecryptError::InvalidHeader));
        }
        stanzas.iter().find_map(|s| self.unwrap_stanza(s))
    }
}
