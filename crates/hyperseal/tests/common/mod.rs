//! Test-only recipient: the stanza body *is* the file key. Lets the payload and header tests run
//! without public-key costs; real recipients are tested in their own modules.
#![allow(dead_code)]

use hyperseal::format::Stanza;
use hyperseal::recipient::{Identity, Labels, Recipient};
use hyperseal::{Error, FileKey};

pub struct Plain(pub u8);

impl Recipient for Plain {
    fn wrap_file_key(&self, k: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> {
        Ok((vec![Stanza::new("test-plain", vec![self.0.to_string()], k.expose().to_vec())], Labels::new()))
    }
}

impl Identity for Plain {
    fn unwrap_stanza(&self, s: &Stanza) -> Option<Result<FileKey, Error>> {
        (s.tag == "test-plain" && s.args == [self.0.to_string()])
            .then(|| FileKey::from_slice(&s.body).ok_or_else(|| Error::InvalidStanza("bad test body".into())))
    }
}

pub fn recipients() -> Vec<Box<dyn Recipient>> {
    vec![Box::new(Plain(1))]
}

pub fn identities() -> Vec<Box<dyn Identity>> {
    vec![Box::new(Plain(1))]
}

/// Deterministic pseudo-random bytes.
pub fn data(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}
