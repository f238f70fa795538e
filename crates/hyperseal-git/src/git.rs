//! git run as a peer: the program, the folder it runs in and the longest it may take are the
//! caller's to give (nothing here reads the environment), and every run ends by that deadline,
//! git stopped if it has not. A failing git is reported with the first line it printed, in a
//! [`GitError`] the frontend words for its users.
//!
//! No thread of this crate's own: on Unix one `poll` serves git's input and both its outputs
//! while it watches the clock; elsewhere the core's executor serves the input and the error
//! output (`hyperseal::exec::start`) while this thread reads the output.

use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How to run git: which program, in which folder, for how long at most.
#[derive(Clone, Debug)]
pub struct Git {
    program: OsString,
    deadline: Duration,
    dir: Option<PathBuf>,
}

/// Why a git run gave no output. Its text holds git's command name and first line of error
/// output, never the input given to git.
#[derive(Debug)]
pub enum GitError {
    /// git could not be started (not installed, not on the search path).
    Start(io::Error),
    /// Waiting for git failed.
    Wait(io::Error),
    /// git's output could not be read.
    Output(io::Error),
    /// git ran past the deadline and was stopped.
    TimedOut { command: String, deadline: Duration },
    /// git ended with a failure; `message` is the first line it printed.
    Failed { command: String, message: String },
    /// A work-tree file could not be removed for git to write it again.
    Replace { path: String, source: io::Error },
}

impl fmt::Display for GitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GitError::Start(e) => write!(f, "cannot run git: {e}"),
            GitError::Wait(_) => f.write_str("cannot run git"),
            GitError::Output(_) => f.write_str("cannot read git's output"),
            GitError::TimedOut { command, deadline } => write!(
                f,
                "git {command} did not finish within {} minutes and was stopped",
                deadline.as_secs() / 60
            ),
            GitError::Failed { command, message } => write!(f, "git {command} failed: {message}"),
            GitError::Replace { path, .. } => write!(f, "cannot replace {path}"),
        }
    }
}

impl std::error::Error for GitError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GitError::Wait(e) | GitError::Output(e) | GitError::Replace { source: e, .. } => Some(e),
            _ => None,
        }
    }
}

impl From<GitError> for io::Error {
    fn from(e: GitError) -> io::Error {
        match e {
            GitError::Start(e) | GitError::Wait(e) | GitError::Output(e) => e,
            GitError::Replace { path, source } => {
                io::Error::new(source.kind(), format!("cannot replace {path}: {source}"))
            }
            other => io::Error::other(other.to_string()),
        }
    }
}

impl Git {
    /// `program` (found on the search path as the OS finds programs), run in this process's
    /// folder, each run stopped after `deadline`.
    pub fn new(program: impl Into<OsString>, deadline: Duration) -> Git {
        Git { program: program.into(), deadline, dir: None }
    }

    /// The same git, run in `dir`.
    pub fn in_dir(&self, dir: &Path) -> Git {
        Git { dir: Some(dir.to_path_buf()), ..self.clone() }
    }

    /// The longest one run may take.
    pub fn deadline(&self) -> Duration {
        self.deadline
    }

    /// A command for git with these settings and no arguments, for a caller that runs it
    /// itself (its output on the terminal, say); [`wait_until`] bounds its wait.
    pub fn command(&self) -> Command {
        let mut c = Command::new(&self.program);
        if let Some(dir) = &self.dir {
            c.current_dir(dir);
        }
        c
    }

