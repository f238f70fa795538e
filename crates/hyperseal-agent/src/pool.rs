//! The threads that serve connections, kept for the next one instead of ended. A thread's start
//! and end cost a dozen system calls (its signal stack mapped and unmapped, the C library
//! giving back its stack's pages, whose unmapping interrupts the other cores) and page faults
//! as its stack is touched again: a decrypt run in a loop paid them for each file, the end
//! landing beside the next request. A job is handed to a thread that waits for one; where none
//! waits, a new thread takes it. The caller bounds how many jobs run at once (the agent's
//! connection slots); this bounds how many threads wait.
//!
//! A job ends by zeroing the stack its work used (`wipe.rs`), before its thread waits for
//! the next: a waiting thread holds no copy of a key, as an ended one would not.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// One connection's work, its stack scrub included.
pub type Job = Box<dyn FnOnce() + Send>;

/// Threads kept waiting at most: more than the one a decrypt in a loop uses, and a few for a
/// burst (a tree's windows, several shells); past a burst of the agent's 32 connections the rest
/// end. Each holds its stack (1 MiB, locked with the rest of the agent's memory where it is).
const KEPT: usize = 4;

#[derive(Default)]
pub struct Pool {
    state: Mutex<State>,
    job_ready: Condvar,
}

#[derive(Default)]
struct State {
    /// Jobs handed over and not yet taken; never more than the threads waiting took on.
    jobs: VecDeque<Job>,
    /// Threads waiting and not yet promised a job: threads waiting = `waiting` + `jobs.len()`.
    waiting: usize,
}

impl Pool {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `job` on a waiting thread, or on a new one (`spawn`) where none waits.
    pub fn run(self: &Arc<Self>, job: Job, spawn: impl FnOnce(Job)) {
        let mut state = self.state();
        if state.waiting > 0 {
            state.waiting -= 1;
            state.jobs.push_back(job);
            drop(state);
            self.job_ready.notify_one();
            return;
        }
        drop(state);
        let pool = self.clone();
        spawn(Box::new(move || pool.work(job)));
    }

    /// A thread's life: its first job, then each one handed to it, until [`KEPT`] others wait.
    fn work(&self, first: Job) {
        let mut job = first;
        loop {
            job();
            match self.next() {
                Some(next) => job = next,
                None => return,
            }
        }
    }

    /// Waits for the next job; `None` where enough threads wait already.
    fn next(&self) -> Option<Job> {
        let mut state = self.state();
        if state.waiting + state.jobs.len() >= KEPT {
            return None;
        }
        state.waiting += 1;
        let mut state =
            self.job_ready.wait_while(state, |s| s.jobs.is_empty()).unwrap_or_else(|p| p.into_inner());
        // The job was promised to a waiting thread (`waiting` counted down by `run`): this one.
        state.jobs.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    use std::time::Duration;

    /// Jobs in a loop, each done before the next is handed over, run on one thread: the first.
    #[test]
    fn a_loop_of_jobs_reuses_one_thread() {
        let pool = Arc::new(Pool::default());
        let started = Arc::new(AtomicUsize::new(0));
        let (done, finished) = mpsc::channel();
        for _ in 0..50 {
            let done = done.clone();
            let job: Job = Box::new(move || done.send(std::thread::current().id()).unwrap());
            let s = started.clone();
            pool.run(job, |j| {
                s.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(j);
            });
            finished.recv_timeout(Duration::from_secs(10)).unwrap();
            // The thread is waiting again once it counts as waiting.
            let until = std::time::Instant::now() + Duration::from_secs(10);
            while pool.state().waiting == 0 {
                assert!(std::time::Instant::now() < until, "the thread never waited");
                std::thread::yield_now();
            }
        }
        assert_eq!(started.load(Ordering::SeqCst), 1);
    }

    /// A burst takes a thread per job; afterwards [`KEPT`] wait, and each job ran once.
    #[test]
    fn a_burst_leaves_kept_threads() {
        let pool = Arc::new(Pool::default());
        let gate = Arc::new(Mutex::new(()));
        let closed = gate.lock().unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        for _ in 0..20 {
            let (ran, gate) = (ran.clone(), gate.clone());
            let job: Job = Box::new(move || {
                drop(gate.lock().unwrap());
                ran.fetch_add(1, Ordering::SeqCst);
            });
            pool.run(job, |j| drop(std::thread::spawn(j)));
        }
        drop(closed);
        let until = std::time::Instant::now() + Duration::from_secs(10);
        while ran.load(Ordering::SeqCst) < 20 || pool.state().waiting < KEPT {
            assert!(std::time::Instant::now() < until, "ran {}", ran.load(Ordering::SeqCst));
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(50));
        let state = pool.state();
        assert_eq!((state.waiting, state.jobs.len()), (KEPT, 0));
    }
}
