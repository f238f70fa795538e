"""``sops=True``: sops files made by the real sops 3.13.3 (``make sops``, in .tools/bin) re-keyed
by ``rekey_tree``, ``rekey_file`` and ``rekey_bytes``, and a prefix of sops objects in the tests'
MinIO by ``hyperseal.dask.rekey_prefix``. The real sops judges each result: the new key alone
opens it to the same plaintext, the removed key opens none, and every line outside the age
entries is as it was. One S3 object is re-keyed alone, and a writer that saves it meanwhile
wins: the call raises and the object keeps that writer's bytes."""

import os
import re
import subprocess
from pathlib import Path

import pytest

import hyperseal
from hyperseal._errors import ArgumentError

TOOLS = Path(__file__).resolve().parents[3] / ".tools" / "bin"
SOPS = TOOLS / "sops"
PLAIN = {
    "app.yaml": "# settings\npassword: p1 # keep me\nport: 8080\n",
    "sub/cfg.json": '{"user": "u2", "token": "t2"}',
    "sub/db.env": "DB_USER=u3\nDB_PASS=p3\n",
}


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    if not SOPS.exists():
        if os.environ.get("HYPERSEAL_REQUIRE_PEERS") == "1":
            pytest.fail("needs the real sops (make sops)")
        pytest.skip("needs the real sops (make sops)")
    d = tmp_path_factory.mktemp("sops-keys")

    def keygen(name, pq=False):
        f = d / f"{name}.txt"
        subprocess.run([TOOLS / "age-keygen", *(["-pq"] if pq else []), "-o", f], check=True, capture_output=True)
        public = subprocess.run([TOOLS / "age-keygen", "-y", f], check=True, capture_output=True).stdout.decode()
        return dict(file=f, public=public.strip(), secret=f.read_text())

    return dict(keep=keygen("keep"), gone=keygen("gone"), pq=keygen("pq", pq=True))


def sops(cwd, key_file, *args):
    env = {k: v for k, v in os.environ.items() if k not in ("SOPS_AGE_KEY", "SOPS_AGE_KEY_FILE")}
    env["XDG_CONFIG_HOME"] = str(Path(cwd) / "no-config")
    if key_file is not None:
        env["SOPS_AGE_KEY_FILE"] = str(key_file)
    return subprocess.run([SOPS, *args], cwd=cwd, env=env, capture_output=True)


def rules(d, *recipients):
    (d / ".sops.yaml").write_text("creation_rules:\n  - path_regex: \\.(yaml|json|env)$\n"
                                  f"    age: {','.join(recipients)}\n")


def outside_age(text):
    """The lines that are not part of an age entry (recipient, enc and its armor)."""
    def age_line(t):
        armor = 0 < len(t) <= 64 and re.fullmatch(r"[A-Za-z0-9+/=]+", t)
        return armor or re.search(r'recipient|"enc"|- enc: \||AGE ENCRYPTED FILE|__map_enc', t)

    return [line for line in text.split("\n") if not age_line(line.strip())]


def repo(tmp_path, keys):
    """Sops files for ``keep`` and ``gone``, made by sops, and a file that is not one."""
    (tmp_path / "sub").mkdir()
    rules(tmp_path, keys["keep"]["public"], keys["gone"]["public"])
    for rel, text in PLAIN.items():
        (tmp_path / rel).write_text(text)
        o = sops(tmp_path, None, "-e", "-i", rel)
        assert o.returncode == 0, o.stderr
    (tmp_path / "README.md").write_text("not a secret\n")
    return tmp_path


def test_a_folder_moves_to_its_new_rules_and_sops_agrees(tmp_path, keys):
    d = repo(tmp_path, keys)
    before = {rel: (d / rel).read_text() for rel in PLAIN}
    plain = {rel: sops(d, keys["gone"]["file"], "-d", rel).stdout for rel in PLAIN}
    rules(d, keys["keep"]["public"], keys["pq"]["public"])
    calls = []
    files, summary = hyperseal.rekey_tree(d, keys["keep"]["secret"], sops=True, progress=lambda *a: calls.append(a))
    assert summary == {"changed": 3, "unchanged": 0, "skipped": 1, "failed": 0}, files
    assert calls[-1] == (4, 4)
    by = {Path(f["path"]).relative_to(d).as_posix(): f for f in files}
    assert by["README.md"]["reason"] == "not a sops file"
    for rel in PLAIN:
        assert (by[rel]["outcome"], by[rel]["added"], by[rel]["removed"]) == ("changed", 1, 1)
        now = (d / rel).read_text()
        assert keys["pq"]["public"] in now and keys["gone"]["public"] not in now
        assert outside_age(now) == outside_age(before[rel]), rel
        o = sops(d, keys["pq"]["file"], "-d", rel)
        assert o.returncode == 0, o.stderr
        assert o.stdout == plain[rel] and re.search(rb"p1|t2|p3", o.stdout)
        assert sops(d, keys["gone"]["file"], "-d", rel).returncode != 0, f"{rel} still opens with the removed key"
    _, again = hyperseal.rekey_tree(d, keys["keep"]["secret"], sops=True)
    assert again == {"changed": 0, "unchanged": 3, "skipped": 1, "failed": 0}


