//! `hyperseal rekey --sops`: the age entries of sops files moved to a new recipient set, every
//! other byte kept (the library's `rekey::sops`). The target is each file's `.sops.yaml`
//! creation rule (as `sops updatekeys` reads it), or `-r`/`--add`/`--remove`. Identities are
//! `-i`, the agent, and where sops looks for age keys: `SOPS_AGE_KEY`, `SOPS_AGE_KEY_FILE`, and
//! its default key file. The environment is read here: the library takes keys as arguments.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, Result};
use hyperseal::output::OutputOptions;
use hyperseal::recipient::{self, Identity};
use hyperseal::rekey::sops::{self, find_config, Format, Outcome, Rules, Target, TargetGroup, MAX_FILE};

use super::rekey_common::RekeyArgs;
use crate::errors::usage;

/// Files read at once: a plugin or the agent is asked once per window.
const WINDOW_FILES: usize = 1024;
/// The bytes of a window's files held at once (a window ends after the file that passes it).
const WINDOW_BYTES: usize = 64 << 20;
/// The most files one run takes (a folder walk stops there, with an error).
const MAX_FILES: usize = 1_000_000;

/// Each `.sops.yaml` read so far, or why it could not be.
type Configs = HashMap<PathBuf, std::result::Result<Rules, String>>;

/// What became of one file.
enum Done {
    Changed(usize, usize),
    Unchanged,
    Skipped(&'static str),
    Failed(String),
}

pub fn run(a: &RekeyArgs) -> Result<()> {
    if a.rotate {
        return Err(usage(
            "--rotate is not available for sops files",
            "use `sops rotate` for a fresh data key",
        ));
    }
    // Each file is written whole and atomically, so a stopped run needs no manifest: run again.
    if a.output.is_some()
        || a.passphrase_file.is_some()
        || a.manifest.is_some()
        || !a.include.is_empty()
        || !a.exclude.is_empty()
    {
        return Err(usage(
            "--sops takes -r/-R, --add, --remove, -i, --recursive, --threads, --dry-run, --force and -q",
            "re-key sops files in place; select them with .sops.yaml's path_regex",
        ));
    }
    let identities = identities(a)?;
    if identities.is_empty() {
        return Err(usage(
            "no identity to open the files with",
            "give -i, set SOPS_AGE_KEY_FILE or SOPS_AGE_KEY, or point HYPERSEAL_AGENT_SOCK at an agent",
        ));
    }
    let explicit = explicit_target(a)?;
    let files = files(a)?;
    let bar = progress(a, files.len());
    let identities: Vec<Arc<dyn Identity>> = identities.into_iter().map(Arc::from).collect();
    let batches = identities.iter().any(|i| i.unwraps_in_batches());
    let configs = Mutex::new(HashMap::new());
    let slots: Vec<Mutex<Option<Done>>> = files.iter().map(|_| Mutex::new(None)).collect();
    let mut start = 0;
    while start < files.len() {
        // A window of files read at once, within a memory budget: a plugin or the agent is
        // asked once for all of them.
        let mut window = Vec::new();
        let mut bytes = 0;
        while start + window.len() < files.len() && window.len() < WINDOW_FILES && bytes < WINDOW_BYTES {
            let file = &files[start + window.len()].0;
            let read = crate::io::read_file_within(file, MAX_FILE, "a sops file", |e| {
                anyhow!(crate::io::reason(&e))
            })
            .map_err(|e| crate::errors::message(&e));
            bytes += read.as_ref().map_or(0, |b| b.len());
            window.push(read);
        }
        let views = match batches {
            true => {
                let inputs: Vec<(&[u8], Format)> = window
                    .iter()
                    .zip(&files[start..])
                    .filter_map(|(r, (f, _))| r.as_ref().ok().map(|b| (&b[..], Format::for_path(f))))
                    .collect();
                sops::unlock(&inputs, &identities)
            }
            false => sops::unlock(&[], &identities),
        };
        // Files on the library's executor: each is small, so its time is the parse, the wraps
        // and the synced write, which overlap across files.
        let _ = hyperseal::exec::for_each(window.len(), a.threads, &|i| {
            let (file, walked) = &files[start + i];
            let done = match &window[i] {
                Ok(b) => one(file, b, *walked, a, explicit.as_ref(), &views, &configs),
                Err(why) => Done::Failed(why.clone()),
            };
            *slots[start + i].lock().unwrap_or_else(|p| p.into_inner()) = Some(done);
            if let Some(b) = &bar {
                b.inc(1);
            }
            Ok(())
        });
        start += window.len();
    }
    let results: Vec<(&PathBuf, Done)> = files
        .iter()
        .zip(slots)
        .map(|((f, _), s)| {
            (
                f,
                s.into_inner()
                    .unwrap_or_else(|p| p.into_inner())
                    .unwrap_or(Done::Failed("not reached".into())),
            )
        })
        .collect();
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    summary(a, &results)
}

/// `-r`/`-R` (the one group's list) or `--add`/`--remove`; `None`: each file's rule.
fn explicit_target(a: &RekeyArgs) -> Result<Option<Target>> {
    let mut set = a.recipients.clone();
    for f in &a.recipient_files {
        let text = crate::io::read_small(f, "recipients file")?;
        set.extend(
            text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_owned),
        );
    }
    for r in set.iter().chain(&a.add) {
        super::identity::parse_recipient_arg(r).map_err(|e| super::encrypt::recipient_error(e, None))?;
    }
    Ok(if !set.is_empty() {
        Some(Target::Groups(vec![TargetGroup { age: set, others: None }]))
    } else if !a.add.is_empty() || !a.remove.is_empty() {
        Some(Target::Edit { add: a.add.clone(), remove: a.remove.clone() })
    } else {
        None
    })
}

