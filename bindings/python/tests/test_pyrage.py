"""pyrage 1.4.0's own test suite (its sdist's ``test/``, fetched by ``make pyrage-tests`` into
the tools cache, never committed) run against ``hyperseal.pyrage``, with ``import pyrage``
pointed at it by a shim package made here, ahead of the real pyrage (installed in the venv as the
bench's peer). All of it runs; none of its tests is left out. Then what pyrage's suite does not
check: the files are age files both ways with the real pyrage, armor is read unasked, the pq
module, and the GIL is released while a file is sealed."""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import hyperseal
from hyperseal import pyrage as hp

SUITE = Path(__file__).resolve().parents[3] / ".tools" / "pyrage-tests" / "test"

SHIM = '''
import sys
import hyperseal.pyrage as _drop_in
for _name in ("passphrase", "plugin", "pq", "ssh", "tag", "tagpq", "x25519"):
    sys.modules["pyrage." + _name] = getattr(_drop_in, _name)
sys.modules["pyrage"] = _drop_in
'''


def _shimmed(tmp_path):
    shim = tmp_path / "shim" / "pyrage"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text(SHIM)
    env = dict(os.environ, PYTHONPATH=str(shim.parent), PYTHONDONTWRITEBYTECODE="1")
    return env


def test_pyrages_own_suite_passes_on_the_drop_in(tmp_path):
    if not (SUITE / "__init__.py").exists():
        assert not os.environ.get("HYPERSEAL_REQUIRE_PEERS"), "pyrage's suite is missing under make test"
        pytest.skip("pyrage's test suite not fetched (make pyrage-tests)")
    env = _shimmed(tmp_path)
    which = subprocess.run([sys.executable, "-c", "import pyrage; print(pyrage.__name__)"],
                           env=env, capture_output=True, text=True, check=True)
    assert which.stdout.strip() == "hyperseal.pyrage"
    # The suite imports itself as the package `test` (`from test.utils import ...`): run from a
    # copy whose parent holds nothing else.
    root = tmp_path / "suite"
    root.mkdir()
    (root / "test").symlink_to(SUITE)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test"],
                         cwd=root, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    summary = run.stdout.strip().splitlines()[-1]
    # Every test of pyrage 1.4.0 (33 with parameterized's expansions), none skipped.
    assert summary.startswith("33 passed") and "skipped" not in summary, summary


def test_age_files_both_ways_with_the_real_pyrage():
    real = pytest.importorskip("pyrage")
    if real.__name__ != "pyrage":
        pytest.skip("the real pyrage is shadowed")
    me = hp.x25519.Identity.generate()
    them = real.x25519.Identity.from_str(str(me))
    for armored in (False, True):
        assert real.decrypt(hp.encrypt(b"to rage", [me.to_public()], armored=armored), [them]) == b"to rage"
        theirs = real.encrypt(b"from rage", [them.to_public()], armored=armored)
        assert hp.decrypt(theirs, [me]) == b"from rage"
    sealed = real.passphrase.encrypt(b"pass", "pw")
    assert hp.passphrase.decrypt(sealed, "pw") == b"pass"
    assert real.passphrase.decrypt(hp.passphrase.encrypt(b"pass", "pw", armored=True), "pw") == b"pass"


def test_pq_beyond_pyrage_and_its_refusals():
    me = hp.pq.Identity.generate()
    assert str(me).startswith("AGE-SECRET-KEY-PQ-1") and str(me.to_public()).startswith("age1pq1")
    assert "SECRET" not in repr(me)
    sealed = hp.encrypt(b"post-quantum", [me.to_public()])
    assert hp.decrypt(sealed, [hp.pq.Identity.from_str(str(me))]) == b"post-quantum"
    # The same file opens with the package's own API and the age format's reader.
    assert hyperseal.decrypt(sealed, str(me)) == b"post-quantum"
    with pytest.raises(hp.EncryptError, match="postquantum"):
        hp.encrypt(b"x", [me.to_public(), hp.x25519.Identity.generate().to_public()])
    with pytest.raises(hp.IdentityError, match="incorrect HRP|invalid Bech32"):
        hp.x25519.Identity.from_str(str(me))
    with pytest.raises(TypeError):
        hp.encrypt(b"x", [str(me.to_public())])  # a string, not a recipient object
    with pytest.raises(hp.DecryptError, match="No matching keys found"):
        hp.decrypt(sealed, [hp.pq.Identity.generate()])


def test_the_gil_is_released_while_sealing():
    me = hp.x25519.Identity.generate()
    data = os.urandom(64 << 20)
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=tick)
    t.start()
    try:
        start = time.perf_counter()
        hp.encrypt(data, [me.to_public()])
        end = time.perf_counter()
    finally:
        stop.set()
        t.join()
    during = [x for x in ticks if start < x < end]
    # A held GIL would starve the ticker for the whole call.
    assert len(during) >= max(3, int((end - start) / 0.01)), (len(during), end - start)
