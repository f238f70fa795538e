"""A real S3 server for the tests: MinIO (built into the tools cache by `make minio`, linked at
`.tools/bin/minio`), started on 127.0.0.1 on a free port with a temporary data directory,
waited for until it answers its health check, stopped at the end of the session. Clients find
it through the standard AWS variables (set for this process and inherited by Dask's worker
processes): s3fs, botocore and the `hyperseal::s3://` chain need no extra arguments."""

import os
from pathlib import Path

import pytest

from s3_local import start_minio, stop

MINIO = Path(__file__).resolve().parents[3] / ".tools" / "bin" / "minio"
USER, PASSWORD = "hyperseal-test", "hyperseal-test-secret"


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory):
    if not MINIO.exists():
        if os.environ.get("HYPERSEAL_REQUIRE_PEERS") == "1":
            pytest.fail("needs MinIO (make minio)")
        pytest.skip("needs MinIO (make minio)")
    try:
        proc, url = start_minio(MINIO, tmp_path_factory.mktemp("minio"), USER, PASSWORD)
    except RuntimeError as e:
        pytest.fail(str(e))
    saved = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL",
                                            "AWS_DEFAULT_REGION")}
    os.environ.update(AWS_ACCESS_KEY_ID=USER, AWS_SECRET_ACCESS_KEY=PASSWORD, AWS_ENDPOINT_URL=url,
                      AWS_DEFAULT_REGION="us-east-1")
    try:
        yield url
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        stop(proc)


@pytest.fixture(scope="session")
def s3(s3_endpoint):
    import s3fs

    return s3fs.S3FileSystem(endpoint_url=s3_endpoint, key=USER, secret=PASSWORD, use_listings_cache=False)


@pytest.fixture
def bucket(s3, request):
    """A fresh, empty bucket per test."""
    name = "t-" + "".join(c if c.isalnum() else "-" for c in request.node.name.lower())[:40].strip("-")
    name = f"{name}-{os.urandom(3).hex()}"
    s3.mkdir(name)
    return name


def everything(s3, bucket):
    """Every object in the bucket (hidden ones included) and every unfinished multipart upload."""
    s3.invalidate_cache()
    objects = sorted(s3.find(bucket, withdirs=False))
    uploads = s3.call_s3("list_multipart_uploads", Bucket=bucket).get("Uploads", [])
    return objects + [f"upload:{u['Key']}" for u in uploads]
