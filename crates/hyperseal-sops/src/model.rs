//! The sops metadata as the formats find it and the algorithm reads it: key groups of age
//! entries (each with the bytes it occupies) and the other key sources by name, the edits a
//! format writes, the spanned tree YAML and JSON read the `sops` member into, and the limits
//! every reader holds a hostile file to.

use std::ops::Range;

use hyperseal::Error;

/// The largest sops file read: far above any real secrets file, and bounded so a hostile one
/// (a 100 MB value) is refused before a parser walks it.
pub const MAX_FILE: usize = 16 << 20;
/// The most key groups and age entries in one group a file may have.
pub const MAX_GROUPS: usize = 64;
/// See [`MAX_GROUPS`].
pub const MAX_ENTRIES: usize = 1024;
/// The largest armored `enc` read: a post-quantum or RSA-4096 stanza is under 3 KiB.
pub const MAX_ENC: usize = 64 << 10;

/// Why a YAML or JSON file whose `sops` member is a plain value is not re-keyed.
pub(crate) const NOT_METADATA: &str = "not a sops file: its `sops` member is not a mapping of sops metadata";

/// A key source other than age by the name a rule and a file both give it: `pgp:FINGERPRINT`.
pub fn source_name(kind: &str, id: &str) -> String {
    format!("{kind}:{}", id.trim())
}

/// What happened to one file.
#[derive(Debug)]
pub enum SopsOutcome {
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
                return Err(hyperseal::limits::too_many("age entries in a key group", MAX_ENTRIES));
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
                return Err(hyperseal::limits::too_many("key groups", MAX_GROUPS));
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
