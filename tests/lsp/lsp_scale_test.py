#!/usr/bin/python3
"""`ss lsp` under a hostile editor (issue 32 item 10), through its protocol:
a 2,000-file import ring opened at once in both orders, a storm of
didChange notifications, the diagnostics of a file that imports a
changing one, and of documents whose checks share one hub's imports. What is asserted is what the editor sees (the diagnostics of
each file, the answers); the speed is bench/lsp_scale.py's to measure, and
the timeouts here only keep a hang from passing, but for one guard: the
2,000-file ring settles within GRAPH_GUARD seconds in either order.

Usage: lsp_scale_test.py SS_BINARY SOURCE_DIR (ctest: lsp_scale).
"""
import os
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import Client  # noqa: E402

SS = None
HANG = 60  # seconds: far over what any of these takes
# The bound for a 2,000-document graph in any order is 10 s; it
# settles in 2-3 s here (bench/lsp_scale.py). Twice the bound leaves room
# for a loaded machine and still fails the checks that took 43 s and over
# 250 s before Note [Checks when the input is quiet].
GRAPH_GUARD = 20


def uri_of(path):
    return "file://" + path


class Session(unittest.TestCase):
    def start(self):
        c = Client(SS)
        self.addCleanup(c.kill)
        c.initialize()
        return c

    def tmp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        return d.name

    def write(self, folder, name, text):
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)
        return uri_of(os.path.join(folder, name))

    def settle(self, c):
        """Every message the server sends until a shutdown is answered
        (the server checks what is pending before it answers)."""
        rid = c.request_async("shutdown")
        c.response(rid, timeout=HANG)
        out, c.pending = c.pending, []
        return out

    def last_diagnostics(self, messages):
        """The last diagnostics published for each URI."""
        last = {}
        for m in messages:
            if m.get("method") == "textDocument/publishDiagnostics":
                last[m["params"]["uri"]] = m["params"]["diagnostics"]
        return last

    def expect(self, c, uri, codes):
        """Waits until [uri]'s diagnostics are [codes] (error codes): a
        server may publish a file more than once on the way."""
        while True:
            got = [x["code"] for x in c.diagnostics(uri, timeout=HANG)
                   ["diagnostics"]]
            if got == codes:
                return

    def change(self, c, uri, version, text):
        c.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"text": text}]})


class Ring(Session):
    N = 2000
    BROKEN = 7  # the file with a syntax error

    def ring(self):
        """f0.ss .. f1999.ss on disk, each importing the next, the last the
        first; f7.ss has a syntax error."""
        d = self.tmp()
        files = []
        for i in range(self.N):
            body = "x * * 2.0" if i == self.BROKEN else "x * 2.0"
            text = (f'import "f{(i + 1) % self.N}.ss"\n\n'
                    f"fn f{i}(x: f32) -> f32 = {body}\n")
            files.append((self.write(d, f"f{i}.ss", text), text))
        return files

    def check_ring(self, files):
        c = self.start()
        t0 = time.monotonic()
        # All at once, as an editor restoring a session sends them.
        c.send_raw(b"".join(c.frame({
            "jsonrpc": "2.0", "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": u, "languageId": "shapescript",
                                        "version": 1, "text": t}}})
            for u, t in files))
        last = self.last_diagnostics(self.settle(c))
        self.assertLess(time.monotonic() - t0, GRAPH_GUARD)
        uris = [u for u, _ in files]
        self.assertEqual(set(last), set(uris))
        broken = uris[self.BROKEN] if files[0][0].endswith("/f0.ss") else \
            [u for u in uris if u.endswith(f"/f{self.BROKEN}.ss")][0]
        # The error shows in its file, on its line, and only there: the
        # files that import it (f6, and every other through the ring) are
        # not reported.
        self.assertEqual(len(last[broken]), 1, last[broken])
        self.assertEqual(last[broken][0]["range"]["start"]["line"], 2)
        self.assertTrue(last[broken][0]["code"].startswith("E01"),
                        last[broken][0])
        wrong = {u: d for u, d in last.items() if d and u != broken}
        self.assertEqual(wrong, {})

    def test_opened_first_to_last(self):
        self.check_ring(self.ring())

    def test_opened_last_to_first(self):
        self.check_ring(list(reversed(self.ring())))


