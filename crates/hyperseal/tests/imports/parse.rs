//! Reading a Rust file as the import check needs it: its `mod` declarations (inline, `#[path]`,
//! test-only) and every path into the crate (`crate::`, `super::`, `self::`), with comments,
//! strings and doc links left out. Tokens, not a full parser: only paths and module
//! declarations matter here.

use std::path::{Path, PathBuf};

pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a folder") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// What one file's code declares and names.
#[derive(Default)]
pub(crate) struct Parsed {
    /// `mod name;` declarations
    pub(crate) mods: Vec<ModDecl>,
    /// inline `mod name { … }`, each as its nest of names, in the order they open
    pub(crate) inline: Vec<Vec<String>>,
    /// paths into the crate (`crate::`, `super::`, `self::`)
    pub(crate) paths: Vec<Import>,
}

#[derive(Clone)]
pub(crate) struct ModDecl {
    /// the inline modules it is declared in
    pub(crate) inline: Vec<String>,
    pub(crate) name: String,
    /// whether only tests compile it
    pub(crate) test: bool,
    /// its `#[path = "…"]`
    pub(crate) path: Option<String>,
}

/// One path into the crate, with the inline modules it is written in and where it stands.
pub(crate) struct Import {
    pub(crate) inline: Vec<String>,
    pub(crate) segments: Vec<String>,
    pub(crate) at: usize,
    pub(crate) end: usize,
}

#[derive(Debug, PartialEq)]
pub(crate) enum Token {
    Ident(String),
    /// a string literal, at the offset of its opening quote
    Str(usize),
    Punct(&'static str),
    Other,
}

/// Reads one file's module declarations and its paths into the crate.
pub(crate) fn parse(text: &str) -> Parsed {
    let code = blank(text);
    let tokens = tokenize(&code);
    let ident = |i: usize, s: &str| matches!(tokens.get(i), Some((Token::Ident(x), _)) if x == s);
    let punct = |i: usize, s: &str| matches!(tokens.get(i), Some((Token::Punct(p), _)) if *p == s);

    let mut parsed = Parsed::default();
    // One entry per open brace: the inline module it opens, if any, and whether only tests
    // compile what is inside.
    let mut braces: Vec<(Option<String>, bool)> = Vec::new();
    let nest =
        |braces: &[(Option<String>, bool)]| braces.iter().filter_map(|(m, _)| m.clone()).collect::<Vec<_>>();
    let in_test = |braces: &[(Option<String>, bool)]| braces.iter().any(|(_, t)| *t);
    // The attributes read since the last item: a `#[path]`, a `#[cfg(test)]`.
    let mut pending_path: Option<String> = None;
    let mut pending_test = false;
    let mut i = 0;
    while i < tokens.len() {
        let (token, at) = &tokens[i];
        match token {
            Token::Punct("#") if punct(i + 1, "[") && ident(i + 2, "path") && punct(i + 3, "=") => {
                if let Some((Token::Str(q), _)) = tokens.get(i + 4) {
                    let rest = &text[q + 1..];
                    pending_path = Some(rest[..rest.find('"').unwrap_or(0)].to_string());
                }
                i += 5;
            }
            Token::Punct("#") if punct(i + 1, "[") && ident(i + 2, "cfg") && punct(i + 3, "(") => {
                // Test only: `cfg(test)`, or `test` among the terms of `cfg(all(…))`.
                let mut depth = 0;
                let mut j = i + 3;
                let all = ident(i + 4, "all");
                while j < tokens.len() {
                    match &tokens[j].0 {
                        Token::Punct("(") => depth += 1,
                        Token::Punct(")") => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        Token::Ident(t) if t == "test" => {
                            pending_test |= depth == 1 || (all && depth == 2);
                        }
                        _ => {}
                    }
                    j += 1;
                }
                i = j + 1;
            }
            Token::Ident(m) if m == "mod" => {
                if let Some((Token::Ident(name), _)) = tokens.get(i + 1) {
                    if punct(i + 2, ";") {
                        let inline = nest(&braces);
                        let test = in_test(&braces) || pending_test;
                        let path = pending_path.take();
                        parsed.mods.push(ModDecl { inline, name: name.clone(), test, path });
                        pending_test = false;
                        i += 3;
                        continue;
                    }
                    if punct(i + 2, "{") {
                        braces.push((Some(name.clone()), pending_test));
                        parsed.inline.push(nest(&braces));
                        (pending_path, pending_test) = (None, false);
                        i += 3;
                        continue;
                    }
                }
                i += 1;
            }
            Token::Ident(s)
                if matches!(s.as_str(), "crate" | "super" | "self")
                    && punct(i + 1, "::")
                    && !(i > 0 && (ident(i - 1, "in") || punct(i - 1, "::"))) =>
            {
                let mut found = Vec::new();
                let next = path_tree(&tokens, i, Vec::new(), &mut found);
                let inline = nest(&braces);
                let test = pending_test || in_test(&braces);
                for (segments, end) in found.into_iter().filter(|_| !test) {
                    parsed.paths.push(Import { inline: inline.clone(), segments, at: *at, end });
                }
                i = next.max(i + 1);
            }
            Token::Punct("{") => {
                braces.push((None, pending_test));
                (pending_path, pending_test) = (None, false);
                i += 1;
            }
            Token::Punct("}") => {
                braces.pop();
                (pending_path, pending_test) = (None, false);
                i += 1;
            }
            Token::Punct(";") => {
                (pending_path, pending_test) = (None, false);
                i += 1;
            }
            _ => i += 1,
        }
    }
    parsed
}

/// Reads a path or use tree from `i` (`a::b`, `a::{b, c::d as e}`, `a::*`) onto `prefix`:
/// each leaf as its segments with the offset where it ends; returns the index after it.
pub(crate) fn path_tree(
    tokens: &[(Token, usize)],
    mut i: usize,
    mut path: Vec<String>,
    out: &mut Vec<(Vec<String>, usize)>,
) -> usize {
    loop {
        match tokens.get(i) {
            Some((Token::Ident(s), at)) => {
                path.push(s.clone());
                i += 1;
                if matches!(tokens.get(i), Some((Token::Punct("::"), _))) {
                    i += 1;
                    continue;
                }
                out.push((path, *at));
                return i;
            }
            Some((Token::Punct("{"), _)) => {
                i += 1;
                loop {
                    match tokens.get(i) {
                        None => return i,
                        Some((Token::Punct("}"), _)) => return i + 1,
                        Some((Token::Punct(","), _)) => i += 1,
                        Some((Token::Ident(s), _)) if s == "as" => i += 2,
                        Some((Token::Ident(_) | Token::Punct("{" | "*"), _)) => {
                            i = path_tree(tokens, i, path.clone(), out);
                        }
                        Some(_) => i += 1,
                    }
                }
            }
            Some((Token::Punct("*"), at)) => {
                out.push((path, *at));
                return i + 1;
            }
            Some((_, at)) => {
                // `crate::f::<T>`: the path so far.
                out.push((path, *at));
                return i;
            }
            None => {
                out.push((path, tokens.last().map_or(0, |t| t.1)));
                return i;
            }
        }
    }
}

/// Identifiers (a `$` before one kept, so `$crate` is no `crate`), string literals, and the
/// punctuation the reader looks at; every token with its offset.
pub(crate) fn tokenize(code: &str) -> Vec<(Token, usize)> {
    let b = code.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if word(c) || (c == b'$' && b.get(i + 1).is_some_and(|&n| word(n))) {
            let start = i;
            i += 1;
            while i < b.len() && word(b[i]) {
                i += 1;
            }
            out.push((Token::Ident(code[start..i].to_string()), start));
            continue;
        }
        let token = match c {
            b'"' => {
                let close = code[i + 1..].find('"').map_or(b.len(), |n| i + 1 + n);
                out.push((Token::Str(i), i));
                i = close + 1;
                continue;
            }
            b':' if b.get(i + 1) == Some(&b':') => {
                out.push((Token::Punct("::"), i));
                i += 2;
                continue;
            }
            b'#' => Token::Punct("#"),
            b'[' => Token::Punct("["),
            b'(' => Token::Punct("("),
            b')' => Token::Punct(")"),
            b'=' => Token::Punct("="),
            b'{' => Token::Punct("{"),
            b'}' => Token::Punct("}"),
            b';' => Token::Punct(";"),
            b',' => Token::Punct(","),
            b'*' => Token::Punct("*"),
            c if c.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            _ => Token::Other,
        };
        out.push((token, i));
        i += 1;
    }
    out
}

