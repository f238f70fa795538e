//! The 3-way merge of the merge driver, in memory: git hands the driver three age files, and
//! their plaintexts must never be written anywhere git or another program could keep them.
//! `git merge-file` reads only named files, so it would need the plaintext on disk (or in
//! files a second program opens by name); a line merge here keeps it in zeroized buffers of
//! this process alone.
//!
//! The merge is diff3's: each side is aligned with the base by a longest common subsequence
//! of lines (Myers' greedy algorithm); a stretch where neither side changed the base is kept,
//! a stretch that one side changed takes that side, and one that both changed the same way
//! takes it once; anything else is a conflict, written between git's markers.

use std::io::{Read, Write};

use zeroize::Zeroizing;

use super::filter::AGE_INTRO;
use hyperseal::recipient::{Identity, Recipient};
use hyperseal::{Decryptor, Encryptor, Error, Options};

/// Most edits (inserted plus deleted lines) the alignment of one side with the base searches
/// for. Its work grows with the square of the edits; past this the side's whole differing
/// stretch is taken as one change, which can only make a conflict larger, never hide one.
const MAX_EDITS: usize = 1024;

/// The result of a merge.
pub struct Merged {
    /// The merged text, conflict markers included (zeroized on drop).
    pub text: Zeroizing<Vec<u8>>,
    /// How many conflicting stretches were written between markers.
    pub conflicts: usize,
}

/// Merges `ours` and `theirs`, both descended from `base`, line by line. Conflicts are written
/// as git writes them: `<<<<<<< OURS`, our lines, `=======`, their lines, `>>>>>>> THEIRS`,
/// each marker `marker_len` characters long (git's `%L`, 7 by default).
pub fn merge3(base: &[u8], ours: &[u8], theirs: &[u8], labels: [&str; 2], marker_len: usize) -> Merged {
    let (o, a, b) = (lines(base), lines(ours), lines(theirs));
    let ma = matches(&o, &a);
    let mb = matches(&o, &b);
    let mut pieces = Vec::new();
    let mut conflicts = 0;
    let (mut i, mut j, mut k) = (0, 0, 0);
    loop {
        // A stretch where both sides still have the base's lines, in step.
        let mut n = 0;
        while i + n < o.len() && ma[i + n] == Some(j + n) && mb[i + n] == Some(k + n) {
            n += 1;
        }
        pieces.push(Piece::Lines(&o[i..i + n]));
        (i, j, k) = (i + n, j + n, k + n);
        // The next base line both sides kept: the end of the stretch one or both changed.
        let next = (i..o.len()).find(|&x| matches!((ma[x], mb[x]), (Some(y), Some(z)) if y >= j && z >= k));
        let (i2, j2, k2) = match next {
            Some(x) => (x, ma[x].expect("found"), mb[x].expect("found")),
            None => (o.len(), a.len(), b.len()),
        };
        if (i2, j2, k2) == (i, j, k) {
            if next.is_none() {
                break;
            }
            continue;
        }
        let (so, sa, sb) = (&o[i..i2], &a[j..j2], &b[k..k2]);
        if sa == so || sa == sb {
            pieces.push(Piece::Lines(sb));
        } else if sb == so {
            pieces.push(Piece::Lines(sa));
        } else {
            conflicts += 1;
            pieces.extend([
                Piece::Marker(b'<', labels[0]),
                Piece::Lines(sa),
                Piece::Marker(b'=', ""),
                Piece::Lines(sb),
                Piece::Marker(b'>', labels[1]),
            ]);
        }
        (i, j, k) = (i2, j2, k2);
    }
    // Measured first, then written into one allocation of that size: a buffer that grew as
    // it went would leave copies of the plaintext behind that nothing zeroizes.
    let mut len = 0;
    emit(&pieces, marker_len, |b| len += b.len());
    let mut text = Zeroizing::new(Vec::with_capacity(len));
    emit(&pieces, marker_len, |b| text.extend_from_slice(b));
    Merged { text, conflicts }
}

/// One piece of the merged text: a run of the inputs' lines, or a conflict marker line (its
/// character and label).
enum Piece<'a> {
    Lines(&'a [&'a [u8]]),
    Marker(u8, &'a str),
}

