"""The builtins without a torch row, each with the written reason and where
its oracle is instead. The coverage check (op_table.py --coverage) fails
when a builtin has neither a torch row nor an entry here, when an entry
names no builtin, and when a builtin has both (a row makes its entry
stale). Each entry's `where` must name a file that exists and mentions the
builtin, so a reason cannot outlive its test silently.

Kinds:
- "ref only": torch has no equivalent; the ref/ row (naive loops) is the
  oracle.
- "elsewhere": not a numeric op (models, data, sinks, files, host values):
  its own tests are the oracle.
- "harness": every torch row runs through it, so a slip in it fails rows.
- "neither": no oracle yet, and why.
"""

from collections import namedtuple
import os
import re

Reason = namedtuple("Reason", "kind why where")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

PHILOX = ("draws from Philox4x32-10 keyed by (seed, call site or field "
          "path, element): torch's generator differs, so no value can match")
SPMD = ("an spmd collective: it runs only inside an instance of an spmd "
        "fn; its forward is ref/ref_collectives.h (checked by hand in "
        "ref/tests/ref_collectives_test.cpp), run whole-program against the "
        "shard_map tutorial's and numpy's values in conformance/spmd/, and "
        "its VJP against ref's derivative")
INIT = PHILOX + "; the test checks the bounds and moments torch's init has"

