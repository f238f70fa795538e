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
    let pq = h.stanzas.iter().all(|s| matches!(s.tag.as_str(), "mlkem768x25519" | "mlkem1024"));
    let header_len = h.encode_len();
    // Sizes follow from the file size for binary files: every chunk but the last is full.
    let sizes = size.filter(|_| !dec.is_armored()).and_then(|total| {
        let payload = total.checked_sub((header_len + SALT_LEN) as u64)?;
        let full = h.chunk_size as u64 + 16;
        let chunks = payload.div_ceil(full).max(1);
        let plaintext = payload.checked_sub(chunks * 16)?;
        Some((total, payload, chunks, plaintext))
    });
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
        if let Some((total, payload, chunks, plaintext)) = sizes {
            v["file_bytes"] = total.into();
            v["payload_bytes"] = payload.into();
            v["chunks"] = chunks.into();
            v["plaintext_bytes"] = plaintext.into();
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!("format:       {format}{}", if dec.is_armored() { " (armored)" } else { "" });
    println!("suite:        {}", h.suite);
    println!("chunk size:   {} bytes", h.chunk_size);
    let list: Vec<String> =
        kinds.iter().map(|(k, n)| if *n > 1 { format!("{k} x{n}") } else { k.clone() }).collect();
    println!("recipients:   {}", list.join(", "));
    println!("post-quantum: {}", if pq { "yes" } else { "no" });
    println!("header:       {header_len} bytes");
    if let Some((total, _, chunks, plaintext)) = sizes {
        println!("file size:    {total} bytes");
        println!("plaintext:    {plaintext} bytes in {chunks} chunk(s)");
    }
    Ok(())
}
