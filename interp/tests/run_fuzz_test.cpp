// The runtime fuzzer's parts (tests/fuzz/run_program.h, run_outcome.h):
// its generator reaches every builtin of the table by name, its runner
// sorts outcomes as Note [What a fuzz target calls a finding] says, and
// the findings it made stay fixed, each with the outcome torch or numpy
// gives (a value, or an error of the user's values), not an internal
// error. Tagged [fuzz]: the sanitizer job runs them too.

#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ops/core/op_error.h"
#include "ops/core/tensor.h"
#include "ops/registry/registry.h"
#include "tests/fuzz/run_outcome.h"
#include "tests/fuzz/run_program.h"

using namespace ss;
using fuzz::RunOutcome;

namespace {

RunOutcome run_main(const std::string& body) {
  return fuzz::run_program("fn main():\n    " + body + "\n");
}

}  // namespace

TEST_CASE("run fuzzer: every builtin of the table is reachable by name",
          "[fuzz]") {
  for (const ops::OpDef* op : ops::all_ops()) {
    std::string in = std::string(op->name) + ";";
    const auto* data = reinterpret_cast<const uint8_t*>(in.data());
    CHECK(fuzz::run_program_builtin(data, in.size()) == op->name);
    CHECK(fuzz::run_program_text(data, in.size())
              .find(std::string(op->name) + "(") != std::string::npos);
  }
}

TEST_CASE("run fuzzer: outcomes are sorted as a finding's note says",
          "[fuzz]") {
  CHECK(run_main("print(1 +)").kind == RunOutcome::Kind::Static);
  RunOutcome v = run_main("print(sum(tensor([1.0, 2.0])))");
  CHECK(v.kind == RunOutcome::Kind::Value);
  RunOutcome r = run_main("print(1 // (len(range(3)) - 3))");
  CHECK(r.kind == RunOutcome::Kind::Runtime);
  CHECK(r.detail == "ValueError");
}

TEST_CASE("run fuzzer: a hostile size is refused at the fuzzer's bound",
          "[fuzz]") {
  // 2^31 f32s are 8 GiB: past the 128 MiB bound on every machine.
  RunOutcome r = run_main("print(full([2147483648], 0.5))");
  CHECK(r.kind == RunOutcome::Kind::Runtime);
  CHECK(r.detail == "ValueError");
}

TEST_CASE("set_allocation_limit bounds a tensor's allocation", "[fuzz]") {
  ops::set_allocation_limit(uint64_t{1} << 20);
  CHECK_NOTHROW(
      ops::check_allocatable({1024, 256}, types::DType::F32, ""));  // 1 MiB
  CHECK_THROWS_WITH(ops::check_allocatable({1024, 257}, types::DType::F32, ""),
                    Catch::Contains("this process's bound of 1,048,576 bytes"));
  ops::set_allocation_limit(~uint64_t(0));
}

