//! Who a marked path is encrypted to: the nearest `.age-recipients` file (passage's
//! convention), looked for in the path's folder, then in each folder above it up to the
//! work tree's root. Its text is what `-R` reads; the caller parses it (plugin recipients talk
//! to a terminal, which the library never does) and the filter keeps one parse per file.

use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

/// The file's name in every folder.
pub const FILE_NAME: &str = ".age-recipients";
/// Largest `.age-recipients` read: far beyond any team's keys (a post-quantum recipient is
/// about 2 KiB), and the bound on what one path makes the filter read.
pub const MAX_LEN: u64 = 1 << 20;

/// A recipients file found for a path.
#[derive(Debug)]
pub struct Found {
    /// Its path in the work tree (`/`-separated, relative to the root).
    pub path: String,
    /// Its text.
    pub text: String,
}

/// The `.age-recipients` paths that may hold `path`'s recipients, nearest first: its folder's,
/// then each folder's above it, the root's last. A path that climbs out of the root (`..`, an
/// absolute path) is refused.
pub fn candidates(path: &str) -> io::Result<Vec<String>> {
    let rel = Path::new(path);
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "a path outside the work tree"));
    }
    let mut out = Vec::new();
    let mut dir = rel.parent();
    while let Some(d) = dir {
        let here: PathBuf = d.join(FILE_NAME);
        out.push(here.to_string_lossy().replace('\\', "/"));
        dir = d.parent();
    }
    Ok(out)
}

/// The `.age-recipients` nearest to `path` in the work tree at `root` (`path` relative to it,
/// `/`-separated as git names paths), or `None` where no folder up to the root has one.
pub fn nearest(root: &Path, path: &str) -> io::Result<Option<Found>> {
    nearest_with(root, path, |_| false)
}

/// [`nearest`] for a caller that keeps what it parsed: where `known` says the nearest file's
/// path was read already, it is only looked up (one `lstat` for each folder on the way), and
/// its `text` is left empty. The filter asks this for every file git sends it, and a `git add`
/// of thousands of files in one folder would otherwise read the same recipients thousands of
/// times.
///
/// Only a regular file inside the work tree counts: a symbolic link (out of the repository, or
/// to `/dev/stdin`, which would hang git on its own pipe), a FIFO, a device or a folder at a
/// candidate's name, or a link among the folders on the way, is an error naming the path. It
/// fails closed: nothing is sealed to keys kept elsewhere, and nothing is stored unsealed.
pub fn nearest_with(root: &Path, path: &str, known: impl Fn(&str) -> bool) -> io::Result<Option<Found>> {
    for here in candidates(path)? {
        if !folders_inside(root, &here)? {
            continue;
        }
        let full = root.join(&here);
        if known(&here) {
            match std::fs::symlink_metadata(&full) {
                Ok(m) if m.is_file() => return Ok(Some(Found { path: here, text: String::new() })),
                Ok(m) => return Err(not_regular(&here, &m)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            }
        }
        if let Some(text) = read_regular(&full, &here)? {
            return Ok(Some(Found { path: here, text }));
        }
    }
    Ok(None)
}

/// Whether every folder on the way from `root` to `rel` is a folder, not a link: `false` where
/// one is missing (then so is the file); an error naming the first that is a link.
fn folders_inside(root: &Path, rel: &str) -> io::Result<bool> {
    let mut dir = root.to_path_buf();
    let mut shown = String::new();
    let parent = Path::new(rel).parent().unwrap_or(Path::new(""));
    for c in parent.components() {
        dir.push(c);
        shown.push_str(&c.as_os_str().to_string_lossy());
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.is_dir() => {}
            Ok(m) if m.file_type().is_symlink() => return Err(not_regular(&shown, &m)),
            Ok(_) => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(e),
        }
        shown.push('/');
    }
    Ok(true)
}

