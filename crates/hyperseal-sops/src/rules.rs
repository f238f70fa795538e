//! `.sops.yaml` creation rules, read as `sops updatekeys` reads them: the first rule whose
//! `path_regex` matches the file's path (relative to the folder of `.sops.yaml`) names each key
//! group's keys; a rule without `path_regex` matches every file.

use std::path::{Path, PathBuf};

use regex::Regex;

use super::formats::yaml::document;
use super::model::{refuse, source_name, Node};
use super::target::TargetGroup;
use hyperseal::Error;

/// The file sops looks for, in the file's folder and then each folder above.
pub const CONFIG_NAME: &str = ".sops.yaml";
/// How many folders up sops looks.
const MAX_DEPTH: usize = 100;
/// The largest `.sops.yaml` read.
const MAX_CONFIG: usize = 1 << 20;
/// The most creation rules read.
const MAX_RULES: usize = 4096;

/// One creation rule.
pub struct Rule {
    path_regex: Option<Regex>,
    /// The key groups it names (age recipients, and the other sources by name).
    pub groups: Vec<TargetGroup>,
}

/// The creation rules of one `.sops.yaml`, and the folder their paths are relative to.
pub struct Rules {
    rules: Vec<Rule>,
    /// The folder of `.sops.yaml`.
    pub dir: PathBuf,
}

/// The `.sops.yaml` nearest `file`: in its folder or one above (as sops finds it).
pub fn find_config(file: &Path) -> Option<PathBuf> {
    let mut dir = file.parent()?.to_path_buf();
    if dir.as_os_str().is_empty() {
        dir = PathBuf::from(".");
    }
    let mut dir = std::fs::canonicalize(dir).ok()?;
    for _ in 0..MAX_DEPTH {
        let candidate = dir.join(CONFIG_NAME);
        if candidate.is_file() {
            return Some(candidate);
        }
        if !dir.pop() {
            return None;
        }
    }
    None
}

/// A list of keys as a rule writes them: a comma-separated string or a list of strings.
fn names(n: &Node) -> Result<Vec<String>, Error> {
    match n {
        Node::Str(s, _) => {
            Ok(s.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect())
        }
        Node::Seq(items, _) => items
            .iter()
            .map(|i| {
                i.str()
                    .map(|s| s.trim().to_owned())
                    .ok_or_else(|| refuse(".sops.yaml: a key that is not a string"))
            })
            .collect(),
        Node::Map(..) => Err(refuse(".sops.yaml: a key list that is a mapping")),
    }
}

/// The key sources of a rule or of one of its `key_groups` other than age, by the names a file
/// gives them.
fn others(g: &Node, grouped: bool) -> Result<Vec<String>, Error> {
    let mut out = Vec::new();
    if let Some(p) = g.get("pgp") {
        out.extend(names(p)?.iter().map(|f| source_name("pgp", f)));
    }
    // In a rule's own fields these are comma-separated strings; in a key group, objects.
    let objects: [(&str, &str, &str); 4] = [
        ("kms", "kms", "arn"),
        ("gcp_kms", "gcp_kms", "resource_id"),
        ("hckms", "hckms", "key_id"),
        ("azure_keyvault", "azure_kv", "vaultUrl"),
    ];
    for (rule_key, kind, field) in objects {
        let Some(v) = g.get(rule_key) else { continue };
        match (grouped, v) {
            (true, Node::Seq(items, _)) => {
                for i in items {
                    let id = i
                        .get(field)
                        .and_then(Node::str)
                        .ok_or_else(|| refuse(format!(".sops.yaml: a {kind} key without `{field}`")))?;
                    out.push(source_name(kind, id));
                }
            }
            _ => out.extend(names(v)?.iter().map(|id| source_name(kind, id))),
        }
    }
    for key in ["hc_vault_transit_uri", "hc_vault"] {
        if let Some(v) = g.get(key) {
            out.extend(names(v)?.iter().map(|id| source_name("hc_vault", id)));
        }
    }
    Ok(out)
}

