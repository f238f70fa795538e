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

// The tokenizer and reader of one file (a folder cargo does not take for a test of its own).
#[path = "imports/parse.rs"]
mod parse;
use parse::{parse, rust_files, Import, Parsed};

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