TEST_CASE("run fuzzer's findings: errors of the user's values, located",
          "[fuzz]") {
  struct Case {
    const char* body;
    RunOutcome::Kind kind;
    const char* detail;
  };
  const Case cases[] = {
      // torch.nn.utils.clip_grad_norm_ takes a tensor.
      {"print(clip_norm(tensor([3.0, 4.0]), 1.0))",
       RunOutcome::Kind::Value,
       ""},
      // torch: "Integers to negative integer powers are not allowed".
      {"print(pow(tensor([2]), tensor([-1])))",
       RunOutcome::Kind::Runtime,
       "ValueError"},
      {"print(kl_div(tensor([0.5]), tensor([0.5]), log_target=f32))",
       RunOutcome::Kind::Static,
       ""},
      {"print(adaptive_avg_pool2d(full([3, 5], 1.0), 4611686018427387904))",
       RunOutcome::Kind::Runtime,
       "ValueError"},
      // torch: "expected input to have non-zero size for non-batch
      // dimensions"; it looped 2^53 times.
      {"print(adaptive_avg_pool2d(full([len(range(0)), 3], 1.0), "
       "9007199254740993))",
       RunOutcome::Kind::Runtime,
       "ValueError"},
      {"collective_timeout(1e308)", RunOutcome::Kind::Runtime, "ValueError"},
      // torch: "index 9223372036854775807 is out of bounds"; the index
      // read as a double (2^63) was cast to int64, undefined (UBSan).
      {"print(take(tensor([1.0, 2.0]), 9223372036854775807, over=0))",
       RunOutcome::Kind::Runtime,
       "ValueError"},
      {"print(put(tensor([1.0, 2.0]), -9223372036854775807 - 1, 0.0, over=0))",
       RunOutcome::Kind::Runtime,
       "ValueError"},
      // torch: "Only zero batch or zero channel inputs are supported" and
      // "kernel size should be greater than zero"; the backend threw
      // std::invalid_argument (sgemm of K = 0, a kernel past the input).
      {"print(conv2d(full([1, 1, 1, 1], 1.0), "
       "full([1, 1, len(range(0)), 1], 1.0)))",
       RunOutcome::Kind::Runtime,
       "ShapeError"},
      {"print(conv_transpose2d(full([1, 1, len(range(0)), 1], 1.0), "
       "full([1, 1, 3, 5], 1.0)))",
       RunOutcome::Kind::Runtime,
       "ShapeError"},
      {"print(conv1d(full([1, 1, len(range(0))], 1.0), full([1, 1, 1], "
       "1.0)))",
       RunOutcome::Kind::Runtime,
       "ShapeError"},
      // torch's F.embedding: "index out of range in self" (a negative id is
      // not counted from the end); ref/ refused it, the op took row 3.
      {"print(embedding(full([5, 2], 1.0), tensor([-2])))",
       RunOutcome::Kind::Runtime,
       "ValueError"},
      // numpy: "unsupported format string passed to numpy.ndarray".
      {"print(f\"{tensor([1.0, 2.0]):.3f}\")",
       RunOutcome::Kind::Runtime,
       "ValueError"},
  };
  for (const Case& c : cases) {
    INFO(c.body);
    RunOutcome r = run_main(c.body);
    CHECK(r.kind == c.kind);
    CHECK(r.detail == c.detail);
  }
}

TEST_CASE("run fuzzer: the corpus reaches patterns fn values and models",
          "[fuzz]") {
  // Each file is the first input that reached evaluation for its builtin
  // (tests/fuzz/README.md): the pattern ops, value_and_grad of the
  // prelude's loss, the stdlib's Linear, an optimizer's update.
  for (const char* op : {"einsum",
                         "rearrange",
                         "split",
                         "value_and_grad",
                         "grad",
                         "remat",
                         "linear",
                         "batch_norm",
                         "dropout",
                         "update",
                         "init",
                         "save",
                         "load",
                         "conv2d",
                         "scaled_dot_product_attention"}) {
    INFO(op);
    std::ifstream f(std::string(SS_SOURCE_DIR) + "/tests/fuzz/corpus/run/" + op,
                    std::ios::binary);
    REQUIRE(f);
    std::vector<uint8_t> in((std::istreambuf_iterator<char>(f)), {});
    CHECK(fuzz::run_program_builtin(in.data(), in.size()) == op);
    RunOutcome r =
        fuzz::run_program(fuzz::run_program_text(in.data(), in.size()));
    INFO(fuzz::run_program_text(in.data(), in.size()));
    CHECK((r.kind == RunOutcome::Kind::Value ||
           r.kind == RunOutcome::Kind::Runtime));
  }
}

TEST_CASE("run fuzzer: a run's collective_timeout is not the next run's",
          "[fuzz][dist]") {
  // 3,000 random inputs replayed on cpu[0 1 2] found it: a fuzzed
  // collective_timeout(5e-324) (1 ms) stayed set in the process, and every
  // later run's workers failed to start ("a worker failed while starting
  // the workers"). A host language runs programs one after another too.
  RunOutcome tiny = fuzz::run_program_on_devices(
      "fn main():\n    collective_timeout(5e-324)\n    print(1)\n",
      "cpu[0 1 2]",
      SS_BINARY);
  CHECK(tiny.kind == RunOutcome::Kind::Value);
  RunOutcome next = fuzz::run_program_on_devices(
      "fn twice(x: [b]) -> [b]:\n    return x * 2.0\n\n"
      "fn main():\n    print(twice(tensor([1.0, 2.0, 3.0])))\n",
      "cpu[0 1 2]",
      SS_BINARY);
  INFO(next.detail);
  CHECK(next.kind == RunOutcome::Kind::Value);
}
