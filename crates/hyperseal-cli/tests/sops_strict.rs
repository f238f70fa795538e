//! sops files read exactly as the real sops 3.13.3 reads them (`make sops`), or not at all: a
//! name written twice, where sops would read another member than hyperseal or refuses the file,
//! is refused by `rekey --sops` and `--rotate` alike and the file kept; a file whose `sops`
//! member is a plain value is no sops file, and a folder walk skips it; and a file of hostile
//! encrypted-comment starts is rotated (here: refused) in bounded memory.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{p, peers};

struct Setup {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    tools: PathBuf,
    /// Two X25519 keys: (key file, recipient).
    one: (PathBuf, String),
    two: (PathBuf, String),
    /// Both keys in one file.
    both: PathBuf,
}

fn setup() -> Option<Setup> {
    let sops_bin = peers(&["sops", "age-keygen"])?;
    let tools = sops_bin.parent().unwrap().to_path_buf();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let keygen = |name: &str| {
        let path = dir.join(format!("{name}.txt"));
        let c = Command::new(tools.join("age-keygen")).arg("-o").arg(&path).output().unwrap();
        assert!(c.status.success());
        let out = Command::new(tools.join("age-keygen")).arg("-y").arg(&path).output().unwrap();
        (path, String::from_utf8(out.stdout).unwrap().trim().to_owned())
    };
    let (one, two) = (keygen("one"), keygen("two"));
    let both = dir.join("both.txt");
    fs::write(&both, fs::read_to_string(&one.0).unwrap() + &fs::read_to_string(&two.0).unwrap()).unwrap();
    Some(Setup { _tmp: tmp, dir, tools, one, two, both })
}

impl Setup {
    fn sops(&self, key: &Path, args: &[&str]) -> Output {
        Command::new(self.tools.join("sops"))
            .args(args)
            .current_dir(&self.dir)
            .env_remove("SOPS_AGE_KEY")
            .env("XDG_CONFIG_HOME", self.dir.join("no-config"))
            .env("SOPS_AGE_KEY_FILE", key)
            .output()
            .unwrap()
    }

