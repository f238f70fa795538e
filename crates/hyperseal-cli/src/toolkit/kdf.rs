//! `kdf`: password KDFs and HKDF, printing the derived key as hex.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use hyperseal_toolkit::kdf::{self, Argon2Params, HashFn, PasswordKdf, Pbkdf2Params, ScryptParams};
use zeroize::Zeroizing;

#[derive(Args)]
pub struct KdfArgs {
    /// pbkdf2 (= pbkdf2-sha256), pbkdf2-sha512, argon2id, scrypt, hkdf (= hkdf-sha256), hkdf-sha512.
    #[arg(long, short = 'a', default_value = "argon2id", value_parser = parse_algo)]
    algo: String,
    /// Read the password (hkdf: input key material) from FILE; default stdin. One trailing
    /// newline is removed.
    #[arg(long, value_name = "FILE")]
    password_file: Option<PathBuf>,
    /// Salt as hex (password KDFs: at least 8 bytes; use 16 random bytes).
    #[arg(long, default_value = "")]
    salt: String,
    /// Output length in bytes.
    #[arg(long, short = 'l', default_value_t = 32)]
    length: usize,
    /// PBKDF2 iterations.
    #[arg(long, default_value_t = Pbkdf2Params::default().iterations)]
    iterations: u32,
    /// Argon2id memory in KiB.
    #[arg(long, default_value_t = Argon2Params::default().m_cost_kib)]
    m_cost: u32,
    /// Argon2id passes.
    #[arg(long, default_value_t = Argon2Params::default().t_cost)]
    t_cost: u32,
    /// Argon2id lanes.
    #[arg(long, default_value_t = Argon2Params::default().p_cost)]
    p_cost: u32,
    /// scrypt log2(N).
    #[arg(long, default_value_t = ScryptParams::default().log_n)]
    log_n: u8,
    /// scrypt r.
    #[arg(long, short = 'r', default_value_t = ScryptParams::default().r)]
    r: u32,
    /// scrypt p.
    #[arg(long, short = 'p', default_value_t = ScryptParams::default().p)]
    p: u32,
    /// HKDF info as hex.
    #[arg(long, default_value = "")]
    info: String,
}

const ALGOS: [&str; 7] =
    ["pbkdf2", "pbkdf2-sha256", "pbkdf2-sha512", "argon2id", "scrypt", "hkdf", "hkdf-sha256"];

/// `--algo`, checked while parsing (a usage error); `hkdf-sha512` too.
fn parse_algo(s: &str) -> Result<String, String> {
    let lower = s.to_ascii_lowercase();
    if ALGOS.contains(&lower.as_str()) || lower == "hkdf-sha512" {
        Ok(lower)
    } else {
        Err("expected pbkdf2, pbkdf2-sha512, argon2id, scrypt, hkdf or hkdf-sha512".to_string())
    }
}

pub fn run(a: KdfArgs) -> Result<()> {
    // The path is not repeated in errors: a password typed in place of its file name must not
    // be echoed.
    let mut secret = match a.password_file.as_deref() {
        // Read here, not through `Input::open`, whose messages name the path.
        Some(p) if p.as_os_str() != "-" => {
            let mut v = zeroize::Zeroizing::new(Vec::new());
            std::fs::File::open(p)
                .and_then(|f| std::io::Read::read_to_end(&mut std::io::Read::take(f, (1 << 20) + 1), &mut v))
                .map_err(|e| anyhow::anyhow!("cannot read the --password-file: {}", crate::io::reason(&e)))?;
            if v.len() > 1 << 20 {
                anyhow::bail!("the --password-file is larger than 1 MiB");
            }
            v
        }
        _ => super::read_all(a.password_file.as_deref(), 1 << 20, "password")?,
    };
    if secret.last() == Some(&b'\n') {
        secret.pop();
        if secret.last() == Some(&b'\r') {
            secret.pop();
        }
    }
    let salt = super::parse_hex(&a.salt, "--salt")?;
    let algo = a.algo;
    let out: Zeroizing<Vec<u8>> = match algo.as_str() {
        "hkdf" | "hkdf-sha256" | "hkdf-sha512" => {
            let hash = if algo == "hkdf-sha512" { HashFn::Sha512 } else { HashFn::Sha256 };
            kdf::hkdf(hash, &secret, &salt, &super::parse_hex(&a.info, "--info")?, a.length)?
        }
        _ => {
            let k = match algo.as_str() {
                "pbkdf2" | "pbkdf2-sha256" => PasswordKdf::Pbkdf2(Pbkdf2Params { hash: HashFn::Sha256, iterations: a.iterations }),
                "pbkdf2-sha512" => PasswordKdf::Pbkdf2(Pbkdf2Params { hash: HashFn::Sha512, iterations: a.iterations }),
                "argon2id" => PasswordKdf::Argon2id(Argon2Params { m_cost_kib: a.m_cost, t_cost: a.t_cost, p_cost: a.p_cost }),
                "scrypt" => PasswordKdf::Scrypt(ScryptParams { log_n: a.log_n, r: a.r, p: a.p }),
                other => anyhow::bail!(
                    "unknown KDF {other:?} (expected pbkdf2, pbkdf2-sha512, argon2id, scrypt, hkdf, hkdf-sha512)"
                ),
            };
            if salt.len() < kdf::MIN_SALT_LEN {
                return Err(crate::errors::hint(
                    "--salt must be at least 8 bytes (16 hex digits)",
                    "use 16 random bytes, e.g. --salt $(openssl rand -hex 16)",
                ));
            }
            k.derive(&secret, &salt, a.length)?
        }
    };
    println!("{}", hex::encode(&*out));
    Ok(())
}
