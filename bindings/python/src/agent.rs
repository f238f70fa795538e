//! `AgentIdentity`: the identity agent (`hyperseal agent`, the CLI's) as an identity, by socket
//! path, over the library's `hyperseal::agent::AgentIdentity`. The package reads no
//! environment: the caller passes the path (`os.environ["HYPERSEAL_AGENT_SOCK"]`, say).

use std::path::PathBuf;
use std::time::Duration;

use pyo3::prelude::*;

use crate::errors::ArgumentError;

/// The agent listening at `path`: it answers for every key it holds, a file at a time, or a
/// tree's window at a time in `rekey_tree`. Nothing is connected until a file is opened.
#[pyclass(frozen, module = "hyperseal")]
pub struct AgentIdentity {
    path: PathBuf,
    timeout: Duration,
}

#[pymethods]
impl AgentIdentity {
    #[new]
    #[pyo3(signature = (path, *, timeout = 10.0))]
    fn new(path: PathBuf, timeout: f64) -> PyResult<Self> {
        if !(timeout > 0.0 && timeout <= 3600.0) {
            return Err(ArgumentError::new_err("timeout must be above 0 and at most 3600 seconds"));
        }
        Ok(AgentIdentity { path, timeout: Duration::from_secs_f64(timeout) })
    }

    /// The socket path.
    #[getter]
    fn path(&self) -> String {
        self.path.display().to_string()
    }

    fn __repr__(&self) -> String {
        format!("AgentIdentity({:?})", self.path.display().to_string())
    }
}

impl AgentIdentity {
    /// The library's identity for this agent.
    pub fn identity(&self) -> Box<dyn hyperseal::Identity> {
        Box::new(hyperseal::agent::AgentIdentity::new(&self.path).with_timeout(self.timeout))
    }
}
