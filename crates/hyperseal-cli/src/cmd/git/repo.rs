//! Running git for `hyperseal git`: one function that runs it and turns a failure into one
//! line, the repository's configuration as `init` and `unlock` write it, and the list of
//! marked paths. git is the user's own, found on PATH; every call waits for git to end (30
//! minutes at most, then git is stopped), and a failing git is reported with the first line it
//! printed.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use hyperseal::recipient::Identity;

use crate::errors::hint;

/// The filter, diff and merge driver's name in `.gitattributes` and in git's configuration.
pub const DRIVER: &str = "hyperseal";
/// Local configuration key of each identity file `unlock -i` recorded (absolute paths).
pub const IDENTITY_KEY: &str = "hyperseal.identity";
/// Local configuration key set to `true` by `unlock` without `-i`: the agent opens the files.
pub const AGENT_KEY: &str = "hyperseal.agent";

/// Longest a git command run here may take: far beyond any honest run (a checkout through the
/// filter of a very large repository), short enough that a git stuck on a lock or a prompt ends
/// with an error instead of holding the caller for ever.
const GIT_DEADLINE: Duration = Duration::from_secs(30 * 60);

/// Runs `git ARGS` (with `stdin` on its input) and returns its standard output; a git still
/// running after [`GIT_DEADLINE`] is killed.
pub fn git(args: &[&str], stdin: Option<&[u8]>) -> Result<Vec<u8>> {
    let mut c = Command::new("git");
    c.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    c.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    let mut child =
        c.spawn().map_err(|e| hint(format!("cannot run git: {e}"), "install git, or put it on PATH"))?;
    let input = child.stdin.take();
    let (stdout, stderr) = (child.stdout.take().expect("piped"), child.stderr.take().expect("piped"));
    // git answers while it reads (check-attr --stdin): the input goes in from another thread,
    // and each output is read by its own, so no side waits on a full pipe while this one
    // watches the clock.
    let (status, out, err) = std::thread::scope(|s| {
        if let (Some(data), Some(mut input)) = (stdin, input) {
            s.spawn(move || input.write_all(data));
        }
        // Each reader says when its pipe closed, which git does as it exits: waiting for that
        // (with the deadline) ends the wait at once, where polling the child alone would
        // oversleep a 50 ms run by as much again.
        let (closed, eof) = std::sync::mpsc::channel();
        let reader = |mut pipe: Box<dyn Read + Send>| {
            let closed = closed.clone();
            s.spawn(move || {
                let mut v = Vec::new();
                let r = pipe.read_to_end(&mut v).map(|_| v);
                let _ = closed.send(());
                r
            })
        };
        let (out, err) = (reader(Box::new(stdout)), reader(Box::new(stderr)));
        let deadline = Instant::now() + GIT_DEADLINE;
        for _ in 0..2 {
            if eof.recv_timeout(deadline.saturating_duration_since(Instant::now())).is_err() {
                break;
            }
        }
        let status = wait_until(&mut child, deadline);
        (status, out.join(), err.join())
    });
    let status = status.context("cannot run git")?;
    let Some(status) = status else {
        return Err(anyhow::anyhow!(
            "git {} did not finish within {} minutes and was stopped",
            args.first().unwrap_or(&""),
            GIT_DEADLINE.as_secs() / 60
        ));
    };
    let joined = |r: std::thread::Result<std::io::Result<Vec<u8>>>| {
        r.map_err(|_| anyhow::anyhow!("cannot read git's output"))?.context("cannot read git's output")
    };
    let (out, err) = (joined(out)?, joined(err)?);
    if !status.success() {
        let why = String::from_utf8_lossy(&err);
        let line = why.lines().find(|l| !l.trim().is_empty()).unwrap_or("no message");
        return Err(anyhow::anyhow!("git {} failed: {}", args.first().unwrap_or(&""), line.trim()));
    }
    Ok(out)
}

/// Waits for `child` until `deadline`; kills and reaps it then (`None`). Polls, from every
/// millisecond up to every 50: std has no wait with a timeout, and most git runs here end in
/// a few milliseconds.
pub fn wait_until(child: &mut std::process::Child, deadline: Instant) -> std::io::Result<Option<ExitStatus>> {
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// `git ARGS` as text, trimmed.
pub fn git_text(args: &[&str]) -> Result<String> {
    Ok(String::from_utf8_lossy(&git(args, None)?).trim().to_string())
}

/// The work tree's root; an error outside a work tree.
pub fn work_tree() -> Result<PathBuf> {
    match git(&["rev-parse", "--show-toplevel"], None) {
        Ok(out) => Ok(PathBuf::from(String::from_utf8_lossy(&out).trim())),
        Err(_) => {
            Err(hint("not inside a git work tree", "run `hyperseal git` inside a repository's work tree"))
        }
    }
}

/// An absolute path under the repository's git folder (per work tree), for the filter's spool.
pub fn git_path(name: &str) -> Result<PathBuf> {
    let p = PathBuf::from(git_text(&["rev-parse", "--git-path", name])?);
    Ok(if p.is_absolute() { p } else { std::env::current_dir()?.join(p) })
}

/// Writes the drivers into the repository's local configuration: the long-running filter,
/// required (a failing filter fails the git command instead of storing plaintext), and the
/// diff textconv, and the merge driver (git substitutes the three stored versions' temporary
/// files, the conflict marker size and the path, each quoted for the shell). Its callers also
/// close git's own doors to a marked file's plaintext (`guard::close_side_doors`). Setting
/// a key to the value it has changes nothing, so running it twice is the same as once.
pub fn configure() -> Result<()> {
    let exe = std::env::current_exe().context("cannot find the hyperseal executable's path")?;
    let exe = shell_quote(&exe);
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
        git(&["config", "--local", &key, &value], None)?;
    }
    Ok(())
}

