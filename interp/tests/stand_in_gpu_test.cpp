// What a GPU run moves to the GPU, counted by the stand-in GPU (Note [A
// stand-in GPU] in tests/stand_in_gpu/stand_in_gpu.cpp), which prints the
// bytes it was handed as the process exits.

#include <catch2/catch.hpp>
#include <string>

#include "interp/tests/data_test_util.h"
#include "interp/tests/process_util.h"

namespace {

// The bytes the stand-in reported, or -1.
long long uploaded(const std::string& err) {
  const std::string tag = "stand-in gpu: ";
  const size_t at = err.rfind(tag);
  return at == std::string::npos ? -1 : std::stoll(err.substr(at + tag.size()));
}

}  // namespace

TEST_CASE("a TensorDataset goes to the GPU once, not once a batch", "[data]") {
  // Note [Datasets kept on a GPU]: three epochs of 512 digits, 1,609,728
  // bytes (784 f32 and an i64 label each). Uploaded a batch at a time they
  // were 3 x 1,609,728 bytes; kept on the GPU, once, plus the params
  // (50,816 bytes), each batch's 64 row indices and a few scalars.
  std::string dir = data_test::tmp("stand_in_resident");
  data_test::write_file(
      dir + "/p.ss",
      "devices cuda[0]\n"
      "\n"
      "dim D = 784\n"
      "dim Hd = 16\n"
      "dim C = 10\n"
      "\n"
      "data Digit:\n"
      "    img: [D] in 0.0..=1.0\n"
      "    label: i64 in 0..C\n"
      "\n"
      "model Mlp:\n"
      "    w1: [D Hd] = normal(std=1 / sqrt(D))\n"
      "    w2: [Hd C] = normal(std=1 / sqrt(Hd))\n"
      "\n"
      "fn loss(m: Mlp, batch: [b] Digit) -> f32:\n"
      "    return cross_entropy(relu(batch.img @ m.w1) @ "
      "m.w2, batch.label)\n"
      "\n"
      "fn step(mut m: Mlp, mut opt: SGD[Mlp], batch: [b] "
      "Digit) -> f32:\n"
      "    let l, g = value_and_grad(loss, m, batch)\n"
      "    update(m, opt, g)\n"
      "    return l\n"
      "\n"
      "fn main():\n"
      "    let m = Mlp.init(seed=0)\n"
      "    let opt = sgd(m, lr=0.1)\n"
      "    let data = synthetic_digits(Digit, 512, seed=3)\n"
      "    let last = 0.0\n"
      "    for epoch in range(3):\n"
      "        for batch in data.batches(64, shuffle=epoch):\n"
      "            last = float(step(m, opt, batch))\n"
      "    print(last)\n");
  const std::string env = std::string("SS_CUDA_MODULE='") + SS_STAND_IN_GPU +
                          "' SS_STAND_IN_REPORT=1";
  auto gpu = ss::testing::run_ss_process("run p.ss", dir, env);
  auto cpu = ss::testing::run_ss_process("run p.ss --devices cpu", dir);
  INFO(gpu.err);
  REQUIRE(gpu.rc == 0);
  REQUIRE(cpu.rc == 0);
  CHECK(gpu.out == cpu.out);  // the same loss, to the last bit
  const long long dataset = 512LL * (784 * 4 + 8);
  const long long bytes = uploaded(gpu.err);
  CHECK(bytes >= dataset);
  CHECK(bytes < dataset * 3 / 2);
}
