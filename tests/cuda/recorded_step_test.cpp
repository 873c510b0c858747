// Recorded steps on a GPU (Note [Recorded steps on a GPU] in
// ops/cuda/cuda_recording.cu): a graph recorded once, replayed with new
// input bytes and with its fused AdamW's constants patched each step, is
// the CPU's eager steps bit for bit; a check recorded on the device is
// raised at the next copy to the host. The devices layer's rules over
// these are proven without a GPU (interp/tests/recorded_steps_test.cpp).

#include "ops/backend/recorded_step.h"

#include <memory>
#include <string>

#include "tests/cuda/cuda_test_util.h"

namespace {

using namespace cuda_test;

StepRecorder& recorder() {
  StepRecorder* r = step_recorder(Device::Kind::Cuda);
  REQUIRE(r != nullptr);
  return *r;
}

}  // namespace

TEST_CASE("cuda recorded steps: replays patch AdamW and read new inputs",
          "[cuda]") {
  const Shape s = {3, 1000};
  const DType d = DType::F32;
  Tensor p = rand(s, d, 1), m = rand(s, d, 2, 0.0, 0.1),
         v = rand(s, d, 3, 0.0, 0.01);
  Tensor pg = to_gpu(p), mg = to_gpu(m), vg = to_gpu(v);
  Tensor two = Tensor::full({}, 2.0, d), two_g = to_gpu(two);
  Tensor gin = to_gpu(rand(s, d, 10));  // the step's input buffer
  auto lr = [](int k) { return 1e-3 / k; };

  StepRecorder& rec = recorder();
  rec.begin(0);
  rec.adopt(pg);
  rec.adopt(mg);
  rec.adopt(vg);
  rec.adopt(gin);
  Tensor y = GPU().binary(BinaryOp::Mul, gin, two_g);
  GPU().adamw_update(pg, y, mg, vg, lr(1), 0.9, 0.999, 1e-8, 0.01, 1);
  std::string why;
  std::unique_ptr<RecordedStep> step = rec.end(why);
  INFO(why);
  REQUIRE(step);
  CHECK(step->patchable() == 1);
  CHECK(step->nodes() >= 2);

  for (int k = 1; k <= 5; ++k) {
    Tensor g = rand(s, d, 10 + k - 1);
    if (k > 1) gin.copy_from(to_gpu(g));
    Tensor yc = CPU().binary(BinaryOp::Mul, g, two);
    CPU().adamw_update(p, yc, m, v, lr(k), 0.9, 0.999, 1e-8, 0.01, k);
    if (k == 1)
      step->replay([] {});
    else
      step->replay([&] {
        GPU().adamw_update(pg, y, mg, vg, lr(k), 0.9, 0.999, 1e-8, 0.01, k);
      });
  }
  require_same_bits(p, pg, "param after 5 replays");
  require_same_bits(m, mg, "first moment");
  require_same_bits(v, vg, "second moment");
}

TEST_CASE("cuda recorded steps: a check recorded on the device raises later",
          "[cuda]") {
  Tensor flag = to_gpu(Tensor::full({}, 0.0, DType::Bool));
  StepRecorder& rec = recorder();
  rec.begin(0);
  rec.adopt(flag);
  GPU().flag_if(flag, 1u << 2);  // kLabelOutOfRange
  std::string why;
  std::unique_ptr<RecordedStep> step = rec.end(why);
  REQUIRE(step);
  step->replay([] {});
  CHECK(to_cpu(flag).item() == 0);  // false: nothing raised
  flag.copy_from(to_gpu(Tensor::full({}, 1.0, DType::Bool)));
  step->replay([] {});
  CHECK_THROWS_WITH(to_cpu(flag), Catch::Contains("class label out of range"));
}
