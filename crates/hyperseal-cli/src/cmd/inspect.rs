//! `hyperseal inspect`: what a file is, never what it hides.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;

use anyhow::Result;
use clap::Args;
use hyperseal::format::SALT_LEN;
use hyperseal::rekey::SLACK_TYPE;
use hyperseal::{Decryptor, Profile};

use crate::io::Input;

#[derive(Args)]
pub struct InspectArgs {
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
    /// Encrypted file (or `-` for stdin).
    input: PathBuf,
}

pub fn run(a: InspectArgs) -> Result<()> {
    let input = Input::open(Some(&a.input))?;
    let size = input.size;
    let read = Rc::new(Cell::new(0u64));
    let dec = Decryptor::new(Counting { inner: input.reader, read: read.clone() })?;
    let h = dec.header();
    let version = match h.profile {
        Profile::Hyperseal => "hyperseal/v1",
        Profile::Age => "age-encryption.org/v1",
    };
    // Slack (room for a re-key in place) is no recipient: shown as the bytes it holds.
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let mut slack = 0;
    for s in &h.stanzas {
        if s.tag == SLACK_TYPE {
            let mut encoded = Vec::new();
            s.write_to(&mut encoded);
            slack += encoded.len();
        } else {
            *kinds.entry(s.tag.clone()).or_default() += 1;
        }
    }
    let stanza_types: Vec<String> = h.stanzas.iter().map(|s| s.tag.clone()).collect();
    let pq = postquantum(h.profile, &stanza_types);
    let header_len = h.encode_len();
    let (suite, chunk_size, armored) = (h.suite, h.chunk_size, dec.is_armored());
    // Sizes follow from the length of the binary file: every chunk but the last is full. A
    // regular binary file's length is its size on disk; an armored file or a pipe is read to the
    // end (as age-inspect does), and the armor's share is what was read beyond the binary bytes.
    // None of it is authenticated: only a decrypt proves the sizes.
    let (z, armor) = match size.filter(|_| !armored) {
        Some(total) => (Sizes::of(total, header_len, chunk_size), 0),
        None => {
            let decoded = header_len as u64 + std::io::copy(&mut dec.into_payload(), &mut std::io::sink())?;
            (Sizes::of(decoded, header_len, chunk_size), read.get() - decoded)
        }
    };
    if a.json {
        // age-inspect --json's fields, with its names and values, then hyperseal's.
        let mut v = serde_json::json!({
            "version": version,
            "postquantum": pq,
            "armor": armored,
            "stanza_types": stanza_types,
            "suite": suite.name(),
            "chunk_size": chunk_size,
            "recipients": kinds,
            "header_bytes": header_len,
            "slack_bytes": slack,
            "file_bytes": z.total + armor,
            "sizes_authenticated": false,
            "truncated": z.shape.is_none(),
        });
        if let Some((payload, chunks, plaintext)) = z.shape {
            v["sizes"] = serde_json::json!({
                "header": header_len,
                "armor": armor,
                "overhead": SALT_LEN as u64 + payload - plaintext,
                "min_payload": plaintext,
                "max_payload": plaintext,
                "min_padding": 0,
                "max_padding": 0,
            });
            v["chunks"] = chunks.into();
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
        return truncation(&z);
    }
    println!("format:       {version}{}", if armored { " (armored)" } else { "" });
    println!("suite:        {suite}");
    println!("chunk size:   {chunk_size} bytes");
    let list: Vec<String> =
        kinds.iter().map(|(k, n)| if *n > 1 { format!("{k} x{n}") } else { k.clone() }).collect();
    println!("recipients:   {}", list.join(", "));
    println!("post-quantum: {pq}");
    match slack {
        0 => println!("header:       {header_len} bytes"),
        n => println!("header:       {header_len} bytes, {n} of them slack (room to re-key in place)"),
    }
    if armored {
        println!("armor:        {armor} bytes");
    }
    if let Some((payload, _, plaintext)) = z.shape {
        println!("overhead:     {} bytes (nonce and tags)", SALT_LEN as u64 + payload - plaintext);
    }
    println!("file size:    {} bytes", z.total + armor);
    match z.shape {
        Some((_, chunks, plaintext)) => {
            println!("plaintext:    {plaintext} bytes in {chunks} chunk(s) (from the file size;");
            println!("              unauthenticated until the file is decrypted)");
        }
        None => println!(
            "plaintext:    unknown: the payload length is not a whole number of chunks \
             (the file is truncated or damaged)"
        ),
    }
    truncation(&z)
}

/// age-inspect's verdict from the stanza types: "no" if any stanza is classical only, else
/// "yes" if any is post-quantum, else "unknown" (plugins, passkeys: their stanzas do not say).
/// A passphrase counts as post-quantum, being symmetric. The kinds only hyperseal files can hold
/// count in those alone, so an age file gets exactly age-inspect's verdict.
fn postquantum(profile: Profile, types: &[String]) -> &'static str {
    let hyperseal = profile == Profile::Hyperseal;
    let classical = |t: &str| {
        matches!(t, "X25519" | "ssh-rsa" | "ssh-ed25519" | "p256tag" | "piv-p256")
            || hyperseal && matches!(t, "p256" | "rsa-oaep")
    };
    let quantum = |t: &str| {
        matches!(t, "mlkem768x25519" | "mlkem768p256tag" | "scrypt")
            || hyperseal && matches!(t, "mlkem1024" | "mlkem768p256" | "argon2id")
    };
    if types.iter().any(|t| classical(t)) {
        "no"
    } else if types.iter().any(|t| quantum(t)) {
        "yes"
    } else {
        "unknown"
    }
}

