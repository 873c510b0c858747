#!/usr/bin/python3
"""`ss lsp` through its protocol: a client (lsp_client.py) drives the real
`ss lsp` process over pipes, as an editor does.

Usage: lsp_protocol_test.py SS_BINARY SOURCE_DIR (ctest: lsp_protocol).

The oracles are independent of the server: positions are computed here from
the documents' text (Python's own UTF-16 encoding for the columns, the LSP's
unit), the error codes and messages are the spec's (errors.md) for programs
written to have exactly that error, the explain block and the layouts are
the words of spec/devices.md and docs/explain.md for the README example, and
the builtins are those `ss check --list-builtins` lists from the op table.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import Client  # noqa: E402

SS = None
SRC = None

# spec/devices.md, "The `ss explain` report": the README's value_and_grad
# line on three devices, word for word.
README_BLOCK = (
    "Sent between the 3 devices on this line, per call:\n"
    "\n"
    "- all-reduce of the gradients of `Mlp`'s params `w1` and `w2`, which "
    "adds up every device's\n"
    "  part of the batch: 203,264 × f32 = 813,056 bytes (794 KiB)\n"
    "- inside `loss`: 16 bytes per call\n"
    "\n"
    "In all: 813,072 bytes (794 KiB).")


def utf16(s):
    return len(s.encode("utf-16-le")) // 2


def pos(text, needle, nth=0, delta=0):
    """The LSP position (0-based line, UTF-16 column) of the [nth]
    occurrence of [needle] in [text], moved [delta] characters right."""
    i = -1
    for _ in range(nth + 1):
        i = text.index(needle, i + 1)
    i += delta
    line = text.count("\n", 0, i)
    start = text.rfind("\n", 0, i) + 1
    return line, utf16(text[start:i])


def rng(text, needle, nth=0, length=None):
    l, c = pos(text, needle, nth)
    n = utf16(needle) if length is None else length
    return {"start": {"line": l, "character": c},
            "end": {"line": l, "character": c + n}}


def uri_of(path):
    return "file://" + path


class Session(unittest.TestCase):
    """Each test its own server, killed at the end whatever happens."""

    def start(self, options=None, args=(), init=True):
        c = Client(SS, args)
        self.addCleanup(c.kill)
        if init:
            r = c.initialize(options)
            self.assertIn("capabilities", r["result"])
        self.client = c
        return c

    def tmp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        return d.name

    def readme(self):
        with open(os.path.join(SRC, "examples", "readme_mlp.ss")) as f:
            return f.read()

    def open_readme(self, devices=None):
        c = self.start({"devices": devices} if devices else None)
        uri = uri_of(os.path.join(SRC, "examples", "readme_mlp.ss"))
        text = self.readme()
        c.open(uri, text)
        self.assertEqual(c.diagnostics(uri)["diagnostics"], [])
        return c, uri, text

    def open_clean(self, text, name):
        """A server with [text] open as a file [name] that checks clean."""
        c = self.start()
        uri = uri_of(os.path.join(self.tmp(), name))
        c.open(uri, text)
        self.assertEqual(c.diagnostics(uri)["diagnostics"], [])
        return c, uri

    def assert_checks_clean(self, folder, name, text):
        """[text] written as [folder]/[name] passes `ss check` (a process):
        the judge of a fix or a rename applied by the client."""
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)
        check = subprocess.run([SS, "check", os.path.join(folder, name)],
                               capture_output=True, text=True)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)

    def hover_text(self, c, uri, text, needle, nth=0, delta=0):
        r = c.at("textDocument/hover", uri, *pos(text, needle, nth, delta))
        self.assertNotIn("error", r)
        self.assertIsNotNone(r["result"], "no hover at %r" % needle)
        self.assertEqual(r["result"]["contents"]["kind"], "markdown")
        return r["result"]["contents"]["value"]


class Lifecycle(Session):
    def test_initialize_advertises_capabilities(self):
        c = self.start(init=False)
        r = c.request("initialize", {"processId": None, "capabilities": {}})
        caps = r["result"]["capabilities"]
        sync = caps["textDocumentSync"]
        self.assertTrue(sync["openClose"])
        self.assertIn(sync["change"], (1, 2))  # full or incremental
        self.assertTrue(caps["hoverProvider"])
        self.assertTrue(caps["definitionProvider"])
        self.assertIn(".", caps["completionProvider"]["triggerCharacters"])
        self.assertEqual(caps.get("positionEncoding", "utf-16"), "utf-16")

    def test_shutdown_then_exit_is_0(self):
        c = self.start()
        r = c.request("shutdown")
        self.assertIn("result", r)
        self.assertIsNone(r["result"])
        # After shutdown a request is refused (InvalidRequest).
        self.assertEqual(c.request("textDocument/hover", {})["error"]["code"],
                         -32600)
        c.notify("exit")
        self.assertEqual(c.wait(), 0)

    def test_exit_without_shutdown_is_1(self):
        c = self.start()
        c.notify("exit")
        self.assertEqual(c.wait(), 1)

    def test_end_of_input_ends_the_server(self):
        c = self.start()
        c.proc.stdin.close()
        self.assertEqual(c.wait(), 1)

    def test_command_line(self):
        r = subprocess.run([SS, "lsp", "--help"], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0)
        self.assertIn("usage: ss lsp", r.stdout)
        r = subprocess.run([SS, "lsp", "--frob"], capture_output=True,
                           text=True, stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 64)  # cli.md: usage
        r = subprocess.run([SS, "--help"], capture_output=True, text=True)
        self.assertIn("lsp", r.stdout)
        self.assertNotIn("not in this build", r.stdout)

    def test_client_closing_its_end(self):
        # The answers' pipe has no reader: write(2) fails with EPIPE and
        # the server ends plainly (exit 1: no shutdown), not by SIGPIPE.
        r, w = os.pipe()
        os.close(r)
        init = Client.frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                             "params": {"capabilities": {}}})
        p = subprocess.run([SS, "lsp"], input=init + init, stdout=w,
                           stderr=subprocess.PIPE, timeout=20)
        os.close(w)
        self.assertEqual(p.returncode, 1)

    def test_request_before_initialize(self):
        c = self.start(init=False)
        r = c.request("textDocument/hover", {})
        self.assertEqual(r["error"]["code"], -32002)  # ServerNotInitialized

    def test_unknown_methods(self):
        c = self.start()
        r = c.request("textDocument/frobnicate", {})
        self.assertEqual(r["error"]["code"], -32601)  # MethodNotFound
        # An unknown notification gets no answer: the next thing the server
        # says is the answer to the next request.
        c.notify("$/cancelRequest", {"id": 99})
        c.notify("workspace/somethingNew", {})
        rid = c.request_async("shutdown")
        first = c.inbox.get(timeout=20)
        self.assertEqual(first.get("id"), rid)

    def test_wrong_params_are_invalid_params(self):
        c = self.start()
        r = c.request("textDocument/hover", {"textDocument": {"uri": 3}})
        self.assertEqual(r["error"]["code"], -32602)
        r = c.request("textDocument/hover", {
            "textDocument": {"uri": "file:///not/open.ss"},
            "position": {"line": 0, "character": 0}})
        self.assertEqual(r["error"]["code"], -32602)
        c.open("file:///tmp/x.ss", "dim D = 4\n")
        c.diagnostics("file:///tmp/x.ss")
        r = c.request("textDocument/hover", {
            "textDocument": {"uri": "file:///tmp/x.ss"},
            "position": {"line": -1, "character": "x"}})
        self.assertEqual(r["error"]["code"], -32602)
        # A didChange of a document never opened: logged, nothing breaks.
        c.notify("textDocument/didChange", {
            "textDocument": {"uri": "file:///nope.ss", "version": 2},
            "contentChanges": [{"text": "x"}]})
        self.assertIsNone(c.request("shutdown")["result"])


class Framing(Session):
    def test_header_split_over_writes(self):
        c = self.start()
        data = c.frame({"jsonrpc": "2.0", "id": 7, "method": "shutdown"})
        pieces = [data[:3], data[3:9], data[9:17], data[17:-4], data[-4:]]
        for p in pieces:
            c.send_raw(p)
            time.sleep(0.05)
        self.assertIsNone(c.response(7)["result"])

    def test_two_messages_in_one_write(self):
        c = self.start()
        a = c.frame({"jsonrpc": "2.0", "id": 11, "method": "nope/a"})
        b = c.frame({"jsonrpc": "2.0", "id": 12, "method": "nope/b"})
        c.send_raw(a + b)
        self.assertEqual(c.response(11)["error"]["code"], -32601)
        self.assertEqual(c.response(12)["error"]["code"], -32601)

    def test_bad_json_is_a_parse_error(self):
        c = self.start()
        body = b'{"jsonrpc": "2.0", "id": 1, "method": '
        c.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        r = c._take(lambda m: "error" in m and m.get("id") is None, 20,
                    "a parse error")
        self.assertEqual(r["error"]["code"], -32700)
        for body in (b"[1, 2]", b"42", b'{"id": 5}'):
            c.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.assertIsNone(c.request("shutdown")["result"])

    def test_invalid_utf8_is_a_parse_error_and_the_server_goes_on(self):
        # Issue 32 item 10: inside a well-framed message, bytes that are
        # not UTF-8 (a 0xff, an overlong '/', a lone surrogate escape, and
        # a document's text) get a JSON-RPC error, never the server's end.
        c = self.start()
        for body in (
                b'{"jsonrpc": "2.0", "id": 1, "method": "nope\xff"}',
                b'{"jsonrpc": "2.0", "id": 2, "method": "nope", '
                b'"params": {"x": "\xc0\xaf"}}',
                b'{"jsonrpc": "2.0", "id": 3, "method": "nope", '
                b'"params": {"x": "\\ud800"}}',
                b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", '
                b'"params": {"textDocument": {"uri": "file:///tmp/u.ss", '
                b'"languageId": "shapescript", "version": 1, '
                b'"text": "fn main():\\n    print(\xff)\\n"}}}'):
            c.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            r = c._take(lambda m: "error" in m and m.get("id") is None, 20,
                        "a parse error")
            self.assertEqual(r["error"]["code"], -32700, body)
        self.assertIsNone(c.request("shutdown")["result"])

    def test_deep_nesting_is_a_parse_error_and_costs_nothing(self):
        # Issue 32 item 10: params nested 20 MB deep took 1.9 GB. Past 64
        # levels a message is refused unparsed; the server goes on.
        c = self.start()
        deep = b"[" * 10_000_000 + b"]" * 10_000_000
        body = (b'{"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover",'
                b' "params": ' + deep + b"}")
        c.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        r = c._take(lambda m: "error" in m and m.get("id") is None, 20,
                    "a parse error")
        self.assertEqual(r["error"]["code"], -32700)
        self.assertIn("nests deeper than 64 levels", r["error"]["message"])
        # 64 levels inside a string are text, not nesting.
        text = "[" * 100
        r = c.request("nope", {"x": text})
        self.assertEqual(r["error"]["code"], -32601)
        self.assertIsNone(c.request("shutdown")["result"])

    def test_bad_content_length_skips_to_the_next_header(self):
        c = self.start()
        good = c.frame({"jsonrpc": "2.0", "id": 21, "method": "nope"})
        for bad in (b"Content-Length: abc\r\n\r\n{}",
                    b"Content-Length: -5\r\n\r\n{}",
                    b"Content-Length: 99999999999\r\n\r\n{}",
                    b"Content-Type: x\r\n\r\n{}"):
            c.send_raw(bad + b"\r\n" + good)
            self.assertEqual(c.response(21)["error"]["code"], -32601)
        self.assertEqual(c.wait(0.5), None)  # still serving

    def test_input_ending_inside_a_frame(self):
        c = self.start()
        c.send_raw(b"Content-Length: 500\r\n\r\n{\"jsonrpc\"")
        c.proc.stdin.close()
        self.assertEqual(c.wait(), 1)  # ends, no hang, no crash
        self.assertEqual(c.frame_errors, [])


# errors.md's codes, each from a program written to have that error.
UNKNOWN_NAME = """dim D = 4

