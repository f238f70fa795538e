//! The one executor every parallel path runs on: persistent helper threads plus the calling
//! thread, which always takes part.
//!
//! Jobs that run at once (four `encryptFile` calls from Node, a tree's files) share the helpers:
//! each free helper joins the oldest job that still wants one.
//!
//! Why not spawn threads per call (as before) or use rayon: on small VMs a helper thread that was
//! just woken (or spawned) may not get a CPU for a whole scheduler slice. With scoped threads the
//! caller then *waits* for it — measured on a 2-core Zen 4 VM, a 4 MiB one-shot on 2 threads ran
//! at 1.2 GB/s ±533% against 13.3 GB/s on one. Here work is pulled in small pieces by whoever is
//! free, the caller included, and the caller never waits for a helper that has not started: a
//! helper that wakes late finds the job gone. So all cores help when they can, and a job is never
//! slower than on one thread (plus one lock and one wake-up).
//!
//! Measured against rayon's pool on the engine's shape of work (1 MiB pieces of 64 KiB
//! ChaCha20-Poly1305 chunks; `crates/hyperseal-bench/examples/executors.rs`, 2-vCPU Xeon, minima
//! of 100 runs): one 4 MiB job 0.84 ms here against 0.81 ms, one 64 MiB job 14.0 against 14.4
//! ms, four 16 MiB jobs at once 14.0 against 14.3 ms. Equal within the noise, so this one
//! stays: it needs no dependency, runs unchanged on WebAssembly (one thread, no pool), and
//! [`ordered`]'s bounded in-order pipeline would have to be rebuilt on rayon's scopes.
//!
//! Two shapes of work, both built on [`run`]:
//! - [`for_each`]: `n` independent pieces (one-shot seal/open into a buffer, a batch's chunks);
//! - [`ordered`]: a stream of units produced and consumed in order on the calling thread
//!   (reading and writing), transformed by anyone, with a bounded number in flight — so memory is
//!   constant whatever the input size.

#![allow(unsafe_code)]

use std::collections::{BTreeMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};

use crate::error::Error;
/// A positional read filling the whole buffer, on every system (the OS seam's), for the jobs run
/// here that read a file in pieces.
#[cfg(any(unix, windows))]
pub use crate::sys::read_exact_at;

/// The number of CPUs this process may use, read once: `available_parallelism` reads cgroup
/// files under /proc and /sys on every call (~40 µs, a fifth of a 1 KiB one-shot encrypt +
/// decrypt before it was cached). It is also the most threads any job uses: more never helps.
///
/// On WebAssembly, 1: `wasm32-unknown-unknown` has no threads (a page gets parallelism from
/// Web Workers, each with its own instance), so every job runs on the caller and no helper is
/// ever started.
pub fn available_threads() -> usize {
    if cfg!(target_arch = "wasm32") {
        return 1;
    }
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// How many threads a job asked for `threads` may use: 0 means all cores, and more than the
/// cores never helps. Resolved only when a job is about to go parallel, so small inputs never
/// pay for counting the cores.
pub(crate) fn resolve(threads: usize) -> usize {
    match threads {
        1 => 1,
        0 => available_threads(),
        n => n.min(available_threads()),
    }
}

/// A job's body, with its lifetime erased while it is published (see `run`).
type Body = &'static (dyn Fn() + Sync);

/// A job published to the helpers: its body, the helpers it still wants and those inside it.
struct Job {
    id: u64,
    body: Body,
    wanted: usize,
    active: usize,
    panicked: bool,
}

/// The jobs in flight, oldest first: any free helper joins the oldest that still wants one, so
/// concurrent jobs (Node running four `encryptFile` calls at once, a tree's files beside a
/// large file's pieces) share the helpers instead of the later ones running on their callers
/// alone.
#[derive(Default)]
struct State {
    jobs: Vec<Job>,
    next_id: u64,
}

struct Pool {
    state: Mutex<State>,
    wake: Condvar,
    idle: Condvar,
}

fn lock(p: &Pool) -> MutexGuard<'_, State> {
    // Bodies run outside the lock and their panics are caught, so the lock is never poisoned
    // by them; recover anyway rather than cascade.
    p.state.lock().unwrap_or_else(|e| e.into_inner())
}

/// The helpers: one fewer than the CPUs (the caller is the last one), started on first use.
fn pool() -> &'static Pool {
    static POOL: OnceLock<&'static Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let pool: &'static Pool =
            Box::leak(Box::new(Pool { state: Mutex::default(), wake: Condvar::new(), idle: Condvar::new() }));
        // (Never reached on WebAssembly, where `run` stays on the caller; and not even compiled.)
        #[cfg(not(target_arch = "wasm32"))]
        for i in 1..available_threads() {
            let spawned =
                std::thread::Builder::new().name(format!("hyperseal-{i}")).spawn(move || helper(pool));
            if spawned.is_err() {
                break; // fewer helpers: jobs still complete on the callers
            }
        }
        pool
    })
}

