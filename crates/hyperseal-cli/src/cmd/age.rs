//! `hyperseal age …`, and a `hyperseal` started under the name `age` (a symbolic link): age
//! v1.3.1's command line over hyperseal's own paths, so scripts swap `age` for hyperseal
//! unchanged. The flags are parsed as Go's `flag` package parses age's (`-d`, `--decrypt`,
//! `-o=FILE`, no bundling, flags end at the first operand), the checks come in age's order with
//! age's wording, and the exit statuses are age's: 0, 1 for every failure, 2 for a flag that does
//! not parse. Encryption and decryption go through `encrypt::seal` and `decrypt::open_stream`,
//! outputs through [`Output`] (so `-o FILE` appears whole or not at all); only the rules of age's
//! command line live here. The differences from age are listed in the README's age section.
//!
//! This is dispatched before clap builds the full command tree: `age` in a hot loop of a
//! script costs one `argv[0]` comparison more than age's own start-up.

use std::ffi::{OsStr, OsString};
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Result};
use hyperseal::recipient::{self, Identity, Recipient};
use hyperseal::{Decryptor, Encryptor, Options, Profile};

use super::age_messages::{self as msg, fail};
use super::decrypt::AnyDecryptor;
use super::encrypt::Dest;
use super::identity;
use crate::errors::redact;
use crate::io::{self as cli_io, Input, Output};
use crate::terminal;

/// `hyperseal age -h` (on stderr, as age prints its usage).
const USAGE: &str = "Usage:
    age [--encrypt] (-r RECIPIENT | -R PATH)... [--armor] [-o OUTPUT] [INPUT]
    age [--encrypt] --passphrase [--armor] [-o OUTPUT] [INPUT]
    age --decrypt [-i PATH]... [-o OUTPUT] [INPUT]

Options:
    -e, --encrypt               Encrypt the input to the output. Default if omitted.
    -d, --decrypt               Decrypt the input to the output.
    -o, --output OUTPUT         Write the result to the file at path OUTPUT.
    -a, --armor                 Encrypt to a PEM encoded format.
    -p, --passphrase            Encrypt with a passphrase.
    -r, --recipient RECIPIENT   Encrypt to the specified RECIPIENT. Can be repeated.
    -R, --recipients-file PATH  Encrypt to recipients listed at PATH. Can be repeated.
    -i, --identity PATH         Use the identity file at PATH. Can be repeated.
    -j PLUGIN                   Use the data-less identity of age-plugin-PLUGIN. Can be repeated.

INPUT defaults to standard input, and OUTPUT defaults to standard output.
If OUTPUT exists, it will be replaced, once the whole operation succeeded.

This is hyperseal's age-compatible mode (age v1.3.1's command line; the files are age files).
RECIPIENT, recipient files and identity files are as in age (age1…, age1pq1…, plugins,
ssh-ed25519 and ssh-rsa keys; passphrase-encrypted identity files). \"-\" may be used to
read one recipients or identity file from standard input. With -e, -i and -j encrypt to
the identity's own recipient.";

/// The version age mode reports for `--version`.
const AGE_VERSION: &str = "v1.3.1";

/// Whether the program was started as `age` (by a link or copy of that name).
pub fn invoked_as_age(argv0: &OsStr) -> bool {
    Path::new(argv0).file_name().is_some_and(|n| n == "age")
}

/// An `-i FILE` or `-j PLUGIN`, kept in their command-line order (age tries them in it).
enum IdentityFlag {
    File(OsString),
    Plugin(String),
}

#[derive(Default)]
struct Flags {
    encrypt: bool,
    decrypt: bool,
    passphrase: bool,
    armor: bool,
    version: bool,
    output: Option<OsString>,
    recipients: Vec<OsString>,
    recipient_files: Vec<OsString>,
    identities: Vec<IdentityFlag>,
    /// The operands after the flags: at most one, the input.
    operands: Vec<OsString>,
}

/// What the command line asked for.
enum Parsed {
    Run(Flags),
    Help,
    /// A flag that does not parse: exit status 2, as Go's `flag` package.
    Bad(String),
}

const BOOL_FLAGS: [&str; 9] = ["e", "encrypt", "d", "decrypt", "p", "passphrase", "a", "armor", "version"];