fn f(x: [D]) -> [D]:
    print("é😀", y)
    return x
"""

DECLARED_TWICE = """fn g(n: int) -> int:
    let a = n
    let a = n + 1
    return a
"""


class Diagnostics(Session):
    def test_an_error_with_its_code_and_utf16_range(self):
        c = self.start()
        uri = uri_of(os.path.join(self.tmp(), "u.ss"))
        c.open(uri, UNKNOWN_NAME)
        d = c.diagnostics(uri)["diagnostics"]
        self.assertEqual(len(d), 1)
        self.assertEqual(d[0]["code"], "E0201")  # unknown name
        self.assertEqual(d[0]["severity"], 1)
        self.assertIn("`y`", d[0]["message"])
        # y follows é (2 bytes, 1 unit) and 😀 (4 bytes, 2 units): UTF-16
        # column 17, byte column 21.
        self.assertEqual(d[0]["range"], rng(UNKNOWN_NAME, "y)", length=1))
        self.assertEqual(d[0]["range"]["start"], {"line": 3,
                                                  "character": 17})

    def test_notes_and_help(self):
        c = self.start()
        uri = uri_of(os.path.join(self.tmp(), "d.ss"))
        c.open(uri, DECLARED_TWICE)
        d = c.diagnostics(uri)["diagnostics"]
        self.assertEqual([x["code"] for x in d], ["E0202"])
        # The second `let a` (line 2), its note at the first (line 1).
        self.assertEqual(d[0]["range"], rng(DECLARED_TWICE, "a", 1))
        rel = d[0]["relatedInformation"]
        self.assertEqual(rel[0]["location"]["uri"], uri)
        self.assertEqual(rel[0]["location"]["range"],
                         rng(DECLARED_TWICE, "a", 0))
        self.assertIn("first declared", rel[0]["message"])
        self.assertIn("\nhelp: use `a = ...` to rebind it", d[0]["message"])

    def test_every_error_of_the_file(self):
        text = UNKNOWN_NAME + "\n" + DECLARED_TWICE
        c = self.start()
        uri = uri_of(os.path.join(self.tmp(), "two.ss"))
        c.open(uri, text)
        d = c.diagnostics(uri)["diagnostics"]
        self.assertEqual(sorted(x["code"] for x in d), ["E0201", "E0202"])

    def test_cleared_when_fixed_incrementally_and_in_full(self):
        c = self.start()
        uri = uri_of(os.path.join(self.tmp(), "fix.ss"))
        c.open(uri, UNKNOWN_NAME)
        self.assertEqual(len(c.diagnostics(uri)["diagnostics"]), 1)
        # Replace `y` by `x`: an incremental change in UTF-16 positions.
        c.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": rng(UNKNOWN_NAME, "y)", length=1),
                                "text": "x"}]})
        p = c.diagnostics(uri)
        self.assertEqual(p["diagnostics"], [])
        self.assertEqual(p["version"], 2)
        # Breaking it again with a full text brings the error back.
        c.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": 3},
            "contentChanges": [{"text": UNKNOWN_NAME}]})
        self.assertEqual([x["code"] for x in c.diagnostics(uri)["diagnostics"]],
                         ["E0201"])

    def test_a_parse_error(self):
        c = self.start()
        uri = uri_of(os.path.join(self.tmp(), "p.ss"))
        text = "fn f(x: [D) -> f32:\n    return 1.0\n"
        c.open(uri, text)
        d = c.diagnostics(uri)["diagnostics"]
        self.assertTrue(d and all(x["code"].startswith("E01") for x in d), d)
        # Hover and definition on a file that does not parse: null, no crash.
        self.assertIsNone(c.at("textDocument/hover", uri, 0, 3)["result"])
        self.assertIsNone(c.at("textDocument/definition", uri, 0, 3)["result"])

    def test_imports_resolve_relative_to_the_document(self):
        d = self.tmp()
        os.mkdir(os.path.join(d, "sub"))
        lib = "fn double(n: int) -> int = n * 2\n"
        with open(os.path.join(d, "sub", "lib.ss"), "w") as f:
            f.write(lib)
        main = 'import "lib.ss"\n\nfn main():\n    print(double(21))\n'
        c = self.start()
        uri = uri_of(os.path.join(d, "sub", "main.ss"))
        c.open(uri, main)
        self.assertEqual(c.diagnostics(uri)["diagnostics"], [])
        r = c.at("textDocument/definition", uri, *pos(main, "double"))
        self.assertEqual(r["result"]["uri"],
                         uri_of(os.path.join(d, "sub", "lib.ss")))
        self.assertEqual(r["result"]["range"], rng(lib, "double"))
        # lib.ss open in the editor: its unsaved text is what main imports,
        # and main is checked again on each change of it (opened as it is
        # on disk, it changes nothing for main: no check, Note [Checks when
        # the input is quiet]).
        lib_uri = uri_of(os.path.join(d, "sub", "lib.ss"))
        c.open(lib_uri, lib)
        self.assertEqual(c.diagnostics(lib_uri)["diagnostics"], [])
        c.notify("textDocument/didChange", {
            "textDocument": {"uri": lib_uri, "version": 2},
            "contentChanges": [{"text": lib.replace("double", "triple")}]})
        self.assertEqual(c.diagnostics(lib_uri)["diagnostics"], [])
        self.assertEqual([x["code"] for x in c.diagnostics(uri)
                          ["diagnostics"]], ["E0201"])  # no `double` now
        # Closed unsaved: main reads the disk's lib.ss again.
        c.notify("textDocument/didClose", {"textDocument": {"uri": lib_uri}})
        self.assertEqual(c.diagnostics(lib_uri)["diagnostics"], [])
        self.assertEqual(c.diagnostics(uri)["diagnostics"], [])
        # lib.ss rewritten on disk, then opened: main sees the new text.
        with open(os.path.join(d, "sub", "lib.ss"), "w") as f:
            f.write("fn triple(n: int) -> int = n * 3\n")
        c.open(lib_uri, "fn triple(n: int) -> int = n * 3\n")
        self.assertEqual(c.diagnostics(lib_uri)["diagnostics"], [])
        self.assertEqual([x["code"] for x in c.diagnostics(uri)
                          ["diagnostics"]], ["E0201"])
        # The same text elsewhere does not find lib.ss: E0204.
        other = uri_of(os.path.join(d, "main.ss"))
        c.open(other, main)
        self.assertEqual([x["code"] for x in c.diagnostics(other)
                          ["diagnostics"]], ["E0204"])


    def test_an_imported_files_errors_go_to_its_uri(self):
        d = self.tmp()
        lib_path = os.path.join(d, "lib.ss")
        with open(lib_path, "w") as f:
            f.write("fn broken(n: int) -> int = m\n")
        main = 'import "lib.ss"\n\nfn main():\n    print(1)\n'
        c = self.start()
        uri = uri_of(os.path.join(d, "main.ss"))
        c.open(uri, main)
        lib = c.diagnostics(uri_of(lib_path))["diagnostics"]
        self.assertEqual([x["code"] for x in lib], ["E0201"])
        self.assertEqual(lib[0]["range"]["start"], {"line": 0,
                                                    "character": 27})
        self.assertEqual(c.diagnostics(uri)["diagnostics"], [])
        # The import removed: what was said about lib.ss is cleared.
        c.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"text": main.replace('import "lib.ss"', "")}]})
        self.assertEqual(c.diagnostics(uri_of(lib_path))["diagnostics"], [])


class Hover(Session):
    def test_value_and_grad_line_on_three_devices(self):
        c, uri, text = self.open_readme("cpu[0 1 2]")
        v = self.hover_text(c, uri, text, "value_and_grad(loss")
        self.assertTrue(v.rstrip().endswith(README_BLOCK), v)
        # Anywhere on the line: the local `l` too.
        v = self.hover_text(c, uri, text, "l, g =")
        self.assertIn("l: f32", v)
        self.assertTrue(v.rstrip().endswith(README_BLOCK), v)

    def test_types_with_dim_sizes(self):
        c, uri, text = self.open_readme()
        v = self.hover_text(c, uri, text, "x @ m.w1")
        self.assertIn("x: [b D]", v)
        self.assertIn("D = 784", v)
        v = self.hover_text(c, uri, text, "w1)", delta=1)
        self.assertIn("m.w1: [D Hd]", v)
        self.assertIn("D = 784, Hd = 256", v)
        v = self.hover_text(c, uri, text, "logits =")
        self.assertIn("logits: [b C]", v)
        self.assertIn("C = 10", v)
        v = self.hover_text(c, uri, text, "batch: [b] Digit")
        self.assertIn("batch: [b] Digit", v)
        # One device: no layout, no block.
        self.assertNotIn("split across", v)
        v = self.hover_text(c, uri, text, "value_and_grad(loss")
        self.assertNotIn("Sent between", v)

    def test_layouts_on_three_devices(self):
        c, uri, text = self.open_readme("cpu[0 1 2]")
        # docs/explain.md's words for the README's values.
        v = self.hover_text(c, uri, text, "batch: [b] Digit", 1)
        self.assertIn("split across the 3 devices along b, each holding its "
                      "share of the batch (22/21/21 for a batch of 64)", v)
        v = self.hover_text(c, uri, text, "m: Mlp", 1)
        self.assertIn("a copy on every device: 813,056 bytes (794 KiB) of "
                      "params and buffers each", v)

    def test_mesh_program_simulated(self):
        # A mesh program on `devices cpu` (its 8 instances simulated):
        # docs/explain.md's words for the basic matmul. a's block on x=4
        # y=2 with M = 8, K = 16, N = 4 is [2 8], the partial product
        # [2 4]: psum over y hands 8 f32 = 32 bytes (counted by hand).
        text = ("devices cpu\nmesh x=4 y=2\n\ndim M = 8\ndim K = 16\n"
                "dim N = 4\n\n"
                "spmd fn matmul(a: [M/x K/y], b: [K/y N]) -> [M/x N]:\n"
                "    let c = a @ b\n"
                "    return psum(c, y)\n")
        c, uri = self.open_clean(text, "mesh.ss")
        v = self.hover_text(c, uri, text, "psum(")
        self.assertTrue(v.rstrip().endswith(
            "Sent between the 8 instances on this line, per call:\n\n"
            "- all-reduce over y of `c` (psum), which adds up the 2 "
            "instances' blocks along y:\n  8 × f32 = 32 bytes\n\n"
            "In all: 32 bytes."), v)
        v = self.hover_text(c, uri, text, "b: [K/y N]")
        self.assertIn("On cpu: blocks split over y: each instance holds 8 of "
                      "K = 16; the same on every instance along x.", v)

    def test_devices_from_the_files_devices_line(self):
        c = self.start()
        text = self.readme().replace("devices cpu\n", "devices cpu[0 1 2]\n")
        self.assertIn("devices cpu[0 1 2]", text)
        uri = uri_of(os.path.join(self.tmp(), "three.ss"))
        c.open(uri, text)
        self.assertEqual(c.diagnostics(uri)["diagnostics"], [])
        v = self.hover_text(c, uri, text, "value_and_grad(loss")
        self.assertTrue(v.rstrip().endswith(README_BLOCK), v)
        v = self.hover_text(c, uri, text, "logits =")
        self.assertIn("split across the 3 devices along b", v)

    def test_devices_from_the_command_line(self):
        c = self.start(args=("--devices", "cpu[0 1 2]"))
        uri = uri_of(os.path.join(SRC, "examples", "readme_mlp.ss"))
        text = self.readme()
        c.open(uri, text)
        c.diagnostics(uri)
        v = self.hover_text(c, uri, text, "value_and_grad(loss")
        self.assertTrue(v.rstrip().endswith(README_BLOCK), v)

    def test_fn_dim_builtin(self):
        c, uri, text = self.open_readme()
        v = self.hover_text(c, uri, text, "forward(m, batch")
        self.assertIn("fn forward(m: Mlp, x: [b D]) -> [b C]", v)
        # What this call binds: loss's own b.
        self.assertIn("here: b = b; the result is [b C]", v)
        v = self.hover_text(c, uri, text, "D))")
        self.assertIn("dim D = 784", v)
        v = self.hover_text(c, uri, text, "relu(")
        self.assertIn("relu(", v)

    def test_bindings_at_a_call(self):
        text = ("dim D = 4\n\nfn f(x: [n D]) -> [n] = sum(x, over=D)\n\n"
                "fn g() -> [3]:\n    return f(zeros([3 D]))\n")
        c, uri = self.open_clean(text, "b.ss")
        v = self.hover_text(c, uri, text, "f(zeros")
        self.assertIn("fn f(x: [n D]) -> [n]", v)
        self.assertIn("here: n = 3; the result is [3]", v)

    def test_inside_a_comprehension(self):
        text = ("dim D = 4\n\nfn f(xs: list[int]) -> list[float]:\n"
                "    return [float(x) for x in xs]\n")
        c, uri = self.open_clean(text, "c.ss")
        self.assertIn("xs: list[int]", self.hover_text(c, uri, text, "xs]"))
        self.assertIn("float(", self.hover_text(c, uri, text, "float(x"))
        self.assertIn("x: int", self.hover_text(c, uri, text, "x) for"))

    def test_hover_after_non_ascii(self):
        text = 'fn f(n: int) -> int:\n    print("é😀", n)\n    return n\n'
        c, uri = self.open_clean(text, "h.ss")
        v = self.hover_text(c, uri, text, "n)")
        self.assertIn("n: int", v)
        r = c.at("textDocument/hover", uri, *pos(text, "n)"))
        self.assertEqual(r["result"]["range"], rng(text, "n)", length=1))

    def test_hover_in_a_file_with_an_error_elsewhere(self):
        text = UNKNOWN_NAME + "\nfn h(z: [D]) -> [D] = z\n"
        c = self.start()
        uri = uri_of(os.path.join(self.tmp(), "e.ss"))
        c.open(uri, text)
        self.assertEqual(len(c.diagnostics(uri)["diagnostics"]), 1)
        v = self.hover_text(c, uri, text, "z\n")
        self.assertIn("z: [D]", v)


class Definition(Session):
    def definition(self, c, uri, text, needle, nth=0, delta=0):
        r = c.at("textDocument/definition", uri, *pos(text, needle, nth, delta))
        self.assertIsNotNone(r["result"], "no definition at %r" % needle)
        self.assertEqual(r["result"]["uri"], uri)
        return r["result"]["range"]

    def test_every_kind_of_name(self):
        c, uri, text = self.open_readme()
        cases = [
            # (where the cursor is, the declaration's name)
            (("forward(m, batch.img)",), ("forward", 0)),  # fn
            (("D]", 1), ("D", 0)),                          # dim in a type
            (("D))",), ("D", 0)),                           # dim as a value
            (("Digit) -> f32",), ("Digit", 0)),             # data record
            (("Mlp, x",), ("Mlp", 0)),                      # model
            (("img)",), ("img", 0)),                        # record field
            (("w1)",), ("w1", 0)),                          # model field
            (("logits, batch",), ("logits", 0)),            # local
            (("batch.img)", 0), ("batch: [b] Digit", 0)),    # param
            (("g)\n",), ("g =", 0)),                        # unpacked local
        ]
        for (needle, *rest), (decl, nth) in cases:
            at = (needle,) + tuple(rest)
            got = self.definition(c, uri, text, *at)
            l, ch = pos(text, decl, nth)
            name = decl.split(":")[0].split(" ")[0]
            self.assertEqual(got, {"start": {"line": l, "character": ch},
                                   "end": {"line": l,
                                           "character": ch + utf16(name)}},
                             "definition at %r" % (at,))

    def test_nothing_to_find(self):
        c, uri, text = self.open_readme()
        r = c.at("textDocument/definition", uri, *pos(text, "relu"))
        self.assertIsNone(r["result"])  # a builtin
        r = c.at("textDocument/definition", uri, 1, 0)
        self.assertIsNone(r["result"])  # an empty line


class Completion(Session):
    def labels(self, c, uri, line, character):
        r = c.at("textDocument/completion", uri, line, character)
        return {i["label"] for i in r["result"]["items"]}

    def test_builtins_from_the_op_table(self):
        c, uri, text = self.open_readme()
        listed = subprocess.run([SS, "check", "--list-builtins"],
                                capture_output=True, text=True, check=True)
        builtins = {l.split("\t")[0] for l in listed.stdout.splitlines()}
        self.assertIn("value_and_grad", builtins)
        got = self.labels(c, uri, *pos(text, "    update", delta=4))
        self.assertLessEqual(builtins, got)
        # The program's names and the fn's locals too.
        self.assertLessEqual({"forward", "Mlp", "Digit", "D", "l", "g",
                              "batch", "let", "return"}, got)

    def test_fields_after_a_dot(self):
        c, uri, text = self.open_readme()
        # Type `batch.` on a new line of loss: the text no longer checks,
        # the fields come from the last program.
        l, _ = pos(text, "    return cross_entropy(forward")
        edit = {"range": {"start": {"line": l, "character": 0},
                          "end": {"line": l, "character": 0}},
                "text": "    let z = batch.\n"}
        c.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [edit]})
        self.assertNotEqual(c.diagnostics(uri)["diagnostics"], [])
        self.assertEqual(self.labels(c, uri, l, len("    let z = batch.")),
                         {"img", "label"})
        # A model's fields, in the program that checks.
        c.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": 3},
            "contentChanges": [{"text": text}]})
        self.assertEqual(c.diagnostics(uri)["diagnostics"], [])
        l, ch = pos(text, "m.w1", delta=2)
        self.assertEqual(self.labels(c, uri, l, ch), {"w1", "w2"})


def apply_edits(text, edits):
    """[text] with LSP TextEdits applied (ranges in the original text, UTF-16
    columns; `ss fmt`'s edits are whole lines)."""
    lines = text.splitlines(keepends=True)

    def offset(p):
        before = "".join(lines[:p["line"]])
        line = lines[p["line"]] if p["line"] < len(lines) else ""
        return len(before) + len(line.encode("utf-16-le")[:2 * p["character"]]
                                 .decode("utf-16-le"))
    for e in sorted(edits, key=lambda e: (e["range"]["start"]["line"],
                                          e["range"]["start"]["character"]),
                    reverse=True):
        a, b = offset(e["range"]["start"]), offset(e["range"]["end"])
        text = text[:a] + e["newText"] + text[b:]
        lines = text.splitlines(keepends=True)
    return text


class Formatting(Session):
    """textDocument/formatting and /rangeFormatting give `ss fmt`'s layout
    (the CLI, run as a process, is the oracle), as edits of only the lines
    that change."""

    MESSY = ("dim D=4\n"
             "dim C  = 2\n"
             "model M:\n"
             "    w: [D C] = normal(std=1/sqrt(D))   # init\n"
             "fn f(m: M, x: [b D]) -> [b C]:\n"
             "    return x @ m.w\n"
             "fn g(m: M, x: [b D]) -> [b C]:\n"
             "    let y=f(m,x)\n"
             "    return y*2.0\n")

    def fmt_cli(self, text):
        return subprocess.run([SS, "fmt", "-"], input=text,
                              capture_output=True, text=True,
                              check=True).stdout

    def test_capabilities(self):
        c = self.start(init=False)
        caps = c.initialize()["result"]["capabilities"]
        self.assertTrue(caps["documentFormattingProvider"])
        self.assertTrue(caps["documentRangeFormattingProvider"])

    def test_document(self):
        c, uri = self.open_clean(self.MESSY, "m.ss")
        r = c.request("textDocument/formatting",
                      {"textDocument": {"uri": uri},
                       "options": {"tabSize": 2, "insertSpaces": True}})
        edits = r["result"]
        self.assertEqual(apply_edits(self.MESSY, edits),
                         self.fmt_cli(self.MESSY))
        # Only the lines that change are replaced: `fn f`'s header and
        # return, laid out already, stay (a blank line goes in above them).
        touched = set()
        for e in edits:
            touched.update(range(e["range"]["start"]["line"],
                                 e["range"]["end"]["line"]))
        self.assertNotIn(4, touched)
        self.assertNotIn(5, touched)

    def test_formatted_and_unparsable_documents_have_no_edits(self):
        text = self.fmt_cli(self.MESSY)
        c, uri = self.open_clean(text, "ok.ss")
        r = c.request("textDocument/formatting",
                      {"textDocument": {"uri": uri}, "options": {}})
        self.assertEqual(r["result"], [])
        bad = uri_of(os.path.join(self.tmp(), "bad.ss"))
        c.open(bad, "fn f(:\n")  # being typed: it does not parse
        r = c.request("textDocument/formatting",
                      {"textDocument": {"uri": bad}, "options": {}})
        self.assertEqual(r["result"], [])

    def test_range_takes_the_declarations_it_touches(self):
        c, uri = self.open_clean(self.MESSY, "m.ss")
        # Lines 7-8: inside fn g. Only fn g is laid out.
        r = c.request("textDocument/rangeFormatting",
                      {"textDocument": {"uri": uri},
                       "range": {"start": {"line": 7, "character": 4},
                                 "end": {"line": 7, "character": 9}},
                       "options": {}})
        got = apply_edits(self.MESSY, r["result"])
        want_g = "fn g(m: M, x: [b D]) -> [b C]:\n" \
                 "    let y = f(m, x)\n    return y * 2.0\n"
        self.assertTrue(got.endswith("\n\n" + want_g), got)
        self.assertTrue(got.startswith("dim D=4\ndim C  = 2\n"), got)
        # Above g nothing changed but the blank line that goes with g.
        self.assertIn("std=1/sqrt(D))   # init\nfn f", got)


class Symbols(Session):
    """The outline and the workspace's symbols, checked against the
    README example's declarations as written (hand-listed)."""

    def test_document_outline(self):
        c, uri, text = self.open_readme()
        r = c.request("textDocument/documentSymbol",
                      {"textDocument": {"uri": uri}})["result"]
        names = [(s["name"], s["kind"]) for s in r]
        self.assertEqual(names, [
            ("devices cpu", 3), ("D", 14), ("Hd", 14), ("C", 14),
            ("Digit", 23), ("Mlp", 5), ("forward", 12), ("loss", 12),
            ("train_step", 12), ("evaluate", 12), ("run", 12),
            ("main", 12)])
        digit = r[4]
        self.assertEqual([f["name"] for f in digit["children"]],
                         ["img", "label"])
        self.assertEqual(digit["children"][0]["detail"], "[D]")
        forward = r[6]
        self.assertEqual(forward["detail"],
                         "fn forward(m: Mlp, x: [b D]) -> [b C]")
        # The selection is the name; the range the whole fn, body included.
        l, ch = pos(text, "forward(m: Mlp")
        self.assertEqual(forward["selectionRange"]["start"],
                         {"line": l, "character": ch})
        self.assertEqual(forward["range"]["end"]["line"],
                         pos(text, "return relu")[0])

    def test_workspace_symbols_match_in_order_ignoring_case(self):
        c, uri, text = self.open_readme()
        other = uri_of(os.path.join(self.tmp(), "o.ss"))
        c.open(other, "dim TRAIN_SIZE = 3\n")
        r = c.request("workspace/symbol", {"query": "trs"})["result"]
        got = sorted((s["name"], s["location"]["uri"]) for s in r)
        self.assertEqual(got, [("TRAIN_SIZE", other),
                               ("train_step", uri)])
        r = c.request("workspace/symbol", {"query": "img"})["result"]
        self.assertEqual([(s["name"], s["containerName"]) for s in r],
                         [("img", "Digit")])


class SignatureHelp(Session):
    def help_at(self, c, uri, text, needle, delta=0):
        r = c.at("textDocument/signatureHelp", uri,
                 *pos(text, needle, 0, delta))
        self.assertNotIn("error", r)
        return r["result"]

    def test_fns_and_builtins(self):
        c, uri, text = self.open_readme()
        # Inside forward(m, batch.img): the second parameter.
        h = self.help_at(c, uri, text, "batch.img), batch.label")
        sig = h["signatures"][0]
        self.assertEqual(sig["label"],
                         "fn forward(m: Mlp, x: [b D]) -> [b C]")
        self.assertEqual(h["activeParameter"], 1)
        a, b = sig["parameters"][1]["label"]
        self.assertEqual(sig["label"][a:b], "x: [b D]")
        # A builtin, by keyword: argmax(logits, over=C) at `C`.
        h = self.help_at(c, uri, text, "C) == batch")
        sig = h["signatures"][0]
        self.assertTrue(sig["label"].startswith("argmax(x"), sig["label"])
        self.assertIn("documentation", sig)
        # The builtins reference's signature (docs/reference/builtins.md).
        self.assertEqual(sig["label"], "argmax(x, [over=], [keepdim=])")
        a, b = sig["parameters"][h["activeParameter"]]["label"]
        self.assertEqual(sig["label"][a:b], "[over=]")
        # A method call: train.batches(64, ...): the receiver is the first.
        h = self.help_at(c, uri, text, "64, shuffle")
        self.assertEqual(h["activeParameter"], 1)
        # Outside any call: nothing.
        self.assertIsNone(self.help_at(c, uri, text, "dim D"))

    def test_while_typing_an_unclosed_call(self):
        c, uri, text = self.open_readme()
        typed = text.replace("    let logits = forward(m, batch.img)\n",
                             "    let logits = forward(m, \n")
        c.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"text": typed}]})
        c.diagnostics(uri)
        l, ch = pos(typed, "forward(m, \n", 0, len("forward(m, "))
        r = c.at("textDocument/signatureHelp", uri, l, ch)["result"]
        self.assertEqual(r["signatures"][0]["label"],
                         "fn forward(m: Mlp, x: [b D]) -> [b C]")
        self.assertEqual(r["activeParameter"], 1)


