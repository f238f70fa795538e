//! `sign` and `verify`: detached signatures over a file, keys in PEM.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use hyperseal::limits::{KEY_TEXT, SIGNATURE};
use hyperseal_toolkit::sign::{RsaPadding, SigningKey, VerifyingKey};

use crate::io::{read_file_within, read_small_within, reason};

/// Messages are signed whole (Ed25519 and ML-DSA sign the message itself, not a hash).
const LIMIT: u64 = 1 << 30;

#[derive(Args)]
pub struct SignArgs {
    /// PEM private key (PKCS#8, or OpenSSL's EC/RSA PRIVATE KEY).
    #[arg(short = 'i', long = "identity", value_name = "KEY")]
    key: PathBuf,
    /// Write the signature here (default stdout); written atomically.
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
    /// Overwrite an existing output file.
    #[arg(long)]
    force: bool,
    /// RSA only: pss (default) or pkcs1.
    #[arg(long, default_value = "pss", value_parser = parse_padding)]
    rsa_padding: RsaPadding,
    /// File to sign (`-` = stdin).
    file: PathBuf,
}

#[derive(Args)]
pub struct VerifyArgs {
    /// PEM public key (BEGIN PUBLIC KEY).
    #[arg(long, value_name = "PUB")]
    pubkey: PathBuf,
    /// Signature file.
    #[arg(long, value_name = "SIG")]
    sig: PathBuf,
    /// RSA only: pss (default) or pkcs1.
    #[arg(long, default_value = "pss", value_parser = parse_padding)]
    rsa_padding: RsaPadding,
    /// Signed file (`-` = stdin).
    file: PathBuf,
}

fn parse_padding(s: &str) -> Result<RsaPadding, String> {
    RsaPadding::parse(s).map_err(|_| "expected pss or pkcs1".to_string())
}

pub fn sign(a: SignArgs) -> Result<()> {
    let padding = a.rsa_padding;
    let pem = zeroize::Zeroizing::new(read_small_within(&a.key, "private key", KEY_TEXT)?);
    let key = SigningKey::from_pem(&pem).map_err(|e| {
        crate::errors::hint(
            format!("{}: {e}", a.key.display()),
            "expected a PEM private key (e.g. from `openssl genpkey`)",
        )
    })?;
    if a.output.is_none() && super::stdout_is_terminal() {
        return Err(crate::errors::hint("refusing to write a binary signature to a terminal", "use -o FILE"));
    }
    let msg = super::read_all(Some(&a.file), LIMIT, "file to sign")?;
    let sig = key.sign_with(&msg, padding)?;
    super::write_output(a.output.as_ref(), a.force, Some(&a.file), &sig, true)
}

pub fn verify(a: VerifyArgs) -> Result<()> {
    let padding = a.rsa_padding;
    let pem = read_small_within(&a.pubkey, "public key", KEY_TEXT)?;
    let key = VerifyingKey::from_pem(&pem).map_err(|e| {
        let h = if pem.contains("PRIVATE KEY") {
            "that is a private key; pass the public key (openssl pkey -pubout, or hyperseal pubkey)"
        } else {
            "expected a PEM public key (BEGIN PUBLIC KEY)"
        };
        crate::errors::hint(format!("{}: {e}", a.pubkey.display()), h)
    })?;
    // The signature is the file that comes from strangers: read within its budget, before the
    // signed file (which is read whole).
    let sig = read_file_within(&a.sig, SIGNATURE, "the signature", |e| {
        anyhow::anyhow!("cannot read signature {}: {}", a.sig.display(), reason(&e))
    })?;
    let msg = super::read_all(Some(&a.file), LIMIT, "signed file")?;
    match key.verify_with(&msg, &sig, padding) {
        Ok(()) => {
            println!("Signature OK");
            Ok(())
        }
        Err(_) if key.kind().is_rsa() => Err(crate::errors::hint(
            "signature verification failed",
            "for RSA, also check --rsa-padding (pss or pkcs1) matches how it was signed",
        )),
        Err(_) => anyhow::bail!("signature verification failed"),
    }
}
