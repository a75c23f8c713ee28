"""A scripted Language Server Protocol client for the `ppsc lsp` tests.

Starts the server as an editor would (a child process talking JSON-RPC
over its stdin/stdout with Content-Length framing), sends requests and
notifications, and waits, with time limits, for the answers. Every wait is
bounded so a broken server fails the test instead of hanging it.
"""
import json
import os
import queue
import subprocess
import sys
import threading
import time

DEFAULT_TIMEOUT = 30.0


class ServerGone(Exception):
    pass


def frame(obj):
    body = json.dumps(obj).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def file_uri(path):
    return "file://" + os.path.abspath(path)


class Client:
    def __init__(self, ppsc, *args, stdlib=None, env=None):
        cmd = [ppsc, "lsp"] + list(args)
        e = dict(os.environ)
        if stdlib:
            e["PPS_STDLIB"] = stdlib
        if env:
            e.update(env)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=e)
        self.messages = queue.Queue()
        self.notifications = []
        self.next_id = 1
        self.stderr = b""
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    # --- wire -----------------------------------------------------------
    def _read(self):
        out = self.proc.stdout
        try:
            while True:
                headers = {}
                while True:
                    line = out.readline()
                    if not line:
                        self.messages.put(None)
                        return
                    line = line.strip()
                    if not line:
                        break
                    k, _, v = line.decode("ascii").partition(":")
                    headers[k.strip().lower()] = v.strip()
                n = int(headers["content-length"])
                body = out.read(n)
                if len(body) != n:
                    self.messages.put(None)
                    return
                self.messages.put(json.loads(body.decode("utf-8")))
        except Exception as exc:  # a framing error from the server
            self.messages.put(("bad-frame", repr(exc)))

    def _read_err(self):
        for line in self.proc.stderr:
            self.stderr += line

    def write_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, obj):
        self.write_raw(frame(obj))

    def close_input(self):
        self.proc.stdin.close()

    def next_message(self, timeout=DEFAULT_TIMEOUT):
        try:
            m = self.messages.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError("no message from the server within %ss" %
                                 timeout)
        if m is None:
            raise ServerGone("the server closed its output")
        if isinstance(m, tuple):
            raise AssertionError("server sent a malformed frame: %s" % m[1])
        assert m.get("jsonrpc") == "2.0", m
        return m

    # --- JSON-RPC -------------------------------------------------------
    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def request_raw(self, method, params=None, msg_id=None):
        if msg_id is None:
            msg_id = self.next_id
            self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return msg_id

    def response(self, msg_id, timeout=DEFAULT_TIMEOUT):
        """The response to msg_id; notifications meanwhile are kept."""
        deadline = time.time() + timeout
        while True:
            m = self.next_message(max(0.01, deadline - time.time()))
            if "method" in m and "id" not in m:
                self.notifications.append(m)
                continue
            assert m.get("id") == msg_id, "unexpected message %r" % m
            return m

    def request(self, method, params=None, timeout=DEFAULT_TIMEOUT):
        m = self.response(self.request_raw(method, params), timeout)
        assert "error" not in m, "%s failed: %r" % (method, m["error"])
        return m["result"]

    def error_for(self, method, params=None, msg_id=None):
        m = self.response(self.request_raw(method, params, msg_id))
        assert "error" in m, "%s should fail, got %r" % (method, m)
        return m["error"]

    def diagnostics(self, uri, version=None, timeout=DEFAULT_TIMEOUT):
        """The next publishDiagnostics for uri (and version, if given)."""
        deadline = time.time() + timeout
        while True:
            for i, n in enumerate(self.notifications):
                if n["method"] != "textDocument/publishDiagnostics":
                    continue
                p = n["params"]
                if p["uri"] == uri and (version is None or
                                        p.get("version") == version):
                    del self.notifications[:i + 1]
                    return p
            left = deadline - time.time()
            if left <= 0:
                raise AssertionError("no diagnostics for %s v%s" %
                                     (uri, version))
            m = self.next_message(left)
            if "method" in m and "id" not in m:
                self.notifications.append(m)
            else:
                raise AssertionError("unexpected response %r" % m)

    # --- LSP ------------------------------------------------------------
    def initialize(self, **init_options):
        caps = {"textDocument": {"completion": {
            "completionItem": {"snippetSupport": True}}}}
        params = {"processId": os.getpid(), "rootUri": None,
                  "capabilities": caps}
        if init_options:
            params["initializationOptions"] = init_options
        result = self.request("initialize", params)
        self.notify("initialized", {})
        return result

    def open(self, uri, text, version=1):
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "pps", "version": version,
            "text": text}})

    def change(self, uri, version, text, rng=None):
        change = {"text": text}
        if rng is not None:
            change["range"] = rng
        self.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [change]})

    def position_request(self, method, uri, line, character):
        return self.request(method, {"textDocument": {"uri": uri},
                                     "position": {"line": line,
                                                  "character": character}})

    def shutdown_and_exit(self, timeout=DEFAULT_TIMEOUT):
        assert self.request("shutdown") is None
        self.notify("exit")
        return self.wait(timeout)

    def wait(self, timeout=DEFAULT_TIMEOUT):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError("the server did not exit within %ss" %
                                 timeout)


def pos_of(text, needle, nth=0, offset=0):
    """The LSP position of the nth occurrence of needle (+ offset chars)."""
    idx = -1
    for _ in range(nth + 1):
        idx = text.index(needle, idx + 1)
    idx += offset
    line = text.count("\n", 0, idx)
    col = idx - (text.rfind("\n", 0, idx) + 1)
    return line, col


def check(cond, what):
    if not cond:
        print("FAIL: " + what, file=sys.stderr)
        sys.exit(1)
