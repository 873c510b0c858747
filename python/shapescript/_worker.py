"""A worker of a Python controller: `python3 -m shapescript._worker worker
ARGS`, started by the controller on each device. It runs the same code as
`ss worker` (interp/devices/worker/), in a Python process, so that the
extern fns and datasets a program names in Python modules can be imported
from the controller's sys.path (given as PYTHONPATH)."""
import sys

from shapescript import _core, _externs


def main():
    if len(sys.argv) < 2 or sys.argv[1] != "worker":
        sys.stderr.write("shapescript._worker: started by a ShapeScript "
                         "controller only\n")
        return 64
    # Extern fns naming Python functions run here, with this worker's rows;
    # what they raise travels back pickled (shapescript/_externs.py).
    _externs.IN_WORKER = True
    _core._enable_externs()
    return _core.worker_main(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
