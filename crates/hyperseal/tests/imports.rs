//! Imports among the modules of every workspace crate run one way: no file imports, through
//! any chain of others, back into itself. A cycle compiles in Rust, so nothing else notices one
//! coming back; this test reads every crate's and binding's code (`crates/*/src`,
//! `bindings/*/src`) and fails naming each circle, file -> file -> ... -> file.
//!
//! An import is a path into the crate's own modules that starts with `crate::`, `super::` or
//! `self::`, in a `use` line (groups `{…}` expanded) or written out where it is used; comments,
//! doc links and strings are left out, and so is `$crate` (a macro's, resolved where it is
//! expanded). It points at the file that holds the deepest module the path names (`mod.rs`,
//! folder modules, inline `mod x { … }` and `#[path]` resolved as rustc does). A `mod child;`
//! declaration is no import: a parent declaring its child is how the tree is built, while a
//! child using its parent's items imports the parent. Code only tests compile (under
//! `#[cfg(test)]` or `#[cfg(all(test, …))]`: a unit test module, a test file) is left out too: a
//! test may drive its module through the modules above it, and nothing is built on it.
//!
//! A circle that has to stay is justified where it is tied: `// import-cycle: <why>` on the
//! import's line takes that import out of the graph, the reason beside it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Circles accepted for a while, each with why and its files (from the workspace root). A circle
/// that shrinks within its entry still passes; an entry that matches no circle any more fails,
/// so that it is removed.
const KNOWN: &[(&str, &[&str])] = &[];

/// The marker that justifies an import of a circle, on the import's own line.
const MARKER: &str = "import-cycle:";

#[test]
fn no_module_imports_back_into_itself() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().expect("the workspace root");
    let house = House::read(&root);

    let unreached = house.unreached(&root);
    assert!(
        unreached.is_empty(),
        "Rust files under src that no crate root declares (is a `mod` missed?): {unreached:#?}"
    );

    let mut known_seen = vec![false; KNOWN.len()];
    let mut report = String::new();
    for circle in house.circles() {
        let files: BTreeSet<&str> = circle.iter().map(|&f| house.files[f].rel.as_str()).collect();
        if let Some(k) = KNOWN.iter().position(|(_, known)| files.iter().all(|f| known.contains(f))) {
            known_seen[k] = true;
            continue;
        }
        report.push_str(&house.describe(&circle));
    }
    for (k, seen) in known_seen.iter().enumerate() {
        if !seen {
            report.push_str(&format!(
                "KNOWN entry {:?} matches no circle any more: remove it from tests/imports.rs\n",
                KNOWN[k].0
            ));
        }
    }
    assert!(
        report.is_empty(),
        "modules that import back into themselves (remove an import, move the shared pieces \
         into the lower file, or justify one import with `// {MARKER} <why>`):\n{report}"
    );
}

/// One Rust file: its path from the workspace root and what its code declares and names.
struct File {
    rel: String,
    text: String,
    parsed: Parsed,
}

/// One module: the file that holds it, its parent and its child modules.
struct Module {
    file: usize,
    parent: Option<usize>,
    root: usize,
    children: BTreeMap<String, usize>,
}

/// Every crate's files and modules, and the imports between files.
struct House {
    files: Vec<File>,
    modules: Vec<Module>,
    /// from → to → the paths that tie them (each with its line)
    edges: BTreeMap<usize, BTreeMap<usize, Vec<String>>>,
}

