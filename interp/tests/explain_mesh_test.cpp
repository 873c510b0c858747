// `ss explain` for a program with a `mesh` (issue 13 item 6; docs/explain.md,
// "Mesh programs"): each spmd fn's collectives per line with counts, dtypes
// and bytes (each instance's payload, Note [Mesh figures]) and each value's
// layout in blocks. The expected text is written by hand from the spec's
// rules, every figure counted below; and the simulated mesh's collectives
// are really handed the table's forward figures.
#include <catch2/catch.hpp>

#include "interp/eval/spmd/sim_mesh.h"
#include "interp/tests/explain_test_util.h"

namespace {

namespace comms = ss::check::comms;
using namespace explain_test;

// On mesh i=4, N = 16 and F = 8: x: [N/i F] is a [4 8] block, 32 f32
// values (128 bytes) on each instance; all_gather's result [N F], 128
// values (512 bytes). Lin's w is [F F]: Lin/i gives each instance a [2 8]
// block (16 values) and b a [2] block; Lin{w/i} keeps b whole ([8]).
const char* const kRing = R"(devices cpu
mesh i=4

dim N = 16
dim F = 8

model Lin:
    w: [F F] = zeros()
    b: [F] = zeros()

spmd fn ring(x: [N/i F]) -> [N/i F]:
    let whole = all_gather(x, i, over=N)
    let s = psum_scatter(whole, i, over=N)
    return ppermute(s, i, shift=1)

spmd fn loss(x: [N/i F]) -> f32:
    let top = pmax(max(x), i)
    return psum(sum(ring(x)), i) + top

spmd fn apply(m: Lin/i, x: [N/i F]) -> [N/i F]:
    let w = all_gather(m.w, i, over=0)
    return x @ w + all_gather(m.b, i, over=F)

spmd fn scaled(m: Lin{w/i}, x: [N/i F]) -> [N/i F]:
    return x * m.b

fn grads(x: [N F]) -> [N F]:
    let l, g = value_and_grad(loss, x)
    return g
)";

// ring sends 128 (all_gather of x's block) + 512 (psum_scatter of the
// gathered [N F]) + 128 (ppermute of s's block) = 768 bytes; loss adds
// pmax's and psum's one f32 each: 776. Their transposes in the backward
// pass: psum_scatter of the gathered cotangent (512), all_gather of s's
// (128), ppermute back (128), pmax's cotangent to its holder (4), psum's
// pvary nothing: 772. value_and_grad(loss) so sends 776 + 772 = 1,548.
const char* const kRingReport =
    R"(Devices: cpu[0 1 2 3] (4 devices), mesh i=4: each spmd fn runs as 4 instances, the one at i=i on device i

fn ring (explain.ss:11) runs on each of the 4 instances of the mesh, on its blocks, and each sends 768 bytes per call.

  x: [N/i F] — blocks split over i: each instance holds 4 of N = 16
  whole: [N F]{i} — no axis split; it differs along i
  s: [N/i F]{i} — blocks split over i: each instance holds 4 of N = 16

explain.ss:12: let whole = all_gather(x, i, over=N)

Sent between the 4 instances on this line, per call:

- all-gather over i of `x` (all_gather), which joins the 4 instances' blocks along i:
  32 × f32 = 128 bytes
