//! An S3 prefix (`s3://BUCKET/PREFIX`, MinIO included) as a [`Store`], over object_store.
//!
//! object_store is async and this crate is not: the store owns a current-thread tokio runtime
//! and blocks on it for each call. Not a multi-thread runtime, because the library starts no
//! threads of its own beyond what the runtime needs (its blocking pool, capped at two, which
//! name lookups use): the callers (the backup pipeline, the restore workers) already run on
//! threads of their own, and each drives the runtime while it waits on its request (several
//! threads may `block_on` at once; one of them runs the I/O driver at a time).
//!
//! `rekey` rewrites a header with server-side part copies of the payload (`rekey.rs`).
//!
//! Writers only add: `put_new` is a `PutObject` with `If-None-Match: *`, so a name is never
//! replaced, and a write-only credential needs nothing else. Reads of packs are ranged with a
//! bounded window, so a one-file restore fetches the STREAM chunks it needs and not whole packs.
//!
//! The configuration comes in as arguments ([`S3Config`]); nothing here reads the environment.

use std::fmt;
use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use hyperseal::recipient::Identity;
use hyperseal::rekey::{Change, Report};
use object_store::aws::{AmazonS3, AmazonS3Builder, S3ConditionalPut};
use object_store::path::Path as Key;
use object_store::{
    ClientOptions, GetOptions, GetRange, ObjectMeta, ObjectStore, ObjectStoreExt, PutMode, PutOptions,
    PutPayload, RetryConfig,
};
use zeroize::Zeroizing;

use crate::error::Result;
use crate::store::{check_name, ObjectInfo, Ranged, ReadSeek, Store};

mod rekey;

/// The smallest ranged read: one 64 KiB STREAM chunk with its tag.
const READ_MIN: u64 = 64 * 1024 + 16;
/// The largest ranged read, and so the reader's buffer. A miss fetches what the read asked for
/// (the decrypting reader asks for its batch of STREAM chunks, about 1 MiB, at once) and no
/// more, so nothing is fetched ahead that the reader did not want: a doubling read-ahead cost a
/// one-file restore twice the file when the last window ran past it.
const READ_MAX: u64 = 4 << 20;
/// Most objects one listing returns: a store that lists more is refused, not buffered.
const MAX_LIST: usize = 1 << 22;
/// How long a connection may take to open.
const CONNECT: Duration = Duration::from_secs(20);

/// Where the repository is and how to reach it. `Debug` shows no secret.
pub struct S3Config {
    /// The bucket.
    pub bucket: String,
    /// The prefix inside it, without a trailing `/` (empty: the bucket's root).
    pub prefix: String,
    /// The endpoint (`http://127.0.0.1:9000` for MinIO); `None`: AWS's for the region.
    pub endpoint: Option<String>,
    /// The region (`us-east-1` where the store does not care).
    pub region: String,
    /// The access key id.
    pub access_key_id: String,
    /// The secret access key.
    pub secret_access_key: Zeroizing<String>,
    /// A session token, for temporary credentials.
    pub session_token: Option<Zeroizing<String>>,
    /// The deadline of one request; a call (its retries included) gets three.
    pub timeout: Duration,
}

impl S3Config {
    /// Splits `s3://BUCKET/PREFIX` into its bucket and prefix; `None` if it is not one.
    pub fn parse_url(url: &str) -> Option<(String, String)> {
        let rest = url.strip_prefix("s3://")?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let prefix = prefix.trim_matches('/');
        (!bucket.is_empty()).then(|| (bucket.to_string(), prefix.to_string()))
    }
}

impl fmt::Debug for S3Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Config")
            .field("bucket", &self.bucket)
            .field("prefix", &self.prefix)
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<redacted>")
            .field("session_token", &self.session_token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// What the store and its open readers share.
struct Inner {
    rt: tokio::runtime::Runtime,
    s3: AmazonS3,
    /// For the one request object_store does not make (the re-key's part copy).
    http: reqwest::Client,
    bucket: String,
    prefix: String,
    deadline: Duration,
    /// Body bytes received from the store (object reads, ranged or whole).
    downloaded: AtomicU64,
}

impl Inner {
    /// Runs one call to the end or to its deadline.
    fn run<T>(&self, fut: impl Future<Output = io::Result<T>>) -> io::Result<T> {
        self.rt.block_on(async {
            tokio::time::timeout(self.deadline, fut).await.unwrap_or_else(|_| {
                Err(io::Error::new(io::ErrorKind::TimedOut, "S3: no answer before the deadline"))
            })
        })
    }

    fn key(&self, name: &str) -> io::Result<Key> {
        check_name(name)?;
        Ok(Key::from(match self.prefix.is_empty() {
            true => name.to_string(),
            false => format!("{}/{name}", self.prefix),
        }))
    }

    /// `range` of an object, exactly that many bytes (a store sending more is an error).
    fn range(&self, key: &Key, range: std::ops::Range<u64>, etag: Option<&str>) -> io::Result<Vec<u8>> {
        let want = range.end - range.start;
        let opts = GetOptions {
            range: Some(GetRange::Bounded(range)),
            if_match: etag.map(str::to_string),
            ..GetOptions::default()
        };
        let got =
            self.run(async { collect(self.s3.get_opts(key, opts).await.map_err(io_err)?, want).await })?;
        if got.len() as u64 != want {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("S3: {key}: short ranged read"),
            ));
        }
        self.downloaded.fetch_add(want, Ordering::Relaxed);
        Ok(got)
    }
}

