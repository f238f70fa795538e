//! The fault-injection test's read-only directory scenario (`faults.rs`), apart because it
//! runs as another user where the tests run as root, and carries what that needs.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use super::others;
use super::{decrypt, encrypt, first_line, listing, run, Fixture, Op, Tally, NAMED};

/// A directory the user cannot write to: a clear error naming the destination, nothing else.
/// Root ignores permissions, so as root the run drops to `nobody`, with the binary and the
/// files it reads where `nobody` can reach them: the fixture's own folder where it can, else
/// a folder under /tmp (the checkout, and cargo's target/tmp in it, may lie under a private
/// folder).
pub(super) fn read_only_dir(fx: &Fixture, t: &mut Tally) {
    let root = unsafe { libc::geteuid() } == 0; // SAFETY: geteuid cannot fail.
    let open = (root && !reachable(&fx.root)).then(open_dir);
    let base = open.as_ref().map_or(fx.root.as_path(), |d| d.path());
    for p in [&fx.root, &fx.src] {
        fs::set_permissions(p, fs::Permissions::from_mode(0o755)).unwrap();
    }
    // Copies that nobody may read: the inputs themselves stay as they are (`inputs_intact`).
    let [key, small, small_hs, public] = [
        (&fx.key, "ro-k.key"),
        (&fx.small, "ro-small"),
        (&fx.small_hs, "ro-small.hs"),
        (&fx.public, "ro-k.pub"),
    ]
    .map(|(from, name)| {
        let to = base.join(name);
        fs::copy(from, &to).unwrap();
        fs::set_permissions(&to, fs::Permissions::from_mode(0o644)).unwrap();
        to
    });
    let ro = base.join("ro");
    fs::create_dir(&ro).unwrap();
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o555)).unwrap();
    let dest = ro.join("dest");
    for named in [false, true].into_iter().filter(|&n| !n || NAMED) {
        for op in [Op::Encrypt, Op::Decrypt] {
            let mut c = match op {
                Op::Encrypt => encrypt(&public, &dest, &small, false, named),
                Op::Decrypt => decrypt(&key, &dest, &small_hs, false, named),
            };
            if root {
                let mut dropped = Command::new(others::binary());
                dropped.args(c.get_args()).envs(c.get_envs().filter_map(|(k, v)| Some((k, v?))));
                dropped.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
                c = dropped;
                c.uid(65534).gid(65534);
            }
            let o = run(c);
            let what = format!("{} read-only dir {op:?} named={named}", fx.label);
            assert_eq!(o.status.code(), Some(1), "{what}: {}", String::from_utf8_lossy(&o.stderr));
            assert_eq!(
                first_line(&o),
                format!("hyperseal: error: cannot create {}: Permission denied", dest.display()),
                "{what}"
            );
            assert_eq!(listing(&ro), Vec::<String>::new(), "{what}");
            fx.inputs_intact(&what);
            t.scenarios += 1;
        }
    }
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o755)).unwrap();
    fs::remove_dir(&ro).unwrap();
    for f in [key, small, small_hs, public] {
        fs::remove_file(f).unwrap();
    }
}

/// Whether every user may enter each folder from the root down to `p` (`p` included).
fn reachable(p: &Path) -> bool {
    p.ancestors().all(|a| fs::metadata(a).is_ok_and(|m| m.permissions().mode() & 0o001 != 0))
}

/// A new folder under `/tmp` that every user may enter (0755), removed when dropped.
fn open_dir() -> tempfile::TempDir {
    let d = tempfile::Builder::new().prefix("hyperseal-others-").tempdir_in("/tmp").unwrap();
    fs::set_permissions(d.path(), fs::Permissions::from_mode(0o755)).unwrap();
    d
}
