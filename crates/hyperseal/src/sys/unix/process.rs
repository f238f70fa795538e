//! A plugin process and everything it starts, on Unix: the plugin leads a new process group,
//! which is killed at the end of the exchange; on Linux its descendants that left the group are
//! found in `/proc` and ended too ([`super::family`]).

use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::signal;

/// Whether this process adopts the orphans of its descendants ([`adopt_orphans`]).
static ADOPTING: AtomicBool = AtomicBool::new(false);

/// The plugins started here and not yet reaped: children of ours, never a plugin's leftovers.
/// Held while a plugin is spawned and registered, so that a scan of our children, followed by a
/// read of this list, never takes a plugin being started for a leftover.
static RUNNING: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// What is needed to end a plugin's whole family: its pid and (Linux, from `/proc`) its start
/// time, which tells its descendants from processes that were there before it.
#[derive(Debug)]
pub(crate) struct Family {
    pid: Option<i32>,
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    started: Option<u64>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts `cmd` as the leader of a new process group, so that killing the group also stops any
/// program it started (which would otherwise keep our pipes, and the threads reading them,
/// alive), and registers it as a running plugin.
pub(crate) fn spawn(cmd: &mut Command) -> std::io::Result<(Child, Family)> {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    let mut running = lock(&RUNNING);
    let child = cmd.spawn()?;
    let pid = i32::try_from(child.id()).ok();
    // Read while the child cannot have been reaped.
    #[cfg(target_os = "linux")]
    let started = pid.and_then(super::family::stat).map(|p| p.start);
    #[cfg(not(target_os = "linux"))]
    let started = None;
    running.extend(pid);
    Ok((child, Family { pid, started }))
}

/// Ends the plugin with everything it started, within `budget`, and reaps it: its process group
/// is killed; on Linux, its descendants are contained ([`super::family`]): with orphan adoption
/// killed and reaped until none is left, else frozen while still attached to it, then killed.
/// Returns whether nothing it started was found still running when the budget ran out.
pub(crate) fn end_all(child: &mut Child, family: &Family, budget: Duration) -> bool {
    let until = Instant::now() + budget;
    #[cfg(target_os = "linux")]
    let (pair, adopting) = (family.pid.zip(family.started), ADOPTING.load(Ordering::Acquire));
    // Without adoption, frozen before the plugin dies: its descendants' parent chain must still
    // reach it.
    #[cfg(target_os = "linux")]
    let frozen = pair.filter(|_| !adopting).map(|(pid, started)| super::family::freeze(pid, started, until));
    #[cfg(not(target_os = "linux"))]
    let _ = until;
    kill_group(child, family.pid);
    #[cfg(target_os = "linux")]
    let contained = match (frozen, pair) {
        (Some(found), _) => {
            let complete = found.complete;
            found.kill();
            complete
        }
        // With adoption nothing needs freezing: an orphan comes to us, not to init, so the
        // plugin may die first (its pid still names it: it is reaped only after this, or was
        // by an earlier wait, which the start time tells).
        (None, Some((pid, started))) => super::family::contain(pid, started, &RUNNING, until),
        (None, None) => true,
    };
    #[cfg(not(target_os = "linux"))]
    let contained = true;
    let _ = child.wait();
    if let Some(pid) = family.pid {
        lock(&RUNNING).retain(|&p| p != pid);
    }
    contained
}

/// Makes this process adopt the orphans of its descendants (Linux's child subreaper,
/// `prctl(PR_SET_CHILD_SUBREAPER)`): a process a plugin started that leaves its process group
/// and whose parent exits is then re-parented here instead of to init, so that the end of
/// each plugin exchange can still find it, kill it and reap it. Process-wide, so only for a
/// program whose child processes are all plugins (the CLI calls it first thing); a library,
/// or a host with children of its own, must not. Does nothing elsewhere than on Linux.
pub fn adopt_orphans() -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl(PR_SET_CHILD_SUBREAPER, 1) takes integers only and touches no memory.
        if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        ADOPTING.store(true, Ordering::Release);
    }
    Ok(())
}

/// SIGKILL to the plugin's process group (then to the child itself, in case the group is gone).
/// The group's id is the child's pid, which cannot have been reused: the child is not reaped
/// until after this call (only an earlier wait may have reaped it, and then the id stays in use
/// as long as any member of its group lives; with none, the call finds no process).
fn kill_group(child: &mut Child, pid: Option<i32>) {
    if let Some(pid) = pid {
        signal(-pid, libc::SIGKILL);
    }
    let _ = child.kill();
}

/// Blocks SIGPIPE in the calling thread (the writer), so that writing to a plugin that has
/// exited fails with `EPIPE` instead of killing a host that lets SIGPIPE end it (the CLI does,
/// for `hyperseal … | head`). A write's SIGPIPE is sent to the thread that wrote; blocked, it
/// stays pending there and is dropped when the thread ends.
pub(crate) fn ignore_sigpipe_here() {
    // SAFETY: `set` is a local sigset_t initialised by sigemptyset before use; pthread_sigmask
    // changes only this thread's mask and may be given a null old-set pointer.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}
