//! `hash` and `mac`: digests in the exact line format of sha256sum/b2sum, and `--check`.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use hyperseal_toolkit::{hash, mac};

use crate::io::Input;

#[derive(Args)]
pub struct HashArgs {
    /// sha256, sha384, sha512, sha3-256, sha3-512, blake2b512 (= b2sum), blake3, sm3,
    /// legacy-md5, legacy-sha1.
    #[arg(long, short = 'a', default_value = "sha256")]
    algo: String,
    /// Verify the "HEX  NAME" lines in FILE instead of printing digests (`-` = stdin).
    #[arg(long, short = 'c', value_name = "FILE")]
    check: Option<PathBuf>,
    /// Files to hash (`-` = stdin; none = stdin).
    files: Vec<PathBuf>,
}

#[derive(Args)]
pub struct MacArgs {
    /// hmac-sha256, hmac-sha384, hmac-sha512, hmac-sha3-256, hmac-sha3-512, hmac-blake2b512,
    /// hmac-sm3, legacy-hmac-sha1, legacy-hmac-md5.
    #[arg(long, short = 'a', default_value = "hmac-sha256")]
    algo: String,
    /// File whose raw bytes (all of them, newline included) are the HMAC key.
    #[arg(long, value_name = "FILE")]
    key_file: PathBuf,
    /// Files to authenticate (`-` = stdin; none = stdin).
    files: Vec<PathBuf>,
}

/// coreutils escapes names holding `\` or a newline and marks such lines with a leading `\`.
fn display_name(p: &Path) -> (bool, String) {
    let s = p.to_string_lossy();
    if s.contains('\\') || s.contains('\n') || s.contains('\r') {
        (true, s.replace('\\', "\\\\").replace('\n', "\\n").replace('\r', "\\r"))
    } else {
        (false, s.into_owned())
    }
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some(o) => out.push(o),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn files_or_stdin(files: Vec<PathBuf>) -> Vec<PathBuf> {
    if files.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        files
    }
}

fn digest_of(alg: hash::Algorithm, path: &Path) -> Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        return Ok(hash::hash_reader(alg, std::io::stdin().lock())?);
    }
    hash::hash_file(alg, path).with_context(|| format!("{}", path.display()))
}

pub fn hash(a: HashArgs) -> Result<()> {
    let alg = hash::Algorithm::parse(&a.algo)?;
    if let Some(list) = a.check {
        return check(alg, &list);
    }
    let mut out = std::io::stdout().lock();
    for f in files_or_stdin(a.files) {
        let d = digest_of(alg, &f)?;
        let (esc, name) = display_name(&f);
        writeln!(out, "{}{}  {}", if esc { "\\" } else { "" }, hex::encode(d), name)?;
    }
    Ok(())
}

fn check(alg: hash::Algorithm, list: &Path) -> Result<()> {
    let input = Input::open(Some(list))?;
    let mut out = std::io::stdout().lock();
    let (mut failed, mut unreadable, mut bad_lines, mut ok) = (0usize, 0usize, 0usize, 0usize);
    let want_len = alg.output_len() * 2;
    for line in BufReader::new(input.reader).lines() {
        let line = line.context("cannot read the checksum list")?;
        let (esc, body) = match line.strip_prefix('\\') {
            Some(rest) => (true, rest),
            None => (false, line.as_str()),
        };
        // "HEX  NAME" (text mode) or "HEX *NAME" (binary mode), as coreutils writes them.
        let parsed = body.split_once(' ').and_then(|(h, rest)| {
            let name = rest.strip_prefix(' ').or_else(|| rest.strip_prefix('*'))?;
            (h.len() == want_len && h.bytes().all(|b| b.is_ascii_hexdigit())).then_some((h, name))
        });
        let Some((expected, name)) = parsed else {
            if !line.trim().is_empty() {
                bad_lines += 1;
            }
            continue;
        };
        let name = if esc { unescape(name) } else { name.to_string() };
        match digest_of(alg, Path::new(&name)) {
            Ok(d) if hex::encode(&d).eq_ignore_ascii_case(expected) => {
                ok += 1;
                writeln!(out, "{name}: OK")?;
            }
            Ok(_) => {
                failed += 1;
                writeln!(out, "{name}: FAILED")?;
            }
            Err(_) => {
                unreadable += 1;
                writeln!(out, "{name}: FAILED open or read")?;
            }
        }
    }
    out.flush()?;
    if bad_lines > 0 {
        eprintln!("hyperseal: warning: {bad_lines} line(s) are improperly formatted for {alg}");
    }
    if failed + unreadable > 0 {
        anyhow::bail!(
            "{} of {} checksum(s) did NOT match ({} unreadable)",
            failed + unreadable,
            failed + unreadable + ok,
            unreadable
        );
    }
    if ok == 0 {
        return Err(crate::hint(
            format!("no properly formatted {alg} checksum lines found"),
            "pass --algo to match the list (e.g. --algo blake2b512 for b2sum output)",
        ));
    }
    Ok(())
}

pub fn mac(a: MacArgs) -> Result<()> {
    let alg = mac::Algorithm::parse(&a.algo)?;
    let key = zeroize::Zeroizing::new(
        std::fs::read(&a.key_file)
            .with_context(|| format!("cannot read key file {}", a.key_file.display()))?,
    );
    if key.is_empty() {
        anyhow::bail!("key file {} is empty", a.key_file.display());
    }
    let mut out = std::io::stdout().lock();
    for f in files_or_stdin(a.files) {
        let input = Input::open(Some(&f))?;
        let mut m = mac::Mac::new(alg, &key);
        let mut r = input.reader;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = r.read(&mut buf).with_context(|| format!("cannot read {}", f.display()))?;
            if n == 0 {
                break;
            }
            m.update(&buf[..n]);
        }
        let (esc, name) = display_name(&f);
        writeln!(out, "{}{}  {}", if esc { "\\" } else { "" }, hex::encode(m.finalize()), name)?;
    }
    Ok(())
}
