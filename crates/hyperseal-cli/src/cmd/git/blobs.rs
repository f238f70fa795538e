//! Many blobs out of git's object store at once, for the commands that handle every marked file
//! (`git clone`, `git rekey`): one `git cat-file --batch-check` for their sizes, then
//! `git cat-file --batch` in rounds of bounded size, a thread fetching the next round while the
//! caller works on this one (git inflating blobs takes one core; opening them takes the others).
//! A round's blobs are slices of git's one answer, never copied one by one.

use std::sync::Arc;

use anyhow::Result;
use hyperseal::recipient::Identity;

use super::repo::git;

/// Largest blob opened in memory by `unlock`, `clone` and `rekey`; larger ones stream (through
/// the filter, or one at a time).
pub const MOST: u64 = 1 << 20;
/// Blob bytes read from git per round: memory stays bounded whatever the repository's size.
pub const ROUND: u64 = 64 << 20;

/// Blobs per round when no identity unwraps in batches: small enough that git reading the next
/// round's blobs overlaps with opening this one's, large enough that starting `git cat-file`
/// for each round (a few milliseconds) is noise.
const SMALL_ROUND: usize = 1000;

/// Blobs per round for `ids`. An identity that unwraps in batches (a plugin: perhaps a PIN or a
/// touch; the agent) is asked once per round, so then a round is as large as the byte bound
/// allows; otherwise rounds are small, so git and the opening overlap.
pub fn round_files(ids: &[Arc<dyn Identity>]) -> usize {
    match ids.iter().any(|id| id.unwraps_in_batches()) {
        true => usize::MAX,
        false => SMALL_ROUND,
    }
}

/// Each blob's size (`git cat-file --batch-check`), in the order of `oids`; `u64::MAX` for one
/// git does not have.
pub fn sizes(oids: &[&str]) -> Result<Vec<u64>> {
    let list: String = oids.iter().map(|o| format!("{o}\n")).collect();
    let out = git(&["cat-file", "--batch-check=%(objectname) %(objectsize)"], Some(list.as_bytes()))?;
    let known: std::collections::HashMap<&str, u64> = std::str::from_utf8(&out)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once(' ').and_then(|(oid, n)| Some((oid, n.parse().ok()?))))
        .collect();
    Ok(oids.iter().map(|o| known.get(o).copied().unwrap_or(u64::MAX)).collect())
}

/// Reads the blobs `oids` (of `sizes`, from [`sizes`]) in rounds of at most `files` blobs and
/// `bytes` bytes (a larger blob alone), and calls `each(first, blobs)` for each round in order:
/// `first` is the round's first index in `oids`, and `blobs[i]` the blob of `oids[first + i]`
/// (`None`: git did not give it as asked). A failed `git` or `each` ends the reading there.
pub fn in_rounds(
    oids: &[&str],
    sizes: &[u64],
    files: usize,
    bytes: u64,
    mut each: impl FnMut(usize, &mut [Option<&[u8]>]) -> Result<()>,
) -> Result<()> {
    let mut rounds = Vec::new();
    let mut start = 0;
    while start < oids.len() {
        let (mut end, mut used) = (start, 0u64);
        while end < oids.len() && end - start < files.max(1) && (end == start || used + sizes[end] <= bytes) {
            used = used.saturating_add(sizes[end]);
            end += 1;
        }
        rounds.push(start..end);
        start = end;
    }
    std::thread::scope(|s| -> Result<()> {
        // One round waiting while this one is handled: memory stays at about two rounds.
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<(std::ops::Range<usize>, Vec<u8>)>>(1);
        s.spawn(move || {
            for round in rounds {
                let list: String = oids[round.clone()].iter().map(|o| format!("{o}\n")).collect();
                let got = git(&["cat-file", "--batch"], Some(list.as_bytes())).map(|out| (round, out));
                let failed = got.is_err();
                if tx.send(got).is_err() || failed {
                    return;
                }
            }
        });
        for got in rx {
            let (round, out) = got?;
            let mut blobs = parse_batch(&out, &oids[round.clone()]);
            each(round.start, &mut blobs)?;
        }
        Ok(())
    })
}

/// `git cat-file --batch`'s answer for `oids`, one blob per id in order (`None` for one git did
/// not give as asked), each a slice of `out`.
fn parse_batch<'a>(mut out: &'a [u8], oids: &[&str]) -> Vec<Option<&'a [u8]>> {
    let mut blobs = Vec::with_capacity(oids.len());
    for want in oids {
        // "<oid> blob <size>\n<content>\n", or "<oid> missing\n".
        let Some(nl) = out.iter().position(|&b| b == b'\n') else { break };
        let mut f = out[..nl].split(|&b| b == b' ');
        out = &out[nl + 1..];
        let (oid, kind) = (f.next(), f.next());
        let Some(size) = f.next().and_then(|n| std::str::from_utf8(n).ok()?.parse::<usize>().ok()) else {
            blobs.push(None);
            continue;
        };
        // An answer cut short: nothing after it can be trusted.
        if size >= out.len() {
            break;
        }
        let fits = oid == Some(want.as_bytes()) && kind == Some(b"blob".as_slice());
        blobs.push(fits.then(|| &out[..size]));
        out = &out[size + 1..];
    }
    blobs.resize(oids.len(), None);
    blobs
}

#[cfg(test)]
mod tests {
    use super::parse_batch;

    #[test]
    fn git_s_batch_answer_is_read_blob_by_blob_and_a_short_one_stops_it() {
        let oids = ["aa", "bb", "cc", "dd", "ee"];
        // A blob, one missing, a tree where a blob was asked, another blob; then one cut short.
        let out = b"aa blob 3\nabc\nbb missing\ncc tree 2\nxy\ndd blob 0\n\nee blob 9\nshort";
        let got = parse_batch(out, &oids);
        assert_eq!(got, vec![Some(&b"abc"[..]), None, None, Some(&b""[..]), None]);
        // Answers out of order are not taken for the ids asked.
        assert_eq!(parse_batch(b"bb blob 1\nz\n", &oids[..1]), vec![None]);
    }
}
