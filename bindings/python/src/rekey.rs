//! `rekey_file` / `rekey_head`: change who can open a file without touching its payload, over
//! `hyperseal::rekey`. The library opens the header (MAC first), applies the format's rules and
//! writes the result (in place in O(header) behind a journal, or a new file with the payload
//! copied in the kernel); this converts arguments and results only. The Python half
//! (`python/hyperseal/rekey.py`) adds bytes, fsspec URLs and S3 objects re-keyed in place.

use std::path::PathBuf;
use std::sync::Arc;

use hyperseal::recipient::{self, Recipient};
use hyperseal::rekey::{Change, FileOptions, Plan, Written};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::errors::{ArgumentError, IntoPy};
use crate::keys::{identities_of, public_of, Identity};

/// Recipients owned by one call. `Change` takes them by value, and boxed keys do not clone, so
/// the cached parses `keys::recipients_of` shares cannot be handed over: each item is parsed
/// here by the library's own parsers (an `Identity` by its public key).
fn owned_recipients(
    obj: Option<&Bound<'_, PyAny>>,
    allow_plugins: bool,
) -> PyResult<Vec<Box<dyn Recipient>>> {
    let Some(obj) = obj else { return Ok(Vec::new()) };
    let items: Vec<Bound<'_, PyAny>> = if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        obj.try_iter()?.collect::<PyResult<_>>()?
    } else {
        vec![obj.clone()]
    };
    let mut out = Vec::new();
    for item in &items {
        if item.cast::<Identity>().is_ok() {
            out.push(recipient::parse_recipient(&public_of(item)?).py_err()?);
        } else if let Ok(s) = item.cast::<PyString>() {
            let policy = Arc::new(recipient::plugin::Plugins::allowed(allow_plugins));
            out.extend(recipient::parse_recipients_file_with(s.to_str()?, policy).py_err()?);
        } else {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "recipients must be str, Identity, or a list of them",
            ));
        }
    }
    Ok(out)
}

fn change_of(
    recipients: Option<&Bound<'_, PyAny>>,
    add: Option<&Bound<'_, PyAny>>,
    remove: Option<&Bound<'_, PyAny>>,
    remove_own: bool,
    allow_plugins: bool,
) -> PyResult<Change> {
    let set = match recipients {
        Some(r) => {
            let list = owned_recipients(Some(r), allow_plugins)?;
            if list.is_empty() {
                return Err(ArgumentError::new_err("no recipients in the new list"));
            }
            Some(list)
        }
        None => None,
    };
    Ok(Change {
        set,
        add: owned_recipients(add, allow_plugins)?,
        remove: owned_recipients(remove, allow_plugins)?,
        remove_own,
    })
}

/// The plan as a dict: `before`, `after` (stanza types), `removed`, `added` (counts).
fn plan_dict<'py>(py: Python<'py>, plan: &Plan) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("before", plan.before.clone())?;
    d.set_item("after", plan.after.clone())?;
    d.set_item("removed", plan.removed)?;
    d.set_item("added", plan.added)?;
    Ok(d)
}

/// Re-keys the file at `path` (binary or armored); returns the plan with `written`: "in_place",
/// "rewritten" (with `bytes`) or "nothing" (a dry run). See `hyperseal.rekey_file`.
#[pyfunction]
#[pyo3(signature = (path, identities = None, *, passphrase = None, recipients = None, add = None, remove = None, remove_own = false, output = None, force = false, dry_run = false, split_links = false, allow_plugins = false))]
#[allow(clippy::too_many_arguments)]
pub fn rekey_file<'py>(
    py: Python<'py>,
    path: PathBuf,
    identities: Option<&Bound<'py, PyAny>>,
    passphrase: Option<&Bound<'py, PyAny>>,
    recipients: Option<&Bound<'py, PyAny>>,
    add: Option<&Bound<'py, PyAny>>,
    remove: Option<&Bound<'py, PyAny>>,
    remove_own: bool,
    output: Option<PathBuf>,
    force: bool,
    dry_run: bool,
    split_links: bool,
    allow_plugins: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let ids = identities_of(identities, passphrase, allow_plugins)?;
    let change = change_of(recipients, add, remove, remove_own, allow_plugins)?;
    let opts = FileOptions { output, force, dry_run, split_links };
    let report = py.detach(|| hyperseal::rekey::rekey_file(&path, &ids, &change, &opts)).py_err()?;
    let d = plan_dict(py, &report.plan)?;
    let (written, bytes) = match report.written {
        Written::InPlace => ("in_place", None),
        Written::Rewritten { bytes } => ("rewritten", Some(bytes)),
        Written::Nothing => ("nothing", None),
    };
    d.set_item("written", written)?;
    d.set_item("bytes", bytes)?;
    Ok(d)
}

