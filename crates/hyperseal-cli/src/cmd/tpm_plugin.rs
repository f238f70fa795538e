//! `age-plugin-hyperseal` with a TPM identity (`AGE-PLUGIN-HYPERSEAL-1…` holding TPM blobs, see
//! `hyperseal-tpm`): the stanzas are opened here, in the plugin process, with the TPM the
//! environment names (`TPM2TOOLS_TCTI`, as for `hyperseal` itself); the PIN is asked through
//! age (`request-secret`), once per run, and only when a file has a tag stanza.

use std::sync::Arc;

use hyperseal::format::Stanza;
use hyperseal::recipient::{Callbacks, Identity};
use hyperseal::Error;
use hyperseal_tpm::{TpmIdentity, TpmKey};
use zeroize::Zeroizing;

/// The PIN age's user typed, handed to the TPM identity when it asks.
struct Given(Option<Zeroizing<String>>);

impl Callbacks for Given {
    fn request_passphrase(&self, _: &str) -> Option<Zeroizing<String>> {
        self.0.clone()
    }
}

const TAG_KINDS: [&str; 2] = ["p256tag", "mlkem768p256tag"];

/// `age-plugin-hyperseal`'s answers for a TPM identity (`hyperseal_agent::plugin::Local`), or
/// `None` for another (an agent's socket).
pub fn answers(
    id: &str,
    files: &[Vec<Stanza>],
    age: &dyn Callbacks,
) -> Option<hyperseal_agent::plugin::Answers> {
    if !TpmKey::is_tpm_identity(id) {
        return None;
    }
    let worded = |e: Error| Error::Plugin(crate::cmd::tpm::said(&e));
    Some(
        unwrap_files(id, files, age)
            .map_err(worded)
            .map(|all| all.into_iter().map(|a| a.map(|r| r.map_err(worded))).collect()),
    )
}

/// Each file's answer for the TPM identity `id`.
fn unwrap_files(id: &str, files: &[Vec<Stanza>], age: &dyn Callbacks) -> hyperseal_agent::plugin::Answers {
    let key = TpmKey::from_identity_string(id).map_err(|e| e.into_error())?;
    let wanted = files.iter().flatten().any(|s| TAG_KINDS.contains(&s.tag.as_str()));
    let pin = if key.has_pin() && wanted {
        age.request_passphrase("TPM PIN for the hyperseal TPM key")
    } else {
        None
    };
    let tpm = TpmIdentity::new(key, crate::cmd::tpm::location()?, Arc::new(Given(pin)), "the TPM key");
    Ok(files.iter().map(|stanzas| tpm.unwrap_stanzas(stanzas)).collect())
}
