//! `hazmat encrypt|decrypt`: legacy unauthenticated AES and SM4 modes, byte-compatible with
//! `openssl enc -<cipher> -K <hex> -iv <hex>`. Warns on every use. Streams in constant memory
//! (`Cipher::encrypt_stream`), on every core except for CBC encryption.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};
use hyperseal_toolkit::hazmat::Cipher;

use crate::io::{Input, Output};

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
    /// Output file (default stdout); written atomically, never left behind on an error.
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
    /// Overwrite an existing output file.
    #[arg(long)]
    force: bool,
    /// Input file (default or `-`: stdin).
    input: Option<PathBuf>,
}

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
        return Err(crate::errors::hint(
            format!("{} needs --iv", cipher.name()),
            "pass 16 bytes as 32 hex digits",
        ));
    }
    let input = Input::open(o.input.as_deref())?;
    let mut out = Output::create(o.output.as_deref(), o.force, o.input.as_deref())?;
    if out.is_terminal() {
        return Err(crate::errors::hint(
            "refusing to write binary output to a terminal",
            "use -o FILE or redirect stdout",
        ));
    }
    let iv = iv.as_deref().map(|v| &v[..]);
    let result = if decrypt {
        cipher.decrypt_stream(&key, iv, input.reader, &mut out)
    } else {
        cipher.encrypt_stream(&key, iv, input.reader, &mut out)
    };
    // On any error `out` is dropped uncommitted: a `-o` file is never created.
    result.map_err(|e| match e {
        hyperseal_toolkit::Error::Crypto => crate::errors::hint(
            "decryption failed: bad padding or length",
            "check --key, --iv and --algo; these modes cannot tell a wrong key from corrupted data",
        ),
        // As a plain io::Error, so a closed pipe downstream stays quiet (see `report`).
        hyperseal_toolkit::Error::Io(e) => e.into(),
        other => other.into(),
    })?;
    out.commit()
}
