//! sops JSON files (and binary files, which sops stores as JSON): a strict JSON reader (RFC 8259)
//! that records the byte range of every value, so an age entry (an object in the `age` array) is
//! replaced by its range; new entries are written after the last one as sops (Go's
//! encoding/json with its indentation) writes them.

use std::ops::Range;

use super::{contains, Store};
use hyperseal::Error;
use crate::model::{meta_of, refuse, shown, Item, Layout, Meta, Node, NOT_METADATA};
use crate::values::{self, Values};

/// sops's JSON (and binary, which it wraps in JSON) store.
pub(super) const STORE: &dyn Store = &JsonStore;

struct JsonStore;

impl Store for JsonStore {
    fn names(&self) -> &'static [&'static str] {
        &["json", "binary"]
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["json"]
    }
    fn looks_like_sops(&self, input: &[u8], text: Option<&str>) -> bool {
        match text.and_then(Json::has_metadata) {
            Some(found) => found,
            None => contains(input, b"\"sops\""),
        }
    }
    fn layout<'a>(&self, text: &'a str) -> Result<Box<dyn Layout + 'a>, Error> {
        Ok(Box::new(Json::parse(text)?))
    }
    fn values(&self, text: &str) -> Result<Values, Error> {
        values(text)
    }
}

/// Nesting deeper than this is refused (the reader recurses once per level).
const MAX_DEPTH: usize = 256;

pub(crate) struct Json<'a> {
    text: &'a str,
    meta: Meta,
}

struct Reader<'a> {
    s: &'a [u8],
    at: usize,
}

fn bad(what: &str) -> Error {
    refuse(format!("not a sops file: JSON: {what}"))
}

