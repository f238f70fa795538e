//! The agent's socket and its directory (Unix), or its named pipe (Windows): the directory is
//! the user's own and no one else can move it away, checked by `start` before it listens and by
//! the clients that send secrets before they connect; a live agent is never replaced.

#[cfg(unix)]
use std::fs;
use std::io;
#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
#[cfg(unix)]
use std::path::Path;
#[cfg(windows)]
use std::time::{Duration, Instant};

use anyhow::Result;
#[cfg(unix)]
use hyperseal::agent::conn::uid;
#[cfg(windows)]
use hyperseal::agent::conn::Conn;
use hyperseal::agent::conn::Listener;

use crate::errors::hint;

/// The socket's directory, made if missing (0700) and refused unless [`check_dir`] trusts it.
#[cfg(unix)]
pub fn make_dir(dir: &Path) -> Result<()> {
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(hint(format!("cannot make {}: {e}", dir.display()), DIR_HINT)),
    }
    check_dir(dir)
}

/// Refuses the socket's directory unless it is a directory of this user's, not a symlink,
/// that no one else may enter, and no other user can move it away: each directory above it
/// (as written and with its links resolved) belongs to this user or root, and no one else may
/// write in it unless it is sticky (a sticky directory lets no one rename what is not theirs).
/// Checked by `start` before it listens and by the clients that send secrets before they
/// connect.
#[cfg(unix)]
pub fn check_dir(dir: &Path) -> Result<()> {
    let refuse = |d: &Path, why: String| {
        hint(format!("refusing the agent's directory {}: {why}", d.display()), DIR_HINT)
    };
    let meta = fs::symlink_metadata(dir)
        .map_err(|e| hint(format!("cannot read {}: {e}", dir.display()), DIR_HINT))?;
    let why = if meta.file_type().is_symlink() {
        Some("it is a symbolic link")
    } else if !meta.is_dir() {
        Some("it is not a directory")
    } else if meta.uid() != uid() {
        Some("it belongs to another user")
    } else if meta.mode() & 0o077 != 0 {
        Some("it may be entered by other users (its mode is not 0700)")
    } else {
        None
    };
    if let Some(why) = why {
        return Err(refuse(dir, why.into()));
    }
    let resolved = fs::canonicalize(dir).map_err(|e| refuse(dir, format!("it cannot be resolved: {e}")))?;
    for above in dir.ancestors().skip(1).chain(resolved.ancestors().skip(1)) {
        if above.as_os_str().is_empty() {
            continue;
        }
        let meta = fs::metadata(above)
            .map_err(|e| refuse(dir, format!("{} cannot be read: {e}", above.display())))?;
        let why = if meta.uid() != uid() && meta.uid() != 0 {
            Some(format!(
                "{} above it belongs to another user (uid {}), who could move it away",
                above.display(),
                meta.uid()
            ))
        } else if meta.mode() & 0o022 != 0 && meta.mode() & 0o1000 == 0 {
            Some(format!(
                "{} above it may be written by other users and is not sticky (mode {:o}), so it could be moved away",
                above.display(),
                meta.mode() & 0o7777
            ))
        } else {
            None
        };
        if let Some(why) = why {
            return Err(refuse(dir, why));
        }
    }
    Ok(())
}

#[cfg(unix)]
const DIR_HINT: &str =
    "the agent's socket lives in $XDG_RUNTIME_DIR/hyperseal, a directory of your own with mode 0700: remove what is there, or point XDG_RUNTIME_DIR elsewhere";

const RUNNING_HINT: &str = "use it (export HYPERSEAL_AGENT_SOCK), or end it with `hyperseal agent stop`";

/// Binds the socket at `path` (0600), replacing a stale one; refused while an agent answers
/// there.
#[cfg(unix)]
pub fn bind(path: &Path) -> Result<Listener> {
    if std::os::unix::net::UnixStream::connect(path).is_ok() {
        return Err(hint(format!("an agent is already listening at {}", path.display()), RUNNING_HINT));
    }
    if let Ok(meta) = fs::symlink_metadata(path) {
        use std::os::unix::fs::FileTypeExt;
        if !meta.file_type().is_socket() {
            return Err(hint(format!("{} exists and is not a socket", path.display()), DIR_HINT));
        }
        let _ = fs::remove_file(path);
    }
    let listener = Listener::bind(path)
        .map_err(|e| hint(format!("cannot listen at {}: {e}", path.display()), DIR_HINT))?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// Creates this user's pipe `path`: refused while an agent (or anyone) holds that name.
#[cfg(windows)]
pub fn bind(path: &std::path::Path) -> Result<Listener> {
    // An agent that answers is found by connecting, as on Unix (FILE_FLAG_FIRST_PIPE_INSTANCE
    // below refuses it too where the system enforces it; Wine does not).
    match Conn::connect(path, Instant::now() + Duration::from_secs(1)) {
        Ok(_) => {
            return Err(hint(format!("an agent is already listening at {}", path.display()), RUNNING_HINT))
        }
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            return Err(hint(
                format!("{} is held by another user's process", path.display()),
                "another user's process took the agent's pipe name: have it ended before you start the agent",
            ))
        }
        Err(_) => {}
    }
    Listener::bind(path).map_err(|e| match e.kind() {
        io::ErrorKind::PermissionDenied => hint(
            format!(
                "an agent is already listening at {} (or another program holds that name)",
                path.display()
            ),
            RUNNING_HINT,
        ),
        _ => hint(format!("cannot listen at {}: {e}", path.display()), RUNNING_HINT),
    })
}