class SemanticTokens(Session):
    """Highlighting by meaning (Note [Highlighting by meaning]): the README
    example's names, each with the type a reader gives it (hand-listed)."""

    def decode(self, c, text, data):
        legend = self.legend
        out, line, col = {}, 0, 0
        lines = text.splitlines()
        for i in range(0, len(data), 5):
            dl, dc, n, t, m = data[i:i + 5]
            line += dl
            col = col + dc if dl == 0 else dc
            word = lines[line][col:col + n]
            mods = {legend["tokenModifiers"][b]
                    for b in range(len(legend["tokenModifiers"]))
                    if m & (1 << b)}
            out.setdefault(word, []).append(
                (line, col, legend["tokenTypes"][t], mods))
        return out

    def full(self, c, uri):
        return c.request("textDocument/semanticTokens/full",
                         {"textDocument": {"uri": uri}})["result"]

    def test_readme(self):
        c = self.start(init=False)
        caps = c.initialize()["result"]["capabilities"]
        self.legend = caps["semanticTokensProvider"]["legend"]
        self.assertTrue(caps["semanticTokensProvider"]["full"]["delta"])
        uri = uri_of(os.path.join(SRC, "examples", "readme_mlp.ss"))
        text = self.readme()
        c.open(uri, text)
        c.diagnostics(uri)
        tok = self.decode(c, text, self.full(c, uri)["data"])

        def kind(word, line_needle, nth=0):
            line = pos(text, line_needle)[0]
            got = [(t, m) for (l, _, t, m) in tok[word] if l == line]
            return got[nth]
        self.assertEqual(kind("devices", "devices cpu"), ("keyword", set()))
        self.assertEqual(kind("784", "dim D"), ("number", set()))
        self.assertEqual(kind("D", "dim D"),
                         ("enumMember", {"readonly", "declaration"}))
        self.assertEqual(kind("Mlp", "model Mlp"),
                         ("class", {"declaration"}))
        self.assertEqual(kind("Digit", "data Digit"),
                         ("struct", {"declaration"}))
        self.assertEqual(kind("img", "img: [D]"),
                         ("property", {"declaration"}))
        self.assertEqual(kind("forward", "fn forward"),
                         ("function", {"declaration"}))
        self.assertEqual(kind("m", "fn forward"),
                         ("parameter", {"declaration"}))
        self.assertEqual(kind("b", "fn forward"), ("typeParameter", set()))
        self.assertEqual(kind("D", "fn forward"), ("enumMember", {"readonly"}))
        self.assertEqual(kind("relu", "return relu"),
                         ("function", {"defaultLibrary"}))
        self.assertEqual(kind("w1", "return relu"), ("property", set()))
        # In loss, `b` is the batch axis of `batch: [b] Digit`.
        self.assertEqual(kind("b", "fn loss"), ("typeParameter", {"batch"}))
        self.assertEqual(kind("forward", "cross_entropy(forward"),
                         ("function", set()))
        self.assertEqual(kind("logits", "let logits"),
                         ("variable", {"declaration"}))
        self.assertEqual(kind("C", "over=C"), ("enumMember", {"readonly"}))
        self.assertEqual(kind('"train.csv"', "train.csv"), ("string", set()))

    def test_mesh_axes_comments_and_delta(self):
        c = self.start(init=False)
        self.legend = c.initialize()["result"]["capabilities"][
            "semanticTokensProvider"]["legend"]
        text = ("# the mesh\n"
                "mesh x=2\n\n"
                "dim M = 8\n\n"
                "spmd fn f(a: [m/x M]) -> [m/x M]:\n"
                "    return a * 2.0  # doubled\n")
        uri = uri_of(os.path.join(self.tmp(), "m.ss"))
        c.open(uri, text)
        c.diagnostics(uri)
        first = self.full(c, uri)
        tok = self.decode(c, text, first["data"])
        self.assertEqual(tok["# the mesh"], [(0, 0, "comment", set())])
        self.assertEqual(tok["# doubled"][0][2], "comment")
        self.assertEqual(tok["mesh"][0][2:], ("keyword", set()))
        self.assertIn((5, 16, "enumMember", {"mesh"}), tok["x"])
        self.assertIn((5, 14, "typeParameter", set()), tok["m"])
        # A change, then the delta from the first result: applied to the
        # first data it gives what a full request gives now.
        changed = text.replace("a * 2.0", "a * a")
        c.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"text": changed}]})
        c.diagnostics(uri)
        r = c.request("textDocument/semanticTokens/full/delta", {
            "textDocument": {"uri": uri},
            "previousResultId": first["resultId"]})["result"]
        self.assertIn("edits", r)
        data = list(first["data"])
        for e in sorted(r["edits"], key=lambda e: -e["start"]):
            data[e["start"]:e["start"] + e["deleteCount"]] = e.get("data", [])
        self.assertEqual(data, self.full(c, uri)["data"])
        # An unknown previous result gets the full data.
        r = c.request("textDocument/semanticTokens/full/delta", {
            "textDocument": {"uri": uri}, "previousResultId": "nope"})
        self.assertIn("data", r["result"])


