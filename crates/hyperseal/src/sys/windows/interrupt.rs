//! Cleanup on interrupt needs no handler on Windows: a named temporary is created
//! delete-on-close (see `create_temporary`), so the system removes it however the process ends.

use std::path::Path;

#[derive(Debug)]
pub(crate) struct Registration;

/// Nothing to undo; the callers drop a registration at the same points on every system.
impl Drop for Registration {
    fn drop(&mut self) {}
}

pub(crate) fn register(_: &Path) -> Option<Registration> {
    None
}