impl Rules {
    /// Reads the `.sops.yaml` at `path`.
    pub fn load(path: &Path) -> Result<Rules, Error> {
        let text = std::fs::read(path)?;
        if text.len() > MAX_CONFIG {
            return Err(hyperseal::limits::too_long(".sops.yaml", MAX_CONFIG));
        }
        let text = String::from_utf8(text).map_err(|_| refuse(".sops.yaml is not UTF-8"))?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Ok(Rules { rules: Self::parse(&text)?, dir })
    }

    fn parse(text: &str) -> Result<Vec<Rule>, Error> {
        let root = document(text).map_err(|e| refuse(format!(".sops.yaml: {e}")))?;
        let list = root
            .get("creation_rules")
            .and_then(Node::seq)
            .ok_or_else(|| refuse(".sops.yaml has no creation_rules"))?;
        if list.len() > MAX_RULES {
            return Err(hyperseal::limits::too_many("creation rules", MAX_RULES));
        }
        list.iter()
            .map(|r| {
                let path_regex = match r.get("path_regex").and_then(Node::str) {
                    None | Some("") => None,
                    Some(p) => Some(
                        Regex::new(p).map_err(|e| refuse(format!(".sops.yaml: path_regex {p:?}: {e}")))?,
                    ),
                };
                let groups = match r.get("key_groups").and_then(Node::seq) {
                    Some(groups) if !groups.is_empty() => groups
                        .iter()
                        .map(|g| {
                            Ok(TargetGroup {
                                age: g.get("age").map(names).transpose()?.unwrap_or_default(),
                                others: Some(others(g, true)?),
                            })
                        })
                        .collect::<Result<Vec<_>, Error>>()?,
                    _ => vec![TargetGroup {
                        age: r.get("age").map(names).transpose()?.unwrap_or_default(),
                        others: Some(others(r, false)?),
                    }],
                };
                Ok(Rule { path_regex, groups })
            })
            .collect()
    }

    /// The first rule for `file`, matched on its path relative to [`dir`](Self::dir) (as sops
    /// does: an absolute path outside that folder is matched whole).
    pub fn for_file(&self, file: &Path) -> Option<&Rule> {
        let abs = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
        let dir = std::fs::canonicalize(&self.dir).unwrap_or_else(|_| self.dir.clone());
        let rel = abs.strip_prefix(&dir).unwrap_or(&abs);
        let rel = rel.to_string_lossy();
        self.rules.iter().find(|r| r.path_regex.as_ref().is_none_or(|re| re.is_match(&rel)))
    }

    /// Whether some rule has a `path_regex` that matches `rel` (a path relative to
    /// [`dir`](Self::dir)), or a rule matches every file.
    pub fn selects(&self, rel: &str) -> bool {
        self.rules.iter().any(|r| r.path_regex.as_ref().is_none_or(|re| re.is_match(rel)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_matching_rule_wins_and_lists_parse_both_ways() {
        let rules = Rules::parse(
            "creation_rules:\n  - path_regex: ^prod/.*\\.yaml$\n    age: >-\n      age1a,\n      age1b\n  - key_groups:\n      - age: [age1c]\n        pgp: [FP1]\n      - age:\n          - age1d\n",
        )
        .unwrap();
        let r = Rules { rules, dir: PathBuf::from("/nonexistent") };
        let prod = r.for_file(Path::new("/nonexistent/prod/x.yaml")).unwrap();
        assert_eq!(prod.groups.len(), 1);
        assert_eq!(prod.groups[0].age, ["age1a", "age1b"]);
        let other = r.for_file(Path::new("/nonexistent/dev/x.yaml")).unwrap();
        assert_eq!(other.groups.len(), 2);
        assert_eq!(other.groups[0].others.as_deref(), Some(&["pgp:FP1".to_owned()][..]));
        assert_eq!(other.groups[1].age, ["age1d"]);
    }
}
