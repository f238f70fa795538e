"""Small HTTP proxies on 127.0.0.1 in front of the tests' MinIO (s3_server.py).

``IgnoringProxy``: an S3 server that ignores ``If-None-Match: *``, as older MinIO releases and
some S3-compatible servers do: every request passes through unchanged, except a request carrying
``If-None-Match``, which it sends without that header — re-signed with the test credentials,
since the client's SigV4 signature covers the header — so the object is written whether it
exists or not.

``CountingProxy``: every request passes through unchanged; it counts, per object key, the
requests and the bytes each way (request line, headers and body up; status line, headers and
body down), and may call a hook after a response from MinIO and before the client gets it."""

from collections import defaultdict
from urllib.parse import unquote

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from s3_server import PASSWORD, USER

# Hop-by-hop headers and the ones a re-signed request gets anew.
_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "upgrade"}
_SIGNED = {"authorization", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token"}


def _resign(method, host, path, headers, body, dropped="if-none-match"):
    """The request without the header ``dropped``, signed again (SigV4, payload hashed)."""
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    kept = {k: v for k, v in headers if k.lower() not in _SIGNED | {dropped}}
    req = AWSRequest(method=method, url=f"http://{host}{path}", data=body, headers=kept)
    S3SigV4Auth(Credentials(USER, PASSWORD), "s3", "us-east-1").add_auth(req)
    return list(req.headers.items())


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    upstream = None  # (host, port), set per server

    def log_message(self, *args):  # quiet
        pass

    def _body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _relay(self):
        body = self._body()
        headers = [(k, v) for k, v in self.headers.items() if k.lower() not in _HOP]
        if self.server.strip and self.headers.get(self.server.strip) is not None:
            self.server.stripped += 1
            headers = _resign(self.command, self.headers["Host"], self.path, headers, body, self.server.strip)
        headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
        conn = http.client.HTTPConnection(*self.server.upstream, timeout=60)
        try:
            conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            for k, v in headers:
                conn.putheader(k, v)
            if body or self.command in ("PUT", "POST"):
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        out = [(k, v) for k, v in resp.getheaders() if k.lower() not in _HOP and k.lower() != "content-length"]
        length = resp.getheader("Content-Length") if self.command == "HEAD" else str(len(data))
        out.append(("Content-Length", length or "0"))
        sent = data if self.command != "HEAD" else b""
        count = getattr(self.server, "count", None)
        if count is not None:
            path, _, query = self.path.partition("?")
            key = unquote(path.lstrip("/").partition("/")[2])  # path-style: /bucket/key
            up = len(self.requestline) + 2 + sum(len(k) + len(v) + 4 for k, v in self.headers.items()) + 2 + len(body)
            down = len(f"HTTP/1.1 {resp.status} {resp.reason}") + 2 + sum(len(k) + len(v) + 4 for k, v in out) + 2
            count(key, self.command, query, up, down + len(sent))
            if self.server.hook is not None:
                self.server.hook(self.command, key, query, resp.status)
        self.send_response_only(resp.status, resp.reason)
        for k, v in out:
            self.send_header(k, v)
        self.end_headers()
        if sent:
            self.wfile.write(sent)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _relay


class IgnoringProxy:
    """``with IgnoringProxy(minio_url) as url:`` an endpoint that drops ``If-None-Match`` (or
    the header named by ``header``); ``stripped`` counts the requests it dropped it from."""

    def __init__(self, upstream, header="if-none-match"):
        u = urlsplit(upstream)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.upstream = (u.hostname, u.port)
        self.server.stripped = 0
        self.server.strip = header
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def stripped(self):
        return self.server.stripped

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


class CountingProxy(IgnoringProxy):
    """``with CountingProxy(minio_url) as p:`` an endpoint that passes everything through;
    ``p.per_key[key]`` is ``{"requests", "up", "down", "ops"}`` (ops: "METHOD query" strings).
    ``hook(method, key, query, status)`` runs in the proxy after MinIO answered a request and
    before the client gets the answer."""

    def __init__(self, upstream, hook=None):
        super().__init__(upstream)
        self.server.strip = False
        self.server.hook = hook
        self.lock = threading.Lock()
        self.per_key = defaultdict(lambda: {"requests": 0, "up": 0, "down": 0, "ops": []})
        self.server.count = self._count

    def _count(self, key, method, query, up, down):
        with self.lock:
            c = self.per_key[key]
            c["requests"] += 1
            c["up"] += up
            c["down"] += down
            c["ops"].append(f"{method} {query}".strip())

    def reset(self):
        with self.lock:
            self.per_key.clear()
