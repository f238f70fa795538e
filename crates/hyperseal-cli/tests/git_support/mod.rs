//! Scripted repositories for the `hyperseal git` tests: Debian's git on PATH (a missing git
//! fails under `make test`), isolated from the user's and the system's configuration.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The start of every age v1 file.
pub const AGE_INTRO: &[u8] = b"age-encryption.org/v1\n";

/// A repository in a temporary folder.
pub struct Repo {
    pub dir: PathBuf,
}

/// `git` with no global or system configuration, a fixed author, and `.tools/bin` on PATH.
pub fn git_in(dir: &Path, args: &[&str]) -> Output {
    git_in_env(dir, args, &[])
}

/// [`git_in`] with `env` set last (a global configuration file of the test's, an editor).
pub fn git_in_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    isolated("git", dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .envs(env.iter().copied())
        .output()
        .expect("git")
}

/// `program` (git, or a wrapper that runs git) in `dir`, not yet started: no global or system
/// git configuration, `.tools/bin` on PATH, no agent, nothing on standard input. Tests that
/// watch git while it runs spawn it themselves, so the isolation lives here, once.
pub fn isolated(program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
    let mut c = Command::new(program);
    c.current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("PATH", super::common::tools_path())
        .env_remove("HYPERSEAL_AGENT_SOCK")
        .stdin(Stdio::null());
    c
}

/// A temporary folder for a test that needs git, or `None` (the test is skipped) without git.
pub fn git_tmp() -> Option<tempfile::TempDir> {
    have_git().then(|| tempfile::tempdir().unwrap())
}

/// [`git_tmp`] and the peer `name` (age, for opening what git stored), or `None` without either.
pub fn git_tmp_and(name: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    let tmp = git_tmp()?;
    Some((tmp, super::common::peer(name)?))
}

/// `parent/name` marking `*.env`, a new hybrid key's recipient in `.age-recipients` at the top
/// (after a comment line, as people write them), unlocked with that key: the repository and
/// the key file's path.
pub fn unlocked(parent: &Path, name: &str) -> (Repo, String) {
    unlocked_with(parent, name, "hybrid", &["*.env"], &[])
}

/// [`unlocked`] with a key of `kind`, `marks` as `hyperseal git init`'s arguments, and `env`
/// (a global git configuration of the test's) for each hyperseal run.
pub fn unlocked_with(
    parent: &Path,
    name: &str,
    kind: &str,
    marks: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
) -> (Repo, String) {
    let (key, public) = super::common::keypair(parent, &format!("{name}-key"), kind);
    let r = Repo::init(parent, name);
    let init: Vec<&str> = ["git", "init"].iter().chain(marks).copied().collect();
    r.hs_ok_env(&init, env);
    r.write(".age-recipients", format!("# the team\n{public}\n").as_bytes());
    r.hs_ok_env(&["git", "unlock", "-i", &key], env);
    (r, key)
}

/// The filter processes started for `dir` (their working folder is the work tree).
pub fn filters_in(dir: &std::path::Path) -> Vec<i32> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let cwd = std::fs::read_link(e.path().join("cwd")).ok();
        // hyperseal itself, not the shell git may start it through.
        let first = cmd.split(|b| *b == 0).next().unwrap_or_default();
        if first.ends_with(b"hyperseal")
            && cmd.windows(14).any(|w| w == b"filter-process")
            && cwd.as_deref() == Some(dir)
        {
            found.push(pid);
        }
    }
    found
}

/// Whether Debian's git is installed (else skipped, or a failure under `make test`).
pub fn have_git() -> bool {
    super::common::peer_on_path("git").is_some()
}

impl Repo {
    /// `git init` in `parent/name`, with `main` as its branch.
    pub fn init(parent: &Path, name: &str) -> Repo {
        let dir = parent.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let r = Repo { dir };
        r.ok(&["init", "-q", "-b", "main"]);
        r
    }

    /// A repository that already exists at `dir` (a clone).
    pub fn at(dir: PathBuf) -> Repo {
        Repo { dir }
    }

    pub fn git(&self, args: &[&str]) -> Output {
        git_in(&self.dir, args)
    }