    /// Runs `git ARGS` (with `stdin` on its input) and returns its standard output.
    pub fn run(&self, args: &[&str], stdin: Option<&[u8]>) -> Result<Vec<u8>, GitError> {
        let mut c = self.command();
        c.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
        c.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
        let mut child = c.spawn().map_err(GitError::Start)?;
        let deadline = Instant::now() + self.deadline;
        let command = || args.first().unwrap_or(&"").to_string();
        let (out, err) = match exchange(&mut child, stdin, deadline) {
            Ok(both) => both,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(match e.kind() {
                    io::ErrorKind::TimedOut => {
                        GitError::TimedOut { command: command(), deadline: self.deadline }
                    }
                    _ => GitError::Output(e),
                });
            }
        };
        let Some(status) = wait_until(&mut child, deadline).map_err(GitError::Wait)? else {
            return Err(GitError::TimedOut { command: command(), deadline: self.deadline });
        };
        if !status.success() {
            let why = String::from_utf8_lossy(&err);
            let line = why.lines().find(|l| !l.trim().is_empty()).unwrap_or("no message");
            return Err(GitError::Failed { command: command(), message: line.trim().to_string() });
        }
        Ok(out)
    }

    /// `git ARGS` as text, trimmed.
    pub fn text(&self, args: &[&str]) -> Result<String, GitError> {
        Ok(String::from_utf8_lossy(&self.run(args, None)?).trim().to_string())
    }

    /// The work tree's root; an error outside a work tree.
    pub fn work_tree(&self) -> Result<PathBuf, GitError> {
        Ok(PathBuf::from(self.text(&["rev-parse", "--show-toplevel"])?))
    }

    /// An absolute path under the repository's git folder (per work tree).
    pub fn git_path(&self, name: &str) -> Result<PathBuf, GitError> {
        self.absolute(self.text(&["rev-parse", "--git-path", name])?)
    }

    /// A path git printed, made absolute: git prints paths relative to the folder it ran in.
    pub fn absolute(&self, p: impl Into<PathBuf>) -> Result<PathBuf, GitError> {
        let p = p.into();
        if p.is_absolute() {
            return Ok(p);
        }
        let here = std::env::current_dir().map_err(GitError::Output)?;
        Ok(match &self.dir {
            Some(dir) => here.join(dir).join(p),
            None => here.join(p),
        })
    }
}

