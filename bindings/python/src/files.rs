//! `encrypt_file` / `decrypt_file`: file to file on every core with the CLI's nothing-lost rules,
//! all of them the library's `output::AtomicOutput`: a regular destination appears only after
//! the last chunk authenticated (on Linux the output has no name until then, so even a killed
//! process leaves nothing); an existing file is replaced only with `force=True`; devices and
//! FIFOs are written through; the input is never touched, and never the output as well.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::Mutex;

use hyperseal::output::{OutputError, OutputErrorKind, OutputOptions};
use hyperseal::{Decryptor, Options};
use pyo3::prelude::*;

use crate::errors::{io_error, to_py, ArgumentError};
use crate::keys::{identities_of, options_of, To};

/// Output rule violations: writing a file into itself is a bad argument, the rest I/O.
pub fn output_err(e: OutputError) -> PyErr {
    match e.kind() {
        OutputErrorKind::SameFile => ArgumentError::new_err(e.to_string()),
        OutputErrorKind::AlreadyExists => io_error(format!("{e} (pass force=True to replace it)")),
        _ => io_error(e.to_string()),
    }
}

/// Opens `path` for reading; refuses a directory.
pub fn open_input(path: &std::path::Path) -> PyResult<File> {
    let f = File::open(path).map_err(|e| io_error(format!("cannot open {}: {e}", path.display())))?;
    let meta = f.metadata().map_err(|e| io_error(format!("cannot read {}: {e}", path.display())))?;
    if meta.is_dir() {
        return Err(io_error(format!("{} is a directory", path.display())));
    }
    Ok(f)
}

enum Job {
    Encrypt { to: To, opts: Options, armor: bool },
    Decrypt { ids: crate::keys::Identities },
}

/// One file job, run with the GIL released; `progress(done, total)` is called with it taken
/// back, in input bytes. An exception from `progress` stops the job (nothing is written).
fn run(
    py: Python<'_>,
    src: PathBuf,
    dst: PathBuf,
    job: Job,
    force: bool,
    threads: usize,
    progress: Option<Py<PyAny>>,
) -> PyResult<u64> {
    let failed: Mutex<Option<PyErr>> = Mutex::new(None);
    py.detach(|| {
        let input = open_input(&src)?;
        let meta = input.metadata().map_err(|e| io_error(e.to_string()))?;
        let total = meta.len();
        let mut output = OutputOptions::new().force(force).input(&meta).create(&dst).map_err(output_err)?;
        // No BufReader/BufWriter: the engine reads and writes whole batches of chunks itself (as
        // the CLI does); a buffer in between only added a copy of every byte each way (perf on
        // a 256 MiB age file: 9% of the CPU in memmove) and hid the file from the decryptor,
        // which reads chunks straight into place from a `File`.
        let mut reader = input;
        let report = |done: u64| {
            let (Some(cb), Ok(mut slot)) = (&progress, failed.lock()) else { return };
            if slot.is_none() {
                *slot = Python::attach(|py| cb.call1(py, (done, total)).err());
            }
        };
        let n = match job {
            Job::Encrypt { to, opts, armor } => {
                let profile = opts.profile;
                let enc = to.encryptor(opts).map_err(to_py)?.threads(threads);
                if armor {
                    // Armor writes 64-column lines: small writes, so buffer them.
                    let mut w = hyperseal::armored(BufWriter::with_capacity(1 << 20, &mut output), profile);
                    let n = enc.encrypt_stream(&mut reader, &mut w, Some(&report)).map_err(to_py)?;
                    w.finish().map_err(|e| to_py(e.into()))?.flush().map_err(|e| to_py(e.into()))?;
                    n
                } else {
                    // A regular file into a file: every worker reads and writes at offsets.
                    enc.encrypt_file(&reader, &mut output, Some(&report)).map_err(to_py)?
                }
            }
            Job::Decrypt { ids } => {
                let dec = Decryptor::new(reader).map_err(to_py)?.threads(threads);
                dec.decrypt_file(&ids, &mut output, Some(&report)).map_err(to_py)?;
                // What reached the output: the plaintext length.
                output.bytes_written()
            }
        };
        if let Some(e) = failed.lock().ok().and_then(|mut s| s.take()) {
            return Err(e); // `output` is dropped uncommitted: nothing appears at `dst`.
        }
        output.commit().map_err(output_err)?;
        Ok(n)
    })
}

/// Encrypts the file `src` into `dst`; returns the plaintext length. See the stubs.
#[pyfunction]
#[pyo3(signature = (src, dst, recipients = None, *, passphrase = None, format = "hyperseal", suite = None, armor = false, force = false, progress = None, threads = 0, allow_plugins = false))]
#[allow(clippy::too_many_arguments)]
pub fn encrypt_file(
    py: Python<'_>,
    src: PathBuf,
    dst: PathBuf,
    recipients: Option<&Bound<'_, PyAny>>,
    passphrase: Option<&Bound<'_, PyAny>>,
    format: &str,
    suite: Option<&str>,
    armor: bool,
    force: bool,
    progress: Option<Py<PyAny>>,
    threads: usize,
    allow_plugins: bool,
) -> PyResult<u64> {
    let job = Job::Encrypt {
        to: To::of(recipients, passphrase, allow_plugins)?,
        opts: options_of(format, suite)?,
        armor,
    };
    run(py, src, dst, job, force, threads, progress)
}

/// Decrypts the file `src` (binary or armored) into `dst`; returns the plaintext length. On
/// any failure `dst` is left as it was. See the stubs.
#[pyfunction]
#[pyo3(signature = (src, dst, identities = None, *, passphrase = None, force = false, progress = None, threads = 0, allow_plugins = false))]
#[allow(clippy::too_many_arguments)]
pub fn decrypt_file(
    py: Python<'_>,
    src: PathBuf,
    dst: PathBuf,
    identities: Option<&Bound<'_, PyAny>>,
    passphrase: Option<&Bound<'_, PyAny>>,
    force: bool,
    progress: Option<Py<PyAny>>,
    threads: usize,
    allow_plugins: bool,
) -> PyResult<u64> {
    let job = Job::Decrypt { ids: identities_of(identities, passphrase, allow_plugins)? };
    run(py, src, dst, job, force, threads, progress)
}
