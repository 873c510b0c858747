// ss conformance's comparisons (interp/cli/conformance_compare.h) on
// crafted inputs: final params within tol x steps of one device's,
// relative to the largest param, and bit-identical across ranks; printed
// numbers and the files a case wrote. And the runner itself, as a
// process: a case that fails on several devices only fails there, and
// those runs go through `ss worker` processes.
#include "interp/cli/conformance_compare.h"

#include <catch2/catch.hpp>

#include "interp/tests/process_util.h"
#include "interp/tests/safetensors_test_util.h"

using safetensors_test::raw;
using safetensors_test::st_file;
using safetensors_test::TempDir;
using safetensors_test::write_bytes;
using ss::cli::CaseFiles;
using ss::cli::compare_files;
using ss::cli::compare_outputs;
using ss::cli::compare_params;
using ss::cli::compare_ranks;
using ss::cli::read_case_files;
using ss::eval::FinalParams;
using ss::ops::Tensor;
using ss::types::DType;

namespace {

FinalParams params(std::vector<double> w,
                   std::vector<double> b,
                   int64_t steps) {
  FinalParams p;
  int64_t nw = static_cast<int64_t>(w.size());
  int64_t nb = static_cast<int64_t>(b.size());
  p.params["m.w"] = Tensor::from_doubles({nw}, w, DType::F32);
  p.params["m.b"] = Tensor::from_doubles({nb}, b, DType::F32);
  p.steps = steps;
  return p;
}

}  // namespace

TEST_CASE("final params: within tol x steps of the largest param",
          "[conformance]") {
  auto one = params({1.0, -2.0}, {1e-9, 0}, 10);
  CHECK(compare_params(one, one, 1e-5).empty());
  // 10 steps at 1e-5: 1e-4 x the largest |2.0| = 2e-4 is allowed.
  CHECK(compare_params(one, params({1.00015, -2.0}, {1e-9, 0}, 10), 1e-5)
            .empty());
  CHECK_FALSE(
      compare_params(one, params({1.0005, -2.0}, {1e-9, 0}, 10), 1e-5).empty());
  // Noise around 0 in a bias is measured against the largest param.
  CHECK(compare_params(one, params({1.0, -2.0}, {-3e-9, 1e-8}, 10), 1e-5)
            .empty());
  // Missing or reshaped params fail.
  auto fewer = one;
  fewer.params.erase("m.b");
  CHECK_FALSE(compare_params(one, fewer, 1e-5).empty());
  CHECK_FALSE(compare_params(fewer, one, 1e-5).empty());
  CHECK_FALSE(
      compare_params(one, params({1.0, -2.0, 0}, {1e-9, 0}, 10), 1e-5).empty());
}

TEST_CASE("final params: every rank's copy is rank 0's, bit for bit",
          "[conformance]") {
  auto a = params({1.0, -2.0}, {0.5}, 3);
  CHECK(compare_ranks({a, a, a}).empty());
  auto b = params({1.0, std::nextafter(-2.0f, 0.0f)}, {0.5}, 3);
  std::string why = compare_ranks({a, a, b});
  CHECK(why.find("rank 2") != std::string::npos);
  CHECK(why.find("m.w") != std::string::npos);
}

namespace {

FinalParams tensors(std::vector<double> w) {
  FinalParams p;
  int64_t n = static_cast<int64_t>(w.size());
  p.params["w"] = Tensor::from_doubles({n}, w, DType::F32);
  return p;
}

CaseFiles files(const std::string& csv, std::vector<double> ckpt) {
  CaseFiles f;
  f.text["train.csv"] = csv;
  f.tensors["m.safetensors"] = tensors(std::move(ckpt));
  return f;
}

}  // namespace

TEST_CASE("printed numbers: within tol relative to max(|one device|, 1)",
          "[conformance]") {
  // The numbers, not the text: "1.0" and "1" are equal.
  CHECK(
      compare_outputs("loss 2.5 acc 1.0\n", "loss 2.5 acc 1\n", 1e-5).empty());
  // 1e-5 of 2.5 is 2.5e-5: 2.50002 is in, 2.5001 is out.
  CHECK(compare_outputs("loss 2.5\n", "loss 2.50002\n", 1e-5).empty());
  CHECK_FALSE(compare_outputs("loss 2.5\n", "loss 2.5001\n", 1e-5).empty());
  // Below 1 the tolerance is absolute: 1e-5 of 1.
  CHECK(compare_outputs("0.001", "0.000995", 1e-5).empty());
  CHECK_FALSE(compare_outputs("0.001", "0.00098", 1e-5).empty());
  // A 4-digit print may differ by one unit of its last digit (Note
  // [Printed precision]) beyond the tolerance, not by three.
  CHECK(compare_outputs("[0.03359 1.234]", "[0.03358 1.235]", 1e-5).empty());
  CHECK_FALSE(compare_outputs("[0.03359]", "[0.03356]", 1e-5).empty());
  CHECK_FALSE(compare_outputs("2.5", "2.6", 1e-5).empty());
  CHECK_FALSE(compare_outputs("7", "8", 1e-5).empty());
  // A line fewer (rank 0's share only) is a difference.
  std::string why = compare_outputs("[0 1 1 2 0]", "[0 1 1]", 1e-5);
  CHECK(why.find("3 numbers") != std::string::npos);
}