REASONS = {
    # Random draws.
    "rand": Reason("ref only", PHILOX, "ref/tests/ref_rows_shape_test.cpp"),
    "randn": Reason("ref only", PHILOX, "ref/tests/ref_rows_shape_test.cpp"),
    "normal": Reason("elsewhere", INIT, "interp/tests/eval_test.cpp"),
    "uniform": Reason("elsewhere", INIT, "interp/tests/eval_test.cpp"),
    "xavier": Reason("elsewhere", INIT, "interp/tests/eval_test.cpp"),
    "kaiming": Reason("elsewhere", INIT, "interp/tests/eval_test.cpp"),
    "truncated_normal": Reason("elsewhere", INIT,
                               "interp/tests/eval_test.cpp"),
    "constant": Reason("elsewhere", "an initialiser, no draw; checked with "
                       "the others", "interp/tests/eval_test.cpp"),
    "init": Reason("elsewhere", "Model.init(seed=): the draws above",
                   "interp/tests/eval_test.cpp"),
    "Train": Reason("harness", "makes the Mode value the dropout and "
                    "batch_norm rows pass (Train(seed=3), Train(seed=0))",
                    "tests/torch/op_rows_nn.py"),
    # spmd collectives.
    **{name: Reason("ref only", SPMD, "interp/tests/spmd_transpose_test.cpp")
       for name in ["psum", "pmean", "pmax", "pmin", "pvary", "all_gather",
                    "psum_scatter", "ppermute", "all_to_all"]},
    **{name: Reason("ref only", SPMD, "conformance/spmd/pmean_pmax_pmin.ss")
       for name in ["axis_index", "axis_size"]},
    "collective_timeout": Reason(
        "elsewhere", "a host setting of the collectives' timeout",
        "dist/tests/control_test.cpp"),
    # Data.
    "dataset": Reason("elsewhere", "a loader: values come from files",
                      "interp/tests/data_loaders_test.cpp"),
    "mnist": Reason("elsewhere", "a loader of IDX files",
                    "interp/tests/data_loaders_test.cpp"),
    "synthetic_digits": Reason("elsewhere", "made-up data, no torch "
                               "counterpart", "interp/tests/"
                               "data_programs_test.cpp"),
    "batches": Reason("elsewhere", "batching, shuffling and padding of a "
                      "dataset", "interp/tests/data_batches_test.cpp"),
    "len": Reason("elsewhere", "a dataset's length",
                  "interp/tests/data_batches_test.cpp"),
    "progress": Reason("elsewhere", "a progress bar on stderr",
                       "interp/tests/data_programs_test.cpp"),
    # Checkpoints and sinks.
    "save": Reason("elsewhere", "a safetensors writer (the whole-program "
                   "torch tests read ss's checkpoints with torch)",
                   "interp/tests/checkpoint_test.cpp"),
    "load": Reason("harness", "every row loads its inputs with it from a "
                   "safetensors file written by hand (a wrong value fails the "
                   "row)", "tests/torch/op_row.py"),
    "load_into": Reason("elsewhere", "load into an existing model",
                        "interp/tests/checkpoint_test.cpp"),
    "jsonl": Reason("harness", "every row writes its results with it (the "
                    "shortest text that round-trips the value in its dtype)",
                    "tests/torch/op_row.py"),
    "logs": Reason("harness", "every row's jsonl record is one",
                   "tests/torch/op_row.py"),
    "write": Reason("harness", "every row writes its record with it",
                    "tests/torch/op_row.py"),
    "stdout": Reason("elsewhere", "a sink", "interp/tests/eval_test.cpp"),
    "csv": Reason("elsewhere", "a sink",
                  "interp/tests/data_programs_test.cpp"),
    "tee": Reason("elsewhere", "a sink of sinks",
                  "interp/tests/output_sinks_test.cpp"),
    "mean_logs": Reason("elsewhere", "averages Logs over batches",
                        "interp/tests/data_programs_test.cpp"),
    "print": Reason("harness", "every row prints typeof of its outputs "
                    "with it", "tests/torch/op_row.py"),
    "typeof": Reason("harness", "every row's dtype check reads it",
                     "tests/torch/op_row.py"),
    "autocast": Reason("elsewhere", "a fn value run under torch.autocast's "
                       "policy, not an op: each op's dtype and rounding "
                       "against torch one step at a time, and whole training "
                       "runs against torch.autocast",
                       "tests/torch/autocast_oracle.py"),
    "grad_scaler": Reason("elsewhere", "an optimizer with torch's "
                          "GradScaler, not an op (torch 1.13 has no "
                          "GradScaler on CPU): whole f16 training runs with "
                          "skipped steps against torch computing the same "
                          "roundings and scaler, on 1, 2 and 3 devices "
                          "(MlpF16), and the scale by hand",
                          "tests/torch/programs/torch_programs.py"),
    "copy": Reason("harness", "every row differentiates a copy of its "
                   "inputs (a copy sharing storage with the original would "
                   "show in batch_norm's running stats)",
                   "tests/torch/op_row.py"),
    # Host values.
    "str": Reason("elsewhere", "host conversion",
                  "interp/tests/eval_test.cpp"),
    "int": Reason("elsewhere", "host conversion",
                  "interp/tests/eval_test.cpp"),
    "float": Reason("elsewhere", "host conversion",
                    "interp/tests/eval_test.cpp"),
    "range": Reason("elsewhere", "host iteration",
                    "interp/tests/eval_test.cpp"),
}


def check(builtins, covered, buggy):
    """Messages for every builtin without a row or a reason, every reason
    that is stale, and every reason whose `where` does not hold."""
    errs = []
    for name in sorted(builtins):
        if name not in covered and name not in REASONS:
            extra = " (its rows are known_bug)" if name in buggy else ""
            errs.append(f"`{name}` has neither a torch row nor a reason in "
                        f"tests/torch/op_exempt.py{extra}")
        if name in covered and name in REASONS:
            errs.append(f"`{name}` has a torch row: remove its reason")
    for name, r in sorted(REASONS.items()):
        if name not in builtins:
            errs.append(f"reason for `{name}`, which is not a builtin")
            continue
        path = os.path.join(ROOT, r.where)
        if not os.path.exists(path):
            errs.append(f"`{name}`'s reason names {r.where}, which is gone")
            continue
        with open(path) as f:
            if not re.search(r"\b" + re.escape(name) + r"\b", f.read()):
                errs.append(f"`{name}`'s reason names {r.where}, which does "
                            f"not mention it")
    return errs
