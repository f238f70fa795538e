//! sops files (`hyperseal-sops`): any bytes, read as each format, are refused or re-keyed, never a
//! panic; what a re-key writes is a file the same re-key leaves unchanged; what a rotation
//! writes rotates again (its values, comments and `mac` are all sealed under the new key).

use std::time::{Duration, UNIX_EPOCH};

use hyperseal_sops::{rekey, rotate, Format, SopsOutcome, Target};

use crate::fixtures;

/// How many times a repeated piece is written per step of the first byte's repeat count.
const REPEAT_STEP: usize = 256;

/// The first byte picks the format (its low two bits) and a repeat count (the rest); the rest
/// is the file. With a repeat count `k`, the file is `HEAD 0xFF PIECE 0xFF TAIL` (0xFF is never
/// in UTF-8 text) and is read as HEAD, PIECE written `k × 256` times, TAIL: a small input then
/// stands for a file of hundreds of KB, where work or memory that grows faster than the file
/// shows (the fuzzer's inputs stay under a few KB, which hides a quadratic scan).
pub fn sops(data: &[u8]) {
    let Some((&pick, file)) = data.split_first() else { return };
    let format = [Format::Yaml, Format::Json, Format::Dotenv, Format::Ini][usize::from(pick % 4)];
    let grown;
    let file = match usize::from(pick / 4) {
        0 => file,
        k => {
            let mut parts = file.splitn(3, |&b| b == 0xff);
            let (Some(head), Some(piece), Some(tail)) = (parts.next(), parts.next(), parts.next()) else {
                return;
            };
            grown = [head, &piece.repeat(k * REPEAT_STEP), tail].concat();
            &grown[..]
        }
    };
    let ids = fixtures::sops_ids();
    let now = UNIX_EPOCH + Duration::from_secs(1_795_654_000);

    let add = Target::Edit { add: vec![fixtures::HYBRID_RECIPIENT.to_owned()], remove: vec![] };
    if let Ok(SopsOutcome::Changed { bytes, added, .. }) = rekey(file, format, &add, ids, false) {
        assert!(added > 0, "a change with nothing added");
        match rekey(&bytes, format, &add, ids, false) {
            Ok(SopsOutcome::Unchanged) => {}
            other => panic!("a re-key's own output is not up to date: {:?}", other.map(|_| ())),
        }
    }

    let same = Target::Edit { add: vec![], remove: vec![] };
    if let Ok(SopsOutcome::Changed { bytes, .. }) = rotate(file, format, &same, ids, false, now) {
        if let Err(e) = rotate(&bytes, format, &same, ids, false, now) {
            panic!("a rotation's own output does not rotate again: {e}");
        }
    }
}
