//! A plugin's descendants, found in `/proc` (Linux): the processes a plugin started that left its
//! process group (`setsid`, `setpgid`), so that killing the group misses them.
//!
//! At the end of an exchange the plugin's group and every descendant found are frozen with
//! SIGSTOP, round after round until a scan finds none new (a stopped process cannot fork, so
//! the last scan saw the whole tree), then killed. A process whose parent already exited was
//! re-parented: to init, out of our reach, or to this process if it adopts orphans
//! ([`super::adopt_orphans`]); then this process's children that are not plugins and started
//! after the plugin are its leftovers (the only other processes such a program starts are
//! plugins), and they are killed and reaped too.
//!
//! A process is named by its pid and its start time (in clock ticks since boot, field 22 of
//! `/proc/PID/stat`): a pid can be reused once its process is reaped, the pair cannot, so a
//! process found earlier is only ever signalled if both still match.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use super::conn::{reap_nohang, signal};

/// Rounds of freezing at most: each finds what the processes found last forked before they
/// were stopped.
const ROUNDS: usize = 32;

/// One process as `/proc/PID/stat` shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Proc {
    pub(super) pid: i32,
    pub(super) ppid: i32,
    /// Start time after boot, in clock ticks.
    pub(super) start: u64,
    /// Exited, not yet reaped (state `Z`).
    pub(super) zombie: bool,
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
pub(super) fn stat(pid: i32) -> Option<Proc> {
    parse(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Every process visible in `/proc` (those that end while it is read are skipped).
pub(super) fn all() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok()).filter_map(stat).collect()
}

/// The processes of `procs` whose parent chain reaches one of `roots` (the roots excluded).
pub(super) fn descendants(procs: &[Proc], roots: &HashSet<i32>) -> Vec<Proc> {
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

/// The processes to end, by pid, with their start times.
pub(super) struct Found(HashMap<i32, u64>);

/// Freezes the plugin `pid` (started at `started`), its process group and every descendant
/// found; with `adopting`, also this process's children that started after the plugin and are
/// not plugins (`running`), with their descendants.
pub(super) fn freeze(pid: i32, started: u64, adopting: bool, running: &[i32]) -> Found {
    let me = std::process::id() as i32;
    let mut found = HashMap::new();
    signal(-pid, libc::SIGSTOP);
    for _ in 0..ROUNDS {
        let procs = all();
        let mut roots: HashSet<i32> = found.keys().copied().collect();
        if procs.iter().any(|p| p.pid == pid && p.start == started) {
            roots.insert(pid);
        }
        let mut new: Vec<Proc> = Vec::new();
        if adopting {
            new.extend(
                procs.iter().filter(|p| {
                    p.ppid == me && p.start >= started && p.pid != pid && !running.contains(&p.pid)
                }),
            );
            roots.extend(new.iter().map(|p| p.pid));
        }
        new.extend(descendants(&procs, &roots));
        new.retain(|p| p.pid != pid && !found.contains_key(&p.pid));
        if new.is_empty() {
            break;
        }
        for p in new {
            signal(p.pid, libc::SIGSTOP);
            found.insert(p.pid, p.start);
        }
    }
    Found(found)
}

impl Found {
    /// Whether `pid` is still the process that was found.
    fn same(&self, pid: i32) -> Option<Proc> {
        stat(pid).filter(|p| self.0.get(&pid) == Some(&p.start))
    }

    /// SIGKILL to each process found that is still the same.
    pub(super) fn kill(&self) {
        for &pid in self.0.keys() {
            if self.same(pid).is_some() {
                signal(pid, libc::SIGKILL);
            }
        }
    }

    /// Reaps the processes found that are (or are about to become: their parent is one of
    /// them) children of this process, for at most `within`.
    pub(super) fn reap(&self, within: Duration) {
        let (me, until) = (std::process::id() as i32, Instant::now() + within);
        loop {
            let mut waiting = false;
            for &pid in self.0.keys() {
                match self.same(pid) {
                    Some(p) if p.ppid == me => waiting |= reap_nohang(pid) == Some(false),
                    Some(p) if self.0.contains_key(&p.ppid) => waiting = true,
                    _ => {}
                }
            }
            if !waiting || Instant::now() >= until {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
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
}
