//! The one plug-in point for key kinds: a [`Recipient`] wraps the file key into stanzas, an
//! [`Identity`] unwraps them. An identity answers `None` for a stanza that is not its own ("not
//! mine") and `Some(Err(..))` for one that is its own but broken: only the second is fatal,
//! exactly as in age.
//!
//! Labels forbid unsafe mixes: every recipient of a file must carry the same label set, so a
//! post-quantum file can never also be opened by a classic-only key, and a passphrase (which gets
//! a unique random label) must stand alone. [`wrap_all`] enforces that rule.
//!
//! Every kind imports this file and nothing that chooses between kinds: the choosing
//! (`parse.rs`, `kind.rs`) sits above the kinds, this below them.

use std::collections::BTreeSet;

use zeroize::Zeroizing;

use crate::format::Stanza;
use crate::{error::Error, file_key::FileKey};

/// Labels a recipient attaches to its stanzas (see the module docs).
pub type Labels = BTreeSet<String>;

/// The label of recipients that resist a quantum adversary.
pub const POSTQUANTUM: &str = "postquantum";

/// Something that can wrap a file key for one party.
pub trait Recipient: Send + Sync {
    /// Wraps `file_key` into one or more stanzas.
    fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, Labels), Error>;

    /// Bytes that are equal for two recipients exactly when they wrap to the same key (the kind
    /// and its public key), so [`wrap_all`] wraps each key once however often it is named: 600
    /// copies of one key would otherwise be 600 stanzas, and a header no reader accepts.
    /// `None` (the default) is never merged: a passphrase, whose every wrap is its own.
    fn key_id(&self) -> Option<Vec<u8>> {
        None
    }

    /// Whether `stanza` is this recipient's, for kinds whose stanzas carry a key tag (SSH,
    /// RSA-OAEP, age's tag kinds): `Some(true)` or `Some(false)`. `None` (the default): this
    /// kind's stanzas do not say whom they are for (X25519, the post-quantum kinds), so a
    /// re-key can drop them only by rebuilding from the full list.
    fn names_stanza(&self, _stanza: &Stanza) -> Option<bool> {
        None
    }

    /// Whether this recipient may stand beside recipients of either label set, classic or
    /// post-quantum: a symmetric wrap under a secret that never leaves its holder (a passkey's
    /// PRF), which a quantum adversary holding the file cannot undo and which does not weaken a
    /// post-quantum file. It never joins a passphrase, which stands alone. `false` (the
    /// default): its labels must equal the others'.
    fn fits_any_labels(&self) -> bool {
        false
    }

    /// Whether wrapping is computation alone, here, on public keys: nothing is run, asked or
    /// touched (no plugin, no security key, no prompt), so a wrap may be made before a file
    /// needs it, and thrown away unused (`git`'s filter prepares headers ahead). `false` (the
    /// default): wrap only for a file that is being sealed.
    fn wraps_offline(&self) -> bool {
        false
    }
}

/// Something that can unwrap a file key from the stanzas addressed to it.
pub trait Identity: Send + Sync {
    /// `None`: not mine. `Some(Err)`: mine but broken. `Some(Ok)`: the file key.
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>>;

    /// Tries every stanza in order; the first definite answer wins.
    fn unwrap_stanzas(&self, stanzas: &[Stanza]) -> Option<Result<FileKey, Error>> {
        stanzas.iter().find_map(|s| self.unwrap_stanza(s))
    }

    /// Whether [`unwrap_each`](Identity::unwrap_each) answers many stanzas for the cost of one:
    /// an identity whose every use has a fixed price (a plugin: a process, perhaps a PIN or a
    /// touch). `false` (the default): asking stanza by stanza costs nothing more.
    fn unwraps_in_batches(&self) -> bool {
        false
    }

    /// Answers for each of `stanzas` what [`unwrap_stanza`](Identity::unwrap_stanza) would, in
    /// one go (see [`unwraps_in_batches`](Identity::unwraps_in_batches)); `Err`: the batch as a
    /// whole failed. The default asks stanza by stanza.
    #[allow(clippy::type_complexity)]
    fn unwrap_each(&self, stanzas: &[&Stanza]) -> Result<Vec<Option<Result<FileKey, Error>>>, Error> {
        Ok(stanzas.iter().map(|s| self.unwrap_stanza(s)).collect())
    }
}

/// A borrowed identity is an identity, so a list can mix the caller's identities with one made
/// for a single call (a tree re-key's unlocked keys in front of them).
impl<T: Identity + ?Sized> Identity for &T {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        (**self).unwrap_stanza(stanza)
    }
    fn unwrap_stanzas(&self, stanzas: &[Stanza]) -> Option<Result<FileKey, Error>> {
        (**self).unwrap_stanzas(stanzas)
    }
    fn unwraps_in_batches(&self) -> bool {
        (**self).unwraps_in_batches()
    }
    fn unwrap_each(&self, stanzas: &[&Stanza]) -> Result<Vec<Option<Result<FileKey, Error>>>, Error> {
        (**self).unwrap_each(stanzas)
    }
}

/// A freshly generated key pair, as text.
pub struct GeneratedKey {
    /// The identity: a bech32 secret key line, or a PKCS#8 PEM for RSA.
    pub secret: Zeroizing<String>,
    /// The recipient: a bech32 public key, or an SPKI PEM for RSA.
    pub public: String,
}

impl std::fmt::Debug for GeneratedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GeneratedKey {{ public: {:?}, secret: <redacted> }}", self.public)
    }
}

/// Wraps `file_key` for every recipient and enforces the label rule.
pub fn wrap_all(recipients: &[Box<dyn Recipient>], file_key: &FileKey) -> Result<Vec<Stanza>, Error> {
    wrap_refs(&recipients.iter().map(|r| r.as_ref()).collect::<Vec<_>>(), file_key)
}

/// [`wrap_all`] over borrowed recipients (a re-key wraps only the ones not already there).
pub fn wrap_refs(recipients: &[&dyn Recipient], file_key: &FileKey) -> Result<Vec<Stanza>, Error> {
    if recipients.is_empty() {
        return Err(Error::InvalidArgument("no recipients".into()));
    }
    let mut stanzas = Vec::new();
    let mut first: Option<Labels> = None;
    let mut seen = BTreeSet::new();
    let mut any_fits = false;
    for r in recipients {
        if let Some(id) = r.key_id() {
            if !seen.insert(id) {
                continue;
            }
        }
        let (s, labels) = r.wrap_file_key(file_key)?;
        if r.fits_any_labels() {
            any_fits = true;
            stanzas.extend(s);
            continue;
        }
        match &first {
            None => first = Some(labels),
            Some(l) if *l != labels => {
                return Err(Error::IncompatibleRecipients(
                    "post-quantum and classic recipients cannot be mixed (the file would be only as \
                     strong as the classic one), and a passphrase must be the only recipient"
                        .into(),
                ))
            }
            Some(_) => {}
        }
        stanzas.extend(s);
    }
    // Any label but `postquantum` is a passphrase's, which stands alone.
    if any_fits && first.is_some_and(|l| l.iter().any(|x| x != POSTQUANTUM)) {
        return Err(Error::IncompatibleRecipients("a passphrase must be the only recipient".into()));
    }
    Ok(stanzas)
}
