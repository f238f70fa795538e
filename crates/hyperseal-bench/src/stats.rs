//! Medians and spreads, the timing loop, and the number formats every table shares.
//!
//! Every figure is the median of several runs, shown with its spread, because on a shared
//! two-core machine a single run says little.

use std::time::Instant;

/// Median and range of a set of samples.
#[derive(Clone, Copy, Debug)]
pub struct Stats {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
    /// Bounds of the spread shown as ±%: min and max, or the 10th and 90th percentiles from ten
    /// samples up (one descheduled run on a shared machine should not hide the other nine).
    pub lo: f64,
    pub hi: f64,
}

impl Stats {
    pub fn of(samples: &[f64]) -> Stats {
        assert!(!samples.is_empty(), "no samples");
        let mut v = samples.to_vec();
        v.sort_by(|a, b| a.total_cmp(b));
        let mid = v.len() / 2;
        let median = if v.len() % 2 == 1 { v[mid] } else { (v[mid - 1] + v[mid]) / 2.0 };
        let (lo, hi) = if v.len() >= 10 {
            (v[v.len() / 10], v[v.len() - 1 - v.len() / 10])
        } else {
            (v[0], v[v.len() - 1])
        };
        Stats { median, min: v[0], max: v[v.len() - 1], n: v.len(), lo, hi }
    }

    /// Largest distance of min or max from the median, in percent of the median.
    pub fn spread_pct(&self) -> f64 {
        if self.median == 0.0 {
            return 0.0;
        }
        (self.hi - self.median).max(self.median - self.lo).abs() / self.median.abs() * 100.0
    }

    /// Throughput from times: `bytes / t` (the slowest run gives the minimum).
    pub fn rate(&self, bytes: u64) -> Stats {
        let b = bytes as f64;
        Stats {
            median: b / self.median,
            min: b / self.max,
            max: b / self.min,
            n: self.n,
            lo: b / self.hi,
            hi: b / self.lo,
        }
    }

    /// Scales every figure (unit changes).
    pub fn scale(&self, k: f64) -> Stats {
        Stats {
            median: self.median * k,
            min: self.min * k,
            max: self.max * k,
            n: self.n,
            lo: self.lo * k,
            hi: self.hi * k,
        }
    }
}

/// Wall-clock seconds of `reps` calls of `f`, after one untimed warm-up call.
pub fn time(reps: usize, mut f: impl FnMut()) -> Stats {
    f();
    let samples: Vec<f64> = (0..reps.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    Stats::of(&samples)
}

/// Like [`time`] for several contenders, run in turn (A B C, A B C, …) so that load from other
/// processes on a shared machine falls on all of them alike and their ratios stay meaningful.
pub fn time_alternating(reps: usize, fs: &mut [&mut dyn FnMut()]) -> Vec<Stats> {
    for f in fs.iter_mut() {
        f();
    }
    let mut samples = vec![Vec::with_capacity(reps); fs.len()];
    for _ in 0..reps.max(1) {
        for (i, f) in fs.iter_mut().enumerate() {
            let t = Instant::now();
            f();
            samples[i].push(t.elapsed().as_secs_f64());
        }
    }
    samples.iter().map(|s| Stats::of(s)).collect()
}

/// `1 KiB`, `16 MiB`, `1 GiB`, `1.5 KiB`, `3 B` (binary units, as the published reports use).
pub fn fmt_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if (v - v.round()).abs() < 1e-9 {
        format!("{} {}", v.round() as u64, UNITS[u])
    } else {
        format!("{} {}", trim(format!("{v:.2}")), UNITS[u])
    }
}

/// `12.3 µs`, `374.71 ms`, `2.18 s`.
pub fn fmt_time(secs: f64) -> String {
    if secs < 1e-3 {
        format!("{:.1} µs", secs * 1e6)
    } else if secs < 1.0 {
        format!("{:.2} ms", secs * 1e3)
    } else {
        format!("{secs:.2} s")
    }
}

/// MB/s with MB = 10^6 bytes.
pub fn fmt_mbps(bytes_per_sec: f64) -> String {
    if bytes_per_sec >= 100e6 {
        format!("{:.0} MB/s", bytes_per_sec / 1e6)
    } else {
        format!("{:.2} MB/s", bytes_per_sec / 1e6)
    }
}

/// A figure with its spread: `542 MB/s ±3%`.
pub fn with_spread(text: String, s: &Stats) -> String {
    if s.n > 1 {
        format!("{text} ±{:.0}%", s.spread_pct())
    } else {
        text
    }
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_formats() {
        let s = Stats::of(&[3.0, 1.0, 2.0, 10.0]);
        assert_eq!(s.median, 2.5);
        assert_eq!((s.min, s.max), (1.0, 10.0));
        assert_eq!(fmt_size(1 << 20), "1 MiB");
        assert_eq!(fmt_size(1536), "1.5 KiB");
        assert_eq!(fmt_time(0.5), "500.00 ms");
    }
}
