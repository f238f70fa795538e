//! Inputs that carry their own cut: the push-based targets feed their data in pieces whose
//! sizes the fuzzer chooses, so every split point (inside a line, a header, a chunk, a tag) is
//! reachable.

/// Splits an input into `(seed, rest)`: the first byte says how many seed bytes follow (0–15).
pub fn seed(data: &[u8]) -> (&[u8], &[u8]) {
    let Some((&n, rest)) = data.split_first() else { return (&[], &[]) };
    rest.split_at(usize::from(n % 16).min(rest.len()))
}

/// `data` in pieces whose lengths come from `seed`, cycled: a byte below 0xf0 is a piece of
/// 0–63 bytes (empty pieces included: an empty update must change nothing), one above is
/// 4–64 KiB. No seed: one piece.
pub fn pieces<'a>(data: &'a [u8], seed: &[u8]) -> Vec<&'a [u8]> {
    if seed.is_empty() {
        return vec![data];
    }
    let (mut out, mut rest, mut i) = (Vec::new(), data, 0);
    while !rest.is_empty() {
        let b = seed[i % seed.len()];
        i += 1;
        let n = if b < 0xf0 { usize::from(b % 64) } else { usize::from(b - 0xef) << 12 };
        let (piece, tail) = rest.split_at(n.min(rest.len()));
        out.push(piece);
        rest = tail;
        // Sixteen empty pieces in a row are as good as one: no endless loop on a zero seed.
        if i > 16 && out[out.len() - 16..].iter().all(|p| p.is_empty()) {
            out.push(rest);
            break;
        }
    }
    out
}