/// Re-keys a binary file given its start (at least the whole header): returns the new header,
/// the old header's length (the new file is the new header followed by the old file from
/// there) and the plan. See `hyperseal.rekey_bytes`.
#[pyfunction]
#[pyo3(signature = (head, identities = None, *, passphrase = None, recipients = None, add = None, remove = None, remove_own = false, allow_plugins = false))]
#[allow(clippy::too_many_arguments)]
pub fn rekey_head<'py>(
    py: Python<'py>,
    head: &Bound<'py, PyAny>,
    identities: Option<&Bound<'py, PyAny>>,
    passphrase: Option<&Bound<'py, PyAny>>,
    recipients: Option<&Bound<'py, PyAny>>,
    add: Option<&Bound<'py, PyAny>>,
    remove: Option<&Bound<'py, PyAny>>,
    remove_own: bool,
    allow_plugins: bool,
) -> PyResult<(Bound<'py, PyBytes>, usize, Bound<'py, PyDict>)> {
    let ids = identities_of(identities, passphrase, allow_plugins)?;
    let change = change_of(recipients, add, remove, remove_own, allow_plugins)?;
    let input = crate::buffers::Input::get(head, "head")?;
    let bytes = input.as_slice();
    let (new, old_len, plan) = py.detach(|| hyperseal::rekey::rekey_head(bytes, &ids, &change)).py_err()?;
    Ok((PyBytes::new(py, &new), old_len, plan_dict(py, &plan)?))
}

/// Re-keys every file under `paths` (see `hyperseal.rekey_tree`): returns `(files, summary)`,
/// `files` a list of dicts (`path`, `outcome`: "in_place", "rewritten", "planned",
/// "already_done", "skipped" or "failed", with the plan, the `reason` skipped or the `error`
/// raised), `summary` the counts. `progress(done, total)` is called with the GIL taken back.
#[pyfunction]
#[pyo3(signature = (paths, identities = None, *, passphrase = None, recipients = None, add = None, remove = None, remove_own = false, recursive = true, include = Vec::new(), exclude = Vec::new(), follow_symlinks = false, dry_run = false, manifest = None, split_links = false, allow_plugins = false, progress = None))]
#[allow(clippy::too_many_arguments)]
pub fn rekey_tree<'py>(
    py: Python<'py>,
    paths: Vec<PathBuf>,
    identities: Option<&Bound<'py, PyAny>>,
    passphrase: Option<&Bound<'py, PyAny>>,
    recipients: Option<&Bound<'py, PyAny>>,
    add: Option<&Bound<'py, PyAny>>,
    remove: Option<&Bound<'py, PyAny>>,
    remove_own: bool,
    recursive: bool,
    include: Vec<String>,
    exclude: Vec<String>,
    follow_symlinks: bool,
    dry_run: bool,
    manifest: Option<PathBuf>,
    split_links: bool,
    allow_plugins: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyDict>)> {
    use hyperseal::rekey::{TreeOptions, TreeOutcome, MANIFEST_NAME};
    let ids = identities_of(identities, passphrase, allow_plugins)?;
    let change = change_of(recipients, add, remove, remove_own, allow_plugins)?;
    let manifest = match (manifest, recursive, &paths[..]) {
        (Some(m), _, _) => Some(m),
        (None, true, [dir]) if dir.is_dir() => Some(dir.join(MANIFEST_NAME)),
        _ => None,
    };
    let opts = TreeOptions {
        recursive,
        include,
        exclude,
        follow_links: follow_symlinks,
        dry_run,
        manifest,
        split_links,
        threads: 0,
    };
    let report = with_progress(py, &progress, |call| {
        hyperseal::rekey::rekey_tree(&paths, &ids, &change, &opts, call.map(|c| c as _))
    })?;
    let (in_place, rewritten, done, skipped, failed) = report.counts();
    let summary = [
        ("in_place", in_place),
        ("rewritten", rewritten),
        ("already_done", done),
        ("skipped", skipped),
        ("failed", failed),
    ];
    tree_report(py, report.files, &summary, |outcome| {
        Ok(match outcome {
            TreeOutcome::Rekeyed(r) => {
                let how = match r.written {
                    Written::InPlace => "in_place",
                    Written::Rewritten { .. } => "rewritten",
                    Written::Nothing => "planned",
                };
                let fields = PyDict::new(py);
                fields.set_item("plan", plan_dict(py, &r.plan)?)?;
                Entry::Changed(how, fields)
            }
            TreeOutcome::AlreadyDone => Entry::Kept("already_done"),
            TreeOutcome::Skipped(why) => Entry::Skipped(why),
            TreeOutcome::Failed(e) => Entry::Failed(e),
        })
    })
}

