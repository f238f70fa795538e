//! `--rotate` for sops files, as `sops rotate` does it: a fresh data key, every sealed value
//! and comment sealed again under it, the `mac` checked and sealed again, `lastmodified` set,
//! and the age entries written anew for the target recipients.
//!
//! Removing a recipient does not revoke what it may have kept: the old data key opens every
//! value of every earlier version in git history. Rotation makes everything written from now
//! on need the new key. Values are moved, never re-typed: each plaintext is sealed again with
//! its own type and path, and the rest of the file keeps its bytes.
//!
//! The `mac` is checked before anything is sealed again, so a file whose values were changed
//! behind sops's back is refused rather than signed anew. With several key groups the new key is
//! split again as sops splits it (`shamir.rs`), one share per group. A file with PGP or KMS
//! entries is refused: its new key would need wraps only those key sources make.

use std::ops::Range;
use std::time::SystemTime;

use zeroize::Zeroizing;

use super::datakey::{old_key, still_opens_encs, wrap};
use super::formats::Format;
use super::model::{refuse, shown, Item, SopsOutcome};
use super::rekey::{apply, wanted_lists, ReadRecipient};
use super::shamir;
use super::target::Target;
use super::values::{self, parse_sealed, Values, ENC_PREFIX};
use hyperseal::recipient::{parse_recipient, Identity};
use hyperseal::Error;

/// Rotates one sops file held in memory, as `sops rotate` does: a fresh data key, every
/// `ENC[…]` value and comment sealed again under it with a fresh IV, the `mac` checked and
/// sealed again, `lastmodified` set to `now`, and each key group's age entries made for
/// `target`'s recipients (with several groups, each wrapping its new Shamir share). A change that leaves no entry that `identities` open is refused
/// unless `force`.
pub fn rotate(
    input: &[u8],
    format: Format,
    target: &Target,
    identities: &[Box<dyn Identity>],
    force: bool,
    now: SystemTime,
) -> Result<SopsOutcome, Error> {
    rotate_with(input, format, target, identities, force, &|r| parse_recipient(r), now)
}

/// [`rotate`] with the caller's reading of a recipient string.
pub fn rotate_with(
    input: &[u8],
    format: Format,
    target: &Target,
    identities: &[Box<dyn Identity>],
    force: bool,
    recipient: &ReadRecipient<'_>,
    now: SystemTime,
) -> Result<SopsOutcome, Error> {
    let (text, layout) = format.read(input)?;
    let meta = layout.meta();
    let groups = &meta.groups;
    if groups.iter().any(|g| !g.others.is_empty()) {
        return Err(refuse(
            "--rotate takes files whose keys are all age: PGP and KMS wrap the new key only in sops (sops rotate)",
        ));
    }
    // sops: a file of several groups needs `threshold` of them (all, when unset).
    let threshold = match groups.len() {
        1 => 1,
        n => meta.threshold.filter(|t| *t > 0).unwrap_or(n),
    };
    if threshold > groups.len() {
        return Err(refuse("malformed sops metadata: a shamir_threshold above the number of key groups"));
    }
    let mut want = wanted_lists(meta, target)?;
    for list in &mut want {
        let mut seen = Vec::new();
        list.retain(|r| {
            !seen.contains(r) && {
                seen.push(r.clone());
                true
            }
        });
        if list.is_empty() {
            return Err(refuse(
                "the change leaves a key group without an age entry: a rotated file needs one",
            ));
        }
    }
    let old = old_key(groups, threshold, identities)?;

    let found = format.values(text)?;
    let opened = open_all(text, &found, &old)?;
    let hash = check_mac(text, &found, &opened, &old)?;

    let mut new = Zeroizing::new([0u8; 32]);
    hyperseal::fill_random(&mut new[..])?;
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    for (plain, aad, kind, at) in opened.iter().flatten() {
        edits.push((at.clone(), values::seal(&new[..], plain, aad, kind)?));
    }
    // The values are the same, so the hash is: only its seal and the time change.
    let lastmodified = values::rfc3339(now);
    for at in &found.mac {
        edits.push((at.clone(), values::seal(&new[..], hash.as_bytes(), &lastmodified, "str")?));
    }
    for (at, _) in &found.lastmodified {
        edits.push((at.clone(), lastmodified.clone()));
    }

    // What each group's entries wrap: the key itself, or the group's share of it.
    let shares = match groups.len() {
        1 => vec![Zeroizing::new(new.to_vec())],
        n => shamir::split(&new[..], n, threshold)?,
    };
    let mut news: Vec<Vec<(&str, String)>> = Vec::new();
    for (list, share) in want.iter().zip(&shares) {
        news.push(
            list.iter()
                .map(|r| Ok((r.as_str(), wrap(share, recipient(r)?)?)))
                .collect::<Result<_, Error>>()?,
        );
    }
    let opens =
        news.iter().filter(|g| still_opens_encs(g.iter().map(|(_, e)| e.as_str()), identities)).count();
    if !force && opens < threshold {
        return Err(refuse(
            "after the change none of the identities given would open the file (--force to allow)",
        ));
    }
    for (g, group) in news.iter().enumerate() {
        let items: Vec<Item<'_>> =
            group.iter().map(|(r, enc)| Item::New { recipient: r, enc: enc.as_str() }).collect();
        edits.extend(layout.render(g, &items)?);
    }

    let out = apply(text, edits, "not a sops file: sealed values overlap its metadata")?;
    Ok(SopsOutcome::Changed {
        bytes: out.into_bytes(),
        added: news.iter().map(Vec::len).sum(),
        removed: groups.iter().map(|g| g.entries.len()).sum(),
    })
}

