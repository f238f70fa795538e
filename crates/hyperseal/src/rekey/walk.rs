//! The tree re-key's walk: every file under the roots, in name order, each recorded by where it
//! is ([`Place`]: under a directory handle, by name and identity) so that its re-key later
//! reaches that very file and nothing a folder's member put in its place; and the selection by
//! `--include`/`--exclude` globs.
//!
//! Directories are listed through their handles (`/proc/self/fd/N`, see [`super::beneath`]) and
//! entered without following a link, so a directory swapped for a link while the walk runs is
//! not walked into. A link is followed only with [`WalkOptions::follow_links`], once, here: its
//! target becomes a base of its own, and the same checks then apply below it.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use super::beneath::{self, Base, Place};
use super::manifest::MANIFEST_NAME;
use crate::error::Error;
use crate::sys::{FileId, Stamp};

/// What the walk takes of a run's options. The tree hands these over, so the walk needs nothing
/// from the tree that drives it.
pub struct WalkOptions<'a> {
    /// Walk directories given as roots (without it a directory is skipped).
    pub recursive: bool,
    /// Follow symbolic links (to files and directories); without it they are skipped.
    pub follow_links: bool,
    /// `--include` globs (all files when empty).
    pub include: &'a [String],
    /// `--exclude` globs.
    pub exclude: &'a [String],
    /// The run's manifest, wherever it is: never a file to re-key.
    pub manifest: Option<&'a Path>,
    /// Names passed over in every folder, unlisted (the sops walk's `.git` and `.sops.yaml`).
    pub pass_over: &'a [&'a str],
}

/// A file of the walk, or something it lists as skipped and never touches.
pub enum Entry {
    /// A regular file: its path as the roots name it, and where the walk found it.
    File(PathBuf, Place),
    /// Listed and never touched: the path, and why (a link, not a regular file, …).
    Skip(PathBuf, String),
}

/// Walks the roots (module docs).
pub struct Walk<'a> {
    opts: WalkOptions<'a>,
    selection: Selection,
    /// Bases by directory identity: files given as operands in one folder share its handle.
    bases: HashMap<FileId, Arc<Base>>,
    /// The directories on the way down (by identity), so a followed link back up is not walked twice.
    seen: Vec<FileId>,
    pub(super) out: Vec<Entry>,
}

