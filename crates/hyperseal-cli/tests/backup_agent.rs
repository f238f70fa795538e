//! A repository whose reader is a PIN-protected security key (the project's test plugin,
//! `age-plugin-hstest`, which counts its runs and prompts) held by the agent: a restore opens
//! many objects, each a plugin run, and the PIN is typed once for the whole run; a check after
//! it, with no terminal to type on, opens them all again.

use std::process::Command;

use crate::agent_support::{on_terminal, BIN};
use crate::agent_support::{PluginAgent, PIN};
use crate::common;

#[test]
fn a_restore_through_the_agent_costs_one_pin_for_the_whole_run() {
    let Some(hs) = PluginAgent::start("pin") else { return };
    let (agent, path, recipient) = (&hs.agent, &hs.path, &hs.recipient);
    agent.ok(&["agent", "add", hs.key.to_str().unwrap()]);
    let count = |what: &str| hs.count(what);

    // A repository for the key, and a tree in several packs (every pack, index and snapshot
    // is an object of its own, each with its own file key to unwrap).
    let repo = agent.path("repo");
    let src = agent.path("src");
    std::fs::create_dir_all(&src).unwrap();
    for i in 0..4u64 {
        std::fs::write(src.join(format!("f{i}.bin")), common::data(3 << 20, i + 1)).unwrap();
    }
    let (r, s, w) = (repo.to_str().unwrap(), src.to_str().unwrap(), agent.path("writer.key"));
    let plain = |args: &[&str]| {
        let o = Command::new(BIN)
            .args(args)
            .env("PATH", path)
            .env_remove("HYPERSEAL_AGENT_SOCK")
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    };
    plain(&["backup", "init", "--repo", r, "-r", recipient.trim(), "--writer-key", w.to_str().unwrap()]);
    plain(&["backup", "create", "--repo", r, "--writer-key", w.to_str().unwrap(), "--no-cache", "-q", s]);
    let objects = std::fs::read_dir(repo.join("data")).unwrap().count();
    assert!(objects >= 2, "one pack only: {objects} files in data/");

    // The restore: no -i, the agent's key; the PIN typed once on this run's terminal.
    let target = agent.path("out");
    let sock = agent.sock();
    let term_env = [("HYPERSEAL_AGENT_SOCK", sock.to_str().unwrap()), ("PATH", path.as_str())];
    let argv = [BIN, "backup", "restore", "--repo", r, "latest", "--target", target.to_str().unwrap()];
    let (status, stderr, tty) = on_terminal(&argv, agent.dir.path(), &term_env, &[PIN]);
    assert_eq!(status, 0, "restore through the agent: {stderr}\n{tty}");
    for i in 0..4u64 {
        let back = std::fs::read(target.join(format!("src/f{i}.bin"))).unwrap();
        assert!(back == common::data(3 << 20, i + 1), "f{i}.bin differs");
    }
    // Each object's unwrap is a plugin run that asks for the PIN; the agent answers all but
    // the first from what was typed, so the terminal showed one prompt.
    let runs = count("run");
    assert!(runs > objects, "{runs} plugin runs for {objects} packs and more objects");
    assert_eq!(tty.matches("PIN for hstest").count(), 1, "PIN prompts on the terminal: {tty}");
    assert_eq!(count("fail"), 0);
    // check --read-data opens every object again with no terminal at all: only the agent's
    // PIN can answer.
    let o = agent.run(&["backup", "check", "--repo", r, "--read-data"]);
    assert!(o.status.success(), "check: {}", String::from_utf8_lossy(&o.stderr));
    assert!(count("run") > runs, "check ran no plugin");
    assert_eq!(count("fail"), 0);
}
