//! `hazmat encrypt|decrypt`: legacy unauthenticated AES and SM4 modes, byte-compatible with
//! `openssl enc -<cipher> -K <hex> -iv <hex>`. Warns on every use.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};
use hyperseal_toolkit::hazmat::Cipher;

#[derive(Args)]
pub struct HazmatArgs {
    #[command(subcommand)]
    cmd: HazmatCmd,
}

#[derive(Subcommand)]
enum HazmatCmd {
    /// Encrypt (CBC/ECB add PKCS#7 padding, as openssl enc does).
    Encrypt(Opts),
    /// Decrypt.
    Decrypt(Opts),
}

#[derive(Args)]
struct Opts {
    /// aes-256-cbc, aes-128-cbc, aes-256-ctr, aes-128-ctr, aes-256-ecb, aes-128-ecb, sm4-cbc, sm4-ctr,
    /// sm4-ecb.
    #[arg(long, short = 'a')]
    algo: String,
    /// Key as hex (16 or 32 bytes).
    #[arg(long, short = 'K')]
    key: String,
    /// IV as hex (16 bytes; not for ECB).
    #[arg(long)]
    iv: Option<String>,
    /// Output file (default stdout); written atomically.
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
    /// Overwrite an existing output file.
    #[arg(long)]
    force: bool,
    /// Input file (default or `-`: stdin).
    input: Option<PathBuf>,
}

/// Inputs are read into memory; these modes are for interoperability with small legacy blobs.
const LIMIT: u64 = 1 << 30;

pub fn run(a: HazmatArgs) -> Result<()> {
    let (decrypt, o) = match a.cmd {
        HazmatCmd::Encrypt(o) => (false, o),
        HazmatCmd::Decrypt(o) => (true, o),
    };
    let cipher = Cipher::parse(&o.algo)?;
    eprintln!(
        "hyperseal: warning: hazmat: {} is {}; use `hyperseal encrypt` to protect data",
        cipher.name(),
        cipher.hazard()
    );
    let key = super::parse_hex(&o.key, "--key")?;
    let iv = o.iv.as_deref().map(|s| super::parse_hex(s, "--iv")).transpose()?;
    if cipher.needs_iv() && iv.is_none() {
        return Err(crate::hint(format!("{} needs --iv", cipher.name()), "pass 16 bytes as 32 hex digits"));
    }
    let data = super::read_all(o.input.as_deref(), LIMIT, "input")?;
    let result = if decrypt {
        cipher.decrypt(&key, iv.as_deref().map(|v| &v[..]), &data).map_err(|e| match e {
            hyperseal_toolkit::Error::Crypto => crate::hint(
                "decryption failed: bad padding or length",
                "check --key, --iv and --algo; these modes cannot tell a wrong key from corrupted data",
            ),
            other => other.into(),
        })?
    } else {
        zeroize::Zeroizing::new(cipher.encrypt(&key, iv.as_deref().map(|v| &v[..]), &data)?)
    };
    super::write_output(o.output.as_ref(), o.force, o.input.as_deref(), &result, true)
}
