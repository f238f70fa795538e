//! C2SP chunked encryption (pyca's Cobblestone): every reader — the one-shot decrypt, the
//! push-based `Decryptor` fed in pieces, the streaming pipeline on 1 and 2 threads, and the
//! seekable `Reader` — gives the same answer for the same bytes.
//!
//! First byte: bit 0 picks the key (16 or 32 bytes), bits 1–3 the context length (0–7 bytes,
//! which follow); then a cut seed (see [`crate::split`]). Below 0x80 the rest is a message as it
//! is; from 0x80 it is a recipe: a plaintext is encrypted (one-shot, push or stream), then maybe
//! cut, flipped or extended. An untouched message opens to its plaintext on every path; a
//! touched one on none, and no path ever releases a byte that is not the plaintext's.

use std::io::{Cursor, Read, Seek, SeekFrom, Write};

use hyperseal::c2sp::{self, Decryptor, Encryptor, Key, Reader};
use hyperseal::Error;

use crate::split::{pieces, seed};

fn key(bit: u8) -> Key {
    let bytes: Vec<u8> = (0..if bit == 0 { 16 } else { 32 }).map(|i| i as u8 ^ 0x5c).collect();
    Key::from_bytes(&bytes).expect("16 or 32 bytes")
}

pub fn c2sp(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else { return };
    let key = key(flags & 1);
    let (context, rest) = rest.split_at(usize::from((flags >> 1) & 7).min(rest.len()));
    let (seed, rest) = seed(rest);
    let _ = c2sp::opened_len(rest.len() as u64);
    if flags < 0x80 {
        let _ = agree(&key, context, seed, rest);
        return;
    }
    let Some((message, plain, touched)) = recipe(&key, context, seed, rest) else { return };
    let (got, released) = agree(&key, context, seed, &message);
    assert!(plain.starts_with(&released), "a reader released bytes that are not the plaintext");
    match got {
        Some(p) => {
            assert!(!touched, "a touched message opened");
            assert!(p == plain, "a message opened to other bytes");
        }
        None => assert!(touched, "an untouched message failed to open"),
    }
}

/// Runs every reader; asserts they agree. Returns the plaintext if they opened the message,
/// and what the push decryptor released before it failed (or everything).
fn agree(key: &Key, context: &[u8], seed: &[u8], message: &[u8]) -> (Option<Vec<u8>>, Vec<u8>) {
    let one_shot = c2sp::decrypt(key, context, message);
    let (mut released, mut pushed) = (Vec::new(), Ok(()));
    match Decryptor::new(key, context) {
        Err(e) => pushed = Err(e),
        Ok(mut dec) => {
            for piece in pieces(message, seed) {
                pushed = dec.update(piece, &mut released);
                if pushed.is_err() {
                    break;
                }
            }
            if pushed.is_ok() {
                pushed = dec.finish(&mut released);
            }
        }
    }
    let stream = |threads: usize| -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        c2sp::decrypt_stream(key, context, &mut &message[..], &mut out, threads)?;
        Ok(out)
    };
    let (s1, s2) = (stream(1), stream(2));
    let seek = Reader::new(key, context, Cursor::new(message)).and_then(|r| {
        let mut r = r.threads(1);
        let len = r.len();
        let mut all = Vec::new();
        r.read_to_end(&mut all)?;
        // A suffix from a seek reads the same bytes as the whole.
        let at = len / 3;
        r.seek(SeekFrom::Start(at))?;
        let mut tail = Vec::new();
        r.read_to_end(&mut tail)?;
        assert!(tail[..] == all[at as usize..], "the Reader reads other bytes after a seek");
        Ok(all)
    });
    let oks = [one_shot.is_ok(), pushed.is_ok(), s1.is_ok(), s2.is_ok(), seek.is_ok()];
    assert!(
        oks.iter().all(|&o| o == oks[0]),
        "one-shot, push, stream(1), stream(2), seek disagree: {oks:?} ({:?})",
        one_shot.as_ref().err()
    );
    let Ok(p) = one_shot else { return (None, released) };
    for (name, other) in
        [("push", Ok(released.clone())), ("stream(1)", s1), ("stream(2)", s2), ("seek", seek)]
    {
        assert!(other.as_ref().is_ok_and(|o| *o == p), "{name} opened to other bytes");
    }
    (Some(p), released)
}

/// The message a recipe makes, its plaintext, and whether it was touched after encryption.
fn recipe(key: &Key, context: &[u8], seed: &[u8], rest: &[u8]) -> Option<(Vec<u8>, Vec<u8>, bool)> {
    let [how, l0, l1, m0, m1, fill @ ..] = rest else { return None };
    // Up to 3 chunks and a bit, so the final-chunk rules and chunk boundaries are all reached.
    let len = usize::from(u16::from_le_bytes([*l0, *l1])) % (3 * c2sp::CHUNK + 100);
    let plain: Vec<u8> =
        if fill.is_empty() { vec![0; len] } else { fill.iter().copied().cycle().take(len).collect() };
    let mut message = Vec::new();
    match how & 3 {
        0 => message = c2sp::encrypt(key, context, &plain).expect("encrypt"),
        1 => {
            let mut enc = Encryptor::new(key, context).expect("encryptor");
            for piece in pieces(&plain, seed) {
                enc.update(piece, &mut message).expect("update");
            }
            enc.finish(&mut message).expect("finish");
        }
        _ => {
            let threads = usize::from(how & 1) + 1;
            c2sp::encrypt_stream(key, context, &mut &plain[..], &mut message, threads).expect("stream");
        }
    }
    assert_eq!(message.len() as u64, c2sp::sealed_len(plain.len() as u64));
    let at = usize::from(u16::from_le_bytes([*m0, *m1]));
    let touched = match (how >> 2) & 3 {
        0 => false,
        1 => {
            message.truncate(message.len().saturating_sub(1 + at % 4096));
            true
        }
        2 => {
            let i = at * 7 % message.len();
            message[i] ^= 1 << (how >> 5);
            true
        }
        _ => {
            message.write_all(&fill[..fill.len().min(1 + at % 64)]).unwrap();
            !fill.is_empty()
        }
    };
    Some((message, plain, touched))
}
