//! `rekeyFile` / `rekey`: change who can open a file without re-encrypting it (the library's
//! `hyperseal::rekey`). Only the header is made again: the same file key wrapped to the new
//! recipient set, MAC'd again; every payload byte stays as it was. A file on disk is rewritten
//! in place in O(header) where the new header fits the old one's length (behind the library's
//! journal), else written anew with the payload copied by the kernel.
//!
//! A whole tree of files is `rekeyTree` (`rekey/tree.rs`).
//!
//! Removal is not revocation: a removed recipient who kept an old copy (or its file key) still
//! reads this one. Only a fresh encryption protects what is written from then on.

use std::path::PathBuf;
use std::sync::Arc;

use hyperseal::recipient::{self, Identity, Recipient};
use hyperseal::rekey::Change;
use napi::bindgen_prelude::{AsyncTask, Buffer, Either, Uint8Array};
use napi_derive::napi;

use crate::errors::{fail_task, Fail, JsErr};
use crate::keys::{self, PublicKeys};

mod report;
mod sops;
mod tree;
pub use report::*;
pub use tree::*;

/// Options of {@link rekeyFile} and {@link rekey}.
#[napi(object, object_to_js = false)]
pub struct RekeyOptions {
    /// The full new recipient list: replaces every stanza. Exclusive with `add` and `remove`.
    #[napi(ts_type = "string | string[]")]
    pub recipients: Option<Either<String, Vec<String>>>,
    /// Recipients to add; every other stanza is kept.
    #[napi(ts_type = "string | string[]")]
    pub add: Option<Either<String, Vec<String>>>,
    /// Recipients to remove. Only kinds whose stanzas name their key (SSH, RSA, age's tag kinds)
    /// can be removed by name; X25519 and post-quantum stanzas are anonymous: give the full new
    /// list in `recipients` instead.
    #[napi(ts_type = "string | string[]")]
    pub remove: Option<Either<String, Vec<String>>>,
    /// Open a passphrase-encrypted file with this passphrase instead of `identities` (pass
    /// `null` for them). Its one stanza is then replaced by `recipients`.
    pub passphrase: Option<String>,
    /// Allow a result that none of the given identities opens (default false: refused).
    pub remove_own: Option<bool>,
    /// {@link rekeyFile} only: write the result here instead of over the file.
    pub output: Option<String>,
    /// {@link rekeyFile} only: replace an existing `output` (default false: refuse).
    pub force: Option<bool>,
    /// {@link rekeyFile} only: check the change and report it, write nothing.
    pub dry_run: Option<bool>,
    /// {@link rekeyFile} only: allow rewriting a file that has other hard links (they keep the
    /// old header and recipients). Without it such a file is re-keyed only in place.
    pub split_links: Option<bool>,
    /// Allow keys that name an age plugin, which runs the program `age-plugin-NAME` (default
    /// false: refused with `ERR_HYPERSEAL_KEY`).
    pub allow_plugins: Option<bool>,
    /// A sops file: only the age entries of its `sops` metadata change, every other byte stays
    /// (values, `mac`, comments). The target is `recipients` (the one key group's age list)
    /// or `add`/`remove`; for {@link rekeyFile} without them, the file's `.sops.yaml` creation
    /// rule. `removeOwn` allows a key group that none of `identities` opens afterwards. The
    /// report's `before` and `after` are empty.
    pub sops: Option<bool>,
    /// With `sops`: a fresh data key, every value sealed again, as `sops rotate` does (removal
    /// alone leaves the old data key valid for whoever kept it).
    pub rotate: Option<bool>,
    /// {@link rekey} with `sops` only: how the bytes are stored, as sops picks it from a file's
    /// name.
    #[napi(ts_type = "'yaml' | 'json' | 'binary' | 'dotenv' | 'ini'")]
    pub format: Option<String>,
}