/// Parses `args` as Go's `flag.Parse` parses age's: `-name`, `--name`, `-name=value`,
/// `-name value` (the next word, whatever it is), booleans as `-d` or `-d=false`; flags end at
/// `--`, `-` or the first word not starting with `-`.
fn parse(args: &[OsString]) -> Parsed {
    let mut f = Flags::default();
    let mut i = 0;
    while i < args.len() {
        let s = args[i].as_encoded_bytes();
        if s.len() < 2 || s[0] != b'-' {
            break;
        }
        i += 1;
        let dashes = if s[1] == b'-' { 2 } else { 1 };
        if s == b"--" {
            break;
        }
        let body = &s[dashes..];
        if body.is_empty() || body[0] == b'-' || body[0] == b'=' {
            return Parsed::Bad(format!("bad flag syntax: {}", String::from_utf8_lossy(s)));
        }
        let (name, value) = match body.iter().position(|&b| b == b'=') {
            Some(at) => (&body[..at], Some(&body[at + 1..])),
            None => (body, None),
        };
        let name = String::from_utf8_lossy(name).into_owned();
        if BOOL_FLAGS.contains(&name.as_str()) {
            let on = match value.map(|v| std::str::from_utf8(v).unwrap_or("")) {
                None => true,
                Some("1" | "t" | "T" | "true" | "TRUE" | "True") => true,
                Some("0" | "f" | "F" | "false" | "FALSE" | "False") => false,
                Some(v) => {
                    return Parsed::Bad(format!("invalid boolean value {v:?} for -{name}: parse error"))
                }
            };
            *match name.as_str() {
                "e" | "encrypt" => &mut f.encrypt,
                "d" | "decrypt" => &mut f.decrypt,
                "p" | "passphrase" => &mut f.passphrase,
                "a" | "armor" => &mut f.armor,
                _ => &mut f.version,
            } = on;
            continue;
        }
        if !matches!(
            name.as_str(),
            "o" | "output" | "r" | "recipient" | "R" | "recipients-file" | "i" | "identity" | "j"
        ) {
            return match name.as_str() {
                "h" | "help" => Parsed::Help,
                _ => Parsed::Bad(format!("flag provided but not defined: -{name}")),
            };
        }
        let value = match value {
            // SAFETY: `v` is the tail of an argument's encoded bytes cut right after an ASCII
            // `=`, which the standard library documents as a valid split on every system.
            #[allow(unsafe_code)]
            Some(v) => unsafe { OsStr::from_encoded_bytes_unchecked(v) }.to_os_string(),
            None if i < args.len() => {
                i += 1;
                args[i - 1].clone()
            }
            None => return Parsed::Bad(format!("flag needs an argument: -{name}")),
        };
        match name.as_str() {
            "o" | "output" => f.output = Some(value),
            "r" | "recipient" => f.recipients.push(value),
            "R" | "recipients-file" => f.recipient_files.push(value),
            "i" | "identity" => f.identities.push(IdentityFlag::File(value)),
            _ => f.identities.push(IdentityFlag::Plugin(value.to_string_lossy().into_owned())),
        }
    }
    f.operands = args[i..].to_vec();
    Parsed::Run(f)
}

/// Runs age mode. `argv` is the whole command line, of which the first `prefix` words name the
/// program (`age`, or `hyperseal age`).
pub fn main(argv: &[OsString], prefix: usize) -> ExitCode {
    let args = &argv[prefix.min(argv.len())..];
    let program = argv[..prefix.min(argv.len())]
        .iter()
        .map(|w| Path::new(w).file_name().unwrap_or(w.as_os_str()).to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    msg::activate();
    if args.is_empty() {
        eprintln!("{USAGE}");
        return ExitCode::from(1);
    }
    match parse(args) {
        Parsed::Help => {
            eprintln!("{USAGE}");
            ExitCode::SUCCESS
        }
        // As Go's flag package: the problem, then the usage text, and status 2.
        Parsed::Bad(problem) => {
            eprintln!("{}", redact(&problem));
            eprintln!("{USAGE}");
            let _ = program;
            ExitCode::from(2)
        }
        // Every failure after parsing is status 1 in age, usage mistakes included.
        Parsed::Run(f) => match run(f) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => ExitCode::from(msg::report(&e)),
        },
    }
}

