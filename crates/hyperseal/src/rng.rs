//! Randomness for keys, salts, nonces and ephemeral secrets: the operating system's CSPRNG.
//!
//! Not aws-lc's DRBG: on this aws-lc version its first use in a process seeds from CPU jitter
//! entropy, measured at ~37 ms of CPU per process (perf: `tree_jitter_initialize_once`), which
//! made a 1 KB `hyperseal encrypt` take 75 ms instead of a few. getrandom(2) costs microseconds.
//!
//! On WebAssembly (`wasm32-unknown-unknown`) the same call reaches the page's or worker's
//! `crypto.getRandomValues` (the `getrandom` crate's `wasm_js` feature, set in Cargo.toml), and
//! small requests are served from a pool drawn from it a kilobyte at a time (see `pool`).

use crate::error::Error;

/// Fills `dst` with random bytes. Public as `hyperseal::fill_random`, so that the toolkit's
/// portable backend draws from the same source.
pub fn fill(dst: &mut [u8]) -> Result<(), Error> {
    #[cfg(target_arch = "wasm32")]
    if dst.len() <= pool::SERVED_MAX {
        return pool::fill(dst);
    }
    getrandom::fill(dst).map_err(|_| Error::Crypto)
}

/// WebAssembly only: one `crypto.getRandomValues` call costs about 1.6 µs in Chromium 156 (a
/// 12-byte call from page script, measured), more than sealing a kilobyte, and an AEAD seal,
/// a token or an age file needs one to three small draws. So requests of up to
/// [`SERVED_MAX`] bytes are served from [`POOL`] bytes drawn in one call.
///
/// Every byte handed out is overwritten in the pool as it is handed out, so no byte is ever
/// given twice and none stays behind once used. A WebAssembly instance cannot fork: each
/// worker is its own instance with its own pool, drawn from its own `getRandomValues`, so two
/// copies of one pool never exist (the reason this is not done natively, where a forked child
/// would hand out its parent's bytes). What the pool holds is the next keys and nonces; anyone
/// who could read it could read the instance's keys in the same memory.
#[cfg(any(target_arch = "wasm32", test))]
mod pool {
    use core::cell::RefCell;

    use zeroize::Zeroize;

    use crate::error::Error;

    /// Bytes drawn per `getRandomValues` call.
    const POOL: usize = 1024;
    /// The largest request served from the pool (keys, nonces, salts); larger ones draw directly.
    pub(super) const SERVED_MAX: usize = 64;

    struct Pool {
        bytes: [u8; POOL],
        /// Bytes from here on are unused; before it they have been handed out and wiped.
        next: usize,
    }

    thread_local! {
        static STATE: RefCell<Pool> = const { RefCell::new(Pool { bytes: [0; POOL], next: POOL }) };
    }

    pub(super) fn fill(dst: &mut [u8]) -> Result<(), Error> {
        STATE.with_borrow_mut(|p| {
            if POOL - p.next < dst.len() {
                getrandom::fill(&mut p.bytes).map_err(|_| Error::Crypto)?;
                p.next = 0;
            }
            let taken = &mut p.bytes[p.next..p.next + dst.len()];
            dst.copy_from_slice(taken);
            taken.zeroize();
            p.next += dst.len();
            Ok(())
        })
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn bytes_are_wiped_as_handed_out_and_never_given_twice() {
            let mut seen = Vec::new();
            // Three pools' worth, in sizes that do not divide the pool (a refill mid-way).
            for i in 0..(3 * POOL / 13) {
                let mut b = [0u8; 13];
                fill(&mut b).unwrap();
                STATE.with_borrow(|p| {
                    assert!(
                        p.bytes[..p.next].iter().all(|&x| x == 0),
                        "draw {i}: used bytes left in the pool"
                    )
                });
                seen.push(b);
            }
            let mut sorted = seen.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), seen.len(), "a 13-byte draw repeated");
            let mut big = [0u8; SERVED_MAX];
            fill(&mut big).unwrap();
            assert_ne!(big, [0u8; SERVED_MAX]);
        }
    }
}
