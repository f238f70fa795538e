//! `hyperseal git clone`: `git clone` and `hyperseal git unlock` in one step, writing each file
//! once. git clones without checking anything out; the marked files are read from git's
//! objects, opened on every core and written as plaintext with their stat data in the index
//! (`hyperseal_git::worktree::write_new`), and git then checks out the rest (`git checkout-index`: the files
//! that are not marked, and marked ones this leaves to the filter).
//!
//! Why: a clone followed by `unlock` writes every marked file twice (the age file git checks
//! out, then its plaintext over it) and reads it back in between. For thousands of small
//! secrets those writes, not the cryptography, are most of the time.
//!
//! Left to git and the filter, as in `unlock`: large blobs (git streams them through the
//! filter, which holds little in memory), executables, links, and anything that does not open.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::Result;
use hyperseal::recipient::Identity;
use hyperseal_git::git::wait_until;
use hyperseal_git::marked;

use super::{git, repo_git, said};
use crate::errors::{hint, usage};

/// `git clone` options that would leave a work tree this must not fill, or none at all
/// (`--recursive` is git's other name for `--recurse-submodules`).
const REFUSED: &[&str] =
    &["--no-checkout", "--bare", "--mirror", "--sparse", "--recurse-submodules", "--recursive"];

/// The `git clone` short options that take a value (`-b main`, or `-bmain`): in a bundle of
/// short options, the rest after one of them is its value.
const SHORT_WITH_VALUE: &str = "bocuj";

/// The refused option that `arg` is, as git reads it: a long option by its whole name or any
/// prefix of it (git takes an unambiguous prefix: `--no-check`), `-n` alone or in a bundle of
/// short options (`-nq`).
fn refused(arg: &str) -> Option<&'static str> {
    if let Some(long) = arg.strip_prefix("--") {
        let name = long.split('=').next().unwrap_or(long);
        return REFUSED.iter().copied().find(|r| !name.is_empty() && r[2..].starts_with(name));
    }
    let short = arg.strip_prefix('-')?;
    short.chars().take_while(|c| !SHORT_WITH_VALUE.contains(*c)).any(|c| c == 'n').then_some("-n")
}

/// Longest the clone itself may take: a large repository over a slow link takes hours, not days;
/// a clone stuck on a prompt or a dead server ends with an error instead of holding the caller.
const CLONE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(12 * 3600);

/// Clones `url` into `dir` (git's name for it when absent), records `identities` (the agent
/// with none) as `unlock` does, and checks out the work tree with the marked files as
/// plaintext. `git_args` go to `git clone` as they are.
pub fn clone(identities: &[PathBuf], url: &str, dir: Option<&Path>, git_args: &[String]) -> Result<()> {
    if let Some((arg, named)) = git_args.iter().find_map(|a| Some((a, refused(a)?))) {
        let bad = if arg == named { arg.to_string() } else { format!("{arg} (git's {named})") };
        return Err(usage(
            format!("`hyperseal git clone` checks out the work tree itself, so it cannot take {bad}"),
            "run `git clone` with it, then `hyperseal git unlock` in the clone",
        ));
    }
    // Loaded before anything is cloned: a wrong path or passphrase fails here.
    let (loaded, absolute) = super::identities_for_unlock(identities)?;
    let dir = match dir {
        Some(d) => d.to_path_buf(),
        None => PathBuf::from(humanish(url).ok_or_else(|| {
            usage(
                format!("cannot tell a folder name from {url:?}"),
                "give the folder: hyperseal git clone URL DIR",
            )
        })?),
    };
    run_clone(url, &dir, git_args)?;
    let done = unlock_fresh(&dir, &absolute, identities.is_empty(), loaded).map_err(|e| {
        hint(
            format!("{e:#}"),
            format!(
                "the clone is in {}: `git checkout -f HEAD` and then `hyperseal git unlock` there finish it",
                dir.display()
            ),
        )
    })?;
    eprintln!("cloned into {}: {done} marked file(s) checked out", dir.display());
    Ok(())
}

/// `git clone --no-checkout`, its progress on the terminal as git prints it.
fn run_clone(url: &str, dir: &Path, git_args: &[String]) -> Result<()> {
    let mut c = repo_git().command();
    c.arg("clone").arg("--no-checkout").args(git_args).arg("--").arg(url).arg(dir);
    let mut child = c
        .stdin(Stdio::null())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| hint(format!("cannot run git: {e}"), "install git, or put it on PATH"))?;
    match wait_until(&mut child, std::time::Instant::now() + CLONE_DEADLINE)? {
        Some(s) if s.success() => Ok(()),
        Some(_) => Err(hint("git clone failed", "git's message above says why")),
        None => Err(anyhow::anyhow!(
            "git clone did not finish within {} hours and was stopped",
            CLONE_DEADLINE.as_secs() / 3600
        )),
    }
}

