//! The `backup` table's one-file restore from S3: the corpus backed up to a MinIO on
//! 127.0.0.1 (`.tools/bin/minio`, the bucket made with `.tools/bin/mc`), then one file
//! restored with a fresh store whose connections go through a counting TCP relay (the Python
//! tests' `CountingRelay`, bindings/python/tests/s3_local.py, here in Rust): the bytes the
//! reader receives on the wire, HTTP included, not the bytes the library says it read. The
//! figure the goal names is those bytes against the file's size (stored size, for
//! incompressible data); the config, index and snapshot a reader must open first are counted
//! apart. Without MinIO or mc the section is a note.

use std::io::{Read as _, Write as _};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use hyperseal_backup::{BackupOptions, Reader, RestoreOptions, S3Config, S3Store, Source};
use zeroize::Zeroizing;

use super::report::{Cell, Section, TableReport};
use super::stats::fmt_size;
use super::Ctx;

const USER: &str = "bench-root";
const SECRET: &str = "bench-root-secret";

/// A MinIO server, stopped (by its own process id) when dropped.
struct Minio(Child);

impl Drop for Minio {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A TCP relay on 127.0.0.1 in front of `upstream`, counting the bytes it passes back to the
/// client (SigV4 signs the Host header, which passes through unchanged). Its accepting thread
/// lives as long as the benchmark's process.
struct Relay {
    url: String,
    down: Arc<AtomicU64>,
}

impl Relay {
    fn new(upstream: SocketAddr) -> Result<Relay> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let url = format!("http://{}", listener.local_addr()?);
        let down = Arc::new(AtomicU64::new(0));
        let count = down.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(server) = TcpStream::connect(upstream) else { continue };
                let (Ok(c2), Ok(s2)) = (client.try_clone(), server.try_clone()) else { continue };
                pipe(c2, server, None);
                pipe(s2, client, Some(count.clone()));
            }
        });
        Ok(Relay { url, down })
    }

    fn down(&self) -> u64 {
        self.down.load(Ordering::Relaxed)
    }
}

/// Copies `from` to `to` on a thread of its own until either side closes, counting into `n`.
fn pipe(mut from: TcpStream, mut to: TcpStream, n: Option<Arc<AtomicU64>>) {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(k @ 1..) = from.read(&mut buf) {
            if let Some(n) = &n {
                n.fetch_add(k as u64, Ordering::Relaxed);
            }
            if to.write_all(&buf[..k]).is_err() {
                break;
            }
        }
        let _ = from.shutdown(Shutdown::Both);
        let _ = to.shutdown(Shutdown::Both);
    });
}

