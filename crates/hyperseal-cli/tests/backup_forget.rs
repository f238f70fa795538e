//! `backup create --host --tag --time`, `snapshots` with its filters and grouping, and
//! `forget`'s flags end to end: the JSON `forget --dry-run --json` prints keeps and removes the
//! same snapshots as restic 0.14's for the same history and flags, where restic is installed
//! (Debian's package, `make restic`); elsewhere that part says so and passes, unless
//! HYPERSEAL_REQUIRE_PEERS=1.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::common::{hs, keypair, ok, p};

/// One snapshot: host, tags, time (`YYYY-MM-DD HH:MM:SS`, UTC) and whether it has both paths.
const HISTORY: [(&str, &str, &str, bool); 10] = [
    ("web", "daily", "2024-01-01 03:00:00", false),
    ("web", "daily", "2024-01-02 03:00:00", false),
    ("web", "manual", "2024-01-02 15:30:00", false),
    ("web", "daily", "2024-01-09 03:00:00", false),
    ("web", "", "2024-02-11 03:00:00", true),
    ("db", "daily", "2024-01-01 04:00:00", false),
    ("db", "daily,manual", "2024-01-05 04:00:00", false),
    ("db", "daily", "2024-03-05 04:00:00", false),
    ("db", "", "2024-03-05 06:00:00", false),
    ("db", "daily", "2025-01-01 04:00:00", false),
];

/// The `forget` flags both tools get.
const FLAG_SETS: [&[&str]; 6] = [
    &["--keep-last", "2"],
    &["--keep-daily", "2", "--keep-monthly", "2", "--group-by", ""],
    &["--keep-weekly", "1", "--keep-tag", "manual", "--group-by", "host"],
    &["--keep-within", "1m2d", "--host", "db"],
    &["--keep-yearly", "5", "--keep-hourly", "1", "--tag", "daily", "--group-by", "host,tags"],
    &["--keep-last", "1", "--path", "{a}"],
];

struct Setup {
    dir: tempfile::TempDir,
    key: String,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let (key, public) = keypair(dir.path(), "reader", "x25519");
        let (repo, w) = (dir.path().join("repo"), dir.path().join("writer.key"));
        ok(&hs(&["backup", "init", "--repo", p(&repo), "-r", &public, "--writer-key", p(&w)], None));
        for name in ["a", "b"] {
            std::fs::create_dir_all(dir.path().join(name)).unwrap();
            std::fs::write(dir.path().join(name).join("f"), name).unwrap();
        }
        Setup { dir, key }
    }

    fn path(&self, name: &str) -> String {
        p(&self.dir.path().join(name)).to_string()
    }

    fn create(&self, host: &str, tags: &str, time: &str, both: bool) {
        let (repo, w) = (self.path("repo"), self.path("writer.key"));
        let mut args = vec!["backup", "create", "--repo", &repo, "--writer-key", &w, "--no-cache", "-q"];
        args.extend(["--host", host, "--time", time]);
        args.extend(tags.split(',').filter(|t| !t.is_empty()).flat_map(|t| ["--tag", t]));
        let (a, b) = (self.path("a"), self.path("b"));
        args.push(&a);
        if both {
            args.push(&b);
        }
        ok(&hs(&args, None));
    }

    /// `hyperseal backup VERB --repo … -i … ARGS`'s standard output as JSON.
    fn json(&self, verb: &str, args: &[&str]) -> serde_json::Value {
        let repo = self.path("repo");
        let mut all = vec!["backup", verb, "--repo", &repo, "-i", &self.key, "--json"];
        all.extend(args);
        serde_json::from_str(&ok(&hs(&all, None))).unwrap()
    }
}

/// The times of the snapshots a `forget --json` answer keeps and removes.
fn kept_and_removed(groups: &serde_json::Value) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut keep, mut remove) = (BTreeSet::new(), BTreeSet::new());
    for g in groups.as_array().into_iter().flatten() {
        for (key, set) in [("keep", &mut keep), ("remove", &mut remove)] {
            for s in g[key].as_array().into_iter().flatten() {
                set.insert(time_text(&s["time"]));
            }
        }
    }
    (keep, remove)
}

/// restic's RFC 3339 text, or hyperseal's seconds, as `YYYY-MM-DDTHH:MM:SSZ`.
fn time_text(v: &serde_json::Value) -> String {
    match v.as_i64() {
        Some(secs) => hyperseal::time::rfc3339(secs),
        None => v.as_str().unwrap().to_string(),
    }
}

fn restic(repo: &Path) -> Command {
    let mut c = Command::new("restic");
    c.env("TZ", "UTC").env("RESTIC_PASSWORD", "test").env("RESTIC_REPOSITORY", repo).arg("--no-cache");
    c
}

fn restic_installed() -> bool {
    if Command::new("restic").arg("version").output().is_ok_and(|o| o.status.success()) {
        return true;
    }
    assert!(
        std::env::var("HYPERSEAL_REQUIRE_PEERS").as_deref() != Ok("1"),
        "restic is missing and HYPERSEAL_REQUIRE_PEERS=1 (make restic)"
    );
    eprintln!("note: restic is not installed; the comparison with it is skipped (make restic)");
    false
}

