//! `hyperseal decrypt`.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use hyperseal::recipient::{self, Identity};
use hyperseal::Decryptor;

use crate::errors::hint;
use crate::io::{self, Input, Output};

#[derive(Args)]
pub struct DecryptArgs {
    /// Identity file (secret keys, # comments, an RSA PKCS#8 PEM, an OpenSSH private key, or one
    /// of these encrypted with age -p); repeatable.
    #[arg(short = 'i', long = "identity")]
    identities: Vec<PathBuf>,
    /// Passphrase of protected identity files (SSH keys, age -p files), first line of FILE;
    /// default: ask.
    #[arg(long = "identity-passphrase-file")]
    identity_passphrase_file: Option<PathBuf>,
    /// Use age-plugin-NAME's identity without data (age's -j NAME); repeatable.
    #[arg(short = 'j', long = "plugin", value_name = "NAME")]
    plugins: Vec<String>,
    /// Decrypt with the passphrase on the first line of FILE.
    #[arg(long = "passphrase-file")]
    passphrase_file: Option<PathBuf>,
    /// Decrypt with the file key read from descriptor N (what `header decrypt --file-key-fd`
    /// wrote, e.g. `3<key.bin`) instead of identities.
    #[arg(long = "file-key-fd", value_name = "N", value_parser = clap::value_parser!(i32).range(0..),
          conflicts_with_all = ["identities", "plugins", "passphrase_file", "identity_passphrase_file"])]
    file_key_fd: Option<i32>,
    /// Output file (default: stdout). Written only if the whole file authenticates.
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
    /// Random access: start at plaintext byte N (needs a seekable, non-armored input file).
    #[arg(long, allow_negative_numbers = true)]
    offset: Option<u64>,
    /// Random access: at most M plaintext bytes.
    #[arg(long, allow_negative_numbers = true)]
    length: Option<u64>,
    /// Input format: detected (hyperseal or age) unless c2sp-chunked, which has no header to
    /// detect and needs --key-file.
    #[arg(long)]
    format: Option<String>,
    #[command(flatten)]
    c2sp: super::c2sp::C2spArgs,
    /// Input file (default or `-`: stdin).
    input: Option<PathBuf>,
}

pub fn run(a: DecryptArgs) -> Result<()> {
    match a.format.as_deref() {
        Some(super::c2sp::FORMAT) => {
            let io = super::c2sp::Common {
                input: a.input.as_deref(),
                output: a.output.as_deref(),
                force: a.force,
                quiet: a.quiet,
                threads: a.threads,
            };
            let other = (!a.identities.is_empty() || a.passphrase_file.is_some())
                .then_some("an identity or passphrase");
            return super::c2sp::decrypt(&a.c2sp, io, other, (a.offset, a.length));
        }
        None | Some("hyperseal" | "age") => super::c2sp::reject_stray(&a.c2sp)?,
        Some(f) => {
            return Err(crate::errors::usage(
                format!("unknown format {f:?}"),
                "use --format c2sp-chunked, or omit it to detect hyperseal and age files",
            ))
        }
    }
    // Read before any file is opened: the descriptor is the caller's, by number.
    let file_key = a.file_key_fd.map(super::header::file_key_identity).transpose()?;
    let mut identities: Vec<Box<dyn Identity>> =
        super::identity::load_identities(&a.identities, a.identity_passphrase_file.as_deref())?;
    identities.extend(super::identity::plugin_identities(&a.plugins)?);
    // Turned into an identity once the header says which KDF the file uses (age: scrypt).
    let mut passphrase = a.passphrase_file.as_deref().map(io::read_passphrase_file).transpose()?;

    let input = Input::open_encrypted(a.input.as_deref())?;
    let (size, path) = (input.size, input.path.clone());
    let random_access = random_access_wanted(&a);
    if random_access && input.torn {
        return Err(hint(
            "the file's header is mid-re-key (a journal beside it keeps the new header)",
            "decrypt it whole, or run the re-key again to finish it",
        ));
    }
    if random_access && size.is_none() {
        return Err(hint("--offset/--length need a regular input file", "decrypt the whole stream instead"));
    }
    let mut dec = AnyDecryptor::new(input)?;
    if let Some(t) = a.threads {
        dec = dec.threads(t);
    }
    if let Some(key) = file_key {
        identities.push(super::header::check_file_key(dec.header(), key)?);
    }
    if let Some(p) = passphrase.take() {
        identities.push(recipient::passphrase_identity_for(dec.header(), p));
    }
    if !dec.header().is_passphrase() && a.file_key_fd.is_none() {
        identities.extend(super::identity::agent_identity());
    }
    if identities.is_empty() {
        if dec.header().is_passphrase() {
            identities.push(recipient::passphrase_identity_for(dec.header(), io::prompt_passphrase(false)?));
        } else {
            return Err(hint(
                "no identities",
                "give -i IDENTITY_FILE (or --passphrase-file for passphrase files)",
            ));
        }
    }
    if dec.header().is_passphrase() && a.passphrase_file.is_none() && !a.identities.is_empty() {
        return Err(hint(
            "this file is encrypted with a passphrase",
            "use --passphrase-file FILE, or omit -i to be prompted",
        ));
    }

    let mut output = Output::create(a.output.as_deref(), a.force, path.as_deref())?;
    if random_access {
        if dec.is_armored() {
            return Err(hint("cannot seek in an armored file", "decrypt it whole, or dearmor it first"));
        }
        // Random access authenticates the final chunk first and decrypts only the chunks
        // covering the range: on every core into a file, else through the seekable reader.
        let (offset, length) = (a.offset.unwrap_or(0), a.length.unwrap_or(u64::MAX));
        if let (AnyDecryptor::File(d), Output::File(file)) = (dec, &mut output) {
            d.decrypt_range_file(&identities, offset, length, file, None)?;
        } else {
            let file = std::fs::File::open(path.as_ref().expect("regular file"))?;
            let mut reader = Decryptor::new(file)?.into_reader(&identities)?;
            reader.seek(SeekFrom::Start(offset))?;
            let mut limited = reader.take(length);
            std::io::copy(&mut limited, &mut output)
                .map_err(|e| output.failed(anyhow::Error::new(hyperseal::Error::from(e))))?;
        }
    } else {
        open_stream(dec, &identities, &mut output, a.quiet, size)?;
    }
    output.flush()?;
    output.commit()
}