    /// [`Repo::git`] with `env` added.
    pub fn git_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        git_in_env(&self.dir, args, env)
    }

    /// Every file under the repository's `.git` folder but its object store that holds `secret`
    /// (rerere's records, the commit message's file, logs, anything git writes beside objects).
    pub fn dot_git_files_holding(&self, secret: &[u8]) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut todo = vec![self.dir.join(".git")];
        while let Some(d) = todo.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let (p, t) = (e.path(), e.file_type().unwrap());
                if t.is_dir() && p.file_name() != Some(std::ffi::OsStr::new("objects")) {
                    todo.push(p);
                } else if t.is_file() && std::fs::read(&p).unwrap().windows(secret.len()).any(|w| w == secret)
                {
                    found.push(p);
                }
            }
        }
        found
    }

    /// Runs git, asserts success, returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        self.ok_env(args, &[])
    }

    /// [`Repo::ok`] with `env` added.
    pub fn ok_env(&self, args: &[&str], env: &[(&str, &str)]) -> String {
        let o = self.git_env(args, env);
        assert!(o.status.success(), "git {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Checks out a new branch `branch` and commits `path` as `data` on it.
    pub fn branch(&self, branch: &str, path: &str, data: &[u8]) {
        self.branch_env(branch, path, data, &[]);
    }

    /// [`Repo::branch`] with `env` added to each git run.
    pub fn branch_env(&self, branch: &str, path: &str, data: &[u8], env: &[(&str, &str)]) {
        self.ok_env(&["checkout", "-q", "-b", branch], env);
        self.write(path, data);
        self.ok_env(&["commit", "-qam", branch], env);
    }

    /// Commits `path` as `theirs` on a new branch `other` and as `ours` on `main`, from the
    /// commit checked out, with `env` added to each git run: a merge of `other` conflicts where
    /// the two differ.
    pub fn diverge(&self, path: &str, ours: &[u8], theirs: &[u8], env: &[(&str, &str)]) {
        self.branch_env("other", path, theirs, env);
        self.ok_env(&["checkout", "-q", "main"], env);
        self.write(path, ours);
        self.ok_env(&["commit", "-qam", "ours"], env);
    }

    /// Runs `hyperseal ARGS` in the work tree.
    pub fn hs(&self, args: &[&str]) -> Output {
        self.hs_env(args, &[])
    }

    /// Runs `hyperseal ARGS` in the work tree with `env` added.
    pub fn hs_env(&self, args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_hyperseal"))
            .args(args)
            .current_dir(&self.dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("HYPERSEAL_AGENT_SOCK")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// `hyperseal ARGS`, asserted to succeed.
    pub fn hs_ok(&self, args: &[&str]) -> String {
        self.hs_ok_env(args, &[])
    }

    /// `hyperseal ARGS` with `env` added, asserted to succeed.
    pub fn hs_ok_env(&self, args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> String {
        let o = self.hs_env(args, env);
        assert!(o.status.success(), "hyperseal {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Stages everything and commits it with `message`.
    pub fn commit_all(&self, message: &str) {
        self.ok(&["add", "-A"]);
        self.ok(&["commit", "-qm", message]);
    }

    pub fn write(&self, path: &str, data: &[u8]) {
        let f = self.dir.join(path);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, data).unwrap();
    }

    pub fn read(&self, path: &str) -> Vec<u8> {
        std::fs::read(self.dir.join(path)).unwrap()
    }

    /// The object id staged for `path`.
    pub fn staged(&self, path: &str) -> String {
        self.ok(&["rev-parse", &format!(":{path}")]).trim().to_string()
    }

    /// The bytes of a blob (`REV:PATH`, `:PATH` or an object id).
    pub fn blob(&self, spec: &str) -> Vec<u8> {
        let o = self.git(&["cat-file", "blob", spec]);
        assert!(o.status.success(), "no blob {spec}: {}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    }

    /// `git status --porcelain`.
    pub fn status(&self) -> String {
        self.ok(&["status", "--porcelain"])
    }

    /// Every blob in the object store (loose and packed, reachable or not), with its bytes.
    pub fn all_blobs(&self) -> Vec<Vec<u8>> {
        let listed = self.ok(&["cat-file", "--batch-all-objects", "--batch-check"]);
        listed
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                (f.get(1) == Some(&"blob")).then(|| self.blob(f[0]))
            })
            .collect()
    }

    /// Asserts that no blob in the store holds `secret`.
    pub fn assert_no_blob_holds(&self, secret: &[u8]) {
        for b in self.all_blobs() {
            assert!(!b.windows(secret.len()).any(|w| w == secret), "a blob holds the plaintext");
        }
    }
}

/// Opens an age file with the real age v1.3.1 and `key` (an identity file).
pub fn age_open(age: &Path, key: &str, file: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut c = Command::new(age)
        .args(["-d", "-i", key])
        .env("PATH", super::common::tools_path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = c.stdin.take().unwrap();
    let data = file.to_vec();
    let feeder = std::thread::spawn(move || input.write_all(&data));
    let out = c.wait_with_output().unwrap();
    let _ = feeder.join();
    assert!(out.status.success(), "age -d failed: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}
