//! sops files re-keyed in place: only the age entries of the `sops` metadata change.
//!
//! A sops file keeps its values encrypted under a data key (AES-256-GCM per value, the `mac`
//! over the plaintext). Each key source wraps that data key, or with several key groups the
//! group's Shamir share: an age entry is a `recipient` and an `enc`, an armored age file whose
//! plaintext is the key or share. Changing who can open the file is then: open one `enc` of a
//! group with an identity the caller holds, write one new armored age file per new recipient
//! (exactly as sops does: one recipient per file, age's armor), and drop the entries of the
//! recipients removed. Values, `mac`, `lastmodified`, comments, key order and every other key
//! source stay byte for byte: each format's module finds the age entries with a parser that
//! knows positions and replaces those byte ranges only.
//!
//! Where this differs from `sops updatekeys`: sops re-emits the whole file, re-wraps every key
//! (so every `enc` changes) and with several groups splits the data key again, which needs every
//! other key source (PGP, KMS) to wrap its new share. Here an unchanged entry stays as it was and
//! each group keeps its share, so PGP or KMS entries stay valid untouched. The result is what
//! `sops updatekeys` would accept as up to date (it compares the recipient sets per group).
//!
//! Removal is not revocation: a removed recipient may have kept the data key, which opens
//! every value of this file and of its history.

mod dotenv;
mod ini;
mod json;
mod rotate;
#[cfg(all(feature = "fs", any(unix, windows)))]
mod rules;
mod shamir;
mod target;
#[cfg(test)]
mod tests;
#[cfg(all(feature = "fs", any(unix, windows)))]
mod tree;
#[cfg(all(feature = "fs", any(unix, windows)))]
mod unlock;
mod values;
mod yaml;

use std::ops::Range;

use zeroize::Zeroizing;

use crate::error::Error;
use crate::format::Profile;
use crate::recipient::{parse_recipient, Identity, Recipient};
use crate::{Decryptor, Encryptor, Options};

pub use rotate::{rotate, rotate_with};
#[cfg(all(feature = "fs", any(unix, windows)))]
pub use rules::{find_config, Rule, Rules, CONFIG_NAME};
#[cfg(all(feature = "fs", any(unix, windows)))]
pub use tree::{rekey_files, FileOutcome, FilesOptions, FilesReport, ReadRecipientSync, MAX_FILES};
#[cfg(all(feature = "fs", any(unix, windows)))]
pub use unlock::unlock;

/// The largest sops file read: far above any real secrets file, and bounded so a hostile one
/// (a 100 MB value) is refused before a parser walks it.
pub const MAX_FILE: usize = 16 << 20;
/// The most key groups and age entries in one group a file may have.
pub const MAX_GROUPS: usize = 64;
/// See [`MAX_GROUPS`].
pub const MAX_ENTRIES: usize = 1024;
/// The largest armored `enc` read: a post-quantum or RSA-4096 stanza is under 3 KiB.
pub const MAX_ENC: usize = 64 << 10;
/// The largest plaintext of an `enc`: sops's data key is 32 bytes, a Shamir share 33.
const MAX_KEY: usize = 64;

/// How sops stores the file, as it picks it from the name (binary files are JSON-wrapped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `.yaml`, `.yml`.
    Yaml,
    /// `.json`, and every other name (sops's binary store is JSON).
    Json,
    /// `.env`.
    Dotenv,
    /// `.ini`.
    Ini,
}

impl Format {
    /// The format sops reads a file of this name as.
    pub fn for_path(path: &std::path::Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some("yaml" | "yml") => Format::Yaml,
            Some("env") => Format::Dotenv,
            Some("ini") => Format::Ini,
            _ => Format::Json,
        }
    }
}