class QuickFixes(Session):
    """Each diagnostic whose help line names a fix offers it; applied, the
    program checks clean (`ss check`, a process, is the judge)."""

    HEAD = ("dim D = 4\n\n"
            "model M:\n"
            "    w: [D D] = normal(std=0.1)\n\n")
    CASES = [
        # (code, the body, the fixed line it must contain)
        ("E0203", "fn f(m: M, x: [b D]) -> [b D]:\n    return x @ m.ww\n",
         "return x @ m.w\n"),
        ("E0201", "fn f(m: M, x: [b D]) -> [b D]:\n    return xx @ m.w\n",
         "return x @ m.w\n"),
        ("E0201", "fn f(m: MM, x: [b D]) -> [b D]:\n    return x @ m.w\n",
         "fn f(m: M, x"),
        ("E0401", "fn step(m: M, mut opt: AdamW[M], g: Grads[M]):\n"
                  "    update(m, opt, g)\n",
         "fn step(mut m: M,"),
        ("E0202", "fn f(x: [b D]) -> [b D]:\n    let y = x\n"
                  "    let y = x * 2.0\n    return y\n",
         "    y = x * 2.0\n"),
        ("E0305", "fn f(x: [b D]) -> [b 1]:\n"
                  "    return sum(x, ovr=D, keepdim=true)\n",
         "sum(x, over=D, keepdim=true)"),
        ("E0305", "fn h(x: [b D], scale: float = 1.0) -> [b D] = x * scale"
                  "\n\nfn f(x: [b D]) -> [b D]:\n"
                  "    return h(x, scal=2.0)\n",
         "h(x, scale=2.0)"),
        ("E0201", "fn f(x: [b D]) -> [b D]:\n    let value = x\n"
                  "    valeu = x * 2.0\n    return value\n",
         "    value = x * 2.0\n"),
        ("E0304", "fn h(x: [b D]) -> [b D] = x\n\n"
                  "fn f(x: [b D]) -> [b D]:\n    return h(to(x, f64))\n",
         "return h(to(to(x, f64), f32))"),
    ]

    def test_each_fix_applies_and_checks(self):
        for code, body, want in self.CASES:
            text = self.HEAD + body
            c = self.start()
            uri = uri_of(os.path.join(self.tmp(), "q.ss"))
            c.open(uri, text)
            diags = c.diagnostics(uri)["diagnostics"]
            self.assertEqual([d["code"] for d in diags], [code], body)
            r = c.request("textDocument/codeAction", {
                "textDocument": {"uri": uri}, "range": diags[0]["range"],
                "context": {"diagnostics": diags}})["result"]
            self.assertEqual(len(r), 1, body)
            self.assertEqual(r[0]["kind"], "quickfix")
            self.assertEqual(r[0]["diagnostics"][0]["code"], code)
            fixed = apply_edits(text, r[0]["edit"]["changes"][uri])
            self.assertIn(want, fixed)
            d = self.tmp()
            self.assert_checks_clean(d, "q.ss", fixed)
            c.kill()

    def test_an_import_of_the_file_beside_that_declares_it(self):
        d = self.tmp()
        with open(os.path.join(d, "layers.ss"), "w") as f:
            f.write("dim D = 4\n\nfn double(x: [b D]) -> [b D] = x * 2.0\n")
        with open(os.path.join(d, "other.ss"), "w") as f:
            f.write("fn triple(x: [b D]) -> [b D] = x * 3.0\n")
        text = "fn f(x: [b D]) -> [b D]:\n    return double(x)\n"
        c, uri = self.start(), uri_of(os.path.join(d, "main.ss"))
        c.open(uri, text)
        diags = c.diagnostics(uri)["diagnostics"]
        unknown = [x for x in diags if "double" in x["message"]]
        self.assertEqual(unknown[0]["code"], "E0201")
        r = c.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": unknown[0]["range"],
            "context": {"diagnostics": diags}})["result"]
        self.assertEqual([a["title"] for a in r], ['Import "layers.ss"'])
        fixed = apply_edits(text, r[0]["edit"]["changes"][uri])
        self.assertTrue(fixed.startswith('import "layers.ss"\n'), fixed)
        self.assert_checks_clean(d, "main.ss", fixed)

    def test_no_fix_where_the_help_names_none(self):
        text = self.HEAD + ("fn f(m: M, x: [b D]) -> [b D]:\n"
                            "    return x @ m.w @ m.w @ zz9q\n")
        c, uri = self.start(), uri_of(os.path.join(self.tmp(), "n.ss"))
        c.open(uri, text)
        diags = c.diagnostics(uri)["diagnostics"]
        self.assertEqual(diags[0]["code"], "E0201")
        self.assertNotIn("did you mean", diags[0]["message"])
        r = c.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": diags[0]["range"],
            "context": {"diagnostics": diags}})["result"]
        self.assertEqual(r, [])