    /// `plain` in `name`, sealed by sops for both recipients.
    fn sealed(&self, name: &str, plain: &str) -> PathBuf {
        let path = self.dir.join(name);
        fs::write(&path, plain).unwrap();
        let to = format!("{},{}", self.one.1, self.two.1);
        let o = self.sops(&self.both, &["encrypt", "-i", "--age", &to, name]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        path
    }

    fn hyperseal(&self, key: &Path, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_hyperseal"))
            .args(["rekey", "--sops"])
            .args(args)
            .env("SOPS_AGE_KEY_FILE", key)
            .env_remove("SOPS_AGE_KEY")
            .env("XDG_CONFIG_HOME", self.dir.join("no-config"))
            .output()
            .unwrap()
    }
}

/// The `age` entry of `recipient` in a sops JSON file, as the text of one JSON object.
fn json_entry(text: &str, recipient: &str) -> String {
    let at = text.find(&format!("\"recipient\": \"{recipient}\"")).unwrap();
    let start = text[..at].rfind('{').unwrap();
    let end = at + text[at..].find('}').unwrap() + 1;
    text[start..end].to_owned()
}

/// A JSON file with two `age` lists in `sops`: sops (Go's encoding/json) reads the last. A
/// re-key that read the first would report a removal sops does not see, and a rotation would
/// write a file sops cannot open: both are refused, and the file kept.
#[test]
fn a_second_age_list_is_refused_where_sops_reads_the_last() {
    let Some(s) = setup() else { return };
    let file = s.sealed("dup.json", "{\"a\": \"hello\"}\n");
    let text = fs::read_to_string(&file).unwrap();
    let (first, second) = (json_entry(&text, &s.one.1), json_entry(&text, &s.two.1));
    let list_at = text.find("\"age\": [").unwrap();
    let list_end = list_at + text[list_at..].find(']').unwrap() + 1;
    let dup =
        format!("{}\"age\": [{first}],\n\t\t\"age\": [{second}]{}", &text[..list_at], &text[list_end..]);
    fs::write(&file, &dup).unwrap();
    // The judge: sops reads the second list only.
    assert!(!s.sops(&s.one.0, &["decrypt", p(&file)]).status.success());
    assert!(s.sops(&s.two.0, &["decrypt", p(&file)]).status.success());

    for args in [vec!["--remove", &s.two.1], vec!["--rotate", "-r", &s.one.1]] {
        let mut args = args.clone();
        args.push(p(&file));
        let o = s.hyperseal(&s.both, &args);
        let said = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {said}");
        assert!(said.contains("the JSON member name \"age\" appears twice in one object"), "{said}");
        assert_eq!(fs::read_to_string(&file).unwrap(), dup, "{args:?}: the file was changed");
    }
}

/// YAML and dotenv names written twice: sops refuses the file, and so does hyperseal.
#[test]
fn yaml_and_dotenv_names_written_twice_are_refused_as_sops_refuses_them() {
    let Some(s) = setup() else { return };
    let yaml = s.sealed("dup.yaml", "a: hello\nb:\n  c: 1\n");
    let env = s.sealed("dup.env", "A=hello\nB=x\n");
    let text = fs::read_to_string(&yaml).unwrap();
    let line = text.lines().find(|l| l.starts_with("    lastmodified:")).unwrap().to_owned();
    let dup_yaml = text.replacen(&line, &format!("{line}\n{line}"), 1);
    let text = fs::read_to_string(&env).unwrap();
    let line = text.lines().find(|l| l.starts_with("sops_lastmodified=")).unwrap().to_owned();
    let dup_env = text.replacen(&line, &format!("{line}\n{line}"), 1);
    for (file, dup, says) in [
        (&yaml, dup_yaml, "the YAML key \"lastmodified\" appears twice in one mapping"),
        (&env, dup_env, "the dotenv `sops_` key \"lastmodified\" appears twice"),
    ] {
        fs::write(file, &dup).unwrap();
        assert!(!s.sops(&s.both, &["decrypt", p(file)]).status.success(), "sops opened {file:?}");
        for rotate in [false, true] {
            let args = match rotate {
                false => vec!["--remove", &s.two.1, p(file)],
                true => vec!["--rotate", "-r", &s.one.1, p(file)],
            };
            let o = s.hyperseal(&s.both, &args);
            let said = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{said}");
            assert!(said.contains(says), "{said}");
            assert_eq!(fs::read_to_string(file).unwrap(), dup);
        }
    }
}

/// A file in the rules' reach whose `sops` member is a note is not a sops file: a recursive
/// run skips and counts it, and succeeds; a damaged `sops` mapping still fails.
#[test]
fn a_file_whose_sops_member_is_a_note_is_skipped() {
    let Some(s) = setup() else { return };
    let repo = s.dir.join("repo");
    fs::create_dir(&repo).unwrap();
    fs::write(repo.join(".sops.yaml"), format!("creation_rules:\n  - age: {}\n", s.one.1)).unwrap();
    fs::write(repo.join("note.json"), "{\"plain\": true, \"sops\": \"a note\"}\n").unwrap();
    fs::write(repo.join("note.yaml"), "plain: true\nsops: a note\n").unwrap();
    let secret = s.sealed("repo/secret.yaml", "a: hello\n");
    let o = s.hyperseal(&s.both, &["--recursive", p(&repo)]);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{said}");
    assert!(
        said.contains("note.json: not a sops file") && said.contains("note.yaml: not a sops file"),
        "{said}"
    );
    assert!(said.contains("sops files: 1 changed, 0 unchanged, 2 skipped, 0 failed"), "{said}");
    assert!(!fs::read_to_string(&secret).unwrap().contains(&s.two.1));

    fs::write(repo.join("damaged.json"), "{\"sops\": {\"age\": \"not a list\"}}\n").unwrap();
    let o = s.hyperseal(&s.both, &["--recursive", p(&repo)]);
    let said = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{said}");
    assert!(said.contains("damaged.json: malformed sops metadata"), "{said}");
}

/// The address space `--rotate` of a 240 KB file may use (`prlimit --as`): the binary, its
/// threads' stacks and a few copies of the file fit many times over. Scanning each comment's
/// sealed-value start to the next `]` of the file took 1.7 GB on the file below.
const ROTATE_MEMORY: u64 = 512 << 20;

/// One comment line of 15,000 sealed-value starts (sops opens the file: to it the line is a
/// comment like any other) is read in linear work: the rotation ends with a refusal of the
/// line it cannot place, well inside a memory cap.
#[test]
fn a_comment_line_of_sealed_value_starts_is_rotated_in_bounded_memory() {
    let Some(s) = setup() else { return };
    let has = |tool: &str| Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success());
    assert!(has("prlimit"), "util-linux prlimit is needed");
    let file = s.sealed("comments.yaml", "# top\na: hello\nb: world\n");
    let text = fs::read_to_string(&file).unwrap();
    let hostile = text.replacen("a: ", &format!("{}\na: ", "#ENC[AES256_GCM,".repeat(15_000)), 1);
    fs::write(&file, &hostile).unwrap();
    assert!(s.sops(&s.both, &["decrypt", p(&file)]).status.success(), "sops opens it");
    let o = Command::new("prlimit")
        .arg(format!("--as={ROTATE_MEMORY}"))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_hyperseal"))
        .args(["rekey", "--sops", "--rotate", "-r", &s.one.1, "--threads", "1", p(&file)])
        .env("SOPS_AGE_KEY_FILE", &s.both)
        .env_remove("SOPS_AGE_KEY")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{said}");
    assert!(said.contains("that hyperseal cannot place"), "{said}");
    assert_eq!(fs::read_to_string(&file).unwrap(), hostile);
}
