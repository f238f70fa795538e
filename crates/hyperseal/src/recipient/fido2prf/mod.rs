//! Passkeys and security keys: the `age-encryption.org/fido2prf` stanza of typage (age's
//! TypeScript implementation) and age-plugin-fido2prf, byte for byte.
//!
//! `-> age-encryption.org/fido2prf <b64 nonce>`, the nonce 16 fresh random bytes; body =
//! ChaCha20-Poly1305(wrapping key, zero nonce, file key). The wrapping key is
//! HKDF-Extract-SHA-256(salt = the label, ikm = PRF(first) ‖ PRF(second)), where PRF is the
//! WebAuthn PRF extension (CTAP2 `hmac-secret`) of one credential and the two inputs are
//! label ‖ 0x01 ‖ nonce and label ‖ 0x02 ‖ nonce. Both outputs are required, so one touch of the
//! authenticator answers for one stanza only. There is no recipient string: the same credential
//! encrypts and decrypts; its identity string is [`identity_string`].
//!
//! The authenticator is asked by the caller (a page's JavaScript: WebAuthn is asynchronous and
//! has a person in the loop), so the kind is split around that question:
//! 1. [`fresh_nonce`] (encrypting) or [`stanza_nonces`] (decrypting) gives the nonce, and
//!    [`prf_inputs`] the two PRF inputs to ask for;
//! 2. [`WrappingKey::from_prf`] derives the key from the two answers, and
//!    [`Fido2PrfRecipient`] / [`Fido2PrfIdentity`] wrap or unwrap with it.
//!
//! A wrapping key seals one file key only (the AEAD nonce is zero, as in every age stanza):
//! [`Fido2PrfRecipient`] gives its key up at the first wrap and refuses a second one.
//!
//! The PRF secret never leaves the authenticator and the wrap is symmetric, so a quantum
//! adversary holding the file learns nothing from this stanza: the recipient may stand beside
//! post-quantum recipients as well as classic ones ([`Recipient::fits_any_labels`]).

pub mod identity_string;
#[cfg(test)]
mod tests;

use std::sync::Mutex;

use zeroize::Zeroizing;

use super::primitives::{check_wrapped_len, decode_arg, open_file_key, seal_file_key, ZERO_NONCE};
use super::traits::{Identity, Labels, Recipient};
use crate::format::{encode_b64, Stanza};
use crate::{error::Error, file_key::FileKey};

/// The stanza type, the HKDF salt and the prefix of both PRF inputs.
pub const LABEL: &str = "age-encryption.org/fido2prf";
/// Bytes of a stanza's nonce.
pub const NONCE_LEN: usize = 16;
/// Bytes of each PRF output (WebAuthn's PRF is HMAC-SHA-256 on the authenticator).
pub const PRF_LEN: usize = 32;
/// Bytes of each PRF input: the label, the 0x01 or 0x02 byte, the nonce.
pub const PRF_INPUT_LEN: usize = LABEL.len() + 1 + NONCE_LEN;

/// A fresh random stanza nonce, for one encryption.
pub fn fresh_nonce() -> Result<[u8; NONCE_LEN], Error> {
    super::primitives::random::<NONCE_LEN>()
}

/// The two PRF inputs (first, second) to ask the authenticator for, for `nonce`.
pub fn prf_inputs(nonce: &[u8; NONCE_LEN]) -> ([u8; PRF_INPUT_LEN], [u8; PRF_INPUT_LEN]) {
    let input = |which: u8| {
        let mut b = [0u8; PRF_INPUT_LEN];
        b[..LABEL.len()].copy_from_slice(LABEL.as_bytes());
        b[LABEL.len()] = which;
        b[LABEL.len() + 1..].copy_from_slice(nonce);
        b
    };
    (input(1), input(2))
}

/// The nonce of a `fido2prf` stanza; `Err` for one whose arguments or body are malformed
/// (fatal, as in typage and the plugin: such a stanza is this kind's, and broken). The body is
/// age's 16-byte file key sealed (what typage and the plugin read), or a hyperseal file's
/// 32-byte one.
pub fn stanza_nonce(stanza: &Stanza) -> Result<[u8; NONCE_LEN], Error> {
    let [arg] = stanza.args.as_slice() else {
        return Err(Error::InvalidStanza(format!(
            "{LABEL} stanza must have exactly one argument (the nonce)"
        )));
    };
    let nonce = decode_arg(arg, NONCE_LEN, &format!("the {LABEL} nonce"))?;
    check_wrapped_len(&stanza.body)?;
    Ok(nonce.try_into().expect("checked length"))
}

/// The nonces of every `fido2prf` stanza in `stanzas`, in order: the questions a decryption may
/// ask the authenticator, one per stanza until one opens. `Err` if any of them is malformed.
pub fn stanza_nonces(stanzas: &[Stanza]) -> Result<Vec<[u8; NONCE_LEN]>, Error> {
    stanzas.iter().filter(|s| s.tag == LABEL).map(stanza_nonce).collect()
}

