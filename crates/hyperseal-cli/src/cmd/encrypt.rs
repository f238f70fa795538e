//! `hyperseal encrypt`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use hyperseal::recipient::{self, Recipient};
use hyperseal::{Encryptor, Options, Profile, Suite};

use crate::errors::hint;
use crate::io::{self, Input, Output};

#[derive(Args)]
pub struct EncryptArgs {
    /// Recipient: age1… (X25519), age1pq1… (hybrid), age1tag1… / age1tagpq1… (age's tag keys),
    /// hs-mlkem1024…, hs-p256…, hs-mlkem768p256…, an RSA SPKI PEM, or an SSH public key
    /// ("ssh-ed25519 AAAA…", "ssh-rsa AAAA…"); repeatable.
    #[arg(short = 'r', long = "recipient", allow_hyphen_values = true)]
    recipients: Vec<String>,
    /// File of recipients, one per line (# comments; authorized_keys and GitHub .keys files
    /// work), or an RSA SPKI PEM; repeatable.
    #[arg(short = 'R', long = "recipients-file")]
    recipient_files: Vec<PathBuf>,
    /// Encrypt to the recipient of an identity file (age's -e -i); repeatable.
    #[arg(short = 'i', long = "identity")]
    identities: Vec<PathBuf>,
    /// Passphrase of a passphrase-encrypted identity file, first line of FILE; default: ask.
    #[arg(long = "identity-passphrase-file")]
    identity_passphrase_file: Option<PathBuf>,
    /// Encrypt to the plugin identity without data of age-plugin-NAME (age's -e -j); repeatable.
    #[arg(short = 'j', long = "plugin", value_name = "NAME")]
    plugins: Vec<String>,
    /// Encrypt with a passphrase typed at the terminal (asked twice); scrypt with --format age.
    #[arg(short = 'p', long = "passphrase", conflicts_with_all = ["passphrase_file", "recipients", "recipient_files"])]
    passphrase: bool,
    /// Encrypt with the passphrase on the first line of FILE (for scripts).
    #[arg(long = "passphrase-file", conflicts_with_all = ["recipients", "recipient_files"])]
    passphrase_file: Option<PathBuf>,
    /// Payload suite: aes-256-gcm (default with AES instructions), chacha20-poly1305, sm4-gcm.
    #[arg(long, value_parser = super::parse_suite)]
    suite: Option<Suite>,
    /// Chunk size, a power of two from 16K to 16M (default 64K).
    #[arg(long = "chunk-size", value_parser = super::parse_chunk_size, allow_negative_numbers = true)]
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
    /// Worker threads, 1 (sequential) to 256; default or 0: all cores.
    #[arg(long, value_parser = super::parse_threads, allow_negative_numbers = true)]
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
    let mut opts = Options::named(&a.format, None, None).map_err(|_| {
        crate::errors::usage(
            format!("unknown format {:?}", a.format),
            "use --format hyperseal, age or c2sp-chunked",
        )
    })?;
    if opts.profile == Profile::Age && (a.suite.is_some() || a.chunk_size.is_some()) {
        return Err(crate::errors::usage(
            "--suite and --chunk-size do not apply to --format age",
            "age files always use ChaCha20-Poly1305 and 64 KiB chunks; drop those options",
        ));
    }
    if let Some(suite) = a.suite {
        opts.suite = suite;
    }
    if let Some(c) = a.chunk_size {
        opts.chunk_size = c;
    }

    let wants_passphrase = a.passphrase || a.passphrase_file.is_some();
    let has_recipients = !a.recipients.is_empty()
        || !a.recipient_files.is_empty()
        || !a.identities.is_empty()
        || !a.plugins.is_empty();
    if wants_passphrase && has_recipients {
        return Err(crate::errors::usage(
            "a passphrase cannot be combined with recipients",
            "encrypt twice, or use only keys",
        ));
    }
    if !wants_passphrase && !has_recipients {
        return Err(crate::errors::usage(
            "no recipients",
            "give -r RECIPIENT, -R FILE, -i IDENTITY, -p or --passphrase-file FILE",
        ));
    }
    let mut recipients: Vec<Box<dyn Recipient>> = Vec::new();
    for r in &a.recipients {
        recipients.push(super::identity::parse_recipient_arg(r).map_err(|e| recipient_error(e, None))?);
    }
    for f in &a.recipient_files {
        let text = zeroize::Zeroizing::new(io::read_small(f, "recipients file")?);
        recipients.extend(
            super::identity::parse_recipients_text(&text, f).map_err(|e| recipient_error(e, Some(f)))?,
        );
    }
    recipients.extend(super::identity::plugin_recipients(&a.plugins)?);
    recipients.extend(super::identity::load_identity_recipients(
        &a.identities,
        a.identity_passphrase_file.as_deref(),
    )?);
    if wants_passphrase {
        let pass = match &a.passphrase_file {
            Some(p) => io::read_passphrase_file(p)?,
            None => io::prompt_passphrase(true)?,
        };
        // scrypt (as age) for --format age, Argon2id for hyperseal.
        recipients.push(recipient::passphrase_recipient(opts.profile, pass));
    }