/// Hands the merged text to `out` piece by piece. A marker starts its own line: after a side
/// whose last line had no newline, one comes first.
fn emit(pieces: &[Piece], marker_len: usize, mut out: impl FnMut(&[u8])) {
    let mut line_start = true;
    for piece in pieces {
        match piece {
            Piece::Lines(lines) => {
                for l in *lines {
                    out(l);
                    line_start = l.ends_with(b"\n");
                }
            }
            Piece::Marker(c, label) => {
                if !line_start {
                    out(b"\n");
                }
                for _ in 0..marker_len {
                    out(std::slice::from_ref(c));
                }
                if !label.is_empty() {
                    out(b" ");
                    out(label.as_bytes());
                }
                out(b"\n");
                line_start = true;
            }
        }
    }
}

/// The merge driver's work on three stored blobs (age files; an empty one is an empty text,
/// as git gives a path both sides added): opens each with `identities`, merges the plaintexts
/// in memory and seals the result, markers and all, to `recipients` under a fresh file key.
/// Returns the age file and the number of conflicts. Nothing but ciphertext leaves.
pub fn merge_sealed(
    blobs: [&[u8]; 3],
    identities: &[Box<dyn Identity>],
    recipients: &[Box<dyn Recipient>],
    labels: [&str; 2],
    marker_len: usize,
) -> Result<(Vec<u8>, usize), Error> {
    if identities.is_empty() {
        return Err(Error::NoIdentityMatched);
    }
    let mut texts = Vec::with_capacity(3);
    for blob in blobs {
        texts.push(open(blob, identities)?);
    }
    let merged = merge3(&texts[0], &texts[1], &texts[2], labels, marker_len);
    let mut w = Encryptor::with_recipients(recipients, Options::age())?.wrap_output(Vec::new())?;
    w.write_all(&merged.text)?;
    Ok((w.finish()?, merged.conflicts))
}

/// The plaintext of one stored blob.
fn open(blob: &[u8], identities: &[Box<dyn Identity>]) -> Result<Zeroizing<Vec<u8>>, Error> {
    // Room for all of it at once (the plaintext is shorter than its age file): a growing
    // buffer would leave copies behind that nothing zeroizes.
    let mut text = Zeroizing::new(Vec::with_capacity(blob.len()));
    if blob.is_empty() {
        return Ok(text);
    }
    if !blob.starts_with(AGE_INTRO) {
        // Plaintext in the store (a commit that bypassed the filter) is never merged into an
        // age file as if it had been sealed: `verify` names such blobs.
        return Err(Error::InvalidArgument("a side of the merge is stored unencrypted".into()));
    }
    Decryptor::new(blob)?.into_reader(identities)?.read_to_end(&mut text)?;
    Ok(text)
}

/// The lines of `text`, each with its newline (the last may lack one).
fn lines(text: &[u8]) -> Vec<&[u8]> {
    text.split_inclusive(|b| *b == b'\n').collect()
}

/// For each line of `o`, the line of `a` it is aligned with (a longest common subsequence,
/// increasing in both), or `None` where `a` deleted or replaced it.
fn matches(o: &[&[u8]], a: &[&[u8]]) -> Vec<Option<usize>> {
    let mut m = vec![None; o.len()];
    // The common start and end need no search, and are most of a typical edit.
    let mut pre = 0;
    while pre < o.len() && pre < a.len() && o[pre] == a[pre] {
        m[pre] = Some(pre);
        pre += 1;
    }
    let mut suf = 0;
    while suf < o.len() - pre && suf < a.len() - pre && o[o.len() - 1 - suf] == a[a.len() - 1 - suf] {
        m[o.len() - 1 - suf] = Some(a.len() - 1 - suf);
        suf += 1;
    }
    let (oo, aa) = (&o[pre..o.len() - suf], &a[pre..a.len() - suf]);
    for (x, y) in myers(oo, aa) {
        m[pre + x] = Some(pre + y);
    }
    m
}

