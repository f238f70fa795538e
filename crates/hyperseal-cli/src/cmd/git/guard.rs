//! What git itself would keep of a secret outside the filter's reach, and the hooks: the
//! filter seals what git stores as objects, but some of git's own features write a marked
//! file's plaintext into `.git` or beside it by other doors.
//!
//! * rerere records each conflict's text (both sides' lines) and its resolution under
//!   `.git/rr-cache/`, named by an unkeyed SHA-1 of the conflict: switched off in the
//!   repository's local configuration (which wins over a global `rerere.enabled`), and what
//!   it recorded before is removed.
//! * `git mergetool` keeps a `FILE.orig` backup of the conflicted file, whose name no marking
//!   pattern covers, so `git add -A` would stage it unsealed: switched off the same way.
//! * `git commit -v` writes the staged diff into `.git/COMMIT_EDITMSG`, where it stays until the
//!   next commit: the textconv shows no plaintext under `git commit` (`filter.rs`), and
//!   `lock` cuts a diff an older run left there.
//! * `diff.<driver>.cachetextconv` makes git store each textconv output (a marked file's
//!   plaintext) as an object under `refs/notes/textconv/<driver>`, kept through `lock` and `gc`:
//!   switched off locally, and a cache made before is unreferenced (its objects go at the next
//!   prune, which is the user's to run: it drops every other unreachable object too).
//! * git writes the files it checks out through the filter with the user's umask: the hooks
//!   `--hooks` installs, and `unlock` and `clone` themselves, make marked files private to their
//!   owner.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::{git, git_path, git_text, marked_paths, work_tree};
use crate::errors::hint;

/// Local configuration that closes git's own doors to a marked file's plaintext, and why.
const SIDE_DOORS: [(&str, &str, &str); 3] = [
    ("rerere.enabled", "false", "rerere would keep conflicted secrets in plaintext in .git/rr-cache"),
    (
        "diff.hyperseal.cachetextconv",
        "false",
        "git would store decrypted diffs as objects under refs/notes/textconv/hyperseal",
    ),
    (
        "mergetool.keepBackup",
        "false",
        "git mergetool would leave a plaintext FILE.orig beside a conflicted secret, which `git add -A` stages unsealed",
    ),
];

/// Sets [`SIDE_DOORS`] in the repository's local configuration, saying so for each value it
/// changed (a global setting is overridden here, in this repository only).
pub fn close_side_doors() -> Result<()> {
    for (key, value, why) in SIDE_DOORS {
        if git_text(&["config", "--local", "--get", key]).is_ok_and(|v| v == value) {
            continue;
        }
        git(&["config", "--local", key, value], None)?;
        eprintln!("hyperseal: set {key} = {value} in this repository: {why}");
    }
    Ok(())
}

/// The line git's verbose commit template puts above the diff (after the comment character).
const SCISSORS: &str = "------------------------ >8 ------------------------";

/// Where `diff.hyperseal.cachetextconv` makes git keep the textconv's plaintext output.
const TEXTCONV_NOTES: &str = "refs/notes/textconv/hyperseal";

/// Removes what git's side doors left in `.git` before they were closed: rerere's records
/// (useless once rerere is off here), the textconv cache's ref, and the diff below the scissors
/// line of the last commit message's file.
pub fn scrub() -> Result<()> {
    // Deleting the ref leaves its objects unreachable; pruning them would also drop every other
    // unreachable object (what a user might still recover), so that step is only named.
    if git_text(&["rev-parse", "--verify", "--quiet", TEXTCONV_NOTES]).is_ok() {
        git(&["update-ref", "-d", TEXTCONV_NOTES], None)?;
        eprintln!("hyperseal: removed {TEXTCONV_NOTES} (git's cache of decrypted diffs)");
        eprintln!(
            "hyperseal: its plaintext objects stay in .git until pruned: git reflog expire --expire=now --all && git gc --prune=now"
        );
    }
    let rr = git_path("rr-cache")?;
    if std::fs::symlink_metadata(&rr).is_ok() {
        std::fs::remove_dir_all(&rr).map_err(|e| anyhow::Error::new(e).context(rr.display().to_string()))?;
        eprintln!("hyperseal: removed {} (rerere's records of conflicts, plaintext included)", rr.display());
    }
    let msg = git_path("COMMIT_EDITMSG")?;
    let Ok(text) = std::fs::read(&msg) else { return Ok(()) };
    if let Some(at) = text.windows(SCISSORS.len()).position(|w| w == SCISSORS.as_bytes()) {
        let line = text[..at].iter().rposition(|b| *b == b'\n').map_or(0, |n| n + 1);
        std::fs::write(&msg, &text[..line])
            .map_err(|e| anyhow::Error::new(e).context(msg.display().to_string()))?;
        eprintln!("hyperseal: cut the diff `git commit -v` left in {}", msg.display());
    }
    Ok(())
}

