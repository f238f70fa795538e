//! Hostile inputs against every reader of the library, each under a measured memory budget: an
//! endless stanza body (binary and armored, from a reader that never ends), one endless line,
//! endless stanzas, a header pushed a byte at a time; and property tests over random hostile
//! headers (every reader's peak allocation stays within the budget) and random part plans (no
//! path seals two different plaintexts under one key and nonce).
//!
//! Allocation is counted per thread by a global allocator of this test binary, so tests running
//! in parallel do not see each other's memory.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::HashMap;
use std::io::{BufReader, Cursor, Read};

use hyperseal::format::armor::{ArmorDecoder, ArmoredReader};
use hyperseal::format::Header;
use hyperseal::parts::PartKey;
use hyperseal::{limits, recipient, Decryptor, Error, Kind, Opener, Options, Suite};
use proptest::prelude::*;

struct Counting;

thread_local! {
    static NOW: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counters are plain thread-locals (const
// initialised, so touching them never allocates).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        grow(l.size() as isize);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        grow(-(l.size() as isize));
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        grow(new as isize - l.size() as isize);
        unsafe { System.realloc(p, l, new) }
    }
}

fn grow(by: isize) {
    let _ = NOW.try_with(|now| {
        let n = now.get().saturating_add_signed(by);
        now.set(n);
        let _ = PEAK.try_with(|p| p.set(p.get().max(n)));
    });
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Runs `f` and returns its result and the most memory it held at once on this thread.
fn peak<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = NOW.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let out = f();
    (out, PEAK.with(Cell::get) - base)
}

/// What any reader may hold for a header: its budget, plus buffers and copies of it.
const BUDGET: usize = 4 * limits::HEADER_BYTES + (1 << 20);

/// A reader that yields `head` and then `line` forever.
struct Endless {
    head: Cursor<Vec<u8>>,
    line: Vec<u8>,
    at: usize,
    served: u64,
}

impl Endless {
    fn new(head: &[u8], line: &[u8]) -> Self {
        Endless { head: Cursor::new(head.to_vec()), line: line.to_vec(), at: 0, served: 0 }
    }
}

impl Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = match self.head.read(buf)? {
            0 => {
                let n = buf.len().min(self.line.len() - self.at);
                buf[..n].copy_from_slice(&self.line[self.at..self.at + n]);
                self.at = (self.at + n) % self.line.len();
                n
            }
            n => n,
        };
        self.served += n as u64;
        Ok(n)
    }
}

/// The base64 armor of a binary stream, produced as it is read (never ends if its input does not).
struct ArmorOf<R> {
    inner: R,
    out: Vec<u8>,
    at: usize,
    begun: bool,
}

