//! One module per subcommand.

pub mod age;
pub mod age_legacy_pem;
pub mod age_messages;
#[cfg(any(unix, windows))]
pub mod agent;
pub mod backup;
pub mod c2sp;
pub mod completions;
pub mod decrypt;
pub mod encrypt;
pub mod git;
pub mod header;
pub mod identity;
pub mod inspect;
pub mod keys;
pub mod rekey;
mod rekey_common;
mod rekey_sops;
mod rekey_tree;
pub mod tpm;
pub mod tpm_plugin;

use hyperseal::Suite;

/// Most worker threads `--threads` accepts; larger values are a usage error (exit 2), not
/// silently changed: 256 covers the largest machines, and anything beyond is a typo.
pub const MAX_THREADS: usize = 256;

/// `--threads N` for every subcommand that takes it: 1 to [`MAX_THREADS`], or 0 for all cores.
/// Parsed as text, so no number (`18446744073709551616`, `-1`) can panic or overflow. More
/// threads than cores are not started: they add no speed, and the pipeline keeps chunks in
/// flight for each worker (256 workers held ~310 MiB), so the cores cap keeps every accepted
/// value inside the 64 MiB memory budget.
pub fn parse_threads(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        // 0 = all cores; the library never uses more threads than cores.
        Ok(n) if n <= MAX_THREADS => Ok(n),
        _ => Err(format!("expected 1 to {MAX_THREADS}, or 0 for all cores")),
    }
}

/// `--chunk-size`: a size (see [`parse_size`]) that is a power of two from 16 KiB to 16 MiB.
pub fn parse_chunk_size(s: &str) -> Result<usize, String> {
    const RULE: &str = "expected a power of two from 16K to 16M (e.g. 64K, 1M)";
    let n = parse_size(s).map_err(|_| RULE.to_string())?;
    if n.is_power_of_two() && ((16 << 10)..=(16 << 20)).contains(&n) {
        Ok(n)
    } else {
        Err(RULE.to_string())
    }
}

/// `--suite`.
pub fn parse_suite(s: &str) -> Result<Suite, String> {
    Suite::from_name(s).ok_or_else(|| "expected aes-256-gcm, chacha20-poly1305 or sm4-gcm".to_string())
}

/// Parses a size such as `65536`, `64K`, `64KiB`, `1M`, `16MiB`.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim().to_ascii_uppercase();
    let t = t.trim_end_matches("IB").trim_end_matches('B');
    let (num, mult) = match t.chars().last() {
        Some('K') => (&t[..t.len() - 1], 1usize << 10),
        Some('M') => (&t[..t.len() - 1], 1 << 20),
        Some('G') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("invalid size {s:?} (examples: 65536, 64K, 1M)"))
}
