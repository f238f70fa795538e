//! `forget`'s policy against restic 0.14's on scripted histories (hosts, paths, tags, times):
//! the same snapshots made in both, the same `forget --dry-run` flags given to both, the kept
//! and removed sets compared. restic is Debian's package (`make restic`); where it is missing
//! the comparison says so and passes, unless HYPERSEAL_REQUIRE_PEERS=1.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicUsize;

use hyperseal_backup::{tag_list, BackupOptions, ForgetOptions, Keep};

use crate::common::{small, Repo};

/// One snapshot of a history: who made it, of what, with which tags, when (UTC seconds).
#[derive(Clone, Debug)]
struct Snap {
    host: &'static str,
    paths: Vec<usize>,
    tags: Vec<&'static str>,
    time: i64,
}

/// xorshift: the histories are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.next(from.len() as u64) as usize]
    }
}

const HOSTS: [&str; 3] = ["alpha", "beta", "gamma"];
const TAGS: [&str; 3] = ["daily", "manual", "x"];

/// A history: 8 to 19 snapshots, a few hosts, path sets and tags, spaced by one scale (minutes,
/// hours, days, weeks or months) so that each rule has periods to tell apart.
fn history(seed: u64) -> Vec<Snap> {
    let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let scale = [1_800, 7_200, 86_400, 4 * 86_400, 25 * 86_400][(seed % 5) as usize];
    let hosts = 1 + r.next(2) as usize;
    let mut time = 1_546_300_800 + r.next(200) as i64 * 86_400; // from 2019
    (0..8 + r.next(12))
        .map(|_| {
            time += 1 + r.next(2 * scale as u64) as i64;
            let paths = match r.next(4) {
                0 => vec![1],
                1 => vec![0, 1],
                _ => vec![0],
            };
            let tags: Vec<&str> = TAGS.iter().copied().filter(|_| r.next(4) == 0).collect();
            Snap { host: HOSTS[r.next(hosts as u64) as usize], paths, tags, time }
        })
        .collect()
}

/// Flag sets for one history's `forget`: a policy of one to three rules, sometimes a grouping
/// and a filter. `{p0}`/`{p1}` stand for the history's paths.
fn flag_sets(seed: u64) -> Vec<Vec<String>> {
    let mut r = Rng(seed.wrapping_mul(0xd1b5_4a32_d192_ed03) | 1);
    (0..3)
        .map(|_| {
            let mut f: Vec<String> = Vec::new();
            for _ in 0..1 + r.next(3) {
                let n = (1 + r.next(3)).to_string();
                let (flag, value) = match r.next(8) {
                    0 => ("--keep-last", n),
                    1 => ("--keep-hourly", n),
                    2 => ("--keep-daily", n),
                    3 => ("--keep-weekly", n),
                    4 => ("--keep-monthly", n),
                    5 => ("--keep-yearly", n),
                    6 => {
                        ("--keep-within", r.pick(&["12h", "3d", "1m2d", "1y", "2m", "1y1m1d1h"]).to_string())
                    }
                    _ => ("--keep-tag", r.pick(&["manual", "daily,x", "x"]).to_string()),
                };
                f.extend([flag.to_string(), value]);
            }
            match r.next(8) {
                0 => f.extend(["--group-by".into(), String::new()]),
                1 => f.extend(["--group-by".into(), "host".into()]),
                2 => f.extend(["--group-by".into(), "paths,tags".into()]),
                3 => f.extend(["--group-by".into(), "host,paths,tags".into()]),
                _ => {}
            }
            match r.next(6) {
                0 => f.extend(["--host".into(), "alpha".into()]),
                1 => f.extend(["--tag".into(), "daily".into(), "--tag".into(), "manual,x".into()]),
                2 => f.extend(["--path".into(), "{p0}".into()]),
                _ => {}
            }
            f
        })
        .collect()
}

/// The library's options for the same flags.
fn options(flags: &[String]) -> ForgetOptions {
    let mut o = ForgetOptions { dry_run: true, ..ForgetOptions::default() };
    for pair in flags.chunks(2) {
        let (flag, v) = (pair[0].as_str(), pair[1].as_str());
        let n = || v.parse::<usize>().unwrap();
        let k: &mut Keep = &mut o.keep;
        match flag {
            "--keep-last" => k.last = n(),
            "--keep-hourly" => k.hourly = n(),
            "--keep-daily" => k.daily = n(),
            "--keep-weekly" => k.weekly = n(),
            "--keep-monthly" => k.monthly = n(),
            "--keep-yearly" => k.yearly = n(),
            "--keep-within" => k.within = v.parse().unwrap(),
            "--keep-tag" => k.tags.push(tag_list(v)),
            "--group-by" => o.group_by = v.parse().unwrap(),
            "--host" => o.filter.hosts.push(v.into()),
            "--tag" => o.filter.tags.push(tag_list(v)),
            "--path" => o.filter.paths.push(v.into()),
            _ => panic!("{flag}"),
        }
    }
    o
}