/// A decryptor over the input file itself, which the library reads at offsets on every core when
/// the output is a file too, or over any reader (standard input, a pipe, a torn header).
pub enum AnyDecryptor {
    File(Decryptor<File>),
    Stream(Decryptor<Box<dyn Read + Send>>),
}

impl AnyDecryptor {
    pub fn new(input: Input) -> Result<AnyDecryptor> {
        Ok(match input.file {
            Some(f) => AnyDecryptor::File(Decryptor::new(f)?),
            None => AnyDecryptor::Stream(Decryptor::new(input.reader)?),
        })
    }

    pub fn header(&self) -> &hyperseal::format::Header {
        match self {
            AnyDecryptor::File(d) => d.header(),
            AnyDecryptor::Stream(d) => d.header(),
        }
    }

    pub fn threads(self, n: usize) -> AnyDecryptor {
        match self {
            AnyDecryptor::File(d) => AnyDecryptor::File(d.threads(n)),
            AnyDecryptor::Stream(d) => AnyDecryptor::Stream(d.threads(n)),
        }
    }

    pub fn is_armored(&self) -> bool {
        match self {
            AnyDecryptor::File(d) => d.is_armored(),
            AnyDecryptor::Stream(d) => d.is_armored(),
        }
    }

    /// In order onto any writer.
    pub fn decrypt_stream(
        self,
        ids: &[Box<dyn Identity>],
        out: &mut (dyn Write + Send),
    ) -> Result<u64, hyperseal::Error> {
        match self {
            AnyDecryptor::File(d) => d.decrypt_stream(ids, out, None),
            AnyDecryptor::Stream(d) => d.decrypt_stream(ids, out, None),
        }
    }
}

/// Decrypts the whole payload onto `output`, with a progress bar unless `quiet`: the one
/// decryption path of `decrypt` and `age`. A failure after bytes reached a reader says so (see
/// [`Output::failed`]).
pub fn open_stream(
    dec: AnyDecryptor,
    identities: &[Box<dyn Identity>],
    output: &mut Output,
    quiet: bool,
    size: Option<u64>,
) -> Result<()> {
    let bar = io::progress_bar(quiet, size, "decrypting");
    let progress = |n: u64| {
        if let Some(b) = &bar {
            b.set_position(n)
        }
    };
    let r = match (dec, &mut *output) {
        (AnyDecryptor::File(d), Output::File(file)) => d.decrypt_file(identities, file, Some(&progress)),
        (AnyDecryptor::File(d), out) => d.decrypt_stream(identities, out, Some(&progress)),
        (AnyDecryptor::Stream(d), out) => d.decrypt_stream(identities, out, Some(&progress)),
    };
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    r.map_err(|e| output.failed(e.into()))?;
    Ok(())
}

fn random_access_wanted(a: &DecryptArgs) -> bool {
    a.offset.is_some() || a.length.is_some()
}
