//! `parts` part keys: `PartKey::from_bytes` on any bytes, and on layouts the target
//! MACs itself (as `to_bytes` does, under the key it chose), so that every geometry — absurd
//! chunk sizes, offsets near 2^64, empty payloads — reaches the checks behind the MAC.

use hyperseal::parts::PartKey;
use hyperseal::Suite;
use ring::{hkdf, hmac};

const MAGIC: &[u8] = b"hs-part2";
const TAG: u64 = 16;

/// The bytes `to_bytes` would give for this layout and key.
fn key_bytes(role: u8, suite: &str, chunk: u32, start: u64, len: u64, key: &[u8; 32]) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.push(role);
    out.push(suite.len() as u8);
    out.extend_from_slice(suite.as_bytes());
    out.extend_from_slice(&chunk.to_be_bytes());
    out.extend_from_slice(&start.to_be_bytes());
    out.extend_from_slice(&len.to_be_bytes());
    let mut mac_key = [0u8; 32];
    hkdf::Salt::new(hkdf::HKDF_SHA256, &[])
        .extract(key)
        .expand(&[b"hyperseal/v1 part key layout"], hkdf::HKDF_SHA256)
        .and_then(|okm| okm.fill(&mut mac_key))
        .expect("32 bytes");
    let mac = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, &mac_key), &out);
    out.extend_from_slice(key);
    out.extend_from_slice(mac.as_ref());
    out
}

/// Reads integers off the input, zeros when it runs out.
struct Take<'a>(&'a [u8]);
impl Take<'_> {
    fn u64(&mut self, n: usize) -> u64 {
        let (head, tail) = self.0.split_at(n.min(self.0.len()));
        self.0 = tail;
        head.iter().fold(0, |v, &b| (v << 8) | u64::from(b))
    }
}

pub fn part_key(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else { return };
    if mode < 0x80 {
        // Any bytes: refused, or read back to exactly themselves.
        if let Ok(k) = PartKey::from_bytes(rest) {
            assert!(k.to_bytes()[..] == *rest, "a part key has a second spelling");
        }
        return;
    }
    let mut t = Take(rest);
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&t.u64(8).to_be_bytes());
    let role = (mode & 1) | if mode & 0x40 != 0 { t.u64(1) as u8 } else { 0 };
    let suite = Suite::ALL[usize::from(mode >> 1) % Suite::ALL.len()].name();
    let shape = t.u64(1);
    // Mostly valid chunk sizes (16 KiB, 64 KiB, 1 MiB); now and then any u32.
    let chunk = match shape % 4 {
        0 => 16 << 10,
        1 => 64 << 10,
        2 => 1 << 20,
        _ => t.u64(4) as u32,
    };
    // Small geometries most of the time; any 64-bit value when asked.
    let start = if shape & 0x10 != 0 { t.u64(8) } else { t.u64(2) };
    let len = if shape & 0x20 != 0 { t.u64(8) } else { t.u64(3) % 200_000 };
    let bytes = key_bytes(role, suite, chunk, start, len, &key);
    let Ok(k) = PartKey::from_bytes(&bytes) else { return };
    assert!(k.to_bytes()[..] == bytes[..], "to_bytes does not give back what from_bytes read");
    // Any edit of a byte is refused (the layout is MACed, the key and MAC must match).
    let at = (t.u64(2) as usize) % bytes.len();
    let mut edited = bytes.clone();
    edited[at] ^= 1 << (t.u64(1) % 8);
    assert!(PartKey::from_bytes(&edited).is_err(), "an edited part key (byte {at}) was accepted");

    let (chunk, plain_len, file_len) = (k.chunk_size() as u64, k.plaintext_len(), k.file_len());
    assert_eq!(file_len, start + len);
    let full = chunk + TAG;
    let chunks = len.div_ceil(full).max(1);
    // A plan of a bounded number of parts covers the file, in order, without gaps.
    let per = t.u64(1) % 4 + 1;
    if chunks.div_ceil(per) <= 4096 {
        let plan = k.plan(per * chunk).expect("a multiple of the chunk size is a valid part size");
        assert!(!plan.is_empty());
        let (mut at_file, mut at_plain) = (start, 0);
        for (i, p) in plan.iter().enumerate() {
            assert_eq!(p.first_chunk, i as u64 * per);
            assert_eq!((p.file.start, p.plaintext.start), (at_file, at_plain), "a gap in the plan");
            (at_file, at_plain) = (p.file.end, p.plaintext.end);
        }
        assert_eq!((at_file, at_plain), (file_len, plain_len), "the plan does not reach the end");
    }
    // Bounds checks on any part the caller may ask for: an error, never a panic or a wrap.
    let first = if t.u64(1) & 1 == 1 { t.u64(8) } else { t.u64(1) };
    let n = t.u64(3) as usize;
    let _ = k.sealed_len(first, n);
    let _ = k.opened_len(n);
    for sealing in [true, false] {
        if let Ok(calls) = k.chunk_calls(first, n, sealing) {
            assert!(!calls.is_empty(), "a part with no AEAD call");
            let (mut i, mut o) = (0, 0);
            for c in &calls {
                assert_eq!((c.input.start, c.output.start), (i, o), "calls leave a gap");
                (i, o) = (c.input.end, c.output.end);
            }
            assert_eq!(i, n, "the calls do not cover the part");
        }
    }
    let garbage = vec![0u8; n.min(1 << 16)];
    assert!(k.open(first, &garbage).is_err(), "zeros opened as a part");
    // Only a layout `seal_new` could have made (payload = plaintext + one tag per chunk).
    let consistent = len == plain_len + TAG * plain_len.div_ceil(chunk).max(1);
    if role != 0 || plain_len > 200_000 || !consistent {
        return;
    }
    // A sealing key: seal every part of a plan, then open them with the opening key of the
    // same layout; the concatenation opens as a whole too.
    let plain: Vec<u8> = (0..plain_len).map(|i| (i as u8) ^ mode).collect();
    let open_key = PartKey::from_bytes(&key_bytes(1, suite, chunk as u32, start, len, &key))
        .expect("the opening twin of a valid sealing key");
    let mut payload = Vec::new();
    for p in k.plan(chunk).expect("one chunk per part") {
        let pt = &plain[p.plaintext.start as usize..p.plaintext.end as usize];
        let sealed = k.seal(p.first_chunk, pt).expect("a planned part seals");
        assert_eq!(sealed.len() as u64, p.file.end - p.file.start, "a sealed part of another size");
        let opened = open_key.open(p.first_chunk, &sealed).expect("a sealed part opens");
        assert!(opened[..] == *pt, "a part opened to other bytes");
        payload.extend_from_slice(&sealed);
    }
    let whole = open_key.open(0, &payload).expect("the whole payload opens");
    assert!(whole[..] == plain[..]);
}
