//! Making a TPM-bound key: the P-256 key is generated inside the TPM; the ML-KEM-768 seed is
//! drawn here, sealed to the TPM under the same policy, used once to compute the public key and
//! dropped (zeroized). Both objects come back wrapped to this TPM's storage primary. The PIN and
//! the seed travel to the TPM encrypted, in a session salted to that primary, whose point is
//! taken as the TPM returns it (trust on first use: nothing is known yet to check it against;
//! its name is computed from the returned area and must match the answer's own).

use hyperseal::recipient::tag::TagRecipient;
use hyperseal::recipient::tag_held;
use zeroize::Zeroizing;

use crate::command::Tpm;
use crate::error::TpmError;
use crate::key::{Blob, TpmKey, PCR_COUNT};
use crate::ops::{ecc_point, ecdh_template, policy_digest, sealed_template};
use crate::transport::Location;

/// The longest PIN: a TPM keeps at most a digest's size (32 bytes for SHA-256) of authValue.
pub const MAX_PIN: usize = 32;

/// What a new key is bound to.
pub struct Options<'a> {
    /// Also seal an ML-KEM-768 seed: an `age1tagpq1…` recipient.
    pub postquantum: bool,
    /// The PIN (the objects' authValue), if any.
    pub pin: Option<&'a [u8]>,
    /// PCRs (SHA-256 bank) whose current values the key is bound to.
    pub pcrs: &'a [u8],
}

/// Makes a key on the TPM at `location`: the key and its recipient.
pub fn generate(location: &Location, o: &Options) -> Result<(TpmKey, TagRecipient), TpmError> {
    let pin = o.pin.unwrap_or(&[]);
    if pin.len() > MAX_PIN || pin.ends_with(&[0]) {
        return Err(TpmError::BadOption {
            why: format!("a TPM PIN is at most {MAX_PIN} bytes, not ending in a NUL byte"),
            fix: "choose a shorter PIN (the TPM's lockout, not the length, stops guessing)".into(),
        });
    }
    let mut pcrs: Vec<u8> = o.pcrs.to_vec();
    pcrs.sort_unstable();
    pcrs.dedup();
    let missing: Vec<String> = pcrs.iter().filter(|p| **p >= PCR_COUNT).map(u8::to_string).collect();
    if !missing.is_empty() {
        let (what, exist) = if missing.len() == 1 { ("PCR", "does") } else { ("PCRs", "do") };
        return Err(TpmError::BadOption {
            why: format!(
                "{what} {} {exist} not exist: PCRs are numbered 0 to {}",
                missing.join(", "),
                PCR_COUNT - 1
            ),
            fix: format!("choose --pcr values from 0 to {} (7 holds the Secure Boot state)", PCR_COUNT - 1),
        });
    }
    let mut tpm = Tpm::open(location)?;
    let (primary, parent_name, srk_point) = tpm.create_primary()?;
    let mut session = match tpm.start_session(primary, &srk_point, false) {
        Ok(s) => s,
        Err(e) => {
            let _ = tpm.flush(primary);
            return Err(e);
        }
    };
    let parent = (primary, &parent_name[..]);
    let made = (|| {
        let values =
            pcrs.iter().map(|p| Ok((*p, tpm.pcr_read(*p)?))).collect::<Result<Vec<_>, TpmError>>()?;
        let policy = policy_digest(&values, o.pin.is_some());
        let (private, public) =
            tpm.create(parent, &mut session, &ecdh_template(&policy, o.pin.is_some()), pin, &[])?;
        let point = ecc_point(&public)?;
        let ecdh = Blob { private, public };
        let (sealed, recipient) = if o.postquantum {
            let mut seed = Zeroizing::new([0u8; tag_held::MLKEM_SEED_BYTES]);
            hyperseal::fill_random(&mut seed[..]).map_err(|e| TpmError::Protocol(e.to_string()))?;
            let (private, public) =
                tpm.create(parent, &mut session, &sealed_template(&policy, o.pin.is_some()), pin, &seed[..])?;
            (Some(Blob { private, public }), tag_held::recipient(&point, Some(&seed)))
        } else {
            (None, tag_held::recipient(&point, None))
        };
        let recipient = recipient.map_err(|e| TpmError::Protocol(format!("the TPM's key: {e}")))?;
        let key = TpmKey {
            pin: o.pin.is_some(),
            parent_name: parent_name.clone(),
            pcrs: values,
            ecdh,
            sealed,
            point,
        };
        Ok((key, recipient))
    })();
    let _ = tpm.flush(session.handle);
    let _ = tpm.flush(primary);
    made
}