/// The text of the recipients file at `file` (shown as `shown`), `None` if it does not exist:
/// opened without following a link and without blocking, and read only if it is a regular file.
fn read_regular(file: &Path, shown: &str) -> io::Result<Option<String>> {
    let mut opts = std::fs::File::options();
    opts.read(true);
    let f = match no_follow(&mut opts).open(file) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) if is_link_refusal(&e) => {
            return Err(io::Error::new(io::ErrorKind::InvalidData, link_refused(shown)))
        }
        Err(e) => return Err(e),
    };
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(shown, &meta));
    }
    read_open(f, meta.len()).map(Some)
}

/// Opens never through a symbolic link at the final name, never blocking on a FIFO, and never
/// making a terminal the controlling one.
#[cfg(unix)]
fn no_follow(opts: &mut std::fs::OpenOptions) -> &mut std::fs::OpenOptions {
    use std::os::unix::fs::OpenOptionsExt;
    opts.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
}

/// The error a [`no_follow`] open gives for a symbolic link.
#[cfg(unix)]
fn is_link_refusal(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

/// Opens a symbolic link or junction itself, not what it points to; it is then refused as not
/// a regular file.
#[cfg(windows)]
fn no_follow(opts: &mut std::fs::OpenOptions) -> &mut std::fs::OpenOptions {
    use std::os::windows::fs::OpenOptionsExt;
    // FILE_FLAG_OPEN_REPARSE_POINT
    opts.custom_flags(0x0020_0000)
}

#[cfg(windows)]
fn is_link_refusal(_: &io::Error) -> bool {
    false
}

fn link_refused(shown: &str) -> String {
    format!("{shown} is a symbolic link: recipients are taken only from a regular file in the work tree")
}

fn not_regular(shown: &str, meta: &std::fs::Metadata) -> io::Error {
    if meta.file_type().is_symlink() {
        return io::Error::new(io::ErrorKind::InvalidData, link_refused(shown));
    }
    let what = if meta.is_dir() { "a folder" } else { "not a regular file (a FIFO, socket or device)" };
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{shown} is {what}: recipients are taken only from a regular file in the work tree"),
    )
}

/// The text of `file`, `None` if it does not exist; an error past [`MAX_LEN`], if not UTF-8,
/// or if it is not a regular file (a link, FIFO, device or folder; never followed, never
/// waited on).
pub fn read_bounded(file: &Path) -> io::Result<Option<String>> {
    read_regular(file, &file.to_string_lossy())
}

fn read_open(f: std::fs::File, len: u64) -> io::Result<String> {
    // Sized by the file's length (one read for the whole of an ordinary recipients file), and
    // still bounded: a file that grows while it is read stops at MAX_LEN + 1.
    if len > MAX_LEN {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(len as usize + 1);
    f.take(MAX_LEN + 1).read_to_end(&mut bytes)?;
    text_of(bytes)
}

/// Text from `r`, refused past [`MAX_LEN`] bytes or if not UTF-8.
pub fn parse_bounded(mut r: impl Read) -> io::Result<String> {
    let mut bytes = Vec::new();
    r.by_ref().take(MAX_LEN + 1).read_to_end(&mut bytes)?;
    text_of(bytes)
}

fn text_of(bytes: Vec<u8>) -> io::Result<String> {
    if bytes.len() as u64 > MAX_LEN {
        return Err(too_large());
    }
    String::from_utf8(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, format!("{FILE_NAME} is not UTF-8 text")))
}