- in the backward pass: reduce-scatter over i of the gradient of its result (psum_scatter,
  all_gather's transpose): 128 × f32 = 512 bytes

In all: 128 bytes.

explain.ss:13: let s = psum_scatter(whole, i, over=N)

Sent between the 4 instances on this line, per call:

- reduce-scatter over i of `whole` (psum_scatter), which adds up the 4 instances' blocks
  along i and hands each its part: 128 × f32 = 512 bytes
- in the backward pass: all-gather over i of the gradient of its result (all_gather,
  psum_scatter's transpose): 32 × f32 = 128 bytes

In all: 512 bytes.

explain.ss:14: return ppermute(s, i, shift=1)

Sent between the 4 instances on this line, per call:

- send/receive over i of `s` (ppermute), which passes each of the 4 instances' blocks along
  i on to its destination: 32 × f32 = 128 bytes
- in the backward pass: send/receive over i of the gradient of its result (ppermute with the
  inverse perm): 32 × f32 = 128 bytes

In all: 128 bytes.

fn loss (explain.ss:16) runs on each of the 4 instances of the mesh, on its blocks, and each sends 776 bytes per call.

  x: [N/i F] — blocks split over i: each instance holds 4 of N = 16
  top: f32 — whole, the same on every instance

explain.ss:17: let top = pmax(max(x), i)

Sent between the 4 instances on this line, per call:

- all-reduce over i of `max(x)` (pmax), which takes the largest of the 4 instances' blocks
  along i: 1 × f32 = 4 bytes
- in the backward pass: reduce over i of the gradient of its result (to the instance that
  held the maximum): 1 × f32 = 4 bytes

In all: 4 bytes.

explain.ss:18: return psum(sum(ring(x)), i) + top

Sent between the 4 instances on this line, per call:

- all-reduce over i of `sum(ring(x))` (psum), which adds up the 4 instances' blocks along i:
  1 × f32 = 4 bytes
- inside `ring`: 768 bytes per call

In all: 772 bytes.

fn apply (explain.ss:20) runs on each of the 4 instances of the mesh, on its blocks, and each sends 72 bytes per call.

  m: Lin/i — each instance holds a quarter of every param of Lin (the first axis split over i): 72 bytes of params and buffers
  x: [N/i F] — blocks split over i: each instance holds 4 of N = 16
  w: [F F]{i} — no axis split; it differs along i

explain.ss:21: let w = all_gather(m.w, i, over=0)

Sent between the 4 instances on this line, per call:

- all-gather over i of `m.w` (all_gather), which joins the 4 instances' blocks along i:
  16 × f32 = 64 bytes
- in the backward pass: reduce-scatter over i of the gradient of its result (psum_scatter,
  all_gather's transpose): 64 × f32 = 256 bytes

In all: 64 bytes.

explain.ss:22: return x @ w + all_gather(m.b, i, over=F)

Sent between the 4 instances on this line, per call:

- all-gather over i of `m.b` (all_gather), which joins the 4 instances' blocks along i:
  2 × f32 = 8 bytes
- in the backward pass: reduce-scatter over i of the gradient of its result (psum_scatter,
  all_gather's transpose): 8 × f32 = 32 bytes

In all: 8 bytes.

fn scaled (explain.ss:24) runs on each of the 4 instances of the mesh, on its blocks, and sends nothing.

  m: Lin{w/i} — each instance holds blocks of `w` (the first axis split over i) and the rest whole: 96 bytes of params and buffers
  x: [N/i F] — blocks split over i: each instance holds 4 of N = 16

fn grads (explain.ss:27) runs on the workers and sends 1,548 bytes (2 KiB) per call.

  x: [N F] — whole on every device
  l: f32 — whole on every device
  g: [N F] — whole on every device

explain.ss:28: let l, g = value_and_grad(loss, x)

Sent between the 4 instances on this line, per call:

- inside `loss`: 1,548 bytes (2 KiB) per call

In all: 1,548 bytes (2 KiB).
)";

}  // namespace

TEST_CASE("explain mesh: each collective's payload and each value's blocks",
          "[explain][spmd]") {
  auto c = check_text(kRing, "cpu[0 1 2 3]");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  CHECK(t.notes.empty());  // laid out, not "not in this build"
  CHECK(comms::render_report(t) == kRingReport);
  // The data behind the text (--json, the LSP).
  const comms::LineSends& g = line_with(t, "all_gather(x");
  REQUIRE(g.collectives.size() == 2);
  CHECK(g.collectives[0].op == "all-gather");
  CHECK(g.collectives[0].source == "all_gather");
  CHECK(g.collectives[0].count.value() == 32);
  CHECK(g.collectives[0].dtype == "f32");
  CHECK(g.collectives[0].bytes.value() == 128);
  CHECK(!g.collectives[0].backward);
  CHECK(g.collectives[1].backward);
  CHECK(g.total.value() == 128);
  CHECK(value(t, "apply", "m").kind == comms::ValueLayout::Kind::Blocks);
  CHECK(fn_entry(t, "ring").bytes_per_call->value() == 768);
}

TEST_CASE("explain mesh: a 2-D mesh, and the simulated mode's header",
          "[explain][spmd]") {
  // The basic matmul (spmd.md): on x=4 y=2 with M = 8, K = 16, N = 4, a's
  // block is [2 8], b's [8 4] and the partial product [2 4]: psum over y
  // hands 8 f32 = 32 bytes. Called from ordinary code its size variables
  // take the arguments' sizes: m = 8, so (m/4)·n = 2 · 4.
  const char* text = R"(devices cpu
mesh x=4 y=2

dim M = 8
dim K = 16
dim N = 4

spmd fn matmul_basic(a: [m/x k/y], b: [k/y n]) -> [m/x n]:
    let c = a @ b
    return psum(c, y)

fn product(a: [M K], b: [K N]) -> [M N] = matmul_basic(a, b)
)";
  auto c = check_text(text, "cpu");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  CHECK(t.mesh ==
        "mesh x=4 y=2: each spmd fn runs as 8 instances, simulated in this "
        "process");
  CHECK(value(t, "matmul_basic", "a").text ==
        "blocks split over x and y: each instance holds m/4 of m and k/2 of "
        "k");
  CHECK(value(t, "matmul_basic", "b").text ==
        "blocks split over y: each instance holds k/2 of k; the same on every "
        "instance along x");
  CHECK(value(t, "matmul_basic", "c").text ==
        "blocks split over x: each instance holds m/4 of m; it differs along "
        "y");
  const comms::LineSends& p = line_with(t, "psum(c, y)");
  CHECK(p.text ==
        "Sent between the 8 instances on this line, per call:\n\n"
        "- all-reduce over y of `c` (psum), which adds up the 2 instances' "
        "blocks along y:\n  (m/4)·n × f32 = 4·(m/4)·n bytes\n\n"
        "In all: 4·(m/4)·n bytes.\n");
  CHECK(line_with(t, "= matmul_basic(a, b)").total.value() == 32);
  auto c8 = check_text(text, "cpu[0 1 2 3 4 5 6 7]");
  CHECK(comms::build_table(*c8->prog, c8->sm).mesh ==
        "mesh x=4 y=2: each spmd fn runs as 8 instances, the one at x=i y=j "
        "on device i·2 + j");
}

TEST_CASE("explain mesh: the simulated collectives are handed the figures",
          "[explain][spmd]") {
  auto c = check_text(kRing, "cpu");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  // Every block each instance hands, in order, as bytes.
  std::map<int64_t, std::vector<std::pair<ss::ops::MeshOpKind, int64_t>>> got;
  ss::eval::spmd::set_payload_log(
      [&](int64_t n, const ss::ops::MeshOp& op, const ss::ops::Tensor& x) {
        got[n].push_back(
            {op.kind, x.numel() * int64_t(ss::types::dtype_size(x.dtype()))});
      });
  std::ostringstream printed;
  ss::eval::Interpreter in(*c->prog, c->sm, printed);
  std::vector<double> x(16 * 8);
  for (size_t k = 0; k < x.size(); ++k) x[k] = double(k % 7) - 3;
  ss::eval::Value xv = ss::eval::Value::tensor(
      ss::ops::Tensor::from_doubles({16, 8}, x, ss::types::DType::F32));
  in.call(*c->prog->fn("grads"), {xv}, {});
  ss::eval::spmd::set_payload_log(nullptr);
  // The table's forward figures in the order loss runs them: pmax, then
  // ring's three lines, then psum.
  using K = ss::ops::MeshOpKind;
  auto fwd = [&](const std::string& line) {
    return line_with(t, line).collectives.at(0).bytes.value();
  };
  const std::vector<std::pair<K, int64_t>> table = {
      {K::Max, fwd("pmax(")},
      {K::AllGather, fwd("all_gather(x")},
      {K::PsumScatter, fwd("psum_scatter(")},
      {K::Ppermute, fwd("ppermute(")},
      {K::Sum, fwd("psum(sum")}};
  // By hand (kRingReport's counts).
  const std::vector<std::pair<K, int64_t>> hand = {{K::Max, 4},
                                                   {K::AllGather, 128},
                                                   {K::PsumScatter, 512},
                                                   {K::Ppermute, 128},
                                                   {K::Sum, 4}};
  CHECK(table == hand);
  // The backward pass's transposes run inside the simulated tape (Note
  // [Mesh collectives]), not through the mesh: each instance's log is the
  // forward pass alone.
  REQUIRE(got.size() == 4);
  for (const auto& [n, log] : got) {
    INFO("instance " << n);
    CHECK(log == hand);
  }
}

TEST_CASE("explain mesh: a model spec's fields split alike are named together",
          "[explain][spmd]") {
  // Pair{w/i, b/i} on i = 4 with F = 8: w's [2 8] block (16 values), b's
  // [2] (2), c whole (8): 26 f32 = 104 bytes.
  const char* text = R"(devices cpu
mesh i=4

dim F = 8

model Pair:
    w: [F F] = zeros()
    b: [F] = zeros()
    c: [F] = zeros()

spmd fn first(m: Pair{w/i, b/i}) -> [F/i]:
    return m.b
)";
  auto c = check_text(text, "cpu");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  CHECK(value(t, "first", "m").text ==
        "each instance holds blocks of `w` and `b` (the first axis split over "
        "i) and the rest whole: 104 bytes of params and buffers");
}

