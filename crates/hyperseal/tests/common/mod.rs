//! Test-only recipient: the stanza body *is* the file key. Lets the payload and header tests run
//! without public-key costs; real recipients are tested in their own modules.

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

/// A file encrypted to [`recipients`] by every encryption path, with `opts`: (path, file).
pub fn encrypt_every_way(opts: &hyperseal::Options, pt: &[u8]) -> Vec<(String, Vec<u8>)> {
    use hyperseal::Encryptor;
    use std::io::Write;
    let enc =
        |threads: usize| Encryptor::with_recipients(&recipients(), opts.clone()).unwrap().threads(threads);
    let mut files = Vec::new();
    for threads in [1, 2] {
        let mut f = Vec::new();
        enc(threads).encrypt_stream(&mut &pt[..], &mut f, None).unwrap();
        files.push((format!("encrypt_stream t={threads}"), f));
        let mut f = Vec::new();
        enc(threads).encrypt_slice(pt, &mut f, None).unwrap();
        files.push((format!("encrypt_slice t={threads}"), f));
        let e = enc(threads);
        let mut f = vec![0xa5; e.encrypted_len(pt.len())];
        e.encrypt_into(pt, &mut f).unwrap();
        files.push((format!("encrypt_into t={threads}"), f));
        for piece in [1000, 70_000] {
            let mut sealer = enc(threads).sealer();
            let mut f = Vec::new();
            pt.chunks(piece).for_each(|p| sealer.update(p, &mut f));
            sealer.finish(&mut f);
            files.push((format!("sealer pieces={piece} t={threads}"), f));
            let mut w = enc(threads).wrap_output(Vec::new()).unwrap();
            pt.chunks(piece).for_each(|p| w.write_all(p).unwrap());
            files.push((format!("wrap_output pieces={piece} t={threads}"), w.finish().unwrap()));
        }
    }
    files
}

/// `file` decrypted with [`identities`] by every decryption path: (path, result). One shared
/// list, so round-trip and damage tests cover every path, and a new path is added once.
pub fn decrypt_every_way(file: &[u8]) -> Vec<(String, Result<Vec<u8>, Error>)> {
    use hyperseal::{Decryptor, Opener};
    use std::io::{Cursor, Read, Seek, SeekFrom};
    let ids = identities();
    let mut out: Vec<(String, Result<Vec<u8>, Error>)> = Vec::new();
    for threads in [1, 2] {
        let mut v = Vec::new();
        let r = Decryptor::new(file).and_then(|d| d.threads(threads).decrypt_stream(&ids, &mut v, None));
        out.push((format!("decrypt_stream t={threads}"), r.map(|_| v)));
        let mut v = Vec::new();
        let r =
            Decryptor::from_slice(file).and_then(|d| d.threads(threads).decrypt_slice(&ids, &mut v, None));
        out.push((format!("decrypt_slice t={threads}"), r.map(|_| v)));
        let mut v = vec![0x5a; file.len()];
        let r = Decryptor::from_slice(file).and_then(|d| d.threads(threads).decrypt_into(&ids, &mut v));
        out.push((format!("decrypt_into t={threads}"), r.map(|n| v[..n].to_vec())));
        let r = Decryptor::new(file).and_then(|d| d.threads(threads).into_reader(&ids)).and_then(|mut r| {
            let mut v = Vec::new();
            r.read_to_end(&mut v)?;
            Ok(v)
        });
        out.push((format!("into_reader t={threads}"), r));
        for piece in [1000, 70_000] {
            let mut opener = Opener::new(identities().into()).threads(threads);
            let mut v = Vec::new();
            let r = file.chunks(piece.min(file.len().max(1))).try_for_each(|p| opener.update(p, &mut v));
            let r = r.and_then(|()| opener.finish(&mut v));
            out.push((format!("opener pieces={piece} t={threads}"), r.map(|()| v)));
        }
    }
    // Random access: the final chunk is authenticated first, then the whole is read.
    let r = Decryptor::new(Cursor::new(file)).and_then(|d| d.into_reader(&ids)).and_then(|mut r| {
        let n = r.plaintext_len()?;
        r.seek(SeekFrom::Start(0))?;
        let mut v = Vec::new();
        r.read_to_end(&mut v)?;
        assert_eq!(v.len() as u64, n, "plaintext_len");
        Ok(v)
    });
    out.push(("seek reader".into(), r));
    out.push(("decrypt".into(), hyperseal::decrypt(&ids, file)));
    out
}
