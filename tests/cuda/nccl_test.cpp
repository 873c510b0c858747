// NCCL's communicator (dist/comm/nccl/nccl_comm.cpp) with one rank: the
// lent machine has one GPU and NCCL refuses two ranks on one, so what is
// proven here is every call's path (the lane's stream after the compute
// stream, the host's wait, halves through f32, host tensors through the
// GPU, outputs on the input's device, close), with values worked out by
// hand; several ranks' arithmetic is Gloo's, tested in ss_tests ([dist]),
// and the workers' GPU path is the conformance run of scripts/gpu_check.sh
// on cuda[0 1 2] (Note [Several GPUs] in interp/devices/gpu_ranks.cpp).

#include <catch2/catch.hpp>

#include "dist/comm/transport.h"
#include "dist/rendezvous/job_dir.h"
#include "tests/cuda/cuda_test_util.h"

using namespace cuda_test;
namespace dist = ss::dist;

namespace {

dist::Options opt() {
  return dist::Options::with_timeout(std::chrono::milliseconds(20000));
}

Tensor gpu_values(const Shape& s,
                  const std::vector<double>& v,
                  types::DType dt) {
  return to_gpu(Tensor::from_doubles(s, v, dt));
}

}  // namespace

TEST_CASE("cuda nccl: one rank's collectives on the GPU and the host",
          "[cuda]") {
  dist::JobDir dir = dist::make_job_dir("ss-nccl-test");
  std::unique_ptr<dist::Communicator> c =
      dist::Transport::of(gpu0()).join(0, 1, dir.path(), "t");
  REQUIRE(c->device() == gpu0());
  REQUIRE(c->size() == 1);

  for (types::DType dt : {types::DType::F32,
                          types::DType::F64,
                          types::DType::I32,
                          types::DType::I64,
                          types::DType::BF16,
                          types::DType::F16}) {
    INFO(types::dtype_name(dt));
    Tensor t = gpu_values({5}, {1, -2, 3, 4, 5}, dt);
    const void* bytes = t.raw();
    c->all_reduce(t, dist::ReduceOp::Sum, opt());
    CHECK(t.raw() == bytes);  // in place
    CHECK(t.dtype() == dt);
    CHECK(t.to_doubles() == std::vector<double>{1, -2, 3, 4, 5});
    c->all_reduce(t, dist::ReduceOp::Max, opt());
    CHECK(t.to_doubles() == std::vector<double>{1, -2, 3, 4, 5});
  }

  Tensor all;
  c->all_gather(
      gpu_values({2, 2}, {1, 2, 3, 4}, types::DType::F32), all, opt());
  CHECK(all.device() == gpu0());
  CHECK(all.shape() == Shape{2, 2});
  CHECK(all.to_doubles() == std::vector<double>{1, 2, 3, 4});

  Tensor v;
  c->all_gather_v(
      gpu_values({3, 1}, {7, 8, 9}, types::DType::I64), v, {3}, opt());
  CHECK(v.to_doubles() == std::vector<double>{7, 8, 9});

  Tensor block;
  c->reduce_scatter(gpu_values({2}, {0.5, 1.5}, types::DType::BF16),
                    block,
                    dist::ReduceOp::Sum,
                    opt());
  CHECK(block.dtype() == types::DType::BF16);
  CHECK(block.to_doubles() == std::vector<double>{0.5, 1.5});

  Tensor b = gpu_values({1}, {42}, types::DType::F64);
  c->broadcast(b, 0, opt());
  CHECK(b.to_doubles() == std::vector<double>{42});
  c->barrier(opt());

  // A host tensor goes through the GPU; its result is on the host, in the
  // caller's bytes.
  Tensor h = Tensor::from_doubles({2}, {3, 4}, types::DType::I32);
  const void* host_bytes = h.raw();
  c->all_reduce(h, dist::ReduceOp::Sum, opt());
  CHECK(h.device() == Device{});
  CHECK(h.raw() == host_bytes);
  CHECK(h.to_doubles() == std::vector<double>{3, 4});
  Tensor host_all;
  c->all_gather(h, host_all, opt());
  CHECK(host_all.device() == Device{});
  CHECK(host_all.to_doubles() == std::vector<double>{3, 4});

  // Every call above was logged as NCCL moved it.
  CHECK(c->log().front().op == dist::CollectiveOp::AllReduce);
  CHECK(c->log().front().count == 5);

  // Sending to itself is refused before anything is queued.
  Tensor none;
  CHECK_THROWS_AS(c->send_recv(b, 0, none, -1, opt()), dist::CollectiveError);

  c->close();
  CHECK_THROWS_AS(c->barrier(opt()), dist::CollectiveError);
}

TEST_CASE("cuda nccl: the lane of the gradient buckets has its own stream",
          "[cuda]") {
  // Lane 1's communicator is made by its first collective; both lanes
  // then work side by side (Note [NCCL beside the compute stream]).
  dist::JobDir dir = dist::make_job_dir("ss-nccl-test");
  std::unique_ptr<dist::Communicator> c =
      dist::Transport::of(gpu0()).join(0, 1, dir.path(), "t");
  dist::Options lane1 = opt();
  lane1.lane = 1;
  Tensor a = gpu_values({3}, {1, 2, 3}, types::DType::F32);
  Tensor b = gpu_values({3}, {4, 5, 6}, types::DType::F32);
  c->all_reduce(a, dist::ReduceOp::Sum, opt());
  c->all_reduce(b, dist::ReduceOp::Sum, lane1);
  CHECK(a.to_doubles() == std::vector<double>{1, 2, 3});
  CHECK(b.to_doubles() == std::vector<double>{4, 5, 6});
}