fn rfc3339(t: i64) -> String {
    hyperseal::time::rfc3339(t)
}

/// What restic keeps and removes, by snapshot time (each history's times are distinct).
fn restic_forget(repo: &Path, flags: &[String]) -> (BTreeSet<String>, BTreeSet<String>) {
    let out = restic(repo).args(["forget", "--dry-run", "--json"]).args(flags).output().unwrap();
    assert!(out.status.success(), "restic forget {flags:?}: {}", String::from_utf8_lossy(&out.stderr));
    let groups: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let (mut keep, mut remove) = (BTreeSet::new(), BTreeSet::new());
    for g in groups.as_array().into_iter().flatten() {
        for (key, set) in [("keep", &mut keep), ("remove", &mut remove)] {
            for s in g[key].as_array().into_iter().flatten() {
                set.insert(s["time"].as_str().unwrap().to_string());
            }
        }
    }
    (keep, remove)
}

fn restic(repo: &Path) -> Command {
    let mut c = Command::new("restic");
    // UTC, as hyperseal counts periods; the password only opens this throwaway repository.
    c.env("TZ", "UTC").env("RESTIC_PASSWORD", "test").env("RESTIC_REPOSITORY", repo).arg("--no-cache");
    c
}

/// restic, or `None` with a note; under HYPERSEAL_REQUIRE_PEERS=1 a missing one fails.
fn restic_installed() -> bool {
    if Command::new("restic").arg("version").output().is_ok_and(|o| o.status.success()) {
        return true;
    }
    if std::env::var("HYPERSEAL_REQUIRE_PEERS").is_ok_and(|v| v == "1") {
        panic!("restic is missing and HYPERSEAL_REQUIRE_PEERS=1 (make restic)");
    }
    eprintln!("note: restic is not installed; the comparison with it is skipped (make restic)");
    false
}

/// Makes `history` in a hyperseal repository and in a restic one; returns them and the paths.
fn make_both(snaps: &[Snap]) -> (Repo, PathBuf, [String; 2]) {
    let repo = Repo::new(&[]);
    let paths = ["pa", "pb"].map(|n| repo.path(n));
    for p in &paths {
        fs::create_dir_all(p).unwrap();
        fs::write(p.join("f"), p.to_str().unwrap()).unwrap();
    }
    let rrepo = repo.path("restic");
    let init = restic(&rrepo).args(["init", "-q"]).output().unwrap();
    assert!(init.status.success(), "restic init: {}", String::from_utf8_lossy(&init.stderr));
    // One restic run at a time: restic 0.14 retries, for seconds, a lock file another run has
    // just removed. The lanes of the test run side by side instead, each on its own repository.
    for s in snaps {
        let mut c = restic(&rrepo);
        c.args(["backup", "-q", "--host", s.host, "--time"]).arg(restic_time(s.time));
        for t in &s.tags {
            c.args(["--tag", t]);
        }
        let out = c.args(s.paths.iter().map(|&i| &paths[i])).output().unwrap();
        assert!(out.status.success(), "restic backup: {}", String::from_utf8_lossy(&out.stderr));
        let chosen: Vec<&Path> = s.paths.iter().map(|&i| paths[i].as_path()).collect();
        let tags = s.tags.iter().map(|t| t.to_string()).collect();
        let opts = BackupOptions { host: s.host.into(), time: s.time, tags, ..small() };
        repo.backup_with(&chosen, &opts).unwrap();
    }
    let names = paths.map(|p| p.to_str().unwrap().to_string());
    (repo, rrepo, names)
}

/// `YYYY-MM-DD HH:MM:SS` for restic's `--time`.
fn restic_time(t: i64) -> String {
    rfc3339(t).replace('T', " ").trim_end_matches('Z').to_string()
}

