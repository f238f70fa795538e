//! sops dotenv files, and the flattened metadata they share with INI files: the `sops` tree
//! written one key a line (`age__list_0__map_enc`, `key_groups__list_1__map_age__list_0__map_recipient`),
//! newlines in a value as `\n`. A group's age entries are a run of lines, written again as a
//! whole run (the list indices follow the new order), an entry kept giving the same lines it had.

use std::collections::BTreeMap;
use std::ops::Range;

use super::{contains, Store};
use hyperseal::Error;
use crate::model::{
    parse_threshold, refuse, shown, source_name, Entry, Group, Item, Layout, Meta, MAX_ENTRIES, MAX_GROUPS,
    OTHER_SOURCES,
};
use crate::values::{self, Values};

/// sops's dotenv store.
pub(super) const STORE: &dyn Store = &DotenvStore;

struct DotenvStore;

impl Store for DotenvStore {
    fn names(&self) -> &'static [&'static str] {
        &["dotenv"]
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["env"]
    }
    fn looks_like_sops(&self, input: &[u8], _text: Option<&str>) -> bool {
        input.starts_with(b"sops_") || contains(input, b"\nsops_")
    }
    fn layout<'a>(&self, text: &'a str) -> Result<Box<dyn Layout + 'a>, Error> {
        Ok(Box::new(Dotenv::parse(text)?))
    }
    fn values(&self, text: &str) -> Result<Values, Error> {
        values(text)
    }
}

/// One metadata line: its key with the format's prefix taken off, its value as written, and
/// the bytes of the whole line (its newline included).
pub(crate) struct Line<'a> {
    pub key: &'a str,
    pub value: &'a str,
    pub span: Range<usize>,
}

/// The flattened metadata of a dotenv or INI file.
pub(crate) struct Flat {
    pub meta: Meta,
    /// Per group, the lines its age entries take (`None` for a group without age entries).
    pub regions: Vec<Option<Range<usize>>>,
    /// Per group, the key prefix of its age list (`age__list_` or `key_groups__list_N__map_age__list_`).
    pub prefixes: Vec<String>,
}

fn bad(what: &str) -> Error {
    refuse(format!("malformed sops metadata: {what}"))
}

/// `\n` in a flattened value is a newline (sops writes no other escape there).
pub(crate) fn unescape(v: &str) -> String {
    v.replace("\\n", "\n")
}

pub(crate) fn escape(v: &str) -> String {
    v.replace('\n', "\\n")
}

/// Reads `key` as `<list>__list_<n>__map_<rest>`.
fn split_list<'k>(key: &'k str, list: &str) -> Option<(usize, &'k str)> {
    let rest = key.strip_prefix(list)?.strip_prefix("__list_")?;
    let (n, rest) = rest.split_once("__map_")?;
    if n.is_empty() || n.len() > 6 || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((n.parse().ok()?, rest))
}

/// Refuses a metadata key written twice: sops refuses it ("Duplicate value" as it unflattens
/// the metadata), where this reader would take one of them.
pub(crate) fn unique_keys<'a>(keys: impl Iterator<Item = &'a str>, what: &str) -> Result<(), Error> {
    let mut seen = std::collections::HashSet::new();
    for k in keys {
        if !seen.insert(k) {
            return Err(refuse(format!(
                "malformed sops metadata: the {what} key {:?} appears twice",
                shown(k)
            )));
        }
    }
    Ok(())
}

