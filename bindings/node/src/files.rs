//! `encryptFile` / `decryptFile`: the multi-core pipeline from file to file, with the CLI's
//! nothing-lost rules, from the library's [`AtomicOutput`]: a regular destination appears only
//! when everything succeeded (on Linux the output has no name until then, so even a killed
//! process leaves nothing); an existing file is replaced only with `force`; devices and FIFOs
//! are written through; on failure the destination is untouched.

use std::fs::File;
use std::path::{Path, PathBuf};

use hyperseal::output::{OutputError, OutputErrorKind, OutputOptions};
use hyperseal::{Decryptor, Encryptor, Options};
use napi::bindgen_prelude::{AsyncTask, Either, Status, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

use crate::errors::{fail_task, Code, Fail};
use crate::keys::{self, PublicKeys};

/// What `onProgress` receives.
#[napi(object)]
pub struct Progress {
    /// Plaintext bytes done so far.
    pub bytes: f64,
    /// Plaintext bytes in all (for decryption: computed from the file size).
    pub total: f64,
    /// `bytes / total` in percent, 0–100.
    pub percentage: f64,
}

type ProgressFn = ThreadsafeFunction<Progress, Unknown<'static>, Progress, Status, false>;

/// Options of {@link encryptFile}.
#[napi(object, object_to_js = false)]
pub struct EncryptFileOptions {
    /// One public key or several (anyone of them can decrypt).
    #[napi(ts_type = "string | string[]")]
    pub public_key: Either<String, Vec<String>>,
    /// Replace an existing destination (default false: refuse).
    pub force: Option<bool>,
    /// Worker threads (default: all cores).
    pub threads: Option<u32>,
    /// Called from time to time (about every 2 MiB) while the file is processed.
    #[napi(ts_type = "(progress: Progress) => void")]
    pub on_progress: Option<ProgressFn>,
    /// Allow a key that names an age plugin, which runs the program `age-plugin-NAME` (default
    /// false: refused with `ERR_HYPERSEAL_KEY`).
    pub allow_plugins: Option<bool>,
}

/// Options of {@link decryptFile}.
#[napi(object, object_to_js = false)]
pub struct DecryptFileOptions {
    /// The private key (a secret key line, an identity file's text, or a PKCS#8 PEM).
    pub private_key: String,
    /// Replace an existing destination (default false: refuse).
    pub force: Option<bool>,
    /// Worker threads (default: all cores).
    pub threads: Option<u32>,
    /// Called from time to time (about every 2 MiB) while the file is processed.
    #[napi(ts_type = "(progress: Progress) => void")]
    pub on_progress: Option<ProgressFn>,
    /// Allow a key that names an age plugin, which runs the program `age-plugin-NAME` (default
    /// false: refused with `ERR_HYPERSEAL_KEY`).
    pub allow_plugins: Option<bool>,
}

/// The key, and whether it may name a plugin.
enum Key {
    Public(PublicKeys, bool),
    Private(String, bool),
}

/// One file job on the libuv pool (which then fans out to the library's own threads).
pub struct FileTask {
    src: PathBuf,
    dst: PathBuf,
    key: Key,
    force: bool,
    threads: usize,
    progress: Option<ProgressFn>,
}

impl FileTask {
    fn report(&self, bytes: u64, total: u64) {
        if let Some(f) = &self.progress {
            let percentage =
                if total == 0 { 100.0 } else { (bytes as f64 * 100.0 / total as f64).min(100.0) };
            f.call(
                Progress { bytes: bytes as f64, total: total as f64, percentage },
                ThreadsafeFunctionCallMode::NonBlocking,
            );
        }
    }

    /// The plaintext length, as the JS number it resolves with.
    fn run(&mut self) -> Result<f64, Fail> {
        let input = File::open(&self.src).map_err(|e| io_fail(&self.src, "cannot open", e))?;
        let meta = input.metadata().map_err(|e| io_fail(&self.src, "cannot read", e))?;
        if meta.is_dir() {
            return Err(Fail::new(
                Code(hyperseal::ErrorCode::Io),
                format!("{} is a directory", self.src.display()),
            ));
        }
        let mut output =
            OutputOptions::new().force(self.force).input(&meta).create(&self.dst).map_err(output_fail)?;
        let size = meta.len();
        // The library's file functions: a regular file into a file is read and written at
        // offsets by every worker; anything else is streamed in order.
        let n = match &self.key {
            Key::Public(keys, allow) => {
                let recipients = keys::recipients(keys, *allow)?;
                let enc = Encryptor::with_recipients(&recipients, Options::default())?.threads(self.threads);
                let progress = |done: u64| self.report(done, size);
                enc.encrypt_file(&input, &mut output, Some(&progress))?
            }
            Key::Private(text, allow) => {
                let ids = keys::identities(text, *allow)?;
                let dec = Decryptor::new(input)?.threads(self.threads);
                // The library reports payload bytes read; shown as plaintext bytes (a cut file
                // fails below, an armored one reads high).
                let shape = dec.header().clone();
                let header = (shape.encode_len() + hyperseal::format::SALT_LEN) as u64;
                let plain = |n: u64| shape.payload_shape(n).map_or(n, |(_, p)| p);
                let total = plain(size.saturating_sub(header));
                let progress = |done: u64| self.report(plain(done), total);
                dec.decrypt_file(&ids, &mut output, Some(&progress))?
            }
        };
        output.commit().map_err(output_fail)?;
        // Always end on 100%, whatever the batching (and an armored file's estimate) gave.
        self.report(n, n);
        Ok(n as f64)
    }
}

fn io_fail(path: &Path, what: &str, e: std::io::Error) -> Fail {
    Fail::new(Code(hyperseal::ErrorCode::Io), format!("{what} {}: {e}", path.display()))
}

/// Output rule violations: writing a file into itself is a bad argument, everything else I/O.
fn output_fail(e: OutputError) -> Fail {
    match e.kind() {
        OutputErrorKind::SameFile => Fail::arg(e.to_string()),
        OutputErrorKind::AlreadyExists => {
            Fail::new(Code(hyperseal::ErrorCode::Io), format!("{e} (pass force: true to overwrite it)"))
        }
        _ => Fail::new(Code(hyperseal::ErrorCode::Io), e.to_string()),
    }
}

fail_task!(FileTask => f64);

fn threads(n: Option<u32>) -> usize {
    n.map_or_else(hyperseal::available_threads, |n| n.max(1) as usize)
}

/// Encrypts the file `src` into `dst` on all cores. Resolves with the plaintext byte count.
#[napi(ts_return_type = "Promise<number>")]
pub fn encrypt_file(src: String, dst: String, options: EncryptFileOptions) -> AsyncTask<FileTask> {
    AsyncTask::new(FileTask {
        src: src.into(),
        dst: dst.into(),
        key: Key::Public(options.public_key, options.allow_plugins.unwrap_or(false)),
        force: options.force.unwrap_or(false),
        threads: threads(options.threads),
        progress: options.on_progress,
    })
}

/// Decrypts the file `src` into `dst` on all cores (binary or armored input). Resolves with the
/// plaintext byte count. On any failure `dst` is left as it was.
#[napi(ts_return_type = "Promise<number>")]
pub fn decrypt_file(src: String, dst: String, options: DecryptFileOptions) -> AsyncTask<FileTask> {
    AsyncTask::new(FileTask {
        src: src.into(),
        dst: dst.into(),
        key: Key::Private(options.private_key, options.allow_plugins.unwrap_or(false)),
        force: options.force.unwrap_or(false),
        threads: threads(options.threads),
        progress: options.on_progress,
    })
}
