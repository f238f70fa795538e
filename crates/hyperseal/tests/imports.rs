//! Imports among the re-key's modules run one way. A cycle compiles in Rust, so nothing else
//! notices one coming back: the error type, the encryptor and the walk are below the re-key
//! and its tree, and the tree command below the rekey command, never the other way round.
//!
//! Each check reads a file's code (comments left out, so a doc link is no import) for a path
//! into the module above it, whether in a `use` line or written out where it is used.

use std::path::Path;

/// The code of `rel` (from the workspace's `crates/`), without `//` comments.
fn code(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().map(|l| l.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n")
}

/// Whether `code` names the module `path` or something in it (`super::rekey` is not
/// `super::rekey_tree`).
fn names(code: &str, path: &str) -> bool {
    code.match_indices(path).any(|(at, _)| {
        let next = code[at + path.len()..].chars().next();
        !next.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

#[test]
fn the_rekey_modules_import_one_way() {
    let mut back = Vec::new();
    let error = code("hyperseal/src/error.rs");
    if names(&error, "crate::rekey") {
        back.push("error.rs -> rekey");
    }
    let encrypt = code("hyperseal/src/encrypt.rs");
    if names(&encrypt, "crate::rekey") {
        back.push("encrypt.rs -> rekey (a header's slack is the format's)");
    }
    let walk = code("hyperseal/src/rekey/walk.rs");
    if names(&walk, "super::tree") || names(&walk, "crate::rekey::tree") {
        back.push("rekey/walk.rs -> rekey/tree.rs");
    }
    let command = code("hyperseal-cli/src/cmd/rekey.rs");
    let tree_command = code("hyperseal-cli/src/cmd/rekey_tree.rs");
    if names(&command, "super::rekey_tree") && names(&tree_command, "super::rekey") {
        back.push("cmd/rekey.rs <-> cmd/rekey_tree.rs");
    }
    assert!(back.is_empty(), "imports that run back: {back:#?}");
}
