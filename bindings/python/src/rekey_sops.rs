//! `sops=True`: sops files re-keyed (or rotated) over `hyperseal-sops`. Paths go
//! through `rekey_files` (its walk, `.sops.yaml` rules, one unlock per window of files and
//! atomic write-over), bytes through `rekey_with` / `rotate_with`; this converts the arguments
//! into the library's `Target` and its report into dicts. The Python half is
//! `python/hyperseal/rekey.py` (files, bytes) and `_rekey_s3.py` (objects of a prefix).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use hyperseal::recipient::plugin::Plugins;
use hyperseal::recipient::{self, Recipient};
use hyperseal_sops::{self as sops, FileOutcome, FilesOptions, Format, SopsOutcome, Target};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::errors::{ArgumentError, IntoPy};
use crate::keys::{identities_of, public_of, Identity};
use crate::rekey::{tree_report, with_progress, Entry};

/// Recipient strings: a `str` or an `Identity` (its public key), or a list of them.
fn strings(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    let Some(obj) = obj else { return Ok(Vec::new()) };
    let items: Vec<Bound<'_, PyAny>> = if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        obj.try_iter()?.collect::<PyResult<_>>()?
    } else {
        vec![obj.clone()]
    };
    items
        .iter()
        .map(|item| match item.cast::<Identity>() {
            Ok(_) => public_of(item),
            Err(_) => match item.cast::<PyString>() {
                Ok(s) => Ok(s.to_str()?.trim().to_owned()),
                Err(_) => Err(pyo3::exceptions::PyTypeError::new_err(
                    "recipients must be str, Identity, or a list of them",
                )),
            },
        })
        .collect()
}

/// The library's target (`Target::from_lists`): `recipients` (the one key group's age list) or
/// `add`/`remove`; `None`: each file's `.sops.yaml` creation rule.
fn target(
    recipients: Option<&Bound<'_, PyAny>>,
    add: Option<&Bound<'_, PyAny>>,
    remove: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<Target>> {
    let set = strings(recipients)?;
    if recipients.is_some() && set.is_empty() {
        return Err(ArgumentError::new_err("no recipients in the new list"));
    }
    Target::from_lists(set, strings(add)?, strings(remove)?).map_err(argument)
}

/// A library refusal of the caller's arguments, as the `ArgumentError` it is.
fn argument(e: hyperseal::Error) -> PyErr {
    match e {
        hyperseal::Error::InvalidArgument(why) => ArgumentError::new_err(why),
        e => ArgumentError::new_err(e.to_string()),
    }
}

/// A recipient string read as the other re-keys read it: plugins only where allowed.
fn reader(allow: bool) -> impl Fn(&str) -> Result<Box<dyn Recipient>, hyperseal::Error> + Sync {
    move |r| recipient::parse_recipient_with(r, Arc::new(Plugins::allowed(allow)))
}

/// How sops stores `name` (a path or an object key), as sops picks it; or `format` by name.
fn format_of(name: Option<&str>, format: Option<&str>) -> PyResult<Format> {
    match (format, name) {
        (Some(format), _) => Format::from_name(format).map_err(argument),
        (None, Some(n)) => Ok(Format::for_path(std::path::Path::new(n))),
        (None, None) => Err(ArgumentError::new_err(
            "give format= ('yaml', 'json', 'binary', 'dotenv' or 'ini') or name= (a file name sops would read)",
        )),
    }
}

/// Re-keys the sops files under `paths` (see `hyperseal.rekey_tree(sops=True)`): returns
/// `(files, summary)`, `files` a dict per file (`path`, `outcome`: "changed", "planned",
/// "unchanged", "skipped" with its `reason`, or "failed" with its `error`; `added` and
/// `removed` age entries), `summary` the counts.
#[pyfunction]
#[pyo3(signature = (paths, identities, *, recipients = None, add = None, remove = None, force = false, rotate = false, dry_run = false, recursive = true, allow_plugins = false, progress = None))]
#[allow(clippy::too_many_arguments)]
pub fn rekey_sops_files<'py>(
    py: Python<'py>,
    paths: Vec<PathBuf>,
    identities: Option<&Bound<'py, PyAny>>,
    recipients: Option<&Bound<'py, PyAny>>,
    add: Option<&Bound<'py, PyAny>>,
    remove: Option<&Bound<'py, PyAny>>,
    force: bool,
    rotate: bool,
    dry_run: bool,
    recursive: bool,
    allow_plugins: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyDict>)> {
    let ids = identities_of(identities, None, allow_plugins)?;
    let options = FilesOptions {
        target: target(recipients, add, remove)?,
        force,
        rotate: rotate.then(SystemTime::now),
        dry_run,
        recursive,
        threads: 0,
    };
    let report = with_progress(py, &progress, |call| {
        sops::rekey_files(&paths, &ids, &options, &reader(allow_plugins), call)
    })?;
    // A dry run's changes are named "planned", in each file and in the summary.
    let changed_name = if dry_run { "planned" } else { "changed" };
    let (changed, unchanged, skipped, failed) = report.counts();
    let summary =
        [(changed_name, changed), ("unchanged", unchanged), ("skipped", skipped), ("failed", failed)];
    tree_report(py, report.files, &summary, |outcome| {
        Ok(match outcome {
            FileOutcome::Changed { added, removed } => {
                let fields = PyDict::new(py);
                fields.set_item("added", added)?;
                fields.set_item("removed", removed)?;
                Entry::Changed(changed_name, fields)
            }
            FileOutcome::Unchanged => Entry::Kept("unchanged"),
            FileOutcome::Skipped(why) => Entry::Skipped(why.to_string()),
            FileOutcome::Failed(e) => Entry::Failed(e),
        })
    })
}

