//! `hyperseal git`: transparent encryption in a git repository. Marked paths are stored as
//! plain age v1 files; an unlocked work tree holds their plaintext. `init` marks paths and
//! configures the drivers, `unlock` and `lock` switch the work tree between plaintext and
//! what is stored; git itself runs `filter-process` and `textconv`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use hyperseal::recipient::Identity;
use hyperseal_git::cat_file::{self, CatFile};
use hyperseal_git::marked::{self, DRIVER};
use hyperseal_git::{Git, GitError};

use crate::errors::hint;

mod clone;
mod filter;
mod guard;
mod merge;
mod rekey;
mod verify;

#[derive(Args)]
pub struct GitArgs {
    #[command(subcommand)]
    command: GitCommand,
}

#[derive(Subcommand)]
enum GitCommand {
    /// Configure this repository's filter, and mark PATTERNs (appended to .gitattributes).
    ///
    /// Each marked path is encrypted to the recipients of the nearest .age-recipients file (in
    /// its folder, or one above it); a marked path with none makes `git add` fail. Running it
    /// again changes nothing.
    Init {
        /// Also install hooks (never over a hook of another tool): before each commit,
        /// `hyperseal git verify`; after each checkout, merge, pull, reset, stash or other
        /// index write, marked files made private to their owner.
        #[arg(long)]
        hooks: bool,
        /// Paths to encrypt, as .gitattributes patterns (e.g. `secrets/**`, `*.env`).
        patterns: Vec<String>,
    },
    /// Record identities that open the marked files and check them out as plaintext.
    ///
    /// Without -i, the identity agent (HYPERSEAL_AGENT_SOCK) opens them. In a fresh clone it
    /// first configures the repository as `init` does.
    Unlock {
        /// An identity file (repeatable); recorded by its absolute path, never copied.
        #[arg(short = 'i', long = "identity")]
        identities: Vec<PathBuf>,
        /// Check out marked files again even where they have uncommitted changes (lost);
        /// without it such files are left as they are.
        #[arg(long)]
        force: bool,
    },
    /// Clone a repository and check it out unlocked: `git clone` and `unlock` in one step,
    /// each file written once.
    ///
    /// Without -i, the identity agent (HYPERSEAL_AGENT_SOCK) opens the marked files. Options
    /// after `--` go to `git clone` (e.g. `-- --branch dev`).
    Clone {
        /// An identity file (repeatable); recorded by its absolute path, never copied.
        #[arg(short = 'i', long = "identity")]
        identities: Vec<PathBuf>,
        /// The repository to clone, as `git clone` takes it.
        url: String,
        /// The folder to clone into (default: the repository's name, as git makes it).
        dir: Option<PathBuf>,
        /// Options for `git clone`, after `--`.
        #[arg(last = true)]
        git_args: Vec<String>,
    },
    /// Forget the identities and put the stored age files back into the work tree.
    Lock {
        /// Lock even where marked files have uncommitted changes (lost).
        #[arg(long)]
        force: bool,
    },
    /// Check that every marked path of REV (default: the index) is stored as an age file
    /// whose stanza types and count match its .age-recipients; exit 1 naming each that is not.
    Verify {
        /// A revision (commit, branch, tag); default: the index.
        rev: Option<String>,
    },
    /// Store the marked paths again for their .age-recipients where it differs from HEAD's
    /// (a member joined or left), and stage exactly those paths.
    ///
    /// Only each file's header changes; the payload bytes stay the same. Removed recipients can
    /// still read the history; only changing the secrets themselves revokes them.
    Rekey {
        /// Re-key every marked path, not only those under a changed .age-recipients.
        #[arg(long)]
        all: bool,
        /// A new file key and a new payload for each path (removed recipients who kept the old
        /// file keys cannot open the new blobs).
        #[arg(long)]
        rotate: bool,
        /// List the paths that would be re-keyed; write and stage nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// git's merge driver: a 3-way merge of the plaintexts, stored sealed (git runs it; not
    /// for people).
    #[command(hide = true, name = "merge-driver")]
    MergeDriver {
        base: PathBuf,
        ours: PathBuf,
        theirs: PathBuf,
        marker_len: Option<usize>,
        path: Option<String>,
    },
    /// git's long-running clean/smudge filter (git runs it; not for people).
    #[command(hide = true, name = "filter-process")]
    FilterProcess,
    /// git's diff textconv: an age file's plaintext (git runs it; not for people).
    #[command(hide = true)]
    Textconv { file: PathBuf },
    /// Marked files made private to their owner (the post-checkout, post-merge and
    /// post-index-change hooks run it; never fails).
    #[command(hide = true, name = "private-modes")]
    PrivateModes {
        /// What git passes a hook (ignored).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        hook_args: Vec<String>,
    },
}

pub fn run(a: GitArgs) -> Result<()> {
    match a.command {
        GitCommand::Init { hooks, patterns } => init(&patterns, hooks),
        GitCommand::Unlock { identities, force } => unlock(&identities, force),
        GitCommand::Clone { identities, url, dir, git_args } => {
            clone::clone(&identities, &url, dir.as_deref(), &git_args)
        }
        GitCommand::Lock { force } => lock(force),
        GitCommand::Verify { rev } => verify::verify(rev.as_deref()),
        GitCommand::Rekey { all, rotate, dry_run } => rekey::rekey(all, rotate, dry_run),
        GitCommand::MergeDriver { base, ours, theirs, marker_len, path } => {
            let path = path.ok_or_else(|| anyhow::anyhow!("git gave the merge driver no path (%P)"))?;
            merge::merge_driver(&base, &ours, &theirs, marker_len, &path)
        }
        GitCommand::FilterProcess => filter::filter_process(),
        GitCommand::Textconv { file } => filter::textconv(&file),
        GitCommand::PrivateModes { .. } => guard::private_modes_hook(),
    }
}

/// The `.gitattributes` line of a marked pattern.
fn attribute_line(pattern: &str) -> String {
    format!("{pattern} filter={DRIVER} diff={DRIVER} merge={DRIVER} -text")
}

fn init(patterns: &[String], hooks: bool) -> Result<()> {
    let root = work_tree()?;
    for p in patterns {
        // A pattern is one field of a .gitattributes line: whitespace or a newline would make
        // another attribute or another line.
        if p.is_empty() || p.chars().any(|c| c.is_whitespace() || c.is_control()) || p.starts_with('#') {
            return Err(crate::errors::usage(
                format!("{p:?} is not a pattern .gitattributes can hold"),
                "give a pattern without spaces, such as `secrets/**` or `*.env`",
            ));
        }
    }
    marked::configure(&repo_git(), &exe()?).map_err(said)?;
    guard::close_side_doors()?;
    let file = root.join(".gitattributes");
    let mut text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(anyhow::Error::new(e).context(".gitattributes")),
    };
    let before = text.len();
    for p in patterns {
        let line = attribute_line(p);
        if !text.lines().any(|l| l.trim() == line) {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&line);
            text.push('\n');
            eprintln!("marked {p}");
        }
    }
    if text.len() != before {
        std::fs::write(&file, text).map_err(|e| anyhow::Error::new(e).context(".gitattributes"))?;
    }
    guard::scrub()?;
    if hooks {
        guard::install_hooks()?;
    }
    if recipients_missing(&root) {
        eprintln!(
            "hyperseal: note: no .age-recipients at the top of the work tree: `git add` of a marked path fails until one is in its folder or above"
        );
    }
    Ok(())
}