class InlayHints(Session):
    def hints(self, c, uri, text):
        lines = text.count("\n")
        r = c.request("textDocument/inlayHint", {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0},
                      "end": {"line": lines, "character": 0}}})["result"]
        out = {}
        for h in r:
            line = text.splitlines()[h["position"]["line"]]
            name = line[:h["position"]["character"]].split()[-1]
            out[name.strip(",")] = h["label"]
        return out

    def test_types_on_one_device(self):
        c, uri, text = self.open_readme()
        h = self.hints(c, uri, text)
        # As `ss check --types` prints them (hand-read from the program).
        self.assertEqual(h["logits"], ": [b C]")
        self.assertEqual(h["l"], ": f32")
        self.assertEqual(h["g"], ": Grads[Mlp]")
        self.assertEqual(h["epoch"], ": int")
        self.assertEqual(h["opt"], ": AdamW[Mlp]")

    def test_layouts_on_several_devices(self):
        c, uri, text = self.open_readme("cpu[0 1 2]")
        h = self.hints(c, uri, text)
        self.assertEqual(h["logits"], ": [b C] · split along b")
        self.assertTrue(h["m"].startswith(": Mlp · "), h["m"])


class References(Session):
    SCOPES = ("dim D = 4\n"
              "\n"
              "model M:\n"
              "    w: [D D] = normal(std=0.1)\n"
              "\n"
              "fn f(m: M, x: [b D]) -> [b D]:\n"
              "    let y = x @ m.w\n"
              "    return y + sum(y, over=D, keepdim=true)\n"
              "\n"
              "fn g(m: M, x: [b D]) -> [b D]:\n"
              "    let y = f(m, x)\n"
              "    let z = rearrange(y, b D -> b D)\n"
              "    return z * m.w[0]\n")

    def refs(self, c, uri, text, needle, nth=0, decl=True):
        l, ch = pos(text, needle, nth)
        r = c.request("textDocument/references", {
            "textDocument": {"uri": uri},
            "position": {"line": l, "character": ch},
            "context": {"includeDeclaration": decl}})["result"]
        return sorted((x["range"]["start"]["line"],
                       x["range"]["start"]["character"]) for x in r)

    def test_by_meaning(self):
        text = self.SCOPES
        c, uri = self.open_clean(text, "s.ss")
        # f's local y: its declaration and its two uses, not g's y.
        self.assertEqual(self.refs(c, uri, text, "y = x"),
                         [(6, 8), (7, 11), (7, 19)])
        self.assertEqual(self.refs(c, uri, text, "y = x", decl=False),
                         [(7, 11), (7, 19)])
        # The dim D in the dim line, types, a pattern and over=.
        got = self.refs(c, uri, text, "D = 4")
        self.assertEqual(len(got), 1 + 2 + 2 + 1 + 2 + 2)
        self.assertIn((7, 27), got)   # over=D
        self.assertIn((11, 27), got)  # the pattern's D
        # A model field through m.w, from its declaration.
        self.assertEqual(self.refs(c, uri, text, "w: [D D]"),
                         [(3, 4), (6, 18), (12, 17)])
        # A fn from a call.
        self.assertEqual(self.refs(c, uri, text, "f(m, x)"),
                         [(5, 3), (10, 12)])

    def rename(self, c, uri, text, needle, new, nth=0):
        l, ch = pos(text, needle, nth)
        return c.request("textDocument/rename", {
            "textDocument": {"uri": uri},
            "position": {"line": l, "character": ch}, "newName": new})

    def test_rename_applies_and_checks(self):
        text = self.SCOPES
        c, uri = self.open_clean(text, "s.ss")
        r = self.rename(c, uri, text, "y = x", "h")
        renamed = apply_edits(text, r["result"]["changes"][uri])
        self.assertIn("    let h = x @ m.w\n    return h + sum(h, over=D,",
                      renamed)
        self.assertIn("    let y = f(m, x)", renamed)  # g's y stays
        r = self.rename(c, uri, text, "D = 4", "Dm")
        renamed = apply_edits(text, r["result"]["changes"][uri])
        self.assertNotIn(" D", renamed.replace("Dm", ""))
        # The renamed program checks clean.
        d = self.tmp()
        self.assert_checks_clean(d, "r.ss", renamed)

    def test_rename_models_and_records(self):
        c, uri, text = self.open_readme()
        d = self.tmp()
        for needle, new in (("Mlp:", "Net"), ("Digit:", "Example")):
            r = self.rename(c, uri, text, needle, new)
            renamed = apply_edits(text, r["result"]["changes"][uri])
            old = needle[:-1]
            self.assertNotIn(old, renamed)
            self.assertEqual(renamed.count(new), text.count(old), new)
            self.assert_checks_clean(d, "r.ss", renamed)

    def test_rename_refuses_to_capture(self):
        text = self.SCOPES
        c, uri = self.open_clean(text, "s.ss")
        # g's y renamed to z would meet g's own z (declared again).
        r = self.rename(c, uri, text, "y = f", "z")
        self.assertEqual(r["error"]["code"], -32803)
        self.assertIn("`y` to `z`", r["error"]["message"])
        # The fn f renamed to g would be a second g.
        r = self.rename(c, uri, text, "f(m: M", "g")
        self.assertEqual(r["error"]["code"], -32803)
        # f renamed to sigmoid would capture the builtin's call in g: the
        # program checks either way, but a name would change its meaning.
        shadow = ("dim D = 4\n\n"
                  "fn f(x: [b D]) -> [b D]:\n    return x * 2.0\n\n"
                  "fn g(x: [b D]) -> [b D]:\n    return f(x) + sigmoid(x)\n")
        c2, uri2 = self.open_clean(shadow, "shadow.ss")
        r = self.rename(c2, uri2, shadow, "f(x: [b D])", "sigmoid")
        self.assertEqual(r["error"]["code"], -32803)
        self.assertIn("would change what a name means (at 7:",
                      r["error"]["message"])
        # f's y renamed to x is fine: `let x = x @ m.w` reads the parameter
        # and binds a new x, which the return reads: the same program.
        r = self.rename(c, uri, text, "y = x", "x")
        self.assertIn("result", r)
        # Not a name; a keyword; a builtin has nothing to rename.
        for new in ("2y", "let", "a-b"):
            r = self.rename(c, uri, text, "y = x", new)
            self.assertEqual(r["error"]["code"], -32803, new)
        l, ch = pos(text, "rearrange")
        r = c.request("textDocument/prepareRename", {
            "textDocument": {"uri": uri},
            "position": {"line": l, "character": ch}})
        self.assertEqual(r["error"]["code"], -32803)
        l, ch = pos(text, "y = f")
        r = c.request("textDocument/prepareRename", {
            "textDocument": {"uri": uri},
            "position": {"line": l, "character": ch}})
        self.assertEqual(r["result"]["placeholder"], "y")


