//! `rekeyTree`: every file of a tree (or list) re-keyed by one call, over the library's
//! `rekey::rekey_tree` — the walk, the include/exclude globs, what is skipped, the manifest that
//! lets a killed run resume, and each file's re-key are the library's. This converts the
//! options and the report, runs the walk on the libuv pool and passes its progress to JS.

use std::path::PathBuf;

use hyperseal::rekey::{Change, TreeOptions, TreeOutcome, TreeReport, Written, MANIFEST_NAME};
use napi::bindgen_prelude::{AsyncTask, Either, FnArgs, Status, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

use super::report::{count, report, Entry, RekeyPlan, RekeyTreeReport, RekeyTreeSummary};
use super::{change_of, sops, Identities, Keys};
use crate::errors::{fail_task, Fail};
use crate::keys::PublicKeys;

type TreeProgressFn =
    ThreadsafeFunction<FnArgs<(u32, u32)>, Unknown<'static>, FnArgs<(u32, u32)>, Status, false>;

/// Options of {@link rekeyTree}: the keys as {@link rekeyFile} takes them, and the walk's.
#[napi(object, object_to_js = false)]
pub struct RekeyTreeOptions {
    /// The full new recipient list: replaces every stanza. Exclusive with `add` and `remove`.
    #[napi(ts_type = "string | string[]")]
    pub recipients: Option<Either<String, Vec<String>>>,
    /// Recipients to add; every other stanza is kept.
    #[napi(ts_type = "string | string[]")]
    pub add: Option<Either<String, Vec<String>>>,
    /// Recipients to remove (kinds whose stanzas name their key: see {@link RekeyOptions}).
    #[napi(ts_type = "string | string[]")]
    pub remove: Option<Either<String, Vec<String>>>,
    /// Open passphrase-encrypted files with this passphrase instead of `identities` (pass
    /// `null` for them).
    pub passphrase: Option<String>,
    /// Allow a result that none of the given identities opens (default false: that file fails).
    pub remove_own: Option<bool>,
    /// Walk the folders among `paths` (default true; false: a folder is skipped).
    pub recursive: Option<bool>,
    /// Only files matching one of these globs (default: all). A glob without `/` is matched
    /// against the file name, one with `/` against the path below its root; `*` and `?` stay
    /// within a name, `**` crosses folders.
    #[napi(ts_type = "string | string[]")]
    pub include: Option<Either<String, Vec<String>>>,
    /// No file matching one of these globs.
    #[napi(ts_type = "string | string[]")]
    pub exclude: Option<Either<String, Vec<String>>>,
    /// Follow symbolic links to files and folders (default false: they are skipped).
    pub follow_symlinks: Option<bool>,
    /// Check every file and report what it would become (`'planned'`); write nothing, no
    /// manifest either.
    pub dry_run: Option<bool>,
    /// Where the run's manifest is kept. Default: `FOLDER/.hyperseal-rekey.manifest` when
    /// `paths` is one folder walked recursively, else none (no resuming).
    pub manifest: Option<String>,
    /// Allow rewriting files that have other hard links (they keep the old header); without it
    /// such a file is re-keyed only in place.
    pub split_links: Option<bool>,
    /// Allow keys that name an age plugin, which runs the program `age-plugin-NAME` (default
    /// false: refused with `ERR_HYPERSEAL_KEY`).
    pub allow_plugins: Option<bool>,
    /// Sops files (see {@link RekeyOptions}): each file's age entries changed to `recipients`,
    /// `add`/`remove`, or its `.sops.yaml` creation rule; files that are not sops files, or that
    /// no rule selects, are skipped. Each file is written whole and atomically, so a stopped
    /// run is finished by running it again (no manifest); `include`, `exclude`,
    /// `followSymlinks`, `manifest` and `splitLinks` are not its options.
    pub sops: Option<bool>,
    /// With `sops`: rotate each file (a fresh data key), as `sops rotate` does.
    pub rotate: Option<bool>,
    /// Called after each file with the files done and the files found; queued to the event
    /// loop, so the last call may come just after the promise settles.
    #[napi(ts_type = "(done: number, total: number) => void")]
    pub on_progress: Option<TreeProgressFn>,
}

/// A tree re-key on the libuv pool.
pub struct RekeyTreeTask {
    roots: Vec<PathBuf>,
    identities: Result<Identities, Fail>,
    change: Result<Change, Fail>,
    options: Result<TreeOptions, Fail>,
    progress: Option<TreeProgressFn>,
    sops: Option<Result<sops::SopsJob, Fail>>,
}

impl RekeyTreeTask {
    fn run(&mut self) -> Result<RekeyTreeReport, Fail> {
        let ids = std::mem::replace(&mut self.identities, Ok(Default::default()))?;
        if let Some(job) = self.sops.take() {
            let job = job?;
            let report = with_progress(&self.progress, |call| job.run(&ids, call))?;
            return Ok(sops::tree_report(report, job.options.dry_run));
        }
        let change = std::mem::replace(&mut self.change, Ok(Change::default()))?;
        let mut options = std::mem::replace(&mut self.options, Ok(TreeOptions::default()))?;
        // The default manifest: inside the one folder walked (a stat, so here and not on the
        // JS thread).
        if let (None, true, [dir]) = (&options.manifest, options.recursive, &self.roots[..]) {
            if dir.is_dir() {
                options.manifest = Some(dir.join(MANIFEST_NAME));
            }
        }
        let report = with_progress(&self.progress, |call| {
            hyperseal::rekey::rekey_tree(&self.roots, &ids, &change, &options, call.map(|c| c as _))
        })?;
        Ok(convert(report))
    }
}

/// Runs `run` with the JS progress callback, if any, as the library's.
fn with_progress<T>(
    progress: &Option<TreeProgressFn>,
    run: impl FnOnce(Option<&(dyn Fn(usize, usize) + Sync)>) -> T,
) -> T {
    let Some(f) = progress else { return run(None) };
    let call = |done: usize, total: usize| {
        f.call((count(done), count(total)).into(), ThreadsafeFunctionCallMode::NonBlocking);
    };
    run(Some(&call))
}

fn convert(tree: TreeReport) -> RekeyTreeReport {
    let (in_place, rewritten, already_done, skipped, failed) = tree.counts();
    let summary = RekeyTreeSummary {
        in_place: count(in_place),
        rewritten: count(rewritten),
        already_done: count(already_done),
        unchanged: None,
        skipped: count(skipped),
        failed: count(failed),
    };
    report(tree.files, summary, |outcome| match outcome {
        TreeOutcome::Rekeyed(r) => {
            let p = r.plan;
            let plan = RekeyPlan {
                before: p.before,
                after: p.after,
                removed: count(p.removed),
                added: count(p.added),
            };
            let name = match r.written {
                Written::InPlace => "in_place",
                Written::Rewritten { .. } => "rewritten",
                Written::Nothing => "planned",
            };
            Entry::Changed(name, plan)
        }
        TreeOutcome::AlreadyDone => Entry::Kept("already_done"),
        TreeOutcome::Skipped(why) => Entry::Skipped(why),
        TreeOutcome::Failed(e) => Entry::Failed(e),
    })
}

fail_task!(RekeyTreeTask => RekeyTreeReport);

fn globs(g: Option<PublicKeys>) -> Vec<String> {
    match g {
        None => Vec::new(),
        Some(Either::A(s)) => vec![s],
        Some(Either::B(v)) => v,
    }
}

fn tree_options(roots: &[PathBuf], o: &mut RekeyTreeOptions) -> Result<TreeOptions, Fail> {
    if roots.is_empty() {
        return Err(Fail::arg("paths: give at least one file or folder"));
    }
    let manifest = match o.manifest.take() {
        Some(m) if m.is_empty() => return Err(Fail::arg("manifest: the path is empty")),
        m => m.map(PathBuf::from),
    };
    Ok(TreeOptions {
        recursive: o.recursive.unwrap_or(true),
        include: globs(o.include.take()),
        exclude: globs(o.exclude.take()),
        follow_links: o.follow_symlinks.unwrap_or(false),
        dry_run: o.dry_run.unwrap_or(false),
        manifest,
        split_links: o.split_links.unwrap_or(false),
        threads: 0,
    })
}

/// Re-keys every file under `paths` (a file or folder, or a list of them) that hyperseal or
/// age can open with `identities`, as `hyperseal rekey --recursive` does: each in O(header)
/// with {@link rekeyFile}'s guarantees. Files that are not encrypted, not for these
/// identities, links (unless `followSymlinks`) and other non-regular files are skipped and
/// never touched; one file's failure is its outcome, not the call's. Resolves with every file's
/// outcome and the counts; rejects only when the walk or the manifest fails as a whole (a path
/// that does not exist, a manifest of another change).
#[napi(ts_return_type = "Promise<RekeyTreeReport>")]
pub fn rekey_tree(
    #[napi(ts_arg_type = "string | string[]")] paths: Keys,
    #[napi(ts_arg_type = "string | string[] | null")] identities: Option<Keys>,
    mut options: RekeyTreeOptions,
) -> AsyncTask<RekeyTreeTask> {
    let roots: Vec<PathBuf> = match paths {
        Either::A(p) => vec![p.into()],
        Either::B(v) => v.into_iter().map(PathBuf::from).collect(),
    };
    let allow = options.allow_plugins.unwrap_or(false);
    let sops = sops_job(&roots, &options);
    AsyncTask::new(RekeyTreeTask {
        sops,
        identities: super::identities(&identities, options.passphrase.as_deref(), allow),
        change: change_of(
            &options.recipients,
            &options.add,
            &options.remove,
            options.remove_own,
            options.allow_plugins,
        ),
        options: tree_options(&roots, &mut options),
        progress: options.on_progress.take(),
        roots,
    })
}

/// The sops re-key `options` ask for, if they do.
fn sops_job(roots: &[PathBuf], o: &RekeyTreeOptions) -> Option<Result<sops::SopsJob, Fail>> {
    if !o.sops.unwrap_or(false) {
        return o.rotate.is_some().then(|| Err(Fail::arg("rotate is an option of sops files (sops: true)")));
    }
    if o.include.is_some()
        || o.exclude.is_some()
        || o.follow_symlinks.is_some()
        || o.manifest.is_some()
        || o.split_links.is_some()
    {
        return Some(Err(Fail::arg(
            "sops files are selected by .sops.yaml's path_regex and written whole: include, exclude, followSymlinks, manifest and splitLinks are not their options",
        )));
    }
    if roots.is_empty() {
        return Some(Err(Fail::arg("paths: give at least one file or folder")));
    }
    let args = sops::SopsArgs {
        recipients: &o.recipients,
        add: &o.add,
        remove: &o.remove,
        passphrase: &o.passphrase,
        remove_own: o.remove_own,
        rotate: o.rotate,
        allow_plugins: o.allow_plugins,
    };
    let recursive = o.recursive.unwrap_or(true);
    Some(sops::files_options(&args, o.dry_run.unwrap_or(false), recursive).map(|options| sops::SopsJob {
        paths: roots.to_vec(),
        options,
        allow_plugins: o.allow_plugins.unwrap_or(false),
    }))
}