fn too_large() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("{FILE_NAME} is larger than 1 MiB"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_folder_wins_and_the_root_is_the_last_place() {
        let root = std::env::temp_dir().join(format!("hyperseal-recipients-{}", std::process::id()));
        std::fs::create_dir_all(root.join("a/b/c")).unwrap();
        assert!(nearest(&root, "a/b/c/x.env").unwrap().is_none());
        std::fs::write(root.join(FILE_NAME), "root").unwrap();
        std::fs::write(root.join("a/b").join(FILE_NAME), "ab").unwrap();
        let found = nearest(&root, "a/b/c/x.env").unwrap().unwrap();
        assert_eq!((found.path.as_str(), found.text.as_str()), ("a/b/.age-recipients", "ab"));
        assert_eq!(nearest(&root, "a/x.env").unwrap().unwrap().text, "root");
        assert_eq!(nearest(&root, "x.env").unwrap().unwrap().path, ".age-recipients");
        assert!(nearest(&root, "../x.env").is_err() && nearest(&root, "/etc/x").is_err());
        // A path the caller parsed already is found without its text; one it did not is read.
        let known = |p: &str| p == ".age-recipients";
        let found = nearest_with(&root, "a/x.env", known).unwrap().unwrap();
        assert_eq!((found.path.as_str(), found.text.as_str()), (".age-recipients", ""));
        assert_eq!(nearest_with(&root, "a/b/x.env", known).unwrap().unwrap().text, "ab");
        std::fs::write(root.join("a").join(FILE_NAME), "a").unwrap();
        let found = nearest_with(&root, "a/x.env", known).unwrap().unwrap();
        assert_eq!(
            (found.path.as_str(), found.text.as_str()),
            ("a/.age-recipients", "a"),
            "a nearer file is found"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// Only a regular file in the work tree: a link (out of the tree, to /dev/stdin), a FIFO,
    /// a folder, or a link on the way fails at once, naming the path.
    #[cfg(unix)]
    #[test]
    fn only_a_regular_file_inside_the_tree() {
        let root = std::env::temp_dir().join(format!("hyperseal-recipients-links-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("a")).unwrap();
        let elsewhere = root.with_extension("elsewhere");
        std::fs::write(&elsewhere, "age1elsewhere").unwrap();
        let refused = |rel: &str| {
            let e = nearest(&root, rel).expect_err(rel).to_string();
            assert!(e.contains(".age-recipients") || e.contains("is a symbolic link"), "{rel}: {e}");
            e
        };
        std::os::unix::fs::symlink(&elsewhere, root.join(FILE_NAME)).unwrap();
        assert!(refused("x.env").contains("symbolic link"));
        // Also where the filter already parsed that name.
        assert!(nearest_with(&root, "x.env", |_| true).is_err());
        std::fs::remove_file(root.join(FILE_NAME)).unwrap();
        std::os::unix::fs::symlink("/dev/stdin", root.join(FILE_NAME)).unwrap();
        assert!(refused("x.env").contains("symbolic link"));
        std::fs::remove_file(root.join(FILE_NAME)).unwrap();
        let made = std::process::Command::new("mkfifo").arg(root.join(FILE_NAME)).status().unwrap();
        assert!(made.success());
        assert!(refused("x.env").contains("not a regular file"));
        std::fs::remove_file(root.join(FILE_NAME)).unwrap();
        std::fs::create_dir(root.join(FILE_NAME)).unwrap();
        assert!(refused("x.env").contains("a folder"));
        std::fs::remove_dir(root.join(FILE_NAME)).unwrap();
        // A folder on the way that is a link to a folder outside with a recipients file.
        let outside = root.with_extension("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join(FILE_NAME), "age1outside").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("b")).unwrap();
        assert!(refused("b/x.env").contains("b is a symbolic link"));
        std::fs::write(root.join("a").join(FILE_NAME), "ok").unwrap();
        assert_eq!(nearest(&root, "a/x.env").unwrap().unwrap().text, "ok");
        for p in [&root, &outside] {
            std::fs::remove_dir_all(p).unwrap();
        }
        std::fs::remove_file(&elsewhere).unwrap();
    }

    #[test]
    fn bounded() {
        assert!(parse_bounded(&vec![b'#'; (MAX_LEN + 1) as usize][..]).is_err());
        assert!(parse_bounded(&[0xffu8][..]).is_err());
        let file = std::env::temp_dir().join(format!("hyperseal-recipients-big-{}", std::process::id()));
        std::fs::write(&file, vec![b'#'; (MAX_LEN + 1) as usize]).unwrap();
        assert!(read_bounded(&file).is_err());
        std::fs::write(&file, vec![b'#'; MAX_LEN as usize]).unwrap();
        assert_eq!(read_bounded(&file).unwrap().unwrap().len() as u64, MAX_LEN);
        std::fs::remove_file(&file).unwrap();
    }
}
