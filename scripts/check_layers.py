#!/usr/bin/python3
"""The house rules a reviewer would otherwise check by hand (issue 11 item 8).

1. No source file over 800 lines.
2. No include that goes up the layers: each folder below may include its
   own files and those of the folders it lists, nothing else of the
   project. The table is the architecture (docs/architecture.md); a new
   folder gets a row here.
3. No file under interp/ compares a builtin's name with a string literal
   to pick the op's rule (issue 11 item 2). Each op's rule on several
   devices is in its table entry (ops/registry/device_rule.h, Note [An op's
   rule on several devices]); a new rule is a field there, read by every
   reader, not a name branch in three files that may disagree. The op table
   comes from `ss check --list-builtins` (--ss PATH, default ROOT/build/ss).
   Nor is a builtin looked up by a name written in the source
   (`find_op("neg")`, `call_builtin_values("stdout", ...)`): an operator
   reaches its entry through OpDef::infix/prefix (interp/check/operators.h)
   and a runtime builtin through the runtime table (Note [The runtime
   table] in interp/eval/runtime_table.h).
4. No Catch2 TEST_CASE name that ctest cannot run (Note [Test names ctest
   runs]).
5. Each folder's namespace is its path: a file under interp/a/b opens
   `namespace ss::a::b` (or one nested in it), so a name says where it
   lives (Note [Namespaces are folders]).
6. The evaluator stays a tree walker (Note [Device hooks]): DeviceHooks
   has at most 12 hooks, and Interpreter at most 40 member functions
   (its constructor and destructor counted), so a new device mode lands
   behind the op-site hook, not as members or hooks of its own.

Run from anywhere: scripts/check_layers.py [ROOT] [--ss PATH] [--only
op_rules]. Exit 1 with
one line per breach; ctest runs it as house_rules (tests/CMakeLists.txt).
"""
import os
import re
import subprocess
import sys

MAX_LINES = 800

# layer -> the layers it may include (besides itself). A file's layer is the
# longest folder of this table its path starts with; an include is allowed
# when the included file's layer is its own or one listed, exactly (so a
# layer names each layer below it, and `ops` means ops/'s own files, the
# differentiable API, not everything under ops/).
DIAG = ["diag"]
# Inside ops/: core (with the elementwise table, core/elementwise.def) <
# backend (cpu, no_cuda) < autodiff < api (ops/*) < registry < defs.
OPS_CORE = DIAG + ["ops/core"]
OPS_BACKEND = OPS_CORE + ["ops/backend"]
OPS_AUTODIFF = OPS_BACKEND + ["ops/autodiff"]
OPS_API = OPS_AUTODIFF + ["ops"]
OPS_REGISTRY = OPS_API + ["ops/registry"]
# Above ops/, the CPU backend's controls (its thread count) are reachable
# too; the tensor work goes through the API.
OPS = OPS_REGISTRY + ["ops/defs", "ops/cpu"]
FRONT = OPS + ["interp/lex", "interp/parse", "interp/check"]
# The evaluator includes nothing of the checker's several-devices plan: a
# device mode's plan reaches the walk through the op-site hook (Note [Op
# sites] in interp/eval/op_site.h), implemented in interp/devices/.
EVAL = FRONT + ["interp/eval"]
LAYERS = {
    "diag": [],
    "ops/core": DIAG,
    "ops/backend": OPS_CORE,
    "ops/cpu": OPS_BACKEND,
    "ops/no_cuda": OPS_BACKEND,
    "ops/autodiff": OPS_BACKEND,
    "ops": OPS_AUTODIFF,
    "ops/registry": OPS_API,
    "ops/defs": OPS_REGISTRY,
    "ref": OPS,
    "dist": OPS,
    "interp/lex": OPS,
    "interp/parse": OPS + ["interp/lex"],
    "interp/check": OPS + ["interp/lex", "interp/parse"],
    # `ss fmt`'s layout: tokens, comments and the parser's regions.
    "interp/fmt": DIAG + ["interp/lex", "interp/parse"],
    # The checker's several-devices pass: compiled with the checker,
    # below the evaluator.
    "interp/check/plan": FRONT,
    "interp/eval": FRONT,
    # spmd fns simulated on one process (spmd.md, Mesh: `devices cpu`): the
    # instances' threads run the evaluator and meet at collectives that
    # ref/'s reference collectives combine. The evaluator reaches it through
    # Interpreter::call_spmd, defined here, and includes nothing of it.
    "interp/eval/spmd": EVAL + ["ref"],
    "interp/data": EVAL,
    "interp/builtins": EVAL + ["interp/data"],
    # eval/spmd: a mesh program's spmd fns on the workers cut, join, run
    # and print their instances with the simulated mode's code (Note [Spmd
    # fns on workers] in interp/devices/lower/worker_mesh.h).
    "interp/devices": EVAL + ["interp/check/plan", "interp/eval/spmd",
                              "interp/data",
                              "interp/builtins", "dist"],
    # `ss lsp`'s server: the checked program and the explain table of the
    # several-devices plan are all it reads; nothing runs.
    "interp/lsp": FRONT + ["interp/check/plan", "interp/fmt"],
    # The embedding API: a host language's calls, checked and run as the
    # repl runs what is typed (Note [Host calls are checked as ShapeScript]
    # in interp/embed/embed.h).
    "interp/embed": EVAL + ["interp/data", "interp/builtins",
                            "interp/devices", "dist"],
    "interp/cli": EVAL + ["interp/check/plan", "interp/data",
                          "interp/builtins", "interp/devices",
                          "interp/lsp", "interp/fmt", "interp/embed", "dist"],
    # The Python module: the embedding API's header and the tensors it
    # hands over, nothing of the interpreter's inside.
    "python": DIAG + ["ops/core", "interp/embed"],
}
# Tests, benchmarks and tools may include anything.
FREE = ("tests/", "bench/", "/tests/", "scripts/")
SOURCE = (".cpp", ".h", ".def", ".cc")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


