//! The round driver the applications' work on many files runs through (the tree re-key, the
//! sops files' re-key, git's re-key of blobs): the items cut into windows by the caller's rule
//! (or by the caller itself, [`Whole`]: git reads its blobs in rounds of bounded size), each
//! window unlocked once (one plugin run or agent round trip for all its headers), then each
//! item of the window worked on the library's executor, results kept in the items' order and
//! progress told per item; optionally the run stops after a window one of whose results says
//! so.
//!
//! The items are made lazily, one window at a time: an item is made only when the window may
//! still take it ([`Window::room`]), so a caller whose items are costly to make (a file read
//! whole) holds at most one window of them, and an item made but not fitting
//! ([`Window::fits`]) begins the next window.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::exec;

/// Where one window ends and the next begins. A fresh window is made for each (the driver's
/// `new_window`), told of each item that joins it, and asked about the next; an empty window
/// takes any item (one too large for any window is a window alone), so it is never asked.
pub trait Window<T> {
    /// Whether another item may join, asked before the next item is made: a full window never
    /// makes an item it would not take.
    fn room(&self) -> bool {
        true
    }
    /// Whether `next`, made, joins this window; if not, it begins the next one.
    fn fits(&self, next: &T) -> bool {
        let _ = next;
        true
    }
    /// `item` joined this window.
    fn add(&mut self, item: &T) {
        let _ = item;
    }
}

/// Every item in one window (a caller that cut its windows itself).
#[derive(Clone, Copy, Debug, Default)]
pub struct Whole;

impl<T> Window<T> for Whole {}

/// Who is told of each finished item, with the number finished so far over the whole run.
pub enum Progress<'a> {
    /// No one.
    Quiet,
    /// `tell(n)` on the calling thread, once for each n = 1, 2, … in order, as results come
    /// in: the bindings' progress callbacks must run on the thread that called them.
    Caller(&'a mut dyn FnMut(usize)),
    /// `tell(n)` on whichever thread worked the item, just after it (so calls may overtake
    /// each other): callers that only count or print.
    Workers(&'a (dyn Fn(usize) + Sync)),
}

/// How [`in_windows`] runs its windows.
pub struct Drive<'a, R> {
    /// Items worked at once, on the library's executor (0: every core).
    pub threads: usize,
    /// Told of each finished item.
    pub progress: Progress<'a>,
    /// Checked on each result of a window once the window is done: if one says so, no further
    /// window is made (a run that stops at its first failure).
    pub stop: Option<&'a dyn Fn(&R) -> bool>,
}

/// Drives `items` in windows (module docs): `new_window()` cuts them, `unlock` is called once
/// per window before its items are worked (it may take out of them what only it needs, such as
/// their stanzas), and `work(&unlocked, item)` runs for each item on up to `drive.threads`
/// threads of the executor (items are independent). Returns the results in the items' order:
/// every item's, or, where `drive.stop` ended the run, those of the windows it ran.
pub fn in_windows<T, W, U, R>(
    items: impl IntoIterator<Item = T>,
    new_window: impl Fn() -> W,
    mut unlock: impl FnMut(&mut [T]) -> U,
    work: impl Fn(&U, T) -> R + Sync,
    mut drive: Drive<'_, R>,
) -> Vec<R>
where
    T: Send,
    W: Window<T>,
    U: Sync,
    R: Send,
{
    let mut items = items.into_iter();
    let mut results = Vec::new();
    // An item made that did not fit the window before: it begins the next.
    let mut ahead = None;
    while let Some(first) = ahead.take().or_else(|| items.next()) {
        let mut window = new_window();
        window.add(&first);
        let mut taken = vec![first];
        while window.room() {
            let Some(next) = items.next() else { break };
            if !window.fits(&next) {
                ahead = Some(next);
                break;
            }
            window.add(&next);
            taken.push(next);
        }
        let unlocked = unlock(&mut taken);
        let before = results.len();
        let worked = each(taken, drive.threads, |item| work(&unlocked, item), before, &mut drive.progress);
        let stop = drive.stop.is_some_and(|stop| worked.iter().any(stop));
        results.extend(worked);
        if stop {
            break;
        }
    }
    results
}

