//! Who is at the other end of an agent connection on Unix (`SO_PEERCRED`, `getpeereid` on the
//! BSDs): the transport's side of the agent (`agent/conn.rs`). The agent process's own calls
//! (dumps, locked memory, signals, naming a peer's program) are the CLI's.

use std::io;
use std::os::unix::net::UnixStream;

/// The real user id of this process.
pub fn uid() -> u32 {
    // SAFETY: getuid has no arguments and cannot fail.
    unsafe { libc::getuid() }
}

/// The user id of the process at the other end of `conn`, as the kernel saw it connect.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn peer_uid(conn: &UnixStream) -> io::Result<u32> {
    peer_cred(conn).map(|c| c.uid)
}

/// The credentials of the process at the other end of `conn`, as the kernel saw it connect.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn peer_cred(conn: &UnixStream) -> io::Result<libc::ucred> {
    use std::os::fd::AsRawFd;
    let mut cred = libc::ucred { pid: 0, uid: 0, gid: 0 };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are valid for writes of the sizes given; the fd is open.
    let rc = unsafe {
        libc::getsockopt(
            conn.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    match rc {
        0 if len as usize == std::mem::size_of::<libc::ucred>() => Ok(cred),
        0 => Err(io::Error::other("SO_PEERCRED returned a short answer")),
        _ => Err(io::Error::last_os_error()),
    }
}

/// The user id of the process at the other end of `conn` (BSDs and macOS: `getpeereid`).
#[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
pub fn peer_uid(conn: &UnixStream) -> io::Result<u32> {
    use std::os::fd::AsRawFd;
    let (mut uid, mut gid) = (0, 0);
    // SAFETY: both pointers are valid for writes; the fd is open.
    match unsafe { libc::getpeereid(conn.as_raw_fd(), &mut uid, &mut gid) } {
        0 => Ok(uid),
        _ => Err(io::Error::last_os_error()),
    }
}

/// The process id at the other end of `conn`, as the kernel saw it connect (Linux:
/// `SO_PEERCRED`); `None` where the system does not say.
pub fn peer_pid(conn: &UnixStream) -> Option<u32> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        peer_cred(conn).ok().and_then(|c| u32::try_from(c.pid).ok()).filter(|&p| p > 0)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = conn;
        None
    }
}
