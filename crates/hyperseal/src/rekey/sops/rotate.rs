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
//! behind sops's back is refused rather than signed anew. A file with several key groups, or
//! with PGP or KMS entries, is refused: its new data key would need a new Shamir split and
//! wraps that only those key sources can make (`sops rotate` does them).

use std::ops::Range;
use std::time::SystemTime;

use zeroize::Zeroizing;

use super::values::{self, parse_sealed, Values, ENC_PREFIX};
use super::{open_group, parse, refuse, shown, still_opens_encs, wanted_lists, wrap, Format, Item, Outcome};
use super::{ReadRecipient, Target, MAX_FILE};
use crate::error::Error;
use crate::recipient::{parse_recipient, Identity};

/// Rotates one sops file held in memory, as `sops rotate` does: a fresh data key, every
/// `ENC[…]` value and comment sealed again under it with a fresh IV, the `mac` checked and
/// sealed again, `lastmodified` set to `now`, and the age entries of the one key group made
/// for `target`'s recipients. A change that leaves no entry that `identities` open is refused
/// unless `force`.
pub fn rotate(
    input: &[u8],
    format: Format,
    target: &Target,
    identities: &[Box<dyn Identity>],
    force: bool,
    now: SystemTime,
) -> Result<Outcome, Error> {
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
) -> Result<Outcome, Error> {
    if input.len() > MAX_FILE {
        return Err(crate::limits::too_long("a sops file", MAX_FILE));
    }
    let text = std::str::from_utf8(input).map_err(|_| refuse("not a sops file: not UTF-8 text"))?;
    let layout = parse(text, format)?;
    let meta = layout.meta();
    let [group] = &meta.groups[..] else {
        return Err(refuse(
            "--rotate takes files with one key group: a new Shamir split is sops's own (sops rotate)",
        ));
    };
    if !group.others.is_empty() {
        return Err(refuse(
            "--rotate takes files whose keys are all age: PGP and KMS wrap the new key only in sops (sops rotate)",
        ));
    }
    let want = wanted_lists(meta, target)?.remove(0);
    let mut want_dedup: Vec<&str> = Vec::new();
    for r in &want {
        if !want_dedup.contains(&r.as_str()) {
            want_dedup.push(r);
        }
    }
    if want_dedup.is_empty() {
        return Err(refuse("the change leaves no age entry: a rotated file needs a recipient"));
    }
    let old = open_group(group, identities)
        .ok_or_else(|| refuse("none of the identities given opens the file's data key"))??;
    if old.len() != 32 {
        return Err(refuse("the file's data key is not a 32-byte AES-256 key"));
    }

    let values = match format {
        Format::Yaml => super::yaml::values(text)?,
        Format::Json => super::json::values(text)?,
        Format::Dotenv => super::dotenv::values(text)?,
        Format::Ini => super::ini::values(text)?,
    };
    let opened = open_all(text, &values, &old)?;
    let hash = check_mac(text, &values, &opened, &old)?;

    let mut new = Zeroizing::new([0u8; 32]);
    crate::rng::fill(&mut new[..])?;
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    for (plain, aad, kind, at) in opened.iter().flatten() {
        edits.push((at.clone(), values::seal(&new[..], plain, aad, kind)?));
    }
    // The values are the same, so the hash is: only its seal and the time change.
    let lastmodified = values::rfc3339(now);
    for at in &values.mac {
        edits.push((at.clone(), values::seal(&new[..], hash.as_bytes(), &lastmodified, "str")?));
    }
    for (at, _) in &values.lastmodified {
        edits.push((at.clone(), lastmodified.clone()));
    }

    let news = want_dedup
        .iter()
        .map(|r| Ok((*r, wrap(&new[..], recipient(r)?)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    if !force && !still_opens_encs(news.iter().map(|(_, e)| e.as_str()), identities) {
        return Err(refuse(
            "after the change none of the identities given would open the file (--force to allow)",
        ));
    }
    let items: Vec<Item<'_>> =
        news.iter().map(|(r, enc)| Item::New { recipient: r, enc: enc.as_str() }).collect();
    edits.extend(layout.render(0, &items)?);

    edits.sort_by_key(|(r, _)| r.start);
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let mut at = 0;
    for (range, with) in &edits {
        if range.start < at {
            return Err(refuse("not a sops file: sealed values overlap its metadata"));
        }
        out.push_str(&text[at..range.start]);
        out.push_str(with);
        at = range.end;
    }
    out.push_str(&text[at..]);
    Ok(Outcome::Changed { bytes: out.into_bytes(), added: news.len(), removed: group.entries.len() })
}

/// A sealed leaf opened: its plaintext, the additional data it was sealed under, its type, and
/// the bytes of its `ENC[…]` in the file.
type Opened = Option<(Zeroizing<Vec<u8>>, String, String, Range<usize>)>;

/// Opens every sealed leaf with the old key. Every `ENC[…]` of the file must be one of them
/// (or the metadata's `mac`): one left behind would stay sealed under the key rotated away.
fn open_all(text: &str, values: &Values, key: &[u8]) -> Result<Vec<Opened>, Error> {
    let mut out = Vec::with_capacity(values.leaves.len());
    let mut placed: Vec<Range<usize>> = values.meta_spans.clone();
    for leaf in &values.leaves {
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
            None => values
                .branches
                .iter()
                .find_map(|aad| values::open(key, &sealed, aad).ok().map(|p| (p, aad.clone()))),
        };
        let Some((plain, aad)) = opened else {
            return Err(refuse(format!(
                "a sealed value the data key does not open at its place (changed outside sops?): {}",
                shown(&leaf.value)
            )));
        };
        placed.push(at.clone());
        out.push(Some((plain, aad, sealed.kind, at)));
    }
    if let Some((stray, _)) =
        text.match_indices(ENC_PREFIX).find(|(i, _)| !placed.iter().any(|r| r.contains(i)))
    {
        let line = text[..stray].matches('\n').count() + 1;
        return Err(refuse(format!(
            "a sealed value on line {line} that hyperseal cannot place in the file's tree"
        )));
    }
    Ok(out)
}

/// The `mac` opened with the old key and compared with the hash of the values: the hash.
fn check_mac(text: &str, values: &Values, opened: &[Opened], key: &[u8]) -> Result<String, Error> {
    let (Some(at), Some((_, lastmodified))) = (values.mac.first(), values.lastmodified.first()) else {
        return Err(refuse("malformed sops metadata: no `mac` or `lastmodified`"));
    };
    let stored = parse_sealed(&text[at.clone()])
        .and_then(|s| values::open(key, &s, lastmodified).ok())
        .ok_or_else(|| refuse("the file's mac does not open with its data key"))?;
    let plains: Vec<_> = opened.iter().map(|o| o.as_ref().map(|o| o.0.clone())).collect();
    let hash = values::mac(values, &plains)?;
    if stored.as_slice() != hash.as_bytes() {
        return Err(refuse("the file's mac does not match its values (changed outside sops?): not rotated"));
    }
    Ok(hash)
}