/// `-i`, the agent, then sops's own places for age keys.
fn identities(a: &RekeyArgs) -> Result<Vec<Box<dyn Identity>>> {
    let mut ids = super::identity::load_identities(&a.identities, a.identity_passphrase_file.as_deref())?;
    ids.extend(super::identity::agent_identity());
    if let Some(text) = std::env::var_os("SOPS_AGE_KEY").filter(|v| !v.is_empty()) {
        let text = zeroize::Zeroizing::new(text.to_string_lossy().into_owned());
        ids.extend(recipient::parse_identities(&text).map_err(|e| anyhow!("SOPS_AGE_KEY: {e}"))?);
    }
    let file =
        std::env::var_os("SOPS_AGE_KEY_FILE").filter(|v| !v.is_empty()).map(PathBuf::from).or_else(|| {
            // sops's default: $XDG_CONFIG_HOME/sops/age/keys.txt (~/.config without it).
            let base = std::env::var_os("XDG_CONFIG_HOME")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
            Some(base.join("sops/age/keys.txt")).filter(|p| p.is_file())
        });
    if let Some(f) = file {
        ids.extend(super::identity::load_identities(&[f], a.identity_passphrase_file.as_deref())?);
    }
    Ok(ids)
}

/// The files to re-key; `true` where a folder walk found it (then a file that is not a sops
/// file, or that no rule selects, is skipped rather than failed).
fn files(a: &RekeyArgs) -> Result<Vec<(PathBuf, bool)>> {
    let mut out = Vec::new();
    for f in &a.files {
        if f.is_dir() {
            if !a.recursive {
                return Err(usage(
                    format!("{} is a folder", f.display()),
                    "add --recursive to re-key the sops files under it",
                ));
            }
            walk(f, &mut out)?;
        } else {
            out.push((f.clone(), false));
        }
    }
    Ok(out)
}

/// Every regular file under `dir`, in name order; links and `.git` are not followed.
fn walk(dir: &Path, out: &mut Vec<(PathBuf, bool)>) -> Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| anyhow!("cannot read {}: {}", dir.display(), crate::io::reason(&e)))?
        .collect::<std::io::Result<_>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let kind = e.file_type()?;
        let path = e.path();
        if kind.is_dir() && e.file_name() != ".git" {
            walk(&path, out)?;
        } else if kind.is_file() && e.file_name() != sops::CONFIG_NAME {
            if out.len() >= MAX_FILES {
                return Err(anyhow!("more than {MAX_FILES} files under {}", dir.display()));
            }
            out.push((path, true));
        }
    }
    Ok(())
}

