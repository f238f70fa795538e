//! The marked paths (those whose `filter` attribute is this driver) and the repository's local
//! configuration that serves them, as git tells and keeps them: which paths are marked, which
//! changed since they were checked out, checking them out again through the filter; the drivers
//! git runs (the filter process, the diff textconv, the merge driver) and the identities
//! `unlock` recorded, as `init` and `unlock` write them.

use std::path::{Path, PathBuf};

use crate::git::{Git, GitError};

/// The filter, diff and merge driver's name in `.gitattributes` and in git's configuration.
pub const DRIVER: &str = "hyperseal";
/// Local configuration key of each identity file `unlock -i` recorded (absolute paths).
pub const IDENTITY_KEY: &str = "hyperseal.identity";
/// Local configuration key set to `true` by `unlock` without `-i`: the agent opens the files.
pub const AGENT_KEY: &str = "hyperseal.agent";

/// Writes the drivers into the repository's local configuration: the long-running filter,
/// required (a failing filter fails the git command instead of storing plaintext), and the
/// diff textconv, and the merge driver (git substitutes the three stored versions' temporary
/// files, the conflict marker size and the path, each quoted for the shell). Its callers also
/// close git's own doors to a marked file's plaintext. `exe` is the program git runs as the
/// drivers. Setting
/// a key to the value it has changes nothing, so running it twice is the same as once.
pub fn configure(git: &Git, exe: &Path) -> Result<(), GitError> {
    let exe = shell_quote(exe);
    for (key, value) in [
        (format!("filter.{DRIVER}.process"), format!("{exe} git filter-process")),
        (format!("filter.{DRIVER}.required"), "true".to_string()),
        (format!("diff.{DRIVER}.textconv"), format!("{exe} git textconv")),
        (
            format!("merge.{DRIVER}.name"),
            "hyperseal: 3-way merge of the plaintext, stored sealed".to_string(),
        ),
        (format!("merge.{DRIVER}.driver"), format!("{exe} git merge-driver %O %A %B %L %P")),
    ] {
        git.run(&["config", "--local", &key, &value], None)?;
    }
    Ok(())
}

/// Whether `configure` has run in this repository.
pub fn configured(git: &Git) -> bool {
    git.text(&["config", "--local", "--get", &format!("filter.{DRIVER}.process")])
        .is_ok_and(|v| !v.is_empty())
}

/// git runs the drivers through the shell: the path goes in single quotes.
pub fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.to_string_lossy().replace('\'', r"'\''"))
}

/// The identity files `unlock` recorded, and whether it named the agent.
pub fn recorded_identities(git: &Git) -> (Vec<PathBuf>, bool) {
    let files = git
        .run(&["config", "--local", "--get-all", IDENTITY_KEY], None)
        .map(|out| {
            String::from_utf8_lossy(&out).lines().filter(|l| !l.is_empty()).map(PathBuf::from).collect()
        })
        .unwrap_or_default();
    let agent = git.text(&["config", "--local", "--get", AGENT_KEY]).is_ok_and(|v| v == "true");
    (files, agent)
}

/// Forgets the recorded identities (`lock`, and `unlock` before it records new ones).
pub fn forget_identities(git: &Git) {
    for key in [IDENTITY_KEY, AGENT_KEY] {
        // Exit status 5: the key was not set, which is what was wanted.
        let _ = git.run(&["config", "--local", "--unset-all", key], None);
    }
}

/// Configures the repository as `init` does and records the identity files (`agent`: the agent
/// instead) in its local configuration, in place of any recorded before; `exe` is the
/// program git runs as the drivers.
pub fn record_identities(git: &Git, exe: &Path, absolute: &[PathBuf], agent: bool) -> Result<(), GitError> {
    configure(git, exe)?;
    forget_identities(git);
    for p in absolute {
        git.run(&["config", "--local", "--add", IDENTITY_KEY, &p.to_string_lossy()], None)?;
    }
    if agent {
        git.run(&["config", "--local", AGENT_KEY, "true"], None)?;
    }
    Ok(())
}

/// Every path in the index whose `filter` attribute is this driver.
pub fn marked_paths(git: &Git) -> Result<Vec<String>, GitError> {
    marked_among(git, &git.run(&["ls-files", "-z"], None)?, false)
}

/// Of `listed` (paths, each ended by NUL), those whose `filter` attribute is this driver: by the
/// index's `.gitattributes` when `cached`, the work tree's otherwise.
pub fn marked_among(git: &Git, listed: &[u8], cached: bool) -> Result<Vec<String>, GitError> {
    if listed.is_empty() {
        return Ok(Vec::new());
    }
    let mut args = vec!["check-attr", "-z", "--stdin"];
    if cached {
        args.push("--cached");
    }
    args.push("filter");
    let attrs = git.run(&args, Some(listed))?;
    // -z output: path NUL attribute NUL value NUL, for each path.
    let fields: Vec<&[u8]> = attrs.split(|b| *b == 0).collect();
    Ok(fields
        .chunks(3)
        .filter(|f| f.len() == 3 && f[2] == DRIVER.as_bytes())
        .map(|f| String::from_utf8_lossy(f[0]).into_owned())
        .collect())
}

