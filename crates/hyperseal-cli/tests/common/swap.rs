//! The swap-after-the-walk attack on a tree re-key, shared by the age tree's and the sops tree's
//! tests: between the walk and the re-key, files in the tree are replaced by links to a victim's
//! files and folder, and by a FIFO. Nothing outside the tree may change, and nothing may hang.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{mpsc, Mutex};
use std::time::Duration;

use hyperseal::format::Stanza;
use hyperseal::recipient::{parse_identities, Identity};
use hyperseal::FileKey;

/// An identity that does `swap` once, the first time it is asked: the moment between the walk
/// and the re-key of every later file (one thread: files in walk order).
pub struct Swapping {
    inner: Box<dyn Identity>,
    swap: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl Identity for Swapping {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, hyperseal::Error>> {
        if let Some(swap) = self.swap.lock().unwrap().take() {
            swap();
        }
        self.inner.unwrap_stanza(stanza)
    }
}

/// The identity in `key_file` that, when first asked, swaps in `tree` (which holds
/// `u/x.EXT`, `u/f.EXT` and `u/d/`): a link to `victim/secret.EXT` for `u/x.EXT`, a link to
/// `victim` for the folder `u/d` (moved to `u/d.old`), and a FIFO for `u/f.EXT`.
pub fn swapping(key_file: &Path, tree: &Path, victim: &Path, ext: &str) -> Swapping {
    let (t, victim) = (tree.to_path_buf(), victim.to_path_buf());
    let ext = ext.to_owned();
    let swap = move || {
        let (x, f) = (t.join(format!("u/x.{ext}")), t.join(format!("u/f.{ext}")));
        fs::remove_file(&x).unwrap();
        std::os::unix::fs::symlink(victim.join(format!("secret.{ext}")), &x).unwrap();
        fs::rename(t.join("u/d"), t.join("u/d.old")).unwrap();
        std::os::unix::fs::symlink(&victim, t.join("u/d")).unwrap();
        fs::remove_file(&f).unwrap();
        assert!(Command::new("mkfifo").arg(&f).status().unwrap().success());
    };
    let key = fs::read_to_string(key_file).unwrap();
    let inner = parse_identities(&key).unwrap().remove(0);
    Swapping { inner, swap: Mutex::new(Some(Box::new(swap))) }
}

/// Runs `walk` (a re-key of the swapped tree) on a thread of its own, its outcomes named by
/// `name`, and gives back one line per file. A FIFO must not hang the run, so the test gives
/// it a minute and fails after that.
pub fn walked_within_a_minute<O: 'static>(
    walk: impl FnOnce() -> Vec<(PathBuf, O)> + Send + 'static,
    name: fn(O) -> String,
) -> Vec<(PathBuf, String)> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let lines: Vec<(PathBuf, String)> = walk().into_iter().map(|(path, o)| (path, name(o))).collect();
        tx.send(lines).unwrap();
    });
    rx.recv_timeout(Duration::from_secs(60)).expect("the run hung on a swapped-in FIFO")
}
