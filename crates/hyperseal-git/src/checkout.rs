//! Many stored blobs opened at once, for a frontend that writes the work tree itself (`hyperseal
//! git unlock` checking out thousands of small files): the same decision per blob as the
//! filter's smudge, and one round with each identity that unwraps in batches (a plugin: perhaps
//! a PIN or a touch; the agent: a round trip) for all of them, as a tree re-key asks, instead of
//! one per file. After that round the blobs open offline, so the frontend may open them on
//! every core.

use std::sync::Arc;

use zeroize::Zeroizing;

use super::filter::{left_for_others, AGE_INTRO};
use hyperseal::format::Stanza;
use hyperseal::recipient::Identity;
use hyperseal::unlock::{ask, mark_opened, Cached};
use hyperseal::{limits, Decryptor, Error};

/// The smudge of a blob held in memory: the same decision as
/// [`Filter::smudge`](super::Filter::smudge). `None`: the work tree gets the blob as stored
/// (locked, not an age file, or for other recipients); `Some`: its plaintext, authenticated
/// whole.
pub fn smudge_blob(blob: &[u8], ids: &[Box<dyn Identity>]) -> Result<Option<Zeroizing<Vec<u8>>>, Error> {
    if ids.is_empty() || !blob.starts_with(AGE_INTRO) {
        return Ok(None);
    }
    let Some(mut r) = left_for_others(Decryptor::new(blob).and_then(|d| d.into_reader(ids)))? else {
        return Ok(None);
    };
    // Room for all of it: the plaintext is shorter than the file, so the buffer never moves
    // (a moved buffer would leave a copy of the plaintext behind).
    let mut out = Zeroizing::new(Vec::with_capacity(blob.len()));
    std::io::Read::read_to_end(&mut r, &mut out)?;
    Ok(Some(out))
}

/// The identities to open `blobs` with: each one that unwraps in batches asked once about the
/// stanzas of every age file among them that no identity before it opens (at most
/// [`limits::PLUGIN_BATCH`] stanzas; past that, it is asked per file), the others as they are.
/// A blob that is not an age file adds nothing.
pub fn unlock_blobs(blobs: &[&[u8]], identities: &[Arc<dyn Identity>]) -> Vec<Box<dyn Identity>> {
    unlock_asking(blobs, identities, &[]).0
}

/// One answer for each of `extra`, in order, from one identity asked in a batch.
pub(crate) type Probed = Vec<Option<Result<hyperseal::FileKey, hyperseal::Error>>>;

/// [`unlock_blobs`], each identity that unwraps in batches also asked about the `extra` stanzas
/// in the same run: the views, and the answers each identity asked gave for `extra`.
pub(crate) fn unlock_asking(
    blobs: &[&[u8]],
    identities: &[Arc<dyn Identity>],
    extra: &[Stanza],
) -> (Vec<Box<dyn Identity>>, Vec<Probed>) {
    let mut headers: Vec<Vec<Stanza>> = Vec::new();
    if identities.iter().any(|id| id.unwraps_in_batches()) {
        for blob in blobs.iter().filter(|b| b.starts_with(AGE_INTRO)) {
            let Ok(d) = Decryptor::from_slice(blob) else { continue };
            if headers.iter().map(Vec::len).sum::<usize>() + d.header().stanzas.len() > limits::PLUGIN_BATCH {
                break;
            }
            headers.push(d.header().stanzas.clone());
        }
    }
    let mut opened = vec![false; headers.len()];
    let mut out: Vec<Box<dyn Identity>> = Vec::with_capacity(identities.len());
    let mut probed = Vec::new();
    for id in identities {
        let answers = match id.unwraps_in_batches() && (!headers.is_empty() || !extra.is_empty()) {
            true => {
                let (answers, said) = ask(&**id, &headers, &opened, extra);
                probed.push(said);
                answers
            }
            false => Default::default(),
        };
        let view: Box<dyn Identity> = Box::new(Cached { id: id.clone(), answers });
        mark_opened(&*view, &headers, &mut opened);
        out.push(view);
    }
    (out, probed)
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use hyperseal::recipient::{self, Kind};
    use hyperseal::FileKey;

    /// An identity that answers in batches (as a plugin or the agent does), counting the
    /// rounds and the stanzas it is asked about one by one.
    pub(crate) struct Batching {
        pub(crate) inner: Vec<Box<dyn Identity>>,
        pub(crate) rounds: AtomicUsize,
        pub(crate) singles: AtomicUsize,
    }

    impl Identity for Batching {
        fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
            self.singles.fetch_add(1, Ordering::SeqCst);
            self.inner[0].unwrap_stanza(stanza)
        }
        fn unwraps_in_batches(&self) -> bool {
            true
        }
        fn unwrap_each(&self, stanzas: &[&Stanza]) -> Result<Vec<Option<Result<FileKey, Error>>>, Error> {
            self.rounds.fetch_add(1, Ordering::SeqCst);
            Ok(stanzas.iter().map(|s| self.inner[0].unwrap_stanza(s)).collect())
        }
    }

    #[test]
    fn a_batching_identity_is_asked_once_for_every_blob() {
        let mine = recipient::generate(Kind::X25519).unwrap();
        let theirs = recipient::generate(Kind::X25519).unwrap();
        // Age files, as the filter stores them.
        let seal = |k: &recipient::GeneratedKey, text: &[u8]| {
            let to = vec![recipient::parse_recipient(&k.public).unwrap()];
            let mut file = Vec::new();
            let e = hyperseal::Encryptor::with_recipients(&to, hyperseal::Options::age()).unwrap();
            e.encrypt_slice(text, &mut file, None).unwrap();
            file
        };
        let mut blobs: Vec<Vec<u8>> =
            (0..20).map(|i| seal(&mine, format!("secret {i}").as_bytes())).collect();
        blobs.push(seal(&theirs, b"not for me"));
        blobs.push(b"committed in the clear".to_vec());
        let id = Arc::new(Batching {
            inner: recipient::parse_identities(&mine.secret).unwrap(),
            rounds: AtomicUsize::new(0),
            singles: AtomicUsize::new(0),
        });
        let shared: Arc<dyn Identity> = id.clone();
        let refs: Vec<&[u8]> = blobs.iter().map(Vec::as_slice).collect();
        let ids = unlock_blobs(&refs, &[shared]);
        for (i, blob) in blobs.iter().enumerate().take(20) {
            let opened = smudge_blob(blob, &ids).unwrap().expect("mine");
            assert_eq!(&opened[..], format!("secret {i}").as_bytes());
        }
        assert!(smudge_blob(&blobs[20], &ids).unwrap().is_none(), "for other recipients: left as stored");
        assert!(smudge_blob(&blobs[21], &ids).unwrap().is_none(), "not an age file: left as stored");
        assert!(smudge_blob(&blobs[0], &[]).unwrap().is_none(), "locked: left as stored");
        assert_eq!(id.rounds.load(Ordering::SeqCst), 1, "one round for all of them");
        assert_eq!(id.singles.load(Ordering::SeqCst), 0, "and nothing asked one by one");
        // A damaged file is an error, not plaintext.
        let mut bad = blobs[1].clone();
        let n = bad.len();
        bad[n - 5] ^= 1;
        assert!(smudge_blob(&bad, &ids).is_err());
    }
}
