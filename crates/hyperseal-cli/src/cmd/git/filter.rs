//! The programs git runs: the long-running filter (`hyperseal git filter-process`, one per git
//! command) and the diff textconv (`hyperseal git textconv FILE`). The library decides every
//! clean and smudge; this file gives it the repository: the identities `unlock` recorded, the
//! recipients parsed as `-R` reads them, and the blobs git stored, through one `git cat-file
//! --batch` per filter process.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;
use hyperseal::recipient::{Identity, Recipient};
use hyperseal::Decryptor;
use hyperseal_git::{Filter, FilterOutcome, Repo, Spool, AGE_INTRO};

use super::repo::{self, git};

/// `hyperseal git filter-process`: serves git on standard input and output until git is done.
pub fn filter_process() -> Result<()> {
    #[cfg(unix)]
    crate::sys::ignore_sigpipe();
    keep_heap();
    let root = repo::work_tree()?;
    let spool = repo::git_path("hyperseal-spool")?;
    let index = match std::env::var_os("GIT_INDEX_FILE") {
        Some(f) => PathBuf::from(f),
        None => repo::git_path("index")?,
    };
    let mut filter = Filter::new(Stored::new(index), &root, &spool);
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

/// The repository as the filter sees it.
struct Stored {
    identities: Option<Vec<Box<dyn Identity>>>,
    index_file: PathBuf,
    /// The index file's size and modification time when `index` was read.
    index_stamp: Option<(u64, Option<std::time::SystemTime>)>,
    index: Option<HashMap<String, String>>,
    head: Option<HashMap<String, String>>,
    cat: Option<CatFile>,
}

impl Stored {
    fn new(index_file: PathBuf) -> Self {
        Stored { identities: None, index_file, index_stamp: None, index: None, head: None, cat: None }
    }

    /// Forgets the index and HEAD read earlier when git wrote a new index since: one git
    /// command (a rebase, a checkout) moves the index several times, and comparing with an
    /// old blob would seal unchanged plaintext again. `git add` writes its index only at the
    /// end, so it reads the index once.
    fn refresh(&mut self) {
        let stamp = std::fs::metadata(&self.index_file).ok().map(|m| (m.len(), m.modified().ok()));
        if stamp != self.index_stamp {
            self.index_stamp = stamp;
            self.index = None;
            self.head = None;
        }
    }
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
        let io = |e: anyhow::Error| std::io::Error::other(crate::errors::message(&e));
        // The index first: `git add` compares with what is staged, and `stash` or `commit -a`
        // point GIT_INDEX_FILE (inherited from git) at their own index. HEAD for a path that
        // was removed from the index and is added again.
        self.refresh();
        if self.index.is_none() {
            self.index = Some(tree(&git(&["ls-files", "-s", "-z"], None).map_err(io)?, true));
        }
        let mut oid = self.index.as_ref().and_then(|m| m.get(path)).cloned();
        if oid.is_none() {
            if self.head.is_none() {
                let listed = git(&["ls-tree", "-r", "-z", "HEAD"], None).unwrap_or_default();
                self.head = Some(tree(&listed, false));
            }
            oid = self.head.as_ref().and_then(|m| m.get(path)).cloned();
        }
        let Some(oid) = oid else { return Ok(false) };
        if self.cat.is_none() {
            self.cat = Some(CatFile::start()?);
        }
        self.cat.as_mut().expect("started").blob(&oid, into)
    }
}

/// Path → object id from `ls-files -s -z` (`MODE OID STAGE\tPATH`, stage 0 only) or from
/// `ls-tree -r -z` (`MODE TYPE OID\tPATH`, blobs only).
pub(super) fn tree(listed: &[u8], index: bool) -> HashMap<String, String> {
    let mut map = HashMap::new();
    for entry in listed.split(|b| *b == 0) {
        let text = String::from_utf8_lossy(entry);
        let Some((meta, path)) = text.split_once('\t') else { continue };
        let f: Vec<&str> = meta.split(' ').collect();
        let oid = match (index, f.as_slice()) {
            (true, [_, oid, "0"]) => oid,
            (false, [_, "blob", oid]) => oid,
            _ => continue,
        };
        map.insert(path.to_string(), oid.to_string());
    }
    map
}

