//! A plugin's descendants, found in `/proc` (Linux): the processes a plugin started that left its
//! process group (`setsid`, `setpgid`), so that killing the group misses them, and ended with it.
//!
//! **With orphan adoption** ([`adopt_orphans`](super::process::adopt_orphans): this process is a child subreaper, as the
//! CLI makes itself), containment is complete ([`contain`]): a process of the plugin's subtree
//! whose parent exits is re-parented to this process, never to init, so every one of them is
//! always either a descendant of the plugin or of one of this process's children that started
//! after the plugin and is not a plugin (the only other processes such a program starts are
//! plugins). Each is killed, each of ours that died is reaped, and the whole subtree is scanned
//! again, until a scan finds no such process at all, live or zombie; no round count bounds it,
//! only the deadline it is given. Why an empty scan proves the subtree empty, though a scan is
//! not atomic: a non-empty subtree always holds one of our children, and a child of ours stays
//! in `/proc` (as a zombie once dead) until this process reaps it, which only the loop does,
//! after a scan that saw it, and one loop at a time ([`ENDING`]). So a chain that forks and
//! exits faster than a scan cannot hide from the scans (each link that exits stays as our
//! zombie, and the next one is already ours), and the first link killed before it forks ends
//! it. Only the deadline stops the loop early (a chain that kept outrunning it, a process that
//! SIGKILL cannot end: one in uninterruptible sleep, or a set-user-ID program we may not
//! signal), and then it says so. Out of reach of all this: a process that some other program
//! (a daemon, `systemd-run`) started at the plugin's request, which is no descendant of ours.
//!
//! **Without it** (a library in a host that did not opt in) this is best effort: the plugin's
//! group and every descendant found are frozen with SIGSTOP, round after round until a scan
//! finds none new (a stopped process cannot fork, so the last scan saw every descendant still
//! attached), then killed. A descendant whose parent exited before it was frozen was re-parented
//! to init (or to another subreaper) and is out of reach: a fork-and-exit chain escapes.
//!
//! A process is named by its pid and its start time (in clock ticks since boot, field 22 of
//! `/proc/PID/stat`): a pid can be reused once its process is reaped, the pair cannot. Every
//! signal to a descendant, SIGSTOP as well as SIGKILL, goes through a pidfd opened on the pid
//! and checked against the start time *after* opening, so the pidfd provably names the process
//! found, and a pid reused meanwhile can never make us stop or kill an unrelated process. On a
//! kernel without pidfds (before 5.3, or a sandbox that refuses the call) the start time is
//! checked just before a plain kill(2), which leaves a window of microseconds.

use std::collections::{HashMap, HashSet};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::signal;

/// One process as `/proc/PID/stat` shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Proc {
    pub(crate) pid: i32,
    pub(crate) ppid: i32,
    /// Start time after boot, in clock ticks.
    pub(crate) start: u64,
    /// Exited, not yet reaped (state `Z`).
    pub(crate) zombie: bool,
}

/// Parses the text of `/proc/PID/stat`: `pid (comm) state ppid … starttime …`. The command
/// name may hold spaces and parentheses, so the fields are counted after its last `)`.
fn parse(stat: &str) -> Option<Proc> {
    let (head, rest) = stat.rsplit_once(')')?;
    let pid = head.split_once(" (")?.0.trim().parse().ok()?;
    // After ") ": state (field 3), ppid (4), …, starttime (22).
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(Proc {
        pid,
        ppid: fields.get(1)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
        zombie: *fields.first()? == "Z",
    })
}

/// The process `pid`, if it exists.
pub(crate) fn stat(pid: i32) -> Option<Proc> {
    parse(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Every process visible in `/proc` (those that end while it is read are skipped).
pub(crate) fn all() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok()).filter_map(stat).collect()
}

/// The processes of `procs` whose parent chain reaches one of `roots` (the roots excluded).
pub(crate) fn descendants(procs: &[Proc], roots: &HashSet<i32>) -> Vec<Proc> {
    let mut children: HashMap<i32, Vec<Proc>> = HashMap::new();
    for p in procs {
        children.entry(p.ppid).or_default().push(*p);
    }
    let (mut found, mut todo): (Vec<Proc>, Vec<i32>) = (Vec::new(), roots.iter().copied().collect());
    let mut seen: HashSet<i32> = roots.clone();
    while let Some(pid) = todo.pop() {
        for c in children.get(&pid).into_iter().flatten() {
            if seen.insert(c.pid) {
                found.push(*c);
                todo.push(c.pid);
            }
        }
    }
    found
}

/// Whether `p` is still the process that was found (same pid, same start time).
fn same(p: &Proc) -> bool {
    stat(p.pid).is_some_and(|now| now.start == p.start)
}

