//! `hash` and `mac`: digests in the exact line format of sha256sum/b2sum, and `--check`.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use hyperseal_toolkit::checklist::{self, Style};
use hyperseal_toolkit::{hash, mac};

use crate::io::Input;

#[derive(Args)]
pub struct HashArgs {
    /// sha256, sha384, sha512, sha3-256, sha3-512, blake2b512 (= b2sum), blake3, sm3,
    /// legacy-md5, legacy-sha1.
    #[arg(long, short = 'a', default_value = "sha256", value_parser = parse_hash_algo)]
    algo: hash::Algorithm,
    /// Verify the lines of FILE (`HEX  NAME`, or `TAG (NAME) = HEX` from --tag; `-` = stdin)
    /// instead of printing digests.
    #[arg(long, short = 'c', value_name = "FILE", conflicts_with_all = ["files", "tag"])]
    check: Option<PathBuf>,
    /// Print BSD-style lines, `SHA256 (NAME) = HEX`, as `sha256sum --tag` does.
    #[arg(long)]
    tag: bool,
    /// Files to hash (`-` = stdin; none = stdin).
    files: Vec<PathBuf>,
}

#[derive(Args)]
pub struct MacArgs {
    /// hmac-sha256, hmac-sha384, hmac-sha512, hmac-sha3-256, hmac-sha3-512, hmac-blake2b512,
    /// hmac-sm3, legacy-hmac-sha1, legacy-hmac-md5.
    #[arg(long, short = 'a', default_value = "hmac-sha256", value_parser = parse_mac_algo)]
    algo: mac::Algorithm,
    /// File whose raw bytes (all of them, newline included) are the HMAC key.
    #[arg(long, value_name = "FILE")]
    key_file: PathBuf,
    /// Files to authenticate (`-` = stdin; none = stdin).
    files: Vec<PathBuf>,
}

fn parse_hash_algo(s: &str) -> Result<hash::Algorithm, String> {
    hash::Algorithm::parse(s).map_err(|_| {
        "expected sha256, sha384, sha512, sha3-256, sha3-512, blake2b512, blake3, sm3, legacy-md5 or legacy-sha1"
            .to_string()
    })
}

fn parse_mac_algo(s: &str) -> Result<mac::Algorithm, String> {
    mac::Algorithm::parse(s).map_err(|_| {
        "expected hmac-sha256, hmac-sha384, hmac-sha512, hmac-sha3-256, hmac-sha3-512, hmac-blake2b512, \
         hmac-sm3, legacy-hmac-sha1 or legacy-hmac-md5"
            .to_string()
    })
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

/// Runs `each` for every file like sha256sum does: a file that fails gets its error line on
/// stderr and the others are still processed; the exit status is 1 if any failed.
fn for_each_file(files: Vec<PathBuf>, mut each: impl FnMut(&Path) -> Result<String>) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let mut failed = false;
    for f in files_or_stdin(files) {
        match each(&f) {
            Ok(line) => writeln!(out, "{line}")?,
            Err(e) => {
                // Keep stdout and stderr in order for a reader of both.
                out.flush()?;
                crate::errors::report(&e);
                failed = true;
            }
        }
    }
    out.flush()?;
    if failed {
        return Err(crate::errors::Reported.into());
    }
    Ok(())
}

pub fn hash(a: HashArgs) -> Result<()> {
    let alg = a.algo;
    if let Some(list) = a.check {
        return check(alg, &list);
    }
    let style = if a.tag { Style::Tag } else { Style::Gnu };
    for_each_file(a.files, |f| {
        let d = digest_of(alg, f)?;
        Ok(checklist::format_line(style, alg.tag(), &hex::encode(d), &f.to_string_lossy()))
    })
}

/// Whether a BSD line's tag names `alg` (b2sum also writes `BLAKE2b-512`).
fn tag_matches(alg: hash::Algorithm, tag: &str) -> bool {
    tag == alg.tag() || (alg == hash::Algorithm::Blake2b512 && tag == "BLAKE2b-512")
}

/// Bytes of one line of a checksum list (a digest and a file name: Linux's PATH_MAX is 4096,
/// and escaping can double it). A list comes from wherever the files came from, so a line that
/// never ends is refused here instead of growing without bound.
const CHECK_LINE: usize = 64 << 10;

fn check(alg: hash::Algorithm, list: &Path) -> Result<()> {
    let input = Input::open(Some(list))?;
    let mut out = std::io::stdout().lock();
    let (mut failed, mut unreadable, mut bad_lines, mut ok) = (0usize, 0usize, 0usize, 0usize);
    let want_len = alg.output_len() * 2;
    let mut reader = BufReader::new(input.reader);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = (&mut reader)
            .take(CHECK_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
            .context("cannot read the checksum list")?;
        if n == 0 {
            break;
        }
        let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
        if line.len() > CHECK_LINE {
            out.flush()?;
            return Err(hyperseal::limits::too_long("a line of the checksum list", CHECK_LINE).into());
        }
        let parsed = std::str::from_utf8(line)
            .ok()
            .and_then(checklist::parse_line)
            .filter(|l| l.hex.len() == want_len && l.tag.is_none_or(|t| tag_matches(alg, t)));
        let Some(entry) = parsed else {
            if !line.trim_ascii().is_empty() {
                bad_lines += 1;
            }
            continue;
        };
        let status = match digest_of(alg, Path::new(&entry.name)) {
            Ok(d) if hex::encode(&d).eq_ignore_ascii_case(entry.hex) => {
                ok += 1;
                "OK"
            }
            Ok(_) => {
                failed += 1;
                "FAILED"
            }
            Err(e) => {
                out.flush()?;
                crate::errors::report(&e);
                unreadable += 1;
                "FAILED open or read"
            }
        };
        writeln!(out, "{}", checklist::status_line(&entry.name, status))?;
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
        return Err(crate::errors::hint(
            format!("no properly formatted {alg} checksum lines found"),
            "pass --algo to match the list (e.g. --algo blake2b512 for b2sum output)",
        ));
    }
    Ok(())
}

pub fn mac(a: MacArgs) -> Result<()> {
    let alg = a.algo;
    // The path is not repeated: a key pasted in place of its file name must not be echoed.
    // Within one key text's budget: HMAC keys past a block are hashed down anyway.
    let key = crate::io::read_file_within(&a.key_file, hyperseal::limits::KEY_TEXT, "the --key-file", |e| {
        anyhow::anyhow!("cannot read the --key-file: {}", crate::io::reason(&e))
    })?;
    if key.is_empty() {
        anyhow::bail!("key file {} is empty", a.key_file.display());
    }
    for_each_file(a.files, |f| {
        let input = Input::open(Some(f))?;
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
        Ok(checklist::format_line(Style::Gnu, "", &hex::encode(m.finalize()), &f.to_string_lossy()))
    })
}
