"""Range reads of an encrypted Parquet file on a real S3 server (MinIO, s3_server.py) through
the chained URL ``hyperseal::s3://…``: pyarrow reads the footer and one column of 32 and
fetches only what it needs — the bytes s3fs fetched are counted at the fsspec layer (every
ranged GET of an s3fs file goes through ``s3fs.core._fetch_range``).

The file is 128 MiB (the column read is 4 MiB of it), not larger, to keep ``make test`` short
on two cores; the bound scales: what is read is the footer and the column, whatever the size."""

import os

import pytest

pytest.importorskip("s3fs")
pa = pytest.importorskip("pyarrow")
import fsspec
import pyarrow.parquet as pq
import s3fs.core


import hyperseal

COLUMNS, ROWS = 32, 1 << 20  # int32: 4 MiB a column, 128 MiB in all


def test_footer_and_one_column_fetch_under_a_tenth(s3, bucket, me, monkeypatch):
    rng = os.urandom(ROWS * 4)
    column = pa.array(memoryview(rng).cast("i"), type=pa.int32())
    table = pa.table({f"c{i}": column for i in range(COLUMNS)})
    url = f"hyperseal::s3://{bucket}/t.parquet.hs"
    s3opts = {"default_block_size": 1 << 20}  # for reading: s3fs reads ahead 5 MiB by default
    with fsspec.open(url, "wb", hyperseal={"recipients": me.public}) as f:
        pq.write_table(table, f, compression=None, row_group_size=ROWS)
    size = s3.info(f"{bucket}/t.parquet.hs")["size"]
    assert size > COLUMNS * ROWS * 4

    fetched = []
    real = s3fs.core._fetch_range

    def counting(fs, bucket_, key, version_id, start, end, req_kw=None, details=None):
        got = real(fs, bucket_, key, version_id, start, end, req_kw=req_kw, details=details)
        fetched.append(len(got))
        return got

    monkeypatch.setattr(s3fs.core, "_fetch_range", counting)
    with fsspec.open(url, "rb", hyperseal={"identities": me}, s3=s3opts) as f:
        got = pq.ParquetFile(f).read(columns=["c7"])
    assert got.column("c7").equals(pa.chunked_array([column]))
    assert 0 < sum(fetched) <= size // 10, f"fetched {sum(fetched)} of {size} bytes in {len(fetched)} reads"
    with pytest.raises(hyperseal.Error):
        with fsspec.open(url, "rb", hyperseal={"identities": hyperseal.generate_key()}, s3=s3opts) as f:
            pq.ParquetFile(f)