/// Whether `input` carries sops metadata at all (a folder walk skips files that do not, and
/// fails those that do but cannot be read). A YAML or JSON file whose `sops` member is not a
/// mapping (`sops: a note`) has none: sops metadata is always one. A file that does not parse
/// is sorted by its bytes (a `sops` key in it), so a damaged sops file is still one, and
/// [`rekey`] says what is wrong with it.
pub fn looks_like_sops(input: &[u8], format: Format) -> bool {
    let has = |needle: &[u8]| input.windows(needle.len()).any(|w| w == needle);
    let text = std::str::from_utf8(input).ok().filter(|_| input.len() <= MAX_FILE);
    match format {
        Format::Yaml => match text.and_then(yaml::has_metadata) {
            Some(found) => found,
            None => input.starts_with(b"sops:") || has(b"\nsops:"),
        },
        Format::Json => match text.and_then(json::Json::has_metadata) {
            Some(found) => found,
            None => has(b"\"sops\""),
        },
        Format::Dotenv => input.starts_with(b"sops_") || has(b"\nsops_"),
        Format::Ini => has(b"[sops]"),
    }
}

/// Why a YAML or JSON file whose `sops` member is a plain value is not re-keyed.
pub(crate) const NOT_METADATA: &str = "not a sops file: its `sops` member is not a mapping of sops metadata";

/// The age recipients a file should have afterwards.
pub enum Target {
    /// Each key group's recipients (a `.sops.yaml` rule, or `-r` for a one-group file). Other
    /// key sources are kept; a group whose `others` (as [`source_name`] names them) differ from
    /// the file's is refused: hyperseal makes no PGP or KMS wrap.
    Groups(Vec<TargetGroup>),
    /// Recipients added to a one-group file, and removed from every group that has them.
    Edit {
        /// Added (to the one group).
        add: Vec<String>,
        /// Removed by their recipient string.
        remove: Vec<String>,
    },
}

/// The recipients of one key group.
#[derive(Clone, Debug, Default)]
pub struct TargetGroup {
    /// age recipients.
    pub age: Vec<String>,
    /// The other key sources; `None`: not compared (explicit `-r`).
    pub others: Option<Vec<String>>,
}

/// A key source other than age by the name a rule and a file both give it: `pgp:FINGERPRINT`.
pub fn source_name(kind: &str, id: &str) -> String {
    format!("{kind}:{}", id.trim())
}

/// What happened to one file.
#[derive(Debug)]
pub enum Outcome {
    /// The age entries were already the target.
    Unchanged,
    /// The new file's bytes, with the count of entries added and removed.
    Changed {
        /// The whole new file.
        bytes: Vec<u8>,
        /// Age entries written.
        added: usize,
        /// Age entries dropped.
        removed: usize,
    },
}

/// An age entry of the file: its recipient, its armored `enc`, and the bytes it occupies.
pub(crate) struct Entry {
    pub recipient: String,
    pub enc: String,
    pub span: Range<usize>,
}

/// One key group: its age entries, and the other key sources it has (named, to compare with a
/// rule that names them).
#[derive(Default)]
pub(crate) struct Group {
    pub entries: Vec<Entry>,
    pub others: Vec<String>,
}

/// The metadata a format module found.
pub(crate) struct Meta {
    pub groups: Vec<Group>,
    /// `shamir_threshold`: how many groups' shares give the data key (sops: all, when unset).
    pub threshold: Option<usize>,
}

/// An entry of the new list: an old one kept as it is, or a new one.
pub(crate) enum Item<'a> {
    Kept(&'a Entry),
    New { recipient: &'a str, enc: &'a str },
}