#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
fn helper(pool: &'static Pool) {
    let mut st = lock(pool);
    loop {
        let Some(job) = st.jobs.iter_mut().find(|j| j.wanted > 0) else {
            st = pool.wake.wait(st).unwrap_or_else(|e| e.into_inner());
            continue;
        };
        job.wanted -= 1;
        job.active += 1;
        let (id, body) = (job.id, job.body);
        drop(st);
        let ok = catch_unwind(AssertUnwindSafe(body)).is_ok();
        st = lock(pool);
        // The job is still listed: its caller waits for `active == 0` before removing it.
        let job = st.jobs.iter_mut().find(|j| j.id == id).expect("a job outlives its helpers");
        job.active -= 1;
        job.panicked |= !ok;
        if job.active == 0 {
            pool.idle.notify_all();
        }
    }
}

/// Runs `body` on the calling thread and on up to `threads - 1` helpers as they come free (0 =
/// all), and returns when every copy has returned. `body` must share its work through its own
/// state (an atomic counter, a queue): any number of copies, including only the caller's, must
/// finish it. The caller never waits for a helper that has not started: once the caller's copy
/// returns, the job takes no more helpers, and only those already inside it are waited for.
pub(crate) fn run(threads: usize, body: &(dyn Fn() + Sync)) {
    run_with(threads, body, &mut || body())
}

/// [`run`], the caller's copy being `caller` instead of `helpers`: it shares the same work and
/// may also do what only the calling thread may (report progress to a binding's callback).
pub(crate) fn run_with(threads: usize, helpers: &(dyn Fn() + Sync), caller: &mut dyn FnMut()) {
    let body = helpers;
    let threads = resolve(threads);
    if threads <= 1 {
        return caller();
    }
    let close = publish(threads, body);
    caller();
    let panicked = close.finish();
    std::mem::forget(close);
    assert!(!panicked, "a hyperseal worker panicked");
}

/// Lists `body` as a job wanting `threads - 1` helpers (`threads` resolved, above 1), and wakes
/// them. The returned [`Close`] must end the job before `body`'s borrow does.
fn publish(threads: usize, body: &(dyn Fn() + Sync)) -> Close {
    let pool = pool();
    let id = {
        let mut st = lock(pool);
        // SAFETY: the 'static reference never outlives its borrow. It is stored in the job only
        // until `Close` (its `finish`, also on drop and so on unwinding) stops new helpers
        // (`wanted = 0`), waits for the job's `active == 0` and removes it; helpers copy it only
        // under the lock while the job wants them, counting themselves in `active` in the same
        // critical section, and drop their copy before leaving `active`. Callers end the `Close`
        // first: `run_with` before returning, `Started` by field order (its `close` drops before
        // the `Arc` that owns the body).
        let erased: Body = unsafe { std::mem::transmute::<&(dyn Fn() + Sync), Body>(body) };
        let id = st.next_id;
        st.next_id += 1;
        st.jobs.push(Job { id, body: erased, wanted: threads - 1, active: 0, panicked: false });
        id
    };
    pool.wake.notify_all();
    Close(pool, id)
}

