//! Slack: room in a header for later re-keys, so a new recipient set can be written over the
//! old header in place, at the same length, and the payload never moves.
//!
//! Slack is one or more stanzas of type [`SLACK_TYPE`] with an empty body and at most one
//! argument of filler characters (FORMAT.md §3.5). Every identity answers "not mine" to a type
//! it does not know, as the age spec requires of age, rage and typage, so slack costs readers
//! nothing; the header MAC covers it like any stanza. A passphrase file cannot carry slack (its
//! stanza must stand alone).
//!
//! It is a matter of the header's bytes, so it lives with the codec: the encryptor lays it out
//! and the re-key fills it again, both from here.

use super::Stanza;

/// The stanza type of slack.
pub const SLACK_TYPE: &str = "hs-slack";

/// Bytes of a slack stanza without an argument: `-> hs-slack\n\n` (an empty body ends with an
/// empty line).
const BARE: usize = 3 + SLACK_TYPE.len() + 2;
/// Filler characters in one stanza at most (lines stay far below the 16 KiB line limit).
const MAX_ARG: usize = 4000;

/// The slack a header of `header_len` bytes gets when written with room to grow: at least
/// 1 KiB, up to the next 4 KiB boundary. One page holds a typical padded header, so rewriting it
/// in place is a single-page write; the room takes about one post-quantum stanza or ten X25519
/// ones.
pub fn slack_for(header_len: usize) -> usize {
    (header_len + 1024).next_multiple_of(4096) - header_len
}

/// Slack stanzas whose encoding is exactly `pad` bytes, or `None` where no combination is
/// (`pad` of 1–12 or 14 bytes).
pub(crate) fn fill(mut pad: usize) -> Option<Vec<Stanza>> {
    let stanza = |arg: usize| match arg {
        0 => Stanza::new(SLACK_TYPE, Vec::new(), Vec::new()),
        n => Stanza::new(SLACK_TYPE, vec!["A".repeat(n)], Vec::new()),
    };
    // An argument of k characters costs BARE + 1 + k bytes (a space, then the characters).
    let fillable = |n: usize| n == 0 || n == BARE || n > BARE + 1;
    let mut out = Vec::new();
    while pad > 0 {
        if !fillable(pad) {
            return None;
        }
        if pad == BARE {
            out.push(stanza(0));
            break;
        }
        let mut arg = (pad - BARE - 1).min(MAX_ARG);
        if !fillable(pad - (BARE + 1 + arg)) {
            arg -= 20;
        }
        out.push(stanza(arg));
        pad -= BARE + 1 + arg;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_exactly_every_fillable_size() {
        for pad in 0..20_000 {
            match fill(pad) {
                Some(stanzas) => {
                    let mut out = Vec::new();
                    stanzas.iter().for_each(|s| s.write_to(&mut out));
                    assert_eq!(out.len(), pad, "pad {pad}");
                }
                None => assert!((1..BARE).contains(&pad) || pad == BARE + 1, "pad {pad} refused"),
            }
        }
    }

    #[test]
    fn slack_reaches_a_page_boundary() {
        for len in [1, 200, 3000, 3072, 3073, 9000] {
            let s = slack_for(len);
            assert!(s >= 1024 && (len + s).is_multiple_of(4096), "{len}: {s}");
        }
    }
}