def test_a_file_and_bytes_with_explicit_recipients_and_the_lock_out_guard(tmp_path, keys):
    d = repo(tmp_path, keys)
    f = d / "app.yaml"
    old = f.read_bytes()
    # Only the post-quantum key afterwards: none of the identities given opens it.
    with pytest.raises(ArgumentError, match="none of the identities"):
        hyperseal.rekey_file(f, keys["keep"]["secret"], sops=True, recipients=keys["pq"]["public"])
    assert f.read_bytes() == old
    dry = hyperseal.rekey_file(f, keys["keep"]["secret"], sops=True, recipients=[keys["pq"]["public"]],
                               remove_own=True, dry_run=True)
    assert (dry.added, dry.removed, dry.dry_run) == (1, 2, True) and f.read_bytes() == old
    got = hyperseal.rekey_file(f, keys["keep"]["secret"], sops=True, recipients=[keys["pq"]["public"]],
                               remove_own=True)
    assert (got.added, got.removed, got.written) == (1, 2, "rewritten")
    assert sops(d, keys["pq"]["file"], "-d", "app.yaml").returncode == 0
    assert sops(d, keys["keep"]["file"], "-d", "app.yaml").returncode != 0
    with pytest.raises(ArgumentError, match="not a sops file"):
        hyperseal.rekey_file(d / "README.md", keys["keep"]["secret"], sops=True, add=keys["pq"]["public"])

    data = (d / "sub/cfg.json").read_bytes()
    with pytest.raises(ArgumentError):
        hyperseal.rekey_bytes(data, keys["keep"]["secret"], sops=True, add=keys["pq"]["public"])  # no format
    new = hyperseal.rekey_bytes(data, keys["keep"]["secret"], sops=True, format="json", add=keys["pq"]["public"],
                                remove=keys["gone"]["public"])
    (d / "sub/new.json").write_bytes(new)
    o = sops(d, keys["pq"]["file"], "-d", "sub/new.json")
    assert o.returncode == 0, o.stderr
    assert b'"token": "t2"' in o.stdout
    assert sops(d, keys["gone"]["file"], "-d", "sub/new.json").returncode != 0
    assert hyperseal.rekey_bytes(new, keys["pq"]["secret"], sops=True, format="json", add=keys["pq"]["public"]) == new


def test_rotate_is_passed_to_the_library(tmp_path, keys):
    """A fresh data key: every value sealed again, and sops opens the file to the same values."""
    d = repo(tmp_path, keys)
    f = d / "sub/db.env"
    before = f.read_text()
    hyperseal.rekey_file(f, keys["keep"]["secret"], sops=True, rotate=True)
    value = lambda t: re.search(r"^DB_PASS=(.*)$", t, re.M).group(1)  # noqa: E731
    assert value(f.read_text()) != value(before)
    o = sops(d / "sub", keys["keep"]["file"], "-d", "db.env")
    assert o.returncode == 0 and b"DB_PASS=p3" in o.stdout, o.stderr