# ------------------------------------------------------------ op_rules

# The legitimate name comparisons that remain, each with why. Keyed by
# (path under the source dir, builtin name).
OP_NAME_ALLOWED = {
    # init(...)'s runtime draws each initialiser spec by its kind: that is
    # the initialisers' own forward (they have no tensor forward in the
    # table), not a rule picked for an op.
    **{("interp/builtins/models.cpp", n): "an initialiser's draw"
       for n in ("normal", "uniform", "zeros", "ones", "constant", "xavier",
                 "kaiming", "truncated_normal")},
    # The checker's no-VJP taint ends at stop_grad: a gradient rule of the
    # checker's own, with no field in the entry yet.
    ("interp/check/builtin_ctx.cpp", "stop_grad"): "the no-VJP taint",
}

# The left (or right) side of a comparison that holds an op's name: `n`,
# `name`, `op.name`, `c.op.name`, `r.op->name`, `std::string(op.name)`.
_NAME_SIDE = (r"(?:\bop(?:\.|->)name\)?|(?<![\w.>])(?:n|name|op_name)\b"
              r"|\bop_name\(\)\)?)")


def builtin_names(ss):
    """The builtins of the op table, as `ss check --list-builtins` lists
    them (the table itself, so a row generated from a .def counts too)."""
    out = subprocess.run([ss, "check", "--list-builtins"],
                         capture_output=True, text=True, check=True)
    return {line.split("\t")[0] for line in out.stdout.splitlines()
            if line.strip()}


def source_files(root, top):
    for d, _, files in os.walk(os.path.join(root, top)):
        if os.sep + "tests" in d[len(root):]:
            continue  # tests name ops to check them
        for f in sorted(files):
            if f.endswith((".cpp", ".h")):
                yield os.path.join(d, f)


def name_comparison(names):
    alt = "|".join(sorted((re.escape(n) for n in names), key=len,
                          reverse=True))
    lit = r'"(%s)"' % alt
    return re.compile(r"%s\s*[!=]=\s*%s|%s\s*[!=]=\s*%s" %
                      (_NAME_SIDE, lit, lit, _NAME_SIDE))