impl<'a> Reader<'a> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.at) {
            self.at += 1;
        }
    }
    fn eat(&mut self, b: u8) -> Result<(), Error> {
        self.ws();
        if self.s.get(self.at) == Some(&b) {
            self.at += 1;
            Ok(())
        } else {
            Err(bad(&format!("expected `{}` at byte {}", b as char, self.at)))
        }
    }
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.at).copied()
    }

    /// One value; `keep` false checks its syntax and builds nothing.
    fn value(&mut self, depth: usize, keep: bool) -> Result<Option<Node>, Error> {
        if depth > MAX_DEPTH {
            return Err(hyperseal::limits::too_many("JSON nesting levels", MAX_DEPTH));
        }
        let start = {
            self.ws();
            self.at
        };
        match self.peek() {
            Some(b'{') => {
                self.at += 1;
                let mut entries = Vec::new();
                if self.peek() == Some(b'}') {
                    self.at += 1;
                } else {
                    // Go's encoding/json keeps the last of two equal names, where `Node::get`
                    // finds the first: every object built (the metadata, or the whole file for
                    // `--rotate`) is refused with one.
                    let mut names = Names::default();
                    loop {
                        self.ws();
                        let key = self.string()?;
                        if keep {
                            names.add(&key)?;
                        }
                        self.eat(b':')?;
                        let child = self.value(depth + 1, keep)?;
                        if let Some(v) = child {
                            entries.push((key, v));
                        }
                        match self.peek() {
                            Some(b',') => self.at += 1,
                            Some(b'}') => {
                                self.at += 1;
                                break;
                            }
                            _ => return Err(bad("expected `,` or `}`")),
                        }
                    }
                }
                Ok(keep.then_some(Node::Map(entries, start..self.at)))
            }
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                if self.peek() == Some(b']') {
                    self.at += 1;
                } else {
                    loop {
                        if let Some(v) = self.value(depth + 1, keep)? {
                            items.push(v);
                        }
                        match self.peek() {
                            Some(b',') => self.at += 1,
                            Some(b']') => {
                                self.at += 1;
                                break;
                            }
                            _ => return Err(bad("expected `,` or `]`")),
                        }
                    }
                }
                Ok(keep.then_some(Node::Seq(items, start..self.at)))
            }
            Some(b'"') => {
                let s = self.string()?;
                Ok(keep.then_some(Node::Str(s, start..self.at)))
            }
            Some(_) => {
                self.scalar()?;
                let text = String::from_utf8_lossy(&self.s[start..self.at]).into_owned();
                Ok(keep.then_some(Node::Str(text, start..self.at)))
            }
            None => Err(bad("ends early")),
        }
    }

    /// `true`, `false`, `null` or a number.
    fn scalar(&mut self) -> Result<(), Error> {
        for word in [&b"true"[..], b"false", b"null"] {
            if self.s[self.at..].starts_with(word) {
                self.at += word.len();
                return Ok(());
            }
        }
        let start = self.at;
        if self.s.get(self.at) == Some(&b'-') {
            self.at += 1;
        }
        let digits = |r: &mut Self| {
            let from = r.at;
            while r.s.get(r.at).is_some_and(u8::is_ascii_digit) {
                r.at += 1;
            }
            r.at > from
        };
        if !digits(self) {
            return Err(bad(&format!("unexpected byte at {start}")));
        }
        if self.s.get(self.at) == Some(&b'.') {
            self.at += 1;
            if !digits(self) {
                return Err(bad("a number without digits after `.`"));
            }
        }
        if let Some(b'e' | b'E') = self.s.get(self.at) {
            self.at += 1;
            if let Some(b'+' | b'-') = self.s.get(self.at) {
                self.at += 1;
            }
            if !digits(self) {
                return Err(bad("a number without an exponent"));
            }
        }
        Ok(())
    }

    /// A string, unescaped (surrogate pairs joined; a lone surrogate is refused).
    fn string(&mut self) -> Result<String, Error> {
        if self.s.get(self.at) != Some(&b'"') {
            return Err(bad("expected a string"));
        }
        self.at += 1;
        let mut out = String::new();
        loop {
            let run = self.at;
            while let Some(&b) = self.s.get(self.at) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.at += 1;
            }
            // Whole UTF-8 characters: the input is a &str and the run stops at ASCII only.
            out.push_str(std::str::from_utf8(&self.s[run..self.at]).map_err(|_| bad("not UTF-8"))?);
            match self.s.get(self.at) {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    let c = *self.s.get(self.at).ok_or_else(|| bad("ends in a string"))?;
                    self.at += 1;
                    match c {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let c = if (0xd800..0xdc00).contains(&hi) {
                                if self.s.get(self.at..self.at + 2) != Some(b"\\u") {
                                    return Err(bad("a lone surrogate"));
                                }
                                self.at += 2;
                                let lo = self.hex4()?;
                                if !(0xdc00..0xe000).contains(&lo) {
                                    return Err(bad("a lone surrogate"));
                                }
                                0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                            } else {
                                hi
                            };
                            out.push(char::from_u32(c).ok_or_else(|| bad("a lone surrogate"))?);
                        }
                        _ => return Err(bad("an unknown escape")),
                    }
                }
                _ => return Err(bad("a control character or the end in a string")),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, Error> {
        let h = self.s.get(self.at..self.at + 4).ok_or_else(|| bad("a short \\u escape"))?;
        let h = std::str::from_utf8(h).ok().and_then(|h| u32::from_str_radix(h, 16).ok());
        self.at += 4;
        h.ok_or_else(|| bad("a bad \\u escape"))
    }
}

/// The member names of one object, to refuse a second of the same name (sops and hyperseal
/// would read different members).
#[derive(Default)]
struct Names(std::collections::HashSet<String>);

impl Names {
    fn add(&mut self, name: &str) -> Result<(), Error> {
        match self.0.insert(name.to_owned()) {
            true => Ok(()),
            false => Err(duplicate(name)),
        }
    }
}

fn duplicate(name: &str) -> Error {
    refuse(format!("malformed sops file: the JSON member name {:?} appears twice in one object", shown(name)))
}

