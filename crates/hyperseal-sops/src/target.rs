//! The target a frontend names: the one set of rules the CLI, Node and Python share for
//! turning `recipients`/`add`/`remove` into a [`Target`] (and, in `formats/`, a format's name
//! into a [`Format`](super::Format)), so the three cannot drift apart.

use super::model::refuse;
use hyperseal::Error;

/// The age recipients a file should have afterwards.
pub enum Target {
    /// Each key group's recipients (a `.sops.yaml` rule, or `-r` for a one-group file). Other
    /// key sources are kept; a group whose `others` (as [`source_name`](super::source_name) names them) differ from
    /// the file's is refused: hyperseal makes no PGP or KMS wrap.
    Groups(Vec<TargetGroup>),
    /// Recipients added to a one-group file, and removed from every group that has them.
    Edit {
        /// Added (to the one group).
        add: Vec<String>,
        /// Removed by their recipient string.
        remove: Vec<String>,
    },
}

/// The recipients of one key group.
#[derive(Clone, Debug, Default)]
pub struct TargetGroup {
    /// age recipients.
    pub age: Vec<String>,
    /// The other key sources; `None`: not compared (explicit `-r`).
    pub others: Option<Vec<String>>,
}

impl Target {
    /// The target a frontend's recipient lists give: `recipients`, the one key group's whole
    /// age list, or `add` and `remove`, edits of each group's list; `None` where all three are
    /// empty (each file's `.sops.yaml` creation rule). Both kinds at once are refused. A
    /// frontend that takes an empty `recipients` as a mistake says so before calling this.
    pub fn from_lists(
        recipients: Vec<String>,
        add: Vec<String>,
        remove: Vec<String>,
    ) -> Result<Option<Target>, Error> {
        if !recipients.is_empty() && (!add.is_empty() || !remove.is_empty()) {
            return Err(refuse("give recipients, or add and remove, not both"));
        }
        Ok(if !recipients.is_empty() {
            Some(Target::Groups(vec![TargetGroup { age: recipients, others: None }]))
        } else if !add.is_empty() || !remove.is_empty() {
            Some(Target::Edit { add, remove })
        } else {
            None
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Format;

    #[test]
    fn names_and_lists_give_one_target() {
        assert_eq!(Format::from_name("binary").unwrap(), Format::Json);
        assert_eq!(Format::from_name("dotenv").unwrap(), Format::Dotenv);
        let e = Format::from_name("toml").unwrap_err().to_string();
        assert!(e.contains("format: \"toml\" is not yaml, json, binary, dotenv or ini"), "{e}");
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(Target::from_lists(s(&[]), s(&[]), s(&[])).unwrap().is_none());
        assert!(matches!(
            Target::from_lists(s(&["a"]), s(&[]), s(&[])).unwrap(),
            Some(Target::Groups(g)) if g.len() == 1 && g[0].age == ["a"] && g[0].others.is_none()
        ));
        assert!(matches!(
            Target::from_lists(s(&[]), s(&[]), s(&["b"])).unwrap(),
            Some(Target::Edit { add, remove }) if add.is_empty() && remove == ["b"]
        ));
        let e = Target::from_lists(s(&["a"]), s(&["b"]), s(&[])).err().unwrap().to_string();
        assert!(e.contains("give recipients, or add and remove, not both"), "{e}");
    }
}