/// A format's view of one file: where the age entries are, and how a new list is written.
pub(crate) trait Layout {
    fn meta(&self) -> &Meta;
    /// The bytes to replace for `group`'s age list, and the text that replaces them (one range
    /// per place the list is written: each document of a YAML file).
    fn render(&self, group: usize, items: &[Item<'_>]) -> Result<Vec<(Range<usize>, String)>, Error>;
}

/// A name from the file as an error may show it: printable ASCII, at most 80 characters (a
/// hostile file chooses it).
pub(crate) fn shown(s: &str) -> String {
    let mut out: String =
        s.chars().take(80).map(|c| if c.is_ascii_graphic() || c == ' ' { c } else { '?' }).collect();
    if s.chars().count() > 80 {
        out.push('…');
    }
    out
}

/// One line for what a file is refused for.
pub(crate) fn refuse(why: impl Into<String>) -> Error {
    Error::InvalidArgument(why.into())
}

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
) -> Result<Outcome, Error> {
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
) -> Result<Outcome, Error> {
    if input.len() > MAX_FILE {
        return Err(crate::limits::too_long("a sops file", MAX_FILE));
    }
    let text = std::str::from_utf8(input).map_err(|_| refuse("not a sops file: not UTF-8 text"))?;
    let layout = parse(text, format)?;
    let meta = layout.meta();
    if meta.groups.is_empty() {
        return Err(refuse("not a sops file: no key groups in its metadata"));
    }
    if meta.groups.len() > MAX_GROUPS {
        return Err(crate::limits::too_many("key groups", MAX_GROUPS));
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
        return Ok(Outcome::Unchanged);
    }
    let out = apply(text, edits, "not a sops file: key groups' age lists overlap")?;
    Ok(Outcome::Changed { bytes: out.into_bytes(), added, removed })
}

/// `text` with each range of `edits` replaced by its text; overlapping ranges are refused
/// with `overlap` (a file laid out as no sops file is).
fn apply(text: &str, mut edits: Vec<(Range<usize>, String)>, overlap: &str) -> Result<String, Error> {
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

/// The file's layout, by its format's parser.
fn parse(text: &str, format: Format) -> Result<Box<dyn Layout + '_>, Error> {
    Ok(match format {
        Format::Yaml => Box::new(yaml::Yaml::parse(text)?),
        Format::Json => Box::new(json::Json::parse(text)?),
        Format::Dotenv => Box::new(dotenv::Dotenv::parse(text)?),
        Format::Ini => Box::new(ini::Ini::parse(text)?),
    })
}

/// The recipients each group should have, checked against what can be done.
fn wanted_lists(meta: &Meta, target: &Target) -> Result<Vec<Vec<String>>, Error> {
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

/// The group's data key or share, from the first entry an identity opens. `None`: no identity
/// is for any entry. An entry that an identity claims but fails to open is an error.
fn open_group(group: &Group, identities: &[Box<dyn Identity>]) -> Option<Result<Zeroizing<Vec<u8>>, Error>> {
    let mut last = None;
    for e in &group.entries {
        match open(&e.enc, identities) {
            Ok(key) => return Some(Ok(key)),
            Err(Error::NoIdentityMatched) => {}
            Err(e) => last = Some(e),
        }
    }
    last.map(Err)
}

/// Opens one armored `enc`.
fn open(enc: &str, identities: &[Box<dyn Identity>]) -> Result<Zeroizing<Vec<u8>>, Error> {
    if enc.len() > MAX_ENC {
        return Err(crate::limits::too_long("an age entry's enc", MAX_ENC));
    }
    let dec = Decryptor::from_slice(enc.as_bytes())?;
    if dec.header().profile != Profile::Age {
        return Err(refuse("an age entry's enc is not an age file"));
    }
    let mut out = KeyBuf(Zeroizing::new(Vec::with_capacity(MAX_KEY)));
    dec.decrypt_stream(identities, &mut out, None)?;
    if out.0.is_empty() {
        return Err(refuse("an age entry's enc does not hold a sops data key"));
    }
    Ok(out.0)
}

/// Where a data key is decrypted to: never reallocated (no copy left behind unwiped), and no
/// more than [`MAX_KEY`] bytes, whatever the `enc` holds.
struct KeyBuf(Zeroizing<Vec<u8>>);

impl std::io::Write for KeyBuf {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0.len() + buf.len() > MAX_KEY {
            return Err(std::io::Error::other("an age entry's enc holds more than a sops data key"));
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The armored age file of `key` for `recipient`, as sops writes an `enc`.
fn wrap(key: &[u8], r: Box<dyn Recipient>) -> Result<String, Error> {
    let enc = Encryptor::with_recipients(&[r], Options::age())?;
    let mut w = crate::armored(Vec::new(), Profile::Age);
    enc.encrypt_slice(key, &mut w, None)?;
    let bytes = w.finish()?;
    String::from_utf8(bytes).map_err(|_| Error::Crypto)
}

/// Whether some entry of the new list opens with `identities`: the test of the lock-out guard.
fn still_opens(keep: &[&Entry], news: &[(&str, String)], identities: &[Box<dyn Identity>]) -> bool {
    still_opens_encs(
        keep.iter().map(|e| e.enc.as_str()).chain(news.iter().map(|(_, enc)| enc.as_str())),
        identities,
    )
}

/// Whether one of `encs` opens with `identities`.
fn still_opens_encs<'a>(mut encs: impl Iterator<Item = &'a str>, identities: &[Box<dyn Identity>]) -> bool {
    encs.any(|enc| open(enc, identities).is_ok())
}

/// Other key sources, and the field that names each in a file (a rule names them the same).
pub(crate) const OTHER_SOURCES: [(&str, &str); 6] = [
    ("pgp", "fp"),
    ("kms", "arn"),
    ("gcp_kms", "resource_id"),
    ("hckms", "key_id"),
    ("azure_kv", "vault_url"),
    ("hc_vault", "vault_address"),
];

/// `shamir_threshold` as written.
pub(crate) fn parse_threshold(v: &str) -> Result<usize, Error> {
    v.trim()
        .parse::<usize>()
        .ok()
        .filter(|t| *t <= MAX_GROUPS)
        .ok_or_else(|| refuse(format!("malformed sops metadata: a shamir_threshold of {}", shown(v))))
}

/// A parsed value with the bytes it spans (YAML and JSON build these for the `sops` key only).
pub(crate) enum Node {
    Map(Vec<(String, Node)>, Range<usize>),
    Seq(Vec<Node>, Range<usize>),
    Str(String, Range<usize>),
}

impl Node {
    pub fn span(&self) -> Range<usize> {
        match self {
            Node::Map(_, s) | Node::Seq(_, s) | Node::Str(_, s) => s.clone(),
        }
    }
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Map(m, _) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    pub(crate) fn str(&self) -> Option<&str> {
        match self {
            Node::Str(s, _) => Some(s),
            _ => None,
        }
    }
    pub(crate) fn seq(&self) -> Option<&[Node]> {
        match self {
            Node::Seq(v, _) => Some(v),
            _ => None,
        }
    }
}

/// The metadata from the `sops` value of a YAML or JSON file.
pub(crate) fn meta_of(sops: &Node) -> Result<Meta, Error> {
    let bad = |what: &str| refuse(format!("malformed sops metadata: {what}"));
    if !matches!(sops, Node::Map(..)) {
        return Err(bad("`sops` is not a mapping"));
    }
    if sops.get("mac").and_then(Node::str).is_none() || sops.get("version").is_none() {
        return Err(bad("no `mac` or `version`"));
    }
    let group_of = |g: &Node| -> Result<Group, Error> {
        let mut group = Group::default();
        if let Some(list) = g.get("age") {
            let list = list.seq().ok_or_else(|| bad("`age` is not a list"))?;
            if list.len() > MAX_ENTRIES {
                return Err(crate::limits::too_many("age entries in a key group", MAX_ENTRIES));
            }
            for e in list {
                let field = |k| e.get(k).and_then(Node::str).filter(|v| !v.trim().is_empty());
                let (Some(recipient), Some(enc)) = (field("recipient"), field("enc")) else {
                    return Err(bad("an age entry without `recipient` and `enc`"));
                };
                group.entries.push(Entry {
                    recipient: recipient.to_owned(),
                    enc: enc.to_owned(),
                    span: e.span(),
                });
            }
        }
        for (kind, field) in OTHER_SOURCES {
            for k in g.get(kind).and_then(Node::seq).unwrap_or(&[]) {
                let id =
                    k.get(field).and_then(Node::str).ok_or_else(|| bad("a key source without its name"))?;
                group.others.push(source_name(kind, id));
            }
        }
        Ok(group)
    };
    let groups = match sops.get("key_groups") {
        Some(list) => {
            let list = list.seq().ok_or_else(|| bad("`key_groups` is not a list"))?;
            if list.len() > MAX_GROUPS {
                return Err(crate::limits::too_many("key groups", MAX_GROUPS));
            }
            list.iter().map(group_of).collect::<Result<Vec<_>, _>>()?
        }
        None => vec![group_of(sops)?],
    };
    if groups.iter().all(|g| g.entries.is_empty() && g.others.is_empty()) {
        return Err(bad("no key source"));
    }
    let threshold = sops.get("shamir_threshold").and_then(Node::str).map(parse_threshold).transpose()?;
    Ok(Meta { groups, threshold })
}