/// In the fresh clone `dir`: configures it, records the identities, writes the marked files
/// it can, then has git check out everything else. Returns how many files are marked (as
/// `unlock` counts them).
fn unlock_fresh(dir: &Path, absolute: &[PathBuf], agent: bool, ids: Vec<Box<dyn Identity>>) -> Result<usize> {
    std::env::set_current_dir(dir)?;
    let root = super::work_tree()?;
    std::env::set_current_dir(&root)?;
    let g = repo_git();
    marked::record_identities(&g, &super::exe()?, absolute, agent).map_err(said)?;
    super::guard::close_side_doors()?;
    if git(&["rev-parse", "--verify", "-q", "HEAD^{commit}"], None).is_err() {
        return Ok(0); // An empty repository: nothing to check out.
    }
    // The index of HEAD, with no file written yet.
    git(&["read-tree", "HEAD"], None)?;
    // The attributes come from the index: the work tree has no .gitattributes yet.
    let marked = marked::marked_among(&g, &git(&["ls-files", "-z"], None)?, true).map_err(said)?;
    // Each written as a new file, with its stat data in the index: a path already taken
    // (nothing is, in a fresh clone) is left as it is, to git.
    #[cfg(unix)]
    hyperseal_git::worktree::write_new(&g, hyperseal_git::cat_file::READ_DEADLINE, &root, &marked, ids)
        .map_err(said)?;
    #[cfg(not(unix))]
    drop(ids);
    // The rest: files not marked, and the marked ones left above, through the filter. Files
    // written above have their stat data in the index, so git leaves them as they are.
    let top = root.to_string_lossy();
    git(&["-C", &top, "checkout-index", "--all", "-u", "-q"], None)?;
    // Those git wrote with the user's umask; the ones written above are private already.
    super::guard::private_modes(&root, &marked)?;
    Ok(marked.len())
}

/// The folder `git clone URL` makes: the last part of the URL, without a trailing `/` or `.git`
/// (git's own rule, for the URLs people clone from).
fn humanish(url: &str) -> Option<String> {
    let mut s = url.trim_end_matches('/');
    s = s.strip_suffix("/.git").unwrap_or(s);
    s = s.trim_end_matches('/');
    let last = s.rsplit(['/', ':']).next()?;
    let last = last.strip_suffix(".git").unwrap_or(last);
    (!last.is_empty() && last != "." && last != "..").then(|| last.to_string())
}

#[cfg(test)]
mod tests {
    use super::{humanish, refused};

    #[test]
    fn options_that_leave_no_work_tree_are_refused_however_git_would_read_them() {
        for (arg, named) in [
            ("-n", "-n"),
            ("-nq", "-n"),
            ("-qn", "-n"),
            ("--no-checkout", "--no-checkout"),
            ("--no-check", "--no-checkout"),
            ("--bare", "--bare"),
            ("--mir", "--mirror"),
            ("--sparse", "--sparse"),
            ("--recursive", "--recursive"),
            ("--recurse-submodules=lib", "--recurse-submodules"),
        ] {
            assert_eq!(refused(arg), Some(named), "{arg}");
        }
        // A value, not an option: `-b` takes the rest of its bundle (a branch named "main").
        for arg in
            ["-bmain", "-q", "--depth=1", "--branch", "--single-branch", "--no-tags", "main", "-", "--"]
        {
            assert_eq!(refused(arg), None, "{arg}");
        }
    }

    #[test]
    fn the_folder_is_named_as_git_names_it() {
        assert_eq!(humanish("https://example.com/team/secrets.git").as_deref(), Some("secrets"));
        assert_eq!(humanish("git@example.com:team/secrets.git").as_deref(), Some("secrets"));
        assert_eq!(humanish("/srv/repos/secrets/.git/").as_deref(), Some("secrets"));
        assert_eq!(humanish("../origin").as_deref(), Some("origin"));
        assert_eq!(humanish("host:repo").as_deref(), Some("repo"));
        assert_eq!(humanish("/"), None);
        assert_eq!(humanish(".."), None);
    }
}