impl RekeyOptions {
    fn sops_args(&self) -> sops::SopsArgs<'_> {
        sops::SopsArgs {
            recipients: &self.recipients,
            add: &self.add,
            remove: &self.remove,
            passphrase: &self.passphrase,
            remove_own: self.remove_own,
            rotate: self.rotate,
            allow_plugins: self.allow_plugins,
        }
    }

    /// Options that are not sops's, or sops's without `sops`.
    fn check_sops(&self) -> Result<bool, Fail> {
        let sops = self.sops.unwrap_or(false);
        if !sops && (self.rotate.is_some() || self.format.is_some()) {
            return Err(Fail::arg("rotate and format are options of sops files (sops: true)"));
        }
        if sops && (self.output.is_some() || self.split_links.is_some()) {
            return Err(Fail::arg(
                "a sops file is re-keyed where it is: output and splitLinks are not its options",
            ));
        }
        Ok(sops)
    }
}

/// What {@link rekeyFile} did.
#[napi(object)]
pub struct RekeyReport {
    /// Stanza types before, in order (slack stanzas left out).
    pub before: Vec<String>,
    /// Stanza types after, in order.
    pub after: Vec<String>,
    /// Stanzas of the old header that are not in the new one. Non-zero means someone lost
    /// access to new copies only: an old copy still opens for them.
    pub removed: u32,
    /// Stanzas wrapped for new recipients.
    pub added: u32,
    /// Only the header was rewritten, over the old one (false for a dry run and for a file
    /// written anew).
    pub in_place: bool,
}

fn report(plan: &hyperseal::rekey::Plan, in_place: bool) -> RekeyReport {
    RekeyReport {
        before: plan.before.clone(),
        after: plan.after.clone(),
        removed: plan.removed as u32,
        added: plan.added as u32,
        in_place,
    }
}

/// The key strings of an option; `None` when it is not given.
fn list(keys: &Option<PublicKeys>) -> Option<Vec<&str>> {
    keys.as_ref().map(|k| match k {
        Either::A(s) => vec![s.as_str()],
        Either::B(v) => v.iter().map(String::as_str).collect(),
    })
}

fn parse(keys: &Option<PublicKeys>, allow: bool) -> Result<Vec<Box<dyn Recipient>>, Fail> {
    list(keys).map_or(Ok(Vec::new()), |l| keys::parse_recipients(&l, allow))
}

/// The options as the library's `Change`.
fn change(o: &RekeyOptions) -> Result<Change, Fail> {
    change_of(&o.recipients, &o.add, &o.remove, o.remove_own, o.allow_plugins)
}

fn change_of(
    recipients: &Option<PublicKeys>,
    add: &Option<PublicKeys>,
    remove: &Option<PublicKeys>,
    remove_own: Option<bool>,
    allow_plugins: Option<bool>,
) -> Result<Change, Fail> {
    let allow = allow_plugins.unwrap_or(false);
    let set = match list(recipients) {
        Some(l) if l.is_empty() => return Err(Fail::arg("recipients: give at least one public key")),
        Some(l) => Some(keys::parse_recipients(&l, allow)?),
        None => None,
    };
    Ok(Change {
        set,
        add: parse(add, allow)?,
        remove: parse(remove, allow)?,
        remove_own: remove_own.unwrap_or(false),
    })
}

/// One private key (a secret key line, an identity file's text, a PKCS#8 PEM) or several, or
/// `options.passphrase`.
fn identities(ids: &Option<Keys>, passphrase: Option<&str>, allow: bool) -> Result<Identities, Fail> {
    let text = match (ids, passphrase) {
        (None, Some("")) => return Err(Fail::arg("passphrase: the passphrase is empty")),
        (None, Some(p)) => {
            return Ok(Arc::new(recipient::passphrase_identities(zeroize::Zeroizing::new(p.to_string()))))
        }
        (Some(_), Some(_)) => return Err(Fail::arg("give identities or a passphrase, not both")),
        (None, None) => return Err(Fail::arg("identities: give a private key (or options.passphrase)")),
        (Some(Either::A(s)), None) => s.clone(),
        (Some(Either::B(v)), None) if v.is_empty() => {
            return Err(Fail::arg("identities: give at least one private key"))
        }
        (Some(Either::B(v)), None) => v.join("\n"),
    };
    keys::identities(&zeroize::Zeroizing::new(text), allow)
}

