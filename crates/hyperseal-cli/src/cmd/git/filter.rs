//! The programs git runs: the long-running filter (`hyperseal git filter-process`, one per git
//! command) and the diff textconv (`hyperseal git textconv FILE`). The library decides every
//! clean and smudge; this file gives it the repository: the identities `unlock` recorded, the
//! recipients parsed as `-R` reads them, and the blobs git stored (`hyperseal_git::store`).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::Result;
use hyperseal::recipient::{Identity, Recipient};
use hyperseal::Decryptor;
use hyperseal_git::{Filter, FilterOutcome, Repo, Spool, AGE_INTRO};

/// `hyperseal git filter-process`: serves git on standard input and output until git is done.
pub fn filter_process() -> Result<()> {
    #[cfg(unix)]
    crate::sys::ignore_sigpipe();
    keep_heap();
    let root = super::work_tree()?;
    let spool = super::git_path("hyperseal-spool")?;
    // `stash` or `commit -a` point GIT_INDEX_FILE (inherited from git) at their own index.
    let index = match std::env::var_os("GIT_INDEX_FILE") {
        Some(f) => PathBuf::from(f),
        None => super::git_path("index")?,
    };
    let blobs = hyperseal_git::cat_file::Stored::new(
        super::repo_git(),
        index,
        hyperseal_git::cat_file::READ_DEADLINE,
    );
    let mut filter = Filter::new(Stored { identities: None, blobs }, &root, &spool);
    let mut report = |path: &str, done: Result<FilterOutcome, &hyperseal::Error>| {
        if let Err(e) = done {
            report_failure(path, e);
        }
    };
    // Every answer is flushed whole (`serve` flushes once per file): one write, one wake-up
    // of git, which waits for it before it sends the next file.
    let out: Box<dyn Write> = match crate::sys::fd::stdout_file() {
        Some(f) => Box::new(f),
        None => Box::new(std::io::stdout().lock()),
    };
    let out = std::io::BufWriter::with_capacity(64 << 10, out);
    // git's pipe read without sleeping between requests where it can be (the library's
    // `git::pipe` says why).
    #[cfg(unix)]
    if let Some(pipe) = hyperseal_git::GitPipe::stdin(hyperseal_git::pipe::SPIN) {
        hyperseal_git::serve(&mut filter, pipe, out, &mut report)?;
        return Ok(());
    }
    hyperseal_git::serve(&mut filter, hyperseal_git::Blocking(std::io::stdin().lock()), out, &mut report)?;
    Ok(())
}

/// Keeps freed memory in the process. The cipher allocates and frees its buffers for every
/// file, and glibc's defaults give the top of the heap back to the kernel and take it again
/// each time: thousands of small files then cost more in page faults than in cryptography.
/// Every buffer that held a secret is zeroized before it is freed, so keeping the pages
/// exposes nothing new.
fn keep_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; called before the filter allocates
    // its buffers, from the one thread there is.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 8 << 20);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

/// One line for a file git's command could not filter; git adds its own line after it.
fn report_failure(path: &str, e: &hyperseal::Error) {
    let message = crate::errors::message(&anyhow::anyhow!("{e}"));
    let message = if message.starts_with(path) { message } else { format!("{path}: {message}") };
    let hint = match e {
        hyperseal::Error::InvalidRecipient(_) | hyperseal::Error::IncompatibleRecipients(_) => Some(
            "put the recipients, one per line as -R reads them, in a .age-recipients file in its folder or one above",
        ),
        hyperseal::Error::NoIdentityMatched => Some("run `hyperseal git unlock -i KEY` with a key the file was sealed to"),
        _ => None,
    };
    crate::errors::print_error(&message, hint);
}

/// The repository as the filter sees it: the identities `unlock` recorded, and the blobs git
/// stored.
struct Stored {
    identities: Option<Vec<Box<dyn Identity>>>,
    blobs: hyperseal_git::cat_file::Stored,
}

impl Repo for Stored {
    fn recipients(&mut self, file: &str, text: &str) -> Result<Vec<Box<dyn Recipient>>, hyperseal::Error> {
        crate::cmd::identity::parse_recipients_text(text, Path::new(file))
    }

