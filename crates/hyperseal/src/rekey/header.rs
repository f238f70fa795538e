//! The header step of a re-key: who should open the file ([`Change`]), the plan it gives
//! ([`Plan`]) and the file key held while the new stanzas are made ([`Rekey`]), for one header
//! in memory. The file, tree and sops re-keys below build on it; the rules it keeps are the
//! parent module's docs.

use std::collections::BTreeSet;
use std::io::BufRead;

use crate::format::slack::{self, slack_for, SLACK_TYPE};
use crate::format::{Header, Stanza};
use crate::recipient::{wrap_all, wrap_refs, Identity, Recipient, POSTQUANTUM};
use crate::{error::Error, file_key::FileKey, keys};

/// Stanza types whose recipients resist a quantum adversary (they carry the `postquantum`
/// label when written).
const POSTQUANTUM_TYPES: [&str; 4] = ["mlkem768x25519", "mlkem1024", "mlkem768p256", "mlkem768p256tag"];
/// Stanza types of a passphrase, which must stand alone.
const PASSPHRASE_TYPES: [&str; 2] = ["scrypt", "argon2id"];
/// Stanza types that stand beside either label set (`Recipient::fits_any_labels`): a
/// passkey's symmetric wrap.
const ANY_LABEL_TYPES: [&str; 1] = [crate::recipient::fido2prf::LABEL];

/// Who should open the file after the re-key.
#[derive(Default)]
pub struct Change {
    /// The full new list (replaces every stanza). Exclusive with `add` and `remove`.
    pub set: Option<Vec<Box<dyn Recipient>>>,
    /// Recipients to add; every other stanza is kept.
    pub add: Vec<Box<dyn Recipient>>,
    /// Recipients to remove (kinds whose stanzas carry a key tag).
    pub remove: Vec<Box<dyn Recipient>>,
    /// Allow a result that none of the identities the file was opened with can open.
    pub remove_own: bool,
}

impl Change {
    /// Names this change (hex SHA-256), the same from every door (CLI, Node, Python): each list
    /// (set, add, remove) as the set of its recipients' key ids, and `remove_own`. A tree's or a
    /// bucket's manifest records it, so a resumed run with another change is refused. A
    /// recipient without a key id (a passphrase, whose every wrap is its own) makes the change
    /// one of a kind: a run with it never resumes another's manifest.
    pub fn id(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(b"hyperseal rekey change v1");
        let lists =
            [(&b"set"[..], self.set.as_deref()), (b"add", Some(&self.add)), (b"remove", Some(&self.remove))];
        for (name, list) in lists {
            h.update([0]);
            h.update(name);
            let Some(list) = list else { continue };
            let mut ids: Vec<Vec<u8>> =
                list.iter().map(|r| r.key_id().unwrap_or_else(one_of_a_kind)).collect();
            ids.sort();
            ids.dedup();
            for id in ids {
                h.update((id.len() as u64).to_be_bytes());
                h.update(&id);
            }
        }
        h.update([u8::from(self.remove_own)]);
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// Random bytes for a recipient without a key id. Should the system's generator fail, the
/// wrap of that recipient fails the same way before any file is touched.
fn one_of_a_kind() -> Vec<u8> {
    let mut b = vec![0; 32];
    let _ = crate::rng::fill(&mut b);
    b
}

/// The new stanza list, and what changed.
pub struct Plan {
    stanzas: Vec<Stanza>,
    /// Stanza types before, in order (slack left out).
    pub before: Vec<String>,
    /// Stanza types after, in order.
    pub after: Vec<String>,
    /// Stanzas of the old header that are not in the new one (other than slack). Non-zero means
    /// someone lost access to *new* copies only: see the module docs.
    pub removed: usize,
    /// Stanzas wrapped for new recipients.
    pub added: usize,
}

/// A file's header opened for re-keying. Holds the file key only to MAC the new header.
pub struct Rekey {
    header: Header,
    file_key: FileKey,
}

impl std::fmt::Debug for Rekey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Rekey({:?} header, {} stanzas, file key redacted)",
            self.header.profile,
            self.header.stanzas.len()
        )
    }
}

impl Rekey {
    /// Reads a binary header from `input` (leaving it at the salt) and opens it with
    /// `identities`: the file key must unwrap and the header MAC verify.
    pub fn open(input: &mut impl BufRead, identities: &[Box<dyn Identity>]) -> Result<Rekey, Error> {
        Rekey::from_header(Header::read_from(input)?, identities)
    }