def self_test():
    """The heuristic flags the shapes the old name branches had, and not
    comparisons of other names (an argument's, a token's)."""
    cmp = name_comparison({"sum", "save", "write", "pad", "print"})
    flagged = ['if (n == "sum") {', 'std::string(c.op.name) == "save"',
               'r.op->name != "write" ||', 'if ("print" == name)']
    clean = ['w->name == "sum"', 'peek().text == "pad"', 'k == "sum"',
             'if (n == "summary")']
    bad = [c for c in flagged if not cmp.search(c)]
    bad += [c for c in clean if cmp.search(c)]
    return ["check_layers.py: the op-name heuristic is wrong on `%s`" % c
            for c in bad]


# A builtin found by a name the source spells (Note [The runtime table]).
NAME_LOOKUP = re.compile(
    r'\b(?:find_op|find_runtime|call_builtin_values)\s*\(\s*"')


def check_op_rules(root, ss):
    problems = self_test()
    if not NAME_LOOKUP.search('ops::find_op("neg")') or \
            NAME_LOOKUP.search("ops::find_op(name)"):
        problems.append("check_layers.py: the name-lookup rule is wrong on "
                        "its own cases")
    cmp = name_comparison(builtin_names(ss))
    for path in source_files(root, "interp"):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8") as fh:
            for no, line in enumerate(fh, 1):
                code = line.split("//", 1)[0]
                if NAME_LOOKUP.search(code):
                    problems.append(
                        "%s:%d: a builtin looked up by a name written here: "
                        "reach it through its entry (OpDef::infix/prefix, "
                        "the runtime table: Note [The runtime table])" %
                        (rel, no))
                for m in cmp.finditer(code):
                    name = m.group(1) or m.group(2)
                    if (rel, name) in OP_NAME_ALLOWED:
                        continue
                    problems.append(
                        "%s:%d: the builtin `%s` is matched by name to pick "
                        "its rule: put the rule in its ops/defs row "
                        "(ops/registry/device_rule.h) and read the entry"
                        % (rel, no, name))
    return problems


# ------------------------------------------------------------ test_names

# Note [Test names ctest runs]
# catch_discover_tests (tests/CMakeLists.txt) registers one ctest test per
# TEST_CASE from `ss_tests --list-test-names-only`, read as a CMake list,
# and runs each with its name as the Catch2 test spec. Catch2 2.x exits 0
# on a spec that matches nothing ("No test cases matched"), so a name that
# the list or the spec breaks is a test that never runs under ctest and is
# reported as a pass. Tried on Catch2 2.13 (13 tests hid this way, never run):
# - `;` ends a CMake list element: the name becomes two tests, each half
#   of it, matching nothing;
# - `\` escapes in a Catch2 spec: the name no longer matches itself;
# - a leading `~` or `exclude:` negates the spec: ctest runs every other
#   test and not this one;
# - a leading or trailing `*` is a wildcard: it runs each test it matches.
# (`,`, `[` and `]` are escaped by CatchAddTests.cmake and are fine.)
TEST_NAME_BREAKS = [
    (lambda n: ";" in n,
     "a `;` cuts its ctest name in two and neither half runs a test"),
    (lambda n: "\\" in n,
     "a `\\` escapes in Catch2's test spec, which then matches no test"),
    (lambda n: n.startswith(("~", "exclude:")),
     "a leading `~` or `exclude:` makes its spec run every other test"),
    (lambda n: n.startswith("*") or n.endswith("*"),
     "a leading or trailing `*` makes its spec a wildcard"),
]
# TEST_CASE("name" "more", ...) or TEST_CASE_METHOD(Fixture, "name", ...):
# the name is the adjacent string literals (their escapes undone).
_TEST_CASE = re.compile(
    r'\b(?:TEST_CASE|SCENARIO)(?:_METHOD\s*\(\s*\w+\s*,|\s*\()\s*'
    r'((?:"(?:[^"\\\n]|\\.)*"\s*)+)')
_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def test_name_breaches(rel, text):
    """One line for each TEST_CASE in the C++ text whose name ctest cannot
    run, with why."""
    out = []
    for m in _TEST_CASE.finditer(text):
        name = "".join(re.sub(r"\\(.)", r"\1", s)
                       for s in _LITERAL.findall(m.group(1)))
        line = text.count("\n", 0, m.start()) + 1
        for breaks, why in TEST_NAME_BREAKS:
            if breaks(name):
                out.append(f"{rel}:{line}: TEST_CASE `{name}` breaks under "
                           f"ctest: {why} (Note [Test names ctest runs] in "
                           "scripts/check_layers.py); reword it")
    return out


