"""Every request signed with a function's key, as one JSON line (the IAM check reads them)."""

import io
import json
import os
import threading
from urllib.parse import unquote


class CallRecorder:
    """WSGI middleware: writes each request signed with a function's key to `path`, then passes it on."""

    def __init__(self, app, runtime, path):
        self.app = app
        self.runtime = runtime
        self.path = path
        self.lock = threading.Lock()

    def key_of(self, environ):
        auth = environ.get("HTTP_AUTHORIZATION", "")
        marker = "Credential="
        if marker in auth:
            return auth.split(marker, 1)[1].split("/", 1)[0]
        query = environ.get("QUERY_STRING", "")
        for part in query.split("&"):
            if part.startswith("X-Amz-Credential="):
                return unquote(part.split("=", 1)[1]).split("/", 1)[0]
        return None

    def __call__(self, environ, start_response):
        key = self.key_of(environ)
        caller = self.runtime.keys.get(key) if key else None
        if caller is None or self.path is None:
            return self.app(environ, start_response)
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        environ["wsgi.input"] = io.BytesIO(body)
        record = {
            "caller": caller,
            "method": environ.get("REQUEST_METHOD"),
            "host": environ.get("HTTP_HOST"),
            "path": environ.get("PATH_INFO"),
            "query": environ.get("QUERY_STRING", ""),
            "target": environ.get("HTTP_X_AMZ_TARGET"),
            "authorization": environ.get("HTTP_AUTHORIZATION", "")[:300],
            "body": body[:65536].decode("utf-8", errors="replace") if body else "",
        }
        line = (json.dumps(record) + "\n").encode("utf-8")
        # One write(2) on an O_APPEND descriptor a line (a buffered text file may split a long one).
        with self.lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                view = memoryview(line)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
        return self.app(environ, start_response)