/// A sops file held in memory, re-keyed (or rotated) to an explicit target: `(new, added,
/// removed)`, `new` None when it is already the target. See `hyperseal.rekey_bytes(sops=True)`.
#[pyfunction]
#[pyo3(signature = (data, identities, *, name = None, format = None, recipients = None, add = None, remove = None, force = false, rotate = false, allow_plugins = false))]
#[allow(clippy::too_many_arguments)]
pub fn rekey_sops_bytes<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    identities: Option<&Bound<'py, PyAny>>,
    name: Option<&str>,
    format: Option<&str>,
    recipients: Option<&Bound<'py, PyAny>>,
    add: Option<&Bound<'py, PyAny>>,
    remove: Option<&Bound<'py, PyAny>>,
    force: bool,
    rotate: bool,
    allow_plugins: bool,
) -> PyResult<(Option<Bound<'py, PyBytes>>, usize, usize)> {
    let format = format_of(name, format)?;
    let ids = identities_of(identities, None, allow_plugins)?;
    let Some(target) = target(recipients, add, remove)? else {
        return Err(ArgumentError::new_err("bytes have no .sops.yaml: give recipients, or add and remove"));
    };
    let input = crate::buffers::Input::get(data, "data")?;
    let bytes = input.as_slice();
    let read = reader(allow_plugins);
    let done = py
        .detach(|| match rotate {
            true => sops::rotate_with(bytes, format, &target, &ids, force, &read, SystemTime::now()),
            false => sops::rekey_with(bytes, format, &target, &ids, force, &read),
        })
        .py_err()?;
    Ok(match done {
        SopsOutcome::Unchanged => (None, 0, 0),
        SopsOutcome::Changed { bytes, added, removed } => (Some(PyBytes::new(py, &bytes)), added, removed),
    })
}

/// Whether bytes carry sops metadata as sops stores `name` (the library's `looks_like_sops`):
/// a prefix re-key skips objects that do not.
#[pyfunction]
pub fn looks_like_sops(data: &[u8], name: &str) -> bool {
    sops::looks_like_sops(data, Format::for_path(std::path::Path::new(name)))
}
