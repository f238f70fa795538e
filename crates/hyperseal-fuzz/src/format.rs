//! Targets for the byte formats: header, armor, stanzas.

use std::io::{Read, Write};

use hyperseal::format::armor::{self, ArmoredReader, ArmoredWriter};
use hyperseal::format::{Header, Profile};
use hyperseal::Decryptor;

use crate::fixtures;

pub fn header(data: &[u8]) {
    let mut rest = data;
    let Ok(h) = Header::read_from(&mut rest) else { return };
    let consumed = data.len() - rest.len();
    assert_eq!(consumed, h.encode_len(), "the parser must stop right after the MAC line");
    // One spelling per header: encoding what was parsed gives the same bytes up to the MAC
    // (the MAC itself depends on the file key, which a parse does not know).
    let again = Header::new(h.profile, h.suite, h.chunk_size, h.stanzas.clone())
        .expect("a parsed header has valid parameters")
        .encode(h.mac());
    assert!(again == data[..consumed], "the header has a second spelling");
    // The push-based parser finds the same header, and asks for more on every shorter prefix.
    for cut in [0, consumed / 2, consumed - 1] {
        assert!(matches!(Header::parse_prefix(&data[..cut]), Ok(None) | Err(_)), "a prefix parsed whole");
    }
    let (pushed, len) = Header::parse_prefix(data).expect("parses").expect("whole header present");
    assert_eq!((pushed.stanzas, len), (h.stanzas.clone(), consumed));
    // Whatever the parse says about passphrases, the Decryptor agrees on the same bytes.
    if let Ok(dec) = Decryptor::new(data) {
        assert_eq!(dec.header().stanzas, h.stanzas);
    }
}

pub fn armor(data: &[u8]) {
    // Detection must never panic, whatever the prefix.
    let _ = (armor::is_armored(data), armor::looks_like_armor(data));
    let _ = Decryptor::new(data);
    let mut reader = ArmoredReader::new(data);
    let mut decoded = Vec::new();
    if reader.read_to_end(&mut decoded).is_err() {
        return;
    }
    let label = match reader.label() {
        Some(armor::AGE_LABEL) => armor::AGE_LABEL,
        Some(armor::HYPERSEAL_LABEL) => armor::HYPERSEAL_LABEL,
        other => panic!("accepted an unknown label {other:?}"),
    };
    let mut w = ArmoredWriter::new(Vec::new(), label);
    w.write_all(&decoded).unwrap();
    let canonical = w.finish().unwrap();
    // The reader takes exactly one encoding: the writer's, give or take blanks around it and
    // CRLF line ends (age's rules).
    let normalised: Vec<u8> = String::from_utf8_lossy(trim(data)).replace("\r\n", "\n").into_bytes();
    assert_eq!(normalised, trim(&canonical), "armor has a second spelling");
    let mut back = Vec::new();
    ArmoredReader::new(&canonical[..]).read_to_end(&mut back).unwrap();
    assert_eq!(back, decoded);
}

pub fn stanza(data: &[u8]) {
    // The input is the stanza part of an age header: the version line is supplied, so every
    // mutation lands in the stanzas rather than in a version line that fails first.
    let mut file = b"age-encryption.org/v1\n".to_vec();
    file.extend_from_slice(data);
    let Ok(h) = Header::read_from(&mut &file[..]) else { return };
    assert_eq!(h.profile, Profile::Age);
    for id in fixtures::every_kind() {
        for s in &h.stanzas {
            // Ok (a file key), "not mine" or an error are all fine; a panic is not.
            if let Some(Ok(key)) = id.unwrap_stanza(s) {
                assert!(matches!(key.expose().len(), 16 | 32), "file key of {} bytes", key.expose().len());
            }
        }
        let _ = id.unwrap_stanzas(&h.stanzas);
    }
}

/// Strips what the armor reader counts as blanks (Go's `bytes.TrimSpace`: vertical tab too).
fn trim(b: &[u8]) -> &[u8] {
    let blank = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
    let start = b.iter().position(|c| !blank(c)).unwrap_or(b.len());
    let end = b.iter().rposition(|c| !blank(c)).map_or(start, |e| e + 1);
    &b[start..end]
}
