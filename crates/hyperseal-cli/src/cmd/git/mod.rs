//! `hyperseal git`: transparent encryption in a git repository. Marked paths are stored as
//! plain age v1 files; an unlocked work tree holds their plaintext. `init` marks paths and
//! configures the drivers, `unlock` and `lock` switch the work tree between plaintext and
//! what is stored; git itself runs `filter-process` and `textconv`.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};

use self::repo::DRIVER;
use crate::errors::hint;

mod blobs;
mod clone;
mod filter;
mod guard;
mod merge;
mod rekey;
mod repo;
#[cfg(unix)]
mod unlock;
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
        /// `hyperseal git verify`; after each checkout, merge or pull, marked files made
        /// private to their owner.
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
    /// Marked files made private to their owner (the post-checkout and post-merge hooks run
    /// it; never fails).
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
    let root = repo::work_tree()?;
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
    repo::configure()?;
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
    let root = repo::work_tree()?;
    let (loaded, absolute) = repo::identities_for_unlock(identities)?;
    // From here on every path is the work tree's (git lists paths relative to where it runs).
    std::env::set_current_dir(&root)?;
    repo::record_identities(&absolute, identities.is_empty())?;
    guard::close_side_doors()?;
    // Asked with the identities recorded, so plaintext that matches what is stored counts as
    // unchanged. What still differs is left as it is (it is the user's work): the rest is
    // checked out again as plaintext.
    let mut marked = repo::marked_paths()?;
    // The files still as git checked them out are written here, on every core; git checks
    // out the rest through the filter.
    #[cfg(unix)]
    let done = unlock::checkout(&root, &marked, loaded)?;
    #[cfg(not(unix))]
    let done: Vec<String> = {
        drop(loaded);
        Vec::new()
    };
    let taken: std::collections::HashSet<&String> = done.iter().collect();
    marked.retain(|p| !taken.contains(p));
    let changed = match force || marked.is_empty() || repo::unchanged_as_stored(&root, &marked)? {
        true => Vec::new(),
        false => repo::changed_marked(&marked)?,
    };
    marked.retain(|p| !changed.contains(p));
    repo::checkout_again(&root, &marked)?;
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
    let root = repo::work_tree()?;
    // Every path from here on is the work tree's (git lists paths relative to where it runs).
    std::env::set_current_dir(&root)?;
    if !repo::configured() {
        return Err(hint("this repository has no hyperseal filter", "run `hyperseal git init` first"));
    }
    let marked = repo::marked_paths()?;
    refuse_changed(&marked, force, "lock")?;
    repo::forget_identities()?;
    repo::checkout_again(&root, &marked)?;
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
    let changed = repo::changed_marked(marked)?;
    match changed.first() {
        None => Ok(()),
        Some(first) => Err(hint(
            format!("{} marked file(s) have uncommitted changes ({first} among them)", changed.len()),
            format!("commit or stash them first, or `hyperseal git {verb} --force` to lose them"),
        )),
    }
}