impl<'a> Walk<'a> {
    /// A walk with `opts`; its include and exclude globs are checked here.
    pub fn new(opts: WalkOptions<'a>) -> Result<Walk<'a>, Error> {
        let selection = Selection::new(opts.include, opts.exclude)?;
        Ok(Walk { opts, selection, bases: HashMap::new(), seen: Vec::new(), out: Vec::new() })
    }

    /// What the roots walked so far found, in order; the walk keeps none of it.
    pub fn take(&mut self) -> Vec<Entry> {
        std::mem::take(&mut self.out)
    }

    /// One root: a directory (walked with `recursive`) or a file.
    pub fn root(&mut self, root: &Path) -> Result<(), Error> {
        let link = std::fs::symlink_metadata(root)?;
        let is_link = link.file_type().is_symlink();
        let Some(meta) = self.followed(root, root, is_link, link)? else { return Ok(()) };
        if meta.is_dir() {
            if !self.opts.recursive {
                return self.skip(root, "a directory (--recursive walks it)");
            }
            return self.directory(root, root, root);
        }
        if !self.selection.admits_path(root, root) {
            return Ok(());
        }
        if !meta.is_file() {
            return self.skip(root, "not a regular file");
        }
        // A file given by name: its folder is its base (a link's, the target's folder).
        let real = match is_link {
            true => std::fs::canonicalize(root)?,
            false => root.to_path_buf(),
        };
        let name = real.file_name().map(OsString::from).unwrap_or_default();
        let parent = match real.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let base = self.base(parent)?;
        let id = Stamp::of_path(&real)?.id;
        self.out.push(Entry::File(root.to_path_buf(), Place::new(base, Vec::new(), name, id)));
        Ok(())
    }

    /// The metadata to go by: the link's target's where a link is followed; `None` (and the
    /// entry listed as skipped) where it is not.
    fn followed(
        &mut self,
        display: &Path,
        via: &Path,
        is_link: bool,
        link: std::fs::Metadata,
    ) -> Result<Option<std::fs::Metadata>, Error> {
        if !is_link {
            return Ok(Some(link));
        }
        if !self.opts.follow_links {
            self.skip(display, "a symbolic link (--follow-symlinks follows it)")?;
            return Ok(None);
        }
        match std::fs::metadata(via) {
            Ok(m) => Ok(Some(m)),
            Err(_) => {
                self.skip(display, "a symbolic link to nothing")?;
                Ok(None)
            }
        }
    }

    fn base(&mut self, dir: &Path) -> Result<Arc<Base>, Error> {
        let id = Stamp::of_path(dir)?.id;
        if let Some(b) = self.bases.get(&id) {
            return Ok(b.clone());
        }
        let b = Base::open(dir, id)?;
        self.bases.insert(id, b.clone());
        Ok(b)
    }

    /// A directory reached through a link or given as a root: a base of its own.
    fn directory(&mut self, root: &Path, display: &Path, via: &Path) -> Result<(), Error> {
        let base = self.base(via)?;
        let id = Stamp::of_path(via)?.id;
        if self.seen.contains(&id) {
            return Ok(());
        }
        self.seen.push(id);
        let r = self.list(root, display, &base.via(), &base, &mut Vec::new());
        self.seen.pop();
        r
    }

    /// The entries of the directory `via` names (`display` to the caller), `chain` being the
    /// directories from `base` down to it.
    fn list(
        &mut self,
        root: &Path,
        display: &Path,
        via: &Path,
        base: &Arc<Base>,
        chain: &mut Vec<(OsString, FileId)>,
    ) -> Result<(), Error> {
        let mut names: Vec<OsString> =
            std::fs::read_dir(via)?.map(|e| e.map(|e| e.file_name())).collect::<Result<_, _>>()?;
        names.sort();
        for name in names {
            let (child, child_via) = (display.join(&name), via.join(&name));
            if is_own_artifact(&child, &self.opts) || self.opts.pass_over.iter().any(|n| name == *n) {
                continue;
            }
            let link = match std::fs::symlink_metadata(&child_via) {
                Ok(m) => m,
                // Removed since it was listed: nothing to re-key.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e.into()),
            };
            let is_link = link.file_type().is_symlink();
            let Some(meta) = self.followed(&child, &child_via, is_link, link)? else { continue };
            if meta.is_dir() && is_link {
                let target = std::fs::canonicalize(&child_via)?;
                self.directory(root, &child, &target)?;
            } else if meta.is_dir() {
                let id = Stamp::of_link(&child_via)?.id;
                let Ok((held, inner)) = beneath::enter(&child_via, id) else {
                    self.skip(&child, "replaced while the tree was walked: not walked")?;
                    continue;
                };
                chain.push((name, id));
                let r = self.list(root, &child, &inner, base, chain);
                chain.pop();
                drop(held);
                r?;
            } else if !self.selection.admits_path(root, &child) {
                continue;
            } else if meta.is_file() && is_link {
                // A followed link to a file: the target, in its own folder.
                let target = std::fs::canonicalize(&child_via)?;
                let parent = target.parent().unwrap_or(Path::new("/"));
                let base = self.base(parent)?;
                let tname = target.file_name().map(OsString::from).unwrap_or_default();
                let place = Place::new(base, Vec::new(), tname, Stamp::of_path(&target)?.id);
                self.out.push(Entry::File(child, place));
            } else if meta.is_file() {
                let id = Stamp::of_link(&child_via)?.id;
                self.out.push(Entry::File(child, Place::new(base.clone(), chain.clone(), name, id)));
            } else {
                self.skip(&child, "not a regular file")?;
            }
        }
        Ok(())
    }

    fn skip(&mut self, path: &Path, why: &str) -> Result<(), Error> {
        self.out.push(Entry::Skip(path.to_path_buf(), why.into()));
        Ok(())
    }
}

/// The re-key's own files (journals, second names, temporaries) and the manifest.
fn is_own_artifact(p: &Path, opts: &WalkOptions) -> bool {
    let name = p.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    (name.starts_with('.') && (name.ends_with(".hyperseal-rekey") || name.ends_with(".hyperseal-old")))
        || (name.starts_with(".hyperseal-") && name.ends_with(".partial"))
        || (name.starts_with('.') && name.ends_with(".hyperseal-link"))
        || name == MANIFEST_NAME
        || opts.manifest == Some(p)
}

/// `--include` and `--exclude`, compiled once for a run: a glob without `/` is matched against
/// a path's last segment (the name), one with `/` against the whole relative path.
pub(super) struct Selection {
    include: Option<[GlobSet; 2]>,
    exclude: [GlobSet; 2],
}

impl Selection {
    pub(super) fn new(include: &[String], exclude: &[String]) -> Result<Selection, Error> {
        let include = match include.is_empty() {
            true => None,
            false => Some(sets(include)?),
        };
        Ok(Selection { include, exclude: sets(exclude)? })
    }

