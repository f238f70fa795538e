//! sops YAML files: the `sops` mapping found by a YAML 1.2 parser's events (saphyr-parser), each
//! age entry a run of whole lines (a block sequence item) that is kept, dropped, or written
//! after the last one in the same indentation as the entries already there.

use std::ops::Range;

use saphyr_parser::{Event, Marker, Parser, ScalarStyle, Span};

use super::{contains, Store};
use hyperseal::Error;
use crate::model::{meta_of, refuse, shown, Item, Layout, Meta, Node, NOT_METADATA};
use crate::values::{self, Values};

/// sops's YAML store.
pub(super) const STORE: &dyn Store = &YamlStore;

struct YamlStore;

impl Store for YamlStore {
    fn names(&self) -> &'static [&'static str] {
        &["yaml"]
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["yaml", "yml"]
    }
    fn looks_like_sops(&self, input: &[u8], text: Option<&str>) -> bool {
        match text.and_then(has_metadata) {
            Some(found) => found,
            None => input.starts_with(b"sops:") || contains(input, b"\nsops:"),
        }
    }
    fn layout<'a>(&self, text: &'a str) -> Result<Box<dyn Layout + 'a>, Error> {
        Ok(Box::new(Yaml::parse(text)?))
    }
    fn values(&self, text: &str) -> Result<Values, Error> {
        values(text)
    }
}

/// Nesting deeper than this is refused: the parser's own depth is the input's, and the
/// metadata is three levels deep.
const MAX_DEPTH: usize = 256;

/// The most documents one YAML file may have.
const MAX_DOCUMENTS: usize = 4096;

/// The columns of an age entry: its `-`, its keys, its `enc` block's lines.
type Style = (usize, usize, usize);

pub(crate) struct Yaml<'a> {
    text: &'a str,
    /// Each document's metadata, and per group the style of its entries.
    docs: Vec<(Meta, Vec<Style>)>,
}

/// Byte offsets from the parser's positions (lines, and columns in characters).
struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines { text, starts }
    }
    fn byte(&self, m: &Marker) -> usize {
        let Some(&start) = self.starts.get(m.line().saturating_sub(1)) else { return self.text.len() };
        let line = &self.text[start..];
        start + line.char_indices().nth(m.col()).map_or(line.len(), |(i, _)| i)
    }
    fn line_start(&self, byte: usize) -> usize {
        self.text[..byte].rfind('\n').map_or(0, |i| i + 1)
    }
}

struct Events<'a> {
    parser: Parser<'a, saphyr_parser::StrInput<'a>>,
}

impl<'a> Events<'a> {
    fn next(&mut self) -> Result<(Event<'a>, Span), Error> {
        match self.parser.next_event() {
            Some(Ok(ev)) => Ok(ev),
            Some(Err(e)) => Err(refuse(format!("not a sops file: YAML: {e}"))),
            None => Err(refuse("not a sops file: YAML ends early")),
        }
    }
}

/// The keys of one mapping, to refuse a second of the same name: sops (yaml.v3) refuses it,
/// and a reader that took the first or the last would read another file than sops.
#[derive(Default)]
pub(crate) struct Names(std::collections::HashSet<String>);

impl Names {
    fn add(&mut self, key: &str, at: &Span) -> Result<(), Error> {
        match self.0.insert(key.to_owned()) {
            true => Ok(()),
            false => Err(refuse(format!(
                "malformed sops file: the YAML key {:?} appears twice in one mapping (line {})",
                shown(key),
                at.start.line()
            ))),
        }
    }
}