impl Flat {
    pub(crate) fn read(text: &str, lines: &[Line<'_>]) -> Result<Flat, Error> {
        if !lines.iter().any(|l| l.key == "mac") || !lines.iter().any(|l| l.key == "version") {
            return Err(refuse("not a sops file: no `mac` or `version` in its metadata"));
        }
        let grouped = lines.iter().any(|l| l.key.starts_with("key_groups__"));
        // (group, entry) → (recipient, enc, lines)
        type Slot<'a> = (Option<&'a str>, Option<&'a str>, Vec<Range<usize>>);
        let mut slots: BTreeMap<(usize, usize), Slot<'_>> = BTreeMap::new();
        let mut others: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        let mut groups = if grouped { 0 } else { 1 };
        for l in lines {
            let (g, rest) = if grouped {
                match split_list(l.key, "key_groups") {
                    Some((g, rest)) => (g, rest),
                    None => continue,
                }
            } else {
                (0, l.key)
            };
            if g >= MAX_GROUPS {
                return Err(hyperseal::limits::too_many("key groups", MAX_GROUPS));
            }
            groups = groups.max(g + 1);
            if let Some((i, field)) = split_list(rest, "age") {
                if i >= MAX_ENTRIES {
                    return Err(hyperseal::limits::too_many("age entries in a key group", MAX_ENTRIES));
                }
                let slot = slots.entry((g, i)).or_default();
                match field {
                    "recipient" => slot.0 = Some(l.value),
                    "enc" => slot.1 = Some(l.value),
                    _ => return Err(bad("an unknown field in an age entry")),
                }
                slot.2.push(l.span.clone());
                continue;
            }
            for (kind, field) in OTHER_SOURCES {
                if let Some((_, f)) = split_list(rest, kind) {
                    if f == field {
                        others.entry(g).or_default().push(source_name(kind, l.value));
                    }
                }
            }
        }
        let threshold = match lines.iter().find(|l| l.key == "shamir_threshold") {
            Some(l) => Some(parse_threshold(l.value)?),
            None => None,
        };
        let mut meta = Meta { groups: (0..groups).map(|_| Group::default()).collect(), threshold };
        let mut spans: Vec<Vec<Range<usize>>> = vec![Vec::new(); groups];
        for ((g, i), (recipient, enc, lines)) in slots {
            let group = &mut meta.groups[g];
            let (Some(recipient), Some(enc)) =
                (recipient.filter(|v| !v.trim().is_empty()), enc.filter(|v| !v.trim().is_empty()))
            else {
                return Err(bad("an age entry without `recipient` and `enc`"));
            };
            if i != group.entries.len() {
                return Err(bad("age list indices with a gap"));
            }
            let span = lines[0].clone();
            spans[g].extend(lines);
            group.entries.push(Entry { recipient: recipient.to_owned(), enc: unescape(enc), span });
        }
        for (g, o) in others {
            meta.groups[g].others = o;
        }
        if meta.groups.iter().all(|g| g.entries.is_empty() && g.others.is_empty()) {
            return Err(bad("no key source"));
        }
        // A group's age lines must be one run, to be written again as one.
        let mut regions = Vec::new();
        for s in &mut spans {
            s.sort_by_key(|r| r.start);
            let region = s.first().map(|f| f.start..s.last().map_or(f.end, |l| l.end));
            if let Some(r) = &region {
                if s.iter().map(|x| x.len()).sum::<usize>() != r.len() {
                    return Err(refuse("a key group's age entries are not on consecutive lines"));
                }
                if !text[r.clone()].ends_with('\n') {
                    return Err(bad("the file ends inside an age entry without a newline"));
                }
            }
            regions.push(region);
        }
        let prefixes = (0..groups)
            .map(|g| if grouped { format!("key_groups__list_{g}__map_age") } else { "age".to_owned() })
            .collect();
        Ok(Flat { meta, regions, prefixes })
    }

    /// The group's age lines written again, `line(key, value)` giving one line.
    pub(crate) fn render(
        &self,
        group: usize,
        items: &[Item<'_>],
        line: impl Fn(&str, &str) -> String,
    ) -> Result<(Range<usize>, String), Error> {
        let region = self.regions[group].clone().ok_or_else(|| refuse("no age entry to write beside"))?;
        let prefix = &self.prefixes[group];
        let mut out = String::new();
        for (i, item) in items.iter().enumerate() {
            let (recipient, enc) = match item {
                Item::Kept(e) => (e.recipient.as_str(), e.enc.as_str()),
                Item::New { recipient, enc } => (*recipient, *enc),
            };
            // sops sorts the flattened keys: `enc` before `recipient`.
            out.push_str(&line(&format!("{prefix}__list_{i}__map_enc"), &escape(enc)));
            out.push_str(&line(&format!("{prefix}__list_{i}__map_recipient"), recipient));
        }
        Ok((region, out))
    }
}

pub(crate) struct Dotenv {
    flat: Flat,
}

impl Dotenv {
    pub(crate) fn parse(text: &str) -> Result<Self, Error> {
        let mut lines = Vec::new();
        let mut at = 0;
        for raw in text.split_inclusive('\n') {
            let span = at..at + raw.len();
            at += raw.len();
            let l = raw.strip_suffix('\n').unwrap_or(raw);
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            // As sops reads a line: the key up to the first `=`.
            let (key, value) =
                l.split_once('=').ok_or_else(|| refuse("not a sops file: a dotenv line without `=`"))?;
            if let Some(key) = key.strip_prefix("sops_") {
                lines.push(Line { key, value, span });
            }
        }
        unique_keys(lines.iter().map(|l| l.key), "dotenv `sops_`")?;
        Ok(Dotenv { flat: Flat::read(text, &lines)? })
    }
}

impl Layout for Dotenv {
    fn meta(&self) -> &Meta {
        &self.flat.meta
    }
    fn render(&self, group: usize, items: &[Item<'_>]) -> Result<Vec<(Range<usize>, String)>, Error> {
        Ok(vec![self.flat.render(group, items, |k, v| format!("sops_{k}={v}\n"))?])
    }
}

/// Every value of a dotenv or INI file outside its metadata, for `--rotate`: `lines` gives
/// each (path, value, span of the value) in file order, `meta` each metadata line as
/// (key without prefix, value, span of the value, span of the line).
pub(crate) fn flat_values<'a>(
    text: &str,
    lines: impl Iterator<Item = (Vec<String>, &'a str, Range<usize>)>,
    meta: impl Iterator<Item = (&'a str, &'a str, Range<usize>, Range<usize>)>,
    marks: &[char],
) -> Result<Values, Error> {
    let mut out = Values::default();
    out.branch(&[]);
    for (path, value, span) in lines {
        if path.len() > 1 {
            out.branch(&path[..path.len() - 1]);
        }
        let v = unescape(value);
        out.push(&path, v.clone(), Some(v.into_bytes()), span);
    }
    for (key, value, span, line) in meta {
        match key {
            "mac" => out.mac.push(span),
            "lastmodified" if values::is_timestamp(value) => out.lastmodified.push((span, value.to_owned())),
            "mac_only_encrypted" => out.mac_only_encrypted = value == "true",
            _ => {}
        }
        out.meta_spans.push(line);
    }
    if out.mac.len() != 1 || out.lastmodified.len() != 1 {
        return Err(refuse("malformed sops metadata: no single `mac` and `lastmodified`"));
    }
    values::comments(text, &mut out, marks);
    Ok(out)
}

/// The byte range of `part`, a slice of `text`.
pub(crate) fn range_of(text: &str, part: &str) -> Range<usize> {
    let start = part.as_ptr() as usize - text.as_ptr() as usize;
    start..start + part.len()
}

/// Every value of a dotenv file, for `--rotate` (a key's path is the key alone).
pub(crate) fn values(text: &str) -> Result<Values, Error> {
    let mut vals = Vec::new();
    let mut meta = Vec::new();
    let mut at = 0;
    for raw in text.split_inclusive('\n') {
        let line = at..at + raw.len();
        at += raw.len();
        let l = raw.strip_suffix('\n').unwrap_or(raw);
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let (key, value) =
            l.split_once('=').ok_or_else(|| refuse("not a sops file: a dotenv line without `=`"))?;
        match key.strip_prefix("sops_") {
            Some(k) => meta.push((k, value, range_of(text, value), line)),
            None => vals.push((vec![key.to_owned()], value, range_of(text, value))),
        }
    }
    unique_keys(meta.iter().map(|m| m.0), "dotenv `sops_`")?;
    flat_values(text, vals.into_iter(), meta.into_iter(), &['#'])
}