def test_names_self_test():
    """The rule flags each breaking name, across adjacent literals and
    escapes, and passes names CatchAddTests escapes."""
    flagged = ['TEST_CASE("a; b", "[t]")', 'TEST_CASE(\n    "a, "\n    "b; c")',
               'TEST_CASE("a\\\\b")', 'TEST_CASE("~a")',
               'TEST_CASE_METHOD(Fix, "exclude:a")', 'TEST_CASE("a*")',
               'SCENARIO("*a")']
    clean = ['TEST_CASE("a, b [Note x] \\"q\\" #1 a*b", "[t;u]")',
             'CHECK(f("a; b"));']
    bad = [c for c in flagged if len(test_name_breaches("t", c)) != 1]
    bad += [c for c in clean if test_name_breaches("t", c)]
    return ["check_layers.py: the test-name rule is wrong on `%s`" % c
            for c in bad]


# ------------------------------------------------------------ namespaces

# Note [Namespaces are folders]
# A file under interp/<path> declares its names in ss::<path> (slashes as
# ::), or in a namespace nested in it (ss::check::comms under
# interp/check/). A block that only forward-declares another folder's
# names (`namespace ss::ast { struct Expr; }`) is not a home. Settled
# exceptions: parse/ names the AST's vocabulary ss::ast; check/plan/, the
# checker's several-devices pass, shares the checker's namespace; and
# eval/spmd/ defines Interpreter::call_spmd, the evaluator's one door into
# it, in ss::eval.
NAMESPACE_EXTRA = {
    "interp/parse": ["ss::ast"],
    "interp/check/plan": ["ss::check"],
    "interp/eval/spmd": ["ss::eval"],
}
NAMESPACE_OPEN = re.compile(r"^namespace\s+(ss(?:::\w+)*)\s*\{")
FORWARD_DECL = re.compile(
    r"^\s*(?:(?:struct|class|enum class|enum)\s+\w+(?:\s*:\s*\w+)?;"
    r"|//.*|)\s*$")


def namespace_breaches(rel, lines):
    """The namespace blocks of [rel] (a file under interp/) that are not
    its folder's (Note [Namespaces are folders])."""
    if not rel.startswith("interp/") or "/tests/" in rel:
        return []
    folder = os.path.dirname(rel)
    home = "ss::" + folder[len("interp/"):].replace("/", "::")
    allowed = [home] + NAMESPACE_EXTRA.get(folder, [])
    out = []
    for n, line in enumerate(lines):
        m = NAMESPACE_OPEN.match(line)
        if not m:
            continue
        ns = m.group(1)
        if any(ns == a or ns.startswith(a + "::") for a in allowed):
            continue
        body = []
        for later in lines[n + 1:]:
            if later.startswith("}"):
                break
            body.append(later)
        if all(FORWARD_DECL.match(b) for b in body):
            continue  # forward declarations of another folder's names
        out.append(f"{rel}:{n + 1}: namespace {ns}, not its folder's "
                   f"({' or '.join(allowed)}: Note [Namespaces are "
                   "folders])")
    return out


def namespace_self_test():
    """The rule's own cases: a breach it must see, and what it must pass."""
    bad = namespace_breaches("interp/eval/x.cpp",
                             ["namespace ss::devices {\n", "int f();\n",
                              "}\n"])
    good = namespace_breaches("interp/eval/x.cpp",
                              ["namespace ss::ast {\n", "struct Expr;\n",
                               "}\n", "namespace ss::eval::spmd {\n",
                               "int f();\n", "}\n"])
    if len(bad) == 1 and not good:
        return []
    return ["check_layers.py: the namespace rule is wrong on its own cases"]


# ------------------------------------------------------------ the walker

MAX_HOOKS = 12
MAX_INTERPRETER_MEMBERS = 40
_MEMBER = re.compile(r"(?:^|;|\}|:)\s*(?:\[\[noreturn\]\]\s*)?"
                     r"(?:virtual\s+)?(?:[\w:<>,\s*&~]+?\s+)?(~?\w+)\s*\(",
                     re.M)