fn recipients_missing(root: &std::path::Path) -> bool {
    !root.join(hyperseal_git::recipients::FILE_NAME).exists()
}

fn unlock(identities: &[PathBuf], force: bool) -> Result<()> {
    let root = work_tree()?;
    let (loaded, absolute) = identities_for_unlock(identities)?;
    // From here on every path is the work tree's (git lists paths relative to where it runs).
    std::env::set_current_dir(&root)?;
    let git = repo_git();
    marked::record_identities(&git, &exe()?, &absolute, identities.is_empty()).map_err(said)?;
    guard::close_side_doors()?;
    // Asked with the identities recorded, so plaintext that matches what is stored counts as
    // unchanged. What still differs is left as it is (it is the user's work): the rest is
    // checked out again as plaintext.
    let mut marked = marked_paths()?;
    // The files still as git checked them out are written here, on every core; git checks
    // out the rest through the filter. Another index (a `stash`'s, a hook's): git knows what
    // it is doing with it.
    #[cfg(unix)]
    let done = match std::env::var_os("GIT_INDEX_FILE") {
        Some(_) => Vec::new(),
        None => hyperseal_git::worktree::checkout(&git, &root, &marked, loaded).map_err(said)?,
    };
    #[cfg(not(unix))]
    let done: Vec<String> = {
        drop(loaded);
        Vec::new()
    };
    let taken: std::collections::HashSet<&String> = done.iter().collect();
    marked.retain(|p| !taken.contains(p));
    let as_stored = || marked::unchanged_as_stored(&git, &root, &marked).map_err(said);
    let changed = match force || marked.is_empty() || as_stored()? {
        true => Vec::new(),
        false => marked::changed_marked(&git, &marked).map_err(said)?,
    };
    marked.retain(|p| !changed.contains(p));
    marked::checkout_again(&git, &root, &marked).map_err(said)?;
    // git wrote those with the user's umask; the ones written here are private already.
    guard::private_modes(&root, &marked)?;
    guard::scrub()?;
    eprintln!("unlocked: {} marked file(s) checked out", marked.len() + done.len());
    if let Some(first) = changed.first() {
        eprintln!(
            "hyperseal: note: {} marked file(s) with uncommitted changes left as they are ({first} among them)",
            changed.len()
        );
    }
    Ok(())
}