impl House {
    fn read(root: &Path) -> House {
        let mut house = House { files: Vec::new(), modules: Vec::new(), edges: BTreeMap::new() };
        for group in ["crates", "bindings"] {
            let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join(group))
                .unwrap_or_else(|e| panic!("{group}: {e}"))
                .map(|e| e.expect("a directory entry").path())
                .collect();
            crates.sort();
            for dir in crates {
                for name in ["lib.rs", "main.rs"] {
                    let file = dir.join("src").join(name);
                    if file.is_file() {
                        house.load(root, &file, true, None, false);
                    }
                }
            }
        }
        house.link();
        house
    }

    /// Loads `path` as a module under `parent` (a crate root when none), with its inline and
    /// declared child modules; `mod_rs` is whether its children live beside it (a crate root,
    /// `mod.rs` or a `#[path]` file) rather than in a folder of its name; `test` whether only
    /// tests compile it.
    fn load(&mut self, root: &Path, path: &Path, mod_rs: bool, parent: Option<usize>, test: bool) -> usize {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let rel = path.strip_prefix(root).unwrap_or(path).to_string_lossy().replace('\\', "/");
        let mut parsed = parse(&text);
        if test {
            parsed.paths.clear();
        }
        let file = self.files.len();
        let decls = parsed.mods.clone();
        let inline = parsed.inline.clone();
        self.files.push(File { rel, text, parsed });

        let top = self.modules.len();
        let crate_root = parent.map_or(top, |p| self.modules[p].root);
        self.modules.push(Module { file, parent, root: crate_root, children: BTreeMap::new() });
        // Inline modules come in the order they open, so a parent is always there first.
        for nest in inline {
            let under = self.module_at(top, &nest[..nest.len() - 1]);
            let id = self.modules.len();
            self.modules.push(Module {
                file,
                parent: Some(under),
                root: crate_root,
                children: BTreeMap::new(),
            });
            self.modules[under].children.insert(nest[nest.len() - 1].clone(), id);
        }

        let here = path.parent().expect("a file's folder").to_path_buf();
        let base = if mod_rs { here.clone() } else { here.join(path.file_stem().expect("a file's stem")) };
        for decl in decls {
            let under = self.module_at(top, &decl.inline);
            let mut dir = base.clone();
            dir.extend(&decl.inline);
            let (child, child_mod_rs) = match &decl.path {
                Some(p) if decl.inline.is_empty() => (here.join(p), true),
                Some(p) => (dir.join(p), true),
                None => {
                    let flat = dir.join(format!("{}.rs", decl.name));
                    if flat.is_file() {
                        (flat, false)
                    } else {
                        (dir.join(&decl.name).join("mod.rs"), true)
                    }
                }
            };
            if !child.is_file() {
                continue; // a module for another target that is not there (generated, say)
            }
            let id = self.load(root, &child, child_mod_rs, Some(under), test || decl.test);
            self.modules[under].children.insert(decl.name.clone(), id);
        }
        top
    }

    /// The module `nest` names inline below `top`.
    fn module_at(&self, top: usize, nest: &[String]) -> usize {
        nest.iter().fold(top, |m, name| self.modules[m].children[name])
    }

    /// Resolves every file's paths into edges between files.
    fn link(&mut self) {
        let mut edges: BTreeMap<usize, BTreeMap<usize, Vec<String>>> = BTreeMap::new();
        for file in 0..self.files.len() {
            for path in &self.files[file].parsed.paths {
                let m = self.module_at_file(file, &path.inline);
                let Some(target) = self.resolve(m, &path.segments) else { continue };
                let to = self.modules[target].file;
                if to == file || self.justified(file, path) {
                    continue;
                }
                let line = self.files[file].text[..path.at].lines().count().max(1);
                edges
                    .entry(file)
                    .or_default()
                    .entry(to)
                    .or_default()
                    .push(format!("{} (line {line})", path.segments.join("::")));
            }
        }
        self.edges = edges;
    }

    /// The module of `file` that the inline nest names.
    fn module_at_file(&self, file: usize, nest: &[String]) -> usize {
        let top = self.modules.iter().position(|m| m.file == file).expect("a loaded file");
        self.module_at(top, nest)
    }

    /// The module a path leads to, as deep as its segments name modules.
    fn resolve(&self, from: usize, segments: &[String]) -> Option<usize> {
        let mut at = match segments[0].as_str() {
            "crate" => self.modules[from].root,
            "super" => self.modules[from].parent?,
            "self" => from,
            _ => return None,
        };
        for seg in &segments[1..] {
            match seg.as_str() {
                "super" => at = self.modules[at].parent?,
                "self" => {}
                name => match self.modules[at].children.get(name) {
                    Some(&child) => at = child,
                    None => break,
                },
            }
        }
        Some(at)
    }

    /// Whether the import's line (where the path starts or ends) bears a justification.
    fn justified(&self, file: usize, path: &Import) -> bool {
        let text = &self.files[file].text;
        [path.at, path.end].iter().any(|&at| {
            let start = text[..at].rfind('\n').map_or(0, |n| n + 1);
            let end = text[at..].find('\n').map_or(text.len(), |n| at + n);
            text[start..end]
                .split_once(MARKER)
                .is_some_and(|(code, why)| code.contains("//") && !why.trim().is_empty())
        })
    }

    /// The `.rs` files under the crates' `src` that no crate root reaches.
    fn unreached(&self, root: &Path) -> Vec<String> {
        let loaded: BTreeSet<&str> = self.files.iter().map(|f| f.rel.as_str()).collect();
        let mut all = Vec::new();
        for group in ["crates", "bindings"] {
            for krate in std::fs::read_dir(root.join(group)).expect("a folder") {
                let src = krate.expect("an entry").path().join("src");
                if src.is_dir() {
                    rust_files(&src, &mut all);
                }
            }
        }
        all.iter()
            .map(|p| p.strip_prefix(root).unwrap_or(p).to_string_lossy().replace('\\', "/"))
            .filter(|rel| !loaded.contains(rel.as_str()))
            .collect()
    }

    /// The strongly connected groups of two files or more (Tarjan), each sorted.
    fn circles(&self) -> Vec<Vec<usize>> {
        struct Walk<'a> {
            edges: &'a BTreeMap<usize, BTreeMap<usize, Vec<String>>>,
            index: Vec<Option<usize>>,
            low: Vec<usize>,
            on: Vec<bool>,
            stack: Vec<usize>,
            next: usize,
            out: Vec<Vec<usize>>,
        }
        impl Walk<'_> {
            fn visit(&mut self, v: usize) {
                self.index[v] = Some(self.next);
                self.low[v] = self.next;
                self.next += 1;
                self.stack.push(v);
                self.on[v] = true;
                let targets: Vec<usize> =
                    self.edges.get(&v).map(|t| t.keys().copied().collect()).unwrap_or_default();
                for w in targets {
                    match self.index[w] {
                        None => {
                            self.visit(w);
                            self.low[v] = self.low[v].min(self.low[w]);
                        }
                        Some(i) if self.on[w] => self.low[v] = self.low[v].min(i),
                        Some(_) => {}
                    }
                }
                if Some(self.low[v]) == self.index[v] {
                    let mut group = Vec::new();
                    loop {
                        let w = self.stack.pop().expect("on the stack");
                        self.on[w] = false;
                        group.push(w);
                        if w == v {
                            break;
                        }
                    }
                    if group.len() > 1 {
                        group.sort();
                        self.out.push(group);
                    }
                }
            }
        }
        let n = self.files.len();
        let mut walk = Walk {
            edges: &self.edges,
            index: vec![None; n],
            low: vec![0; n],
            on: vec![false; n],
            stack: Vec::new(),
            next: 0,
            out: Vec::new(),
        };
        for v in 0..n {
            if walk.index[v].is_none() {
                walk.visit(v);
            }
        }
        walk.out.sort();
        walk.out
    }

    /// A circle in words: one loop through it, shortest first, then every import inside it.
    fn describe(&self, group: &[usize]) -> String {
        let inside: BTreeSet<usize> = group.iter().copied().collect();
        let name = |f: usize| self.files[f].rel.as_str();
        let mut text = String::from("circle: ");
        let start = group[0];
        // Breadth first from the start back to it, through the group's files only.
        let mut from: BTreeMap<usize, usize> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        'search: while let Some(v) = queue.pop_front() {
            for &w in self.edges[&v].keys().filter(|w| inside.contains(w)) {
                if w == start {
                    from.insert(start, v);
                    break 'search;
                }
                if let std::collections::btree_map::Entry::Vacant(e) = from.entry(w) {
                    e.insert(v);
                    queue.push_back(w);
                }
            }
        }
        let mut loop_ = vec![start];
        let mut at = from[&start];
        while at != start {
            loop_.push(at);
            at = from[&at];
        }
        loop_.push(start);
        loop_.reverse();
        text.push_str(&loop_.iter().map(|&f| name(f)).collect::<Vec<_>>().join(" -> "));
        text.push('\n');
        for &a in group {
            for (&b, paths) in self.edges[&a].iter().filter(|(b, _)| inside.contains(b)) {
                text.push_str(&format!("    {} -> {}: {}\n", name(a), name(b), paths.join(", ")));
            }
        }
        text
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
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
struct Parsed {
    /// `mod name;` declarations
    mods: Vec<ModDecl>,
    /// inline `mod name { … }`, each as its nest of names, in the order they open
    inline: Vec<Vec<String>>,
    /// paths into the crate (`crate::`, `super::`, `self::`)
    paths: Vec<Import>,
}

#[derive(Clone)]
struct ModDecl {
    /// the inline modules it is declared in
    inline: Vec<String>,
    name: String,
    /// whether only tests compile it
    test: bool,
    /// its `#[path = "…"]`
    path: Option<String>,
}

/// One path into the crate, with the inline modules it is written in and where it stands.
struct Import {
    inline: Vec<String>,
    segments: Vec<String>,
    at: usize,
    end: usize,
}

#[derive(Debug, PartialEq)]
enum Token {
    Ident(String),
    /// a string literal, at the offset of its opening quote
    Str(usize),
    Punct(&'static str),
    Other,
}

/// Reads one file's module declarations and its paths into the crate.
fn parse(text: &str) -> Parsed {
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
fn path_tree(
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
fn tokenize(code: &str) -> Vec<(Token, usize)> {
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
fn blank(text: &str) -> String {
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