/// Counts the bytes read from the input (armor included), for the armor's share.
struct Counting<R> {
    inner: R,
    read: Rc<Cell<u64>>,
}

impl<R: std::io::Read> std::io::Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

/// A payload that is not a whole number of chunks fails the command (after the description).
fn truncation(sizes: &Sizes) -> Result<()> {
    match sizes.shape {
        None => Err(crate::errors::hint(
            "the file is truncated or damaged: its payload is not a whole number of chunks",
            "decrypting it will fail; look for a complete copy",
        )),
        _ => Ok(()),
    }
}

/// Sizes derived from the file length.
#[derive(Clone, Copy)]
struct Sizes {
    total: u64,
    /// Payload bytes, chunks and plaintext bytes, when the payload length is one the encryptor
    /// can produce: whole chunks of `chunk + tag`, then a final chunk of at least the tag, empty
    /// only when it is the only chunk. `None`: cut inside a chunk (or inside the header).
    shape: Option<(u64, u64, u64)>,
}

impl Sizes {
    fn of(total: u64, header_len: usize, chunk: usize) -> Sizes {
        let shape = total.checked_sub((header_len + SALT_LEN) as u64).and_then(|payload| {
            let full = chunk as u64 + TAG;
            let chunks = payload.div_ceil(full);
            let last = payload.checked_sub(chunks.checked_sub(1)? * full)?;
            let valid = last >= TAG && (chunks == 1 || last > TAG);
            valid.then_some((payload, chunks, payload - chunks * TAG))
        });
        Sizes { total, shape }
    }
}

/// Bytes of an AEAD tag after every chunk (all suites).
const TAG: u64 = 16;

#[cfg(test)]
mod tests {
    use super::Sizes;

    #[test]
    fn valid_and_invalid_chunkings() {
        let c = 16 << 10;
        let full = c as u64 + 16;
        let at = |payload: u64| Sizes::of(100 + 16 + payload, 100, c).shape.map(|s| (s.1, s.2));
        assert_eq!(at(16), Some((1, 0)));
        assert_eq!(at(17), Some((1, 1)));
        assert_eq!(at(full), Some((1, c as u64)));
        assert_eq!(at(full + 17), Some((2, c as u64 + 1)));
        for cut in [0, 15, full + 16, full + 5, 2 * full + 1] {
            assert_eq!(at(cut), None, "{cut}");
        }
        assert_eq!(Sizes::of(50, 100, c).shape, None);
    }
}