fn start(ctx: &Ctx, tools: &Path) -> Result<(Minio, String)> {
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let child = Command::new(tools.join("minio"))
        .args(["server", "--quiet", "--address", &format!("127.0.0.1:{port}")])
        .arg(ctx.path("minio-data"))
        .env("MINIO_ROOT_USER", USER)
        .env("MINIO_ROOT_PASSWORD", SECRET)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let server = Minio(child);
    let mc = |args: &[&str]| {
        Command::new(tools.join("mc"))
            .arg("--config-dir")
            .arg(ctx.path("mc"))
            .args(["--quiet", "--no-color"])
            .args(args)
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    // mc's alias set fails until the server answers: a bound on the wait, not on its speed.
    let until = Instant::now() + Duration::from_secs(120);
    while !mc(&["alias", "set", "bench", &endpoint, USER, SECRET]) {
        if Instant::now() > until {
            bail!("MinIO did not answer in 120 s");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    if !mc(&["mb", "bench/backups"]) {
        bail!("mc mb failed");
    }
    Ok((server, endpoint))
}

fn store(endpoint: &str) -> Result<S3Store> {
    let cfg = S3Config {
        bucket: "backups".into(),
        prefix: "bench".into(),
        endpoint: Some(endpoint.into()),
        region: "us-east-1".into(),
        access_key_id: USER.into(),
        secret_access_key: Zeroizing::new(SECRET.into()),
        session_token: None,
        timeout: Duration::from_secs(300),
    };
    Ok(S3Store::new(&cfg)?)
}

/// The largest file of the corpus's media-like (incompressible) files: stored size ≈ size.
fn pick(src: &Path) -> Result<PathBuf> {
    let mut best: Option<(u64, PathBuf)> = None;
    for d in std::fs::read_dir(src.join("docs"))? {
        for f in std::fs::read_dir(d?.path())? {
            let p = f?.path();
            let n = std::fs::metadata(&p)?.len();
            if best.as_ref().is_none_or(|(m, _)| n > *m) {
                best = Some((n, p));
            }
        }
    }
    best.map(|(_, p)| p).context("no media file in the corpus")
}

/// Runs the S3 section; a missing MinIO or mc is a note.
pub fn one_file(ctx: &Ctx, src: &Path, out: &mut TableReport) -> Result<()> {
    let tools = ctx.repo.join(".tools/bin");
    if !tools.join("minio").is_file() || !tools.join("mc").is_file() {
        out.note("MinIO or mc is not installed (make minio mc): the one-file restore from S3 is left out.");
        return Ok(());
    }
    ctx.progress("backup", "hyperseal: the corpus to MinIO, then one file back");
    let (_server, endpoint) = start(ctx, &tools)?;
    let writing = store(&endpoint)?;
    let reader_key = hyperseal::recipient::generate(hyperseal::Kind::Hybrid)?;
    let w = hyperseal_backup::init(&writing, &[reader_key.public.to_string()])?;
    let opts = BackupOptions { host: "bench".into(), time: 1, ..BackupOptions::default() };
    hyperseal_backup::backup(&writing, &w, Source::Paths(vec![src.to_path_buf()]), &opts)?;
    let file = pick(src)?;
    let size = std::fs::metadata(&file)?.len();
    let rel = Path::new("corpus").join(file.strip_prefix(src)?);
    let upstream: SocketAddr = endpoint.trim_start_matches("http://").parse()?;
    let relay = Relay::new(upstream)?;
    let reading = store(&relay.url)?;
    let ids = hyperseal::recipient::parse_identities(reader_key.secret.as_ref())?;
    let r = Reader::open(&reading, &ids)?;
    let snap = r.find("latest")?.snapshot;
    let (opened, opened_bodies) = (relay.down(), reading.downloaded());
    let only = RestoreOptions { include: vec![rel.display().to_string()], ..RestoreOptions::default() };
    hyperseal_backup::restore(&r, &snap, &ctx.path("s3-one-file"), &only)?;
    let restored = std::fs::metadata(ctx.path("s3-one-file").join(&rel)).map(|m| m.len()).ok();
    if restored != Some(size) {
        bail!("the one-file restore wrote {restored:?} bytes, the file has {size}");
    }
    // The relay counts a response's bytes before it forwards them: nothing trails the reader.
    let read = relay.down() - opened;
    let bodies = reading.downloaded() - opened_bodies;
    let mut sec = Section::new(
        "One file restored from S3 (MinIO on 127.0.0.1): bytes read",
        &[
            "file",
            "bytes read (relay)",
            "÷ file size",
            "object bodies (the store's count)",
            "config, index, snapshot (read first, relay)",
        ],
    );
    sec.rows.push(vec![
        Cell::num(size as f64, "B", fmt_size(size)),
        Cell::num(read as f64, "B", fmt_size(read)),
        Cell::num(read as f64 / size as f64, "×", format!("{:.2}×", read as f64 / size as f64)),
        Cell::num(bodies as f64, "B", fmt_size(bodies)),
        Cell::num(opened as f64, "B", fmt_size(opened)),
    ]);
    out.sections.push(sec);
    Ok(())
}