/// Ends a published job: see [`Close::finish`]; also on drop.
struct Close(&'static Pool, u64);

impl Close {
    /// Stops the job taking helpers, waits for those inside it, removes it; whether one panicked.
    fn finish(&self) -> bool {
        let mut st = lock(self.0);
        let at = |st: &State| st.jobs.iter().position(|j| j.id == self.1);
        let Some(i) = at(&st) else { return false };
        st.jobs[i].wanted = 0;
        while st.jobs.iter().any(|j| j.id == self.1 && j.active > 0) {
            st = self.0.idle.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        let i = at(&st).expect("only this caller removes its job");
        st.jobs.remove(i).panicked
    }
}

impl Drop for Close {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A job that helpers may work on from [`start`] until its caller [`join`](Started::join)s it:
/// the caller goes on meanwhile (a reader returns the batch before while helpers open the next).
/// The same rules as [`run`]: `body` shares its work through its own state, the caller's copy
/// at `join` finishes whatever no helper took, and the caller never waits for a helper that has
/// not started. Dropped without `join`, it waits only for the helpers inside it.
pub struct Started {
    // Declared first, so dropped first: the job is gone before the body it lists.
    close: Option<Close>,
    body: std::sync::Arc<dyn Fn() + Send + Sync>,
}

/// Starts `body` on up to `threads - 1` helpers (0 = all cores), to be joined by the caller.
/// With one thread, nothing runs until `join`.
pub fn start(threads: usize, body: std::sync::Arc<dyn Fn() + Send + Sync>) -> Started {
    let threads = resolve(threads);
    let close = (threads > 1).then(|| publish(threads, &*body));
    Started { close, body }
}

impl Started {
    /// Runs the caller's copy of the body, then waits for the helpers inside it.
    pub fn join(mut self) {
        (self.body)();
        let panicked = self.close.take().is_some_and(|c| {
            let p = c.finish();
            std::mem::forget(c);
            p
        });
        assert!(!panicked, "a hyperseal worker panicked");
    }
}

/// A buffer cut into pieces of `size` bytes (the last may be shorter) that threads claim one at
/// a time, each piece once, so each thread holds its piece exclusively. It owns the buffer, so
/// a [`Started`] job can work on it after the caller that filled it has returned; the buffer
/// comes back whole with [`into_inner`](Pieces::into_inner), and is zeroized if dropped instead
/// (it may hold plaintext).
pub(crate) struct Pieces {
    ptr: *mut u8,
    len: usize,
    cap: usize,
    used: usize,
    size: usize,
    count: usize,
    next: AtomicUsize,
}

// SAFETY: the buffer is owned (as a `Vec<u8>` would be), and shared access hands out only
// disjoint pieces (see `claim`).
unsafe impl Send for Pieces {}
unsafe impl Sync for Pieces {}

impl Pieces {
    /// Takes `buf`, whose first `used` bytes are cut into pieces of `size` (non-zero).
    pub(crate) fn new(buf: Vec<u8>, used: usize, size: usize) -> Self {
        assert!(size > 0 && used <= buf.len());
        let mut buf = std::mem::ManuallyDrop::new(buf);
        let (ptr, len, cap) = (buf.as_mut_ptr(), buf.len(), buf.capacity());
        Pieces { ptr, len, cap, size, count: used.div_ceil(size), next: AtomicUsize::new(0), used }
    }

    /// The next piece no one has claimed, and its index; `None` once all are claimed.
    #[allow(clippy::mut_from_ref)] // each piece is handed out once: see the SAFETY note
    pub(crate) fn claim(&self) -> Option<(usize, &mut [u8])> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        if i >= self.count {
            return None;
        }
        let at = i * self.size;
        let n = self.size.min(self.used - at);
        // SAFETY: `i` comes from one `fetch_add`, so no other call gets it; pieces of different
        // indices do not overlap and lie inside the first `used <= len` bytes of the buffer,
        // which nothing else touches until `into_inner` or drop take `self` by value (after
        // every claimed piece's borrow of `self` has ended).
        Some((i, unsafe { std::slice::from_raw_parts_mut(self.ptr.add(at), n) }))
    }

    /// The buffer back, whole.
    pub(crate) fn into_inner(self) -> Vec<u8> {
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: the parts of the `Vec` taken apart in `new`, rebuilt once (`self` is not
        // dropped).
        unsafe { Vec::from_raw_parts(me.ptr, me.len, me.cap) }
    }
}

impl Drop for Pieces {
    fn drop(&mut self) {
        // SAFETY: as in `into_inner`; `drop` runs only when that did not.
        let mut buf = unsafe { Vec::from_raw_parts(self.ptr, self.len, self.cap) };
        zeroize::Zeroize::zeroize(&mut buf);
    }
}

/// Calls `f(i)` for every `i` in `0..n`, spread over up to `threads` threads; on failure, the
/// lowest failing index and its error (what a sequential loop would report).
pub fn for_each(
    n: usize,
    threads: usize,
    f: &(dyn Fn(usize) -> Result<(), Error> + Sync),
) -> Result<(), (usize, Error)> {
    if resolve(threads) <= 1 || n <= 1 {
        return (0..n).try_for_each(|i| f(i).map_err(|e| (i, e)));
    }
    let next = AtomicUsize::new(0);
    let first_err: Mutex<Option<(usize, Error)>> = Mutex::new(None);
    run(threads, &|| loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= n {
            break;
        }
        if let Err(e) = f(i) {
            let mut slot = first_err.lock().unwrap_or_else(|p| p.into_inner());
            if slot.as_ref().is_none_or(|(j, _)| i < *j) {
                *slot = Some((i, e));
            }
        }
    });
    match first_err.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(failed) => Err(failed),
        None => Ok(()),
    }
}

/// What `produce` made of a unit.
pub enum Made {
    /// A unit to transform; more may follow.
    More,
    /// The final unit.
    Last,
}

/// A stream of units through `produce` → `work` → `consume`. One thread at a time drives:
/// it produces (reads) and consumes (writes) in order; `work` runs on every thread that is free,
/// the driver included when it has nothing else to do. Units are recycled: at most
/// `units.len()` exist at once. Stops at the first error, from whichever stage, or when
/// `consume` returns `false`.
pub fn ordered<U: Send, E: Send>(
    mut units: Vec<U>,
    threads: usize,
    mut produce: impl FnMut(&mut U) -> Result<Made, E> + Send,
    work: impl Fn(&mut U) + Sync,
    mut consume: impl FnMut(&mut U) -> Result<bool, E> + Send,
) -> Result<(), E> {
    if resolve(threads) <= 1 || units.len() < 2 {
        let u = units.first_mut().expect("at least one unit");
        loop {
            let made = produce(u)?;
            work(u);
            if !consume(u)? || matches!(made, Made::Last) {
                return Ok(());
            }
        }
    }
    let q =
        Mutex::new(Queues { todo: VecDeque::new(), done: BTreeMap::new(), closed: false, poisoned: false });
    let ready = Condvar::new();
    let shared = Shared { q, ready, work: &work };
    let driver = Mutex::new(Some((units, &mut produce, &mut consume)));
    let result = Mutex::new(Ok(()));
    run(threads, &|| {
        // The first thread here drives; the others (and the driver, when idle) work.
        let taken = driver.try_lock().ok().and_then(|mut d| d.take());
        match taken {
            Some((units, produce, consume)) => {
                // Closed also when unwinding, so no worker waits for a driver that is gone.
                struct CloseOnDrop<'s, 'a, U>(&'s Shared<'a, U>);
                impl<U> Drop for CloseOnDrop<'_, '_, U> {
                    fn drop(&mut self) {
                        self.0.close();
                    }
                }
                let _close = CloseOnDrop(&shared);
                let r = shared.drive(units, produce, consume);
                *result.lock().unwrap_or_else(|p| p.into_inner()) = r;
            }
            None => while shared.work_one(true) {},
        }
    });
    result.into_inner().unwrap_or_else(|p| p.into_inner())
}

struct Queues<U> {
    /// Produced units waiting for `work`, with their sequence numbers.
    todo: VecDeque<(u64, U)>,
    /// Worked units waiting to be consumed in order.
    done: BTreeMap<u64, U>,
    closed: bool,
    /// A `work` call panicked: its unit is lost, so the run cannot finish.
    poisoned: bool,
}

struct Shared<'a, U> {
    q: Mutex<Queues<U>>,
    /// Signalled when a unit is queued or finished, and when the run closes.
    ready: Condvar,
    work: &'a (dyn Fn(&mut U) + Sync),
}