class Storm(Session):
    def test_the_answer_reflects_the_last_change(self):
        # About 18 KB, as an editor's larger files are.
        text = "".join(f"fn g{i}(x: f32) -> f32 = x * {i}.0 + 1.0\n"
                       for i in range(450))
        c = self.start()
        uri = self.write(self.tmp(), "storm.ss", text)
        c.open(uri, text)
        self.assertEqual(c.diagnostics(uri)["diagnostics"], [])
        # 500 keystrokes, each its own didChange: a comment, then a fn
        # whose body names what is not declared (E0201).
        typed = "# " + "x" * 470 + "\nfn last(x: f32) -> f32 = y\n"
        typed = typed[:500]
        line = text.count("\n")
        frames = []
        col = 0
        row = line
        for k, ch in enumerate(typed):
            frames.append(c.frame({
                "jsonrpc": "2.0", "method": "textDocument/didChange",
                "params": {"textDocument": {"uri": uri, "version": k + 2},
                           "contentChanges": [{
                               "range": {
                                   "start": {"line": row, "character": col},
                                   "end": {"line": row, "character": col}},
                               "text": ch}]}}))
            row, col = (row + 1, 0) if ch == "\n" else (row, col + 1)
        c.send_raw(b"".join(frames))
        r = c.request("textDocument/documentSymbol",
                      {"textDocument": {"uri": uri}}, timeout=HANG)
        names = [s["name"] for s in r["result"]]
        self.assertIn("last", names)
        self.assertEqual(len(names), 451)
        published = [m["params"] for m in c.pending
                     if m.get("method") == "textDocument/publishDiagnostics"]
        # Coalesced: the queued changes are not each checked.
        self.assertLess(len(published), 100)
        final = published[-1]
        self.assertEqual(final["version"], len(typed) + 1)
        self.assertEqual([d["code"] for d in final["diagnostics"]],
                         ["E0201"])
        self.assertEqual(final["diagnostics"][0]["range"]["start"]["line"],
                         line + 1)


class Dependents(Session):
    def test_a_change_of_an_import_shows_in_its_importers(self):
        d = self.tmp()
        lib = "fn double(x: f32) -> f32 = x * 2.0\n"
        mid = 'import "lib.ss"\n\nfn quad(x: f32) -> f32 = double(double(x))\n'
        main = 'import "mid.ss"\n\nfn main():\n    print(quad(1.0))\n'
        lib_uri = self.write(d, "lib.ss", lib)
        mid_uri = self.write(d, "mid.ss", mid)
        main_uri = self.write(d, "main.ss", main)
        c = self.start()
        for u, t in ((main_uri, main), (mid_uri, mid), (lib_uri, lib)):
            c.open(u, t)
        for u in (main_uri, mid_uri, lib_uri):
            self.expect(c, u, [])
        # lib's double renamed: mid (which calls it) reports E0201, once
        # per call.
        self.change(c, lib_uri, 2, lib.replace("double", "twice"))
        self.expect(c, mid_uri, ["E0201", "E0201"])
        # mid follows the rename, then main calls what is gone.
        self.change(c, mid_uri, 2, mid.replace("double", "twice"))
        self.expect(c, mid_uri, [])
        self.change(c, main_uri, 2, main.replace("quad(1.0)", "double(1.0)"))
        self.expect(c, main_uri, ["E0201"])
        # lib gets double back: main, two imports away, is fixed.
        self.change(c, lib_uri, 3, lib + "fn twice(x: f32) -> f32 = x\n")
        self.expect(c, main_uri, [])
        # lib closed unsaved: main and mid read the disk's lib (no twice).
        c.notify("textDocument/didClose", {"textDocument": {"uri": lib_uri}})
        last = self.last_diagnostics(self.settle(c))
        self.assertEqual([x["code"] for x in last[mid_uri]], ["E0201"] * 2)
        self.assertEqual(last[main_uri], [])

    def test_an_import_opened_before_it_is_saved(self):
        # main imports new.ss, which is not on the disk yet (E0204); the
        # editor then opens new.ss unsaved: main reads its text.
        d = self.tmp()
        main = 'import "new.ss"\n\nfn main():\n    print(one())\n'
        main_uri = self.write(d, "main.ss", main)
        c = self.start()
        c.open(main_uri, main)
        self.assertEqual([x["code"] for x in c.diagnostics(
            main_uri, timeout=HANG)["diagnostics"]], ["E0204"])
        c.open(uri_of(os.path.join(d, "new.ss")), "fn one() -> int = 1\n")
        last = self.last_diagnostics(self.settle(c))
        self.assertEqual(last[main_uri], [])


