use std::io::Cursor;

use super::*;
use crate::recipient::{self, Kind};
use crate::{decrypt::decrypt, format::Profile};

const CHUNK: usize = 16 << 10;

type Keys = (Vec<Box<dyn Recipient>>, Vec<Box<dyn Identity>>);

fn keypair() -> Keys {
    let id = recipient::generate(Kind::X25519).unwrap();
    (vec![recipient::parse_recipient(&id.public).unwrap()], recipient::parse_identities(&id.secret).unwrap())
}

fn opts(suite: Suite) -> Options {
    Options { suite, chunk_size: CHUNK, ..Options::default() }
}

/// Seals `pt` part by part, in the order given by `order` (a permutation of the part indices).
fn seal_parts(key: &PartKey, head: &[u8], pt: &[u8], part_size: u64, reverse: bool) -> Vec<u8> {
    let plan = key.plan(part_size).unwrap();
    let mut file = vec![0u8; key.file_len() as usize];
    file[..head.len()].copy_from_slice(head);
    let mut order: Vec<&Part> = plan.iter().collect();
    if reverse {
        order.reverse();
    }
    for part in order {
        let sealed = key
            .seal(part.first_chunk, &pt[part.plaintext.start as usize..part.plaintext.end as usize])
            .unwrap();
        assert_eq!(sealed.len() as u64, part.file.end - part.file.start);
        file[part.file.start as usize..part.file.end as usize].copy_from_slice(&sealed);
    }
    file
}

fn open_parts(file: &[u8], ids: &[Box<dyn Identity>], part_size: u64) -> Result<Vec<u8>, Error> {
    let key = PartKey::open_file(&mut Cursor::new(file), file.len() as u64, ids)?;
    let mut out = Vec::new();
    for part in key.plan(part_size)? {
        out.extend_from_slice(
            &key.open(part.first_chunk, &file[part.file.start as usize..part.file.end as usize])?,
        );
    }
    assert_eq!(out.len() as u64, key.plaintext_len());
    Ok(out)
}

#[test]
fn parts_make_an_ordinary_file_and_open_it_again() {
    let (to, ids) = keypair();
    for suite in [Suite::Aes256Gcm, Suite::ChaCha20Poly1305] {
        for len in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK, 5 * CHUNK + 7] {
            let pt: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            for part_size in [CHUNK as u64, 2 * CHUNK as u64, 64 * CHUNK as u64] {
                let (head, key) = PartKey::seal_new(&to, opts(suite), len as u64).unwrap();
                assert_eq!(key.plaintext_len(), len as u64);
                let file = seal_parts(&key, &head, &pt, part_size, part_size == CHUNK as u64);
                assert_eq!(decrypt(&ids, &file).unwrap(), pt, "{suite} {len} {part_size}");
                assert_eq!(open_parts(&file, &ids, part_size).unwrap(), pt);
                // Opening parts of another size than were sealed works too: parts are only chunk ranges.
                assert_eq!(open_parts(&file, &ids, 3 * CHUNK as u64).unwrap(), pt);
            }
        }
    }
}

#[test]
fn a_key_travels_as_bytes_and_seals_the_same_bytes() {
    let (to, ids) = keypair();
    let pt = vec![9u8; 4 * CHUNK + 5];
    let (head, key) = PartKey::seal_new(&to, opts(Suite::Aes256Gcm), pt.len() as u64).unwrap();
    let copy = PartKey::from_bytes(&key.to_bytes()).unwrap().threads(1);
    let part = &key.plan(2 * CHUNK as u64).unwrap()[2];
    let piece = &pt[part.plaintext.start as usize..];
    assert_eq!(key.seal(part.first_chunk, piece).unwrap(), copy.seal(part.first_chunk, piece).unwrap());
    // A retried part with the same bytes comes out the same (no nonce is used for new data).
    assert_eq!(key.seal(part.first_chunk, piece).unwrap(), key.seal(part.first_chunk, piece).unwrap());
    let file = seal_parts(&copy, &head, &pt, 2 * CHUNK as u64, false);
    assert_eq!(decrypt(&ids, &file).unwrap(), pt);
    let opener = PartKey::open_file(&mut Cursor::new(&file), file.len() as u64, &ids).unwrap();
    let opener = PartKey::from_bytes(&opener.to_bytes()).unwrap();
    assert_eq!(&opener.open(0, &file[head.len()..]).unwrap()[..], &pt[..]);
}

