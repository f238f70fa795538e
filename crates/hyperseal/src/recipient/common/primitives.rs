//! The few primitives every recipient kind shares: HKDF-SHA-256, the ChaCha20-Poly1305 file-key
//! wrap, and fresh random bytes (the primitives themselves come from `crate::crypto`).

use zeroize::Zeroizing;

use crate::format::Stanza;
use crate::{error::Error, file_key::FileKey};

/// The Poly1305 tag length.
pub(crate) const TAG_LEN: usize = 16;

/// A zero nonce. Safe wherever it is used below because each wrap key is derived from fresh
/// randomness (an ephemeral share, a KEM encapsulation, a random salt) and seals exactly one
/// message.
pub(crate) const ZERO_NONCE: [u8; 12] = [0; 12];

pub(crate) use crate::crypto::{hkdf32, hkdf_expand};

/// Rejects a wrapped file key of the wrong size before any cryptography: only a 16- or 32-byte
/// file key plus its tag is ever produced, so anything else is a broken stanza, not another
/// recipient's.
pub(crate) fn check_wrapped_len(body: &[u8]) -> Result<(), Error> {
    if body.len() == 16 + TAG_LEN || body.len() == 32 + TAG_LEN {
        Ok(())
    } else {
        Err(Error::InvalidStanza(format!(
            "wrapped file key is {} bytes, expected {} or {}",
            body.len(),
            16 + TAG_LEN,
            32 + TAG_LEN
        )))
    }
}

/// ChaCha20-Poly1305 seal of the file key, no associated data.
pub(crate) fn seal_file_key(key: &[u8; 32], nonce: [u8; 12], file_key: &FileKey) -> Vec<u8> {
    let mut buf = file_key.expose().to_vec();
    crate::crypto::chacha_seal(key, nonce, &mut buf);
    buf
}

/// Opens a wrapped file key; `None` if it does not authenticate (another recipient's stanza, or
/// a tampered one: the two are indistinguishable for anonymous recipients). The caller has
/// checked the length with [`check_wrapped_len`].
pub(crate) fn open_file_key(key: &[u8; 32], nonce: [u8; 12], body: &[u8]) -> Option<FileKey> {
    let mut buf = Zeroizing::new(body.to_vec());
    let n = crate::crypto::chacha_open(key, nonce, &mut buf)?;
    FileKey::from_slice(&buf[..n])
}

/// The one argument of a single-argument stanza, decoded to exactly `len` bytes.
pub(crate) fn single_arg(stanza: &Stanza, len: usize, what: &str) -> Result<Vec<u8>, Error> {
    let [arg] = stanza.args.as_slice() else {
        return Err(Error::InvalidStanza(format!("{} stanza must have exactly one argument", stanza.tag)));
    };
    decode_arg(arg, len, what)
}

/// Decodes a base64 stanza argument of an exact length, or says which one is wrong.
pub(crate) fn decode_arg(arg: &str, len: usize, what: &str) -> Result<Vec<u8>, Error> {
    match crate::format::decode_b64(arg.as_bytes()) {
        Ok(v) if v.len() == len => Ok(v),
        _ => Err(Error::InvalidStanza(format!("{what} must be {len} bytes of canonical base64"))),
    }
}

/// Fresh random bytes.
pub(crate) fn random<const N: usize>() -> Result<[u8; N], Error> {
    let mut b = [0u8; N];
    crate::rng::fill(&mut b)?;
    Ok(b)
}