TEST_CASE(
    "explain mesh: value_and_grad inside an spmd fn sums replicated "
    "leaves",
    "[explain][spmd]") {
  // Note [A gradient inside an instance]: a leaf's gradient is all-reduced
  // in the backward pass over the mesh axes it is the same along. On x=2
  // y=2 with F = 8: Pair{w/x}'s w is split over x, so its [4 8] block (32
  // f32 = 128 bytes) is summed over y only; b and c are whole on every
  // instance, summed over x and y (8 f32 = 32 bytes each). The tensor leaf
  // v: [F/x] is summed over y (4 f32 = 16 bytes), and u: [F/(x y)] over
  // nothing, so it has no item. By hand.
  const char* text = R"(devices cpu
mesh x=2 y=2

dim F = 8

model Pair:
    w: [F F] = zeros()
    b: [F] = zeros()
    c: [F] = zeros()

spmd fn sq(m: Pair{w/x}) -> f32:
    return psum(sum(m.w * m.w), x) + sum(m.b) + sum(m.c)

fn sv(v: [k]) -> f32:
    return sum(v * v)

spmd fn grads(m: Pair{w/x}, v: [F/x], u: [F/(x y)]) -> f32:
    let l, g = value_and_grad(sq, m)
    let gv = grad(sv, v)
    let gu = grad(sv, u)
    return l
)";
  auto c = check_text(text, "cpu");
  comms::DeviceTable t = comms::build_table(*c->prog, c->sm);
  const comms::LineSends& m = line_with(t, "value_and_grad(sq, m)");
  REQUIRE(m.collectives.size() == 3);
  CHECK(m.collectives[0].text ==
        "in the backward pass: all-reduce over y of the gradient of `m.w` "
        "(value_and_grad: `m.w` is the same on every instance along y, so "
        "its copies' gradients are summed, JAX's psum of the implicit "
        "pvary): 32 × f32 = 128 bytes");
  CHECK(m.collectives[0].backward);
  CHECK(m.collectives[1].text.find("all-reduce over x and y of the gradient "
                                   "of `m.b`") != std::string::npos);
  CHECK(m.collectives[1].bytes.value() == 32);
  CHECK(m.collectives[2].what == "the gradient of `m.c`");
  const comms::LineSends& v = line_with(t, "grad(sv, v)");
  REQUIRE(v.collectives.size() == 1);
  CHECK(v.collectives[0].text.find("all-reduce over y of the gradient of "
                                   "`v`") != std::string::npos);
  CHECK(v.collectives[0].bytes.value() == 16);
  for (const comms::LineSends& l : t.lines)  // u's line sends nothing
    CHECK(l.source.find("grad(sv, u)") == std::string::npos);
}
