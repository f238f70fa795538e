//! Re-keying an S3 object without moving its payload, as the Python binding's S3 re-key does:
//! one multipart upload over the same key whose first part is the new header plus the
//! payload's first bytes up to S3's smallest part (5 MiB), read by one ranged GET of the head,
//! and whose other parts are `UploadPartCopy`s of byte ranges of the old object, done by the
//! store itself. An object under 5 MiB (plus a little) cannot be split so and is put whole: it
//! was read whole for its header anyway.
//!
//! object_store drives the upload (create, parts, complete, abort) but has no ranged part copy,
//! so that one request goes on a URL object_store signs (the copy headers signed with it) and
//! is sent by the same HTTP client library. Each copy is bound to the ETag the re-key read, so
//! an object that changed meanwhile fails its re-key instead of being stitched from two.

use std::io;
use std::time::Duration;

use hyperseal::recipient::Identity;
use hyperseal::rekey::{Change, Report, Written};
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path as Key;
use object_store::signer::{SignedUrlOptions, Signer};
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};
use reqwest::header::{HeaderName, HeaderValue};

use super::{io_err, S3Store};
use crate::error::Result;

/// S3's smallest part (all but the last).
const MIN_PART: u64 = 5 << 20;
/// What a head read takes beyond that, so a new header somewhat shorter than the old one still
/// fills the first part without a second read.
const SPARE: u64 = 256 << 10;
/// S3's largest part copy.
const MAX_COPY: u64 = 5 << 30;
/// Most bytes of an `UploadPartCopy` answer read (a few hundred in practice).
const MAX_ANSWER: usize = 64 << 10;
/// How long a signed copy URL is valid: one request's life.
const URL_LIFE: Duration = Duration::from_secs(900);

impl S3Store {
    /// The [`crate::Store::rekey`] of an S3 object (module docs).
    pub(super) fn rekey_object(
        &self,
        name: &str,
        identities: &[Box<dyn Identity>],
        change: &Change,
        dry_run: bool,
    ) -> Result<Report> {
        let inner = &self.inner;
        let key = inner.key(name)?;
        let meta = inner.run(async { inner.s3.head(&key).await.map_err(io_err) })?;
        let etag = meta.e_tag.as_deref();
        let mut head = inner.range(&key, 0..meta.size.min(MIN_PART + SPARE), etag)?;
        let (header, old_len, plan) = hyperseal::rekey::rekey_head(&head, identities, change)?;
        if dry_run {
            return Ok(Report { plan, written: Written::Nothing, recovered: None });
        }
        let old_len = old_len as u64;
        // The first part: the new header and payload up to S3's smallest part (or the end).
        let first_end = (old_len + MIN_PART.saturating_sub(header.len() as u64)).min(meta.size);
        if first_end > head.len() as u64 {
            head.extend(inner.range(&key, head.len() as u64..first_end, etag)?);
        }
        let mut first = header;
        first.extend_from_slice(&head[old_len as usize..first_end as usize]);
        drop(head);
        let sent = first.len() as u64;
        if first_end == meta.size {
            self.put_whole(&key, &meta, first)?;
        } else {
            self.upload_with_copies(&key, &meta, first, first_end)?;
        }
        Ok(Report { plan, written: Written::Rewritten { bytes: sent }, recovered: None })
    }

    /// A small object: one conditional PUT, refused if the object changed since it was read.
    fn put_whole(&self, key: &Key, meta: &ObjectMeta, body: Vec<u8>) -> io::Result<()> {
        let version = UpdateVersion { e_tag: meta.e_tag.clone(), version: None };
        let opts = PutOptions { mode: PutMode::Update(version), ..PutOptions::default() };
        let inner = &self.inner;
        inner.run(async {
            inner.s3.put_opts(key, PutPayload::from(body), opts).await.map(|_| ()).map_err(io_err)
        })
    }