/// `work` on each of `items` on up to `threads` threads of the executor, the results in the
/// items' order, and `progress` told `before + n` for each n = 1, 2, … finished.
fn each<T: Send, R: Send>(
    items: Vec<T>,
    threads: usize,
    work: impl Fn(T) -> R + Sync,
    before: usize,
    progress: &mut Progress<'_>,
) -> Vec<R> {
    let n = items.len();
    // One item never waits for a helper.
    let threads = if n <= 1 { 1 } else { threads };
    let queue = Mutex::new(items.into_iter().enumerate());
    let out: Mutex<Vec<Option<R>>> = Mutex::new((0..n).map(|_| None).collect());
    let done = AtomicUsize::new(0);
    let workers = match progress {
        Progress::Workers(tell) => Some(*tell),
        _ => None,
    };
    let step = || {
        let Some((i, item)) = queue.lock().unwrap_or_else(|p| p.into_inner()).next() else { return false };
        let r = work(item);
        out.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(r);
        let now = done.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(tell) = workers {
            tell(before + now);
        }
        true
    };
    let mut told = 0;
    // On the caller's thread: every count it has not told yet, in order.
    let mut tell = |told: &mut usize| {
        let Progress::Caller(tell) = progress else { return };
        let now = done.load(Ordering::Relaxed);
        for k in *told + 1..=now {
            tell(before + k);
        }
        *told = now.max(*told);
    };
    exec::run_with(threads, &|| while step() {}, &mut || {
        while step() {
            tell(&mut told);
        }
    });
    tell(&mut told);
    let out = out.into_inner().unwrap_or_else(|p| p.into_inner());
    out.into_iter().map(|r| r.expect("every item was worked")).collect()
}

#[cfg(test)]
mod tests {
    use std::cell::{Cell, RefCell};
    use std::collections::BTreeSet;

    use super::*;

    /// Items by weight, at most 10 of it in a window.
    #[derive(Default)]
    struct Ten(u32);

    impl Window<u32> for Ten {
        fn fits(&self, next: &u32) -> bool {
            self.0 + next <= 10
        }
        fn add(&mut self, item: &u32) {
            self.0 += item;
        }
    }

    /// At most three items in a window, asked before an item is made.
    #[derive(Default)]
    struct Three(usize);

    impl Window<u32> for Three {
        fn room(&self) -> bool {
            self.0 < 3
        }
        fn add(&mut self, _: &u32) {
            self.0 += 1;
        }
    }

    #[test]
    fn windows_are_cut_by_the_rule_unlocked_once_and_worked_in_order() {
        let items = [4, 5, 3, 12, 1, 2, 9, 9];
        for threads in [1, 4] {
            let windows = RefCell::new(Vec::new());
            let mut told = Vec::new();
            let mut tell = |n| told.push(n);
            let unlock = |w: &mut [u32]| {
                windows.borrow_mut().push(w.to_vec());
                windows.borrow().len()
            };
            let drive = Drive { threads, progress: Progress::Caller(&mut tell), stop: None };
            let got = in_windows(items, Ten::default, unlock, |round: &usize, x| (*round, x * 2), drive);
            // A 12 alone (too large for any window), and a window ends where the next would pass 10.
            let want = vec![vec![4, 5], vec![3], vec![12], vec![1, 2], vec![9], vec![9]];
            assert_eq!(windows.into_inner(), want);
            let rounds = [1, 1, 2, 3, 4, 4, 5, 6];
            let want: Vec<(usize, u32)> = rounds.into_iter().zip(items.map(|x| x * 2)).collect();
            assert_eq!(got, want);
            assert_eq!(told, (1..=items.len()).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_full_window_makes_no_item_before_it_is_worked() {
        let made = Cell::new(0);
        let items = (0..7u32).inspect(|_| made.set(made.get() + 1));
        let mut at_unlock = Vec::new();
        let unlock = |w: &mut [u32]| at_unlock.push((w.len(), made.get()));
        let drive = Drive { threads: 2, progress: Progress::Quiet, stop: None };
        let got = in_windows(items, Three::default, unlock, |_: &(), x| x, drive);
        assert_eq!(got, (0..7).collect::<Vec<_>>());
        // Each window unlocked with its own items made, and not one more.
        assert_eq!(at_unlock, vec![(3, 3), (3, 6), (1, 7)]);
    }

    #[test]
    fn a_stop_ends_the_run_after_its_window() {
        let made = Cell::new(0);
        let items = (1..=9u32).inspect(|_| made.set(made.get() + 1));
        let unlocks = Cell::new(0);
        let told = Mutex::new(BTreeSet::new());
        let tell = |n| assert!(told.lock().unwrap().insert(n), "told twice");
        let fails = |r: &Result<u32, u32>| r.is_err();
        let drive = Drive { threads: 4, progress: Progress::Workers(&tell), stop: Some(&fails) };
        let work = |_: &(), x: u32| if x == 5 { Err(x) } else { Ok(x) };
        let got = in_windows(items, Three::default, |_| unlocks.set(unlocks.get() + 1), work, drive);
        // 5 fails in the second window: that window finishes, no third is made or unlocked.
        assert_eq!(got, vec![Ok(1), Ok(2), Ok(3), Ok(4), Err(5), Ok(6)]);
        assert_eq!((unlocks.get(), made.get()), (2, 6));
        assert_eq!(told.into_inner().unwrap(), (1..=6).collect());
    }

    #[test]
    fn no_items_no_window() {
        let unlocks = Cell::new(0);
        let drive = Drive { threads: 0, progress: Progress::Quiet, stop: None };
        let got = in_windows(Vec::<u32>::new(), || Whole, |_| unlocks.set(1), |_: &(), x| x, drive);
        assert!(got.is_empty());
        assert_eq!(unlocks.get(), 0);
    }
}
