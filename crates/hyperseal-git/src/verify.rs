//! `verify`: is a stored blob what the filter would have stored? A structural check, made
//! without any key: the blob must be an age file whose stanza types and count are those its
//! `.age-recipients` makes. An X25519 or ML-KEM stanza names no public key, so which key a
//! stanza is for cannot be checked; a wrong count or kind, or plaintext, can. This is what a
//! tool that ignores `.gitattributes` (and so the filter) gets wrong.

use std::io::Read;

use super::filter::AGE_INTRO;
use hyperseal::recipient::{wrap_all, Recipient};
use hyperseal::{Decryptor, Error, FileKey, Profile};

/// Why a stored blob fails the check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// Not an age file: plaintext stored past the filter.
    NotAge,
    /// Begins as an age file, but its header does not parse.
    BadHeader(String),
    /// No `.age-recipients` in its folder or above it.
    NoRecipients,
    /// Stanzas of other types or another count than the recipients make.
    Mismatch {
        /// The stanza types the recipients make, sorted.
        want: Vec<String>,
        /// The stanza types in the blob's header, sorted.
        got: Vec<String>,
    },
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Finding::NotAge => f.write_str("not an age file (plaintext stored past the filter?)"),
            Finding::BadHeader(e) => write!(f, "not a readable age header: {e}"),
            Finding::NoRecipients => {
                write!(f, "no {} in its folder or above it", super::recipients::FILE_NAME)
            }
            Finding::Mismatch { want, got } => write!(
                f,
                "{} stanza(s) ({}), but its {} makes {} ({})",
                got.len(),
                got.join(", "),
                super::recipients::FILE_NAME,
                want.len(),
                want.join(", ")
            ),
        }
    }
}

/// The stanza types `recipients` write into an age file, sorted: found by wrapping a throwaway
/// file key, so every kind (plugins too) answers for itself.
pub fn stanza_types(recipients: &[Box<dyn Recipient>]) -> Result<Vec<String>, Error> {
    let key = FileKey::generate(Profile::Age.file_key_len());
    let mut types: Vec<String> = wrap_all(recipients, &key)?.into_iter().map(|s| s.tag).collect();
    types.sort();
    Ok(types)
}

/// Checks one stored blob against the stanza types its recipients make (`None`: no recipients
/// file); only the header is read.
pub fn check(blob: impl Read, want: Option<&[String]>) -> Option<Finding> {
    let mut blob = std::io::BufReader::new(blob);
    let mut intro = [0u8; AGE_INTRO.len()];
    let n = super::spool::read_full(&mut blob, &mut intro).unwrap_or(0);
    if intro[..n] != *AGE_INTRO {
        return Some(Finding::NotAge);
    }
    let header = match Decryptor::new(std::io::Cursor::new(intro).chain(blob)) {
        Ok(d) if d.header().profile == Profile::Age => d.header().clone(),
        Ok(_) => return Some(Finding::BadHeader("not an age v1 header".into())),
        Err(e) => return Some(Finding::BadHeader(e.to_string())),
    };
    let want = match want {
        Some(w) => w,
        None => return Some(Finding::NoRecipients),
    };
    let mut got: Vec<String> = header.stanzas.iter().map(|s| s.tag.clone()).collect();
    got.sort();
    (got != want).then(|| Finding::Mismatch { want: want.to_vec(), got })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyperseal::recipient::{self, Kind};
    use hyperseal::{Encryptor, Options};

    #[test]
    fn plaintext_count_and_kind_are_caught() {
        let a = recipient::generate(Kind::X25519).unwrap();
        let b = recipient::generate(Kind::X25519).unwrap();
        let one = vec![recipient::parse_recipient(&a.public).unwrap()];
        let two = vec![
            recipient::parse_recipient(&a.public).unwrap(),
            recipient::parse_recipient(&b.public).unwrap(),
        ];
        let mut file = Vec::new();
        Encryptor::with_recipients(&one, Options::age())
            .unwrap()
            .encrypt_slice(b"x", &mut file, None)
            .unwrap();
        let want_one = stanza_types(&one).unwrap();
        assert_eq!(check(&file[..], Some(&want_one)), None);
        assert!(matches!(
            check(&file[..], Some(&stanza_types(&two).unwrap())),
            Some(Finding::Mismatch { .. })
        ));
        assert_eq!(check(&b"KEY=plaintext\n"[..], Some(&want_one)), Some(Finding::NotAge));
        assert_eq!(check(&file[..], None), Some(Finding::NoRecipients));
        assert!(matches!(
            check(&b"age-encryption.org/v1\n-> X25519\n"[..], None),
            Some(Finding::BadHeader(_))
        ));
    }
}
