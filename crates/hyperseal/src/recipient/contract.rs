//! The contract every recipient kind keeps, written once and run by each kind's tests with its
//! own keys:
//!
//! * a file key of each length the kind takes wraps into one stanza and opens again;
//! * another key's stanza, or another kind's, is "not mine" (`None`), never an error, so that
//!   decryption goes on to the next identity;
//! * a damaged stanza of this kind is an error, or "not mine" where the kind cannot tell it
//!   from another recipient's (an anonymous stanza): each kind says which, damage by damage.
//!
//! What only one kind promises (stanza shapes, labels, work-factor caps) stays in its own tests;
//! the `shape` check of [`Pair::round_trip`] is where a kind adds its own to the round trip.

use crate::error::Error;
use crate::file_key::FileKey;
use crate::format::Stanza;
use crate::recipient::{Identity, Labels, Recipient};

/// What opening a damaged stanza must give.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Damaged {
    /// `None`: the kind cannot tell the damage from another recipient's stanza.
    NotMine,
    /// `Error::InvalidStanza`: the stanza is this key's, and broken.
    Invalid,
    /// `Error::WrongPassphrase`: a passphrase kind cannot tell damage from a wrong passphrase.
    WrongPassphrase,
}

/// One change to a stanza that opened.
pub(crate) type Damage<'a> = &'a dyn Fn(&mut Stanza);

/// A recipient and the identity that opens what it wraps.
pub(crate) struct Pair<'a> {
    pub(crate) recipient: &'a dyn Recipient,
    pub(crate) identity: &'a dyn Identity,
}

impl Pair<'_> {
    /// Wraps a file key of each of `lens` bytes and opens it again; `shape` checks the kind's
    /// own promises about the stanza and the labels for that length.
    pub(crate) fn round_trip(&self, lens: &[usize], shape: impl Fn(usize, &Stanza, &Labels)) {
        for &len in lens {
            let fk = FileKey::generate(len);
            let (stanzas, labels) = self.recipient.wrap_file_key(&fk).unwrap();
            assert_eq!(stanzas.len(), 1, "one stanza per recipient");
            shape(len, &stanzas[0], &labels);
            let got = self.identity.unwrap_stanzas(&stanzas).expect("mine").expect("opens");
            assert_eq!(got.expose(), fk.expose(), "{len}-byte file key");
        }
    }

    /// The one stanza that wraps a fresh `len`-byte file key to the recipient.
    pub(crate) fn stanza(&self, len: usize) -> Stanza {
        let (mut stanzas, _) = self.recipient.wrap_file_key(&FileKey::generate(len)).unwrap();
        assert_eq!(stanzas.len(), 1, "one stanza per recipient");
        stanzas.remove(0)
    }

    /// `others` (other keys of this kind, or identities of other kinds) pass `own`, a stanza
    /// wrapped to the recipient, by; and the identity passes each of `foreign` by.
    pub(crate) fn not_mine(&self, own: &Stanza, others: &[&dyn Identity], foreign: &[Stanza]) {
        for (i, other) in others.iter().enumerate() {
            assert!(other.unwrap_stanza(own).is_none(), "identity {i} of others: not mine");
        }
        for s in foreign {
            assert!(self.identity.unwrap_stanza(s).is_none(), "{s:?}: not mine");
        }
    }

    /// Each of `damages`, made to a copy of `own`, gives `outcome` when the identity opens it.
    pub(crate) fn damaged(&self, own: &Stanza, outcome: Damaged, damages: &[Damage]) {
        for damage in damages {
            let mut s = own.clone();
            damage(&mut s);
            let got = self.identity.unwrap_stanza(&s);
            let kept = matches!(
                (outcome, &got),
                (Damaged::NotMine, None)
                    | (Damaged::Invalid, Some(Err(Error::InvalidStanza(_))))
                    | (Damaged::WrongPassphrase, Some(Err(Error::WrongPassphrase)))
            );
            assert!(kept, "{outcome:?} expected for {s:?}, got {:?}", got.map(|r| r.map(drop)));
        }
    }
}