fn run(f: Flags) -> Result<()> {
    if f.version {
        println!("hyperseal {} (age {AGE_VERSION} command line)", env!("CARGO_PKG_VERSION"));
        return Ok(());
    }
    if f.operands.len() > 1 {
        return Err(too_many_inputs(&f.operands));
    }
    check_modes(&f)?;
    warn_duplicates(f.recipients.iter(), "recipient");
    warn_duplicates(f.recipient_files.iter(), "recipients file");
    warn_duplicates(
        f.identities.iter().filter_map(|i| match i {
            IdentityFlag::File(p) => Some(p),
            IdentityFlag::Plugin(_) => None,
        }),
        "identity file",
    );

    // Files read for keys, which -o must not name (age's check; the input is checked by Output).
    let mut in_use: Vec<PathBuf> = f
        .identities
        .iter()
        .filter_map(|i| match i {
            IdentityFlag::File(p) => Some(absolute(p)),
            IdentityFlag::Plugin(_) => None,
        })
        .chain(f.recipient_files.iter().map(|p| absolute(p)))
        .collect();
    let input_name = f.operands.first().filter(|n| !n.is_empty() && n.as_os_str() != "-");
    let mut stdin_in_use = input_name.is_none();
    if let Some(n) = input_name {
        // age's words for an input that cannot be opened (Go's lower-case OS reason).
        if let Err(e) = std::fs::File::open(n) {
            let name = n.to_string_lossy();
            bail!("failed to open input file {name:?}: open {name}: {}", cli_io::reason(&e).to_lowercase());
        }
    }
    let mut input = match f.decrypt {
        true => Input::open_encrypted(input_name.map(Path::new))?,
        false => Input::open(input_name.map(Path::new))?,
    };
    if let Some(n) = input_name {
        in_use.push(absolute(n));
    } else if f.decrypt && std::io::stdin().is_terminal() {
        // Typed input is armored: stop at its END line, so that a prompt or the output does
        // not get in the way of typing (age's rule).
        input.reader = Box::new(std::io::Cursor::new(read_typed_armor()?));
    }

    let explicit_stdout = f.output.as_deref().is_some_and(|o| o == "-");
    let out_path = f.output.as_deref().filter(|o| !o.is_empty() && *o != "-").map(Path::new);
    if let Some(o) = out_path {
        if in_use.contains(&absolute(o.as_os_str())) {
            bail!("input and output file are the same: {:?}", o.display().to_string());
        }
    }
    let to_terminal = out_path.is_none() && std::io::stdout().is_terminal();
    if to_terminal && !explicit_stdout && !f.decrypt && !f.armor {
        return Err(fail(msg::BINARY_TO_TERMINAL, &[msg::ARMOR_HINT, msg::FORCE_HINT]));
    }
    // age replaces an existing output file; here it is replaced only once the run succeeded.
    let output = Output::create(out_path, true, input.path.as_deref())?;
    let mut sink = if to_terminal
        && ((f.decrypt && !explicit_stdout) || stdin_in_use && std::io::stdin().is_terminal())
    {
        // Held back to check it is printable (decryption), or not to mix with typed input.
        Sink::Held { output, held: Vec::new(), printable: f.decrypt && !explicit_stdout }
    } else {
        Sink::Direct(output)
    };
    if f.decrypt {
        decrypt(&f, input, &mut sink, &mut stdin_in_use)?;
    } else {
        encrypt(&f, input, &mut sink, &mut stdin_in_use)?;
    }
    sink.finish()
}

/// Where the result goes: straight to the output, or held back for the terminal.
enum Sink {
    Direct(Output),
    Held { output: Output, held: Vec<u8>, printable: bool },
}

impl Sink {
    fn finish(self) -> Result<()> {
        match self {
            Sink::Direct(o) => o.commit(),
            Sink::Held { mut output, held, printable } => {
                let binary =
                    String::from_utf8_lossy(&held).chars().any(|c| c.is_control() && !"\n\r\t".contains(c));
                if printable && binary {
                    return Err(fail(msg::BINARY_TO_TERMINAL, &[msg::FORCE_HINT]));
                }
                output.write_all(&held)?;
                output.commit()
            }
        }
    }
}

