"""A MinIO server on 127.0.0.1 and a byte-counting TCP relay in front of it: plain Python, no
pytest, so that the tests' fixture (s3_server.py, test_rekey_s3.py) and the bench's S3 scripts
(crates/hyperseal-bench/src/rekey_s3.py, which embeds this file) start and watch the same
server the same way."""

import os
import socket
import subprocess
import threading
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_minio(minio, data, user, password):
    """Starts ``minio`` on a free port with its data and log (``minio.log``) under ``data``, and
    returns ``(process, url)`` once it answers its health check; raises RuntimeError with the end
    of its log when it does not within a minute."""
    port, console = free_port(), free_port()
    env = dict(os.environ, MINIO_ROOT_USER=user, MINIO_ROOT_PASSWORD=password, MINIO_BROWSER="off",
               MINIO_UPDATE="off", HOME=str(data))
    log_path = os.path.join(data, "minio.log")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([str(minio), "server", "--quiet", "--address", f"127.0.0.1:{port}",
                                 "--console-address", f"127.0.0.1:{console}", os.path.join(data, "d")],
                                env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{url}/minio/health/ready", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc)
            tail = open(log_path, "rb").read()[-2000:].decode(errors="replace")
            raise RuntimeError(f"MinIO did not start: {tail}")
        time.sleep(0.2)


def stop(proc):
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class CountingRelay:
    """A TCP relay on 127.0.0.1 in front of ``upstream`` (``http://host:port``) counting the
    bytes it passes each way (SigV4 signs the Host header, which passes through unchanged)."""

    def __init__(self, upstream):
        host, port = upstream.split("//")[1].split(":")
        self.upstream = (host, int(port))
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.down = self.up = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream, timeout=120)
            threading.Thread(target=self._pipe, args=(client, server, "up"), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, "down"), daemon=True).start()

    def _pipe(self, src, dst, way):
        try:
            while data := src.recv(1 << 20):
                with self.lock:
                    setattr(self, way, getattr(self, way) + len(data))
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self):
        self.sock.close()