impl<R: Read> Read for ArmorOf<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use base64::Engine;
        if self.at == self.out.len() {
            self.out.clear();
            self.at = 0;
            if !self.begun {
                self.out.extend_from_slice(b"-----BEGIN AGE ENCRYPTED FILE-----\n");
                self.begun = true;
            }
            let mut bin = [0u8; 48];
            self.inner.read_exact(&mut bin)?;
            self.out.extend_from_slice(base64::engine::general_purpose::STANDARD.encode(bin).as_bytes());
            self.out.push(b'\n');
        }
        let n = buf.len().min(self.out.len() - self.at);
        buf[..n].copy_from_slice(&self.out[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

const AGE: &[u8] = b"age-encryption.org/v1\n";

/// The counter sees what this thread holds (and so would see a reader's blow-up).
#[test]
fn the_counter_counts() {
    let (v, used) = peak(|| vec![1u8; 10 << 20]);
    assert!(used >= 10 << 20 && v.len() == 10 << 20);
    let (_, used) = peak(|| drop(vec![1u8; 1 << 10]));
    assert!(used < 1 << 20);
}

fn is_limit<T>(r: &Result<T, Error>) -> bool {
    matches!(r, Err(Error::Limit(_)))
}

#[test]
fn an_endless_stanza_body_stops_at_the_budget() {
    let head = [AGE, b"-> X25519 AAAA\n"].concat();
    let ((r, served), used) = peak(|| {
        let mut input =
            BufReader::new(Endless::new(&head, &[b'A'; 64].iter().chain(b"\n").copied().collect::<Vec<_>>()));
        let r = Decryptor::new(&mut input).map(|_| ());
        (r, input.get_ref().served)
    });
    assert!(is_limit(&r), "{r:?}");
    assert!(served < 2 * limits::HEADER_BYTES as u64, "read {served} bytes");
    assert!(used < BUDGET, "held {used} bytes");
}

#[test]
fn an_endless_armored_stanza_body_stops_at_the_budget() {
    let head = [AGE, b"-> X25519 AAAA\n"].concat();
    let body: Vec<u8> = [b'A'; 64].iter().chain(b"\n").copied().collect();
    let (r, used) = peak(|| {
        let armored = ArmorOf { inner: Endless::new(&head, &body), out: Vec::new(), at: 0, begun: false };
        Decryptor::new(BufReader::new(armored)).map(|_| ())
    });
    assert!(is_limit(&r), "{r:?}");
    assert!(used < BUDGET, "held {used} bytes");
}

#[test]
fn endless_lines_and_stanzas_stop_at_the_budget() {
    // One line that never ends.
    let (r, used) = peak(|| Header::read_from(&mut BufReader::new(Endless::new(AGE, b"A"))));
    assert!(is_limit(&r), "{r:?}");
    assert!(used < BUDGET, "held {used} bytes");
    // Stanzas that never end, each small.
    let (r, used) =
        peak(|| Header::read_from(&mut BufReader::new(Endless::new(AGE, b"-> X25519 AAAA\nAAAA\n"))));
    assert!(is_limit(&r), "{r:?}");
    assert!(used < BUDGET, "held {used} bytes");
    // A stanza body just past its own limit, in an otherwise small header.
    let mut file = [AGE, b"-> X25519 AAAA\n"].concat();
    for _ in 0..limits::STANZA_BODY / 48 + 1 {
        file.extend_from_slice(&[b'A'; 64]);
        file.push(b'\n');
    }
    file.extend_from_slice(b"\n--- AAAA\n");
    let r = Header::read_from(&mut &file[..]);
    assert!(matches!(&r, Err(Error::Limit(m)) if m.contains("stanza body")), "{r:?}");
}

/// Push-based readers: the Opener and the armor decoder, fed a header that never ends, a line at
/// a time (the Opener must not re-parse its whole buffer at every piece).
#[test]
fn push_readers_stop_at_the_budget() {
    let id = recipient::generate(Kind::X25519).unwrap();
    let ids = recipient::parse_identities(&id.secret).unwrap();
    let mut input = Endless::new(&[AGE, b"-> X25519 AAAA\n"].concat(), &[&[b'A'; 64][..], b"\n"].concat());
    let (r, used) = peak(|| {
        let mut opener = Opener::new(ids.into());
        let mut piece = [0u8; 65];
        let mut out = Vec::new();
        loop {
            input.read_exact(&mut piece).unwrap();
            if let Err(e) = opener.update(&piece, &mut out) {
                return (e, input.served);
            }
            assert!(input.served < 4 * limits::HEADER_BYTES as u64, "still reading");
        }
    });
    assert!(matches!(r.0, Error::Limit(_)), "{:?}", r.0);
    assert!(used < BUDGET, "held {used} bytes");
    // The armor decoder holds one line, whatever arrives.
    let (r, used) = peak(|| {
        let mut dec = ArmorDecoder::new();
        let mut out = Vec::new();
        dec.update(b"-----BEGIN AGE ENCRYPTED FILE-----\n", &mut out).unwrap();
        let junk = [b'A'; 4096];
        (0..1024).find_map(|_| dec.update(&junk, &mut out).err())
    });
    assert!(matches!(r, Some(Error::Limit(_))), "{r:?}");
    assert!(used < 1 << 20, "held {used} bytes");
    let r = Decryptor::new(BufReader::new(Endless::new(b"-----BEGIN AGE ENCRYPTED FILE-----\n", b"A")));
    assert!(is_limit(&r.map(|_| ())));
    let r = ArmoredReader::new(BufReader::new(Endless::new(b"-----BEGIN AGE ENCRYPTED FILE-----\n", b"A")))
        .read(&mut [0u8; 64]);
    assert!(r.is_err_and(|e| Error::from(e).code() == hyperseal::ErrorCode::Limit));
}

/// Key texts: identity and recipients files, one recipient, one PEM or OpenSSH key.
#[test]
fn key_texts_stop_at_the_budget() {
    let id = recipient::generate(Kind::X25519).unwrap();
    let many = format!("{}\n", id.secret.as_str()).repeat(limits::KEY_FILE / id.secret.len() + 1);
    let r = recipient::parse_identities(&many);
    assert!(matches!(&r, Err(Error::Limit(m)) if m.contains("identity file")), "{:?}", r.err());
    let many = format!("{}\n", id.public).repeat(limits::KEY_FILE / id.public.len() + 1);
    let r = recipient::parse_recipients_file(&many);
    assert!(matches!(&r, Err(Error::Limit(m)) if m.contains("recipients file")), "{:?}", r.err());
    let long = format!("ssh-ed25519 {}", "A".repeat(limits::KEY_TEXT));
    assert!(matches!(recipient::parse_recipient(&long), Err(Error::Limit(_))));
    for begin in ["-----BEGIN OPENSSH PRIVATE KEY-----", "-----BEGIN PRIVATE KEY-----"] {
        let pem = format!("{begin}\n{}", "AAAA\n".repeat(limits::KEY_TEXT / 5 + 1));
        let r = recipient::parse_identities(&pem);
        assert!(matches!(&r, Err(Error::Limit(m)) if m.contains("PEM")), "{begin}: {:?}", r.err());
    }
    // Within the budget, the same kinds still parse.
    let some = format!("{}\n", id.secret.as_str()).repeat(1000);
    assert_eq!(recipient::parse_identities(&some).unwrap().len(), 1000);
}

/// Random hostile headers: stanzas whose bodies run to several times the budget, stanzas
/// without end, very long lines, MAC lines and garbage, in any order.
fn hostile_header() -> impl Strategy<Value = Vec<u8>> {
    let end = prop_oneof![
        Just(b"AAAA\n".to_vec()),
        Just(b"--- AAAA\n".to_vec()),
        Just(Vec::new()),
        (1usize..200_000).prop_map(|n| [vec![b'A'; n], b"\n".to_vec()].concat()),
        proptest::collection::vec(any::<u8>(), 0..100),
    ];
    let stanza = (0usize..6 * limits::HEADER_BYTES / 65, end);
    (proptest::collection::vec(stanza, 1..6), any::<bool>()).prop_map(|(stanzas, hs)| {
        let mut out = if hs { b"hyperseal/v1\nparams aes-256-gcm 65536\n".to_vec() } else { AGE.to_vec() };
        for (body_lines, end) in stanzas {
            out.extend_from_slice(b"-> X25519 AAAA\n");
            for _ in 0..body_lines {
                out.extend_from_slice(&[b'A'; 64]);
                out.push(b'\n');
            }
            out.extend_from_slice(&end);
        }
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Whatever the header, every reader returns (an error or a header) within the budget.
    #[test]
    fn every_reader_stays_within_the_budget(file in hostile_header(), piece in 1usize..70_000) {
        let id = recipient::generate(Kind::X25519).unwrap();
        let (_, used) = peak(|| Header::read_from(&mut &file[..]).map(|_| ()));
        prop_assert!(used < BUDGET, "read_from held {}", used);
        let (_, used) = peak(|| Header::parse_prefix(&file).map(|_| ()));
        prop_assert!(used < BUDGET, "parse_prefix held {}", used);
        let (_, used) = peak(|| {
            let mut o = Opener::new(recipient::parse_identities(&id.secret).unwrap().into());
            let mut out = Vec::new();
            file.chunks(piece).try_for_each(|p| o.update(p, &mut out))
        });
        prop_assert!(used < BUDGET, "Opener held {}", used);
        let ids = recipient::parse_identities(&id.secret).unwrap();
        let (_, used) = peak(|| PartKey::open_file(&mut &file[..], file.len() as u64, &ids).map(|_| ()));
        prop_assert!(used < BUDGET, "PartKey::open_file held {}", used);
    }

    /// Any two plans of one file seal every chunk index with one nonce over one plaintext range,
    /// and give the same bytes: re-planning or retrying never puts other plaintext under a nonce.
    #[test]
    fn no_plan_reuses_a_nonce(len in 0usize..600_000, shift in 14u32..17, a in 1u64..8, b in 1u64..8) {
        let id = recipient::generate(Kind::X25519).unwrap();
        let to = [recipient::parse_recipient(&id.public).unwrap()];
        let chunk = 1usize << shift;
        let opts = Options { chunk_size: chunk, suite: Suite::Aes256Gcm, ..Options::default() };
        let (_, key) = PartKey::seal_new(&to, opts, len as u64).unwrap();
        let pt: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let mut seen: HashMap<[u8; 12], (u64, u64)> = HashMap::new();
        let mut sealed = [Vec::new(), Vec::new()];
        for (n, per) in [a, b].into_iter().enumerate() {
            for part in key.plan(per * chunk as u64).unwrap() {
                let input = &pt[part.plaintext.start as usize..part.plaintext.end as usize];
                for c in key.chunk_calls(part.first_chunk, input.len(), true).unwrap() {
                    let at = part.plaintext.start;
                    let range = (at + c.input.start as u64, at + c.input.end as u64);
                    let first = *seen.entry(c.nonce).or_insert(range);
                    prop_assert_eq!(first, range, "nonce {:?} over two ranges", c.nonce);
                }
                sealed[n].extend_from_slice(&key.seal(part.first_chunk, input).unwrap());
            }
        }
        prop_assert!(sealed[0] == sealed[1]);
    }
}
