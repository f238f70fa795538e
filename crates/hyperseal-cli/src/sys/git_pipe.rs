//! The git filter process's standard input on Unix: git's pipe, read without blocking, so that
//! the filter works between git's requests (`hyperseal::git::Input`) and then waits for the
//! next one by checking the pipe for a while before it sleeps.
//!
//! Why not just sleep in `read`: git waits for each file's answer before it sends the next, so
//! a `git add` of 10,000 small files is 10,000 round trips, and a filter asleep in `read` must
//! be woken for every one. On a 2-vCPU virtual machine (AMD EPYC, git 2.39) that wake-up was
//! the largest cost of any filter: 10,000 files of 1 KiB took 0.78 s to add and commit with no
//! filter, 1.47–1.55 s through a filter that returns each file unchanged and sleeps in `read`,
//! and 1.10–1.22 s through the same filter checking the pipe without sleeping. hyperseal's
//! filter, which seals while git stores the last answer, went from 1.88–1.92 to 1.62–1.67 s
//! with X25519 recipients and from 2.30–2.46 to 2.06–2.10 s with post-quantum ones.
//!
//! The check yields the CPU between tries (`sched_yield`), so git runs first wherever both
//! share one CPU (with every process on one CPU the add was 2.84 s against 2.96 s sleeping,
//! and with two other busy processes on the machine 3.00–3.09 s against 4.0–4.9 s), and it
//! gives up after [`SPIN`]: a git command that is busy elsewhere (checking out unmarked files,
//! writing a tree) costs at most that much CPU per request before the filter sleeps.

#![allow(unsafe_code)] // fcntl, read, poll and sched_yield on standard input.

use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

use hyperseal::git::Input;

/// How long the filter checks for git's next request before it sleeps. git's own work between
/// two small files took 100–150 µs in the measurements above; twice that catches nearly all.
const SPIN: Duration = Duration::from_micros(300);

/// Read size: git sends at most 65,520 bytes per packet.
const BUF: usize = 64 << 10;

/// Standard input, a pipe, in non-blocking mode until dropped.
pub struct GitPipe {
    fd: OwnedFd,
    /// The status flags it had, restored on drop.
    flags: libc::c_int,
    buf: Box<[u8]>,
    at: usize,
    end: usize,
    closed: bool,
}

impl GitPipe {
    /// Standard input, where it is a pipe that can be made non-blocking; `None` otherwise (a
    /// terminal or a file: read as it is).
    pub fn stdin() -> Option<GitPipe> {
        GitPipe::new(io::stdin().as_fd().try_clone_to_owned().ok()?)
    }

    /// `fd` (the read end of a pipe; its status flags are those of the open pipe, shared with
    /// every duplicate of it), or `None` where it is not a pipe or cannot be made non-blocking.
    fn new(fd: OwnedFd) -> Option<GitPipe> {
        let raw = fd.as_raw_fd();
        // SAFETY: fstat into a zeroed stat; fcntl on a descriptor this owns.
        unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(raw, &mut st) != 0 || st.st_mode & libc::S_IFMT != libc::S_IFIFO {
                return None;
            }
            let flags = libc::fcntl(raw, libc::F_GETFL);
            if flags < 0 || libc::fcntl(raw, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
                return None;
            }
            Some(GitPipe { fd, flags, buf: vec![0; BUF].into_boxed_slice(), at: 0, end: 0, closed: false })
        }
    }

    /// Reads what the pipe holds now, if the buffer is empty.
    fn fill_now(&mut self) -> io::Result<()> {
        while self.at == self.end && !self.closed {
            // SAFETY: reading into the owned buffer, within its length.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), self.buf.as_mut_ptr().cast(), self.buf.len()) };
            match n {
                0 => self.closed = true,
                n if n > 0 => (self.at, self.end) = (0, n as usize),
                _ => {
                    let e = io::Error::last_os_error();
                    match e.kind() {
                        io::ErrorKind::Interrupted => {}
                        io::ErrorKind::WouldBlock => return Ok(()),
                        _ => return Err(e),
                    }
                }
            }
        }
        Ok(())
    }

    fn sleep_until_readable(&self) -> io::Result<()> {
        let mut p = libc::pollfd { fd: self.fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd. No deadline: git, the parent, ends the conversation by
        // closing the pipe, which wakes this (POLLHUP).
        if unsafe { libc::poll(&mut p, 1, -1) } < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        Ok(())
    }
}

impl Input for GitPipe {
    fn tells_ready(&self) -> bool {
        true
    }

    fn ready(&mut self) -> io::Result<bool> {
        self.fill_now()?;
        Ok(self.at < self.end || self.closed)
    }

    fn wait(&mut self) -> io::Result<()> {
        let start = Instant::now();
        while !self.ready()? {
            if start.elapsed() < SPIN {
                // SAFETY: no arguments; lets a runnable git on this CPU go first.
                unsafe { libc::sched_yield() };
            } else {
                self.sleep_until_readable()?;
            }
        }
        Ok(())
    }
}

impl Read for GitPipe {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        self.wait()?;
        let n = out.len().min(self.end - self.at);
        out[..n].copy_from_slice(&self.buf[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

impl Drop for GitPipe {
    fn drop(&mut self) {
        // Plaintext passes through the buffer on its way to being sealed.
        hyperseal::wipe(&mut self.buf);
        // SAFETY: fcntl on the owned descriptor; the flags it had before.
        unsafe { libc::fcntl(self.fd.as_raw_fd(), libc::F_SETFL, self.flags) };
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    use super::*;

    fn pipe() -> (OwnedFd, std::fs::File) {
        let mut fds = [0; 2];
        // SAFETY: pipe fills two descriptors, each then owned once.
        unsafe {
            assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
            (OwnedFd::from_raw_fd(fds[0]), std::fs::File::from(OwnedFd::from_raw_fd(fds[1])))
        }
    }

    fn nonblocking(fd: &OwnedFd) -> bool {
        // SAFETY: fcntl on an open descriptor.
        unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) & libc::O_NONBLOCK != 0 }
    }

    #[test]
    fn it_tells_whether_git_has_written_waits_past_the_spin_and_leaves_the_pipe_as_it_was() {
        let (read, mut write) = pipe();
        let twin = read.try_clone().unwrap();
        let mut p = GitPipe::new(read).unwrap();
        assert!(nonblocking(&twin));
        assert!(!p.ready().unwrap(), "nothing written yet");
        write.write_all(b"0009hello").unwrap();
        assert!(p.ready().unwrap());
        let mut got = [0u8; 9];
        p.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"0009hello");
        assert!(!p.ready().unwrap(), "all of it read");
        // Written long after the spin gave up: the wait sleeps, and wakes for it.
        let late = std::thread::spawn(move || {
            std::thread::sleep(SPIN * 20);
            write.write_all(b"0000").unwrap();
            // Closed here: the end of git's input.
        });
        p.wait().unwrap();
        let mut rest = Vec::new();
        p.read_to_end(&mut rest).unwrap();
        late.join().unwrap();
        assert_eq!(rest, b"0000");
        assert!(p.ready().unwrap(), "the end is ready too");
        drop(p);
        assert!(!nonblocking(&twin), "the pipe's flags are restored");
    }

    #[test]
    fn a_file_is_read_as_it_is() {
        let f = tempfile::tempfile().unwrap();
        assert!(GitPipe::new(OwnedFd::from(f)).is_none());
    }
}
