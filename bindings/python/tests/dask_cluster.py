"""A local Dask cluster of 2 single-threaded worker processes, as a pytest fixture: a test
module takes it with ``from dask_cluster import procs``."""

import pytest

pytest.importorskip("dask.distributed")
from dask.distributed import Client, LocalCluster  # noqa: E402


@pytest.fixture(scope="module")
def procs():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        with Client(cluster) as c:
            yield c