    /// [`Rekey::open`] for a header already parsed (from a `Decryptor`, say).
    pub fn from_header(header: Header, identities: &[Box<dyn Identity + '_>]) -> Result<Rekey, Error> {
        let file_key = keys::open_file_key(&header, identities)?;
        Ok(Rekey { header, file_key })
    }

    /// The header as it is now.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Bytes of the header on disk now (version line through MAC line): the payload salt
    /// starts here.
    pub fn header_len(&self) -> usize {
        self.header.encode_len()
    }

    /// The new stanza list for `change`, checked against the format's rules (module docs), and
    /// that `identities` (those the file was opened with) can still open it unless
    /// [`Change::remove_own`].
    pub fn rewrap(&self, change: &Change, identities: &[Box<dyn Identity + '_>]) -> Result<Plan, Error> {
        self.rewrap_checked(change, identities, false)
    }

    /// [`Rekey::rewrap`], where `opens_known` says an identity is already known to open a wrap
    /// to one of the change's recipients (a tree's batch answered that for the whole window),
    /// so the lock-out check need not ask it again for this file.
    pub fn rewrap_checked(
        &self,
        change: &Change,
        identities: &[Box<dyn Identity + '_>],
        opens_known: bool,
    ) -> Result<Plan, Error> {
        let old: Vec<&Stanza> = self.header.stanzas.iter().filter(|s| s.tag != SLACK_TYPE).collect();
        let before: Vec<String> = old.iter().map(|s| s.tag.clone()).collect();
        let (stanzas, removed, added) = match &change.set {
            Some(list) => {
                if !change.add.is_empty() || !change.remove.is_empty() {
                    return Err(Error::InvalidArgument(
                        "give the full new list, or additions and removals, not both".into(),
                    ));
                }
                let new = wrap_all(list, &self.file_key)?;
                // Stanzas that name their key and are named again are kept recipients; the
                // anonymous ones cannot be told apart, so they count as removed.
                let kept =
                    old.iter().filter(|s| list.iter().any(|r| r.names_stanza(s) == Some(true))).count();
                let added = new.len() - kept.min(new.len());
                (new, old.len() - kept, added)
            }
            None => self.edit(&old, change)?,
        };
        self.check_profile(&stanzas)?;
        if postquantum_only(&old) && stanzas.iter().any(|s| classical(&s.tag)) {
            return Err(Error::IncompatibleRecipients(
                "this file key is wrapped to post-quantum recipients only: wrapping the same key to a \
                 classical recipient would let a future break of that key open this file and every \
                 earlier copy of it; rotate instead (a fresh file key, the payload re-encrypted)"
                    .into(),
            ));
        }
        let probe =
            Header::new(self.header.profile, self.header.suite, self.header.chunk_size, stanzas.clone())?;
        // Asked only when it matters: an identity may be a plugin, whose every use runs a program.
        let still_opens = || {
            identities.iter().any(|id| {
                matches!(id.unwrap_stanzas(&probe.stanzas), Some(Ok(k)) if k.expose() == self.file_key.expose())
            })
        };
        // An addition keeps every old stanza byte for byte, the one these identities opened
        // among them, so they still open the result: not asked again (a TPM key would run its
        // ECDH and unseal once more per file, a plugin once more per window).
        let only_added = change.set.is_none() && change.remove.is_empty();
        if !change.remove_own && !opens_known && !only_added && !still_opens() {
            return Err(Error::InvalidArgument(
                "the new recipients leave out every key this file was opened with: you could not open it again"
                    .into(),
            ));
        }
        let after = stanzas.iter().map(|s| s.tag.clone()).collect();
        Ok(Plan { stanzas, before, after, removed, added })
    }

    /// An edit: the old stanzas less the removed ones, then the added recipients' stanzas.
    fn edit(&self, old: &[&Stanza], change: &Change) -> Result<(Vec<Stanza>, usize, usize), Error> {
        if change.add.is_empty() && change.remove.is_empty() {
            return Err(Error::InvalidArgument(
                "nothing to change: name recipients to set, add or remove".into(),
            ));
        }
        if old.iter().any(|s| PASSPHRASE_TYPES.contains(&s.tag.as_str())) {
            return Err(Error::IncompatibleRecipients(
                "a passphrase file has one stanza only: give the full new list instead (it replaces the passphrase)"
                    .into(),
            ));
        }
        let mut kept: Vec<Stanza> = Vec::with_capacity(old.len() + change.add.len());
        let mut matched = vec![false; change.remove.len()];
        for s in old {
            let mut drop = false;
            for (i, r) in change.remove.iter().enumerate() {
                match r.names_stanza(s) {
                    Some(true) => (drop, matched[i]) = (true, true),
                    Some(false) => {}
                    None => {
                        return Err(Error::InvalidArgument(format!(
                            "recipient {} of the removals cannot be removed by name: X25519 and post-quantum \
                             stanzas do not say whom they are for; give the full new list instead",
                            i + 1
                        )))
                    }
                }
            }
            if !drop {
                kept.push((*s).clone());
            }
        }
        if let Some(i) = matched.iter().position(|m| !m) {
            return Err(Error::InvalidRecipient(format!(
                "recipient {} of the removals is not a recipient of this file",
                i + 1
            )));
        }
        let removed = old.len() - kept.len();
        // Recipients whose stanza is already there (by key tag) are not wrapped again.
        let new: Vec<&dyn Recipient> = change
            .add
            .iter()
            .map(|r| r.as_ref())
            .filter(|r| !kept.iter().any(|s| r.names_stanza(s) == Some(true)))
            .collect();
        let mut added = 0;
        if !new.is_empty() {
            let wrapped = wrap_refs(&new, &self.file_key)?;
            added = wrapped.len();
            let labels_new = labels(&wrapped);
            let labelled = |v: &[Stanza]| v.iter().any(|s| !ANY_LABEL_TYPES.contains(&s.tag.as_str()));
            if labelled(&kept) && labelled(&wrapped) && labels(&kept) != labels_new {
                return Err(Error::IncompatibleRecipients(if labels_new.is_empty() {
                    "the file is post-quantum: a classic recipient would make it only as strong as the classic key".into()
                } else {
                    "post-quantum and classic recipients cannot be mixed: give the full new list of post-quantum recipients instead".into()
                }));
            }
            kept.extend(wrapped);
        }
        Ok((kept, removed, added))
    }

    /// Refuses stanzas the file's profile cannot hold (age files are for age).
    fn check_profile(&self, stanzas: &[Stanza]) -> Result<(), Error> {
        crate::encrypt::check_profile(self.header.profile, stanzas)
    }

    /// The new header for `plan`, MAC'd under the file key. With `len`, exactly `len` bytes (slack
    /// stanzas fill the difference; `None` if the new header is longer, or the difference is one
    /// no slack stanza can fill, or a passphrase stanza must stand alone). Without it, the
    /// header with room to grow ([`slack_for`]) if `slack`.
    pub fn encode(&self, plan: &Plan, len: Option<usize>, slack: bool) -> Result<Option<Vec<u8>>, Error> {
        let h = &self.header;
        let bare = Header::new(h.profile, h.suite, h.chunk_size, plan.stanzas.clone())?;
        let target = match len {
            Some(n) => n,
            None if !slack || bare.is_passphrase() => {
                return Ok(Some(keys::seal_header(&bare, &self.file_key)))
            }
            None => bare.encode_len() + slack_for(bare.encode_len()),
        };
        let Some(pad) = target.checked_sub(bare.encode_len()) else { return Ok(None) };
        if pad == 0 {
            return Ok(Some(keys::seal_header(&bare, &self.file_key)));
        }
        if bare.is_passphrase() {
            return Ok(None);
        }
        let Some(fill) = slack::fill(pad) else { return Ok(None) };
        let mut stanzas = plan.stanzas.clone();
        stanzas.extend(fill);
        let padded = Header::new(h.profile, h.suite, h.chunk_size, stanzas)?;
        debug_assert_eq!(padded.encode_len(), target);
        Ok(Some(keys::seal_header(&padded, &self.file_key)))
    }
}

/// Re-keys a binary file given its start (at least its whole header; the whole file is fine):
/// returns the new header and the length of the old one. The new file is the new header
/// followed by the old file from that length on (salt and payload, untouched) — how the
/// bindings re-key bytes, and a browser `File` as `new Blob([header, file.slice(old_len)])`
/// without reading the payload. The new header has the old one's length where it fits, else
/// it carries fresh slack. Armored input is refused (its payload is not at a fixed offset).
pub fn rekey_head(
    head: &[u8],
    identities: &[Box<dyn Identity>],
    change: &Change,
) -> Result<(Vec<u8>, usize, Plan), Error> {
    if crate::format::armor::is_armored(head) {
        return Err(Error::InvalidArgument(
            "armored files are re-keyed as files (the CLI or rekey_file), not as bytes".into(),
        ));
    }
    let rekey = Rekey::open(&mut &head[..], identities)?;
    let old_len = rekey.header_len();
    let plan = rekey.rewrap(change, identities)?;
    let new = match rekey.encode(&plan, Some(old_len), false)? {
        Some(same_length) => same_length,
        None => rekey.encode(&plan, None, true)?.expect("no target length"),
    };
    Ok((new, old_len, plan))
}

/// Whether a stanza of this type is wrapped with classical public-key cryptography only: not
/// post-quantum, not a passphrase or a passkey (symmetric), not slack. Types this build does not know
/// (plugins) count as classical.
fn classical(tag: &str) -> bool {
    !POSTQUANTUM_TYPES.contains(&tag)
        && !PASSPHRASE_TYPES.contains(&tag)
        && !ANY_LABEL_TYPES.contains(&tag)
        && tag != SLACK_TYPE
}

/// Whether the file key is protected against a quantum adversary: some stanza is post-quantum
/// and none is classical.
fn postquantum_only(stanzas: &[&Stanza]) -> bool {
    stanzas.iter().any(|s| POSTQUANTUM_TYPES.contains(&s.tag.as_str()))
        && !stanzas.iter().any(|s| classical(&s.tag))
}

/// The label set stanzas of these types were written with: `postquantum` if any is.
fn labels(stanzas: &[Stanza]) -> BTreeSet<&'static str> {
    match stanzas.iter().any(|s| POSTQUANTUM_TYPES.contains(&s.tag.as_str())) {
        true => BTreeSet::from([POSTQUANTUM]),
        false => BTreeSet::new(),
    }
}
