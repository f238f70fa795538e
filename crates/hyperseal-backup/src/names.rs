//! What a snapshot may name. A snapshot is input (whoever could write to the store could have
//! written it), so before a restore writes anything every path is checked here: each name a
//! plain one on the platform restoring, no name twice, a hard link only to a file listed
//! before it. A backup asks the same of each name it stores, so that what it writes restores.

use std::collections::HashSet;

use crate::error::{Error, Result};
use crate::format::snapshot::{Entry, Snapshot};

/// Longest path a snapshot may hold, and deepest.
const MAX_PATH: usize = 4096;
const MAX_DEPTH: usize = 256;

/// Whether `c` may be one name in a path on this platform ([`safe_name`]).
pub(crate) fn safe_component(c: &str) -> bool {
    safe_name(c, cfg!(windows))
}

/// Whether `c` is a plain name of one thing in a folder, not a way elsewhere. Everywhere: not
/// empty, `.` or `..`, at most 255 bytes, no `/` and no ASCII control character (NUL, line
/// breaks). On Windows, where more than `/` separates and some names are devices: also no `\`,
/// `:` (a drive, a stream), `<>"|?*`, no trailing dot or space (Windows drops them, so the name
/// would be another), and no device name (CON, PRN, AUX, NUL, COM0-9, LPT0-9, COM¹²³, LPT¹²³,
/// CONIN$, CONOUT$), in any case and with any extension. A Linux snapshot may hold `a:b`; it
/// restores on Linux.
pub(crate) fn safe_name(c: &str, windows: bool) -> bool {
    let plain = !c.is_empty()
        && c != "."
        && c != ".."
        && c.len() <= 255
        && !c.bytes().any(|b| b == b'/' || b.is_ascii_control());
    plain
        && !(windows
            && (c.chars().any(|ch| matches!(ch, '\\' | ':' | '<' | '>' | '"' | '|' | '?' | '*'))
                || c.ends_with(['.', ' '])
                || windows_device(c)))
}

/// Whether Windows takes `c` for a device: the name before its first dot, less trailing
/// spaces, is one (`nul.txt` and `NUL .tar.gz` are the device NUL).
fn windows_device(c: &str) -> bool {
    let stem = c.split('.').next().unwrap_or(c).trim_end_matches(' ').to_ascii_uppercase();
    let numbered = |prefix: &str| {
        stem.strip_prefix(prefix).is_some_and(|n| {
            matches!(n, "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "¹" | "²" | "³")
        })
    };
    matches!(stem.as_str(), "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$")
        || numbered("COM")
        || numbered("LPT")
}

fn safe_path(p: &str, windows: bool) -> bool {
    p.len() <= MAX_PATH && p.split('/').count() <= MAX_DEPTH && p.split('/').all(|c| safe_name(c, windows))
}

/// Refuses the whole snapshot if any entry could reach outside the target, or name a device,
/// on the platform restoring (`windows`).
pub(crate) fn validate(snap: &Snapshot, windows: bool) -> Result<()> {
    let mut seen = HashSet::new();
    let mut files = HashSet::new();
    for e in &snap.entries {
        let p = e.path();
        if !safe_path(p, windows) {
            return Err(Error::Refused(format!("snapshot holds an unsafe path {p:?}; nothing restored")));
        }
        if !seen.insert(p) {
            return Err(Error::Refused(format!("snapshot lists {p:?} twice; nothing restored")));
        }
        match e {
            Entry::File { .. } => {
                files.insert(p);
            }
            Entry::Hardlink { target, .. } if !files.contains(target.as_str()) => {
                return Err(Error::Refused(format!(
                    "hard link {p:?} to {target:?}, not a file before it; nothing restored"
                )));
            }
            Entry::Symlink { target, .. } if target.is_empty() || target.contains('\0') => {
                return Err(Error::Refused(format!(
                    "symbolic link {p:?} has an impossible target; nothing restored"
                )));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_are_no_plain_name_anywhere() {
        for windows in [false, true] {
            for bad in ["", ".", "..", "a/b", "nul\0", "line\nbreak", "cr\r", "bell\x07", "tab\t", "del\x7f"]
            {
                assert!(!safe_name(bad, windows), "{bad:?} (windows: {windows})");
            }
            for good in [
                "a",
                "a.txt",
                ".hidden",
                "...x",
                "naïve",
                "con-fig",
                "COM10",
                "LPT",
                "x".repeat(255).as_str(),
            ] {
                assert!(safe_name(good, windows), "{good:?} (windows: {windows})");
            }
            assert!(!safe_name(&"x".repeat(256), windows));
        }
    }

    #[test]
    fn windows_refuses_separators_drives_devices_and_trailing_dots() {
        let bad = [
            r"C:\Windows",
            r"..\outside",
            r"\\host\share",
            "c:",
            "a:stream",
            r"x\y",
            "a<b",
            "a>b",
            "a\"b",
            "a|b",
            "a?b",
            "a*b",
            "trailing.",
            "trailing ",
            "CON",
            "con",
            "Nul.txt",
            "nul .tar.gz",
            "aux.",
            "PRN.md",
            "COM1",
            "com9.log",
            "LPT1",
            "lpt0",
            "COM¹",
            "lpt³.txt",
            "CONIN$",
            "conout$.x",
        ];
        for name in bad {
            assert!(!safe_name(name, true), "{name:?} passes on Windows");
            // Each is a plain name on Linux, where a Linux snapshot may well hold it.
            assert!(safe_name(name, false), "{name:?} refused on Linux");
        }
        for good in ["CONSOLE", "con-1", "COM", "LPT10", "COM¹0", "nul-device", "a.con", "x.nul"] {
            assert!(safe_name(good, true), "{good:?} refused on Windows");
        }
    }

    #[test]
    fn a_windows_path_is_checked_name_by_name() {
        assert!(safe_path("dir/sub/file.txt", true));
        assert!(!safe_path("dir/CON/file.txt", true));
        assert!(!safe_path(r"dir/C:\x", true));
        assert!(safe_path(r"dir/C:\x", false), "a Linux name holding \\ and : restores on Linux");
    }
}