/// The most AES-GCM opens spent finding the paths of a file's encrypted comments.
const MAX_COMMENT_TRIES: usize = 1 << 16;

/// A sealed leaf opened: its plaintext, the additional data it was sealed under, its type, and
/// the bytes of its `ENC[…]` in the file.
type Opened = Option<(Zeroizing<Vec<u8>>, String, String, Range<usize>)>;

/// Opens every sealed leaf with the old key. Every `ENC[…]` of the file must be one of them
/// (or the metadata's `mac`): one left behind would stay sealed under the key rotated away.
fn open_all(text: &str, found: &Values, key: &[u8]) -> Result<Vec<Opened>, Error> {
    let mut out = Vec::with_capacity(found.leaves.len());
    let mut placed: Vec<Range<usize>> = found.meta_spans.clone();
    // A comment's path is found by trying each branch's: bounded, since a hostile file chooses
    // both counts (far above any real file's comments × branches).
    let mut tries = MAX_COMMENT_TRIES;
    for leaf in &found.leaves {
        let Some(sealed) = parse_sealed(&leaf.value) else {
            if leaf.value.starts_with(ENC_PREFIX) {
                return Err(refuse(format!(
                    "a sealed value that is not one sops writes: {}",
                    shown(&leaf.value)
                )));
            }
            out.push(None);
            continue;
        };
        let at = values::locate(text, &leaf.span, &leaf.value)
            .ok_or_else(|| refuse(format!("a sealed value written across lines: {}", shown(&leaf.value))))?;
        let opened = match &leaf.aad {
            Some(aad) => values::open(key, &sealed, aad).ok().map(|p| (p, aad.clone())),
            None => found.branches.iter().find_map(|aad| {
                tries = tries.checked_sub(1)?;
                values::open(key, &sealed, aad).ok().map(|p| (p, aad.clone()))
            }),
        };
        let Some((plain, aad)) = opened else {
            if tries == 0 {
                return Err(hyperseal::limits::too_many(
                    "tries to place encrypted comments",
                    MAX_COMMENT_TRIES,
                ));
            }
            return Err(refuse(format!(
                "a sealed value the data key does not open at its place (changed outside sops?): {}",
                shown(&leaf.value)
            )));
        };
        placed.push(at.clone());
        out.push(Some((plain, aad, sealed.kind, at)));
    }
    let placed = values::Covered::new(placed.into_iter());
    if let Some((stray, _)) = text.match_indices(ENC_PREFIX).find(|(i, _)| !placed.contains(*i)) {
        let line = text[..stray].matches('\n').count() + 1;
        return Err(refuse(format!(
            "a sealed value on line {line} that hyperseal cannot place in the file's tree"
        )));
    }
    Ok(out)
}

/// The `mac` opened with the old key and compared with the hash of the values: the hash.
fn check_mac(text: &str, found: &Values, opened: &[Opened], key: &[u8]) -> Result<String, Error> {
    let (Some(at), Some((_, lastmodified))) = (found.mac.first(), found.lastmodified.first()) else {
        return Err(refuse("malformed sops metadata: no `mac` or `lastmodified`"));
    };
    let stored = parse_sealed(&text[at.clone()])
        .and_then(|s| values::open(key, &s, lastmodified).ok())
        .ok_or_else(|| refuse("the file's mac does not open with its data key"))?;
    let plains: Vec<_> =
        opened.iter().map(|o| o.as_ref().map(|(p, _, kind, _)| (&p[..], kind.as_str()))).collect();
    let hash = values::mac(found, &plains)?;
    if stored.as_slice() != hash.as_bytes() {
        return Err(refuse("the file's mac does not match its values (changed outside sops?): not rotated"));
    }
    Ok(hash)
}