def test_a_prefix_of_sops_objects_is_rekeyed_on_dask(tmp_path, keys, s3_endpoint, s3, bucket):
    pytest.importorskip("dask.distributed")
    from dask.distributed import Client, LocalCluster
    from s3_server import PASSWORD, USER

    import hyperseal.dask as hd

    d = repo(tmp_path, keys)
    plain = {rel: sops(d, keys["keep"]["file"], "-d", rel).stdout for rel in PLAIN}
    objects = {f"s/{rel}": (d / rel).read_bytes() for rel in PLAIN}
    objects["s/README.md"] = b"not a secret\n"
    s3.pipe({f"{bucket}/{k}": v for k, v in objects.items()})
    s3.call_s3("copy_object", Bucket=bucket, Key="s/app.yaml", CopySource=f"{bucket}/s/app.yaml",
               Metadata={"owner": "team-a"}, MetadataDirective="REPLACE", ContentType="application/yaml")
    etags = lambda: {k: s3.call_s3("head_object", Bucket=bucket, Key=k)["ETag"] for k in objects}  # noqa: E731
    opts = dict(endpoint_url=s3_endpoint, key=USER, secret=PASSWORD)
    change = dict(add=keys["pq"]["public"], remove=keys["gone"]["public"], sops=True, storage_options=opts)
    url = f"s3://{bucket}/s/"
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0") as c, \
            Client(c) as client:
        first = etags()
        got, summary = hd.rekey_prefix(client, url, keys["keep"]["secret"], dry_run=True, **change)
        assert (summary["planned"], summary["skipped"]) == (3, 1), got
        assert etags() == first, "a dry run writes nothing"
        got, summary = hd.rekey_prefix(client, url, keys["keep"]["secret"], **change)
        assert (summary["s3_put"], summary["skipped"], summary["failed"]) == (3, 1, 0), got
        assert {o["key"]: o.get("plan") for o in got if o["outcome"] == "s3_put"} == {
            k: {"added": 1, "removed": 1} for k in objects if k != "s/README.md"}
        # Run again: the manifest says each is done.
        _, summary = hd.rekey_prefix(client, url, keys["keep"]["secret"], **change)
        assert summary["already_done"] == 3 and summary["s3_put"] == 0
    s3.invalidate_cache()
    assert s3.cat(f"{bucket}/s/README.md") == objects["s/README.md"]
    info = s3.call_s3("head_object", Bucket=bucket, Key="s/app.yaml")
    assert info["Metadata"].get("owner") == "team-a" and info["ContentType"] == "application/yaml"
    for rel in PLAIN:
        new = s3.cat(f"{bucket}/s/{rel}")
        assert new != objects[f"s/{rel}"]
        assert outside_age(new.decode()) == outside_age(objects[f"s/{rel}"].decode()), rel
        (d / rel).write_bytes(new)
        o = sops(d, keys["pq"]["file"], "-d", rel)
        assert o.returncode == 0 and o.stdout == plain[rel], o.stderr
        assert sops(d, keys["gone"]["file"], "-d", rel).returncode != 0


def test_one_sops_object_is_rekeyed_and_a_concurrent_writer_wins(tmp_path, keys, s3_endpoint, s3, bucket,
                                                                   monkeypatch):
    import hyperseal._rekey_s3 as rs
    from hyperseal._errors import IoError
    from s3_server import PASSWORD, USER

    d = repo(tmp_path, keys)
    opts = dict(endpoint_url=s3_endpoint, key=USER, secret=PASSWORD)
    s3.pipe({f"{bucket}/one.env": (d / "sub/db.env").read_bytes(), f"{bucket}/two.env": b"A=1\n"})
    got = hyperseal.rekey_file(f"s3://{bucket}/one.env", keys["keep"]["secret"], sops=True, add=keys["pq"]["public"],
                               storage_options=opts)
    assert (got.added, got.removed, got.written) == (1, 0, "s3_put")
    (d / "one.env").write_bytes(s3.cat(f"{bucket}/one.env"))
    o = sops(d, keys["pq"]["file"], "-d", "one.env")
    assert o.returncode == 0 and b"DB_PASS=p3" in o.stdout, o.stderr
    again = hyperseal.rekey_file(f"s3://{bucket}/one.env", keys["keep"]["secret"], sops=True,
                                 add=keys["pq"]["public"], storage_options=opts)
    assert again.unchanged

    # Another writer saves the object while it is re-keyed: its bytes are kept, the call raises.
    real = rs._rekey_sops_bytes
    import botocore.session

    # A client of its own (plain botocore): this runs on s3fs's event loop, which is busy.
    other = botocore.session.get_session().create_client("s3", endpoint_url=s3_endpoint, aws_access_key_id=USER,
                                                           aws_secret_access_key=PASSWORD, region_name="us-east-1")

    def meanwhile(*a, **k):
        other.put_object(Bucket=bucket, Key="one.env", Body=b"saved by someone else\n")
        return real(*a, **k)

    monkeypatch.setattr(rs, "_rekey_sops_bytes", meanwhile)
    with pytest.raises(IoError, match="changed while it was re-keyed|someone else"):
        hyperseal.rekey_file(f"s3://{bucket}/one.env", keys["keep"]["secret"], sops=True,
                             remove=keys["pq"]["public"], storage_options=opts)
    s3.invalidate_cache()
    assert s3.cat(f"{bucket}/one.env") == b"saved by someone else\n"
    monkeypatch.setattr(rs, "_rekey_sops_bytes", real)
    with pytest.raises(hyperseal._errors.FormatError, match="not a sops file"):
        hyperseal.rekey_file(f"s3://{bucket}/two.env", keys["keep"]["secret"], sops=True, add=keys["pq"]["public"],
                             storage_options=opts)
