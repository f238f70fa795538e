//! `hyperseal inspect`: what a file is, never what it hides.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use hyperseal::format::SALT_LEN;
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
    let dec = Decryptor::new(input.reader)?;
    let h = dec.header();
    let format = match h.profile {
        Profile::Hyperseal => "hyperseal/v1",
        Profile::Age => "age-encryption.org/v1",
    };
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for s in &h.stanzas {
        *kinds.entry(s.tag.clone()).or_default() += 1;
    }
    let pq =
        h.stanzas.iter().all(|s| matches!(s.tag.as_str(), "mlkem768x25519" | "mlkem1024" | "mlkem768p256"));
    let header_len = h.encode_len();
    // Sizes follow from the file size for binary files: every chunk but the last is full. They
    // are read off the length, not authenticated: only a decrypt proves them.
    let sizes = size.filter(|_| !dec.is_armored()).map(|total| Sizes::of(total, header_len, h.chunk_size));
    if a.json {
        let mut v = serde_json::json!({
            "format": format,
            "armored": dec.is_armored(),
            "suite": h.suite.name(),
            "chunk_size": h.chunk_size,
            "recipients": kinds,
            "post_quantum": pq,
            "header_bytes": header_len,
        });
        if let Some(z) = &sizes {
            v["file_bytes"] = z.total.into();
            v["sizes_authenticated"] = false.into();
            v["truncated"] = z.shape.is_none().into();
            if let Some((payload, chunks, plaintext)) = z.shape {
                v["payload_bytes"] = payload.into();
                v["chunks"] = chunks.into();
                v["plaintext_bytes"] = plaintext.into();
            }
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
        return truncation(&sizes);
    }
    println!("format:       {format}{}", if dec.is_armored() { " (armored)" } else { "" });
    println!("suite:        {}", h.suite);
    println!("chunk size:   {} bytes", h.chunk_size);
    let list: Vec<String> =
        kinds.iter().map(|(k, n)| if *n > 1 { format!("{k} x{n}") } else { k.clone() }).collect();
    println!("recipients:   {}", list.join(", "));
    println!("post-quantum: {}", if pq { "yes" } else { "no" });
    println!("header:       {header_len} bytes");
    if let Some(z) = &sizes {
        println!("file size:    {} bytes", z.total);
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
    }
    truncation(&sizes)
}

/// A payload that is not a whole number of chunks fails the command (after the description).
fn truncation(sizes: &Option<Sizes>) -> Result<()> {
    match sizes {
        Some(Sizes { shape: None, .. }) => Err(crate::hint(
            "the file is truncated or damaged: its payload is not a whole number of chunks",
            "decrypting it will fail; look for a complete copy",
        )),
        _ => Ok(()),
    }
}

/// Sizes derived from the file length.
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
