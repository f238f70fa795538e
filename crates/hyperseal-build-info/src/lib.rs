//! The version string that `hyperseal --version`, the Node addon's `VERSION` and Python's
//! `hyperseal.__version__` all carry: the release and the commit it was built from
//! ("0.1.0 (abc1234)"). Each of those crates' build scripts calls [`emit_version`], so the string
//! is fixed at compile time and the shipped program reads neither git nor the environment.

use std::path::Path;
use std::process::Command;

/// Sets `HYPERSEAL_VERSION` for the crate being built. `prefix` is the crate's folder inside
/// hyperseal's own repository ("crates/hyperseal-cli/"): the commit is taken from git only
/// when the crate sits there.
pub fn emit_version(prefix: &str) {
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    println!("cargo::rustc-env=HYPERSEAL_VERSION={version} ({})", commit(prefix));
    println!("cargo::rerun-if-changed=build.rs");
}

/// The commit the crate is built from, abbreviated: `HYPERSEAL_COMMIT` when set (`make dist`
/// pins one commit for all its builds, and an sdist carries no .git), else git when the crate
/// sits in hyperseal's own repository (at `prefix`), else "unknown". Also tells cargo to run the
/// build script again when HEAD moves.
fn commit(prefix: &str) -> String {
    println!("cargo::rerun-if-env-changed=HYPERSEAL_COMMIT");
    if let Some(pinned) = std::env::var("HYPERSEAL_COMMIT").ok().filter(|c| !c.trim().is_empty()) {
        return pinned.trim().to_owned();
    }
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map(|s| s.trim().to_owned())
    };
    // An sdist unpacked inside some other repository must not take that repository's commit.
    if git(&["rev-parse", "--show-prefix"]).as_deref() == Some(prefix) {
        if let (Some(hash), Some(git_dir)) =
            (git(&["rev-parse", "--short=7", "HEAD"]), git(&["rev-parse", "--absolute-git-dir"]))
        {
            // HEAD (a checkout, a detached HEAD) and the branch refs (a commit; a loose ref or
            // a packed one) are what move when the commit changes.
            for watched in ["HEAD", "refs/heads", "packed-refs"] {
                let path = Path::new(&git_dir).join(watched);
                if path.exists() {
                    println!("cargo::rerun-if-changed={}", path.display());
                }
            }
            return hash;
        }
    }
    "unknown".to_owned()
}