/// An object's body, refused past `limit` bytes before and while it arrives.
async fn collect(r: object_store::GetResult, limit: u64) -> io::Result<Vec<u8>> {
    let announced = r.range.end - r.range.start;
    if announced > limit {
        return Err(too_large(&r.meta.location, limit));
    }
    let location = r.meta.location.clone();
    let mut out = Vec::with_capacity(announced as usize);
    let mut body = r.into_stream();
    while let Some(part) = body.next().await {
        let part = part.map_err(io_err)?;
        if (out.len() + part.len()) as u64 > limit {
            return Err(too_large(&location, limit));
        }
        out.extend_from_slice(&part);
    }
    Ok(out)
}

fn too_large(key: &Key, limit: u64) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("S3: {key} is over {limit} bytes"))
}

/// object_store's errors as the kinds the repository acts on (absent, taken, refused), said
/// in a few words where the kind says it all (the long form carries the request's URL).
fn io_err(e: object_store::Error) -> io::Error {
    use object_store::Error as E;
    let (kind, msg) = match &e {
        E::NotFound { path, .. } => (io::ErrorKind::NotFound, format!("S3: {path}: not found")),
        E::AlreadyExists { path, .. } | E::Precondition { path, .. } => {
            (io::ErrorKind::AlreadyExists, format!("S3: {path}: exists, or changed meanwhile"))
        }
        E::PermissionDenied { path, .. } | E::Unauthenticated { path, .. } => {
            (io::ErrorKind::PermissionDenied, format!("S3: {path}: access denied"))
        }
        _ => (io::ErrorKind::Other, format!("S3: {e}")),
    };
    io::Error::new(kind, msg)
}

/// A repository under an S3 prefix.
pub struct S3Store {
    inner: Arc<Inner>,
}

impl S3Store {
    /// A store for `cfg`; connects lazily (the first call reaches the endpoint).
    pub fn new(cfg: &S3Config) -> io::Result<S3Store> {
        let plain_http = cfg.endpoint.as_deref().is_some_and(|e| e.starts_with("http://"));
        let client = ClientOptions::new()
            .with_timeout(cfg.timeout)
            .with_connect_timeout(CONNECT)
            .with_allow_http(plain_http);
        let retry = RetryConfig { max_retries: 3, retry_timeout: cfg.timeout, ..RetryConfig::default() };
        let mut b = AmazonS3Builder::new()
            .with_bucket_name(&cfg.bucket)
            .with_region(&cfg.region)
            .with_access_key_id(&cfg.access_key_id)
            .with_secret_access_key(cfg.secret_access_key.as_str())
            .with_client_options(client)
            .with_retry(retry)
            .with_conditional_put(S3ConditionalPut::ETagMatch);
        if let Some(t) = &cfg.session_token {
            b = b.with_token(t.as_str());
        }
        if let Some(e) = &cfg.endpoint {
            // MinIO and most other stores serve buckets as paths, not host names.
            b = b.with_endpoint(e).with_virtual_hosted_style_request(false);
        }
        let s3 = b.build().map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("S3: {e}")))?;
        Key::parse(&cfg.prefix).map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("bad S3 prefix {:?}", cfg.prefix))
        })?;
        let rt =
            tokio::runtime::Builder::new_current_thread().enable_all().max_blocking_threads(2).build()?;
        let deadline = cfg.timeout * 3;
        let http = reqwest::Client::builder()
            .timeout(cfg.timeout)
            .connect_timeout(CONNECT)
            .build()
            .map_err(|e| io::Error::other(format!("S3: {e}")))?;
        let (bucket, prefix) = (cfg.bucket.clone(), cfg.prefix.clone());
        let inner = Inner { rt, s3, http, bucket, prefix, deadline, downloaded: AtomicU64::new(0) };
        Ok(S3Store { inner: Arc::new(inner) })
    }

    /// Object body bytes this store (and its readers) received so far.
    pub fn downloaded(&self) -> u64 {
        self.inner.downloaded.load(Ordering::Relaxed)
    }

    /// A listing entry's name under the prefix, or `None` for a key this crate did not write.
    fn name_of(&self, m: &ObjectMeta) -> Option<String> {
        let full = m.location.as_ref();
        let name = match self.inner.prefix.is_empty() {
            true => full,
            false => full.strip_prefix(self.inner.prefix.as_str())?.strip_prefix('/')?,
        };
        check_name(name).ok().map(|_| name.to_string())
    }
}

