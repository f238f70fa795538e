//! Cleanup on interrupt needs no handler on Windows: a named temporary is created
//! delete-on-close (see `create_temporary`), so the system removes it however the process ends.

use std::path::Path;

#[derive(Debug)]
pub(crate) struct Registration;

pub(crate) fn register(_: &Path) -> Option<Registration> {
    None
}