/// age's checks of the flag combinations, with its messages.
fn check_modes(f: &Flags) -> Result<()> {
    if f.decrypt {
        let clash: [(bool, &str, &[&str]); 5] = [
            (f.encrypt, "-e/--encrypt can't be used with -d/--decrypt", &[]),
            (f.armor, "-a/--armor can't be used with -d/--decrypt", &[msg::ARMOR_DETECTED_HINT]),
            (f.passphrase, "-p/--passphrase can't be used with -d/--decrypt", &[msg::PASSWORD_DETECTED_HINT]),
            (
                !f.recipients.is_empty(),
                "-r/--recipient can't be used with -d/--decrypt",
                &[msg::PRIVATE_KEY_HINT],
            ),
            (
                !f.recipient_files.is_empty(),
                "-R/--recipients-file can't be used with -d/--decrypt",
                &[msg::PRIVATE_KEY_HINT],
            ),
        ];
        return match clash.into_iter().find(|c| c.0) {
            Some((_, m, hints)) => Err(fail(m, hints)),
            None => Ok(()),
        };
    }
    if !f.identities.is_empty() && !f.encrypt {
        return Err(fail(msg::IDENTITY_IN_ENCRYPT, &[msg::IDENTITY_IN_ENCRYPT_HINT]));
    }
    if f.recipients.len() + f.recipient_files.len() + f.identities.len() == 0 && !f.passphrase {
        return Err(fail(msg::MISSING_RECIPIENTS, &[msg::MISSING_RECIPIENTS_HINT]));
    }
    let with_pass = [
        (!f.recipients.is_empty(), "-p/--passphrase can't be combined with -r/--recipient"),
        (!f.recipient_files.is_empty(), "-p/--passphrase can't be combined with -R/--recipients-file"),
        (!f.identities.is_empty(), "-p/--passphrase can't be combined with -i/--identity and -j"),
    ];
    match with_pass.into_iter().find(|c| f.passphrase && c.0) {
        Some((_, m)) => Err(fail(m, &[])),
        None => Ok(()),
    }
}

/// Encryption: recipients in age's order (-r, -R, then -i/-j as given), or a passphrase.
fn encrypt(f: &Flags, mut input: Input, sink: &mut Sink, stdin_in_use: &mut bool) -> Result<()> {
    let mut recipients: Vec<Box<dyn Recipient>> = Vec::new();
    for r in &f.recipients {
        let text = r.to_str().ok_or_else(|| anyhow::anyhow!("unknown recipient type (not UTF-8)"))?;
        recipients.push(identity::parse_recipient_arg(text)?);
    }
    for name in &f.recipient_files {
        let (text, path) = if name == "-" {
            take_stdin(stdin_in_use)?;
            let mut text = zeroize::Zeroizing::new(String::new());
            std::io::stdin().take(16 << 20).read_to_string(&mut text)?;
            (text, PathBuf::from("standard input"))
        } else {
            let path = PathBuf::from(name);
            (zeroize::Zeroizing::new(cli_io::read_small(&path, "recipients file")?), path)
        };
        recipients.extend(
            identity::parse_recipients_text(&text, &path)
                .map_err(|e| anyhow::Error::new(e).context(msg::recipients_file(&path)))?,
        );
    }
    for i in &f.identities {
        recipients.extend(match i {
            IdentityFlag::File(p) if p == "-" => {
                take_stdin(stdin_in_use)?;
                identity::load_stdin_identity_recipients(Profile::Age)?
            }
            IdentityFlag::File(p) => {
                identity::load_identity_recipients_for(&[PathBuf::from(p)], None, Profile::Age)?
            }
            IdentityFlag::Plugin(name) => identity::plugin_recipients(std::slice::from_ref(name))?,
        });
    }
    if f.passphrase {
        recipients.push(recipient::passphrase_recipient(Profile::Age, encryption_passphrase()?));
    }
    let enc = Encryptor::with_recipients(&recipients, Options::age())?;
    let out = match sink {
        Sink::Direct(o) => Dest::Output(o),
        Sink::Held { held, .. } => Dest::Writer(held),
    };
    // No progress bar: age draws none, and scripts expect a quiet stderr.
    super::encrypt::seal(enc, &mut input, out, f.armor, Profile::Age, true)
}

