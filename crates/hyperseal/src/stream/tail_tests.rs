//! What each engine releases before its error when a payload's end is wrong. A full chunk that
//! authenticates under the other final flag is the sender's own, at its own index: it goes out
//! first and the error names what is wrong around it, as age's readers do. A chunk that does
//! not authenticate is never released, nor is anything after it.

use std::io::Read;

use zeroize::Zeroizing;

use super::*;

const CHUNK: usize = 16 << 10;

fn cipher() -> ChunkCipher {
    ChunkCipher::new(Suite::ChaCha20Poly1305, CHUNK, &Zeroizing::new([7u8; 32])).unwrap()
}

fn text(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

/// Chunks sealed one by one at indices 0.., each with the final flag given.
fn sealed(chunks: &[(&[u8], bool)]) -> Vec<u8> {
    let c = cipher();
    let mut out = Vec::new();
    for (i, (pt, last)) in chunks.iter().enumerate() {
        let mut buf = vec![0u8; pt.len() + TAG_LEN];
        c.seal_to(i as u64, *last, pt, &mut buf).unwrap();
        out.extend(buf);
    }
    out
}

/// What every path released from `payload`, and its error: the pull reader, the stream engine
/// from a reader and from a slice, and the push opener fed whole and in 1000-byte pieces; on
/// the calling thread and on two.
fn every_engine(payload: &[u8]) -> Vec<(String, Vec<u8>, Error)> {
    let mut got = Vec::new();
    for threads in [1, 2] {
        let mut out = Vec::new();
        let e = ChunkReader::new(payload, cipher(), threads).read_to_end(&mut out).unwrap_err();
        got.push((format!("reader t={threads}"), out, Error::from(e)));

        let mut out = Vec::new();
        let e = stream(&cipher(), Dir::Open, Input::Reader(&mut &payload[..]), &mut out, threads, None);
        got.push((format!("stream from a reader t={threads}"), out, e.unwrap_err()));

        let mut out = Vec::new();
        let e = stream(&cipher(), Dir::Open, Input::Slice(payload), &mut out, threads, None);
        got.push((format!("stream from a slice t={threads}"), out, e.unwrap_err()));

        for piece in [payload.len().max(1), 1000] {
            let mut out = Vec::new();
            let mut o = PayloadOpener::new(cipher(), threads);
            let e = payload
                .chunks(piece)
                .try_for_each(|p| o.update(p, &mut out))
                .and_then(|()| o.finish(&mut out));
            got.push((format!("push in {piece}-byte pieces t={threads}"), out, e.unwrap_err()));
        }
    }
    got
}

fn check(payload: &[u8], released: &[u8], error: fn(&Error) -> bool) {
    for (path, out, e) in every_engine(payload) {
        assert!(out == released, "{path}: released {} bytes, expected {}", out.len(), released.len());
        assert!(error(&e), "{path}: {e:?}");
    }
}

#[test]
fn a_payload_cut_at_a_chunk_boundary_releases_its_chunks_then_says_truncated() {
    let (a, b) = (text(CHUNK, 1), text(CHUNK, 2));
    check(&sealed(&[(&a, false)]), &a, |e| matches!(e, Error::Truncated(0)));
    check(&sealed(&[(&a, false), (&b, false)]), &[a.clone(), b.clone()].concat(), |e| {
        matches!(e, Error::Truncated(1))
    });
}

#[test]
fn data_after_a_full_final_chunk_is_refused_after_the_chunk() {
    let (a, b) = (text(CHUNK, 3), text(CHUNK, 4));
    let mut junk = sealed(&[(&a, true)]);
    junk.extend_from_slice(b"trailing");
    check(&junk, &a, |e| matches!(e, Error::ChunkAuth(1)));
    // Two final chunks: the second is refused, the first is released.
    check(&sealed(&[(&a, true), (&b[..100], true)]), &a, |e| matches!(e, Error::ChunkAuth(1)));
    check(&sealed(&[(&b, false), (&a, true), (&b[..17], true)]), &[b.clone(), a.clone()].concat(), |e| {
        matches!(e, Error::ChunkAuth(2))
    });
    // The final chunk as the last slot of a batch that is not the stream's last (the stream
    // engine's first batches hold 128 KiB: eight of these chunks), junk in the next batch.
    let mut chunks: Vec<(&[u8], bool)> = vec![(&b[..], false); 7];
    chunks.push((&a[..], true));
    let mut p = sealed(&chunks);
    p.extend_from_slice(&[0x55; 30]);
    let released: Vec<u8> = chunks.iter().flat_map(|(c, _)| c.iter().copied()).collect();
    check(&p, &released, |e| matches!(e, Error::ChunkAuth(8)));
}

#[test]
fn a_chunk_that_fails_both_ways_is_never_released() {
    let (a, b) = (text(CHUNK, 5), text(CHUNK, 6));
    // A full final chunk with one bit flipped: neither flag opens it.
    let mut p = sealed(&[(&a, false), (&b, true)]);
    let at = p.len() - 100;
    p[at] ^= 1;
    check(&p, &a, |e| matches!(e, Error::ChunkAuth(1)));
    // A damaged full chunk in the middle: what comes after it is not released either.
    let mut p = sealed(&[(&a, false), (&b, false), (&a[..10], true)]);
    p[CHUNK + TAG_LEN + 5] ^= 1;
    check(&p, &a, |e| matches!(e, Error::ChunkAuth(1)));
}
