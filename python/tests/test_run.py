"""`shapescript.check` and `shapescript.run`: `ss check` and `ss run` from
Python (the CLI's commands call the same embed::check and embed::run). The
expected values are computed by hand: sum of k*k for k in 0..23 is 4324."""
import os
import signal
import subprocess
import sys

import pytest

import shapescript as ss
from conftest import BUILD, program


def test_check_lists_the_problems_and_none_when_it_checks():
    problems = ss.check(program("bad.ss"))
    assert [(p["code"], p["line"], p["column"]) for p in problems] == [
        ("E0302", 4, 12)]
    assert p_file(problems[0]).endswith("bad.ss")
    assert "x @ x" in problems[0]["text"]
    assert ss.check(program("whole.ss")) == []
    # dims= as -D: D = 5 leaves bad.ss's problem where it was.
    assert [p["code"] for p in ss.check(program("bad.ss"), dims={"D": 5})
            ] == ["E0302"]


def p_file(p):
    return p["file"]


def test_check_of_a_missing_file_is_an_io_error(tmp_path):
    with pytest.raises(ss.IOError):
        ss.check(tmp_path / "absent.ss")


@pytest.mark.parametrize("devices", ["cpu", "cpu[0 1 2]"])
def test_run_prints_to_sys_stdout_with_the_entry_arguments(devices, capsys):
    ss.run(program("whole.ss"), devices=devices, args=["a", 7])
    assert capsys.readouterr().out == "total f64 4324\narg a\narg 7\n"


@pytest.mark.parametrize("devices", ["cpu", "cpu[0 1 2]"])
def test_run_raises_the_programs_error_at_its_line(devices, capsys):
    with pytest.raises(ss.ValueError) as e:
        ss.run(program("whole.ss"), devices=devices, entry="divide_by_zero")
    assert capsys.readouterr().out == "before\n"
    err = e.value
    assert "division by zero" in str(err)
    assert err.location.endswith("whole.ss:10:12"), err.location
    assert "divide_by_zero" in "\n".join(err.stack)


def test_run_refuses_a_missing_entry_and_a_program_that_does_not_check():
    with pytest.raises(ss.ValueError, match="no `fn nowhere\\(\\)` to run"):
        ss.run(program("whole.ss"), entry="nowhere")
    with pytest.raises(ss.CheckError) as e:
        ss.run(program("bad.ss"), entry="f")
    assert [p["code"] for p in e.value.problems] == ["E0302"]


CTRL_C = r"""
import os, signal, threading
import shapescript as ss
threading.Timer(1.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    ss.run({path!r}, devices={devices!r}, entry="spin_forever")
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted", flush=True)


def children():
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = open(f"/proc/{{pid}}/stat").read()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
            out.append(pid)
    return out


print("children", len(children()))
ss.run({path!r}, devices={devices!r})
"""

SPIN = """
fn spin_forever():
    let x = to(reshape(arange(24), [6, D]), f64)
    let i = 0
    while i >= 0:
        i += 1
        if i % 1000 == 0:
            let t = total(x)
"""


@pytest.mark.parametrize("devices", ["cpu", "cpu[0 1 2]"])
def test_ctrl_c_ends_a_run_and_its_workers(devices, tmp_path):
    src = tmp_path / "spin.ss"
    src.write_text(open(program("whole.ss")).read() + SPIN)
    env = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"))
    r = subprocess.run(
        [sys.executable, "-c", CTRL_C.format(path=str(src), devices=devices)],
        env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    # Interrupted, then a second run of the same program in the same
    # process: the first one's workers are gone, new ones start.
    assert r.stdout == "interrupted\nchildren 0\ntotal f64 4324\n", r.stderr


def test_the_cli_runs_through_the_same_code(tmp_path):
    # `ss run` and `ss check` print what the module raises and returns.
    ss_bin = os.path.join(BUILD, "ss")
    r = subprocess.run([ss_bin, "run", program("whole.ss"), "--devices",
                        "cpu[0 1]", "--", "x"], capture_output=True,
                       text=True, timeout=120)
    assert (r.returncode, r.stdout) == (0, "total f64 4324\narg x\n"), r.stderr
    r = subprocess.run([ss_bin, "run", program("whole.ss"), "--entry",
                        "divide_by_zero"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and "whole.ss:10:12" in r.stderr, r.stderr
    r = subprocess.run([ss_bin, "run", program("whole.ss"), "--entry",
                        "nowhere"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 64 and "no `fn nowhere()` to run" in r.stderr
    r = subprocess.run([ss_bin, "check", program("bad.ss")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "E0302" in r.stderr