/// The code with comments and the insides of string and character literals blanked (spaces,
/// line breaks kept), so offsets and lines stay those of the file.
pub(crate) fn blank(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let wipe = |out: &mut Vec<u8>, from: usize, to: usize| {
        for x in &mut out[from..to.min(b.len())] {
            if *x != b'\n' {
                *x = b' ';
            }
        }
    };
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(b.len(), |n| i + n);
                wipe(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let (mut j, mut depth) = (i + 2, 1);
                while j < b.len() && depth > 0 {
                    if b[j..].starts_with(b"/*") {
                        depth += 1;
                        j += 2;
                    } else if b[j..].starts_with(b"*/") {
                        depth -= 1;
                        j += 2;
                    } else {
                        j += 1;
                    }
                }
                wipe(&mut out, i, j);
                i = j;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                wipe(&mut out, i + 1, j);
                i = j + 1;
            }
            b'\'' => {
                if b.get(i + 1) == Some(&b'\\') {
                    let close = text[i + 3..].find('\'').map_or(b.len(), |n| i + 3 + n);
                    wipe(&mut out, i + 1, close);
                    i = close + 1;
                } else {
                    let len = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                    if b.get(i + 1 + len) == Some(&b'\'') {
                        wipe(&mut out, i + 1, i + 1 + len);
                        i += 2 + len;
                    } else {
                        i += 1; // a lifetime
                    }
                }
            }
            c if word(c) => {
                let start = i;
                while i < b.len() && word(b[i]) {
                    i += 1;
                }
                // A raw string: r"…", r#"…"#, br"…".
                let prefix = &text[start..i];
                if (prefix == "r" || prefix == "br") && matches!(b.get(i), Some(b'"' | b'#')) {
                    let hashes = b[i..].iter().take_while(|&&c| c == b'#').count();
                    if b.get(i + hashes) == Some(&b'"') {
                        let open = i + hashes + 1;
                        let closing = format!("\"{}", "#".repeat(hashes));
                        let close = text[open..].find(&closing).map_or(b.len(), |n| open + n);
                        wipe(&mut out, open, close);
                        i = close + closing.len();
                    }
                }
            }
            _ => i += 1,
        }
    }
    String::from_utf8(out).expect("only ASCII bytes were written over whole characters")
}
