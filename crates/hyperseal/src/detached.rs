//! Detached headers, as age 1.3 defines them (`ExtractHeader`, `DecryptHeader`,
//! `NewInjectedFileKeyIdentity`): a file's header is copied to another machine, opened there
//! with the identities that never leave it, and only the file key comes back to open the payload
//! where it lies. Nothing here frames or parses anything of its own: the header is read by the
//! one header codec, the key is found by the one key schedule (`keys::open_file_key`: the
//! file key's length and the header MAC are checked as on every decrypt path), and a payload is
//! opened by any decrypt path with a [`FileKeyIdentity`] in the identities.
//!
//! ```
//! use hyperseal::{detached, recipient, Kind};
//! let key = recipient::generate(Kind::X25519)?;
//! let file = hyperseal::encrypt(&[recipient::parse_recipient(&key.public)?], b"hello")?;
//! let header = detached::extract_header(&file[..])?;
//! let file_key = detached::decrypt_header(&header, &recipient::parse_identities(&key.secret)?)?;
//! let ids: Vec<Box<dyn hyperseal::Identity>> = vec![Box::new(detached::FileKeyIdentity::new(file_key))];
//! assert_eq!(hyperseal::decrypt(&ids, &file)?, b"hello");
//! # Ok::<(), hyperseal::Error>(())
//! ```

use std::io::{BufRead, BufReader, Read};

use crate::format::{Header, Stanza};
use crate::recipient::Identity;
use crate::{error::Error, file_key::FileKey, keys};

/// Room for any header in one buffer; the codec itself stops at `limits::HEADER_BYTES`.
const HEADER_BUFFER: usize = 64 << 10;

/// The header of the file read from `input`: the version line through the MAC line, byte for
/// byte as age's `ExtractHeader` returns it. Reads at most the header's budget
/// (`limits::HEADER_BYTES`) past it, whatever the input.
///
/// Armored input is refused, as age's `ExtractHeader` refuses it: the header of an armored file
/// is not a run of its bytes, and a detached header that age reads must be the binary one.
pub fn extract_header(input: impl Read) -> Result<Vec<u8>, Error> {
    let mut r = BufReader::with_capacity(HEADER_BUFFER, input);
    if r.fill_buf()?.trim_ascii_start().starts_with(b"-----BEGIN") {
        return Err(Error::Armor(
            "a detached header is taken from a binary file (age's ExtractHeader reads no armor); de-armor it first"
                .into(),
        ));
    }
    let header = Header::read_from(&mut r)?;
    Ok(header.encode(header.mac()))
}

/// The file key of a detached `header` (as [`extract_header`] returns it; bytes after the
/// header are ignored, as age's `DecryptHeader` ignores them), unwrapped by the first identity
/// that claims a stanza, its length and the header MAC checked. The caller keeps track of which
/// file the key opens, and uses it for nothing else.
pub fn decrypt_header(header: &[u8], identities: &[Box<dyn Identity>]) -> Result<FileKey, Error> {
    let parsed = Header::read_from(&mut &header[..])?;
    keys::open_file_key(&parsed, identities)
}

/// An identity that answers every stanza with one file key obtained out of band (by
/// [`decrypt_header`], perhaps on another machine): age's `NewInjectedFileKeyIdentity`. With it
/// every decrypt path opens the payload; the header MAC still has to verify under the key, so a
/// key of another file fails as a damaged header would ([`Error::HeaderMac`]).
#[derive(Clone)]
pub struct FileKeyIdentity {
    key: FileKey,
}

impl FileKeyIdentity {
    /// The identity of `key`.
    pub fn new(key: FileKey) -> Self {
        FileKeyIdentity { key }
    }
}

impl Identity for FileKeyIdentity {
    fn unwrap_stanza(&self, _stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        Some(Ok(self.key.clone()))
    }
}

impl std::fmt::Debug for FileKeyIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FileKeyIdentity({:?})", self.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{recipient, Kind};

    fn file_and_ids() -> (Vec<u8>, Vec<Box<dyn Identity>>) {
        let key = recipient::generate(Kind::X25519).unwrap();
        let file = crate::encrypt(&[recipient::parse_recipient(&key.public).unwrap()], b"detached").unwrap();
        (file, recipient::parse_identities(&key.secret).unwrap())
    }

    #[test]
    fn header_is_the_files_prefix_and_opens_it() {
        let (file, ids) = file_and_ids();
        let header = extract_header(&file[..]).unwrap();
        assert!(file.starts_with(&header) && header.ends_with(b"\n"));
        // A whole file is a header followed by bytes that are ignored.
        let a = decrypt_header(&header, &ids).unwrap();
        let b = decrypt_header(&file, &ids).unwrap();
        assert_eq!(a.expose(), b.expose());
        let with_key: Vec<Box<dyn Identity>> = vec![Box::new(FileKeyIdentity::new(a))];
        assert_eq!(crate::decrypt(&with_key, &file).unwrap(), b"detached");
    }

    #[test]
    fn a_key_of_another_file_fails_the_mac() {
        let (file, ids) = file_and_ids();
        let (other, other_ids) = file_and_ids();
        let key = decrypt_header(&extract_header(&other[..]).unwrap(), &other_ids).unwrap();
        let wrong: Vec<Box<dyn Identity>> = vec![Box::new(FileKeyIdentity::new(key))];
        assert!(matches!(crate::decrypt(&wrong, &file), Err(Error::HeaderMac)));
        assert!(decrypt_header(&extract_header(&file[..]).unwrap(), &ids).is_ok());
    }

    #[test]
    fn armor_is_refused_and_debug_hides_the_key() {
        let armored = b"-----BEGIN AGE ENCRYPTED FILE-----\nYWdl\n-----END AGE ENCRYPTED FILE-----\n";
        assert!(matches!(extract_header(&armored[..]), Err(Error::Armor(_))));
        let id = FileKeyIdentity::new(FileKey::from_slice(&[0xab; 16]).unwrap());
        let shown = format!("{id:?}");
        assert!(shown.contains("redacted") && !shown.contains("ab") && !shown.contains("171"));
    }
}