/// Waits for `child` until `deadline`; kills and reaps it then (`None`). Polls, from every
/// millisecond up to every 50: std has no wait with a timeout, and most git runs end in a few
/// milliseconds.
pub fn wait_until(child: &mut Child, deadline: Instant) -> io::Result<Option<ExitStatus>> {
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

/// Gives git `stdin` while reading both its outputs to their ends; a `TimedOut` error at
/// `deadline`. git answers while it reads (`check-attr --stdin`), so neither side may wait on
/// a full pipe: one `poll` over all three, each pipe served as it is ready.
#[cfg(unix)]
fn exchange(child: &mut Child, stdin: Option<&[u8]>, deadline: Instant) -> io::Result<(Vec<u8>, Vec<u8>)> {
    use std::io::Write;
    use std::os::fd::AsFd;

    let mut input = match (stdin, child.stdin.take()) {
        (Some(data), Some(pipe)) if !data.is_empty() => {
            crate::sys_pipe::set_nonblocking(pipe.as_fd())?;
            Some((pipe, data))
        }
        // Dropped: git sees its input end at once.
        _ => None,
    };
    let (mut stdout, mut stderr) = (child.stdout.take(), child.stderr.take());
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut buf = vec![0u8; 64 << 10];
    while input.is_some() || stdout.is_some() || stderr.is_some() {
        let fds = [
            input.as_ref().map(|(p, _)| p.as_fd()),
            stdout.as_ref().map(|p| p.as_fd()),
            stderr.as_ref().map(|p| p.as_fd()),
        ];
        let ready = crate::sys_pipe::wait_ready(fds, deadline)?;
        if ready[0] {
            let (pipe, data) = input.as_mut().expect("polled");
            match pipe.write(data) {
                Ok(n) => *data = &data[n..],
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => {}
                // git stopped reading (it failed, or needs no more): its status says which.
                Err(_) => *data = &[],
            }
            if data.is_empty() {
                input = None;
            }
        }
        if ready[1] {
            pump(&mut stdout, &mut out, &mut buf)?;
        }
        if ready[2] {
            pump(&mut stderr, &mut err, &mut buf)?;
        }
    }
    Ok((out, err))
}

/// One read from a pipe `poll` found ready into `into`; the pipe is dropped at its end.
#[cfg(unix)]
fn pump<R: io::Read>(pipe: &mut Option<R>, into: &mut Vec<u8>, buf: &mut [u8]) -> io::Result<()> {
    let Some(p) = pipe.as_mut() else { return Ok(()) };
    match p.read(buf) {
        Ok(0) => *pipe = None,
        Ok(n) => into.extend_from_slice(&buf[..n]),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
        Err(e) => return Err(e),
    }
    Ok(())
}

/// Gives git `stdin` and reads its error output on the core's executor while this thread reads
/// its output. Reads here block: the deadline bounds the wait for git to end once its output
/// closed. With one core there is no helper to take the input: it goes in first, which holds
/// as long as git reads all of it before its answer fills the pipe.
#[cfg(not(unix))]
fn exchange(child: &mut Child, stdin: Option<&[u8]>, _deadline: Instant) -> io::Result<(Vec<u8>, Vec<u8>)> {
    use std::io::{Read, Write};
    use std::sync::{Arc, Mutex};

    type Side = Mutex<Option<(Option<std::process::ChildStdin>, Vec<u8>, Option<std::process::ChildStderr>)>>;
    let mut input = child.stdin.take().filter(|_| stdin.is_some());
    if hyperseal::available_threads() < 2 {
        if let Some(mut pipe) = input.take() {
            // A git that stopped reading tells why in its status.
            let _ = pipe.write_all(stdin.unwrap_or_default());
        }
    }
    // Copied only for a helper to give: the job outlives no borrow.
    let data = input.as_ref().map_or_else(Vec::new, |_| stdin.unwrap_or_default().to_vec());
    let side: Arc<Side> = Arc::new(Mutex::new(Some((input.take(), data, child.stderr.take()))));
    let err: Arc<Mutex<io::Result<Vec<u8>>>> = Arc::new(Mutex::new(Ok(Vec::new())));
    let (taken, into) = (Arc::clone(&side), Arc::clone(&err));
    // Any number of copies may run (the job's contract): the first takes the pipes.
    let body = move || {
        let Some((input, data, stderr)) = taken.lock().unwrap_or_else(|p| p.into_inner()).take() else {
            return;
        };
        if let Some(mut input) = input {
            let _ = input.write_all(&data);
        }
        let mut text = Vec::new();
        let got = stderr.map_or(Ok(0), |mut e| e.read_to_end(&mut text)).map(|_| text);
        *into.lock().unwrap_or_else(|p| p.into_inner()) = got;
    };
    let job = hyperseal::exec::start(2, Arc::new(body));
    let mut out = Vec::new();
    let read = child.stdout.take().map_or(Ok(0), |mut o| o.read_to_end(&mut out));
    job.join();
    read?;
    let err = std::mem::replace(&mut *err.lock().unwrap_or_else(|p| p.into_inner()), Ok(Vec::new()))?;
    Ok((out, err))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git() -> Git {
        Git::new("git", Duration::from_secs(60))
    }

    #[test]
    fn input_larger_than_a_pipe_goes_in_while_the_answer_comes_out() {
        let dir = tempfile::tempdir().unwrap();
        let git = git().in_dir(dir.path());
        git.run(&["init", "-q"], None).unwrap();
        // check-attr answers each path as it reads it: 4 MiB each way through 64 KiB pipes.
        let paths: Vec<u8> = (0..200_000).flat_map(|i| format!("dir/file-{i:07}\0").into_bytes()).collect();
        let out = git.run(&["check-attr", "-z", "--stdin", "filter"], Some(&paths)).unwrap();
        assert_eq!(out.split(|b| *b == 0).filter(|f| f == b"unspecified").count(), 200_000);
    }

    #[test]
    fn a_failure_names_the_command_and_git_s_first_line() {
        let dir = tempfile::tempdir().unwrap();
        let e = git().in_dir(dir.path()).run(&["rev-parse", "--show-toplevel"], None).unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("git rev-parse failed: ") && text.contains("not a git repository"),
            "{text}"
        );
        let missing =
            Git::new("/nonexistent/git", Duration::from_secs(1)).run(&["version"], None).unwrap_err();
        assert!(matches!(missing, GitError::Start(_)), "{missing:?}");
    }

    #[cfg(unix)]
    #[test]
    fn a_peer_past_its_deadline_is_stopped() {
        let slow = Git::new("sleep", Duration::from_millis(200));
        let started = Instant::now();
        let e = slow.run(&["30"], None).unwrap_err();
        assert!(matches!(e, GitError::TimedOut { .. }), "{e:?}");
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