/// How long one read from `git cat-file` may wait. git answers from its object store at once;
/// the longest honest wait is building a large deltified blob before its first byte. A child
/// that says nothing for this long is killed, and the filter fails that file instead of
/// hanging the git command that runs it.
const CAT_READ_DEADLINE: Duration = Duration::from_secs(120);

/// One `git cat-file --batch` for the whole filter process, every read from it under
/// [`CAT_READ_DEADLINE`].
pub(super) struct CatFile {
    child: Arc<Mutex<Child>>,
    watch: Arc<Watch>,
    input: ChildStdin,
    output: BufReader<Watched>,
}

/// The deadline of the read in progress, shared with the thread that kills the child when it
/// passes.
struct Watch {
    state: Mutex<WatchState>,
    wake: Condvar,
}

#[derive(Default)]
struct WatchState {
    deadline: Option<Instant>,
    fired: bool,
    closed: bool,
}

impl Watch {
    /// Changes the state without waking the watcher: it never sleeps past one deadline's
    /// length, so a deadline set now is seen in time, and a read costs no thread switch.
    fn set(&self, f: impl FnOnce(&mut WatchState)) {
        f(&mut self.state.lock().unwrap_or_else(|e| e.into_inner()));
    }

    fn close(&self) {
        self.set(|s| s.closed = true);
        self.wake.notify_all();
    }

    /// Waits for a deadline to pass (then kills `child`) until the reader closes.
    fn run(&self, child: &Mutex<Child>) {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if g.closed {
                return;
            }
            let Some(t) = g.deadline else {
                g = self.wake.wait_timeout(g, CAT_READ_DEADLINE).unwrap_or_else(|e| e.into_inner()).0;
                continue;
            };
            let now = Instant::now();
            if now >= t {
                g.fired = true;
                drop(g);
                let _ = child.lock().unwrap_or_else(|e| e.into_inner()).kill();
                return;
            }
            g = self.wake.wait_timeout(g, t - now).unwrap_or_else(|e| e.into_inner()).0;
        }
    }
}

/// The child's output, each read armed with the deadline.
struct Watched {
    inner: ChildStdout,
    watch: Arc<Watch>,
}

impl Read for Watched {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.watch.set(|s| s.deadline = Some(Instant::now() + CAT_READ_DEADLINE));
        let got = self.inner.read(buf);
        let mut fired = false;
        self.watch.set(|s| {
            s.deadline = None;
            fired = s.fired;
        });
        if fired {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("git cat-file did not answer within {} s", CAT_READ_DEADLINE.as_secs()),
            ));
        }
        got
    }
}

impl CatFile {
    pub(super) fn start() -> std::io::Result<Self> {
        let mut child = Command::new("git")
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let input = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let child = Arc::new(Mutex::new(child));
        let watch = Arc::new(Watch { state: Mutex::new(WatchState::default()), wake: Condvar::new() });
        let (c, w) = (Arc::clone(&child), Arc::clone(&watch));
        std::thread::spawn(move || w.run(&c));
        let output = BufReader::new(Watched { inner: stdout, watch: Arc::clone(&watch) });
        Ok(CatFile { child, watch, input, output })
    }

    /// Copies the blob `oid` into `into`; `false` if git does not have it.
    pub(super) fn blob(&mut self, oid: &str, into: &mut Spool) -> std::io::Result<bool> {
        writeln!(self.input, "{oid}")?;
        self.input.flush()?;
        let mut line = String::new();
        (&mut self.output).take(256).read_line(&mut line)?;
        let f: Vec<&str> = line.trim_end().split(' ').collect();
        let size = match f.as_slice() {
            [_, "blob", size] => size.parse::<u64>().map_err(std::io::Error::other)?,
            [_, "missing"] => return Ok(false),
            _ => return Err(std::io::Error::other("git cat-file answered something unexpected")),
        };
        let copied = std::io::copy(&mut (&mut self.output).take(size), into)?;
        let mut newline = [0u8; 1];
        self.output.read_exact(&mut newline)?;
        if copied != size {
            return Err(std::io::Error::other("git cat-file's blob was cut short"));
        }
        Ok(true)
    }
}

impl Drop for CatFile {
    fn drop(&mut self) {
        self.watch.close();
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// The identities `unlock` recorded: its identity files, then the agent; none while locked.
pub(super) fn unlocked() -> Result<Vec<Box<dyn Identity>>> {
    let (files, agent) = repo::recorded_identities();
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
