//! The re-key of one sops file held in memory: each key group's age list made the target's,
//! an entry kept byte for byte where its recipient stays, a new one wrapping the group's data key
//! or share, the lock-out guard, and the format's edits applied to the text.

use std::ops::Range;

use super::datakey::{open_group, still_opens_encs, wrap};
use super::formats::Format;
use super::model::{refuse, shown, Entry, Item, Meta, SopsOutcome, MAX_ENC, MAX_GROUPS};
use super::target::Target;
use hyperseal::format::Profile;
use hyperseal::recipient::{parse_recipient, Identity, Recipient};
use hyperseal::Decryptor;
use hyperseal::Error;

/// Re-keys one sops file held in memory: the age entries of each group become `target`,
/// every other byte stays. Each group that changes is opened with `identities` (its data key
/// or share, which never leaves this function unzeroized); a change that would leave a changed
/// group that none of `identities` opens is refused unless `force`.
pub fn rekey(
    input: &[u8],
    format: Format,
    target: &Target,
    identities: &[Box<dyn Identity>],
    force: bool,
) -> Result<SopsOutcome, Error> {
    rekey_with(input, format, target, identities, force, &|r| parse_recipient(r))
}

/// How a caller reads a recipient string.
pub type ReadRecipient<'a> = dyn Fn(&str) -> Result<Box<dyn Recipient>, Error> + 'a;

/// [`rekey`] with the caller's reading of a recipient string (a frontend's, which lets an age
/// plugin ask on its terminal; the library's own starts no plugin).
pub fn rekey_with(
    input: &[u8],
    format: Format,
    target: &Target,
    identities: &[Box<dyn Identity>],
    force: bool,
    recipient: &ReadRecipient<'_>,
) -> Result<SopsOutcome, Error> {
    let (text, layout) = format.read(input)?;
    let meta = layout.meta();
    if meta.groups.is_empty() {
        return Err(refuse("not a sops file: no key groups in its metadata"));
    }
    if meta.groups.len() > MAX_GROUPS {
        return Err(hyperseal::limits::too_many("key groups", MAX_GROUPS));
    }
    let wanted = wanted_lists(meta, target)?;
    // Every `enc` must be an age file, kept or not: a file with a broken entry is refused
    // whole rather than re-keyed around it.
    for e in meta.groups.iter().flat_map(|g| &g.entries) {
        let header = (e.enc.len() <= MAX_ENC).then(|| Decryptor::from_slice(e.enc.as_bytes()).ok()).flatten();
        if header.is_none_or(|d| d.header().profile != Profile::Age) {
            return Err(refuse(format!(
                "the age entry of {} has an enc that is not an age file",
                shown(&e.recipient)
            )));
        }
    }

    // Every group's new list, and the replacements in file order.
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let (mut added, mut removed) = (0, 0);
    for (g, (group, want)) in meta.groups.iter().zip(&wanted).enumerate() {
        let keep: Vec<&Entry> = group.entries.iter().filter(|e| want.contains(&e.recipient)).collect();
        let new: Vec<&String> =
            dedup(want).into_iter().filter(|r| !group.entries.iter().any(|e| &e.recipient == *r)).collect();
        if new.is_empty() && keep.len() == group.entries.len() {
            continue;
        }
        if group.entries.is_empty() {
            return Err(refuse(format!(
                "key group {} has no age entry to write beside: hyperseal changes existing age lists only",
                g + 1
            )));
        }
        if keep.is_empty() && new.is_empty() {
            return Err(refuse(format!(
                "the change leaves no age entry in key group {}: remove the group with sops itself",
                g + 1
            )));
        }
        let news = if new.is_empty() {
            Vec::new()
        } else {
            let key = open_group(group, identities)
                .ok_or_else(|| refuse(format!("none of the identities given opens key group {}", g + 1)))??;
            new.iter()
                .map(|r| Ok(((*r).as_str(), wrap(&key, recipient(r)?)?)))
                .collect::<Result<Vec<_>, Error>>()?
        };
        if !force && !still_opens(&keep, &news, identities) {
            return Err(refuse(format!(
                "after the change none of the identities given would open key group {} (--force to allow)",
                g + 1
            )));
        }
        let mut items: Vec<Item<'_>> = keep.iter().map(|e| Item::Kept(e)).collect();
        items.extend(news.iter().map(|(r, enc)| Item::New { recipient: r, enc: enc.as_str() }));
        added += news.len();
        removed += group.entries.len() - keep.len();
        edits.extend(layout.render(g, &items)?);
    }
    if edits.is_empty() {
        return Ok(SopsOutcome::Unchanged);
    }
    let out = apply(text, edits, "not a sops file: key groups' age lists overlap")?;
    Ok(SopsOutcome::Changed { bytes: out.into_bytes(), added, removed })
}

/// `text` with each range of `edits` replaced by its text; overlapping ranges are refused
/// with `overlap` (a file laid out as no sops file is).
pub(crate) fn apply(
    text: &str,
    mut edits: Vec<(Range<usize>, String)>,
    overlap: &str,
) -> Result<String, Error> {
    edits.sort_by_key(|(r, _)| r.start);
    let mut out = String::with_capacity(text.len() + edits.iter().map(|(_, s)| s.len()).sum::<usize>());
    let mut at = 0;
    for (range, with) in &edits {
        if range.start < at {
            return Err(refuse(overlap));
        }
        out.push_str(&text[at..range.start]);
        out.push_str(with);
        at = range.end;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

/// The recipients each group should have, checked against what can be done.
pub(crate) fn wanted_lists(meta: &Meta, target: &Target) -> Result<Vec<Vec<String>>, Error> {
    match target {
        Target::Groups(groups) => {
            if groups.len() != meta.groups.len() {
                return Err(refuse(format!(
                    "the target has {} key group(s) and the file {}: a new group count needs a new Shamir split (sops updatekeys)",
                    groups.len(),
                    meta.groups.len()
                )));
            }
            for (i, (t, f)) in groups.iter().zip(&meta.groups).enumerate() {
                let Some(others) = &t.others else { continue };
                let (mut a, mut b) = (others.clone(), f.others.clone());
                a.sort();
                a.dedup();
                b.sort();
                b.dedup();
                if a != b {
                    return Err(refuse(format!(
                        "the rule changes key group {}'s other key sources (PGP, KMS…): hyperseal changes age entries only",
                        i + 1
                    )));
                }
            }
            Ok(groups.iter().map(|g| g.age.clone()).collect())
        }
        Target::Edit { add, remove } => {
            if !add.is_empty() && meta.groups.len() > 1 {
                return Err(refuse(
                    "the file has several key groups: name each group's recipients in .sops.yaml",
                ));
            }
            Ok(meta
                .groups
                .iter()
                .map(|g| {
                    let mut list: Vec<String> = g
                        .entries
                        .iter()
                        .map(|e| e.recipient.clone())
                        .filter(|r| !remove.contains(r))
                        .collect();
                    list.extend(add.iter().filter(|a| !remove.contains(a)).cloned());
                    list
                })
                .collect())
        }
    }
}

fn dedup(list: &[String]) -> Vec<&String> {
    let mut out: Vec<&String> = Vec::new();
    for r in list {
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

/// Whether some entry of the new list opens with `identities`: the test of the lock-out guard.
fn still_opens(keep: &[&Entry], news: &[(&str, String)], identities: &[Box<dyn Identity>]) -> bool {
    still_opens_encs(
        keep.iter().map(|e| e.enc.as_str()).chain(news.iter().map(|(_, enc)| enc.as_str())),
        identities,
    )
}
