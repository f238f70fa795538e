//! The agent's transport, both ends: a Unix socket, or on Windows a named pipe (`pipe.rs`).
//! One connection carries one request and one answer; every read and write is held to a
//! deadline that covers the whole exchange, so a peer that trickles a byte a second gains
//! nothing. The agent process (the CLI's) listens with [`Listener`]; [`AgentIdentity`]
//! connects with [`Conn::connect`].
//!
//! Who is at the other end is the kernel's word, never the peer's: on Unix `SO_PEERCRED`
//! (`getpeereid` on the BSDs), on Windows the user of the process that holds the pipe's other
//! end. Each side checks it: the agent refuses another user's client, and a client refuses a
//! socket or pipe that another user's process listens at (it would be sent keys by `agent add`
//! and headers by every decryption), before it sends a byte.
//!
//! [`AgentIdentity`]: super::AgentIdentity

use std::io;
use std::path::Path;
use std::time::Instant;

#[cfg(unix)]
use crate::sys::peer as os;
/// The real user id of this process: the one user a connection must come from, and the owner
/// the agent's socket directory must have (one definition for the library and the agent).
#[cfg(unix)]
pub use crate::sys::peer::uid;
#[cfg(windows)]
use crate::sys::pipe;

/// One connection to or from the agent.
#[derive(Debug)]
pub struct Conn {
    #[cfg(unix)]
    stream: std::os::unix::net::UnixStream,
    #[cfg(windows)]
    pipe: pipe::Pipe,
}

impl Conn {
    /// Connects to the agent listening at `path` (a socket path; on Windows a pipe name,
    /// `\\.\pipe\…`), waiting for a free pipe instance at most until `deadline`. The process at
    /// the other end must run as this process's user (`PermissionDenied` otherwise), checked
    /// before anything is sent.
    pub fn connect(path: &Path, deadline: Instant) -> io::Result<Conn> {
        #[cfg(unix)]
        {
            let _ = deadline; // a Unix connect to a listening socket does not wait
            let conn = Conn { stream: std::os::unix::net::UnixStream::connect(path)? };
            // Before a byte is sent: whoever listens at a path, a socket another user planted
            // first in a shared directory included, would be handed keys by `agent add` and
            // headers by every decryption.
            match os::peer_uid(&conn.stream)? {
                uid if uid == os::uid() => Ok(conn),
                uid => Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("the process listening there runs as another user (uid {uid}): nothing was sent"),
                )),
            }
        }
        #[cfg(windows)]
        {
            Ok(Conn { pipe: pipe::Pipe::connect(path, deadline)? })
        }
    }

    /// Reads what comes, waiting at most until `deadline` (then `TimedOut`). `Ok(0)`: the peer
    /// closed its end.
    pub fn read_before(&self, buf: &mut [u8], deadline: Instant) -> io::Result<usize> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        #[cfg(unix)]
        {
            self.stream.set_read_timeout(Some(left))?;
            io::Read::read(&mut &self.stream, buf)
        }
        #[cfg(windows)]
        {
            self.pipe.read(buf, Some(deadline))
        }
    }

    /// Writes some of `buf`, waiting at most until `deadline` (then `TimedOut`).
    pub fn write_before(&self, buf: &[u8], deadline: Instant) -> io::Result<usize> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        #[cfg(unix)]
        {
            self.stream.set_write_timeout(Some(left))?;
            io::Write::write(&mut &self.stream, buf)
        }
        #[cfg(windows)]
        {
            self.pipe.write(buf, Some(deadline))
        }
    }

    /// Reads what has already arrived, without waiting: 0 when nothing has.
    pub fn read_arrived(&self, buf: &mut [u8]) -> io::Result<usize> {
        #[cfg(unix)]
        {
            self.stream.set_nonblocking(true)?;
            let mut n = 0;
            let mut result = Ok(());
            while n < buf.len() {
                match io::Read::read(&mut &self.stream, &mut buf[n..]) {
                    Ok(0) => break,
                    Ok(k) => n += k,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            }
            self.stream.set_nonblocking(false)?;
            result.map(|()| n)
        }
        #[cfg(windows)]
        {
            self.pipe.read_arrived(buf)
        }
    }

    /// Ends the connection from any thread: a read or write waiting on it fails at once.
    pub fn close(&self) {
        #[cfg(unix)]
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
        #[cfg(windows)]
        self.pipe.close();
    }

    /// Whether the process at the other end runs as this process's user, by the kernel's word.
    pub fn peer_is_same_user(&self) -> bool {
        #[cfg(unix)]
        {
            os::peer_uid(&self.stream).is_ok_and(|uid| uid == os::uid())
        }
        #[cfg(windows)]
        {
            self.pipe.peer_is_same_user(pipe::End::Client)
        }
    }

    /// The process id at the other end, as the kernel saw it connect (Linux: `SO_PEERCRED`);
    /// `None` where the system does not say. The agent uses it to tell a connection that
    /// `ssh -R` forwards (ssh is the peer) from a local one.
    pub fn peer_pid(&self) -> Option<u32> {
        #[cfg(unix)]
        {
            os::peer_pid(&self.stream)
        }
        #[cfg(windows)]
        {
            None
        }
    }

    /// This connection as `Read` and `Write`, every call within what is left of `deadline`.
    pub fn until(&self, deadline: Instant) -> Timed<'_> {
        Timed { conn: self, deadline }
    }
}

/// A [`Conn`] whose reads and writes share one deadline ([`Conn::until`]).
pub struct Timed<'a> {
    conn: &'a Conn,
    deadline: Instant,
}

impl io::Read for Timed<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.conn.read_before(buf, self.deadline)
    }
}

impl io::Write for Timed<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.conn.write_before(buf, self.deadline)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Where the agent listens: a Unix socket bound at a path, or on Windows a named pipe whose
/// every instance admits this user alone and no remote client.
#[derive(Debug)]
pub struct Listener {
    #[cfg(unix)]
    socket: std::os::unix::net::UnixListener,
    #[cfg(windows)]
    pipe: pipe::Listener,
}

impl Listener {
    /// Listens at `path`. On Unix the caller has checked the directory and removed a stale
    /// socket, and sets its mode after; on Windows this fails if the name is taken, by an agent
    /// or anyone else.
    pub fn bind(path: &Path) -> io::Result<Listener> {
        #[cfg(unix)]
        {
            Ok(Listener { socket: std::os::unix::net::UnixListener::bind(path)? })
        }
        #[cfg(windows)]
        {
            Ok(Listener { pipe: pipe::Listener::bind(path)? })
        }
    }

    /// Waits for the next connection.
    pub fn accept(&mut self) -> io::Result<Conn> {
        #[cfg(unix)]
        {
            Ok(Conn { stream: self.socket.accept()?.0 })
        }
        #[cfg(windows)]
        {
            Ok(Conn { pipe: self.pipe.accept()? })
        }
    }
}
