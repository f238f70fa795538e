//! The filter process's standard input on Unix, git's pipe, read without blocking: an
//! [`Input`] that tells whether git's next request has arrived, so that [`super::serve`] works
//! between requests, and that then waits for it by checking the pipe for a while before it
//! sleeps.
//!
//! Why not sleep in `read`: git waits for each file's answer before it sends the next, so a
//! `git add` of 10,000 small files is 10,000 round trips, and a filter asleep in `read` is
//! woken for every one. On a 2-vCPU virtual machine (AMD EPYC, git 2.39) that wake-up was the
//! largest cost of any filter: 10,000 files of 1 KiB took 0.78 s to add and commit with no
//! filter, 1.46–1.55 s through a filter that returns each file unchanged and sleeps in `read`,
//! and 1.10–1.22 s through the same filter checking the pipe without sleeping.
//!
//! The checks yield the CPU between tries, so git runs first wherever both share one CPU, and
//! they stop after the caller's `spin`: a git command busy elsewhere (checking out unmarked
//! files, writing a tree) costs at most that much CPU per request before the filter sleeps.

use std::io::{self, BufRead, Read};
use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

use super::process::Input;
use crate::sys_pipe::Pipe;

/// Read size: git sends at most 65,520 bytes per packet.
const BUF: usize = 64 << 10;

/// How long to check for git's next request before sleeping, as the CLI's filter does: git's
/// own work between two small files took 100–150 µs on the machine above, and twice that
/// catches nearly all (in a first version of this reader, `git add` of the 10,000 files was
/// about 5% slower with 100 µs, and no faster with 1,000 µs).
pub const SPIN: Duration = Duration::from_micros(300);

/// A pipe's read end (git's, for the filter process), non-blocking until dropped.
pub struct GitPipe {
    pipe: Pipe,
    /// How long [`Input::wait`] checks before it sleeps.
    spin: Duration,
    /// Plaintext passes through on its way to being sealed: wiped when dropped.
    buf: Box<[u8]>,
    at: usize,
    end: usize,
    closed: bool,
}

impl GitPipe {
    /// Standard input, where it is a pipe; `None` otherwise (a terminal or a file: read it as
    /// it is, through [`super::Blocking`]). `spin`: how long to check for git's next request
    /// before sleeping (zero: sleep at once).
    pub fn stdin(spin: Duration) -> Option<GitPipe> {
        GitPipe::new(io::stdin().as_fd().try_clone_to_owned().ok()?, spin)
    }

    /// The read end `fd`, where it is a pipe. Its status flags, shared with every duplicate of
    /// it, are restored when this is dropped.
    pub fn new(fd: OwnedFd, spin: Duration) -> Option<GitPipe> {
        let pipe = Pipe::new(fd)?;
        Some(GitPipe { pipe, spin, buf: vec![0; BUF].into_boxed_slice(), at: 0, end: 0, closed: false })
    }
}

impl Input for GitPipe {
    fn tells_ready(&self) -> bool {
        true
    }

    fn ready(&mut self) -> io::Result<bool> {
        if self.at == self.end && !self.closed {
            match self.pipe.read_now(&mut self.buf)? {
                Some(0) => self.closed = true,
                Some(n) => (self.at, self.end) = (0, n),
                None => {}
            }
        }
        Ok(self.at < self.end || self.closed)
    }

    fn wait(&mut self) -> io::Result<()> {
        if self.ready()? {
            return Ok(());
        }
        let start = Instant::now();
        while !self.ready()? {
            if start.elapsed() < self.spin {
                Pipe::yield_cpu();
            } else {
                self.pipe.sleep_until_readable()?;
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
        let n = out.len().min(self.fill_buf()?.len());
        out[..n].copy_from_slice(&self.buf[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Read through its own buffer: a reader that wants lines or the buffer's end needs no second
/// buffer (and no second copy of every byte) on top.
impl BufRead for GitPipe {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.wait()?;
        Ok(&self.buf[self.at..self.end])
    }

    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.end);
    }
}

impl Drop for GitPipe {
    fn drop(&mut self) {
        hyperseal::wipe(&mut self.buf);
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, Read, Write};
    use std::os::fd::OwnedFd;

    use super::*;

    #[test]
    fn it_tells_whether_git_has_written_waits_past_the_spin_and_leaves_the_pipe_as_it_was() {
        let (read, mut write) = std::io::pipe().unwrap();
        let read = OwnedFd::from(read);
        let twin = read.try_clone().unwrap();
        let mut p = GitPipe::new(read, SPIN).unwrap();
        assert!(crate::sys_pipe::nonblocking(&twin));
        assert!(!p.ready().unwrap(), "nothing written yet");
        write.write_all(b"0009hello").unwrap();
        assert!(p.ready().unwrap());
        assert_eq!(p.fill_buf().unwrap(), b"0009hello", "read through its own buffer");
        p.consume(4);
        let mut got = [0u8; 5];
        p.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"hello");
        assert!(!p.ready().unwrap(), "all of it read");
        // Written long after the spin gave up: the wait sleeps, and wakes for it.
        let late = std::thread::spawn(move || {
            std::thread::sleep(SPIN * 20);
            write.write_all(b"0000").unwrap();
            // Dropped here: the end of git's input.
        });
        p.wait().unwrap();
        let mut rest = Vec::new();
        p.read_to_end(&mut rest).unwrap();
        late.join().unwrap();
        assert_eq!(rest, b"0000");
        assert!(p.ready().unwrap(), "the end is ready too");
        drop(p);
        assert!(!crate::sys_pipe::nonblocking(&twin), "the pipe's flags are restored");
    }

    #[test]
    fn a_file_is_read_as_it_is() {
        let f = tempfile::tempfile().unwrap();
        assert!(GitPipe::new(OwnedFd::from(f), SPIN).is_none());
    }
}