def parse_frames(data):
    """The JSON bodies of [data], read as the LSP frames them; raises on a
    frame that breaks the rules."""
    out = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        if not sep:
            raise AssertionError("output ends inside a header: %r" % data[:80])
        fields = dict(l.split(b":", 1) for l in head.split(b"\r\n"))
        n = int(fields[b"Content-Length"])
        if len(rest) < n:
            raise AssertionError("a short frame")
        out.append(json.loads(rest[:n].decode("utf-8")))
        data = rest[n:]
    return out


class Mutations(Session):
    """Malformed input never crashes or hangs the server: a whole session's
    bytes, mutated 120 ways (seeded, so a failure reproduces), each fed to a
    fresh `ss lsp`, which must end by itself with 0 or 1 and write only
    well-formed frames."""

    def session(self):
        text = self.readme()
        uri = uri_of(os.path.join(SRC, "examples", "readme_mlp.ss"))
        at = lambda m, n, d=0: {"jsonrpc": "2.0", "id": 9, "method": m,
                                "params": {"textDocument": {"uri": uri},
                                           "position": dict(zip(
                                               ("line", "character"),
                                               pos(text, n, 0, d)))}}
        msgs = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"capabilities": {},
                        "initializationOptions": {"devices": "cpu[0 1 2]"}}},
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "method": "textDocument/didOpen",
             "params": {"textDocument": {"uri": uri, "version": 1,
                                         "text": text}}},
            {"jsonrpc": "2.0", "method": "textDocument/didChange",
             "params": {"textDocument": {"uri": uri, "version": 2},
                        "contentChanges": [{"range": rng(text, "img)"),
                                            "text": "im"}]}},
            at("textDocument/hover", "value_and_grad"),
            at("textDocument/definition", "forward(m, b"),
            at("textDocument/completion", "m.w1", 2),
            {"jsonrpc": "2.0", "id": 10, "method": "shutdown"},
            {"jsonrpc": "2.0", "method": "exit"},
        ]
        return b"".join(Client.frame(m) for m in msgs)

    def test_every_position_of_every_example(self):
        # Hover and definition at each character of the examples (spmd
        # and mesh programs among them), completion at each line: every
        # answer is a result, none an error, and the server stays up.
        import glob
        c = self.start({"devices": "cpu[0 1 2]"})
        for path in sorted(glob.glob(os.path.join(SRC, "examples", "*.ss"))):
            uri = uri_of(path)
            with open(path) as f:
                text = f.read()
            c.open(uri, text)
            c.diagnostics(uri)
            ids = []
            for l, line in enumerate(text.split("\n")):
                for ch in range(utf16(line) + 1):
                    for m in ("hover", "definition") + (
                            ("completion",) if ch == len(line) else ()):
                        ids.append(c.request_async(
                            "textDocument/" + m,
                            {"textDocument": {"uri": uri},
                             "position": {"line": l, "character": ch}}))
            for i in ids:
                self.assertNotIn("error", c.response(i))

    def mutate(self, whole, k):
        """Mutation [k] of the session's bytes: seeded by k alone, so one
        that fails reproduces by itself (SS_LSP_MUTATION_FROM=k, 1 of them)."""
        import random
        rnd = random.Random(14_000_000 + k)
        data = bytearray(whole)
        for _ in range(rnd.randint(1, 4)):
            if not data:
                break
            i = rnd.randrange(len(data))
            j = min(len(data), i + rnd.randint(1, 40))
            op = rnd.randrange(5)
            if op == 0:
                data[i] = rnd.randrange(256)
            elif op == 1:
                del data[i:j]
            elif op == 2:
                data[i:i] = data[i:j]
            elif op == 3:
                data[i:i] = rnd.choice([b"\r\n\r\n", b"Content-Length: ",
                                        b"99999", b'"\\ud800"', b"{[",
                                        b"\xff\xfe", b"-1", b"null",
                                        b"[" * 100, b'{"a":' * 100])
            else:
                del data[i:]
        return bytes(data)

    def test_mutated_sessions(self):
        # 120 by default (ctest); SS_LSP_MUTATIONS=100000 is the issue's
        # long run (about 11 ms a session, run on every core).
        from concurrent.futures import ThreadPoolExecutor
        whole = self.session()
        first = int(os.environ.get("SS_LSP_MUTATION_FROM", "0"))
        count = int(os.environ.get("SS_LSP_MUTATIONS", "120"))

        def one(k):
            try:
                r = subprocess.run([SS, "lsp"], input=self.mutate(whole, k),
                                   capture_output=True, timeout=20)
            except subprocess.TimeoutExpired:
                return "mutation %d hangs" % k
            if r.returncode not in (0, 1):
                return "mutation %d: exit %d" % (k, r.returncode)
            try:
                parse_frames(r.stdout)
            except Exception as e:  # a malformed frame written
                return "mutation %d: %s" % (k, e)
            return None

        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            failures = [f for f in pool.map(one, range(first, first + count))
                        if f]
        self.assertEqual(failures, [])

def main():
    global SS, SRC
    if len(sys.argv) < 3:
        sys.exit("usage: lsp_protocol_test.py SS_BINARY SOURCE_DIR")
    SS, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    unittest.main(argv=[sys.argv[0], "-v"] + sys.argv[3:])


if __name__ == "__main__":
    main()