/// Whether `configure` has run in this repository.
pub fn configured() -> bool {
    git_text(&["config", "--local", "--get", &format!("filter.{DRIVER}.process")])
        .is_ok_and(|v| !v.is_empty())
}

/// git runs the drivers through the shell: the path goes in single quotes.
pub fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.to_string_lossy().replace('\'', r"'\''"))
}

/// Every path in the index whose `filter` attribute is this driver.
pub fn marked_paths() -> Result<Vec<String>> {
    marked_among(&git(&["ls-files", "-z"], None)?, false)
}

/// Of `listed` (paths, each ended by NUL), those whose `filter` attribute is this driver: by the
/// index's `.gitattributes` when `cached`, the work tree's otherwise.
pub fn marked_among(listed: &[u8], cached: bool) -> Result<Vec<String>> {
    if listed.is_empty() {
        return Ok(Vec::new());
    }
    let mut args = vec!["check-attr", "-z", "--stdin"];
    if cached {
        args.push("--cached");
    }
    args.push("filter");
    let attrs = git(&args, Some(listed))?;
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
pub fn changed_marked(marked: &[String]) -> Result<Vec<String>> {
    let status = git(&["status", "--porcelain", "-z", "--untracked-files=no"], None)?;
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
pub fn unchanged_as_stored(root: &Path, marked: &[String]) -> Result<bool> {
    let top = root.to_string_lossy();
    if git(&["-C", &top, "diff-index", "--cached", "--quiet", "HEAD", "--"], None).is_err() {
        return Ok(false);
    }
    let listed = git(&["-C", &top, "ls-files", "-s", "-z"], None)?;
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
    let Ok(hashed) = git(&["-C", &top, "hash-object", "--no-filters", "--stdin-paths"], Some(&paths)) else {
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
pub fn checkout_again(root: &Path, marked: &[String]) -> Result<()> {
    if marked.is_empty() {
        return Ok(());
    }
    for p in marked {
        match std::fs::remove_file(root.join(p)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(anyhow::Error::new(e).context(format!("cannot replace {p}"))),
        }
    }
    let mut list = Vec::new();
    for p in marked {
        list.extend_from_slice(p.as_bytes());
        list.push(0);
    }
    let top = root.to_string_lossy();
    git(&["-C", &top, "checkout-index", "-f", "-u", "-z", "--stdin"], Some(&list)).map(drop)
}

/// The identity files `unlock` recorded, and whether it named the agent.
pub fn recorded_identities() -> (Vec<PathBuf>, bool) {
    let files = git(&["config", "--local", "--get-all", IDENTITY_KEY], None)
        .map(|out| {
            String::from_utf8_lossy(&out).lines().filter(|l| !l.is_empty()).map(PathBuf::from).collect()
        })
        .unwrap_or_default();
    let agent = git_text(&["config", "--local", "--get", AGENT_KEY]).is_ok_and(|v| v == "true");
    (files, agent)
}

/// Forgets the recorded identities (`lock`, and `unlock` before it records new ones).
pub fn forget_identities() -> Result<()> {
    for key in [IDENTITY_KEY, AGENT_KEY] {
        // Exit status 5: the key was not set, which is what was wanted.
        let _ = git(&["config", "--local", "--unset-all", key], None);
    }
    Ok(())
}

/// Identities loaded for an unlock, and the absolute paths of their files.
pub type Unlocking = (Vec<Box<dyn Identity>>, Vec<PathBuf>);

/// The identities `unlock` and `clone` open files with: loaded now, so a wrong path or
/// passphrase fails before anything changes (and a protected identity file asks its passphrase
/// once), with the agent where none is given; and their absolute paths, for the repository's
/// configuration.
pub fn identities_for_unlock(identities: &[PathBuf]) -> Result<Unlocking> {
    if identities.is_empty() && crate::cmd::identity::agent_identity().is_none() {
        return Err(crate::errors::usage(
            "no identity to unlock with",
            "give -i with a key the files were sealed to, or start the agent (HYPERSEAL_AGENT_SOCK)",
        ));
    }
    let mut loaded = crate::cmd::identity::load_identities(identities, None)?;
    if identities.is_empty() {
        loaded.extend(crate::cmd::identity::agent_identity());
    }
    let mut absolute = Vec::new();
    for i in identities {
        absolute.push(
            std::fs::canonicalize(i).map_err(|e| anyhow::Error::new(e).context(i.display().to_string()))?,
        );
    }
    Ok((loaded, absolute))
}

/// Configures the repository as `init` does and records the identity files (`agent`: the agent
/// instead) in its local configuration, in place of any recorded before. Run in the work tree.
pub fn record_identities(absolute: &[PathBuf], agent: bool) -> Result<()> {
    configure()?;
    forget_identities()?;
    for p in absolute {
        git(&["config", "--local", "--add", IDENTITY_KEY, &p.to_string_lossy()], None)?;
    }
    if agent {
        git(&["config", "--local", AGENT_KEY, "true"], None)?;
    }
    Ok(())
}
