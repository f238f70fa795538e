//! A sops tree re-keyed in a folder others may write, as the age tree re-key is
//! (tests/rekey_shared.rs): `hyperseal_sops::rekey_files` walks with the tree re-key's walk and
//! writes through its rewrite, so a file swapped for a link to a file outside the tree, a folder
//! swapped for a link to a folder outside it, or a file swapped for a FIFO after the walk gets a
//! failure for that name, the run does not hang, and nothing outside the tree is read for a
//! re-key, changed or created. The files are made by the real sops 3.13.3 (`make sops`).

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use common::sops_kit;
use common::swap::{swapping, walked_within_a_minute};
use hyperseal::recipient::{parse_identities, parse_recipient, Identity};
use hyperseal_sops::{rekey_files, FileOutcome, FilesOptions, Target};

fn keygen(tools: &Path, dir: &Path, name: &str) -> (PathBuf, String) {
    common::age_keygen(tools, dir, name, false)
}

/// `name` under `dir`, sealed by sops for `to`.
fn sealed(tools: &Path, dir: &Path, name: &str, to: &str) {
    let path = dir.join(name);
    fs::write(&path, format!("secret: {name}\n")).unwrap();
    let o = Command::new(tools.join("sops"))
        .args(["encrypt", "-i", "--age", to])
        .arg(&path)
        .env_remove("SOPS_AGE_KEY")
        .env_remove("SOPS_AGE_KEY_FILE")
        .env("XDG_CONFIG_HOME", dir.join("no-config"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// What both tests start from: sops, a temporary folder, the administrator's key (its file and
/// recipient), carol's recipient, and in the folder `tree/` (made down to `tree_dirs`) and the
/// victim's `victim/`. `None` (skipped) without sops.
struct Kit {
    tools: PathBuf,
    dir: tempfile::TempDir,
    admin: PathBuf,
    admin_pub: String,
    carol_pub: String,
    t: PathBuf,
    victim: PathBuf,
}

fn kit(tree_dirs: &str) -> Option<Kit> {
    let (tools, dir) = sops_kit()?;
    let d = dir.path();
    let (admin, admin_pub) = keygen(&tools, d, "admin");
    let (_, carol_pub) = keygen(&tools, d, "carol");
    let (t, victim) = (d.join("tree"), d.join("victim"));
    fs::create_dir_all(t.join(tree_dirs)).unwrap();
    fs::create_dir_all(&victim).unwrap();
    Some(Kit { tools, dir, admin, admin_pub, carol_pub, t, victim })
}

#[test]
fn a_swap_after_the_walk_touches_nothing_outside_the_sops_tree() {
    let Some(Kit { tools, dir: _dir, admin, admin_pub, carol_pub, t, victim }) = kit("u/d") else { return };
    let tools = tools.as_path();
    for f in ["a.yaml", "u/d/y.yaml", "u/f.yaml", "u/x.yaml"] {
        sealed(tools, &t, f, &admin_pub);
    }
    // Her files, outside the tree, that the administrator's key also opens.
    sealed(tools, &victim, "secret.yaml", &admin_pub);
    sealed(tools, &victim, "y.yaml", &admin_pub);
    let before: Vec<Vec<u8>> =
        ["secret.yaml", "y.yaml"].iter().map(|f| fs::read(victim.join(f)).unwrap()).collect();

    let ids: Arc<Vec<Box<dyn Identity>>> = Arc::new(vec![Box::new(swapping(&admin, &t, &victim, "yaml"))]);
    let options = FilesOptions {
        target: Some(Target::Edit { add: vec![carol_pub.clone()], remove: vec![] }),
        recursive: true,
        threads: 1,
        ..FilesOptions::default()
    };

    let root = t.clone();
    let read = |r: &str| parse_recipient(r);
    let walk = move || rekey_files(&[root], &ids, &options, &read, None).unwrap().files;
    let lines = walked_within_a_minute(walk, |o| match o {
        FileOutcome::Changed { .. } => "changed".to_string(),
        FileOutcome::Unchanged => "unchanged".into(),
        FileOutcome::Skipped(why) => format!("skipped: {why}"),
        FileOutcome::Failed(e) => format!("failed: {e}"),
    });
    let of = |f: &str| {
        lines.iter().find(|(path, _)| path == &t.join(f)).map(|(_, w)| w.clone()).unwrap_or_default()
    };
    assert_eq!(of("a.yaml"), "changed", "{lines:?}");
    assert!(fs::read_to_string(t.join("a.yaml")).unwrap().contains(&carol_pub));
    for f in ["u/d/y.yaml", "u/f.yaml", "u/x.yaml"] {
        let line = of(f);
        assert!(line.starts_with("failed: ") && line.contains("was replaced after the walk"), "{f}: {line}");
        // The line names the file as the walk found it.
        assert!(line.contains(t.join(f).to_str().unwrap()), "{f}: {line}");
    }
    let after: Vec<Vec<u8>> =
        ["secret.yaml", "y.yaml"].iter().map(|f| fs::read(victim.join(f)).unwrap()).collect();
    assert_eq!(after, before, "a file outside the tree was re-keyed");
    assert_eq!(fs::read_dir(&victim).unwrap().count(), 2, "something was created outside the tree");
    // The folder swapped away still holds its file as it was.
    assert!(!fs::read_to_string(t.join("u/d.old/y.yaml")).unwrap().contains(&carol_pub));
}

/// A link in the tree is listed as skipped and never followed, to a file or a folder.
#[test]
fn links_in_a_sops_tree_are_not_followed() {
    let Some(Kit { tools, dir: _dir, admin, admin_pub, carol_pub, t, victim }) = kit("") else { return };
    let tools = tools.as_path();
    sealed(tools, &victim, "secret.yaml", &admin_pub);
    let before = fs::read(victim.join("secret.yaml")).unwrap();
    std::os::unix::fs::symlink(victim.join("secret.yaml"), t.join("x.yaml")).unwrap();
    std::os::unix::fs::symlink(&victim, t.join("d")).unwrap();
    let ids = Arc::new(parse_identities(&fs::read_to_string(&admin).unwrap()).unwrap());
    let options = FilesOptions {
        target: Some(Target::Edit { add: vec![carol_pub], remove: vec![] }),
        recursive: true,
        ..FilesOptions::default()
    };
    let read = |r: &str| parse_recipient(r);
    let report = rekey_files(std::slice::from_ref(&t), &ids, &options, &read, None).unwrap();
    assert_eq!(report.counts(), (0, 0, 2, 0), "{report:?}");
    assert!(report
        .files
        .iter()
        .all(|(_, o)| matches!(o, FileOutcome::Skipped("a symbolic link: not followed"))));
    assert_eq!(fs::read(victim.join("secret.yaml")).unwrap(), before);
}
