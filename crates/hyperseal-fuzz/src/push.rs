//! Targets for the push-based decoders, which take bytes in pieces of any size: the armor
//! decoder (against the pull-based armor reader) and the [`Opener`] (against the one-shot
//! decrypt). Each input starts with a cut seed (see [`crate::split`]).

use std::io::Read;

use hyperseal::format::armor::{self, ArmorDecoder, ArmoredReader};
use hyperseal::{Error, Opener};

use crate::split::{pieces, seed};
use crate::{decrypt, fixtures};

pub fn armor_push(data: &[u8]) {
    let (seed, text) = seed(data);
    let mut pulled = Vec::new();
    let pull = ArmoredReader::new(text).read_to_end(&mut pulled).map_err(Error::from);

    let (mut dec, mut pushed) = (ArmorDecoder::new(), Vec::new());
    let mut failed = None;
    for piece in pieces(text, seed) {
        if let Err(e) = dec.update(piece, &mut pushed) {
            failed = Some(e);
            break;
        }
    }
    let push = match failed {
        Some(e) => {
            // Errors are final: more input and the end both fail.
            assert!(dec.update(b"\n", &mut Vec::new()).is_err(), "the decoder took input after an error");
            assert!(dec.finish().is_err(), "the decoder finished after an error");
            Err(e)
        }
        None => dec.finish(),
    };
    assert_eq!(
        push.is_ok(),
        pull.is_ok(),
        "push {push:?} and pull {pull:?} disagree on {} bytes",
        text.len()
    );
    if push.is_ok() {
        assert!(pushed == pulled, "push and pull decode to different bytes");
    }
}

pub fn opener(data: &[u8]) {
    let (seed, rest) = seed(data);
    // A recipe (first byte 0x80 and up, as in the decrypt target) or a file as it is.
    let (file, expected) = match rest.split_first() {
        Some((&mode, recipe)) if mode >= 0x80 => {
            let Some((file, plain, touched)) = decrypt::recipe(mode, recipe, true) else { return };
            (file, Some((plain, touched)))
        }
        _ => (rest.to_vec(), None),
    };
    let threads = seed.first().map_or(1, |b| usize::from(b % 2) + 1);
    let mut opener = Opener::new(fixtures::decrypt_ids_arc()).threads(threads);
    let mut out = Vec::new();
    let mut failed = None;
    for piece in pieces(&file, seed) {
        if let Err(e) = opener.update(piece, &mut out) {
            failed = Some(e);
            break;
        }
    }
    let pushed = match failed {
        Some(e) => {
            assert!(opener.update(b"x", &mut Vec::new()).is_err(), "the Opener took input after an error");
            assert!(opener.finish(&mut Vec::new()).is_err(), "the Opener finished after an error");
            Err(e)
        }
        None => opener.finish(&mut out),
    };
    if let Some((plain, touched)) = &expected {
        // Whatever happens, only authenticated chunks of the real plaintext come out.
        assert!(plain.starts_with(&out), "the Opener released bytes that are not the plaintext");
        match &pushed {
            Ok(()) => assert!(out == *plain, "the Opener gave back other bytes"),
            Err(e) => assert!(*touched, "an untouched file failed in the Opener: {e}"),
        }
    }
    if armor::looks_like_armor(&file) || armor::is_armored(&file) {
        return; // binary files only: the one-shot path reads armor, the Opener refuses it
    }
    let one_shot = hyperseal::decrypt(fixtures::decrypt_ids(), &file);
    assert_eq!(
        pushed.is_ok(),
        one_shot.is_ok(),
        "Opener {pushed:?} vs one-shot {:?}",
        one_shot.as_ref().map(|p| p.len())
    );
    if let Ok(p) = one_shot {
        assert!(out == p[..], "the Opener and the one-shot decrypt disagree");
    }
}
