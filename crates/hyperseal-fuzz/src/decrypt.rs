//! The decrypt target: every decrypt path must give the same answer for the same bytes.
//!
//! Inputs come in two shapes, told apart by the first byte:
//! - below 0x80 (every real file starts with `a`, `h`, `-` or a blank): the input *is* a file,
//!   decrypted with fixed identities (ours and the age test kit's). Mutations of the seed files
//!   (encrypted to those) reach the payload framing, since the stanza still unwraps.
//! - 0x80 and up: a recipe. The plaintext, suite, profile and armor come from the input; the
//!   target encrypts, optionally cuts, flips or extends the result, and decrypts. An untouched
//!   file must give back the plaintext on every path; a touched one must fail on every path or
//!   give back exactly the plaintext (armor's optional final newline), never anything else.

use std::io::{Cursor, Read, Seek, SeekFrom, Write};

use hyperseal::{Decryptor, Encryptor, Error, Options, Profile, Suite};

use crate::fixtures;

pub fn decrypt(data: &[u8]) {
    match data.split_first() {
        Some((&mode, rest)) if mode >= 0x80 => round_trip(mode, rest),
        _ => {
            agree(data);
        }
    }
}

/// Runs the four paths; asserts they agree; returns the plaintext if they all succeeded.
fn agree(file: &[u8]) -> Option<Vec<u8>> {
    let ids = fixtures::decrypt_ids();
    let streamed = |threads: usize| -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        Decryptor::new(file)?.threads(threads).decrypt_stream(ids, &mut out, None)?;
        Ok(out)
    };
    let sequential = streamed(1);
    let parallel = streamed(4);
    let one_shot = hyperseal::decrypt(ids, file).map(|p| p.to_vec());
    // The push-based Opener (binary files only) and the borrowed-slice path agree too.
    let pushed = || -> Result<Vec<u8>, Error> {
        let mut opener = hyperseal::Opener::new(fixtures::decrypt_ids_arc());
        let mut out = Vec::new();
        for piece in file.chunks(7777) {
            opener.update(piece, &mut out)?;
        }
        opener.finish(&mut out)?;
        Ok(out)
    };
    let mut sliced = Vec::new();
    let slice = Decryptor::from_slice(file).and_then(|d| d.threads(4).decrypt_slice(ids, &mut sliced, None));
    assert_eq!(slice.is_ok(), sequential.is_ok(), "slice path {slice:?} vs stream {}", sequential.is_ok());
    if slice.is_ok() {
        assert!(sequential.as_ref().is_ok_and(|s| *s == sliced), "slice path decrypts to other bytes");
    }
    let armored = Decryptor::new(file).map(|d| d.is_armored()).unwrap_or(false);

    let ok = |r: &Result<Vec<u8>, Error>| r.is_ok();
    let show = |r: &Result<Vec<u8>, Error>| match r {
        Ok(p) => format!("Ok({} bytes)", p.len()),
        Err(e) => format!("Err({e})"),
    };
    assert_eq!(
        (ok(&sequential), ok(&one_shot)),
        (ok(&parallel), ok(&parallel)),
        "sequential {}, parallel {}, one-shot {}",
        show(&sequential),
        show(&parallel),
        show(&one_shot)
    );
    if let (Err(a), Err(b)) = (&sequential, &parallel) {
        // The same pipeline on 1 and 4 threads must fail the same way.
        assert_eq!(a.to_string(), b.to_string(), "sequential and parallel fail differently");
    }
    let plain = match (sequential, parallel, one_shot) {
        (Ok(a), Ok(b), Ok(c)) => {
            assert!(a == b && a == c, "paths decrypt to different plaintexts");
            Some(a)
        }
        _ => None,
    };
    if !armored {
        seek_agrees(file, plain.as_deref());
        let p = pushed();
        assert_eq!(p.is_ok(), plain.is_some(), "Opener {p:?} vs stream {}", plain.is_some());
        if let (Ok(p), Some(q)) = (&p, &plain) {
            assert!(p == q, "Opener decrypts to other bytes");
        }
    }
    plain
}

/// The seekable reader (which authenticates the final chunk first) reads the whole plaintext
/// and two suffixes of it exactly when the streaming paths succeed.
fn seek_agrees(file: &[u8], plain: Option<&[u8]>) {
    let ids = fixtures::decrypt_ids();
    let read_from = |at: u64| -> Result<Vec<u8>, Error> {
        let mut r = Decryptor::new(Cursor::new(file))?.into_reader(ids)?;
        r.seek(SeekFrom::Start(at)).map_err(Error::from)?;
        let mut out = Vec::new();
        r.read_to_end(&mut out).map_err(Error::from)?;
        Ok(out)
    };
    match plain {
        Some(p) => {
            for at in [0, p.len() / 3, p.len() * 2 / 3, p.len()] {
                let got = read_from(at as u64).unwrap_or_else(|e| panic!("seek to {at} failed: {e}"));
                assert!(got == p[at..], "seek to {at} read other bytes");
            }
        }
        None => assert!(read_from(0).is_err(), "the seek path opened a file the stream paths refuse"),
    }
}

fn round_trip(mode: u8, rest: &[u8]) {
    let Some((file, plain, touched)) = recipe(mode, rest, false) else { return };
    match agree(&file) {
        Some(got) => assert!(got == plain, "decrypted to a different plaintext (touched: {touched})"),
        None => assert!(touched, "an untouched file failed to decrypt"),
    }
}

/// The file a recipe makes (see the module docs), its plaintext, and whether it was touched
/// after encryption. `binary_only` ignores the recipe's armor flag (for the push-based Opener).
pub(crate) fn recipe(mode: u8, rest: &[u8], binary_only: bool) -> Option<(Vec<u8>, Vec<u8>, bool)> {
    let [flags, l0, l1, m0, m1, seed @ ..] = rest else { return None };
    let profile = if flags & 1 == 1 { Profile::Age } else { Profile::Hyperseal };
    let suite = Suite::ALL[usize::from(flags >> 1) % Suite::ALL.len()];
    let armor = flags & 0x08 != 0 && !binary_only;
    // Up to ~96 KiB: six 16 KiB chunks, or one and a half 64 KiB (age) chunks.
    let len = usize::from(u16::from_le_bytes([*l0, *l1])) % 98_305;
    let plain: Vec<u8> =
        if seed.is_empty() { vec![0; len] } else { seed.iter().copied().cycle().take(len).collect() };

    let opts = match profile {
        Profile::Age => Options::age(),
        _ => Options { suite, chunk_size: 16 << 10, ..Options::default() },
    };
    let enc = Encryptor::with_recipients(fixtures::x25519_recipient(), opts).expect("valid options");
    let mut file = Vec::new();
    if armor {
        let mut w = hyperseal::armored(&mut file, profile);
        enc.encrypt_stream(&mut &plain[..], &mut w, None).expect("encrypt");
        w.finish().expect("armor");
    } else {
        enc.encrypt_stream(&mut &plain[..], &mut file, None).expect("encrypt");
    }

    let at = usize::from(u16::from_le_bytes([*m0, *m1]));
    let touched = match mode & 0x60 {
        0x00 => false,
        0x20 => {
            file.truncate(file.len().saturating_sub(1 + at % 4096));
            true
        }
        0x40 => {
            let i = at * 7 % file.len();
            file[i] ^= 1 << (mode & 7);
            true
        }
        _ => {
            file.write_all(&seed[..seed.len().min(1 + at % 64)]).unwrap();
            !seed.is_empty()
        }
    };
    Some((file, plain, touched))
}
