//! The agent process's own calls on Unix: no core dumps and no tracing by the user's other
//! processes (`PR_SET_DUMPABLE`), locked memory where `RLIMIT_MEMLOCK` allows it, a session of
//! its own, the signals that end it, taken by one thread, and what program a peer (ssh, carrying
//! a forward) runs. They are the agent process's concern, not the library's: the library keeps only
//! the transport's side (`hyperseal::agent::conn`: who is at the other end of a connection).

#![allow(unsafe_code)] // setrlimit, prctl, mlockall, setsid, signal masks and kill(pid, 0).

use std::io;

/// No core file, and (Linux) not dumpable: the user's other processes cannot ptrace it or read
/// its memory through /proc, and its /proc entries belong to root.
pub fn no_dumps() -> io::Result<()> {
    let zero = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `zero` is a valid rlimit.
    if unsafe { libc::setrlimit(libc::RLIMIT_CORE, &zero) } != 0 {
        return Err(io::Error::last_os_error());
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    // SAFETY: PR_SET_DUMPABLE takes one integer argument.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Locked memory the agent asks for before it locks all of it: its threads' stacks and a
/// lock's Argon2id fit well inside.
const MEMLOCK_NEEDED: u64 = 1 << 30;

/// Locks every page of the process, now and later (`mlockall`), so no secret is written to
/// swap. Where `RLIMIT_MEMLOCK` is below what the agent may use, nothing is locked (a locked
/// process past its limit fails to allocate) and the reason is returned, to say once.
pub fn lock_memory() -> Result<(), String> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `lim` is valid for writes.
    if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut lim) } != 0 {
        return Err(format!("RLIMIT_MEMLOCK cannot be read: {}", io::Error::last_os_error()));
    }
    // The soft limit may be raised to the hard one by anyone: do so before giving up.
    if lim.rlim_cur != libc::RLIM_INFINITY && lim.rlim_cur < MEMLOCK_NEEDED && lim.rlim_max != lim.rlim_cur {
        let raised = libc::rlimit { rlim_cur: lim.rlim_max, rlim_max: lim.rlim_max };
        // SAFETY: `raised` is a valid rlimit.
        if unsafe { libc::setrlimit(libc::RLIMIT_MEMLOCK, &raised) } == 0 {
            lim = raised;
        }
    }
    if lim.rlim_cur != libc::RLIM_INFINITY && lim.rlim_cur < MEMLOCK_NEEDED {
        return Err(format!(
            "RLIMIT_MEMLOCK is {} KiB (ulimit -l), below the {} MiB the agent would lock",
            lim.rlim_cur / 1024,
            MEMLOCK_NEEDED >> 20
        ));
    }
    // SAFETY: flags only.
    match unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } {
        0 => Ok(()),
        _ => Err(format!("mlockall failed: {}", io::Error::last_os_error())),
    }
}

/// A session of its own, so the terminal's hang-up and job control leave it alone.
pub fn new_session() {
    // SAFETY: no arguments; failing (already a group leader) changes nothing.
    unsafe {
        libc::setsid();
    }
}

fn end_signals() -> libc::sigset_t {
    // SAFETY: the set is initialised by sigemptyset before use.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// Blocks SIGTERM, SIGINT and SIGHUP in this thread and every thread it starts afterwards, so
/// that only [`wait_end_signal`] receives them. Call before any thread starts.
pub fn block_end_signals() {
    let set = end_signals();
    // SAFETY: `set` is initialised; the old mask is not wanted.
    unsafe {
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Waits for SIGTERM, SIGINT or SIGHUP and returns its number.
pub fn wait_end_signal() -> i32 {
    let set = end_signals();
    let mut sig = 0;
    loop {
        // SAFETY: `set` is initialised and `sig` valid for writes.
        if unsafe { libc::sigwait(&set, &mut sig) } == 0 {
            return sig;
        }
    }
}

/// Whether the process `pid` still runs (a forward's `ssh`): `kill(pid, 0)` succeeds, or
/// fails only for want of permission.
pub fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    // SAFETY: signal 0 sends nothing; it only checks that the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The file name of the program `pid` runs (Linux: `/proc/PID/exe`), to tell ssh at the other
/// end of a connection; `None` where the system does not say. It is the kernel's word as it is:
/// a program whose file was replaced or removed while it runs (an upgrade of openssh during a
/// long session) is `NAME (deleted)`, which the agent's rule (`agent/origin.rs`) reads as `NAME`.
pub fn program_name(pid: u32) -> Option<String> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
        Some(exe.file_name()?.to_string_lossy().into_owned())
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = pid;
        None
    }
}

/// The name the kernel keeps for the process `pid` (Linux: `/proc/PID/comm`, the first 15
/// bytes of its program's file name at `exec`), a second witness beside [`program_name`];
/// `None` where the system does not say.
pub fn command_name(pid: u32) -> Option<String> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
        Some(comm.trim_end_matches('\n').to_string())
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = pid;
        None
    }
}

/// Whether this system names the process at the other end of a connection
/// ([`program_name`], [`command_name`]): where it does, a peer it cannot name is a stranger.
pub const NAMES_PEERS: bool = cfg!(any(target_os = "linux", target_os = "android"));
