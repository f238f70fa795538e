//! Systems with neither (WebAssembly in a page): no processes to start, so plugins are never
//! found ([`is_executable`] is false) and [`process::spawn`] refuses.

pub(crate) fn is_executable(_: &std::fs::Metadata) -> bool {
    false
}

pub(crate) mod process {
    use std::process::{Child, Command};
    use std::time::Duration;

    #[derive(Debug)]
    pub(crate) struct Family;

    pub(crate) fn spawn(_: &mut Command) -> std::io::Result<(Child, Family)> {
        Err(std::io::ErrorKind::Unsupported.into())
    }

    pub(crate) fn end_all(child: &mut Child, _: &Family, _: Duration) -> bool {
        let _ = child.kill();
        let _ = child.wait();
        true
    }

    /// Nothing to adopt where no process is started.
    pub fn adopt_orphans() -> std::io::Result<()> {
        Ok(())
    }

    pub(crate) fn ignore_sigpipe_here() {}
}