def member_functions(text, cls):
    """The member functions declared in class [cls] of [text] (comments
    dropped), by name, in order."""
    start = text.index("class " + cls + " ")
    body = text[start:text.index("\n};", start)]
    body = re.sub(r"//.*", "", body)
    return [n for n in _MEMBER.findall(body)
            if n not in ("if", "for", "while", "return", "swap", "move")]


def walker_breaches(root):
    out = []
    with open(os.path.join(root, "interp/eval/device_hooks.h")) as f:
        hooks = [n for n in member_functions(f.read(), "DeviceHooks")
                 if not n.startswith("~")]
    if len(hooks) > MAX_HOOKS:
        out.append(f"interp/eval/device_hooks.h: {len(hooks)} hooks (at most "
                   f"{MAX_HOOKS}: a device mode is an implementation of "
                   "run_op, Note [Op sites])")
    with open(os.path.join(root, "interp/eval/interpreter.h")) as f:
        members = member_functions(f.read(), "Interpreter")
    if len(members) > MAX_INTERPRETER_MEMBERS:
        out.append(f"interp/eval/interpreter.h: {len(members)} member "
                   f"functions (at most {MAX_INTERPRETER_MEMBERS}: the "
                   "Interpreter walks the tree; the rest are free functions "
                   "or the devices layer's)")
    return out


# ------------------------------------------------------------ layers


def layer_of(path):
    best = None
    for folder in LAYERS:
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def main():
    args = sys.argv[1:]
    ss = None
    if "--ss" in args:
        i = args.index("--ss")
        ss = args[i + 1]
        del args[i:i + 2]
    # --only op_rules: the op-name check alone (ctest, until the include
    # breaches that issue 11's other items remove are gone).
    only = None
    if "--only" in args:
        i = args.index("--only")
        only = args[i + 1]
        del args[i:i + 2]
    root = args[0] if args else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    ss = ss or os.path.join(root, "build", "ss")
    if not os.access(ss, os.X_OK):
        print("check_layers.py: no ss binary at %s (give --ss PATH)" % ss,
              file=sys.stderr)
        return 2
    breaches = check_op_rules(root, ss)
    if only == "op_rules":
        for b in breaches:
            print(b)
        print("op rules: ok" if not breaches else
              f"{len(breaches)} breaches of the house rules")
        return 1 if breaches else 0
    breaches += test_names_self_test()
    breaches += namespace_self_test()
    breaches += walker_breaches(root)
    for top in ["diag", "ops", "ref", "dist", "interp", "tests", "bench"]:
        for dirpath, dirs, files in os.walk(os.path.join(root, top)):
            for f in files:
                if not f.endswith(SOURCE):
                    continue
                full = os.path.join(dirpath, f)
                rel = os.path.relpath(full, root)
                with open(full, encoding="utf-8", errors="replace") as fh:
                    lines = fh.readlines()
                if f.endswith((".cpp", ".h")):
                    breaches += test_name_breaches(rel, "".join(lines))
                    breaches += namespace_breaches(rel, lines)
                if len(lines) > MAX_LINES:
                    breaches.append(f"{rel}: {len(lines)} lines (at most "
                                    f"{MAX_LINES}: split it by job)")
                if rel.startswith(FREE) or any(p in rel for p in FREE):
                    continue
                mine = layer_of(rel)
                if mine is None:
                    breaches.append(f"{rel}: in no layer of "
                                    "scripts/check_layers.py (add its folder)")
                    continue
                allowed = [mine] + LAYERS[mine]
                for n, line in enumerate(lines, 1):
                    m = INCLUDE.match(line)
                    if not m or "/" not in m.group(1):
                        continue
                    target = layer_of(m.group(1))
                    if target is None:
                        continue  # not a project header
                    if target not in allowed:
                        breaches.append(
                            f"{rel}:{n}: includes {m.group(1)}, above its "
                            f"layer ({mine} may include {', '.join(allowed)})")
    for b in breaches:
        print(b)
    if breaches:
        print(f"{len(breaches)} breaches of the house rules")
        return 1
    print("layers, file sizes, op rules, test names, namespaces and the "
          "walker's size: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