#[test]
fn the_policy_matches_restic_on_scripted_histories() {
    if !restic_installed() {
        return;
    }
    let (compared, removing) = (AtomicUsize::new(0), AtomicUsize::new(0));
    // Six histories at a time: restic's runs wait more than they compute.
    std::thread::scope(|scope| {
        for lane in 0..6u64 {
            let (compared, removing) = (&compared, &removing);
            scope.spawn(move || {
                for seed in (0..24u64).filter(|s| s % 6 == lane) {
                    let snaps = history(seed);
                    let (repo, rrepo, paths) = make_both(&snaps);
                    let reader = repo.open();
                    for flags in flag_sets(seed) {
                        let flags: Vec<String> = flags
                            .iter()
                            .map(|f| f.replace("{p0}", &paths[0]).replace("{p1}", &paths[1]))
                            .collect();
                        let (keep, remove) = restic_forget(&rrepo, &flags);
                        let rep = hyperseal_backup::forget_with(&reader, &options(&flags)).unwrap();
                        let times = |ids: &[String]| -> BTreeSet<String> {
                            ids.iter().map(|id| rfc3339(reader.find(id).unwrap().snapshot.time)).collect()
                        };
                        let context = format!("history {seed} {snaps:#?}\nforget {flags:?}");
                        assert_eq!(times(&rep.kept), keep, "kept: {context}");
                        assert_eq!(times(&rep.removed), remove, "removed: {context}");
                        compared.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if !remove.is_empty() {
                            removing.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                    }
                    assert_eq!(
                        reader.snapshots().unwrap().list.len(),
                        snaps.len(),
                        "a dry run removes nothing"
                    );
                }
            });
        }
    });
    assert_eq!(compared.into_inner(), 72);
    // The flags are no comparison if every policy keeps everything.
    assert!(removing.into_inner() * 3 >= 72 * 2, "most cases remove something");
}

#[test]
fn a_future_dated_snapshot_does_not_push_out_real_ones() {
    let repo = Repo::new(&[]);
    let src = repo.path("src");
    fs::create_dir_all(&src).unwrap();
    fs::write(src.join("f"), "x").unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let days_ago = |d: i64| now - d * 86_400;
    for d in [5, 3, 2, 1] {
        repo.backup_with(&[&src], &BackupOptions { time: days_ago(d), ..small() }).unwrap();
    }
    // A writer claims a date ten years on: received now, it counts as made now.
    repo.backup_with(&[&src], &BackupOptions { time: now + 3650 * 86_400, ..small() }).unwrap();
    let reader = repo.open();
    let within = |w: &str| {
        let keep = Keep { within: w.parse().unwrap(), ..Keep::default() };
        let rep = hyperseal_backup::forget_with(
            &reader,
            &ForgetOptions { keep, dry_run: true, ..Default::default() },
        );
        let rep = rep.unwrap();
        let mut kept: Vec<i64> = rep.kept.iter().map(|id| reader.find(id).unwrap().snapshot.time).collect();
        kept.sort();
        kept
    };
    // Four days back from the store's now, not from 2036: the real ones of the last days stay.
    assert_eq!(within("4d"), vec![days_ago(3), days_ago(2), days_ago(1), now + 3650 * 86_400]);
    assert_eq!(reader.snapshots().unwrap().list.len(), 5, "a dry run removes nothing");
}

#[test]
fn filters_and_groups_select_what_forget_looks_at() {
    let repo = Repo::new(&[]);
    let (a, b) = (repo.path("a"), repo.path("b"));
    for p in [&a, &b] {
        fs::create_dir_all(p).unwrap();
    }
    let base = 1_700_000_000;
    let make = |host: &str, path: &Path, tags: &[&str], i: i64| {
        let tags = tags.iter().map(|t| t.to_string()).collect();
        let opts = BackupOptions { host: host.into(), tags, time: base + i * 3600, ..small() };
        repo.backup_with(&[path], &opts).unwrap().snapshot
    };
    let old_a = make("h1", &a, &["keep"], 0);
    let new_a = make("h1", &a, &[], 1);
    let old_b = make("h1", &b, &[], 2);
    let new_b = make("h1", &b, &[], 3);
    let other = make("h2", &a, &[], 4);
    let reader = repo.open();
    let run =
        |o: ForgetOptions| hyperseal_backup::forget_with(&reader, &ForgetOptions { dry_run: true, ..o });
    let last = Keep { last: 1, ..Keep::default() };
    // By host and paths: each of the three groups keeps its newest.
    let rep = run(ForgetOptions { keep: last.clone(), ..Default::default() }).unwrap();
    assert_eq!(rep.groups.len(), 3);
    assert_eq!(set(&rep.removed), set(&[old_a.clone(), old_b.clone()]));
    // One group: only the newest of all.
    let one = ForgetOptions { keep: last.clone(), group_by: "".parse().unwrap(), ..Default::default() };
    assert_eq!(set(&run(one).unwrap().kept), set(std::slice::from_ref(&other)));
    // A filter: the other host's snapshot is neither kept nor removed.
    let mut only_h1 =
        ForgetOptions { keep: last.clone(), group_by: "host".parse().unwrap(), ..Default::default() };
    only_h1.filter.hosts.push("h1".into());
    let rep = run(only_h1).unwrap();
    assert_eq!((set(&rep.kept), rep.removed.len()), (set(std::slice::from_ref(&new_b)), 3));
    // A tag keeps what no count does.
    let tagged = Keep { tags: vec![tag_list("keep")], ..last.clone() };
    let rep =
        run(ForgetOptions { keep: tagged, group_by: "".parse().unwrap(), ..Default::default() }).unwrap();
    assert_eq!(set(&rep.kept), set(&[old_a.clone(), other.clone()]));
    assert!(run(ForgetOptions::default()).is_err(), "a policy that keeps nothing is refused");
    // Without the dry run the removed ones are gone, and only they.
    let rep = hyperseal_backup::forget(&reader, last).unwrap();
    let left: Vec<String> = reader.snapshots().unwrap().list.into_iter().map(|s| s.id).collect();
    assert_eq!(set(&left), set(&[new_a, new_b, other]));
    assert_eq!(set(&rep.removed), set(&[old_a, old_b]));
}

fn set(v: &[String]) -> BTreeSet<String> {
    v.iter().cloned().collect()
}