TEST_CASE("sink files and checkpoints: the same files, numbers within tol",
          "[conformance]") {
  const std::string csv = "step,loss\n0,2.5\n1,2.25\n";
  CaseFiles one = files(csv, {1.0, -2.0});
  CHECK(compare_files(one, one, 1e-5, 10).empty());
  // A csv row's number off by 1e-4 (4.4e-5 of 2.25): beyond 1e-5.
  CaseFiles off = files("step,loss\n0,2.5\n1,2.2501\n", {1.0, -2.0});
  CHECK(compare_files(one, off, 1e-5, 10).find("train.csv") == 0);
  // A checkpoint's param within 10 steps x 1e-5 of the largest (2.0):
  // 2e-4 allowed, 1.5e-4 in, 5e-4 out.
  CHECK(compare_files(one, files(csv, {1.00015, -2.0}), 1e-5, 10).empty());
  CHECK(compare_files(one, files(csv, {1.0005, -2.0}), 1e-5, 10)
            .find("m.safetensors") == 0);
  // A file one device wrote and this run did not, and the other way round.
  CaseFiles fewer = one;
  fewer.text.erase("train.csv");
  CHECK(compare_files(one, fewer, 1e-5, 10) == "did not write train.csv");
  CHECK(compare_files(fewer, one, 1e-5, 10) ==
        "wrote train.csv, one device did not");
}

TEST_CASE("a case's files: text as written, checkpoints as tensors",
          "[conformance]") {
  TempDir d;
  write_bytes(d / "train.jsonl", "{\"step\": 0, \"loss\": 0.5}\n");
  // A safetensors file laid out by hand: one f32 tensor [2] = {1.5, -3}.
  std::vector<float> w = {1.5f, -3.0f};
  write_bytes(
      d / "m.safetensors",
      st_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
              raw(w)));
  CaseFiles f = read_case_files(d.dir.string());
  REQUIRE(f.text.size() == 1);
  CHECK(f.text.at("train.jsonl") == "{\"step\": 0, \"loss\": 0.5}\n");
  REQUIRE(f.tensors.count("m.safetensors"));
  const Tensor& t = f.tensors.at("m.safetensors").params.at("w");
  CHECK(t.to_doubles() == std::vector<double>{1.5, -3.0});
}

// SHAPESCRIPT_TEST_FAIL_CALL makes an `ss worker` fail its first call
// (cmd_run_devices.cpp): only a run through worker processes sees it.
TEST_CASE(
    "ss conformance: a case that fails on several devices fails there, "
    "through ss worker processes",
    "[conformance][process]") {
  TempDir d;
  std::ofstream(d / "total.ss") << R"(# expect: ok
fn total(x: [b]) -> f32:
    return sum(x * x)

fn main():
    print(float(total(tensor([1.0, 2.0, 3.0, 4.0]))))
)";
  std::string dir = d.dir.string();
  auto run = ss::testing::run_ss_process("conformance '" + dir + "'",
                                         dir,
                                         "SHAPESCRIPT_TEST_FAIL_CALL=1:1",
                                         "",
                                         SS_HOOKS_BINARY);
  INFO(run.out);
  CHECK(run.rc == 1);
  CHECK(run.out.find("PASS total.ss [cpu]\n") != std::string::npos);
  CHECK(run.out.find("FAIL total.ss [cpu[0 1]]") != std::string::npos);
  CHECK(run.out.find("FAIL total.ss [cpu[0 1 2]]") != std::string::npos);
  CHECK(run.out.find("WorkerError") != std::string::npos);
  // Without the failure every device list gives one device's 30.
  auto clean = ss::testing::run_ss_process("conformance '" + dir + "'", dir);
  INFO(clean.out);
  CHECK(clean.rc == 0);
  CHECK(clean.out.find("3 passed, 0 failed") != std::string::npos);
  // The thread engine runs no worker process: the hook does not reach it.
  auto threads =
      ss::testing::run_ss_process("conformance '" + dir + "' --engine threads",
                                  dir,
                                  "SHAPESCRIPT_TEST_FAIL_CALL=1:1",
                                  "",
                                  SS_HOOKS_BINARY);
  CHECK(threads.rc == 0);
  // `ss` itself has no failure hooks (Note [Test hooks]): a production
  // worker never fails on request.
  auto production = ss::testing::run_ss_process(
      "conformance '" + dir + "'", dir, "SHAPESCRIPT_TEST_FAIL_CALL=1:1");
  INFO(production.out);
  CHECK(production.rc == 0);
  CHECK(production.out.find("3 passed, 0 failed") != std::string::npos);
}
