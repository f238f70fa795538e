//! `forget`: which snapshots a policy keeps, as restic 0.14 decides it, and the removal of the
//! rest. Snapshots are grouped (by host and paths unless told otherwise), and each group is
//! walked newest first: every counted rule keeps the newest snapshot of each of its N most
//! recent periods that have one; `within` keeps what is younger than the group's newest minus
//! the duration; `tags` keeps what carries a tag list. A snapshot any rule keeps is kept.
//!
//! A snapshot's time is the writer's word: a writer can claim any date. So a snapshot counts
//! as made no later than when the store received it (its object's modified time), and one
//! dated in the future cannot make the real ones look old.

use std::collections::BTreeMap;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};
use crate::listing::SnapshotInfo;
use crate::repo::{Reader, Skipped};

/// A `--keep-within` duration, restic's `2y5m7d3h`: calendar years, months and days, then
/// hours. A unit given twice counts once, the last.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Within {
    /// Years.
    pub years: u32,
    /// Months.
    pub months: u32,
    /// Days.
    pub days: u32,
    /// Hours.
    pub hours: u32,
}

impl Within {
    fn is_zero(&self) -> bool {
        *self == Within::default()
    }

    /// `t` less the duration, as Go's `AddDate` then `Add` count it: the month moves first,
    /// and a day past the month's end runs into the next (March 31 less a month is March 3).
    fn before(&self, t: i64) -> i64 {
        let (days, tod) = (t.div_euclid(86_400), t.rem_euclid(86_400));
        let (y, m, d) = hyperseal::time::civil_from_days(days);
        let months = y * 12 + (m - 1) - i64::from(self.years) * 12 - i64::from(self.months);
        let first = days_from_civil(months.div_euclid(12), months.rem_euclid(12) + 1);
        (first + d - 1 - i64::from(self.days)) * 86_400 + tod - i64::from(self.hours) * 3600
    }
}

impl FromStr for Within {
    type Err = Error;

    fn from_str(s: &str) -> Result<Within> {
        let bad = |why: String| Error::Refused(format!("--keep-within {s:?}: {why} (say 2y5m7d3h)"));
        if s.is_empty() {
            return Err(bad("empty".into()));
        }
        let mut w = Within::default();
        let mut rest = s;
        while !rest.is_empty() {
            let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
            let n: u32 = rest[..digits].parse().map_err(|_| bad("a number first".into()))?;
            let unit = rest[digits..].chars().next().ok_or_else(|| bad(format!("no unit after {n}")))?;
            match unit {
                'y' => w.years = n,
                'm' => w.months = n,
                'd' => w.days = n,
                'h' => w.hours = n,
                c => return Err(bad(format!("unknown unit {c:?}"))),
            }
            rest = &rest[digits + unit.len_utf8()..];
        }
        Ok(w)
    }
}

/// Days since 1970-01-01 of the first of month `m` (1–12) of year `y` (Howard Hinnant's).
fn days_from_civil(y: i64, m: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

/// Which snapshots `forget` keeps in each group, as restic's policy. Periods are UTC; weeks
/// run Monday to Sunday.
#[derive(Clone, Debug, Default)]
pub struct Keep {
    /// The newest N snapshots.
    pub last: usize,
    /// The newest snapshot of each of the last N hours that have one.
    pub hourly: usize,
    /// … of each of the last N days.
    pub daily: usize,
    /// … of each of the last N weeks.
    pub weekly: usize,
    /// … of each of the last N months.
    pub monthly: usize,
    /// … of each of the last N years.
    pub yearly: usize,
    /// Every snapshot younger than the group's newest less this.
    pub within: Within,
    /// Every snapshot that has all the tags of one of these lists.
    pub tags: Vec<Vec<String>>,
}

impl Keep {
    /// Whether no rule keeps anything.
    pub fn is_empty(&self) -> bool {
        [self.last, self.hourly, self.daily, self.weekly, self.monthly, self.yearly].iter().all(|n| *n == 0)
            && self.within.is_zero()
            && self.tags.is_empty()
    }
}

/// What groups snapshots: each group gets the policy of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupBy {
    /// By host name.
    pub host: bool,
    /// By the set of paths.
    pub paths: bool,
    /// By the set of tags.
    pub tags: bool,
}

impl Default for GroupBy {
    /// restic's default: host and paths.
    fn default() -> Self {
        GroupBy { host: true, paths: true, tags: false }
    }
}

impl FromStr for GroupBy {
    type Err = Error;

    /// `host,paths,tags`, any subset; empty for one group.
    fn from_str(s: &str) -> Result<GroupBy> {
        let mut g = GroupBy { host: false, paths: false, tags: false };
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part {
                "host" => g.host = true,
                "paths" => g.paths = true,
                "tags" => g.tags = true,
                _ => {
                    return Err(Error::Refused(format!(
                        "--group-by {part:?}: not host, paths or tags (say host,paths, or '' for none)"
                    )))
                }
            }
        }
        Ok(g)
    }
}

