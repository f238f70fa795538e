//! Re-keying one stored blob for `hyperseal git rekey`: the blob is an age file in git's
//! object store, so its new form is a new blob (git never changes one in place). Header-only by
//! default: the same file key wrapped to the new recipients, the payload bytes after the header
//! kept as they are. A rotation draws a new file key and seals the plaintext again, which is
//! the only way a removed recipient (who may have kept the old file key) loses what is
//! written from then on.

use std::io::{self, BufReader, Read, Write};
use std::sync::Arc;

use zeroize::Zeroizing;

use super::filter::AGE_INTRO;
use crate::spool::read_full;
use hyperseal::format::Stanza;
use hyperseal::recipient::{Identity, Recipient};
use hyperseal::rekey::{Change, Rekey};
use hyperseal::unlock::{opens_probe, probes};
use hyperseal::FileKey;
use hyperseal::{Decryptor, Encryptor, Error, Options};

/// What re-keying one blob did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rekeyed {
    /// Stanzas in the old header (X25519 and post-quantum stanzas do not say whom they are for,
    /// so the counts, not names, are what can be shown).
    pub before: usize,
    /// Stanzas in the new header.
    pub after: usize,
    /// Bytes of the old blob's header: with a header-only re-key, every byte from here on is
    /// the old blob's.
    pub old_header_len: usize,
    /// Whether a new file key sealed a new payload.
    pub rotated: bool,
}

/// The change that re-keys a blob to `recipients`, exactly those (the whole new list). Refuses
/// an empty list: a file nobody can open is never written.
pub fn change_to(recipients: Vec<Box<dyn Recipient>>) -> Result<Change, Error> {
    if recipients.is_empty() {
        return Err(Error::InvalidRecipient("the recipients file names no recipient".into()));
    }
    Ok(Change { set: Some(recipients), ..Change::default() })
}

/// The identities to re-key a round of stored `blobs` with, for `changes` (the distinct changes
/// of the round's paths), with one run of each identity that unwraps in batches (a plugin: one
/// PIN, one touch): as [`unlock_blobs`](super::unlock_blobs), and also asked, in the same run,
/// about one throwaway wrap per recipient of each change. Whether an identity opens a
/// recipient's wrap does not depend on the file key, so the second answer, for each change,
/// says whether an identity is known to open every new header it makes: then
/// [`rekey_blob`]'s lock-out check needs no run per file.
pub fn unlock_for_rekey(
    blobs: &[&[u8]],
    identities: &[Arc<dyn Identity>],
    changes: &[&Change],
) -> (Vec<Box<dyn Identity>>, Vec<bool>) {
    // Wraps to offer only where an identity would be asked in a batch (each wrap to a plugin's
    // recipient runs that plugin).
    let batching = identities.iter().any(|id| id.unwraps_in_batches());
    let probes: Vec<Option<(FileKey, Vec<Stanza>)>> =
        changes.iter().map(|c| if batching { probes(c) } else { None }).collect();
    let extra: Vec<Stanza> = probes.iter().flatten().flat_map(|(_, wraps)| wraps.iter().cloned()).collect();
    let (views, probed) = super::checkout::unlock_asking(blobs, identities, &extra);
    let mut known = vec![false; changes.len()];
    for said in &probed {
        let mut at = 0;
        for (c, (key, wraps)) in probes.iter().enumerate().filter_map(|(c, p)| Some((c, p.as_ref()?))) {
            known[c] |= opens_probe(said.get(at..at + wraps.len()).unwrap_or_default(), key);
            at += wraps.len();
        }
    }
    (views, known)
}