/// Decryption: identities in the order given, or a passphrase for a passphrase file.
fn decrypt(f: &Flags, input: Input, sink: &mut Sink, stdin_in_use: &mut bool) -> Result<()> {
    let mut identities: Vec<Box<dyn Identity>> = Vec::new();
    for i in &f.identities {
        identities.extend(match i {
            IdentityFlag::File(p) if p == "-" => {
                take_stdin(stdin_in_use)?;
                identity::load_stdin_identities()?
            }
            IdentityFlag::File(p) => identity::load_identities(&[PathBuf::from(p)], None)?,
            IdentityFlag::Plugin(name) => identity::plugin_identities(std::slice::from_ref(name))?,
        });
    }
    let size = input.size;
    // age's check for a file PowerShell mangled, on the first bytes, which are then read again.
    // (A regular file is read at offsets by the decryptor: it starts again from the beginning.)
    let mut start = Vec::with_capacity(22);
    let (file, mut reader) = (input.file, input.reader);
    match &file {
        Some(f) => f.take(22).read_to_end(&mut start)?,
        None => (&mut reader).take(22).read_to_end(&mut start)?,
    };
    if let Some(e) = msg::mangled_intro(&start) {
        return Err(e);
    }
    let dec = match file {
        Some(mut f) => {
            std::io::Seek::rewind(&mut f)?;
            AnyDecryptor::File(Decryptor::new(f)?)
        }
        None => {
            let chained: Box<dyn Read + Send> = Box::new(std::io::Cursor::new(start).chain(reader));
            AnyDecryptor::Stream(Decryptor::new(chained)?)
        }
    };
    let passphrase_file = dec.header().is_passphrase();
    // The agent (HYPERSEAL_AGENT_SOCK) after the -i identities, for files of keys.
    let agent = identity::agent_identity().filter(|_| !passphrase_file);
    let with_agent = agent.is_some();
    identities.extend(agent);
    if f.identities.is_empty() && !with_agent {
        if !passphrase_file {
            return Err(fail(msg::NOT_PASSPHRASE_FILE, &[msg::NOT_PASSPHRASE_FILE_HINT]));
        }
        let pass = terminal::read_secret(msg::PROMPT_DECRYPT).map_err(could_not_read)?;
        identities.push(recipient::passphrase_identity_for(dec.header(), pass));
    }
    let result = match sink {
        Sink::Direct(output) => super::decrypt::open_stream(dec, &identities, output, true, size),
        Sink::Held { held, .. } => Ok(dec.decrypt_stream(&identities, held).map(drop)?),
    };
    // A plugin (`-j batchpass`) may open a passphrase file; keys never do: say what to do then.
    match result {
        Err(e)
            if passphrase_file && matches!(e.downcast_ref(), Some(hyperseal::Error::NoIdentityMatched)) =>
        {
            Err(fail(msg::PASSPHRASE_FILE_WITH_IDENTITIES, &[msg::PASSPHRASE_FILE_WITH_IDENTITIES_HINT]))
        }
        r => r,
    }
}

/// age's passphrase for `-p`: asked twice on the terminal; an empty answer makes one, shown on
/// the terminal only (never stderr, which may be a log).
fn encryption_passphrase() -> Result<zeroize::Zeroizing<String>> {
    let pass = terminal::read_secret(msg::PROMPT_ENCRYPT).map_err(could_not_read)?;
    if pass.is_empty() {
        let made = terminal::generate_passphrase(6)?;
        terminal::print(&format!("age: using autogenerated passphrase {:?}", made.as_str()))
            .map_err(|e| anyhow::anyhow!("could not print passphrase: {e}"))?;
        return Ok(made);
    }
    let again = terminal::read_secret(msg::PROMPT_CONFIRM).map_err(could_not_read)?;
    if *again != *pass {
        bail!(msg::PASSPHRASES_DIFFER);
    }
    Ok(pass)
}

/// age's error when the terminal cannot be read.
fn could_not_read(e: std::io::Error) -> anyhow::Error {
    anyhow::anyhow!("could not read passphrase: {e}")
}

