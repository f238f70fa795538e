//! An S3 repository (`s3://BUCKET/PREFIX`) from the environment the AWS tools use: the library
//! takes its configuration as arguments and reads none, so the CLI reads it here.

use std::time::Duration;

use anyhow::Result;
use hyperseal_backup::{S3Config, S3Store};
use zeroize::Zeroizing;

use crate::errors::{hint, usage};

/// One request's deadline: a pack (16 MiB by default) on a slow uplink fits well within it.
const TIMEOUT: Duration = Duration::from_secs(300);

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The store for `url`, with credentials, region and endpoint from the environment.
pub(super) fn store(url: &str) -> Result<S3Store> {
    let (bucket, prefix) = S3Config::parse_url(url)
        .ok_or_else(|| usage(format!("{url}: not an S3 repository"), "write s3://BUCKET/PREFIX"))?;
    let (Some(access_key_id), Some(secret)) = (var("AWS_ACCESS_KEY_ID"), var("AWS_SECRET_ACCESS_KEY")) else {
        return Err(hint(
            format!("{url}: no S3 credentials"),
            "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_ENDPOINT_URL for MinIO or another store)",
        ));
    };
    let cfg = S3Config {
        bucket,
        prefix,
        endpoint: var("AWS_ENDPOINT_URL_S3").or_else(|| var("AWS_ENDPOINT_URL")),
        region: var("AWS_REGION").or_else(|| var("AWS_DEFAULT_REGION")).unwrap_or_else(|| "us-east-1".into()),
        access_key_id,
        secret_access_key: Zeroizing::new(secret),
        session_token: var("AWS_SESSION_TOKEN").map(Zeroizing::new),
        timeout: TIMEOUT,
    };
    S3Store::new(&cfg).map_err(|e| hint(format!("{url}: {e}"), "check AWS_ENDPOINT_URL and AWS_REGION"))
}