impl Store for S3Store {
    fn put_new(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let key = self.inner.key(name)?;
        let opts = PutOptions { mode: PutMode::Create, ..PutOptions::default() };
        let payload = PutPayload::from(bytes.to_vec());
        self.inner
            .run(async { self.inner.s3.put_opts(&key, payload, opts).await.map(|_| ()).map_err(io_err) })
    }

    fn get(&self, name: &str, limit: u64) -> io::Result<Vec<u8>> {
        let key = self.inner.key(name)?;
        let got =
            self.inner.run(async { collect(self.inner.s3.get(&key).await.map_err(io_err)?, limit).await })?;
        self.inner.downloaded.fetch_add(got.len() as u64, Ordering::Relaxed);
        Ok(got)
    }

    fn open(&self, name: &str) -> io::Result<Box<dyn ReadSeek>> {
        let key = self.inner.key(name)?;
        let meta = self.inner.run(async { self.inner.s3.head(&key).await.map_err(io_err) })?;
        let (inner, etag) = (self.inner.clone(), meta.e_tag);
        // Every range is read from the version `head` saw.
        let fetch = move |at: u64, len: u64| inner.range(&key, at..at + len, etag.as_deref());
        Ok(Box::new(Ranged::new(name, meta.size, (READ_MIN, READ_MAX), fetch)))
    }

    fn list(&self, folder: &str) -> io::Result<Vec<ObjectInfo>> {
        let dir = self.inner.key(folder.trim_end_matches('/'))?;
        let metas = self.inner.run(async {
            let mut out = Vec::new();
            let mut stream = self.inner.s3.list(Some(&dir));
            while let Some(m) = stream.next().await {
                out.push(m.map_err(io_err)?);
                if out.len() > MAX_LIST {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("S3: over {MAX_LIST} objects in {dir}"),
                    ));
                }
            }
            Ok(out)
        })?;
        let mut out = Vec::with_capacity(metas.len());
        for m in &metas {
            if let Some(name) = self.name_of(m) {
                let modified = Some(std::time::SystemTime::from(m.last_modified));
                out.push(ObjectInfo { name, size: m.size, modified });
            }
        }
        Ok(out)
    }

    fn delete(&self, name: &str) -> io::Result<()> {
        let key = self.inner.key(name)?;
        match self.inner.run(async { self.inner.s3.delete(&key).await.map_err(io_err) }) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            r => r,
        }
    }

    fn rekey(
        &self,
        name: &str,
        identities: &[Box<dyn Identity>],
        change: &Change,
        dry_run: bool,
    ) -> Result<Report> {
        self.rekey_object(name, identities, change, dry_run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_bucket_and_prefix() {
        let got = |u: &str| S3Config::parse_url(u);
        assert_eq!(got("s3://b/p/q/"), Some(("b".into(), "p/q".into())));
        assert_eq!(got("s3://b"), Some(("b".into(), String::new())));
        assert_eq!(got("s3:///p"), None);
        assert_eq!(got("/local/folder"), None);
    }

    #[test]
    fn debug_shows_no_secret() {
        let cfg = S3Config {
            bucket: "b".into(),
            prefix: "p".into(),
            endpoint: None,
            region: "us-east-1".into(),
            access_key_id: "AKIDEXAMPLE".into(),
            secret_access_key: Zeroizing::new("wJalrXUtnFEMI-secret".into()),
            session_token: Some(Zeroizing::new("token-secret".into())),
            timeout: Duration::from_secs(1),
        };
        let text = format!("{cfg:?}");
        assert!(text.contains("AKIDEXAMPLE") && text.contains("<redacted>"), "{text}");
        assert!(!text.contains("wJalr") && !text.contains("token-secret"), "{text}");
    }
}