/// Claims standard input for a `-` recipients or identity file; it serves one purpose only.
fn take_stdin(in_use: &mut bool) -> Result<()> {
    if std::mem::replace(in_use, true) {
        bail!(msg::STDIN_TWICE);
    }
    Ok(())
}

/// Armored text typed at the terminal, up to its END line (or the end of input).
fn read_typed_armor() -> Result<Vec<u8>> {
    const END: &[u8] = b"-----END AGE ENCRYPTED FILE-----\n";
    let mut buf = Vec::new();
    let mut stdin = std::io::stdin().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        if std::io::BufRead::read_until(&mut stdin, b'\n', &mut line)? == 0 {
            return Ok(buf);
        }
        buf.extend_from_slice(&line);
        if buf.ends_with(END) {
            return Ok(buf);
        }
    }
}

/// age's error for several operands. Unlike age, the words are not repeated (one may be a
/// passphrase typed where it does not belong), nor is the command line in a "did you mean".
fn too_many_inputs(operands: &[OsString]) -> anyhow::Error {
    let text = format!(
        "too many INPUT arguments: {} given (not repeated here, in case one is a secret)",
        operands.len()
    );
    if operands[1].as_encoded_bytes().starts_with(b"-") {
        fail(text, &[msg::INPUT_AFTER_FLAGS_HINT])
    } else {
        fail(text, &[msg::ONE_INPUT_HINT])
    }
}

/// age's warning for a recipient or file given twice.
fn warn_duplicates<'a>(items: impl Iterator<Item = &'a OsString>, what: &str) {
    let mut seen: Vec<&OsString> = Vec::new();
    let mut warned: Vec<&OsString> = Vec::new();
    for item in items {
        if seen.contains(&item) && !warned.contains(&item) {
            msg::warning(&format!("duplicate {what} {:?}", item.to_string_lossy()));
            warned.push(item);
        }
        seen.push(item);
    }
}

/// `name` made absolute (lexically, as Go's `filepath.Abs`), for comparing paths.
fn absolute(name: &OsStr) -> PathBuf {
    let p = Path::new(name);
    let joined = match std::env::current_dir() {
        Ok(cwd) if p.is_relative() => cwd.join(p),
        _ => p.to_path_buf(),
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<OsString> {
        s.split_whitespace().map(OsString::from).collect()
    }

    #[test]
    fn parses_like_go_flag() {
        let Parsed::Run(f) = parse(&words("-d --identity=k -i k2 -j batchpass -o=out -- -in")) else {
            panic!("did not parse")
        };
        assert!(f.decrypt && !f.encrypt);
        assert_eq!(f.output.as_deref(), Some(OsStr::new("out")));
        assert_eq!(f.identities.len(), 3);
        assert!(matches!(&f.identities[2], IdentityFlag::Plugin(n) if n == "batchpass"));
        assert_eq!(f.operands, words("-in"));
        // The first operand ends the flags; a value may start with a dash.
        let Parsed::Run(f) = parse(&words("-r -x -a=false in -o x")) else { panic!() };
        assert_eq!((f.recipients, f.armor), (words("-x"), false));
        assert_eq!(f.operands, words("in -o x"));
        let Parsed::Run(f) = parse(&words("-e -")) else { panic!() };
        assert_eq!(f.operands, words("-"));
        for (bad, msg) in [
            ("-da", "flag provided but not defined: -da"),
            ("-o", "flag needs an argument: -o"),
            ("---d", "bad flag syntax: ---d"),
            ("-d=maybe", "invalid boolean value \"maybe\" for -d: parse error"),
        ] {
            assert!(matches!(parse(&words(bad)), Parsed::Bad(m) if m == msg), "{bad}");
        }
        assert!(matches!(parse(&words("-r x --help")), Parsed::Help));
    }

    #[test]
    fn age_by_name_only() {
        assert!(invoked_as_age(OsStr::new("/usr/local/bin/age")));
        assert!(invoked_as_age(OsStr::new("age")));
        assert!(!invoked_as_age(OsStr::new("/usr/bin/hyperseal")));
        assert!(!invoked_as_age(OsStr::new("age-keygen")));
    }
}
