#!/usr/bin/python3
"""Receivers of alert webhooks for the alert e2e test (tests/e2e/alert_e2e_test.cpp).

One HTTP server on 127.0.0.1 answers as each service's incoming-webhook endpoint does, checking the body
that service documents, and its signature where the service signs:

  /slack/...                           Slack incoming webhooks: a JSON object with a non-empty "text";
                                       answers 200 "ok", else 400 "invalid_payload"
  /dingtalk/robot/send?access_token=T  DingTalk custom robots: {"msgtype": "text", "text": {"content"}};
                                       with access_token=signed, the query's timestamp (ms, within an hour)
                                       and sign = Base64(HMAC-SHA256(secret, "<timestamp>\\n<secret>"));
                                       answers {"errcode": 0, "errmsg": "ok"}, or errcode 310000 on a bad
                                       signature and 40035 on a bad body, with HTTP 200 as DingTalk does
  /wecom/cgi-bin/webhook/send?key=K    WeCom group robots: {"msgtype": "text", "text": {"content"}};
                                       errcode 0, or 40008 on a bad body
  /feishu/open-apis/bot/v2/hook/ID     Feishu custom bots: {"msg_type": "text", "content": {"text"}}; with
                                       ID "signed", "timestamp" (seconds, within an hour) and "sign" =
                                       Base64(HMAC-SHA256(key "<timestamp>\\n<secret>", no data)); answers
                                       {"code": 0, "msg": "success"}, or code 19021 (signature) or 9499 (body)
  /json/...                            cronwheel's own alarm object: event, log_id, job_id, ... ; 200 or 400

Every request is appended to the log file as one JSON line: {"path", "query", "body", "verdict"} where the
verdict is "accepted" or "refused: <why>". The port it listens on is written to the port file once it
listens. It stops on SIGTERM, or by itself after --lifetime seconds.

Usage: alert_receiver.py --port-file F --log F --secret S [--lifetime 600]
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = None
LOCK = threading.Lock()


def sign(key: str, data: str) -> str:
    return base64.b64encode(hmac.new(key.encode(), data.encode(), hashlib.sha256).digest()).decode()


def fresh(ts_seconds: float) -> bool:
    return abs(time.time() - ts_seconds) < 3600


def text_message(body, type_key, content_key, text_key):
    return (isinstance(body, dict) and body.get(type_key) == "text" and isinstance(body.get(content_key), dict)
            and isinstance(body[content_key].get(text_key), str) and body[content_key][text_key] != "")


def judge(path, query, body):
    """(HTTP status, answer body, verdict)"""
    if path.startswith("/slack/"):
        if isinstance(body, dict) and isinstance(body.get("text"), str) and body["text"]:
            return 200, "ok", "accepted"
        return 400, "invalid_payload", "refused: no text"
    if path == "/dingtalk/robot/send":
        if not query.get("access_token"):
            return 200, {"errcode": 300001, "errmsg": "token is not exist"}, "refused: no access_token"
        if query["access_token"][0] == "signed":
            ts = query.get("timestamp", ["0"])[0]
            good = ts.isdigit() and fresh(int(ts) / 1000) and \
                query.get("sign", [""])[0] == sign(ARGS.secret, f"{ts}\n{ARGS.secret}")
            if not good:
                return 200, {"errcode": 310000, "errmsg": "sign not match"}, "refused: signature"
        if not text_message(body, "msgtype", "text", "content"):
            return 200, {"errcode": 40035, "errmsg": "missing parameter"}, "refused: body"
        return 200, {"errcode": 0, "errmsg": "ok"}, "accepted"
    if path == "/wecom/cgi-bin/webhook/send":
        if not query.get("key"):
            return 200, {"errcode": 93000, "errmsg": "invalid webhook url"}, "refused: no key"
        if not text_message(body, "msgtype", "text", "content"):
            return 200, {"errcode": 40008, "errmsg": "invalid message type"}, "refused: body"
        return 200, {"errcode": 0, "errmsg": "ok"}, "accepted"
    if path.startswith("/feishu/open-apis/bot/v2/hook/"):
        if path.endswith("/signed"):
            ts = body.get("timestamp", "") if isinstance(body, dict) else ""
            good = isinstance(ts, str) and ts.isdigit() and fresh(int(ts)) and \
                body.get("sign") == sign(f"{ts}\n{ARGS.secret}", "")
            if not good:
                return 200, {"code": 19021, "msg": "sign match fail or timestamp is not within one hour"}, \
                    "refused: signature"
        if not text_message(body, "msg_type", "content", "text"):
            return 200, {"code": 9499, "msg": "Bad Request"}, "refused: body"
        return 200, {"code": 0, "msg": "success"}, "accepted"
    if path.startswith("/json/"):
        keys = ["event", "log_id", "job_id", "job_description", "app_name", "trigger_type", "scheduled_ms",
                "trigger_code", "trigger_msg", "handle_code", "handle_msg", "text"]
        if isinstance(body, dict) and all(k in body for k in keys) and body["event"] == "fire_failed":
            return 200, "", "accepted"
        return 400, "", "refused: not cronwheel's alarm object"
    return 404, "", "refused: no such receiver"


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (the http.server interface)
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if self.headers.get("Content-Type", "").split(";")[0] != "application/json":
            status, answer, verdict = 400, "", "refused: Content-Type is not application/json"
        else:
            status, answer, verdict = judge(url.path, query, body)
        with LOCK, open(ARGS.log, "a", encoding="utf-8") as log:
            log.write(json.dumps({"path": url.path, "query": url.query, "body": body, "verdict": verdict},
                                 ensure_ascii=False) + "\n")
        data = (answer if isinstance(answer, str) else json.dumps(answer)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain" if isinstance(answer, str) else "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--lifetime", type=float, default=600)
    ARGS = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(ARGS.port_file + ".tmp", "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    os.replace(ARGS.port_file + ".tmp", ARGS.port_file)
    stop = threading.Timer(ARGS.lifetime, server.shutdown)
    stop.daemon = True
    stop.start()
    server.serve_forever()


if __name__ == "__main__":
    main()