/// Which snapshots a verb looks at; an empty list lets every snapshot through.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Snapshots of any of these hosts.
    pub hosts: Vec<String>,
    /// Snapshots that have all the tags of one of these lists.
    pub tags: Vec<Vec<String>>,
    /// Snapshots that name every one of these paths.
    pub paths: Vec<String>,
}

impl Filter {
    /// Whether `s` passes.
    pub fn matches(&self, s: &crate::format::snapshot::Snapshot) -> bool {
        (self.hosts.is_empty() || self.hosts.contains(&s.host))
            && (self.tags.is_empty() || self.tags.iter().any(|l| has_tags(&s.tags, l)))
            && self.paths.iter().all(|p| s.paths.contains(p))
    }
}

/// restic's `HasTags`: every tag of the list; an empty tag matches a snapshot without tags.
fn has_tags(tags: &[String], list: &[String]) -> bool {
    for t in list {
        if t.is_empty() && tags.is_empty() {
            return true;
        }
        if !tags.contains(t) {
            return false;
        }
    }
    true
}

/// A `--tag`/`--keep-tag` value: tags separated by commas, all of which a snapshot must have.
pub fn tag_list(s: &str) -> Vec<String> {
    s.split(',').map(|t| t.trim().to_string()).collect()
}

/// How to forget.
#[derive(Clone, Debug, Default)]
pub struct ForgetOptions {
    /// The policy, applied to each group.
    pub keep: Keep,
    /// What makes a group.
    pub group_by: GroupBy,
    /// The snapshots looked at; the others are neither kept nor removed.
    pub filter: Filter,
    /// Decide, and remove nothing.
    pub dry_run: bool,
}

/// One group's outcome, newest first.
#[derive(Clone, Debug, Default)]
pub struct ForgetGroup {
    /// The host, when grouped by host.
    pub host: Option<String>,
    /// The paths (sorted), when grouped by paths.
    pub paths: Option<Vec<String>>,
    /// The tags (sorted), when grouped by tags.
    pub tags: Option<Vec<String>>,
    /// The snapshots kept (their trees left out).
    pub kept: Vec<SnapshotInfo>,
    /// The snapshots removed, or that a dry run would remove.
    pub removed: Vec<SnapshotInfo>,
}

/// What `forget` removed.
#[derive(Clone, Debug, Default)]
pub struct ForgetReport {
    /// Snapshot ids removed (or, on a dry run, to remove).
    pub removed: Vec<String>,
    /// Snapshot ids kept.
    pub kept: Vec<String>,
    /// Snapshot objects that did not open: neither kept nor removed.
    pub skipped: Vec<Skipped>,
    /// Each group, in the order of its host, paths and tags.
    pub groups: Vec<ForgetGroup>,
}

/// Removes every snapshot the policy does not keep, grouped by host and paths. Deletes only
/// snapshot objects, so it needs no lock: a writer never reads snapshots. A policy that keeps
/// nothing is refused.
pub fn forget(reader: &Reader<'_>, keep: Keep) -> Result<ForgetReport> {
    forget_with(reader, &ForgetOptions { keep, ..ForgetOptions::default() })
}

