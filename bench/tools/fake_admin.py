#!/usr/bin/env python3
"""A fake XXL-JOB admin for the executor-cpu benchmark: answers the executor API an executor calls
(POST /api/callback, /api/registry, /api/registryRemove) with {"code":200} and nothing else, so the
executors under test can call back without a real admin and PostgreSQL taking the machine's CPU.

  fake_admin.py --port P [--host 127.0.0.1]

Callbacks come in batches (up to 100 results a POST from cronwheel-executor and from xxl-stub), so at a
few thousand /run a second this answers a few tens of requests a second: Python's threading HTTP server
keeps up with that on a small fraction of a core (the benchmark records its CPU to show it). HTTP/1.1
with keep-alive, as the executors' clients expect. GET /stats answers {"callbacks": results received,
"callback_posts": POSTs, "registry": registry calls, "other": anything else}, for the benchmark to
check that every /run was called back. SIGTERM or SIGINT stops it. Loopback only by default.
"""
import argparse
import json
import signal
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OK = b'{"code":200,"msg":null,"content":null}'
stats = {"callbacks": 0, "callback_posts": 0, "registry": 0, "other": 0}
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        # Headers and body go out in two writes: without this, Nagle's algorithm holds the body back
        # until the client's delayed ACK (~40 ms a callback batch).
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, *args):  # quiet: one line per request would cost more than the answer
        pass

    def answer(self, body, status=200):
        self.send_response(status)
        self.send_header("Content-Type", "application/json;charset=UTF-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        path = self.path.rstrip("/")
        if path.endswith("/api/callback"):
            # Counting the results of a batch: one object per result, each with a logId.
            n = body.count(b'"logId"')
            with lock:
                stats["callbacks"] += n
                stats["callback_posts"] += 1
        elif path.endswith("/api/registry") or path.endswith("/api/registryRemove"):
            with lock:
                stats["registry"] += 1
        else:
            with lock:
                stats["other"] += 1
            return self.answer(b'{"code":500,"msg":"not an executor API path","content":null}', 404)
        self.answer(OK)

    def do_GET(self):
        if self.path == "/stats":
            with lock:
                body = json.dumps(stats).encode()
            return self.answer(body)
        self.answer(b'{"code":500,"msg":"not found","content":null}', 404)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    a = ap.parse_args()
    server = ThreadingHTTPServer((a.host, a.port), Handler)
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    signal.signal(signal.SIGINT, lambda *_: threading.Thread(target=server.shutdown).start())
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever(poll_interval=0.2)
    print(f"fake admin: {json.dumps(stats)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
