//! sops INI files: the metadata is the `[sops]` section, flattened as in dotenv files
//! ([`super::dotenv::Flat`]); go-ini pads every key of a section to the longest, and a new line
//! is padded to the same column.

use std::ops::Range;

use super::dotenv::{flat_values, range_of, unique_keys, Flat, Line};
use super::{contains, Store};
use hyperseal::Error;
use crate::model::{refuse, shown, Item, Layout, Meta};
use crate::values::Values;

/// sops's INI store.
pub(super) const STORE: &dyn Store = &IniStore;

struct IniStore;

impl Store for IniStore {
    fn names(&self) -> &'static [&'static str] {
        &["ini"]
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["ini"]
    }
    fn looks_like_sops(&self, input: &[u8], _text: Option<&str>) -> bool {
        contains(input, b"[sops]")
    }
    fn layout<'a>(&self, text: &'a str) -> Result<Box<dyn Layout + 'a>, Error> {
        Ok(Box::new(Ini::parse(text)?))
    }
    fn values(&self, text: &str) -> Result<Values, Error> {
        values(text)
    }
}

pub(crate) struct Ini {
    flat: Flat,
    /// The width keys are padded to in the `[sops]` section.
    width: usize,
}

impl Ini {
    pub(crate) fn parse(text: &str) -> Result<Self, Error> {
        let mut lines = Vec::new();
        let mut at = 0;
        let mut in_sops = false;
        let mut sections = 0;
        let mut width = 0;
        for raw in text.split_inclusive('\n') {
            let span = at..at + raw.len();
            at += raw.len();
            let l = raw.trim_end_matches(['\n', '\r']).trim();
            if l.is_empty() || l.starts_with(';') || l.starts_with('#') {
                continue;
            }
            if let Some(name) = l.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
                in_sops = name.trim() == "sops";
                sections += usize::from(in_sops);
                continue;
            }
            if !in_sops {
                continue;
            }
            let raw_line = raw.trim_end_matches(['\n', '\r']);
            let eq = raw_line.find('=').ok_or_else(|| refuse("not a sops file: an INI line without `=`"))?;
            width = width.max(raw_line[..eq].trim_end().len());
            let (key, value) = (raw_line[..eq].trim(), raw_line[eq + 1..].trim());
            lines.push(Line { key, value, span });
        }
        match sections {
            0 => return Err(refuse("not a sops file: no [sops] section")),
            1 => {}
            _ => return Err(refuse("malformed sops metadata: two [sops] sections")),
        }
        // go-ini keeps the last of a section's keys written twice.
        unique_keys(lines.iter().map(|l| l.key), "INI [sops]")?;
        Ok(Ini { flat: Flat::read(text, &lines)?, width })
    }
}

impl Layout for Ini {
    fn meta(&self) -> &Meta {
        &self.flat.meta
    }
    fn render(&self, group: usize, items: &[Item<'_>]) -> Result<Vec<(Range<usize>, String)>, Error> {
        let width = self.width;
        Ok(vec![self.flat.render(group, items, |k, v| format!("{k:<width$} = {v}\n"))?])
    }
}

/// Every value of an INI file outside `[sops]`, for `--rotate`: a key's path is its section
/// and itself (keys before any section are go-ini's `DEFAULT`).
pub(crate) fn values(text: &str) -> Result<Values, Error> {
    let mut vals = Vec::new();
    let mut meta = Vec::new();
    let mut section = "DEFAULT".to_owned();
    let mut keys = std::collections::HashSet::new();
    let mut at = 0;
    for raw in text.split_inclusive('\n') {
        let line = at..at + raw.len();
        at += raw.len();
        let l = raw.trim_end_matches(['\n', '\r']).trim();
        if l.is_empty() || l.starts_with(';') || l.starts_with('#') {
            continue;
        }
        if let Some(name) = l.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            section = name.trim().to_owned();
            continue;
        }
        let eq = l.find('=').ok_or_else(|| refuse("not a sops file: an INI line without `=`"))?;
        let (key, value) = (l[..eq].trim(), l[eq + 1..].trim());
        // go-ini keeps the last value of a key written twice in a section (sections of one
        // name are one), which sops alone then sees: the rotation would seal both.
        if !keys.insert((section.clone(), key)) {
            return Err(refuse(format!(
                "malformed sops file: the INI key {:?} appears twice in section [{}]",
                shown(key),
                shown(&section)
            )));
        }
        if section == "sops" {
            meta.push((key, value, range_of(text, value), line));
        } else {
            vals.push((vec![section.clone(), key.to_owned()], value, range_of(text, value)));
        }
    }
    flat_values(text, vals.into_iter(), meta.into_iter(), &[';', '#'])
}