#[test]
fn snapshots_filter_and_group_by_host_paths_and_tags() {
    let s = Setup::new();
    for (host, tags, time, both) in HISTORY {
        s.create(host, tags, time, both);
    }
    let all = s.json("snapshots", &[]);
    assert_eq!(all.as_array().unwrap().len(), 10);
    let first = &all[0];
    assert_eq!((first["host"].as_str(), first["time"].as_i64()), (Some("web"), Some(1_704_078_000)));
    assert_eq!(first["tags"], serde_json::json!(["daily"]));
    let count = |args: &[&str]| s.json("snapshots", args).as_array().unwrap().len();
    assert_eq!(count(&["--host", "db"]), 5);
    assert_eq!(count(&["--tag", "manual"]), 2);
    assert_eq!(count(&["--tag", "daily,manual"]), 1);
    assert_eq!(count(&["--host", "db", "--tag", "manual", "--tag", ""]), 2, "an empty tag: untagged ones");
    assert_eq!(count(&["--path", &s.path("b")]), 1);
    let groups = s.json("snapshots", &["--group-by", "host,paths"]);
    let sizes: Vec<usize> =
        groups.as_array().unwrap().iter().map(|g| g["snapshots"].as_array().unwrap().len()).collect();
    assert_eq!(sizes, vec![5, 4, 1], "db, then web with one path, then web with two");
    // The table names tags, and each group under its own heading.
    let repo = s.path("repo");
    let text = ok(&hs(&["backup", "snapshots", "--repo", &repo, "-i", &s.key, "--group-by", "host"], None));
    assert_eq!(text.matches("snapshots for host [").count(), 2, "{text}");
    assert!(text.contains("daily,manual") && text.ends_with("10 snapshots\n"), "{text}");
    // A time that is none is refused before anything is written.
    let w = s.path("writer.key");
    let bad = hs(
        &["backup", "create", "--repo", &repo, "--writer-key", &w, "--time", "2024-02-30 00:00:00", &repo],
        None,
    );
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("YYYY-MM-DD"));
    assert_eq!(count(&[]), 10);
}

#[test]
fn forget_dry_run_removes_nothing_and_forget_removes_what_it_said() {
    let s = Setup::new();
    for (host, tags, time, both) in HISTORY {
        s.create(host, tags, time, both);
    }
    let said = s.json("forget", &["--keep-last", "1", "--dry-run"]);
    assert_eq!(said.as_array().unwrap().len(), 3, "three host-and-paths groups");
    assert_eq!(s.json("snapshots", &[]).as_array().unwrap().len(), 10, "a dry run removes nothing");
    let done = s.json("forget", &["--keep-last", "1"]);
    assert_eq!(kept_and_removed(&said), kept_and_removed(&done));
    let left: BTreeSet<String> =
        s.json("snapshots", &[]).as_array().unwrap().iter().map(|v| time_text(&v["time"])).collect();
    assert_eq!(left, kept_and_removed(&said).0);
    // No policy: refused, with a hint, and nothing removed.
    let repo = s.path("repo");
    let none = hs(&["backup", "forget", "--repo", &repo, "-i", &s.key], None);
    assert!(!none.status.success() && String::from_utf8_lossy(&none.stderr).contains("--keep-last"));
    let bad = hs(&["backup", "forget", "--repo", &repo, "-i", &s.key, "--keep-within", "3w"], None);
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("2y5m7d3h"));
}

#[test]
fn forget_keeps_what_restic_keeps_for_the_same_flags() {
    if !restic_installed() {
        return;
    }
    let s = Setup::new();
    let rrepo = s.dir.path().join("restic");
    let init = restic(&rrepo).args(["init", "-q"]).output().unwrap();
    assert!(init.status.success(), "restic init: {}", String::from_utf8_lossy(&init.stderr));
    let (a, b) = (s.path("a"), s.path("b"));
    for (host, tags, time, both) in HISTORY {
        s.create(host, tags, time, both);
        let mut c = restic(&rrepo);
        c.args(["backup", "-q", "--host", host, "--time", time]);
        c.args(tags.split(',').filter(|t| !t.is_empty()).flat_map(|t| ["--tag", t]));
        c.arg(&a);
        if both {
            c.arg(&b);
        }
        // One at a time: restic 0.14 retries, for seconds, a lock file another run just removed.
        let out = c.output().unwrap();
        assert!(out.status.success(), "restic backup: {}", String::from_utf8_lossy(&out.stderr));
    }
    for flags in FLAG_SETS {
        let flags: Vec<String> = flags.iter().map(|f| f.replace("{a}", &a)).collect();
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let out = restic(&rrepo).args(["forget", "--dry-run", "--json"]).args(&flags).output().unwrap();
        assert!(out.status.success(), "restic forget {flags:?}: {}", String::from_utf8_lossy(&out.stderr));
        let theirs = kept_and_removed(&serde_json::from_slice(&out.stdout).unwrap());
        let mut ours = vec!["--dry-run"];
        ours.extend(&flags);
        assert_eq!(kept_and_removed(&s.json("forget", &ours)), theirs, "forget {flags:?}");
    }
}
