//! `hyperseal keygen` and `hyperseal pubkey`.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use hyperseal::recipient::{self, Kind};
use hyperseal_toolkit::sign;

use crate::io;

#[derive(Args)]
pub struct KeygenArgs {
    /// Key kind. Encryption: hybrid (ML-KEM-768 + X25519, default), x25519, mlkem1024, p256,
    /// p256-mlkem768, rsa3072, rsa4096. Signing: ed25519, ecdsa-p256, rsa2048, ml-dsa-65
    /// (rsa3072/rsa4096 sign too).
    #[arg(long, default_value = "hybrid", value_parser = parse_kind)]
    kind: String,
    /// Write the identity to FILE (created with mode 0600; never overwritten).
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    #[command(flatten)]
    tpm: super::tpm::TpmKeygenArgs,
}

#[derive(Args)]
pub struct PubkeyArgs {
    /// Identity file (default: stdin).
    #[arg(short = 'i', long = "identity")]
    identity: Option<PathBuf>,
    /// Print the age v1.3 tag recipient (age1tag1… / age1tagpq1…) of a p256 or p256-mlkem768
    /// identity instead: age encrypts to it, and the identity opens what age made.
    #[arg(long = "age-tag")]
    age_tag: bool,
}

/// `--kind`: an encryption kind or a signature-only kind, checked while parsing (a usage error).
fn parse_kind(s: &str) -> Result<String, String> {
    if Kind::from_name(s).is_some() || sign::KeyKind::parse(s).is_ok() {
        Ok(s.to_string())
    } else {
        Err("expected one of: hybrid, x25519, mlkem1024, p256, p256-mlkem768, rsa3072, rsa4096, ed25519, \
             ecdsa-p256, rsa2048, ml-dsa-65"
            .to_string())
    }
}

pub fn keygen(a: KeygenArgs) -> Result<()> {
    if a.tpm.tpm {
        return super::tpm::keygen(&a.tpm, a.output.as_deref());
    }
    let key = match Kind::from_name(&a.kind) {
        Some(kind) => recipient::generate(kind)?,
        None => {
            // Signature-only kinds come from the toolkit: a PKCS#8 private key, SPKI public key.
            let kind = sign::KeyKind::parse(&a.kind)?;
            let secret = sign::generate(kind)?;
            let public = sign::public_pem_from_private(&secret)?;
            recipient::GeneratedKey { secret: zeroize::Zeroizing::new(secret.to_string()), public }
        }
    };
    let kind_name = a.kind.as_str();
    let text = if key.secret.starts_with("-----BEGIN") {
        zeroize::Zeroizing::new(key.secret.to_string())
    } else {
        let created =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        zeroize::Zeroizing::new(format!(
            "# created: {created} (unix time)\n# kind: {}\n# public key: {}\n{}\n",
            kind_name,
            key.public,
            key.secret.as_str()
        ))
    };
    io::write_new_key(a.output.as_deref(), &text)?;
    if key.public.starts_with("-----BEGIN") {
        eprint!("Public key:\n{}", key.public);
    } else {
        eprintln!("Public key: {}", key.public);
    }
    Ok(())
}

pub fn pubkey(a: PubkeyArgs) -> Result<()> {
    let text = match &a.identity {
        Some(p) => zeroize::Zeroizing::new(io::read_small(p, "identity file")?),
        None => {
            let mut s = zeroize::Zeroizing::new(String::new());
            // One byte past the budget, so the library refuses an oversized file instead of
            // this reading without end.
            let limit = hyperseal::limits::KEY_FILE as u64 + 1;
            std::io::Read::read_to_string(&mut std::io::Read::take(std::io::stdin(), limit), &mut s)
                .context("cannot read stdin")?;
            s
        }
    };
    if let Some(recipients) = super::tpm::recipients_of(text.as_bytes()) {
        for r in recipients? {
            println!("{}", r.to_bech32());
        }
        return Ok(());
    }
    if a.age_tag {
        println!("{}", recipient::tag_recipients_of(&text)?);
        return Ok(());
    }
    // RSA identities are both recipients and signing keys; Ed25519/ECDSA/ML-DSA only sign.
    let public = match recipient::public_of(&text) {
        Ok(p) => p,
        Err(e) if text.trim_start().starts_with("-----BEGIN") => {
            sign::public_pem_from_private(&text).map_err(|_| e)?
        }
        Err(e) => return Err(e.into()),
    };
    println!("{}", public.trim_end());
    Ok(())
}