/// The marked paths whose work-tree or staged content differs from HEAD's (or that a merge
/// left in conflict): what a re-checkout would lose.
pub fn changed_marked(git: &Git, marked: &[String]) -> Result<Vec<String>, GitError> {
    let status = git.run(&["status", "--porcelain", "-z", "--untracked-files=no"], None)?;
    let set: std::collections::HashSet<&str> = marked.iter().map(String::as_str).collect();
    let mut changed = Vec::new();
    let mut entries = status.split(|b| *b == 0).filter(|e| !e.is_empty());
    while let Some(e) = entries.next() {
        let path = String::from_utf8_lossy(e.get(3..).unwrap_or_default()).into_owned();
        // A rename's entry is followed by its source path.
        if matches!(e.first(), Some(b'R' | b'C')) {
            entries.next();
        }
        if set.contains(path.as_str()) {
            changed.push(path);
        }
    }
    Ok(changed)
}

/// Whether every marked path is known unchanged without running the filter: the index is
/// HEAD's, and each marked work-tree file is a regular file with its staged mode whose bytes,
/// hashed as they are, are its staged blob (the locked state right after a clone). Such a file
/// holds exactly the stored age file, so checking it out again loses nothing. `git status`
/// would get the same answer by sending every file whose timestamps it cannot trust (after a
/// clone, all of them) through the filter, one request each. `false` means "ask git status".
pub fn unchanged_as_stored(git: &Git, root: &Path, marked: &[String]) -> Result<bool, GitError> {
    let top = root.to_string_lossy();
    if git.run(&["-C", &top, "diff-index", "--cached", "--quiet", "HEAD", "--"], None).is_err() {
        return Ok(false);
    }
    let listed = git.run(&["-C", &top, "ls-files", "-s", "-z"], None)?;
    let mut staged: std::collections::HashMap<&[u8], (&[u8], &[u8])> = std::collections::HashMap::new();
    for entry in listed.split(|b| *b == 0).filter(|e| !e.is_empty()) {
        // MODE OID STAGE\tPATH; a path in conflict has stages 1-3 and is never "as stored".
        let Some(tab) = entry.iter().position(|b| *b == b'\t') else { return Ok(false) };
        let meta: Vec<&[u8]> = entry[..tab].split(|b| *b == b' ').collect();
        let [mode, oid, stage] = meta[..] else { return Ok(false) };
        if stage != b"0" {
            return Ok(false);
        }
        staged.insert(&entry[tab + 1..], (mode, oid));
    }
    let mut paths = Vec::new();
    let mut oids = Vec::new();
    for p in marked {
        let Some(&(mode, oid)) = staged.get(p.as_bytes()) else { return Ok(false) };
        let Ok(meta) = std::fs::symlink_metadata(root.join(p)) else { return Ok(false) };
        if p.contains('\n') || !meta.is_file() || !mode_matches(mode, &meta) {
            return Ok(false);
        }
        paths.extend_from_slice(p.as_bytes());
        paths.push(b'\n');
        oids.push(oid);
    }
    if paths.is_empty() {
        return Ok(true);
    }
    let Ok(hashed) = git.run(&["-C", &top, "hash-object", "--no-filters", "--stdin-paths"], Some(&paths))
    else {
        return Ok(false);
    };
    let hashed: Vec<&[u8]> = hashed.split(|b| *b == b'\n').filter(|l| !l.is_empty()).collect();
    Ok(hashed.len() == oids.len() && hashed.iter().zip(&oids).all(|(h, o)| h == o))
}

#[cfg(unix)]
fn mode_matches(mode: &[u8], meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let exec = meta.permissions().mode() & 0o111 != 0;
    (mode == b"100755") == exec && (mode == b"100644" || mode == b"100755")
}

#[cfg(not(unix))]
fn mode_matches(mode: &[u8], _meta: &std::fs::Metadata) -> bool {
    mode == b"100644"
}

/// Writes the marked paths into the work tree again from the index, through the filter (as
/// plaintext once unlocked, as stored when locked). Each file is removed first: git would skip
/// a file whose timestamps say it is up to date.
pub fn checkout_again(git: &Git, root: &Path, marked: &[String]) -> Result<(), GitError> {
    if marked.is_empty() {
        return Ok(());
    }
    for p in marked {
        match std::fs::remove_file(root.join(p)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(GitError::Replace { path: p.clone(), source: e }),
        }
    }
    let mut list = Vec::new();
    for p in marked {
        list.extend_from_slice(p.as_bytes());
        list.push(0);
    }
    let top = root.to_string_lossy();
    git.run(&["-C", &top, "checkout-index", "-f", "-u", "-z", "--stdin"], Some(&list)).map(drop)
}
