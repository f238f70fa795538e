//! `hyperseal encrypt`.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use hyperseal::recipient::{self, Recipient};
use hyperseal::{Encryptor, Options, Profile, Suite};

use super::parse_size;
use crate::hint;
use crate::io::{self, Input, Output};

#[derive(Args)]
pub struct EncryptArgs {
    /// Recipient: age1… (X25519), age1pq1… (hybrid), hs-mlkem1024…, or an RSA SPKI PEM;
    /// repeatable.
    #[arg(short = 'r', long = "recipient", allow_hyphen_values = true)]
    recipients: Vec<String>,
    /// File of recipients, one per line (# comments), or an RSA SPKI PEM; repeatable.
    #[arg(short = 'R', long = "recipients-file")]
    recipient_files: Vec<PathBuf>,
    /// Encrypt with a passphrase typed at the terminal (asked twice); scrypt with --format age.
    #[arg(short = 'p', long = "passphrase")]
    passphrase: bool,
    /// Encrypt with the passphrase on the first line of FILE (for scripts).
    #[arg(long = "passphrase-file")]
    passphrase_file: Option<PathBuf>,
    /// Payload suite: aes-256-gcm (default with AES instructions), chacha20-poly1305, sm4-gcm.
    #[arg(long)]
    suite: Option<String>,
    /// Chunk size, a power of two from 16K to 16M (default 64K).
    #[arg(long = "chunk-size", value_parser = parse_size)]
    chunk_size: Option<usize>,
    /// File format: hyperseal (default), age, or c2sp-chunked (with --key-file).
    #[arg(long, default_value = "hyperseal")]
    format: String,
    #[command(flatten)]
    c2sp: super::c2sp::C2spArgs,
    /// ASCII-armor the output.
    #[arg(short = 'a', long)]
    armor: bool,
    /// Output file (default: stdout).
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Overwrite an existing output file.
    #[arg(long)]
    force: bool,
    /// No progress bar.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Worker threads (default: all cores; 1 = sequential).
    #[arg(long)]
    threads: Option<usize>,
    /// Input file (default or `-`: stdin).
    input: Option<PathBuf>,
}

pub fn run(a: EncryptArgs) -> Result<()> {
    if a.format == super::c2sp::FORMAT {
        let io = super::c2sp::Common {
            input: a.input.as_deref(),
            output: a.output.as_deref(),
            force: a.force,
            quiet: a.quiet,
            threads: a.threads,
        };
        let other = [
            (!a.recipients.is_empty() || !a.recipient_files.is_empty(), "a recipient"),
            (a.passphrase || a.passphrase_file.is_some(), "a passphrase"),
            (a.suite.is_some(), "--suite"),
            (a.chunk_size.is_some(), "--chunk-size"),
            (a.armor, "--armor"),
        ];
        return super::c2sp::encrypt(&a.c2sp, io, other.iter().find(|o| o.0).map(|o| o.1));
    }
    super::c2sp::reject_stray(&a.c2sp)?;
    let mut opts = match a.format.as_str() {
        "hyperseal" => Options::default(),
        "age" => Options::age(),
        other => {
            return Err(hint(
                format!("unknown format {other:?}"),
                "use --format hyperseal, age or c2sp-chunked",
            ))
        }
    };
    if let Some(s) = &a.suite {
        let suite = Suite::from_name(s).ok_or_else(|| {
            hint(format!("unknown suite {s:?}"), "choose aes-256-gcm, chacha20-poly1305 or sm4-gcm")
        })?;
        opts.suite = suite;
    }
    if let Some(c) = a.chunk_size {
        opts.chunk_size = c;
    }
    if opts.profile == Profile::Age && (a.suite.is_some() || a.chunk_size.is_some()) {
        anyhow::bail!(
            "--suite and --chunk-size do not apply to --format age (ChaCha20-Poly1305, 64 KiB chunks)"
        );
    }
    if let Some(t) = a.threads {
        opts.threads = t.max(1);
    }

    let wants_passphrase = a.passphrase || a.passphrase_file.is_some();
    let has_recipients = !a.recipients.is_empty() || !a.recipient_files.is_empty();
    if wants_passphrase && has_recipients {
        return Err(hint(
            "a passphrase cannot be combined with recipients",
            "encrypt twice, or use only keys",
        ));
    }
    if !wants_passphrase && !has_recipients {
        return Err(hint("no recipients", "give -r RECIPIENT, -R FILE, -p or --passphrase-file FILE"));
    }
    let mut recipients: Vec<Box<dyn Recipient>> = Vec::new();
    for r in &a.recipients {
        recipients.push(recipient::parse_recipient(r)?);
    }
    for f in &a.recipient_files {
        recipients.extend(recipient::parse_recipients_file(&io::read_small(f, "recipients file")?)?);
    }
    if wants_passphrase {
        let pass = match &a.passphrase_file {
            Some(p) => io::read_passphrase_file(p)?,
            None => io::prompt_passphrase(true)?,
        };
        // scrypt (as age) for --format age, Argon2id for hyperseal.
        recipients.push(recipient::passphrase_recipient(opts.profile, pass));
    }

    let mut input = Input::open(a.input.as_deref())?;
    let mut output = Output::create(a.output.as_deref(), a.force, input.path.as_deref())?;
    if output.is_terminal() && !a.armor {
        return Err(hint("refusing to write binary ciphertext to a terminal", "use -a/--armor or -o FILE"));
    }
    let enc = Encryptor::with_recipients(&recipients, opts.clone())?;
    let bar = io::progress_bar(a.quiet, input.size, "encrypting");
    let progress = |n: u64| {
        if let Some(b) = &bar {
            b.set_position(n)
        }
    };
    let progress_ref: &(dyn Fn(u64) + Sync) = &progress;
    // read(2) into the pipeline rather than mmap: a mapping of the whole input would count
    // towards the resident set and break the constant-memory guarantee on large files.
    let run = |sink: &mut (dyn std::io::Write + Send)| {
        enc.encrypt_stream(&mut input.reader, sink, Some(progress_ref))
    };
    if a.armor {
        let mut w = hyperseal::armored(&mut output, opts.profile);
        run(&mut w)?;
        w.finish()?;
    } else {
        run(&mut output)?;
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    output.commit()
}