type Identities = Arc<Vec<Box<dyn Identity>>>;
type Keys = Either<String, Vec<String>>;

/// A re-key of a file on the libuv pool.
pub struct RekeyTask {
    path: PathBuf,
    identities: Result<Identities, Fail>,
    change: Result<Change, Fail>,
    options: hyperseal::rekey::FileOptions,
    sops: Option<Result<sops::SopsJob, Fail>>,
}

impl RekeyTask {
    fn run(&mut self) -> Result<RekeyReport, Fail> {
        let ids = std::mem::replace(&mut self.identities, Ok(Arc::default()))?;
        if let Some(job) = self.sops.take() {
            return sops::file_report(job?.run(&ids, None)?);
        }
        let change = std::mem::replace(&mut self.change, Ok(Change::default()))?;
        run_file(&self.path, &ids, &change, &self.options)
    }
}

fn run_file(
    path: &std::path::Path,
    ids: &[Box<dyn Identity>],
    change: &Change,
    options: &hyperseal::rekey::FileOptions,
) -> Result<RekeyReport, Fail> {
    let r = hyperseal::rekey::rekey_file(path, ids, change, options)?;
    Ok(report(&r.plan, r.written == hyperseal::rekey::Written::InPlace))
}

fail_task!(RekeyTask => RekeyReport);

/// Re-keys the file at `path` (opened with `identities`) without re-encrypting its payload:
/// `options.recipients` replaces every recipient, `options.add` / `options.remove` edit the
/// list. Resolves with what changed. On any failure the file is as it was.
#[napi(ts_return_type = "Promise<RekeyReport>")]
pub fn rekey_file(
    path: String,
    #[napi(ts_arg_type = "string | string[] | null")] identities: Option<Keys>,
    options: RekeyOptions,
) -> AsyncTask<RekeyTask> {
    let allow = options.allow_plugins.unwrap_or(false);
    let path = PathBuf::from(path);
    let sops = match options.check_sops() {
        Ok(false) => None,
        Ok(true) => Some(
            sops::files_options(&options.sops_args(), options.dry_run.unwrap_or(false), false)
                .map(|o| sops::SopsJob { paths: vec![path.clone()], options: o, allow_plugins: allow }),
        ),
        Err(e) => Some(Err(e)),
    };
    AsyncTask::new(RekeyTask {
        path,
        sops,
        identities: self::identities(&identities, options.passphrase.as_deref(), allow),
        change: change(&options),
        options: hyperseal::rekey::FileOptions {
            output: options.output.map(PathBuf::from),
            force: options.force.unwrap_or(false),
            dry_run: options.dry_run.unwrap_or(false),
            split_links: options.split_links.unwrap_or(false),
        },
    })
}

/// Re-keys a whole binary file held in memory: the new header followed by the old file's salt
/// and payload, untouched. Where the new header fits the old one's length the result is exactly
/// as long as `data`. Armored input is refused (use {@link rekeyFile}).
#[napi]
pub fn rekey(
    data: Uint8Array,
    #[napi(ts_arg_type = "string | string[] | null")] identities: Option<Keys>,
    options: RekeyOptions,
) -> Result<Buffer, JsErr> {
    if options.output.is_some()
        || options.force.is_some()
        || options.dry_run.is_some()
        || options.split_links.is_some()
    {
        return Err(Fail::arg(
            "rekey returns the new bytes: output, force and dryRun are options of rekeyFile",
        )
        .into());
    }
    let ids =
        self::identities(&identities, options.passphrase.as_deref(), options.allow_plugins.unwrap_or(false))?;
    if options.check_sops()? {
        return Ok(sops::rekey_bytes(&data, &ids, &options.sops_args(), options.format.as_deref())?.into());
    }
    let change = change(&options)?;
    let (header, old_len, _plan) = hyperseal::rekey::rekey_head(&data, &ids, &change).map_err(Fail::from)?;
    let mut out = Vec::with_capacity(header.len() + data.len() - old_len);
    out.extend_from_slice(&header);
    out.extend_from_slice(&data[old_len..]);
    Ok(out.into())
}
