"""A Python session as a user has it: Ctrl-C during a call, and prints in
a terminal (a pty), as in a notebook."""
import os
import pty
import subprocess
import sys
import types

import pytest

from conftest import BUILD, program

CTRL_C = r"""
import os, signal, threading
import numpy as np
import shapescript as ss
prog = ss.load({path!r}, devices={devices!r})
m = prog.Lin.init(seed=0)
opt = ss.sgd(m, lr=0.1)
x, y = np.ones((6, 4)), np.zeros(6, dtype=np.int64)
print("before", prog.step(m, opt, x, y).loss > 0, flush=True)
threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    {call}
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted", flush=True)
# The session goes on: the model and optimizer are kept.
print("after", prog.step(m, opt, x, y).loss > 0)
print(prog.spin(3))
"""


def run_python(code, **kw):
    env = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"))
    return subprocess.run([sys.executable, "-c", code], env=env,
                          capture_output=True, text=True, timeout=120, **kw)


@pytest.mark.parametrize("devices,call", [
    ("cpu", "prog.spin(10**12)"),
    ("cpu[0 1 2]", "prog.spin_on_workers(x, 10**12)"),
])
def test_ctrl_c_stops_the_call_and_keeps_the_session(devices, call):
    r = run_python(CTRL_C.format(path=program("small.ss"), devices=devices,
                                 call=call))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "before True\ninterrupted\nafter True\n3\n", r.stderr


NOTEBOOK = r"""
import shapescript as ss
prog = ss.load({path!r})
print("python 1")
print(prog.shout(5))
print(prog.count_up(50))
print("python 2")
"""


def test_prints_and_progress_reach_python_in_order_on_a_terminal():
    env = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"))
    pid, fd = pty.fork()
    if pid == 0:  # the child: a Python session on a terminal
        os.execve(sys.executable,
                  [sys.executable, "-c",
                   NOTEBOOK.format(path=program("small.ss"))], env)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, out
    text = out.decode()
    # ShapeScript's print and progress bar land in Python's sys.stdout and
    # sys.stderr in order with Python's own prints; on a terminal the bar
    # is drawn (carriage returns), as a notebook draws it.
    marks = ["python 1\r\n", "hello from ShapeScript 5\r\n", "6\r\n",
             "\r1/50 [>", "\r50/50 [====================] 100%", "1225\r\n",
             "python 2\r\n"]
    at = [text.find(m) for m in marks]
    assert -1 not in at and at == sorted(at), text


def test_the_gil_is_free_while_shapescript_runs():
    import threading
    import time

    import shapescript as ss
    prog = ss.load(program("small.ss"))
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    try:
        start = time.perf_counter()
        prog.spin(3000000)  # ShapeScript's own loop: a few tenths of a second
        end = time.perf_counter()
    finally:
        stop.set()
        t.join()
        prog.close()
    during = [x for x in ticks if start < x < end]
    # The other thread ran throughout: at least one tick per 20 ms.
    assert end - start > 0.05
    assert len(during) >= (end - start) / 0.02


NOTEBOOK_KERNEL = r"""
import sys, types
# As in Jupyter: ipykernel loaded, sys.stderr no terminal.
sys.modules["ipykernel"] = types.ModuleType("ipykernel")
import shapescript as ss
prog = ss.load({path!r})
print(prog.count_up(50))
"""


def test_progress_draws_as_a_notebook_renders_it():
    env = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"))
    # Bytes: text mode would turn the carriage returns into newlines.
    p = subprocess.run(
        [sys.executable, "-c", NOTEBOOK_KERNEL.format(path=program("small.ss"))],
        env=env, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout == b"1225\n"
    r = types.SimpleNamespace(stderr=p.stderr.decode())
    # Carriage returns over one line, padded, and no escape sequence (a
    # notebook's output shows them as text).
    assert "\x1b" not in r.stderr
    assert r.stderr.startswith("\r1/50 [>")
    assert "\r50/50 [====================] 100%" in r.stderr
    assert r.stderr.endswith("\n")