/// Runs `run` without the GIL, with `progress(done, total)` as the library's callback (called
/// with the GIL taken back). The first exception it raises stops further calls and is raised
/// once the run is over, since the library's walk cannot be interrupted from a callback.
pub(crate) fn with_progress<T: Send>(
    py: Python<'_>,
    progress: &Option<Py<PyAny>>,
    run: impl FnOnce(Option<&(dyn Fn(usize, usize) + Sync)>) -> Result<T, hyperseal::Error> + Send,
) -> PyResult<T> {
    let failed_callback: std::sync::Mutex<Option<PyErr>> = std::sync::Mutex::new(None);
    let done = py
        .detach(|| {
            let call = |done: usize, total: usize| {
                let (Some(cb), Ok(mut slot)) = (progress, failed_callback.lock()) else { return };
                if slot.is_none() {
                    *slot = Python::attach(|py| cb.call1(py, (done, total)).err());
                }
            };
            run(Some(&call))
        })
        .py_err()?;
    match failed_callback.into_inner().ok().flatten() {
        Some(e) => Err(e),
        None => Ok(done),
    }
}

/// One file's outcome in the terms both re-key reports share. The tree and the sops reports
/// name their outcomes differently and describe a change differently (a `plan` dict; the
/// `added` and `removed` age entries), so each maps its own outcome here and [`tree_report`]
/// builds the dicts once.
pub(crate) enum Entry<'py> {
    /// Re-keyed (or, for a dry run, planned): the outcome's name and the fields describing it.
    Changed(&'static str, Bound<'py, PyDict>),
    /// Nothing to do: "already_done" or "unchanged".
    Kept(&'static str),
    Skipped(String),
    Failed(hyperseal::Error),
}

/// `(files, summary)` as `rekey_tree` returns them, from a library report's files and counts.
pub(crate) fn tree_report<'py, O>(
    py: Python<'py>,
    outcomes: Vec<(PathBuf, O)>,
    summary: &[(&str, usize)],
    entry: impl Fn(O) -> PyResult<Entry<'py>>,
) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyDict>)> {
    let files = PyList::empty(py);
    for (path, outcome) in outcomes {
        let d = PyDict::new(py);
        d.set_item("path", path)?;
        match entry(outcome)? {
            Entry::Changed(how, fields) => {
                d.set_item("outcome", how)?;
                d.update(fields.as_mapping())?;
            }
            Entry::Kept(how) => d.set_item("outcome", how)?,
            Entry::Skipped(why) => {
                d.set_item("outcome", "skipped")?;
                d.set_item("reason", why)?;
            }
            Entry::Failed(e) => {
                d.set_item("outcome", "failed")?;
                d.set_item("error", crate::errors::to_py(e).value(py))?;
            }
        }
        files.append(d)?;
    }
    let counts = PyDict::new(py);
    for (name, n) in summary {
        counts.set_item(name, n)?;
    }
    Ok((files, counts))
}

/// The change's name, as every re-key manifest records it (the library's `Change::id`): the
/// S3 prefix re-key names its manifest's change with it, as the tree re-key does.
#[pyfunction]
#[pyo3(signature = (recipients = None, add = None, remove = None, remove_own = false, allow_plugins = false))]
pub fn rekey_change_id(
    recipients: Option<&Bound<'_, PyAny>>,
    add: Option<&Bound<'_, PyAny>>,
    remove: Option<&Bound<'_, PyAny>>,
    remove_own: bool,
    allow_plugins: bool,
) -> PyResult<String> {
    Ok(change_of(recipients, add, remove, remove_own, allow_plugins)?.id())
}

/// Whether `rel` (a key under the prefix) passes the include and exclude globs, as the tree
/// re-key selects paths (the library's `selected_by`).
#[pyfunction]
pub fn rekey_selected(include: Vec<String>, exclude: Vec<String>, rel: &str) -> bool {
    hyperseal::rekey::selected_by(&include, &exclude, rel)
}

/// Whether bytes begin as a hyperseal or age file does (the library's `looks_encrypted_head`).
#[pyfunction]
pub fn looks_encrypted(head: &[u8]) -> bool {
    hyperseal::rekey::looks_encrypted_head(head)
}