/// Makes each of `marked` (work-tree paths under `root`) readable and writable by its owner
/// alone, as `unlock` writes the files it opens: git checks files out with the user's umask
/// (0644 after a `git pull`). Only regular files, opened without following a link; group and
/// others lose every bit, the owner's stay. Returns how many changed.
#[cfg(unix)]
pub fn private_modes(root: &Path, marked: &[String]) -> Result<usize> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut changed = 0;
    for p in marked {
        let mut opts = std::fs::File::options();
        opts.read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
        let Ok(f) = opts.open(root.join(p)) else { continue };
        let meta = f.metadata()?;
        let mode = meta.permissions().mode() & 0o7777;
        if !meta.is_file() || mode & 0o077 == 0 {
            continue;
        }
        f.set_permissions(std::fs::Permissions::from_mode(mode & 0o700))
            .map_err(|e| anyhow::Error::new(e).context(format!("cannot make {p} private")))?;
        changed += 1;
    }
    Ok(changed)
}

#[cfg(not(unix))]
pub fn private_modes(_root: &Path, _marked: &[String]) -> Result<usize> {
    Ok(0)
}

/// `hyperseal git private-modes`, run by the post-checkout, post-merge and post-index-change
/// hooks: never fails the git command that ran it (a hook's exit status becomes that
/// command's), says why instead.
pub fn private_modes_hook() -> Result<()> {
    let done = work_tree().and_then(|root| {
        std::env::set_current_dir(&root)?;
        private_modes(&root, &marked_paths()?)
    });
    if let Err(e) = done {
        eprintln!("hyperseal: note: marked files keep git's modes: {e:#}");
    }
    Ok(())
}

/// The first lines of each hook `--hooks` writes: how it is known again.
const HOOK_MARK: &str = "# hyperseal git:";

/// The hooks `--hooks` installs: before each commit, `verify`; after each checkout and merge,
/// marked files private to their owner. post-checkout and post-merge miss what rewrites the work
/// tree without a checkout or a finished merge (a conflicted merge, `merge --abort`, `reset
/// --hard`, `stash`, `stash pop`); each of those writes the index afterwards, and git runs
/// post-index-change after every index write. Its arguments (whether git says it updated the
/// work tree) are not trusted: `apply --index` and `checkout-index -u` write files and say they
/// did not.
const HOOKS: [(&str, &str, &str); 4] = [
    ("pre-commit", "verify the index before each commit", "git verify"),
    ("post-checkout", "marked files private to their owner after each checkout", "git private-modes"),
    ("post-merge", "marked files private to their owner after each merge or pull", "git private-modes"),
    (
        "post-index-change",
        "marked files private to their owner after each index write (reset, stash, a conflicted merge)",
        "git private-modes",
    ),
];

/// Writes [`HOOKS`] (per repository, `git rev-parse --git-path hooks/NAME`); an existing hook
/// is replaced only if it is one of these. A hook of another tool is left as it is, and the
/// error names each, after the others are installed.
pub fn install_hooks() -> Result<()> {
    let exe = hyperseal_git::marked::shell_quote(&std::env::current_exe()?);
    let mut foreign = Vec::new();
    for (name, what, command) in HOOKS {
        let hook = git_path(&format!("hooks/{name}"))?;
        let body = format!("#!/bin/sh\n{HOOK_MARK} {what}\nexec {exe} {command}\n");
        match std::fs::read_to_string(&hook) {
            Ok(old) if old == body => continue,
            Ok(old) if !old.contains(HOOK_MARK) => {
                foreign.push((hook, command));
                continue;
            }
            _ => {}
        }
        write_hook(&hook, &body)?;
        eprintln!("installed the {name} hook: hyperseal {command}");
    }
    match foreign.first() {
        None => Ok(()),
        Some((hook, command)) => Err(hint(
            format!("{} exists and is not hyperseal's", hook.display()),
            format!("add `hyperseal {command}` to that hook yourself"),
        )),
    }
}

fn write_hook(hook: &PathBuf, body: &str) -> Result<()> {
    if let Some(dir) = hook.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut f =
        std::fs::File::create(hook).map_err(|e| anyhow::Error::new(e).context(hook.display().to_string()))?;
    f.write_all(body.as_bytes())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}