/// [`forget`] with grouping, a filter, and a dry run.
pub fn forget_with(reader: &Reader<'_>, opts: &ForgetOptions) -> Result<ForgetReport> {
    if opts.keep.is_empty() {
        return Err(Error::Refused("a policy that keeps no snapshot: give --keep-last and the like".into()));
    }
    let listed = reader.snapshots()?;
    // The store's times after the snapshots are read: every snapshot read was stored before
    // this listing, so each has its time here (one deleted meanwhile keeps its own).
    let received: BTreeMap<String, SystemTime> = reader
        .store
        .list("snapshots/")?
        .into_iter()
        .filter_map(|o| Some((o.name["snapshots/".len()..].to_string(), o.modified?)))
        .collect();
    let mut groups: BTreeMap<GroupKey, Vec<(Stamp, SnapshotInfo)>> = BTreeMap::new();
    for s in listed.list.into_iter().filter(|s| opts.filter.matches(&s.snapshot)) {
        let claimed = (s.snapshot.time, s.snapshot.nanos);
        let stamp = match received.get(&s.id).and_then(|t| t.duration_since(UNIX_EPOCH).ok()) {
            Some(d) => claimed.min((d.as_secs() as i64, d.subsec_nanos())),
            None => claimed,
        };
        let g = &opts.group_by;
        let key = (
            if g.host { s.snapshot.host.clone() } else { String::new() },
            if g.paths { sorted(&s.snapshot.paths) } else { Vec::new() },
            if g.tags { sorted(&s.snapshot.tags) } else { Vec::new() },
        );
        groups.entry(key).or_default().push((stamp, s));
    }
    let mut rep = ForgetReport { skipped: listed.skipped, ..ForgetReport::default() };
    for ((host, paths, tags), mut list) in groups {
        // Newest first; the id settles a tie, so a run decides the same way twice.
        list.sort_by(|a, b| (b.0, &b.1.id).cmp(&(a.0, &a.1.id)));
        let keep = decide(&opts.keep, &list);
        let g = &opts.group_by;
        let mut group = ForgetGroup {
            host: g.host.then_some(host),
            paths: g.paths.then_some(paths),
            tags: g.tags.then_some(tags),
            ..ForgetGroup::default()
        };
        for ((_, s), kept) in list.into_iter().zip(keep) {
            match kept {
                true => group.kept.push(s),
                false => group.removed.push(s),
            }
        }
        rep.groups.push(group);
    }
    for group in &rep.groups {
        rep.kept.extend(group.kept.iter().map(|s| s.id.clone()));
        for s in &group.removed {
            if !opts.dry_run {
                reader.store.delete(&format!("snapshots/{}", s.id))?;
            }
            rep.removed.push(s.id.clone());
        }
    }
    Ok(rep)
}

/// Seconds and nanoseconds since the epoch.
type Stamp = (i64, u32);

/// A group's host, sorted paths and sorted tags (each empty where not grouped by it).
type GroupKey = (String, Vec<String>, Vec<String>);

fn sorted(v: &[String]) -> Vec<String> {
    let mut v = v.to_vec();
    v.sort();
    v
}

/// Whether each snapshot of a group (newest first) is kept: restic's `ApplyPolicy`.
fn decide(keep: &Keep, list: &[(Stamp, SnapshotInfo)]) -> Vec<bool> {
    let mut left = [keep.last, keep.hourly, keep.daily, keep.weekly, keep.monthly, keep.yearly];
    let mut seen: [Option<i64>; 6] = [None; 6];
    let newest = list.first().map(|(t, _)| *t).unwrap_or_default();
    let oldest_kept = (keep.within.before(newest.0), newest.1);
    let mut out = Vec::with_capacity(list.len());
    for (i, (stamp, s)) in list.iter().enumerate() {
        let mut kept = keep.tags.iter().any(|l| has_tags(&s.snapshot.tags, l));
        kept |= !keep.within.is_zero() && *stamp > oldest_kept;
        // Each counted rule spends one of its N on every new period, whether or not another
        // rule already keeps the snapshot: restic counts them so.
        for (rule, period) in periods(stamp.0, i).into_iter().enumerate() {
            if left[rule] > 0 && seen[rule] != Some(period) {
                (seen[rule], left[rule], kept) = (Some(period), left[rule] - 1, true);
            }
        }
        out.push(kept);
    }
    out
}

/// The period a snapshot's time falls in, for each rule (UTC hours, days, Monday-weeks,
/// months and years); `last` puts every snapshot in its own.
fn periods(time: i64, i: usize) -> [i64; 6] {
    let days = time.div_euclid(86_400);
    // 1970-01-01 was a Thursday: +3 makes weeks start on Mondays, as ISO weeks do.
    let week = (days + 3).div_euclid(7);
    let (y, m, _) = hyperseal::time::civil_from_days(days);
    [i as i64, time.div_euclid(3600), days, week, y * 12 + m, y]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_and_subtract_as_go_counts_them() {
        let w: Within = "2y5m7d3h".parse().unwrap();
        assert_eq!(w, Within { years: 2, months: 5, days: 7, hours: 3 });
        assert!("".parse::<Within>().is_err() && "5".parse::<Within>().is_err());
        assert!("5w".parse::<Within>().is_err() && "d".parse::<Within>().is_err());
        // 2023-03-31 00:00 UTC less a month: Feb 31, which is March 3.
        let m: Within = "1m".parse().unwrap();
        assert_eq!(m.before(1_680_220_800), 1_677_801_600);
        // Across a year and back over a leap day.
        let y: Within = "1y1d".parse().unwrap();
        assert_eq!(y.before(1_709_251_200), 1_677_542_400); // 2024-03-01 → 2023-02-28
    }

    #[test]
    fn group_by_takes_any_subset() {
        assert_eq!("".parse::<GroupBy>().unwrap(), GroupBy { host: false, paths: false, tags: false });
        assert_eq!("tags,host".parse::<GroupBy>().unwrap(), GroupBy { host: true, paths: false, tags: true });
        assert!("hosts".parse::<GroupBy>().is_err());
    }
}
