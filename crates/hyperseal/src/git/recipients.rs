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
/// path was read already, it is only looked up (one `stat` for each folder on the way), and
/// its `text` is left empty. The filter asks this for every file git sends it, and a `git add`
/// of thousands of files in one folder would otherwise read the same recipients thousands of
/// times.
pub fn nearest_with(root: &Path, path: &str, known: impl Fn(&str) -> bool) -> io::Result<Option<Found>> {
    for here in candidates(path)? {
        let full = root.join(&here);
        if known(&here) {
            match std::fs::metadata(&full) {
                Ok(_) => return Ok(Some(Found { path: here, text: String::new() })),
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            }
        }
        if let Some(text) = read_bounded(&full)? {
            return Ok(Some(Found { path: here, text }));
        }
    }
    Ok(None)
}

/// The text of `file`, `None` if it does not exist; an error past [`MAX_LEN`] or if not UTF-8.
pub fn read_bounded(file: &Path) -> io::Result<Option<String>> {
    let f = match std::fs::File::open(file) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    // Sized by the file's length (one read for the whole of an ordinary recipients file), and
    // still bounded: a file that grows while it is read stops at MAX_LEN + 1.
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if len > MAX_LEN {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(len as usize + 1);
    f.take(MAX_LEN + 1).read_to_end(&mut bytes)?;
    text_of(bytes).map(Some)
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
