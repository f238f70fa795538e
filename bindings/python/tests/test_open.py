"""hyperseal.open: seekable readers that authenticate before they return bytes, on paths and
on Python file objects; writers that publish a path only on a clean close."""

import io
import os

import pytest

import hyperseal

CHUNK = 65536


@pytest.fixture(scope="module")
def sample(tmp_path_factory, me):
    plain = os.urandom(10 * CHUNK + 777)
    path = tmp_path_factory.mktemp("open") / "sample.hs"
    path.write_bytes(hyperseal.encrypt(plain, me))
    return path, plain


def test_random_access_on_a_path(sample, me):
    path, plain = sample
    with hyperseal.open(path, "rb", identities=me) as f:
        assert f.seekable() and f.raw.size == len(plain)
        for at, n in [(0, 10), (CHUNK - 3, 6), (5 * CHUNK + 1, 2 * CHUNK), (len(plain) - 5, 100), (len(plain), 1)]:
            assert f.seek(at) == at
            assert f.read(n) == plain[at:at + n]
            assert f.tell() == min(at + n, len(plain))
        assert f.seek(-10, os.SEEK_END) == len(plain) - 10 and f.read() == plain[-10:]
        f.seek(0)
        assert f.read() == plain


def test_raw_reader_readinto_and_tell(sample, me):
    path, plain = sample
    with hyperseal.open(path, "rb", identities=me.secret, buffering=0) as f:
        assert isinstance(f, io.RawIOBase)
        buf = bytearray(1000)
        f.seek(3 * CHUNK - 500)
        assert f.readinto(buf) == 1000 and bytes(buf) == plain[3 * CHUNK - 500:3 * CHUNK + 500]
        assert f.tell() == 3 * CHUNK + 500
        with pytest.raises(ValueError):
            f.seek(-1)
    with pytest.raises(ValueError):
        f.read(1)  # closed


def test_reader_over_file_objects(sample, me):
    path, plain = sample
    sealed = path.read_bytes()
    with hyperseal.open(io.BytesIO(sealed), "rb", identities=me) as f:
        f.seek(7 * CHUNK)
        assert f.read(CHUNK) == plain[7 * CHUNK:8 * CHUNK]

    class Pipe(io.RawIOBase):  # readable, not seekable
        def __init__(self, data):
            self.b = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, buf):
            return self.b.readinto(buf)

    with hyperseal.open(Pipe(sealed), "rb", identities=me) as f:
        assert not f.seekable()
        assert f.read(100) == plain[:100]
        with pytest.raises(io.UnsupportedOperation):
            f.seek(0)
        assert f.read() == plain[100:]


def test_damage_and_cut_files(sample, me):
    path, plain = sample
    sealed = bytearray(path.read_bytes())
    cut = bytes(sealed[:-50])
    with pytest.raises(hyperseal.AuthenticationError):
        hyperseal.open(io.BytesIO(cut), "rb", identities=me)  # seekable: the final chunk first
    sealed[len(sealed) // 2] ^= 1
    with hyperseal.open(io.BytesIO(bytes(sealed)), "rb", identities=me, buffering=0) as f:
        assert f.read(CHUNK) == plain[:CHUNK]  # before the damage: fine
        with pytest.raises(hyperseal.AuthenticationError):
            f.read()
        with pytest.raises(hyperseal.AuthenticationError):
            f.read()  # and for good
    with pytest.raises(hyperseal.NoIdentityError):
        hyperseal.open(path, "rb", identities=hyperseal.generate_key())


def test_an_exception_from_the_file_object_comes_back_as_itself(sample, me):
    path, _ = sample

    class Broken(io.BytesIO):
        def read(self, n=-1):
            if self.tell() > 1000:
                raise ConnectionResetError("network went away")
            return super().read(n)

    with pytest.raises(ConnectionResetError, match="network went away"):
        hyperseal.open(Broken(path.read_bytes()), "rb", identities=me).read()


def test_armored_input_reads_but_does_not_seek(me):
    plain = os.urandom(300_000)
    with hyperseal.open(io.BytesIO(hyperseal.encrypt(plain, me, armor=True)), "rb", identities=me) as f:
        assert not f.seekable() and f.read() == plain


def test_writer_publishes_a_path_only_on_close(tmp_path, me):
    dst = tmp_path / "out.hs"
    plain = os.urandom(3 * CHUNK + 5)
    f = hyperseal.open(dst, "wb", recipients=me.public)
    for i in range(0, len(plain), 10_000):
        assert f.write(plain[i:i + 10_000]) == len(plain[i:i + 10_000])
    assert not dst.exists() and os.listdir(tmp_path) == []  # unnamed until close
    f.close()
    assert hyperseal.decrypt(dst.read_bytes(), me) == plain

    with pytest.raises(RuntimeError):
        with hyperseal.open(tmp_path / "failed.hs", "wb", recipients=me) as f:
            f.write(plain)
            raise RuntimeError("the producer failed")
    assert not (tmp_path / "failed.hs").exists()

    with pytest.raises(hyperseal.IoError):
        hyperseal.open(dst, "wb", recipients=me)  # exists: needs force
    with hyperseal.open(dst, "wb", recipients=me, force=True) as f:
        f.write(b"replaced")
    with hyperseal.open(dst, "rb", identities=me) as f:
        assert f.read() == b"replaced"
    with pytest.raises(hyperseal.IoError):
        hyperseal.open(dst, "xb", recipients=me, force=True)


def test_writer_to_a_file_object_and_passphrase(me):
    buf = io.BytesIO()
    with hyperseal.open(buf, "wb", recipients=[me, me.public], format="age") as f:
        f.write(b"hello ")
        f.write(memoryview(b"world"))
    assert not buf.closed and buf.getvalue().startswith(b"age-encryption.org/v1")
    assert hyperseal.decrypt(buf.getvalue(), me) == b"hello world"


def test_modes_and_arguments(me):
    for mode in ("r", "w", "ab", "r+b"):
        with pytest.raises(ValueError):
            hyperseal.open(io.BytesIO(), mode, identities=me)
    with pytest.raises(TypeError):
        hyperseal.open(io.BytesIO(), "rb", recipients=me.public)


def test_a_fifo_path_reads_as_a_stream(tmp_path, me):
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    sealed = hyperseal.encrypt(b"through a pipe" * 10_000, me)
    t = threading.Thread(target=lambda: fifo.write_bytes(sealed))
    t.start()
    with hyperseal.open(fifo, "rb", identities=me) as f:
        assert not f.seekable() and f.read() == b"through a pipe" * 10_000
    t.join()
