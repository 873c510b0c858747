#!/usr/bin/python3
"""A minimal LSP client for the tests: starts `ss lsp` with pipes and speaks
JSON-RPC in the LSP's framing, written here from the LSP specification (not
from the server's code), so it is an independent reader of what `ss lsp`
writes: each frame must carry a Content-Length header and exactly that many
bytes of UTF-8 JSON."""
import json
import queue
import subprocess
import threading
import time


class Client:
    def __init__(self, ss, args=(), cwd=None):
        self.proc = subprocess.Popen([ss, "lsp", *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=cwd)
        self.inbox = queue.Queue()
        self.pending = []  # messages read but not yet claimed
        self.next_id = 1
        self.frame_errors = []
        threading.Thread(target=self._read, daemon=True).start()
        self.stderr = b""
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stderr(self):
        self.stderr = self.proc.stderr.read()

    def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.inbox.put(None)
                    return
                if line == b"\r\n":
                    break
                if not line.endswith(b"\r\n"):
                    self.frame_errors.append("header line without CRLF: %r"
                                             % line)
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            if length is None:
                self.frame_errors.append("a frame without Content-Length")
                self.inbox.put(None)
                return
            body = out.read(length)
            if len(body) != length:
                self.frame_errors.append("a short frame")
                self.inbox.put(None)
                return
            self.inbox.put(json.loads(body.decode("utf-8")))

    # ------------------------------------------------------------ writing

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    @staticmethod
    def frame(obj):
        body = json.dumps(obj).encode("utf-8")
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    def send(self, obj):
        self.send_raw(self.frame(obj))

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def request_async(self, method, params=None):
        rid = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return rid

    def request(self, method, params=None, timeout=20):
        return self.response(self.request_async(method, params), timeout)

    # ------------------------------------------------------------ reading

    def _take(self, pred, timeout, what):
        for i, m in enumerate(self.pending):
            if pred(m):
                return self.pending.pop(i)
        deadline = time.time() + timeout
        while True:
            left = deadline - time.time()
            if left <= 0:
                raise AssertionError("no %s within %ss" % (what, timeout))
            try:
                m = self.inbox.get(timeout=left)
            except queue.Empty:
                continue
            if m is None:
                self.inbox.put(None)  # stays ended
                raise AssertionError("the server's output ended waiting for "
                                     + what)
            if pred(m):
                return m
            self.pending.append(m)

    def response(self, rid, timeout=20):
        return self._take(lambda m: m.get("id") == rid and "method" not in m,
                          timeout, "response to %r" % rid)

    def notification(self, method, pred=lambda p: True, timeout=20):
        m = self._take(lambda m: m.get("method") == method and
                       pred(m.get("params")), timeout, method)
        return m["params"]

    def diagnostics(self, uri, timeout=20):
        return self.notification("textDocument/publishDiagnostics",
                                 lambda p: p["uri"] == uri, timeout)

    # ------------------------------------------------------------ sessions

    def initialize(self, options=None):
        params = {"processId": None, "rootUri": None, "capabilities": {}}
        if options is not None:
            params["initializationOptions"] = options
        r = self.request("initialize", params)
        self.notify("initialized", {})
        return r

    def open(self, uri, text, version=1):
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "shapescript", "version": version,
            "text": text}})

    def at(self, method, uri, line, character):
        return self.request(method, {"textDocument": {"uri": uri},
                                     "position": {"line": line,
                                                  "character": character}})

    def wait(self, timeout=20):
        """The exit code, once the server exits (None if it does not)."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except OSError:
                pass
