//! An agent in front of the project's test plugin, `age-plugin-hstest` (a security key that
//! checks its PIN and counts every run, prompt, wrong PIN and confirmation): the agent tests
//! that need a PIN or a touch start the same one, so its set-up lives here.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{Agent, BIN};

/// The PIN the test plugin accepts until a test writes another into `pin`.
pub const PIN: &str = "1234";

/// An agent started with the test plugin's environment: `HSTEST_MODE` (`pin` or `confirm`),
/// its run log in `count` and its PIN in `pin` (both in the agent's folder), and PATH.
pub struct PluginAgent {
    pub agent: Agent,
    /// PATH with `age-plugin-hyperseal` (this build) and the test plugin first.
    pub path: String,
    /// The plugin key's identity file.
    pub key: PathBuf,
    /// The plugin key's recipient (`age1hstest1…`).
    pub recipient: String,
    mode: String,
}

impl PluginAgent {
    /// A new plugin key and an agent in `mode`, with no key added yet; `None` where the test
    /// plugin is not built (a failure under `make test`).
    pub fn start(mode: &str) -> Option<PluginAgent> {
        crate::common::peers(&["age-plugin-hstest"])?;
        let dir = super::agent_dir();
        let plugins = dir.path().join("plugins");
        std::fs::create_dir(&plugins).unwrap();
        std::os::unix::fs::symlink(BIN, plugins.join("age-plugin-hyperseal")).unwrap();
        let path = format!("{}:{}", plugins.display(), crate::common::tools_path());
        std::fs::write(dir.path().join("pin"), PIN).unwrap();
        let keygen = Path::new(crate::common::TOOLS).join("age-plugin-hstest");
        let o = Command::new(keygen).arg("--keygen").output().unwrap();
        let text = String::from_utf8(o.stdout).unwrap();
        let (id, recipient) = text.split_once('\n').unwrap();
        let key = dir.path().join("hstest.key");
        std::fs::write(&key, format!("{id}\n")).unwrap();
        let agent = Self::agent_in(dir, mode, &path);
        Some(PluginAgent { agent, path, key, recipient: recipient.trim().to_string(), mode: mode.into() })
    }

    /// The agent, started in `dir` with the plugin's environment.
    fn agent_in(dir: tempfile::TempDir, mode: &str, path: &str) -> Agent {
        let env = |k: &str, f: &str| format!("{k}={}", dir.path().join(f).display());
        let (count, pin) = (env("HSTEST_COUNT", "count"), env("HSTEST_PIN_FILE", "pin"));
        let (mode, path_var) = (format!("HSTEST_MODE={mode}"), format!("PATH={path}"));
        Agent::start_in(dir, &["env", &mode, &count, &pin, &path_var], &[])
    }

    /// Ends the agent and starts a new one in the same folder (the files and the plugin's
    /// log stay; whatever the agent held is gone).
    pub fn restart(&mut self) {
        self.agent.stop();
        let dir = std::mem::replace(&mut self.agent.dir, tempfile::tempdir().unwrap());
        self.agent = Self::agent_in(dir, &self.mode, &self.path);
    }

    /// How many times the plugin logged `what` (run, prompt, fail, confirm).
    pub fn count(&self, what: &str) -> usize {
        let log = std::fs::read_to_string(self.agent.path("count")).unwrap_or_default();
        log.lines().filter(|l| *l == what).count()
    }
}