/// A process found in a scan, held by a pidfd where the kernel gives one.
struct Handle {
    proc: Proc,
    fd: Option<OwnedFd>,
}

impl Handle {
    /// `p`, if it is still the process the scan found. The pidfd is opened first and the start
    /// time checked after: had the pid been reused in between, the check would see the new
    /// process's start time, so a handle that is returned names `p` itself.
    fn open(p: &Proc) -> Option<Handle> {
        let fd = pidfd_open(p.pid);
        if matches!(fd, Err(Some(libc::ESRCH))) || !same(p) {
            return None;
        }
        // Any other error (ENOSYS before Linux 5.3, EPERM from a seccomp filter, EMFILE): the
        // start-time check is repeated before each signal instead.
        Some(Handle { proc: *p, fd: fd.ok() })
    }

    fn signal(&self, sig: libc::c_int) {
        match &self.fd {
            Some(fd) => pidfd_signal(fd, sig),
            None if same(&self.proc) => signal(self.proc.pid, sig),
            None => {}
        }
    }
}

/// pidfd_open(2): a descriptor that names process `pid` for as long as it is open; the errno
/// on failure.
#[allow(unsafe_code)]
fn pidfd_open(pid: i32) -> Result<OwnedFd, Option<i32>> {
    // SAFETY: pidfd_open takes two integers (passed as the longs syscall(2) reads) and touches
    // no memory of ours.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, libc::c_long::from(pid), 0 as libc::c_long) };
    match i32::try_from(fd) {
        // SAFETY: a descriptor the call just created, owned by nothing else.
        Ok(fd) if fd >= 0 => Ok(unsafe { OwnedFd::from_raw_fd(fd) }),
        _ => Err(std::io::Error::last_os_error().raw_os_error()),
    }
}

/// pidfd_send_signal(2) of `sig` to the process `fd` names; an error (it is gone) is ignored.
#[allow(unsafe_code)]
fn pidfd_signal(fd: &OwnedFd, sig: libc::c_int) {
    // SAFETY: integers, and a null siginfo pointer, which the call documents (it then fills
    // in what kill(2) would); the descriptor is open for the duration of the call.
    unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            libc::c_long::from(fd.as_raw_fd()),
            libc::c_long::from(sig),
            std::ptr::null::<libc::siginfo_t>(),
            0 as libc::c_long,
        );
    }
}

