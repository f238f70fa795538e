//! The data key of a sops file: opened from an age entry's `enc` with the caller's identities
//! (never copied unzeroized, never longer than a key), wrapped again for a new recipient as sops
//! writes an `enc`, and, with several key groups, combined from the groups' Shamir shares.

use zeroize::Zeroizing;

use super::model::{refuse, Group, MAX_ENC};
use super::shamir;
use hyperseal::format::Profile;
use hyperseal::recipient::{Identity, Recipient};
use hyperseal::Error;
use hyperseal::{Decryptor, Encryptor, Options};

/// The largest plaintext of an `enc`: sops's data key is 32 bytes, a Shamir share 33.
const MAX_KEY: usize = 64;

/// The group's data key or share, from the first entry an identity opens. `None`: no identity
/// is for any entry. An entry that an identity claims but fails to open is an error.
pub(crate) fn open_group(
    group: &Group,
    identities: &[Box<dyn Identity>],
) -> Option<Result<Zeroizing<Vec<u8>>, Error>> {
    let mut last = None;
    for e in &group.entries {
        match open(&e.enc, identities) {
            Ok(key) => return Some(Ok(key)),
            Err(Error::NoIdentityMatched) => {}
            Err(e) => last = Some(e),
        }
    }
    last.map(Err)
}

/// Opens one armored `enc`.
pub(crate) fn open(enc: &str, identities: &[Box<dyn Identity>]) -> Result<Zeroizing<Vec<u8>>, Error> {
    if enc.len() > MAX_ENC {
        return Err(hyperseal::limits::too_long("an age entry's enc", MAX_ENC));
    }
    let dec = Decryptor::from_slice(enc.as_bytes())?;
    if dec.header().profile != Profile::Age {
        return Err(refuse("an age entry's enc is not an age file"));
    }
    let mut out = KeyBuf(Zeroizing::new(Vec::with_capacity(MAX_KEY)));
    dec.decrypt_stream(identities, &mut out, None)?;
    if out.0.is_empty() {
        return Err(refuse("an age entry's enc does not hold a sops data key"));
    }
    Ok(out.0)
}

/// Where a data key is decrypted to: never reallocated (no copy left behind unwiped), and no
/// more than [`MAX_KEY`] bytes, whatever the `enc` holds.
struct KeyBuf(Zeroizing<Vec<u8>>);

impl std::io::Write for KeyBuf {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0.len() + buf.len() > MAX_KEY {
            return Err(std::io::Error::other("an age entry's enc holds more than a sops data key"));
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The armored age file of `key` for `recipient`, as sops writes an `enc`.
pub(crate) fn wrap(key: &[u8], r: Box<dyn Recipient>) -> Result<String, Error> {
    let enc = Encryptor::with_recipients(&[r], Options::age())?;
    let mut w = hyperseal::armored(Vec::new(), Profile::Age);
    enc.encrypt_slice(key, &mut w, None)?;
    let bytes = w.finish()?;
    String::from_utf8(bytes).map_err(|_| Error::Crypto)
}

/// Whether one of `encs` opens with `identities`.
pub(crate) fn still_opens_encs<'a>(
    mut encs: impl Iterator<Item = &'a str>,
    identities: &[Box<dyn Identity>],
) -> bool {
    encs.any(|enc| open(enc, identities).is_ok())
}

/// The file's data key: one group's, or `threshold` groups' shares combined.
pub(crate) fn old_key(
    groups: &[Group],
    threshold: usize,
    identities: &[Box<dyn Identity>],
) -> Result<Zeroizing<Vec<u8>>, Error> {
    let none = || refuse("none of the identities given opens the file's data key");
    let key = if let [group] = groups {
        open_group(group, identities).ok_or_else(none)??
    } else {
        let mut shares = Vec::new();
        for g in groups {
            match open_group(g, identities) {
                Some(Ok(share)) => shares.push(share),
                Some(Err(e)) => return Err(e),
                None => {}
            }
        }
        if shares.len() < threshold {
            return Err(refuse(format!(
                "the identities given open {} of the file's key groups, and its data key needs {threshold}",
                shares.len()
            )));
        }
        shamir::combine(&shares.iter().map(|s| &s[..]).collect::<Vec<_>>())?
    };
    if key.len() != 32 {
        return Err(refuse("the file's data key is not a 32-byte AES-256 key"));
    }
    Ok(key)
}
