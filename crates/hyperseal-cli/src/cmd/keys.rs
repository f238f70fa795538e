//! `hyperseal keygen` and `hyperseal pubkey`.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use hyperseal::recipient::{self, Kind};

use crate::{hint, io};

#[derive(Args)]
pub struct KeygenArgs {
    /// Key kind: hybrid (ML-KEM-768 + X25519, default), x25519, mlkem1024, rsa3072, rsa4096.
    #[arg(long, default_value = "hybrid")]
    kind: String,
    /// Write the identity to FILE (created with mode 0600; never overwritten).
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
}

#[derive(Args)]
pub struct PubkeyArgs {
    /// Identity file (default: stdin).
    #[arg(short = 'i', long = "identity")]
    identity: Option<PathBuf>,
}

pub fn keygen(a: KeygenArgs) -> Result<()> {
    let kind = Kind::from_name(&a.kind).ok_or_else(|| {
        hint(
            format!("unknown key kind {:?}", a.kind),
            "choose one of: hybrid, x25519, mlkem1024, rsa3072, rsa4096",
        )
    })?;
    let key = recipient::generate(kind)?;
    let text = if key.secret.starts_with("-----BEGIN") {
        zeroize::Zeroizing::new(key.secret.to_string())
    } else {
        let created =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        zeroize::Zeroizing::new(format!(
            "# created: {created} (unix time)\n# kind: {}\n# public key: {}\n{}\n",
            kind.name(),
            key.public,
            key.secret.as_str()
        ))
    };
    match &a.output {
        Some(path) => {
            let mut f = OpenOptions::new().write(true).create_new(true).mode(0o600).open(path).map_err(
                |e| match e.kind() {
                    std::io::ErrorKind::AlreadyExists => hint(
                        format!("{} already exists", path.display()),
                        "keygen never overwrites a key; pick another name",
                    ),
                    _ => anyhow::Error::new(e).context(format!("cannot create {}", path.display())),
                },
            )?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
        }
        None => std::io::stdout().write_all(text.as_bytes())?,
    }
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
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut s).context("cannot read stdin")?;
            s
        }
    };
    let public = recipient::public_of(&text)?;
    println!("{}", public.trim_end());
    Ok(())
}