/// The equal line pairs of a shortest edit script from `o` to `a` (Myers 1986, the greedy
/// forward search, keeping each round's frontier to walk back). Empty past [`MAX_EDITS`].
fn myers(o: &[&[u8]], a: &[&[u8]]) -> Vec<(usize, usize)> {
    let (n, m) = (o.len() as isize, a.len() as isize);
    if n == 0 || m == 0 {
        return Vec::new();
    }
    let max = (n + m).min(MAX_EDITS as isize);
    let off = max + 1;
    let mut v = vec![0isize; 2 * off as usize + 1];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let mut found = None;
    'search: for d in 0..=max {
        // Only this round's reach of the frontier: the trace stays about MAX_EDITS² words.
        trace.push(v[(off - d - 1) as usize..=(off + d + 1) as usize].to_vec());
        let mut kk = -d;
        while kk <= d {
            let idx = (kk + off) as usize;
            let mut x =
                if kk == -d || (kk != d && v[idx - 1] < v[idx + 1]) { v[idx + 1] } else { v[idx - 1] + 1 };
            let mut y = x - kk;
            while x < n && y < m && o[x as usize] == a[y as usize] {
                x += 1;
                y += 1;
            }
            v[idx] = x;
            if x >= n && y >= m {
                found = Some(d);
                break 'search;
            }
            kk += 2;
        }
    }
    let Some(dmax) = found else { return Vec::new() };
    // Walk back through the frontiers: each round's snake gives its equal pairs.
    let mut pairs = Vec::new();
    let (mut x, mut y) = (n, m);
    for d in (0..=dmax).rev() {
        let vd = |k: isize| trace[d as usize][(k + d + 1) as usize];
        let kk = x - y;
        let prev_k = if kk == -d || (kk != d && vd(kk - 1) < vd(kk + 1)) { kk + 1 } else { kk - 1 };
        let prev_x = if d == 0 { 0 } else { vd(prev_k) };
        let prev_y = if d == 0 { 0 } else { prev_x - prev_k };
        let (sx, sy) = if d == 0 {
            (0, 0)
        } else if prev_k == kk + 1 {
            (prev_x, prev_y + 1)
        } else {
            (prev_x + 1, prev_y)
        };
        while x > sx && y > sy {
            x -= 1;
            y -= 1;
            pairs.push((x as usize, y as usize));
        }
        (x, y) = (prev_x, prev_y);
    }
    pairs.reverse();
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(o: &str, a: &str, b: &str) -> (String, usize) {
        let m = merge3(o.as_bytes(), a.as_bytes(), b.as_bytes(), ["ours", "theirs"], 7);
        (String::from_utf8(m.text.to_vec()).unwrap(), m.conflicts)
    }

    #[test]
    fn changes_in_different_places_merge() {
        let o = "a\nb\nc\nd\ne\n";
        assert_eq!(run(o, "A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n"), ("A\nb\nc\nd\nE\n".into(), 0));
        assert_eq!(run(o, "a\nb\nx\nc\nd\ne\n", "a\nb\nc\nd\n"), ("a\nb\nx\nc\nd\n".into(), 0));
        assert_eq!(run(o, "a\nB\nc\nd\ne\n", "a\nB\nc\nd\ne\n"), ("a\nB\nc\nd\ne\n".into(), 0));
        assert_eq!(run(o, o, "z\n"), ("z\n".into(), 0));
        assert_eq!(run("", "", "new\n"), ("new\n".into(), 0));
    }

    #[test]
    fn the_same_line_changed_twice_conflicts() {
        let (t, n) = run("k=1\nx\n", "k=2\nx\n", "k=3\nx\n");
        assert_eq!(n, 1);
        assert_eq!(t, "<<<<<<< ours\nk=2\n=======\nk=3\n>>>>>>> theirs\nx\n");
        let (t, n) = run("k=1", "k=2", "k=3");
        assert_eq!((t.as_str(), n), ("<<<<<<< ours\nk=2\n=======\nk=3\n>>>>>>> theirs\n", 1));
    }

    #[test]
    fn the_merged_text_is_one_allocation_of_its_size() {
        // A merge with conflicts is longer than either side; grown as it went, its buffer
        // would have been reallocated, leaving copies of the plaintext that nothing wipes.
        let m = merge3(b"k=1\nx\n", b"k=2\nx\n", b"k=3\nx\ny\n", ["ours", "theirs"], 7);
        assert!(m.text.len() > 2 * 8, "{}", m.text.len());
        assert_eq!(m.text.capacity(), m.text.len());
    }

    #[test]
    fn alignment_is_a_common_subsequence() {
        let o: Vec<&[u8]> = vec![b"a", b"b", b"c", b"a", b"b", b"b", b"a"];
        let a: Vec<&[u8]> = vec![b"c", b"b", b"a", b"b", b"a", b"c"];
        let p = myers(&o, &a);
        assert_eq!(p.len(), 4, "the LCS of ABCABBA and CBABAC has 4 lines");
        assert!(p.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
        assert!(p.iter().all(|&(x, y)| o[x] == a[y]));
    }
}