    let mut input = Input::open(a.input.as_deref())?;
    // Room to re-key in place later (`hyperseal rekey`), for files large enough that a rewrite
    // would cost: 1 KiB to 4 KiB is at most 0.4% of 1 MiB.
    opts.slack = input.size.is_some_and(|n| n >= SLACK_FROM);
    let mut output = Output::create(a.output.as_deref(), a.force, input.path.as_deref())?;
    if output.is_terminal() && !a.armor {
        return Err(hint("refusing to write binary ciphertext to a terminal", "use -a/--armor or -o FILE"));
    }
    let enc = Encryptor::with_recipients(&recipients, opts.clone())?.threads(a.threads.unwrap_or(0));
    seal(enc, &mut input, Dest::Output(&mut output), a.armor, opts.profile, a.quiet)?;
    output.commit()
}

/// Inputs from this size get header slack (`Options::slack`).
const SLACK_FROM: u64 = 1 << 20;

/// Where [`seal`] writes.
pub enum Dest<'a> {
    /// The command's output: a regular input file into a file is encrypted on every core.
    Output(&'a mut Output),
    /// Anything else, in order.
    Writer(&'a mut (dyn Write + Send)),
}

/// Encrypts `input` onto `out` (armored when asked), with a progress bar unless `quiet`: the one
/// encryption path of `encrypt` and `age`.
pub fn seal(
    enc: Encryptor,
    input: &mut Input,
    out: Dest<'_>,
    armor: bool,
    profile: Profile,
    quiet: bool,
) -> Result<()> {
    let bar = io::progress_bar(quiet, input.size, "encrypting");
    let progress = |n: u64| {
        if let Some(b) = &bar {
            b.set_position(n)
        }
    };
    let progress_ref: &(dyn Fn(u64) + Sync) = &progress;
    // read(2) into the pipeline rather than mmap: a mapping of the whole input would count
    // towards the resident set and break the constant-memory guarantee on large files.
    let out: &mut (dyn Write + Send) = match (out, &input.file) {
        (Dest::Output(Output::File(file_out)), Some(file)) if !armor => {
            enc.encrypt_file(file, file_out, Some(progress_ref))?;
            return finish(bar);
        }
        (Dest::Output(o), _) => o,
        (Dest::Writer(w), _) => w,
    };
    if armor {
        let mut w = hyperseal::armored(out, profile);
        enc.encrypt_stream(&mut input.reader, &mut w, Some(progress_ref))?;
        w.finish()?;
    } else {
        enc.encrypt_stream(&mut input.reader, out, Some(progress_ref))?;
    }
    finish(bar)
}

fn finish(bar: Option<indicatif::ProgressBar>) -> Result<()> {
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(())
}

/// A recipient that did not parse: never quoted (it may be a secret key pasted in the wrong
/// place); a secret key gets told where it belongs.
pub fn recipient_error(e: hyperseal::Error, file: Option<&std::path::Path>) -> anyhow::Error {
    let msg = match file {
        Some(f) => format!("{}: {e}", f.display()),
        None => e.to_string(),
    };
    match &e {
        hyperseal::Error::InvalidRecipient(m) if m == recipient::IDENTITY_NOT_RECIPIENT => hint(
            msg,
            "that is an identity (secret key); use -i, or 'hyperseal pubkey -i FILE' for its recipient",
        ),
        _ => hint(
            msg,
            "a recipient is age1…, age1pq1…, hs-mlkem1024…, an SSH public key or an SPKI PEM (hyperseal pubkey prints it)",
        ),
    }
}