fn lock(force: bool) -> Result<()> {
    let root = work_tree()?;
    // Every path from here on is the work tree's (git lists paths relative to where it runs).
    std::env::set_current_dir(&root)?;
    let git = repo_git();
    if !marked::configured(&git) {
        return Err(hint("this repository has no hyperseal filter", "run `hyperseal git init` first"));
    }
    let marked = marked_paths()?;
    refuse_changed(&marked, force, "lock")?;
    marked::forget_identities(&git);
    marked::checkout_again(&git, &root, &marked).map_err(said)?;
    guard::scrub()?;
    eprintln!("locked: {} marked file(s) hold their age files", marked.len());
    Ok(())
}

/// Checking out again overwrites the work tree's marked files: never over uncommitted work
/// unless asked.
fn refuse_changed(marked: &[String], force: bool, verb: &str) -> Result<()> {
    if force {
        return Ok(());
    }
    let changed = marked::changed_marked(&repo_git(), marked).map_err(said)?;
    match changed.first() {
        None => Ok(()),
        Some(first) => Err(hint(
            format!("{} marked file(s) have uncommitted changes ({first} among them)", changed.len()),
            format!("commit or stash them first, or `hyperseal git {verb} --force` to lose them"),
        )),
    }
}

/// Longest a git command run here may take: far beyond any honest run (a checkout through the
/// filter of a very large repository), short enough that a git stuck on a lock or a prompt ends
/// with an error instead of holding the caller for ever.
const GIT_DEADLINE: Duration = Duration::from_secs(30 * 60);

/// git as these commands run it: the user's own, found on PATH, in this process's folder.
fn repo_git() -> Git {
    Git::new("git", GIT_DEADLINE)
}

/// A failure of git as the user reads it: one line, and what to do where a missing git is why.
fn said(e: GitError) -> anyhow::Error {
    match e {
        GitError::Start(_) => hint(e.to_string(), "install git, or put it on PATH"),
        e => anyhow::Error::new(e),
    }
}

/// Runs `git ARGS` (with `stdin` on its input) and returns its standard output.
fn git(args: &[&str], stdin: Option<&[u8]>) -> Result<Vec<u8>> {
    repo_git().run(args, stdin).map_err(said)
}

/// `git ARGS` as text, trimmed.
fn git_text(args: &[&str]) -> Result<String> {
    repo_git().text(args).map_err(said)
}

/// The work tree's root; an error outside a work tree.
fn work_tree() -> Result<PathBuf> {
    repo_git().work_tree().map_err(|_| {
        hint("not inside a git work tree", "run `hyperseal git` inside a repository's work tree")
    })
}

/// An absolute path under the repository's git folder (per work tree), for the filter's spool.
fn git_path(name: &str) -> Result<PathBuf> {
    repo_git().git_path(name).map_err(said)
}

/// Every path in the index whose `filter` attribute is this driver.
fn marked_paths() -> Result<Vec<String>> {
    marked::marked_paths(&repo_git()).map_err(said)
}

/// The one `git cat-file --batch` of a command, each read from it bounded.
fn cat_file() -> Result<CatFile> {
    Ok(CatFile::start(&repo_git(), cat_file::READ_DEADLINE)?)
}

/// This program, as git runs it for the drivers and the hooks.
fn exe() -> Result<PathBuf> {
    std::env::current_exe().context("cannot find the hyperseal executable's path")
}

/// Identities loaded for an unlock, and the absolute paths of their files.
type Unlocking = (Vec<Box<dyn Identity>>, Vec<PathBuf>);

/// The identities `unlock` and `clone` open files with: loaded now, so a wrong path or
/// passphrase fails before anything changes (and a protected identity file asks its passphrase
/// once), with the agent where none is given; and their absolute paths, for the repository's
/// configuration.
fn identities_for_unlock(identities: &[PathBuf]) -> Result<Unlocking> {
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
        absolute.push(std::fs::canonicalize(i).with_context(|| Path::new(i).display().to_string())?);
    }
    Ok((loaded, absolute))
}

/// Many blobs out of git's object store at once, for the commands that handle every marked file
/// (`clone`, `rekey`): the library's one `git cat-file` client, its failures worded as every
/// git failure here.
mod blobs {
    use anyhow::Result;
    pub use hyperseal_git::cat_file::{round_files, MOST, ROUND};

    /// Each blob's size, in the order of `oids`; `u64::MAX` for one git does not have.
    pub fn sizes(oids: &[&str]) -> Result<Vec<u64>> {
        hyperseal_git::cat_file::sizes(&super::repo_git(), oids).map_err(super::said)
    }

    /// The blobs `oids` (of `sizes`) read in rounds of at most `files` blobs and `bytes` bytes,
    /// each round handed to `each` with its first index (`hyperseal_git::cat_file::in_rounds`).
    pub fn in_rounds(
        oids: &[&str],
        sizes: &[u64],
        files: usize,
        bytes: u64,
        each: impl FnMut(usize, &mut [Option<&[u8]>]) -> Result<()>,
    ) -> Result<()> {
        hyperseal_git::cat_file::in_rounds(super::cat_file()?, oids, sizes, files, bytes, each)
    }
}