#[test]
fn age_profile_parts_are_an_age_file() {
    let (to, ids) = keypair();
    let pt = vec![1u8; 200_000];
    let (head, key) = PartKey::seal_new(&to, Options::age(), pt.len() as u64).unwrap();
    assert!(head.starts_with(b"age-encryption.org/v1\n"));
    let file = seal_parts(&key, &head, &pt, 64 << 10, true);
    assert_eq!(decrypt(&ids, &file).unwrap(), pt);
    assert_eq!(Options::age().profile, Profile::Age);
}

#[test]
fn parts_that_do_not_fit_are_refused() {
    let (to, ids) = keypair();
    let len = 3 * CHUNK + 10;
    let (head, key) = PartKey::seal_new(&to, opts(Suite::Aes256Gcm), len as u64).unwrap();
    let bad = |r: Result<Vec<u8>, Error>| assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    bad(key.seal(0, &vec![0; CHUNK + 1])); // not whole chunks and not the end
    bad(key.seal(0, &[])); // empty, not the end
    bad(key.seal(3, &[0; 11])); // past the end
    bad(key.seal(4, &[])); // after the end
    bad(key.seal(2, &vec![0; 2 * CHUNK])); // whole chunks, but beyond the plaintext
    assert!(key.plan(CHUNK as u64 + 1).is_err() && key.plan(0).is_err());
    let file = seal_parts(&key, &head, &vec![0; len], CHUNK as u64, false);
    let opener = PartKey::open_file(&mut Cursor::new(&file), file.len() as u64, &ids).unwrap();
    bad(opener.seal(0, &vec![0; CHUNK]));
    assert!(matches!(opener.open(0, &file[head.len()..][..CHUNK]), Err(Error::InvalidArgument(_))));
    assert!(matches!(PartKey::from_bytes(&key.to_bytes()[..40]), Err(Error::InvalidKey(_))));
    // A geometry whose offsets would overflow (bytes edited by a holder of the key, who can
    // MAC them again, or an absurd file_len).
    let mut huge = key.to_bytes().to_vec();
    let at = MAGIC.len() + 2 + Suite::Aes256Gcm.name().len() + 4 + 8;
    huge[at..at + 8].copy_from_slice(&u64::MAX.to_be_bytes());
    assert!(matches!(PartKey::from_bytes(&huge), Err(Error::InvalidKey(_))), "the MAC refuses it");
    let got = PartKey::from_bytes(&remac(huge));
    assert!(matches!(got, Err(Error::InvalidArgument(_))), "{got:?}");
    assert!(PartKey::open_file(&mut Cursor::new(&file), u64::MAX, &ids).is_err());
}

