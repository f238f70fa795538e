//! The key schedule, in one place for both directions: from a file key to the header MAC and the
//! payload key.
//!
//! ```text
//! header MAC key = HKDF-SHA-256(ikm = file key, salt = "", info = "header")
//! header MAC     = HMAC-SHA-256(header MAC key, version line … "---")
//! payload key    = HKDF-SHA-256(ikm = file key, salt = 16-byte payload salt, info)
//!   info         = "hyperseal/v1 payload <suite>"   (hyperseal profile: binds the suite)
//!                = "payload"                        (age profile, as the age spec)
//! ```
//! Encryption calls [`seal_header`] and [`payload_key`]; decryption calls [`open_header`],
//! which ends in the same [`payload_key`]. A file key that unwraps but fails the MAC is
//! rejected, which also commits the file to a single file key (the AEADs alone are not
//! key-committing).

use zeroize::Zeroizing;

pub(crate) use crate::crypto::hkdf32;
use crate::crypto::{hmac_sha256, hmac_sha256_verify};
use crate::format::{Header, Profile, Suite};
use crate::recipient::Identity;
use crate::stream::ChunkCipher;
use crate::{error::Error, file_key::FileKey};

/// The encoded header, MAC'd under `file_key`.
pub(crate) fn seal_header(header: &Header, file_key: &FileKey) -> Vec<u8> {
    header.encode(&hmac_sha256(&mac_key(file_key)[..], &[header.mac_input()]))
}

/// Finds the file key with `identities` (the first identity that claims a stanza decides; its
/// key must have this profile's length and pass the header MAC, checked in constant time), then
/// keys the payload with the `salt` that follows the header. Every decrypt path comes here.
pub(crate) fn open_header(
    header: &Header,
    identities: &[Box<dyn Identity>],
    salt: &[u8; crate::format::SALT_LEN],
) -> Result<ChunkCipher, Error> {
    let key = open_header_key(header, identities, salt)?;
    ChunkCipher::new(header.suite, header.chunk_size, &key)
}

/// [`open_header`], stopping at the payload key (the part opener, `parts::PartKey`, ships it to
/// workers).
pub(crate) fn open_header_key(
    header: &Header,
    identities: &[Box<dyn Identity>],
    salt: &[u8; crate::format::SALT_LEN],
) -> Result<Zeroizing<[u8; 32]>, Error> {
    let file_key = open_file_key(header, identities)?;
    Ok(payload_key(header.profile, header.suite, &file_key, salt))
}

/// The file key of `header`, unwrapped by the first identity that claims a stanza, with this
/// profile's length and the header MAC verified: decryption and re-keying both start here.
pub(crate) fn open_file_key(
    header: &Header,
    identities: &[Box<dyn Identity + '_>],
) -> Result<FileKey, Error> {
    let file_key = identities
        .iter()
        .find_map(|id| id.unwrap_stanzas(&header.stanzas))
        .ok_or(Error::NoIdentityMatched)??;
    if file_key.expose().len() != header.profile.file_key_len() {
        return Err(Error::InvalidStanza("file key has the wrong length for this format".into()));
    }
    if !hmac_sha256_verify(&mac_key(&file_key)[..], header.mac_input(), header.mac()) {
        return Err(Error::HeaderMac);
    }
    Ok(file_key)
}

/// The payload key of one file.
pub(crate) fn payload_key(
    profile: Profile,
    suite: Suite,
    file_key: &FileKey,
    salt: &[u8],
) -> Zeroizing<[u8; 32]> {
    let info = match profile {
        Profile::Hyperseal => format!("hyperseal/v1 payload {}", suite.name()),
        Profile::Age => "payload".to_string(),
    };
    hkdf32(salt, file_key.expose(), info.as_bytes())
}

fn mac_key(file_key: &FileKey) -> Zeroizing<[u8; 32]> {
    hkdf32(&[], file_key.expose(), b"header")
}