    /// Whether `rel` (a path under the root, `/`-separated) is selected.
    pub(super) fn admits(&self, rel: &str) -> bool {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        let hit = |[names, paths]: &[GlobSet; 2]| names.is_match(name) || paths.is_match(rel);
        self.include.as_ref().is_none_or(hit) && !hit(&self.exclude)
    }

    /// Whether `path` (under `root`) is selected; a file given as a root by its name.
    fn admits_path(&self, root: &Path, path: &Path) -> bool {
        let rel = match path.strip_prefix(root) {
            Ok(r) if !r.as_os_str().is_empty() => r,
            _ => Path::new(path.file_name().unwrap_or_default()),
        };
        self.admits(&rel.to_string_lossy().replace('\\', "/"))
    }
}

/// The globs matched against names and those matched against whole paths.
fn sets(globs: &[String]) -> Result<[GlobSet; 2], Error> {
    let (mut names, mut paths) = (GlobSetBuilder::new(), GlobSetBuilder::new());
    for g in globs {
        let glob = glob(g).map_err(|e| Error::InvalidArgument(format!("the glob {g:?}: {e}")))?;
        match g.contains('/') {
            true => paths.add(glob),
            false => names.add(glob),
        };
    }
    let build = |b: GlobSetBuilder| b.build().map_err(|e| Error::InvalidArgument(e.to_string()));
    Ok([build(names)?, build(paths)?])
}

fn glob(g: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(g).literal_separator(true).backslash_escape(true).build()
}

/// Whether `rel` (a path under the root, or an object's key under the prefix, `/`-separated)
/// passes `include` (all when empty) and `exclude` ([`glob_match`]; a glob with `/` is matched
/// against the whole of `rel`, one without against its last segment). A glob that does not
/// parse selects nothing.
pub fn selected_by(include: &[String], exclude: &[String], rel: &str) -> bool {
    // Called once per object by a prefix re-key: the globs are compiled once per thread for
    // the same lists, not once per call.
    type Compiled = Option<(Vec<String>, Vec<String>, Option<Selection>)>;
    thread_local!(static LAST: std::cell::RefCell<Compiled> = const { std::cell::RefCell::new(None) });
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if !matches!(&*last, Some((i, e, _)) if i == include && e == exclude) {
            *last = Some((include.to_vec(), exclude.to_vec(), Selection::new(include, exclude).ok()));
        }
        last.as_ref().and_then(|(_, _, s)| s.as_ref()).is_some_and(|s| s.admits(rel))
    })
}

/// Glob matching as ripgrep and fd do it (the `globset` crate): `*` any run of characters but
/// `/`, `?` one character but `/`, `**` any run of whole path segments (`a/**/b`, `**/x`,
/// `x/**`), `[abc]`, `[a-z]` and `[!abc]` classes, `{a,b}` alternatives, `\` quoting the next
/// character. Matching takes time linear in the text whatever the pattern (no backtracking). A
/// pattern that does not parse matches nothing.
pub fn glob_match(glob_text: &str, text: &str) -> bool {
    glob(glob_text).is_ok_and(|g| g.compile_matcher().is_match(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_are_ripgreps() {
        for (glob, text, hit) in [
            ("*.hs", "a.hs", true),
            ("*.hs", "d/a.hs", false),
            ("**/*.hs", "d/e/a.hs", true),
            ("old/**", "old/x/y.hs", true),
            ("a/**/b.hs", "a/b.hs", true),
            ("[ab].hs", "b.hs", true),
            ("[!ab].hs", "b.hs", false),
            ("[a-c]?.hs", "c9.hs", true),
            ("*.{age,hs}", "x.age", true),
            ("*.{age,hs}", "x.txt", false),
            ("\\*.hs", "*.hs", true),
            ("\\*.hs", "a.hs", false),
        ] {
            assert_eq!(glob_match(glob, text), hit, "{glob} on {text}");
        }
        // Names match globs without `/`; paths those with one.
        let (inc, exc) = (vec!["*.{hs,age}".to_string()], vec!["old/**".to_string()]);
        assert!(selected_by(&inc, &exc, "new/a.hs"));
        assert!(!selected_by(&inc, &exc, "old/a.hs"));
        assert!(!selected_by(&inc, &exc, "new/a.txt"));
        // A pattern that does not parse is refused up front, not silently matched.
        assert!(Selection::new(&["[".to_string()], &[]).is_err());
    }

    #[test]
    fn many_double_stars_do_not_backtrack() {
        // The hand-written matcher this replaced tried every split for each `**`: exponential.
        let glob = "**/".repeat(24) + "x";
        let text = "a/".repeat(40) + "y";
        assert!(!glob_match(&glob, &text));
    }
}
