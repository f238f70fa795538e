//! Checksum list lines exactly as coreutils (`sha256sum`, `b2sum`, `cksum`) writes and reads
//! them, so lists move freely between hyperseal and those tools.
//!
//! Two line formats:
//! - GNU: `HEX  NAME` (text mode) or `HEX *NAME` (binary mode);
//! - BSD (`--tag`): `TAG (NAME) = HEX`, e.g. `SHA256 (file) = 9f86…`.
//!
//! A name holding a backslash, a newline or a carriage return is escaped (`\\`, `\n`, `\r`) and
//! the whole line starts with one `\`, so no file name can end a line early and forge another
//! (a file called `x\nHEX  y` would otherwise print a second, attacker-chosen entry).
//!
//! ```
//! use hyperseal_toolkit::checklist::{format_line, parse_line, Style};
//! let line = format_line(Style::Gnu, "SHA256", "ab01", "odd\nname");
//! assert_eq!(line, "\\ab01  odd\\nname");
//! let parsed = parse_line(&line).unwrap();
//! assert_eq!((parsed.tag, parsed.hex, parsed.name.as_str()), (None, "ab01", "odd\nname"));
//! ```

/// Which of the two line formats to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// `HEX  NAME`, as `sha256sum` prints by default.
    Gnu,
    /// `TAG (NAME) = HEX`, as `sha256sum --tag` (and BSD `sha256`) prints.
    Tag,
}

/// One parsed line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line<'a> {
    /// The algorithm tag of a BSD line (`SHA256`, `BLAKE2b`, …); `None` for a GNU line.
    pub tag: Option<&'a str>,
    /// The digest as written (hex digits, either case; the caller checks the length).
    pub hex: &'a str,
    /// The file name, unescaped.
    pub name: String,
}

/// Escapes a name as coreutils does; returns whether the line needs the leading `\`.
pub fn escape_name(name: &str) -> (bool, String) {
    if !name.contains(['\\', '\n', '\r']) {
        return (false, name.to_string());
    }
    let mut out = String::with_capacity(name.len() + 8);
    for c in name.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    (true, out)
}

/// Undoes [`escape_name`]; `None` for an escape coreutils does not write (it rejects those
/// lines as improperly formatted, and so do we).
fn unescape_name(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next()? {
            '\\' => out.push('\\'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            _ => return None,
        }
    }
    Some(out)
}

/// Formats one line (without its newline). `tag` is used only by [`Style::Tag`].
pub fn format_line(style: Style, tag: &str, hex: &str, name: &str) -> String {
    let (escaped, name) = escape_name(name);
    let lead = if escaped { "\\" } else { "" };
    match style {
        Style::Gnu => format!("{lead}{hex}  {name}"),
        Style::Tag => format!("{lead}{tag} ({name}) = {hex}"),
    }
}

/// A `--check` result line, `NAME: OK`: as coreutils, a name holding a newline or carriage
/// return is escaped and the line marked with a leading `\`, so it cannot fake another result.
pub fn status_line(name: &str, status: &str) -> String {
    if name.contains(['\n', '\r']) {
        format!("\\{}: {status}", escape_name(name).1)
    } else {
        format!("{name}: {status}")
    }
}

/// Parses one line (without its newline; a trailing `\r` is ignored, as coreutils does for
/// lists written on Windows). `None` for a line in neither format.
pub fn parse_line(line: &str) -> Option<Line<'_>> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let line = line.trim_start_matches(BLANKS);
    let (escaped, body) = match line.strip_prefix('\\') {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    let (tag, hex, raw_name) = parse_tag(body).or_else(|| parse_gnu(body))?;
    if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let name = if escaped { unescape_name(raw_name)? } else { raw_name.to_string() };
    if name.is_empty() {
        return None;
    }
    Some(Line { tag, hex, name })
}

/// `TAG (NAME) = HEX`: the tag, an optional space, `(`; the name runs to the *last* `)` (BSD
/// tools do not escape names, and a digest never holds a `)`); blanks may surround the `=`.
fn parse_tag(body: &str) -> Option<(Option<&str>, &str, &str)> {
    let open = body.find('(')?;
    let tag = body[..open].strip_suffix(' ').unwrap_or(&body[..open]);
    if tag.is_empty() || !tag.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return None;
    }
    let rest = &body[open + 1..];
    let close = rest.rfind(')')?;
    let hex = rest[close + 1..].trim_start_matches(BLANKS).strip_prefix('=')?.trim_start_matches(BLANKS);
    Some((Some(tag), hex, &rest[..close]))
}

/// `HEX  NAME` (text mode) or `HEX *NAME` (binary mode); the first separator may be a tab.
fn parse_gnu(body: &str) -> Option<(Option<&str>, &str, &str)> {
    let (hex, rest) = body.split_once(BLANKS)?;
    let name = rest.strip_prefix(' ').or_else(|| rest.strip_prefix('*'))?;
    Some((None, hex, name))
}

/// What coreutils counts as blanks inside a line.
const BLANKS: [char; 2] = [' ', '\t'];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gnu_lines_as_sha256sum_writes_them() {
        let p = parse_line("ab12  file name").unwrap();
        assert_eq!((p.tag, p.hex, p.name.as_str()), (None, "ab12", "file name"));
        assert_eq!(parse_line("ab12 *bin").unwrap().name, "bin");
        assert_eq!(parse_line("\\ab12  a\\\\b\\nc").unwrap().name, "a\\b\nc");
        // Without the leading backslash a name is taken literally.
        assert_eq!(parse_line("ab12  a\\nb").unwrap().name, "a\\nb");
        assert_eq!(parse_line("ab12  win\r").unwrap().name, "win");
    }

    #[test]
    fn bsd_tag_lines() {
        let p = parse_line("SHA256 (a (b) = c) = ab12").unwrap();
        assert_eq!((p.tag, p.hex, p.name.as_str()), (Some("SHA256"), "ab12", "a (b) = c"));
        let p = parse_line("\\BLAKE2b (x\\ny) = 00ff").unwrap();
        assert_eq!((p.tag, p.name.as_str()), (Some("BLAKE2b"), "x\ny"));
        // coreutils also reads these spellings.
        assert_eq!(parse_line("SHA256(f)=ab12").unwrap().hex, "ab12");
        assert_eq!(parse_line("SHA256 (f)  =\tab12").unwrap().hex, "ab12");
        assert_eq!(parse_line("SHA256  (f) = ab12"), None);
    }

    #[test]
    fn rejects_what_coreutils_rejects() {
        for bad in
            ["", "ab12", "ab12 name", "zz  name", "ab12  ", "\\ab12  a\\qb", "\\ab12  trailing\\", "(x) = ab"]
        {
            assert_eq!(parse_line(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_newline_cannot_forge_a_line() {
        let evil = "x\n0000000000000000000000000000000000000000000000000000000000000000  /etc/passwd";
        for style in [Style::Gnu, Style::Tag] {
            let line = format_line(style, "SHA256", "ab12", evil);
            assert!(!line.contains('\n'));
            assert_eq!(parse_line(&line).unwrap().name, evil);
        }
        assert_eq!(status_line(evil, "OK").lines().count(), 1);
        assert_eq!(status_line("a\\b", "OK"), "a\\b: OK");
    }
}