fn progress(a: &RekeyArgs, n: usize) -> Option<indicatif::ProgressBar> {
    if a.quiet || n < 2 || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(n as u64).with_style(
        indicatif::ProgressStyle::with_template("re-keying sops files [{bar:30}] {pos}/{len} eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    Some(bar)
}

/// One file: read, re-key in memory, written back only if something changed.
fn one(
    file: &Path,
    bytes: &[u8],
    walked: bool,
    a: &RekeyArgs,
    explicit: Option<&Target>,
    identities: &[Box<dyn Identity>],
    configs: &Mutex<Configs>,
) -> Done {
    let format = Format::for_path(file);
    if !sops::looks_like_sops(bytes, format) {
        return match walked {
            true => Done::Skipped("not a sops file"),
            false => Done::Failed("not a sops file (no sops metadata)".into()),
        };
    }
    let rule_target;
    let target = match explicit {
        Some(t) => t,
        None => {
            let Some(config) = find_config(file) else {
                return Done::Failed(format!(
                    "no {} in its folder or above (or give -r/--add/--remove)",
                    sops::CONFIG_NAME
                ));
            };
            let mut configs = configs.lock().unwrap_or_else(|p| p.into_inner());
            let rules = configs
                .entry(config.clone())
                .or_insert_with(|| Rules::load(&config).map_err(|e| e.to_string()));
            let rules = match rules {
                Ok(r) => r,
                Err(e) => return Done::Failed(format!("{}: {e}", config.display())),
            };
            let Some(rule) = rules.for_file(file) else {
                return match walked {
                    true => Done::Skipped("no creation rule matches it"),
                    false => Done::Failed(format!("no creation rule of {} matches it", config.display())),
                };
            };
            rule_target = Target::Groups(rule.groups.clone());
            &rule_target
        }
    };
    match sops::rekey_with(bytes, format, target, identities, a.force, &super::identity::parse_recipient_arg)
    {
        Ok(Outcome::Unchanged) => Done::Unchanged,
        Ok(Outcome::Changed { bytes: new, added, removed }) => {
            if a.dry_run {
                return Done::Changed(added, removed);
            }
            match write_over(file, bytes, &new) {
                Ok(()) => Done::Changed(added, removed),
                Err(e) => Done::Failed(format!("{}; nothing changed", crate::errors::message(&e))),
            }
        }
        // The library's refusals are `InvalidArgument`s whose text is the whole reason.
        Err(hyperseal::Error::InvalidArgument(why)) => Done::Failed(format!("{why}; nothing changed")),
        Err(e) => Done::Failed(format!("{e}; nothing changed")),
    }
}

/// Replaces `file` with `new` through the library's atomic output (never a partial file; its
/// owner, mode and attributes kept), unless another writer changed it since it was read.
fn write_over(file: &Path, old: &[u8], new: &[u8]) -> Result<()> {
    let f = std::fs::File::open(file)?;
    let mut out = OutputOptions::new().force(true).create(file).map_err(std::io::Error::from)?;
    out.copy_attributes_from(&f)?;
    out.write_all(new)?;
    out.flush()?;
    // The last look before the new file takes the name: a save since the read wins (the
    // window left is this check to the rename).
    if std::fs::read(file)? != old {
        return Err(anyhow!("the file changed while it was re-keyed"));
    }
    out.commit().map_err(std::io::Error::from)?;
    Ok(())
}

fn summary(a: &RekeyArgs, results: &[(&PathBuf, Done)]) -> Result<()> {
    let (mut changed, mut unchanged, mut skipped, mut failed) = (0, 0, 0, 0);
    let verb = if a.dry_run { "would change" } else { "changed" };
    for (file, done) in results {
        let name = file.display();
        match done {
            Done::Changed(add, rm) => {
                changed += 1;
                if !a.quiet {
                    eprintln!(
                        "{verb} {name}: {add} age entr{} added, {rm} removed",
                        if *add == 1 { "y" } else { "ies" }
                    );
                }
            }
            Done::Unchanged => {
                unchanged += 1;
                if !a.quiet {
                    eprintln!("unchanged {name}: already the target");
                }
            }
            Done::Skipped(why) => {
                skipped += 1;
                if !a.quiet {
                    eprintln!("skipped {name}: {why}");
                }
            }
            Done::Failed(why) => {
                failed += 1;
                eprintln!("hyperseal: error: {name}: {why}");
            }
        }
    }
    if !a.quiet || failed > 0 {
        eprintln!("sops files: {changed} {verb}, {unchanged} unchanged, {skipped} skipped, {failed} failed");
    }
    match failed {
        0 => Ok(()),
        _ => {
            eprintln!("hyperseal: hint: each failed file is as it was; fix what its line says and run again");
            Err(crate::errors::Reported.into())
        }
    }
}