/// A JSON string as Go's encoding/json writes it (it also escapes `<`, `>` and `&`).
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl<'a> Json<'a> {
    pub(crate) fn parse(text: &'a str) -> Result<Self, Error> {
        let mut r = Reader { s: text.as_bytes(), at: 0 };
        if r.peek() != Some(b'{') {
            return Err(bad("not an object"));
        }
        r.at += 1;
        let mut sops = None;
        let mut names = Names::default();
        if r.peek() != Some(b'}') {
            loop {
                r.ws();
                let key = r.string()?;
                names.add(&key)?;
                r.eat(b':')?;
                let is_sops = key == "sops";
                let v = r.value(1, is_sops)?;
                if is_sops {
                    sops = v;
                }
                match r.peek() {
                    Some(b',') => r.at += 1,
                    Some(b'}') => break,
                    _ => return Err(bad("expected `,` or `}`")),
                }
            }
        }
        r.at += 1;
        if r.peek().is_some() {
            return Err(bad("bytes after the object"));
        }
        let sops = sops.ok_or_else(|| refuse("not a sops file: no `sops` metadata"))?;
        if !matches!(sops, Node::Map(..)) {
            return Err(refuse(NOT_METADATA));
        }
        Ok(Json { text, meta: meta_of(&sops)? })
    }

    /// Whether the file is a JSON object whose `sops` member is an object (sops metadata,
    /// damaged or not); `None` where it is not JSON at all.
    pub(crate) fn has_metadata(text: &str) -> Option<bool> {
        let mut r = Reader { s: text.as_bytes(), at: 0 };
        if r.peek() != Some(b'{') {
            return Some(false);
        }
        r.at += 1;
        let mut found = false;
        if r.peek() != Some(b'}') {
            loop {
                r.ws();
                let key = r.string().ok()?;
                r.eat(b':').ok()?;
                found |= key == "sops" && r.peek() == Some(b'{');
                r.value(1, false).ok()?;
                match r.peek() {
                    Some(b',') => r.at += 1,
                    Some(b'}') => break,
                    _ => return None,
                }
            }
        }
        Some(found)
    }

    /// The whitespace before `at` on its line, if only whitespace is there (`None`: `at` does
    /// not start its line, as in JSON written on one line).
    fn indent_at(&self, at: usize) -> Option<&str> {
        let line = self.text[..at].rfind('\n').map_or(0, |i| i + 1);
        let ind = &self.text[line..at];
        ind.trim().is_empty().then_some(ind)
    }
}

impl Layout for Json<'_> {
    fn meta(&self) -> &Meta {
        &self.meta
    }

    fn render(&self, group: usize, items: &[Item<'_>]) -> Result<Vec<(Range<usize>, String)>, Error> {
        let entries = &self.meta.groups[group].entries;
        let (Some(first), Some(last)) = (entries.first(), entries.last()) else {
            return Err(refuse("no age entry to write beside"));
        };
        let outer = self.indent_at(first.span.start);
        let sep = match (entries.get(1), outer) {
            (Some(second), _) => self.text[first.span.end..second.span.start].to_owned(),
            (None, Some(outer)) => format!(",\n{outer}"),
            (None, None) => ",".to_owned(),
        };
        let outer = outer.unwrap_or("");
        // The indentation of the first entry's keys, to write a new entry's the same way.
        let inner = {
            let body = &self.text[first.span.clone()];
            let key = body.find('"').unwrap_or(0);
            let line = body[..key].rfind('\n').map(|i| &body[i + 1..key]);
            line.filter(|l| l.trim().is_empty()).map(str::to_owned)
        };
        let mut parts = Vec::new();
        for item in items {
            parts.push(match item {
                Item::Kept(e) => self.text[e.span.clone()].to_owned(),
                Item::New { recipient, enc } => match &inner {
                    Some(inner) => format!(
                        "{{\n{inner}\"enc\": {},\n{inner}\"recipient\": {}\n{outer}}}",
                        quote(enc),
                        quote(recipient)
                    ),
                    None => format!("{{\"enc\":{},\"recipient\":{}}}", quote(enc), quote(recipient)),
                },
            });
        }
        Ok(vec![(first.span.start..last.span.end, parts.join(&sep))])
    }
}

/// Every value of a JSON file outside `sops`, for `--rotate`, and the place of its `mac` and
/// `lastmodified`. A binary file is `{"data": …}`: one leaf at `data`.
pub(crate) fn values(text: &str) -> Result<Values, Error> {
    let mut r = Reader { s: text.as_bytes(), at: 0 };
    let root = r.value(0, true)?.ok_or_else(|| bad("empty"))?;
    if r.peek().is_some() {
        return Err(bad("bytes after the object"));
    }
    let Node::Map(entries, _) = &root else { return Err(bad("not an object")) };
    // The reader refused a name twice in any object of the file: sops would keep both below
    // the top level, but a file like that is no file sops writes, and one rule is simpler.
    let mut out = Values::default();
    out.branch(&[]);
    for (k, v) in entries {
        if k == "sops" {
            values::meta_values(text, v, &mut out)?;
        } else {
            values::walk(
                v,
                &mut vec![k.clone()],
                &mut out,
                &|raw: &str, v: &str| {
                    // A string is itself; a literal is typed as Go's encoding/json reads it.
                    if raw.starts_with('"') {
                        Some(v.as_bytes().to_vec())
                    } else {
                        values::json_literal(v)
                    }
                },
                text,
            );
        }
    }
    Ok(out)
}
