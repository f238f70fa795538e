//! `hyperseal git`: transparent encryption in a git repository. Marked paths are stored as
//! plain age v1 files; an unlocked work tree holds their plaintext. `init` marks paths and
//! configures the drivers, `unlock` and `lock` switch the work tree between plaintext and
//! what is stored; git itself runs `filter-process` and `textconv`.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};

use super::git_repo::{self, git, DRIVER};
use crate::errors::hint;

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
    /// Forget the identities and put the stored age files back into the work tree.
    Lock {
        /// Lock even where marked files have uncommitted changes (lost).
        #[arg(long)]
        force: bool,
    },
    /// git's long-running clean/smudge filter (git runs it; not for people).
    #[command(hide = true, name = "filter-process")]
    FilterProcess,
    /// git's diff textconv: an age file's plaintext (git runs it; not for people).
    #[command(hide = true)]
    Textconv { file: PathBuf },
}

pub fn run(a: GitArgs) -> Result<()> {
    match a.command {
        GitCommand::Init { patterns } => init(&patterns),
        GitCommand::Unlock { identities, force } => unlock(&identities, force),
        GitCommand::Lock { force } => lock(force),
        GitCommand::FilterProcess => super::git_filter::filter_process(),
        GitCommand::Textconv { file } => super::git_filter::textconv(&file),
    }
}

/// The `.gitattributes` line of a marked pattern.
fn attribute_line(pattern: &str) -> String {
    format!("{pattern} filter={DRIVER} diff={DRIVER} merge={DRIVER} -text")
}

fn init(patterns: &[String]) -> Result<()> {
    let root = git_repo::work_tree()?;
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
    git_repo::configure()?;
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
    if recipients_missing(&root) {
        eprintln!(
            "hyperseal: note: no .age-recipients at the top of the work tree: `git add` of a marked path fails until one is in its folder or above"
        );
    }
    Ok(())
}

fn recipients_missing(root: &std::path::Path) -> bool {
    !root.join(hyperseal::git::recipients::FILE_NAME).exists()
}

fn unlock(identities: &[PathBuf], force: bool) -> Result<()> {
    let root = git_repo::work_tree()?;
    if identities.is_empty() && super::identity::agent_identity().is_none() {
        return Err(crate::errors::usage(
            "no identity to unlock with",
            "give -i with a key the files were sealed to, or start the agent (HYPERSEAL_AGENT_SOCK)",
        ));
    }
    // Loaded now, so a wrong path or passphrase fails here and not in the middle of a checkout.
    super::identity::load_identities(identities, None)?;
    let mut absolute = Vec::new();
    for i in identities {
        absolute.push(
            std::fs::canonicalize(i).map_err(|e| anyhow::Error::new(e).context(i.display().to_string()))?,
        );
    }
    git_repo::configure()?;
    git_repo::forget_identities()?;
    for p in &absolute {
        git(&["config", "--local", "--add", git_repo::IDENTITY_KEY, &p.to_string_lossy()], None)?;
    }
    if identities.is_empty() {
        git(&["config", "--local", git_repo::AGENT_KEY, "true"], None)?;
    }
    // Asked with the identities recorded, so plaintext that matches what is stored counts as
    // unchanged. What still differs is left as it is (it is the user's work): the rest is
    // checked out again as plaintext.
    let mut marked = git_repo::marked_paths()?;
    let changed = match force {
        true => Vec::new(),
        false => git_repo::changed_marked(&marked)?,
    };
    marked.retain(|p| !changed.contains(p));
    git_repo::checkout_again(&root, &marked)?;
    eprintln!("unlocked: {} marked file(s) checked out", marked.len());
    if let Some(first) = changed.first() {
        eprintln!(
            "hyperseal: note: {} marked file(s) with uncommitted changes left as they are ({first} among them)",
            changed.len()
        );
    }
    Ok(())
}

fn lock(force: bool) -> Result<()> {
    let root = git_repo::work_tree()?;
    if !git_repo::configured() {
        return Err(hint("this repository has no hyperseal filter", "run `hyperseal git init` first"));
    }
    let marked = git_repo::marked_paths()?;
    refuse_changed(&marked, force, "lock")?;
    git_repo::forget_identities()?;
    git_repo::checkout_again(&root, &marked)?;
    eprintln!("locked: {} marked file(s) hold their age files", marked.len());
    Ok(())
}

/// Checking out again overwrites the work tree's marked files: never over uncommitted work
/// unless asked.
fn refuse_changed(marked: &[String], force: bool, verb: &str) -> Result<()> {
    if force {
        return Ok(());
    }
    let changed = git_repo::changed_marked(marked)?;
    match changed.first() {
        None => Ok(()),
        Some(first) => Err(hint(
            format!("{} marked file(s) have uncommitted changes ({first} among them)", changed.len()),
            format!("commit or stash them first, or `hyperseal git {verb} --force` to lose them"),
        )),
    }
}
