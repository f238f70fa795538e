//! A real MinIO on 127.0.0.1 for the S3 tests, and `mc` for what needs MinIO's admin API (a
//! bucket, a user with a policy). Both come from `make tools` (.tools/bin); where either is
//! missing a test says so and passes, unless HYPERSEAL_REQUIRE_PEERS=1 (as in `make test`).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hyperseal_backup::{S3Config, S3Store};
use zeroize::Zeroizing;

pub const BUCKET: &str = "backups";
const ROOT_USER: &str = "hyperseal-root";
const ROOT_PASSWORD: &str = "hyperseal-root-secret";

fn tool(name: &str) -> Option<PathBuf> {
    installed(&format!("bin/{name}"), "minio mc")
}

/// `.tools/REL`, or `None` with a note where `make TARGET` has not installed it; under
/// HYPERSEAL_REQUIRE_PEERS=1 a missing one fails the test instead of skipping it. (Here and
/// not in `common`: the CLI's suite builds this file alone, as a module of its own.)
pub fn installed(rel: &str, target: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.tools").join(rel);
    if p.exists() {
        return Some(p);
    }
    if std::env::var("HYPERSEAL_REQUIRE_PEERS").is_ok_and(|v| v == "1") {
        panic!("{} is missing and HYPERSEAL_REQUIRE_PEERS=1 (make {target})", p.display());
    }
    eprintln!("note: {} is not installed; this test is skipped (make {target})", p.display());
    None
}

/// A MinIO server with one bucket, stopped (by its own process id) when dropped.
pub struct Minio {
    child: Child,
    pub dir: tempfile::TempDir,
    pub endpoint: String,
    mc: PathBuf,
}

impl Minio {
    /// Starts one, or `None` (with a note) where MinIO or mc is not installed.
    pub fn start() -> Option<Minio> {
        let (minio, mc) = (tool("minio")?, tool("mc")?);
        let dir = tempfile::tempdir().unwrap();
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let log = std::fs::File::create(dir.path().join("minio.log")).unwrap();
        let child = Command::new(minio)
            .args(["server", "--quiet", "--address", &format!("127.0.0.1:{port}")])
            .arg(dir.path().join("data"))
            .env("MINIO_ROOT_USER", ROOT_USER)
            .env("MINIO_ROOT_PASSWORD", ROOT_PASSWORD)
            .env("MINIO_BROWSER", "off")
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let m = Minio { child, dir, endpoint: format!("http://127.0.0.1:{port}"), mc };
        m.wait_ready(port);
        m.mc(&["alias", "set", "local", &m.endpoint, ROOT_USER, ROOT_PASSWORD]);
        m.mc(&["mb", &format!("local/{BUCKET}")]);
        Some(m)
    }

    /// Waits for the health endpoint: a bound on the wait, not on how fast it comes.
    fn wait_ready(&self, port: u16) {
        let until = Instant::now() + Duration::from_secs(120);
        while Instant::now() < until {
            if health(port) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let log = std::fs::read_to_string(self.dir.path().join("minio.log")).unwrap_or_default();
        panic!("MinIO did not start in 120 s:\n{log}");
    }

    /// Runs mc against this server with its own config folder; panics with its output on failure.
    /// MinIO answers its readiness check before its admin side has loaded its users: until then
    /// mc is told "Server not initialized yet" (seen on a loaded machine, at `alias set`), so
    /// that answer is asked again, a bounded number of times; any other failure fails at once.
    pub fn mc(&self, args: &[&str]) -> String {
        for _ in 0..600 {
            let (ok, text) = self.mc_output(args);
            if ok {
                return text;
            }
            assert!(text.contains("Server not initialized yet"), "mc {args:?}: {text}");
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("mc {args:?}: MinIO was still not initialized after 600 tries");
    }

    /// Runs mc as [`Minio::mc`] does; whether it succeeded, and what it printed.
    fn mc_output(&self, args: &[&str]) -> (bool, String) {
        let out = Command::new(&self.mc)
            .arg("--config-dir")
            .arg(self.dir.path().join("mc"))
            .args(["--quiet", "--no-color"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
        (out.status.success(), text)
    }

    /// A user whose only rights are the policy `json`.
    pub fn user(&self, name: &str, secret: &str, json: &str) {
        let file = self.dir.path().join(format!("{name}-policy.json"));
        std::fs::write(&file, json).unwrap();
        self.mc(&["admin", "user", "add", "local", name, secret]);
        self.mc(&["admin", "policy", "create", "local", name, file.to_str().unwrap()]);
        self.mc(&["admin", "policy", "attach", "local", name, "--user", name]);
    }

    /// A store under `prefix` with the root credentials.
    pub fn store(&self, prefix: &str) -> S3Store {
        let (user, secret) = root_user();
        self.store_as(prefix, user, secret)
    }

    /// A store under `prefix` with a user's credentials.
    pub fn store_as(&self, prefix: &str, user: &str, secret: &str) -> S3Store {
        S3Store::new(&self.config(prefix, user, secret)).unwrap()
    }

    pub fn config(&self, prefix: &str, user: &str, secret: &str) -> S3Config {
        S3Config {
            bucket: BUCKET.into(),
            prefix: prefix.into(),
            endpoint: Some(self.endpoint.clone()),
            region: "us-east-1".into(),
            access_key_id: user.into(),
            secret_access_key: Zeroizing::new(secret.into()),
            session_token: None,
            timeout: Duration::from_secs(60),
        }
    }

    pub fn data(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Minio {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// MinIO's root user and password (every right).
pub fn root_user() -> (&'static str, &'static str) {
    (ROOT_USER, ROOT_PASSWORD)
}

fn health(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let req =
        format!("GET /minio/health/ready HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    s.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.1 200")
}

/// The write-only policy of docs/BACKUP.md for `prefix` of the test bucket: add objects, read
/// the id lists, list the prefix; nothing else.
pub fn write_only_policy(prefix: &str) -> String {
    format!(
        r#"{{
  "Version": "2012-10-17",
  "Statement": [
    {{"Effect": "Allow", "Action": ["s3:PutObject"], "Resource": ["arn:aws:s3:::{b}/{p}/*"]}},
    {{"Effect": "Allow", "Action": ["s3:GetObject"],
      "Resource": ["arn:aws:s3:::{b}/{p}/data/*.ids", "arn:aws:s3:::{b}/{p}/index/*.ids"]}},
    {{"Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": ["arn:aws:s3:::{b}"],
      "Condition": {{"StringLike": {{"s3:prefix": ["{p}/*"]}}}}}}
  ]
}}"#,
        b = BUCKET,
        p = prefix
    )
}