    fn identities(&mut self) -> Result<&[Box<dyn Identity>], hyperseal::Error> {
        if self.identities.is_none() {
            self.identities = Some(unlocked().map_err(|e| {
                hyperseal::Error::InvalidKey(format!(
                    "the identities `unlock` recorded: {}",
                    crate::errors::message(&e)
                ))
            })?);
        }
        Ok(self.identities.as_deref().unwrap_or_default())
    }

    fn stored(&mut self, path: &str, into: &mut Spool) -> std::io::Result<bool> {
        self.blobs.stored(path, into)
    }
}

/// The identities `unlock` recorded: its identity files, then the agent; none while locked.
pub(super) fn unlocked() -> Result<Vec<Box<dyn Identity>>> {
    let (files, agent) = hyperseal_git::marked::recorded_identities(&super::repo_git());
    let mut ids = crate::cmd::identity::load_identities(&files, None)?;
    if agent {
        ids.push(crate::cmd::identity::agent_identity().ok_or_else(|| {
            crate::errors::hint(
                "the repository is unlocked with the agent, but HYPERSEAL_AGENT_SOCK is not set",
                "start the agent (`hyperseal agent start`), or `hyperseal git unlock -i KEY`",
            )
        })?);
    }
    Ok(ids)
}

/// `hyperseal git textconv FILE`: the plaintext of an age file for `git diff`, `log -p` and
/// `show`; any other file as it is. A locked repository shows what is stored. It never fails
/// the git command: a file it cannot open (sealed to another team, a malformed header, the
/// agent gone) is shown as one placeholder line, as the smudge side leaves such a file as
/// stored. Under `git commit` (`-v`, `commit.verbose`) the placeholder stands for every marked
/// file: git writes that diff into `.git/COMMIT_EDITMSG`, where it would stay.
pub fn textconv(file: &PathBuf) -> Result<()> {
    let f =
        std::fs::File::open(file).map_err(|e| anyhow::Error::new(e).context(file.display().to_string()))?;
    let mut start = [0u8; AGE_INTRO.len()];
    let n = (&f).take(start.len() as u64).read(&mut start)?;
    std::io::Seek::rewind(&mut &f)?;
    let mut out = std::io::stdout();
    // git hands the textconv what its smudge filter gave (plaintext, in an unlocked work tree),
    // so under `git commit` nothing of a marked file is shown, age file or not.
    if under_git_commit() {
        return placeholder(
            &mut out,
            "a marked file's text is not shown in a commit message (it would stay in .git)",
        );
    }
    if start[..n] != *AGE_INTRO {
        std::io::copy(&mut &f, &mut out)?;
        return Ok(());
    }
    let ids = match unlocked() {
        Ok(ids) => ids,
        Err(e) => return placeholder(&mut out, &format!("cannot open: {e:#}")),
    };
    if ids.is_empty() {
        std::io::copy(&mut &f, &mut out)?;
        return Ok(());
    }
    let opened = Decryptor::new(f).and_then(|d| d.decrypt_stream(&ids, &mut out, None));
    match opened {
        Ok(_) => Ok(()),
        Err(hyperseal::Error::NoIdentityMatched) => {
            placeholder(&mut out, "sealed to other recipients (no identity of this repository opens it)")
        }
        Err(e) => placeholder(&mut out, &format!("cannot open: {e}")),
    }
}

/// The line that stands for an age file's plaintext in a diff.
fn placeholder(out: &mut impl Write, why: &str) -> Result<()> {
    writeln!(out, "[hyperseal: {why}]")?;
    Ok(())
}

/// Whether git runs this textconv for `git commit`: its verbose diff goes into the commit
/// message's file. `git commit` exports the author's date for its hooks before it writes that
/// diff (git's `prepare_to_commit`); `git diff`, `log` and `show` do not. Someone who sets
/// `GIT_AUTHOR_DATE` in their shell sees placeholders in every diff: the safe side.
fn under_git_commit() -> bool {
    std::env::var_os("GIT_AUTHOR_DATE").is_some()
}