class SharedImports(Session):
    """Documents importing one hub, whose imports each check takes from an
    earlier check's (Note [Shared import sets]): what each shows is what
    its own check of every file would show."""

    def test_a_hub_changed_in_the_editor_and_on_the_disk(self):
        d = self.tmp()
        for i in range(3):
            self.write(d, f"l{i}.ss", f"fn l{i}(x: f32) -> f32 = x * 2.0\n")
        hub = ('import "l0.ss"\nimport "l1.ss"\nimport "l2.ss"\n\n'
               "fn hub(x: f32) -> f32 = l0(x) + l2(x)\n")
        hub_uri = self.write(d, "hub.ss", hub)
        a = 'import "hub.ss"\n\nfn a(x: f32) -> f32 = hub(x)\n'
        # b's own text has an error: `nope` is declared nowhere.
        b = ('import "hub.ss"\n\nfn b(x: f32) -> f32 = hub(x)\n\n'
             "fn c(x: f32) -> f32 = nope(x)\n")
        a_uri = self.write(d, "a.ss", a)
        b_uri = self.write(d, "b.ss", b)
        c = self.start()
        c.open(a_uri, a)
        c.open(b_uri, b)
        last = self.last_diagnostics(self.settle_keep(c))
        self.assertEqual(last[a_uri], [])
        self.assertEqual([x["code"] for x in last[b_uri]], ["E0201"])
        self.assertEqual(last[b_uri][0]["range"]["start"]["line"], 4)
        self.assertNotIn(hub_uri, last)  # nothing to say about the hub

        # The hub opened as on the disk, then its fn renamed in the editor:
        # both documents call what is gone.
        c.open(hub_uri, hub)
        self.change(c, hub_uri, 2, hub.replace("fn hub(", "fn hub2("))
        self.expect(c, a_uri, ["E0201"])
        self.expect(c, b_uri, ["E0201", "E0201"])

        # An error in the hub's own text: said in the hub's file, once, by
        # the hub's check; the documents importing it say nothing of it.
        broken = hub.replace("l0(x) + l2(x)", "l0(x) + y")
        self.change(c, hub_uri, 3, broken)
        messages = self.settle_keep(c)
        last = self.last_diagnostics(messages)
        self.assertEqual(last[a_uri], [])
        self.assertEqual([x["code"] for x in last[b_uri]], ["E0201"])
        self.assertEqual([x["code"] for x in last[hub_uri]], ["E0201"])
        self.assertEqual(last[hub_uri][0]["range"]["start"]["line"], 4)
        for m in messages:
            if m.get("method") == "textDocument/publishDiagnostics" and \
                    m["params"]["uri"] == hub_uri:
                self.assertLessEqual(len(m["params"]["diagnostics"]), 1)

        # The hub closed unsaved: the documents read the disk's hub again.
        c.notify("textDocument/didClose", {"textDocument": {"uri": hub_uri}})
        self.expect(c, hub_uri, [])
        self.expect(c, a_uri, [])
        self.expect(c, b_uri, ["E0201"])

        # A leaf changed on the disk, with no word from the editor: the
        # next check of a document sees it, in the leaf's file.
        leaf_uri = self.write(d, "l1.ss", "fn l1(x: f32) -> f32 = x * * 2.0\n")
        self.change(c, a_uri, 2, a + "\n")
        leaf = c.diagnostics(leaf_uri, timeout=HANG)["diagnostics"]
        self.assertEqual(len(leaf), 1)
        self.assertTrue(leaf[0]["code"].startswith("E01"), leaf)
        self.expect(c, a_uri, [])

    def settle_keep(self, c):
        """Every message until a workspace/symbol request is answered (the
        server checks what is pending first), the session going on."""
        rid = c.request_async("workspace/symbol", {"query": ""})
        c.response(rid, timeout=HANG)
        out, c.pending = c.pending, []
        return out


def main():
    global SS
    if len(sys.argv) < 3:
        sys.exit("usage: lsp_scale_test.py SS_BINARY SOURCE_DIR")
    SS = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0], "-v"] + sys.argv[3:])


if __name__ == "__main__":
    main()