#[test]
fn damage_fails_in_the_part_that_holds_it() {
    let (to, ids) = keypair();
    let pt = vec![5u8; 4 * CHUNK];
    let (head, key) = PartKey::seal_new(&to, opts(Suite::ChaCha20Poly1305), pt.len() as u64).unwrap();
    let file = seal_parts(&key, &head, &pt, CHUNK as u64, false);
    let full = CHUNK + TAG_LEN;
    let mut flipped = file.clone();
    flipped[head.len() + 2 * full + 7] ^= 1;
    assert!(matches!(open_parts(&flipped, &ids, CHUNK as u64), Err(Error::ChunkAuth(2))));
    // Cut at a chunk boundary: the part holding the new end finds no final chunk.
    let cut = &file[..head.len() + 3 * full];
    assert!(matches!(open_parts(cut, &ids, CHUNK as u64), Err(Error::Truncated(2))));
    assert!(matches!(open_parts(&file[..head.len()], &ids, CHUNK as u64), Err(Error::Truncated(0))));
    let mut longer = file.clone();
    longer.extend_from_slice(b"x");
    assert!(open_parts(&longer, &ids, CHUNK as u64).is_err());
    let (other, _) = keypair();
    let (_, theirs) = keypair();
    assert!(matches!(open_parts(&file, &theirs, CHUNK as u64), Err(Error::NoIdentityMatched)));
    drop(other);
    let armored = b"-----BEGIN AGE ENCRYPTED FILE-----\nYWdl\n-----END AGE ENCRYPTED FILE-----\n";
    assert!(matches!(
        PartKey::open_file(&mut Cursor::new(&armored[..]), armored.len() as u64, &ids),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn debug_never_shows_the_key() {
    let (to, _) = keypair();
    let (_, key) = PartKey::seal_new(&to, opts(Suite::Aes256Gcm), 10).unwrap();
    let shown = format!("{key:?}");
    assert!(shown.contains("key redacted"));
    let bytes = key.to_bytes();
    let raw = &bytes[bytes.len() - 64..bytes.len() - 32];
    let hex: String = raw.iter().map(|b| format!("{b:02x}")).collect();
    assert!(!shown.contains(&hex) && !shown.contains(&format!("{:?}", &raw[..4])));
}

/// The calls a WebCrypto caller makes, run here with RustCrypto's AES-GCM (a second
/// implementation on native builds), give exactly the library's sealed part, and open it again.
#[test]
fn chunk_calls_run_elsewhere_give_the_same_bytes() {
    use aes_gcm::aead::{Aead, KeyInit};
    let (to, ids) = keypair();
    for len in [0, 5, CHUNK, 3 * CHUNK, 3 * CHUNK + 9] {
        let pt: Vec<u8> = (0..len).map(|i| (i % 249) as u8).collect();
        let (head, key) = PartKey::seal_new(&to, opts(Suite::Aes256Gcm), len as u64).unwrap();
        let aead = aes_gcm::Aes256Gcm::new_from_slice(&key.raw_aead_key().unwrap()[..]).unwrap();
        let mut file = head.clone();
        for part in key.plan(2 * CHUNK as u64).unwrap() {
            let input = &pt[part.plaintext.start as usize..part.plaintext.end as usize];
            let mut out = vec![0u8; key.sealed_len(part.first_chunk, input.len()).unwrap()];
            for c in key.chunk_calls(part.first_chunk, input.len(), true).unwrap() {
                let sealed = aead.encrypt((&c.nonce).into(), &input[c.input.clone()]).unwrap();
                out[c.output].copy_from_slice(&sealed);
            }
            assert_eq!(out, key.seal(part.first_chunk, input).unwrap());
            file.extend_from_slice(&out);
        }
        assert_eq!(decrypt(&ids, &file).unwrap(), pt);
        let opener = PartKey::open_file(&mut Cursor::new(&file), file.len() as u64, &ids).unwrap();
        let mut back = Vec::new();
        for part in opener.plan(CHUNK as u64).unwrap() {
            let input = &file[part.file.start as usize..part.file.end as usize];
            let mut out = vec![0u8; opener.opened_len(input.len())];
            for c in opener.chunk_calls(part.first_chunk, input.len(), false).unwrap() {
                out[c.output]
                    .copy_from_slice(&aead.decrypt((&c.nonce).into(), &input[c.input.clone()]).unwrap());
            }
            back.extend_from_slice(&out);
        }
        assert_eq!(back, pt);
    }
    // Shapes are checked before any call: a cut final chunk, a part that does not fit.
    let (_, key) = PartKey::seal_new(&to, opts(Suite::Aes256Gcm), 10).unwrap();
    assert!(key.chunk_calls(0, 11, true).is_err());
    assert!(matches!(key.chunk_calls(0, 10, false), Err(Error::InvalidArgument(_))));
    assert!(matches!(key.chunk_calls(0, 26, false), Ok(c) if c.len() == 1 && c[0].nonce[11] == 1));
    let (_, sm4) = PartKey::seal_new(&to, opts(Suite::Sm4Gcm), 10).unwrap();
    assert!(sm4.raw_aead_key().is_err());
}

/// `bytes` (a serialized part key) with its layout MAC made again, as a holder of the key could.
fn remac(mut bytes: Vec<u8>) -> Vec<u8> {
    let n = bytes.len();
    let key: [u8; 32] = bytes[n - 64..n - 32].try_into().unwrap();
    let mac = crate::crypto::hmac_sha256(&super::layout_mac_key(&key)[..], &[&bytes[..n - 64]]);
    bytes[n - 32..].copy_from_slice(&mac);
    bytes
}

/// A serialized part key whose layout was edited is refused: with the chunk size changed from
/// 16 KiB to 64 KiB, chunk 1 would cover other plaintext under the same nonce (C1 ^ C2 = P1 ^
/// P2); with the role changed, an opening key would seal. Every single-bit change is refused.
#[test]
fn edited_part_keys_are_refused() {
    let (to, ids) = keypair();
    let (head, key) = PartKey::seal_new(&to, opts(Suite::Aes256Gcm), 5 * CHUNK as u64).unwrap();
    let bytes = key.to_bytes().to_vec();
    let chunk_at = MAGIC.len() + 2 + Suite::Aes256Gcm.name().len();
    let mut bigger = bytes.clone();
    bigger[chunk_at..chunk_at + 4].copy_from_slice(&(64u32 << 10).to_be_bytes());
    assert!(matches!(PartKey::from_bytes(&bigger), Err(Error::InvalidKey(_))));
    for i in 0..bytes.len() {
        for bit in [0x01, 0x80] {
            let mut edited = bytes.clone();
            edited[i] ^= bit;
            assert!(PartKey::from_bytes(&edited).is_err(), "byte {i} bit {bit:#x} accepted");
        }
    }
    assert!(PartKey::from_bytes(&[&bytes[..], b"x"].concat()).is_err(), "appended byte");
    // An opening key turned into a sealing one.
    let file = seal_parts(&key, &head, &vec![1; 5 * CHUNK], CHUNK as u64, false);
    let opener = PartKey::open_file(&mut Cursor::new(&file), file.len() as u64, &ids).unwrap();
    let mut sealer = opener.to_bytes().to_vec();
    sealer[MAGIC.len()] = 0;
    assert!(matches!(PartKey::from_bytes(&sealer), Err(Error::InvalidKey(_))));
    assert!(PartKey::from_bytes(&opener.to_bytes()).is_ok() && PartKey::from_bytes(&bytes).is_ok());
}

/// Every opening path shares one overflow-safe bounds check: an empty part at the end of a file
/// whose last chunk is full, or a part at an absurd chunk index, gives no AEAD calls to "pass".
#[test]
fn opening_bounds_are_one_check() {
    let (to, ids) = keypair();
    let pt = vec![3u8; 2 * CHUNK];
    let (head, key) = PartKey::seal_new(&to, opts(Suite::Aes256Gcm), pt.len() as u64).unwrap();
    let file = seal_parts(&key, &head, &pt, CHUNK as u64, false);
    let opener = PartKey::open_file(&mut Cursor::new(&file), file.len() as u64, &ids).unwrap();
    let full = CHUNK + TAG_LEN;
    let chunks = ((file.len() - head.len()) / full) as u64;
    assert_eq!(chunks, 2, "the final chunk is full");
    for (first, len) in [(chunks, 0), (chunks + 1, 0), (u64::MAX / 2, full), (u64::MAX, full), (1, 0)] {
        let calls = opener.chunk_calls(first, len, false);
        assert!(matches!(calls, Err(Error::InvalidArgument(_))), "({first}, {len}): {calls:?}");
        let mut out = vec![0u8; len];
        assert!(opener.open_into(first, &vec![0u8; len], &mut out).is_err(), "({first}, {len})");
        assert!(opener.open(first, &vec![0u8; len]).is_err(), "({first}, {len})");
    }
    assert!(key.seal(u64::MAX / 2, &[0; 10]).is_err() && key.sealed_len(u64::MAX, CHUNK).is_err());
}

/// A part cut inside its final chunk fails as damage (authentication), not as a wrong buffer
/// size: `opened_len` sizes a buffer the opening paths accept for any input length.
#[test]
fn a_cut_final_chunk_fails_to_authenticate() {
    let (to, ids) = keypair();
    let pt = vec![9u8; 2 * CHUNK + 100];
    let (head, key) = PartKey::seal_new(&to, opts(Suite::ChaCha20Poly1305), pt.len() as u64).unwrap();
    let file = seal_parts(&key, &head, &pt, CHUNK as u64, false);
    let full = CHUNK + TAG_LEN;
    for cut in [1, 5, TAG_LEN - 1, TAG_LEN, TAG_LEN + 50] {
        let short = &file[..head.len() + 2 * full + cut];
        let opener = PartKey::open_file(&mut Cursor::new(short), short.len() as u64, &ids).unwrap();
        let part = &short[head.len() + full..];
        let mut out = vec![0u8; opener.opened_len(part.len())];
        let r = opener.open_into(1, part, &mut out);
        assert!(matches!(r, Err(Error::ChunkAuth(_) | Error::Truncated(_))), "cut {cut}: {r:?}");
    }
    assert_eq!(key.opened_len(0), 0);
    assert_eq!(key.opened_len(full + 5), CHUNK);
    assert_eq!(key.opened_len(2 * full), 2 * CHUNK);
}