/// Builds the value that starts with `first`; `keep` false skips it (a value outside `sops`).
fn node(
    ev: &mut Events<'_>,
    lines: &Lines<'_>,
    first: (Event<'_>, Span),
    depth: usize,
    keep: bool,
) -> Result<Option<Node>, Error> {
    if depth > MAX_DEPTH {
        return Err(hyperseal::limits::too_many("YAML nesting levels", MAX_DEPTH));
    }
    let (e, span) = first;
    let start = lines.byte(&span.start);
    match e {
        Event::Scalar(v, _, _, _) => {
            Ok(keep.then(|| Node::Str(v.into_owned(), start..lines.byte(&span.end))))
        }
        Event::Alias(_) if !keep => Ok(None),
        Event::Alias(_) => Err(refuse("malformed sops metadata: a YAML alias")),
        Event::SequenceStart(..) => {
            let mut items = Vec::new();
            loop {
                let next = ev.next()?;
                if matches!(next.0, Event::SequenceEnd) {
                    return Ok(keep.then(|| Node::Seq(items, start..lines.byte(&next.1.start))));
                }
                if let Some(n) = node(ev, lines, next, depth + 1, keep)? {
                    items.push(n);
                }
            }
        }
        Event::MappingStart(..) => {
            let mut entries = Vec::new();
            let mut names = Names::default();
            loop {
                let next = ev.next()?;
                if matches!(next.0, Event::MappingEnd) {
                    return Ok(keep.then(|| Node::Map(entries, start..lines.byte(&next.1.start))));
                }
                let key = match (&next.0, keep) {
                    (Event::Scalar(k, _, _, _), _) => Some(k.to_string()),
                    (_, true) => return Err(refuse("malformed sops metadata: a key that is not a string")),
                    _ => None,
                };
                if let Some(k) = &key {
                    names.add(k, &next.1)?;
                }
                node(ev, lines, next, depth + 1, false)?;
                let value = ev.next()?;
                if let Some(v) = node(ev, lines, value, depth + 1, keep)? {
                    entries.push((key.unwrap_or_default(), v));
                }
            }
        }
        _ => Err(refuse("not a sops file: unexpected YAML")),
    }
}

impl<'a> Yaml<'a> {
    /// sops writes its metadata into every document of a file and reads the first's; each
    /// document's age entries are changed alike, as `sops updatekeys` writes them.
    pub(crate) fn parse(text: &'a str) -> Result<Self, Error> {
        // YAML breaks lines at a lone CR too; positions are mapped to bytes by LF (a CR LF pair
        // is one break either way), so a lone CR, which sops never writes, is refused.
        if text.as_bytes().windows(2).any(|w| w[0] == b'\r' && w[1] != b'\n') || text.ends_with('\r') {
            return Err(refuse("not a sops file: a carriage return without a line feed in YAML"));
        }
        let lines = Lines::new(text);
        let mut ev = Events { parser: Parser::new_from_str(text) };
        let mut docs: Vec<Option<Node>> = Vec::new();
        loop {
            let (e, _) = ev.next()?;
            match e {
                Event::StreamStart | Event::DocumentEnd => {}
                Event::StreamEnd => break,
                Event::DocumentStart(_) => {
                    if docs.len() >= MAX_DOCUMENTS {
                        return Err(hyperseal::limits::too_many("YAML documents", MAX_DOCUMENTS));
                    }
                    docs.push(None);
                }
                Event::MappingStart(..) if !docs.is_empty() => {
                    // A document's top level: keep only the `sops` value.
                    let mut sops = None;
                    let mut names = Names::default();
                    loop {
                        let k = ev.next()?;
                        if matches!(k.0, Event::MappingEnd) {
                            break;
                        }
                        if let Event::Scalar(key, ..) = &k.0 {
                            names.add(key, &k.1)?;
                        }
                        let is_sops = matches!(&k.0, Event::Scalar(s, ScalarStyle::Plain | ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted, _, _) if s == "sops");
                        node(&mut ev, &lines, k, 1, false)?;
                        let v = ev.next()?;
                        let n = node(&mut ev, &lines, v, 1, is_sops)?;
                        if is_sops {
                            sops = n;
                        }
                    }
                    *docs.last_mut().expect("a document") = sops;
                }
                _ => return Err(refuse("not a sops file: a YAML document that is not a mapping")),
            }
        }
        if docs.is_empty() {
            return Err(refuse("not a sops file: no YAML document"));
        }
        // sops reads the first document's metadata: a plain value there is no metadata at all.
        if docs[0].as_ref().is_some_and(|n| !matches!(n, Node::Map(..))) {
            return Err(refuse(NOT_METADATA));
        }
        let docs = docs
            .iter()
            .map(|d| {
                let sops = d
                    .as_ref()
                    .ok_or_else(|| refuse("not a sops file: a YAML document without `sops` metadata"))?;
                Self::document_meta(text, &lines, sops)
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let names = |m: &Meta| -> Vec<Vec<String>> {
            m.groups.iter().map(|g| g.entries.iter().map(|e| e.recipient.clone()).collect()).collect()
        };
        if docs.iter().any(|(m, _)| names(m) != names(&docs[0].0)) {
            return Err(refuse(
                "the YAML documents' age entries differ (sops reads the first's): fix them with sops",
            ));
        }
        Ok(Yaml { text, docs })
    }

    /// One document's metadata, each age entry as whole lines: from its own line to the next
    /// entry's, and the last to the line of what follows the list.
    fn document_meta(text: &str, lines: &Lines<'_>, sops: &Node) -> Result<(Meta, Vec<Style>), Error> {
        let mut meta = meta_of(sops)?;
        let lists: Vec<Option<&Node>> = match sops_groups(sops) {
            Some(groups) => groups.iter().map(|g| age_list(g)).collect(),
            None => vec![age_list(sops)],
        };
        let mut style = Vec::new();
        for (group, list) in meta.groups.iter_mut().zip(lists) {
            let Some(Node::Seq(items, seq_span)) = list else {
                style.push((0, 0, 0));
                continue;
            };
            let mut ends: Vec<usize> =
                items.iter().skip(1).map(|i| lines.line_start(i.span().start)).collect();
            let tail = lines.line_start(seq_span.end);
            if text[tail..seq_span.end].trim().is_empty() && tail > items.last().map_or(0, |i| i.span().start)
            {
                ends.push(tail);
            } else {
                ends.push(seq_span.end);
            }
            for (entry, end) in group.entries.iter_mut().zip(ends) {
                entry.span = lines.line_start(entry.span.start)..end;
            }
            style.push(Self::style_of(text, group.entries.first().map(|e| e.span.clone())));
        }
        for e in meta.groups.iter().flat_map(|g| &g.entries) {
            if text[e.span.clone()].trim_start().starts_with('[') || !text[e.span.clone()].ends_with('\n') {
                return Err(refuse("malformed sops metadata: an age list in flow style"));
            }
            // New entries are written in the columns of the first one, counted in spaces: a
            // tab there (YAML takes one before `-`) would give lines of another indentation.
            if !text[e.span.clone()].trim_start_matches(' ').starts_with('-') {
                return Err(refuse("malformed sops metadata: an age entry not indented with spaces"));
            }
        }
        Ok((meta, style))
    }

    /// The columns of an entry as sops wrote it: `- ` at one, its keys two further, the `enc`
    /// block's lines where the first entry has them.
    fn style_of(text: &str, first: Option<Range<usize>>) -> Style {
        let Some(span) = first else { return (0, 2, 4) };
        let body = &text[span];
        let dash = body.len() - body.trim_start_matches(' ').len();
        let keys = dash + 2;
        let block = body
            .lines()
            .find(|l| l.trim_start().starts_with("-----BEGIN"))
            .map_or(keys + 2, |l| l.len() - l.trim_start_matches(' ').len());
        (dash, keys, block)
    }
}

fn sops_groups(sops: &Node) -> Option<&[Node]> {
    match sops {
        Node::Map(m, _) => m.iter().find(|(k, _)| k == "key_groups").and_then(|(_, v)| match v {
            Node::Seq(s, _) => Some(&s[..]),
            _ => None,
        }),
        _ => None,
    }
}

fn age_list(group: &Node) -> Option<&Node> {
    match group {
        Node::Map(m, _) => m.iter().find(|(k, _)| k == "age").map(|(_, v)| v),
        _ => None,
    }
}

impl Layout for Yaml<'_> {
    fn meta(&self) -> &Meta {
        &self.docs[0].0
    }

    fn render(&self, group: usize, items: &[Item<'_>]) -> Result<Vec<(Range<usize>, String)>, Error> {
        let mut out = Vec::new();
        for (meta, style) in &self.docs {
            let entries = &meta.groups[group].entries;
            let (Some(first), Some(last)) = (entries.first(), entries.last()) else {
                return Err(refuse("no age entry to write beside"));
            };
            let (dash, keys, block) = style[group];
            let mut text = String::new();
            for item in items {
                match item {
                    // This document's own lines for the entry (the documents agree on who).
                    Item::Kept(e) => {
                        let own = entries.iter().find(|o| o.recipient == e.recipient).unwrap_or(e);
                        text.push_str(&self.text[own.span.clone()]);
                    }
                    Item::New { recipient, enc } => {
                        // As sops (yaml.v3) writes an entry: `enc` first, a literal block.
                        text.push_str(&format!("{:dash$}- enc: |\n", ""));
                        for line in enc.lines() {
                            text.push_str(&format!("{:block$}{line}\n", ""));
                        }
                        text.push_str(&format!("{:keys$}recipient: {recipient}\n", ""));
                    }
                }
            }
            out.push((first.span.start..last.span.end, text));
        }
        Ok(out)
    }
}

/// A whole one-document YAML file as a tree (`.sops.yaml`).
#[cfg(all(feature = "fs", any(unix, windows)))]
pub(crate) fn document(text: &str) -> Result<Node, Error> {
    let lines = Lines::new(text);
    let mut ev = Events { parser: Parser::new_from_str(text) };
    let mut root = None;
    loop {
        let (e, span) = ev.next()?;
        match e {
            Event::StreamStart | Event::DocumentStart(_) | Event::DocumentEnd => {}
            Event::StreamEnd => break,
            _ if root.is_none() => root = node(&mut ev, &lines, (e, span), 0, true)?,
            _ => return Err(refuse("more than one YAML document")),
        }
    }
    root.ok_or_else(|| refuse("an empty YAML file"))
}

/// Every value of a YAML file outside `sops`, for `--rotate` (each document in turn, as sops
/// walks them), and the place of each document's `mac` and `lastmodified`.
pub(crate) fn values(text: &str) -> Result<Values, Error> {
    let lines = Lines::new(text);
    let mut ev = Events { parser: Parser::new_from_str(text) };
    let mut out = Values::default();
    out.branch(&[]);
    loop {
        let (e, _) = ev.next()?;
        match e {
            Event::StreamStart | Event::DocumentStart(_) | Event::DocumentEnd => {}
            Event::StreamEnd => break,
            Event::MappingStart(..) => {
                let mut names = Names::default();
                loop {
                    let k = ev.next()?;
                    if matches!(k.0, Event::MappingEnd) {
                        break;
                    }
                    let Event::Scalar(key, ..) = &k.0 else {
                        return Err(refuse("not a sops file: a key that is not a string"));
                    };
                    let key = key.to_string();
                    names.add(&key, &k.1)?;
                    node(&mut ev, &lines, k, 1, false)?;
                    let v = ev.next()?;
                    let n = node(&mut ev, &lines, v, 1, true)?.expect("kept");
                    if key == "sops" {
                        values::meta_values(text, &n, &mut out)?;
                    } else {
                        values::walk(
                            &n,
                            &mut vec![key],
                            &mut out,
                            &|raw: &str, v: &str| {
                                // Quoted and block scalars are strings; plain ones typed as yaml.v3 types them.
                                if raw.starts_with(['\'', '"', '|', '>']) {
                                    Some(v.as_bytes().to_vec())
                                } else {
                                    values::yaml_plain(v)
                                }
                            },
                            text,
                        );
                    }
                }
            }
            _ => return Err(refuse("not a sops file: a YAML document that is not a mapping")),
        }
    }
    values::comments(text, &mut out, &['#']);
    Ok(out)
}

/// Whether the first document of `text` is a mapping whose `sops` value is a mapping (sops
/// metadata, damaged or not); `None` where the YAML does not parse that far.
pub(crate) fn has_metadata(text: &str) -> Option<bool> {
    let lines = Lines::new(text);
    let mut ev = Events { parser: Parser::new_from_str(text) };
    loop {
        match ev.next().ok()?.0 {
            Event::StreamStart | Event::DocumentStart(_) => {}
            Event::MappingStart(..) => break,
            _ => return Some(false),
        }
    }
    loop {
        let k = ev.next().ok()?;
        if matches!(k.0, Event::MappingEnd) {
            return Some(false);
        }
        let is_sops = matches!(&k.0, Event::Scalar(s, ..) if s == "sops");
        node(&mut ev, &lines, k, 1, false).ok()?;
        let v = ev.next().ok()?;
        if is_sops {
            return Some(matches!(v.0, Event::MappingStart(..)));
        }
        node(&mut ev, &lines, v, 1, false).ok()?;
    }
}
