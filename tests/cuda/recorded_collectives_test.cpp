// Collectives inside a recorded step on a GPU: NCCL's queued into the
// graph (Note [A recorded step's collectives] in
// dist/comm/nccl/nccl_comm.cpp), and the host-staged ones of ranks that
// share a GPU recorded as host calls (Note [Host calls in a recorded
// step] in ops/cuda/cuda_recording.cu). Each step is recorded between a
// kernel that makes the collective's input and one that reads its result,
// and replayed on new inputs; the oracle is the arithmetic worked out on
// the CPU backend. With one NCCL rank a sum is its input, so what NCCL's
// case proves is the graph's order and joins (an unjoined lane would fail
// the capture's end); the host call's case uses a host communicator that
// adds one, so a replay that skipped or repeated it, or ran it out of
// order, gives other numbers. Several ranks' recorded steps are proven on
// the stand-in GPU (interp/tests/recorded_ranks_test.cpp).

#include <memory>
#include <string>

#include "dist/comm/host_staged_comm.h"
#include "dist/comm/transport.h"
#include "dist/rendezvous/job_dir.h"
#include "ops/backend/recorded_step.h"
#include "tests/cuda/cuda_test_util.h"

namespace {

using namespace cuda_test;
namespace dist = ss::dist;

StepRecorder& recorder() {
  StepRecorder* r = step_recorder(Device::Kind::Cuda);
  REQUIRE(r != nullptr);
  return *r;
}

dist::Options lane(int k) {
  dist::Options o = dist::Options::with_timeout(std::chrono::seconds(20));
  o.lane = k;
  return o;
}

// A host communicator of one rank whose all-reduce adds one to each value.
class AddsOne final : public dist::Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void all_reduce(Tensor& t, dist::ReduceOp, const dist::Options&) override {
    REQUIRE(t.device().kind == Device::Kind::Cpu);
    float* v = static_cast<float*>(t.raw());
    for (int64_t i = 0; i < t.numel(); ++i) v[i] += 1.0f;
    ++calls;
  }
  void all_gather(const Tensor&, Tensor&, const dist::Options&) override {}
  void all_gather_v(const Tensor&,
                    Tensor&,
                    const std::vector<int64_t>&,
                    const dist::Options&) override {}
  void reduce_scatter(const Tensor&,
                      Tensor&,
                      dist::ReduceOp,
                      const dist::Options&) override {}
  void broadcast(Tensor&, int, const dist::Options&) override {}
  void send(const Tensor&, int, const dist::Options&) override {}
  void recv(Tensor&, int, const dist::Options&) override {}
  void send_recv(
      const Tensor&, int, Tensor&, int, const dist::Options&) override {}
  void barrier(const dist::Options&) override {}
  void close() override {}
  int calls = 0;

 protected:
  void check_usable(dist::CollectiveOp) override {}
};

// Records y = (x * 2) summed by [comm] on [o]'s lane, then * 3.
std::unique_ptr<RecordedStep> record(dist::Communicator& comm,
                                     Tensor& x,
                                     Tensor& y,
                                     const dist::Options& o) {
  Tensor two = to_gpu(Tensor::full({}, 2.0, DType::F32));
  Tensor three = to_gpu(Tensor::full({}, 3.0, DType::F32));
  StepRecorder& rec = recorder();
  rec.begin(0);
  rec.adopt(x);
  rec.adopt(two);
  rec.adopt(three);
  Tensor buf = GPU().binary(BinaryOp::Mul, x, two);
  comm.all_reduce(buf, dist::ReduceOp::Sum, o);
  comm.join_lanes();
  y = GPU().binary(BinaryOp::Mul, buf, three);
  std::string why;
  std::unique_ptr<RecordedStep> step = rec.end(why);
  INFO(why);
  REQUIRE(step);
  return step;
}

}  // namespace

TEST_CASE("cuda recorded collectives: NCCL's all-reduce inside the graph",
          "[cuda]") {
  dist::JobDir dir = dist::make_job_dir("ss-nccl-recorded");
  std::unique_ptr<dist::Communicator> c =
      dist::Transport::of(gpu0()).join(0, 1, dir.path(), "t");
  for (int k : {0, 1}) {
    INFO("lane " << k);
    // Each lane's communicator exists before the recording, as the
    // probe's eager call makes it.
    Tensor warm = to_gpu(Tensor::full({4}, 1.0, DType::F32));
    c->all_reduce(warm, dist::ReduceOp::Sum, lane(k));
    Tensor x = to_gpu(rand({1000}, DType::F32, 7));
    Tensor y;
    std::unique_ptr<RecordedStep> step = record(*c, x, y, lane(k));
    for (int r = 0; r < 3; ++r) {
      Tensor host = rand({1000}, DType::F32, 20 + r);
      x.copy_from(to_gpu(host));
      step->replay([] {});
      c->await_device(lane(0));
      step->settle();
      Tensor want = CPU().binary(
          BinaryOp::Mul,
          CPU().binary(BinaryOp::Mul, host, Tensor::full({}, 2.0, DType::F32)),
          Tensor::full({}, 3.0, DType::F32));
      require_same_bits(want, y, "x * 2 * 3 after a replay");
    }
  }
}

TEST_CASE("cuda recorded collectives: a host call runs at each replay",
          "[cuda]") {
  auto adds = std::make_unique<AddsOne>();
  AddsOne& host = *adds;
  dist::HostStagedComm c(std::move(adds), gpu0());
  Tensor x = to_gpu(rand({300}, DType::F32, 3));
  Tensor y;
  std::unique_ptr<RecordedStep> step = record(c, x, y, lane(0));
  CHECK(host.calls == 0);  // recording runs nothing
  const Tensor two = Tensor::full({}, 2.0, DType::F32);
  const Tensor one = Tensor::full({}, 1.0, DType::F32);
  const Tensor three = Tensor::full({}, 3.0, DType::F32);
  for (int r = 0; r < 3; ++r) {
    Tensor in = rand({300}, DType::F32, 40 + r);
    x.copy_from(to_gpu(in));
    step->replay([] {});
    step->settle();
    CHECK(host.calls == r + 1);
    Tensor want = CPU().binary(
        BinaryOp::Mul,
        CPU().binary(BinaryOp::Add, CPU().binary(BinaryOp::Mul, in, two), one),
        three);
    require_same_bits(want, y, "(x * 2 + 1) * 3 after a replay");
  }
}