/// Writes to `out` the blob that opens for `change`'s recipients instead of the stored one,
/// which `open` reads from its start (called once, twice for a rotation) and `identities`
/// open. Without `rotate` the new blob is a new header followed by the stored bytes after its
/// header, copied as they stream; with it, the plaintext sealed again under a fresh file key.
/// Refuses a result that `identities` could no longer open (the caller would lose the file;
/// asked per file unless `opens_known`, from [`unlock_for_rekey`]), and a blob that is not a
/// binary age file. Nothing is held whole in memory.
pub fn rekey_blob<'a>(
    open: &mut dyn FnMut() -> io::Result<Box<dyn Read + 'a>>,
    identities: &[Box<dyn Identity>],
    change: &Change,
    rotate: bool,
    opens_known: bool,
    out: &mut dyn Write,
) -> Result<Rekeyed, Error> {
    let mut input = BufReader::new(open()?);
    let mut intro = [0u8; AGE_INTRO.len()];
    if read_full(&mut input, &mut intro)? != intro.len() || intro[..] != *AGE_INTRO {
        return Err(Error::InvalidArgument("the stored blob is not an age file".into()));
    }
    let mut input = BufReader::new(AGE_INTRO.chain(input));
    let rekey = Rekey::open(&mut input, identities)?;
    let old_header_len = rekey.header_len();
    // Also the lock-out check: the identities must open a wrap to the new list.
    let plan = rekey.rewrap_checked(change, identities, opens_known)?;
    let done =
        Rekeyed { before: plan.before.len(), after: plan.after.len(), old_header_len, rotated: rotate };
    if rotate {
        drop(input);
        let recipients = change.set.as_deref().unwrap_or_default();
        let mut reader = Decryptor::new(open()?)?.into_reader(identities)?;
        let mut w = Encryptor::with_recipients(recipients, Options::age())?.wrap_output(out)?;
        let mut buf = Zeroizing::new(vec![0u8; 64 << 10]);
        loop {
            let n = reader.read(&mut buf[..])?;
            if n == 0 {
                break;
            }
            w.write_all(&buf[..n])?;
        }
        w.finish()?;
        return Ok(done);
    }
    // No slack: a git blob is written whole anyway, and `verify` expects exactly the stanzas
    // the recipients make.
    out.write_all(&rekey.encode(&plan, None, false)?.expect("no target length"))?;
    io::copy(&mut input, out)?;
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyperseal::recipient::{generate, parse_identities, parse_recipient, Kind};

    fn key() -> (Vec<Box<dyn Identity>>, String) {
        let k = generate(Kind::X25519).unwrap();
        (parse_identities(&k.secret).unwrap(), k.public)
    }

    fn run(
        blob: &[u8],
        ids: &[Box<dyn Identity>],
        to: &[&str],
        rotate: bool,
    ) -> Result<(Vec<u8>, Rekeyed), Error> {
        let change = change_to(to.iter().map(|p| parse_recipient(p).unwrap()).collect())?;
        let mut out = Vec::new();
        let mut open = || Ok(Box::new(blob) as Box<dyn Read>);
        let done = rekey_blob(&mut open, ids, &change, rotate, false, &mut out)?;
        Ok((out, done))
    }

    #[test]
    fn a_member_removed_keeps_the_payload_and_a_rotation_replaces_it() {
        let ((alice, alice_pub), (bob, bob_pub)) = (key(), key());
        let both: Vec<Box<dyn Recipient>> =
            [&alice_pub, &bob_pub].map(|p| parse_recipient(p).unwrap()).into();
        let mut blob = Vec::new();
        Encryptor::with_recipients(&both, Options::age())
            .unwrap()
            .encrypt_slice(b"TOKEN=1\n", &mut blob, None)
            .unwrap();

        let (new, done) = run(&blob, &alice, &[&alice_pub], false).unwrap();
        assert_eq!((done.before, done.after, done.rotated), (2, 1, false));
        assert_eq!(new[new.len() - (blob.len() - done.old_header_len)..], blob[done.old_header_len..]);
        assert_eq!(hyperseal::decrypt(&alice, &new).unwrap(), b"TOKEN=1\n");
        assert!(hyperseal::decrypt(&bob, &new).is_err(), "the removed member no longer opens it");

        let (rotated, done) = run(&blob, &alice, &[&alice_pub], true).unwrap();
        assert!(done.rotated && !rotated.ends_with(&blob[done.old_header_len..]));
        assert_eq!(hyperseal::decrypt(&alice, &rotated).unwrap(), b"TOKEN=1\n");
    }

    #[test]
    fn a_list_that_locks_the_caller_out_or_a_plaintext_blob_is_refused() {
        let ((alice, alice_pub), (_, bob_pub)) = (key(), key());
        let to: Vec<Box<dyn Recipient>> = vec![parse_recipient(&alice_pub).unwrap()];
        let mut blob = Vec::new();
        Encryptor::with_recipients(&to, Options::age())
            .unwrap()
            .encrypt_slice(b"x", &mut blob, None)
            .unwrap();
        assert!(run(&blob, &alice, &[&bob_pub], false).is_err(), "alice would lose the file");
        assert!(run(b"TOKEN=1\n", &alice, &[&alice_pub], false).is_err());
        assert!(run(&blob, &alice, &[], false).is_err(), "an empty list");
    }

    #[test]
    fn a_batching_identity_answers_a_rounds_rekey_and_its_lock_out_check_in_one_run() {
        use crate::checkout::tests::Batching;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let ((mine, mine_pub), (_, their_pub)) = (key(), key());
        let both: Vec<Box<dyn Recipient>> =
            [&mine_pub, &their_pub].map(|p| parse_recipient(p).unwrap()).into();
        let blobs: Vec<Vec<u8>> = (0..10)
            .map(|i| {
                let mut blob = Vec::new();
                let e = Encryptor::with_recipients(&both, Options::age()).unwrap();
                e.encrypt_slice(format!("TOKEN={i}\n").as_bytes(), &mut blob, None).unwrap();
                blob
            })
            .collect();
        let id =
            Arc::new(Batching { inner: mine, rounds: AtomicUsize::new(0), singles: AtomicUsize::new(0) });
        let shared: Arc<dyn Identity> = id.clone();
        let change = change_to(vec![parse_recipient(&mine_pub).unwrap()]).unwrap();
        let refs: Vec<&[u8]> = blobs.iter().map(Vec::as_slice).collect();
        let (view, known) = unlock_for_rekey(&refs, &[shared], &[&change]);
        assert_eq!(known, [true], "the batch opened the throwaway wrap to the new list");
        for (i, blob) in blobs.iter().enumerate() {
            let mut out = Vec::new();
            let mut open = || Ok(Box::new(&blob[..]) as Box<dyn Read>);
            rekey_blob(&mut open, &view, &change, false, known[0], &mut out).unwrap();
            assert_eq!(hyperseal::decrypt(&id.inner, &out).unwrap(), format!("TOKEN={i}\n").as_bytes());
        }
        assert_eq!(id.rounds.load(Ordering::SeqCst), 1, "one run for the round");
        assert_eq!(id.singles.load(Ordering::SeqCst), 0, "and none per file, the lock-out check included");
        // Without that answer, the check asks the identity about each new header.
        let mut open = || Ok(Box::new(&blobs[0][..]) as Box<dyn Read>);
        rekey_blob(&mut open, &view, &change, false, false, &mut Vec::new()).unwrap();
        assert!(id.singles.load(Ordering::SeqCst) > 0);
    }
}