/// waitpid(2) without blocking: `Some(true)` reaped, `Some(false)` still running, `None` not a
/// child of ours (or already reaped).
fn reap_nohang(pid: i32) -> Option<bool> {
    let mut status = 0;
    // SAFETY: waitpid writes the status into a local integer; WNOHANG never blocks.
    match unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } {
        0 => Some(false),
        p if p == pid => Some(true),
        _ => None,
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One [`contain`] at a time: another one reaping a process this one's scan relies on (a child
/// of ours, read before its children were) could make a scan miss the rest of the subtree. A
/// second end of an exchange waits for the first, which its own deadline bounds.
static ENDING: Mutex<()> = Mutex::new(());

/// With orphan adoption: kills the plugin `pid`'s subtree (the plugin itself excluded: the caller
/// kills and reaps it, after this) until a scan finds none of it, or `until` passes. The subtree
/// is the plugin's descendants (while it is the process started at `started`) and this process's
/// children that started after the plugin and are not `running` plugins, with their descendants.
/// Returns whether the subtree is empty.
pub(crate) fn contain(pid: i32, started: u64, running: &Mutex<Vec<i32>>, until: Instant) -> bool {
    let _one = lock(&ENDING);
    let me = std::process::id() as i32;
    let mut killed: HashSet<(i32, u64)> = HashSet::new();
    // The scan after the deadline still counts: the kills before it may have been the last.
    let mut late = false;
    loop {
        let subtree = subtree(pid, started, me, running);
        if subtree.is_empty() {
            return true;
        }
        if late {
            return false;
        }
        let mut fresh = false;
        for p in &subtree {
            if !p.zombie {
                // Opened, signalled and closed at once: a pidfd each, however wide the subtree.
                // Sent again each round: cheap, and a process that was only being opened when
                // a scan missed it gets nothing else.
                if let Some(h) = Handle::open(p) {
                    h.signal(libc::SIGKILL);
                }
                fresh |= killed.insert((p.pid, p.start));
            } else if p.ppid == me {
                // Our unreaped child: its pid cannot have been reused.
                reap_nohang(p.pid);
            }
            // A zombie whose parent lives is ours once that parent, killed here, has exited.
        }
        late = Instant::now() >= until;
        // A new process found means something is still forking: scan again at once, to catch
        // the next one before it can fork in turn. Only processes already killed, still dying
        // (or stuck in the kernel): wait a little, not to spin on them until the deadline.
        if !fresh {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// One scan of the subtree [`contain`] ends. `running` is read after `/proc`: a plugin is
/// registered there before the lock is released that its spawn held, so every plugin the scan
/// saw is in it, and none is taken for a leftover.
fn subtree(pid: i32, started: u64, me: i32, running: &Mutex<Vec<i32>>) -> Vec<Proc> {
    let procs = all();
    let running = lock(running).clone();
    let mut roots: HashSet<i32> = procs
        .iter()
        .filter(|p| p.ppid == me && p.start >= started && p.pid != pid && !running.contains(&p.pid))
        .map(|p| p.pid)
        .collect();
    let mut found: Vec<Proc> = procs.iter().filter(|p| roots.contains(&p.pid)).copied().collect();
    if procs.iter().any(|p| p.pid == pid && p.start == started) {
        roots.insert(pid);
    }
    found.extend(descendants(&procs, &roots));
    found
}

/// Without orphan adoption: the descendants found and frozen, held for the kill.
pub(crate) struct Found {
    held: Vec<Handle>,
    /// Whether the rounds ended because a scan found nothing new (not at the deadline).
    pub(crate) complete: bool,
}

/// Freezes the plugin `pid` (started at `started`), its process group and every descendant still
/// attached to it, round after round until a scan finds none new or `until` passes.
pub(crate) fn freeze(pid: i32, started: u64, until: Instant) -> Found {
    // A group cannot be named by a pidfd; its id is the plugin's pid, which names no other group
    // (see `kill_group` in `conn`).
    signal(-pid, libc::SIGSTOP);
    let mut found = Found { held: Vec::new(), complete: false };
    let mut seen: HashMap<i32, u64> = HashMap::new();
    loop {
        let procs = all();
        let mut roots: HashSet<i32> = seen.keys().copied().collect();
        if procs.iter().any(|p| p.pid == pid && p.start == started) {
            roots.insert(pid);
        }
        let new: Vec<Proc> = descendants(&procs, &roots)
            .into_iter()
            .filter(|p| p.pid != pid && !p.zombie && seen.get(&p.pid) != Some(&p.start))
            .collect();
        if new.is_empty() {
            found.complete = true;
            return found;
        }
        for p in new {
            seen.insert(p.pid, p.start);
            if let Some(h) = Handle::open(&p) {
                h.signal(libc::SIGSTOP);
                found.held.push(h);
            }
        }
        if Instant::now() >= until {
            return found;
        }
    }
}

impl Found {
    /// SIGKILL to each process frozen, through the handle that froze it.
    pub(crate) fn kill(self) {
        for h in &self.held {
            h.signal(libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_hostile_command_names() {
        let line = "4242 (a) b (c) 9) S 17 4242 4242 0 -1 4194560 99 0 0 0 0 0 0 0 20 0 1 0 123456 \
                    2 3 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        let p = parse(line).unwrap();
        assert_eq!(p, Proc { pid: 4242, ppid: 17, start: 123456, zombie: false });
        let z = parse("7 (sh) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0").unwrap();
        assert!(z.zombie && z.ppid == 1 && z.start == 55);
        assert_eq!(parse("garbage"), None);
        assert_eq!(parse("1 (x) S"), None);
    }

    #[test]
    fn this_process_and_its_ancestry() {
        let me = stat(std::process::id() as i32).unwrap();
        assert!(!me.zombie && me.start > 0);
        let procs = all();
        assert!(procs.contains(&me));
        let from_parent = descendants(&procs, &HashSet::from([me.ppid]));
        assert!(from_parent.iter().any(|p| p.pid == me.pid));
        assert!(descendants(&procs, &HashSet::from([me.pid])).iter().all(|p| p.pid != me.ppid));
    }

    /// A process found earlier whose pid now names another start time (as after pid reuse) is
    /// never signalled, with a pidfd or without (kernels before 5.3); the process found itself
    /// is, through its handle.
    #[test]
    fn a_reused_pid_is_never_signalled() {
        use std::os::unix::process::ExitStatusExt;
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let found = stat(child.id() as i32).unwrap();
        let reused = Proc { start: found.start + 1, ..found };
        assert!(Handle::open(&reused).is_none());
        Handle { proc: reused, fd: None }.signal(libc::SIGKILL);
        std::thread::sleep(Duration::from_millis(50));
        assert!(child.try_wait().unwrap().is_none(), "the process still runs");
        let h = Handle::open(&found).expect("the process found");
        h.signal(libc::SIGKILL);
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
        // Reaped: its pidfd still names it, and signalling it is a harmless no-op.
        h.signal(libc::SIGKILL);
        assert!(Handle::open(&found).is_none(), "gone");
    }
}
