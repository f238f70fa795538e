//! Pipes served without blocking: the git filter's input (`pipe.rs`), and the pipes to the git
//! this crate runs (`git.rs`, `cat_file.rs`), each wait bounded by a deadline. The system calls,
//! without safe wrappers in std, each `unsafe` block with why it holds.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::time::Instant;

/// The read end of a pipe in non-blocking mode, its status flags restored when dropped.
pub(crate) struct Pipe {
    fd: OwnedFd,
    flags: libc::c_int,
}

impl Pipe {
    /// `fd` made non-blocking; `None` where it is not a pipe (a terminal or a file, whose
    /// flags are left alone) or the flags cannot be set. The flags belong to the open pipe,
    /// shared with every duplicate of `fd`.
    pub(crate) fn new(fd: OwnedFd) -> Option<Pipe> {
        let raw = fd.as_raw_fd();
        // SAFETY: fstat into a zeroed stat and fcntl, both on a descriptor this owns.
        unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(raw, &mut st) != 0 || st.st_mode & libc::S_IFMT != libc::S_IFIFO {
                return None;
            }
            let flags = libc::fcntl(raw, libc::F_GETFL);
            if flags < 0 || libc::fcntl(raw, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
                return None;
            }
            Some(Pipe { fd, flags })
        }
    }

    /// What the pipe holds now, into `buf`: `Some(0)` at its end, `None` when nothing has been
    /// written yet.
    pub(crate) fn read_now(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        loop {
            // SAFETY: reading into `buf`, within its length.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if let Ok(n) = usize::try_from(n) {
                return Ok(Some(n));
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => {}
                io::ErrorKind::WouldBlock => return Ok(None),
                _ => return Err(e),
            }
        }
    }

    /// Sleeps until a read would return: something written, or the writer gone.
    pub(crate) fn sleep_until_readable(&self) -> io::Result<()> {
        let mut p = libc::pollfd { fd: self.fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd, no deadline (the caller's peer ends by closing the pipe,
        // which wakes this).
        if unsafe { libc::poll(&mut p, 1, -1) } < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        Ok(())
    }

    /// Lets another runnable thread on this CPU go first.
    pub(crate) fn yield_cpu() {
        // SAFETY: no arguments, no memory.
        unsafe { libc::sched_yield() };
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        // SAFETY: fcntl on the owned descriptor, with the flags it had.
        unsafe { libc::fcntl(self.fd.as_raw_fd(), libc::F_SETFL, self.flags) };
    }
}

/// Puts `fd`'s open file in non-blocking mode (a pipe to a child: its file, not the child's).
pub(crate) fn set_nonblocking(fd: BorrowedFd<'_>) -> io::Result<()> {
    let raw = fd.as_raw_fd();
    // SAFETY: fcntl on a descriptor that is open for the borrow's length.
    let ok = unsafe {
        let flags = libc::fcntl(raw, libc::F_GETFL);
        flags >= 0 && libc::fcntl(raw, libc::F_SETFL, flags | libc::O_NONBLOCK) >= 0
    };
    if ok {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Waits until one of `fds` is ready (the first for writing, the others for reading; a closed
/// peer counts as ready: the call then says so) and says which; a `TimedOut` error once
/// `deadline` passes first.
pub(crate) fn wait_ready<const N: usize>(
    fds: [Option<BorrowedFd<'_>>; N],
    deadline: Instant,
) -> io::Result<[bool; N]> {
    let mut polled: Vec<libc::pollfd> = fds
        .iter()
        .enumerate()
        .map(|(i, fd)| libc::pollfd {
            // A negative descriptor is skipped by poll.
            fd: fd.map_or(-1, |f| f.as_raw_fd()),
            events: if i == 0 { libc::POLLOUT } else { libc::POLLIN },
            revents: 0,
        })
        .collect();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "git did not answer in time"));
        }
        // Rounded up: a wait cut to 0 ms would spin until the deadline.
        let ms = left.as_millis().saturating_add(1).min(libc::c_int::MAX as u128) as libc::c_int;
        // SAFETY: `polled` is a valid array of its length, alive for the call.
        let n = unsafe { libc::poll(polled.as_mut_ptr(), polled.len() as libc::nfds_t, ms) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n > 0 {
            let mut ready = [false; N];
            for (r, p) in ready.iter_mut().zip(&polled) {
                *r = p.fd >= 0 && p.revents != 0;
            }
            return Ok(ready);
        }
    }
}

/// Whether `fd`'s open file is in non-blocking mode (for tests).
#[cfg(test)]
pub(crate) fn nonblocking(fd: &OwnedFd) -> bool {
    // SAFETY: fcntl on an open descriptor.
    unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) & libc::O_NONBLOCK != 0 }
}