impl<U> Shared<'_, U> {
    fn lock(&self) -> MutexGuard<'_, Queues<U>> {
        self.q.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Works on one queued unit; with `block`, waits for one until the run closes.
    fn work_one(&self, block: bool) -> bool {
        let mut g = self.lock();
        loop {
            if let Some((seq, mut u)) = g.todo.pop_front() {
                drop(g);
                if catch_unwind(AssertUnwindSafe(|| (self.work)(&mut u))).is_err() {
                    let mut g = self.lock();
                    (g.closed, g.poisoned) = (true, true);
                    drop(g);
                    self.ready.notify_all();
                    return false;
                }
                self.lock().done.insert(seq, u);
                self.ready.notify_all();
                return true;
            }
            if g.closed || !block {
                return false;
            }
            g = self.ready.wait(g).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
    }

    fn drive<E>(
        &self,
        mut free: Vec<U>,
        produce: &mut impl FnMut(&mut U) -> Result<Made, E>,
        consume: &mut impl FnMut(&mut U) -> Result<bool, E>,
    ) -> Result<(), E> {
        // `produce` gets units in the order given (a caller may have primed the first one).
        free.reverse();
        let (mut next_in, mut next_out, mut all_in) = (0u64, 0u64, false);
        loop {
            // Write what is ready, in order.
            let head = self.lock().done.remove(&next_out);
            if let Some(mut u) = head {
                let go_on = consume(&mut u)?;
                next_out += 1;
                free.push(u);
                if !go_on || (all_in && next_out == next_in) {
                    return Ok(());
                }
                continue;
            }
            // Read more while a unit is free.
            if !all_in {
                if let Some(mut u) = free.pop() {
                    all_in = matches!(produce(&mut u)?, Made::Last);
                    self.lock().todo.push_back((next_in, u));
                    next_in += 1;
                    self.ready.notify_all();
                    continue;
                }
            }
            // Nothing to read or write: help, or wait for the head unit.
            if !self.work_one(false) {
                let mut g = self.lock();
                while !g.done.contains_key(&next_out) && g.todo.is_empty() && !g.poisoned {
                    g = self.ready.wait(g).unwrap_or_else(|p| p.into_inner());
                }
                assert!(!g.poisoned, "a hyperseal worker panicked");
            }
        }
    }
}