    /// The multipart upload: `first` as part 1, then copies of `[from, size)` of the old object.
    fn upload_with_copies(&self, key: &Key, meta: &ObjectMeta, first: Vec<u8>, from: u64) -> io::Result<()> {
        let inner = &self.inner;
        let id = inner.run(async { inner.s3.create_multipart(key).await.map_err(io_err) })?;
        let parts = inner.run(async {
            let mut parts =
                vec![inner.s3.put_part(key, &id, 0, PutPayload::from(first)).await.map_err(io_err)?];
            let mut at = from;
            while at < meta.size {
                let end = (at + MAX_COPY).min(meta.size);
                parts.push(self.copy_part(key, &id, parts.len() + 1, at..end, meta.e_tag.as_deref()).await?);
                at = end;
            }
            Ok(parts)
        });
        let done = parts.and_then(|parts| {
            inner
                .run(async { inner.s3.complete_multipart(key, &id, parts).await.map(|_| ()).map_err(io_err) })
        });
        if done.is_err() {
            // The old object stays whole. A failed abort leaves parts to the bucket's lifecycle
            // rule; the first error is the one worth telling.
            let _ = inner.run(async { inner.s3.abort_multipart(key, &id).await.map_err(io_err) });
        }
        done
    }

    /// One `UploadPartCopy` of `range` of the object onto part `number` (1-based) of upload `id`.
    async fn copy_part(
        &self,
        key: &Key,
        id: &str,
        number: usize,
        range: std::ops::Range<u64>,
        etag: Option<&str>,
    ) -> io::Result<PartId> {
        let inner = &self.inner;
        let mut headers = vec![
            ("x-amz-copy-source", format!("/{}/{}", inner.bucket, encode_key(key.as_ref()))),
            ("x-amz-copy-source-range", format!("bytes={}-{}", range.start, range.end - 1)),
        ];
        if let Some(e) = etag {
            headers.push(("x-amz-copy-source-if-match", e.to_string()));
        }
        let mut opts =
            SignedUrlOptions::new().with_query([("partNumber", number.to_string()), ("uploadId", id.into())]);
        let mut request_headers = reqwest::header::HeaderMap::new();
        for (name, value) in headers {
            let value =
                HeaderValue::from_str(&value).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
            opts = opts.with_signed_header(HeaderName::from_static(name), value.clone());
            request_headers.insert(HeaderName::from_static(name), value);
        }
        let url =
            inner.s3.signed_url_opts(reqwest::Method::PUT, key, URL_LIFE, &opts).await.map_err(io_err)?;
        let mut answer = inner.http.put(url).headers(request_headers).send().await.map_err(http_err)?;
        let status = answer.status();
        let mut body = Vec::new();
        while let Some(bytes) = answer.chunk().await.map_err(http_err)? {
            if body.len() + bytes.len() > MAX_ANSWER {
                return Err(io::Error::other("S3: an UploadPartCopy answer over 64 KiB"));
            }
            body.extend_from_slice(&bytes);
        }
        let text = String::from_utf8_lossy(&body);
        // S3 may answer 200 with an error document: only a CopyPartResult's ETag counts.
        match (status.is_success(), between(&text, "<ETag>", "</ETag>")) {
            (true, Some(etag)) if text.contains("<CopyPartResult") => {
                Ok(PartId { content_id: etag.replace("&quot;", "\"").replace("&#34;", "\"") })
            }
            _ => {
                let code = between(&text, "<Code>", "</Code>").unwrap_or("no error code");
                let kind = match code {
                    "PreconditionFailed" => io::ErrorKind::AlreadyExists,
                    "AccessDenied" => io::ErrorKind::PermissionDenied,
                    _ => io::ErrorKind::Other,
                };
                Err(io::Error::new(kind, format!("S3: UploadPartCopy of {key}: {status} {code}")))
            }
        }
    }
}

fn http_err(e: reqwest::Error) -> io::Error {
    let kind = if e.is_timeout() { io::ErrorKind::TimedOut } else { io::ErrorKind::Other };
    // Without the URL: it carries a signature (valid for a while), which has no place in a message.
    io::Error::new(kind, format!("S3: {}", e.without_url()))
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let len = text[start..].find(close)?;
    Some(&text[start..start + len])
}

/// A key as `x-amz-copy-source` wants it: percent-encoded, `/` kept.
fn encode_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    for b in key.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}
