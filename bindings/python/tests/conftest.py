"""Shared fixtures: one key pair per session (hybrid key generation is fast, but every test
needs one), and the CLI built next to the package (target/release/hyperseal)."""

from pathlib import Path

import pytest

import hyperseal

CLI = Path(__file__).resolve().parents[3] / "target" / "release" / "hyperseal"


@pytest.fixture(scope="session")
def me():
    return hyperseal.generate_key()


@pytest.fixture(scope="session")
def cli():
    if not CLI.exists():
        pytest.skip("needs target/release/hyperseal (cargo build --release -p hyperseal-cli)")
    return CLI

# The S3 server of the s3 tests (MinIO), one per session: defined once here, so every module
# shares it.
from s3_server import bucket, s3, s3_endpoint  # noqa: E402, F401