/// The wrapping key of one stanza: HKDF-Extract-SHA-256 over the two PRF outputs. Zeroized on
/// drop; `Debug` shows nothing of it.
pub struct WrappingKey(Zeroizing<[u8; 32]>);

impl std::fmt::Debug for WrappingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WrappingKey(redacted)")
    }
}

impl WrappingKey {
    /// Derives the key from the authenticator's answers to [`prf_inputs`] (32 bytes each).
    pub fn from_prf(first: &[u8], second: &[u8]) -> Result<Self, Error> {
        if first.len() != PRF_LEN || second.len() != PRF_LEN {
            return Err(Error::InvalidKey(format!(
                "the passkey's PRF answers are {} and {} bytes, expected {PRF_LEN} each",
                first.len(),
                second.len()
            )));
        }
        // HKDF-Extract is HMAC(salt, ikm); the ikm is the concatenation, fed in two parts.
        Ok(WrappingKey(Zeroizing::new(crate::crypto::hmac_sha256(LABEL.as_bytes(), &[first, second]))))
    }

    /// The key's bytes (known-answer tests compare them; nothing else needs them).
    pub fn expose(&self) -> &[u8; 32] {
        &self.0
    }
}

/// A passkey as a recipient, for one file: the nonce it was asked with and the key its answers
/// gave. The first wrap takes the key; a second one is refused (one key, one file key).
pub struct Fido2PrfRecipient {
    nonce: [u8; NONCE_LEN],
    key: Mutex<Option<WrappingKey>>,
}

impl std::fmt::Debug for Fido2PrfRecipient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Fido2PrfRecipient({}, key redacted)", encode_b64(&self.nonce))
    }
}

impl Fido2PrfRecipient {
    /// The recipient for `nonce` (from [`fresh_nonce`]) and the key from the authenticator's
    /// answers for it.
    pub fn new(nonce: [u8; NONCE_LEN], key: WrappingKey) -> Self {
        Fido2PrfRecipient { nonce, key: Mutex::new(Some(key)) }
    }

    /// The stanza's nonce.
    pub fn nonce(&self) -> &[u8; NONCE_LEN] {
        &self.nonce
    }
}

impl Recipient for Fido2PrfRecipient {
    fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> {
        let key = self.key.lock().unwrap_or_else(|e| e.into_inner()).take().ok_or_else(|| {
            Error::InvalidArgument(
                "a passkey's answer seals one file key only: ask the authenticator again (a fresh nonce)"
                    .into(),
            )
        })?;
        let body = seal_file_key(key.expose(), ZERO_NONCE, file_key);
        Ok((vec![Stanza::new(LABEL, vec![encode_b64(&self.nonce)], body)], Labels::new()))
    }

    /// A stanza is this passkey's when it has this nonce and opens under this key (the removal
    /// of a passkey from a file, after the authenticator answered for that stanza's nonce).
    fn names_stanza(&self, stanza: &Stanza) -> Option<bool> {
        if stanza.tag != LABEL {
            return Some(false);
        }
        let guard = self.key.lock().unwrap_or_else(|e| e.into_inner());
        let Some(key) = guard.as_ref() else { return Some(false) };
        Some(
            stanza_nonce(stanza).is_ok_and(|n| n == self.nonce)
                && open_file_key(key.expose(), ZERO_NONCE, &stanza.body).is_some(),
        )
    }

    fn fits_any_labels(&self) -> bool {
        true
    }
}

/// A passkey as an identity, for the stanza of one nonce: the key the authenticator's answers
/// for that nonce gave. Other `fido2prf` stanzas are not its own (another nonce, or a body that
/// does not open: another credential's); a malformed one is an error.
pub struct Fido2PrfIdentity {
    nonce: [u8; NONCE_LEN],
    key: WrappingKey,
}

impl std::fmt::Debug for Fido2PrfIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Fido2PrfIdentity({}, key redacted)", encode_b64(&self.nonce))
    }
}

impl Fido2PrfIdentity {
    /// The identity for the stanza with `nonce` (from [`stanza_nonces`]) and the key from the
    /// authenticator's answers for it.
    pub fn new(nonce: [u8; NONCE_LEN], key: WrappingKey) -> Self {
        Fido2PrfIdentity { nonce, key }
    }
}

impl Identity for Fido2PrfIdentity {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        if stanza.tag != LABEL {
            return None;
        }
        match stanza_nonce(stanza) {
            Err(e) => Some(Err(e)),
            Ok(n) if n != self.nonce => None,
            // Not opening is "not mine", as typage treats it: a second credential's answers
            // for the same nonce (the file then fails as matching no identity).
            Ok(_) => open_file_key(self.key.expose(), ZERO_NONCE, &stanza.body).map(Ok),
        }
    }
}
