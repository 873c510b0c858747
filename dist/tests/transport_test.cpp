// A GPU rank's communicators without a GPU (issue 31): HostStagedComm
// over the in-process hub and over Gloo, its tensors on a stand-in device
// whose bytes are host memory poisoned on allocation (so a result that was
// not copied back reads as the poison); Transport's choice of a
// communicator; the store's value of rank 0 that NCCL's join passes its id
// through. Values are hand-computed from each rank's inputs.

#include "dist/comm/transport.h"

#include <cstdlib>
#include <cstring>

#include "dist/comm/group_store.h"
#include "dist/comm/host_staged_comm.h"
#include "dist/tests/comm_test_util.h"
#include "ops/backend/backend.h"

namespace {

using ss::ops::Device;

// A "GPU" whose bytes live on the host: copies through it are counted,
// and fresh bytes are 0xCD (a f32 of them is -4.3e8).
struct HostBackedGpu : ss::ops::DeviceMemory {
  std::atomic<int> uploads{0}, downloads{0};
  void* allocate(size_t nbytes, int) override {
    void* p = std::malloc(nbytes ? nbytes : 1);
    std::memset(p, 0xCD, nbytes);
    return p;
  }
  void release(void* p, size_t, int) override { std::free(p); }
  void to_host(void* dst, const void* src, size_t n, int) override {
    ++downloads;
    std::memcpy(dst, src, n);
  }
  void from_host(void* dst, const void* src, size_t n, int) override {
    ++uploads;
    std::memcpy(dst, src, n);
  }
  void on_device(void* dst, const void* src, size_t n, int) override {
    std::memmove(dst, src, n);
  }
};

// Registered for Cuda while a test runs.
struct StandInGpu {
  HostBackedGpu memory;
  StandInGpu() { ss::ops::set_device_memory(Device::Kind::Cuda, &memory); }
  ~StandInGpu() { ss::ops::set_device_memory(Device::Kind::Cuda, nullptr); }
};

Device gpu(int i) {
  return Device{Device::Kind::Cuda, i};
}

Tensor on(Device d,
          const Shape& shape,
          const std::vector<double>& v,
          DType dt = DType::F32) {
  return Tensor::from_doubles(shape, v, dt).to(d);
}

// The collectives of rank r of 3, each tensor on gpu(r) (the ranks of
// cuda[0 1 2]), against values worked out by hand.
void every_collective(Communicator& c) {
  const int r = c.rank();
  const double x = r + 1;  // 1, 2, 3
  EXPECT(c.device() == gpu(r));

  Tensor t = on(gpu(r), {2}, {x, 10 * x});
  void* bytes = t.raw();
  c.all_reduce(t, ReduceOp::Sum, opt());
  EXPECT(t.device() == gpu(r) && t.raw() == bytes);  // in place
  EXPECT_VALUES(t, (std::vector<double>{6, 60}));

  Tensor m = on(gpu(r), {1}, {-x}, DType::F64);
  c.all_reduce(m, ReduceOp::Max, opt());
  EXPECT_VALUES(m, (std::vector<double>{-1}));

  Tensor h = on(gpu(r), {1}, {x + 0.5}, DType::BF16);  // exact in bf16
  c.all_reduce(h, ReduceOp::Sum, opt());
  EXPECT(h.dtype() == DType::BF16);
  EXPECT_VALUES(h, (std::vector<double>{7.5}));

  Tensor all;
  c.all_gather(on(gpu(r), {1}, {x}), all, opt());
  EXPECT(all.device() == gpu(r));
  EXPECT_VALUES(all, (std::vector<double>{1, 2, 3}));

  // Rank 0 has two rows, the others one.
  const std::vector<int64_t> rows{2, 1, 1};
  Tensor mine = r == 0 ? on(gpu(r), {2, 1}, {1, 2}) : on(gpu(r), {1, 1}, {x});
  Tensor v;
  c.all_gather_v(mine, v, rows, opt());
  EXPECT(v.device() == gpu(r) && v.shape() == (Shape{4, 1}));
  EXPECT_VALUES(v, (std::vector<double>{1, 2, 2, 3}));

  Tensor block;
  c.reduce_scatter(
      on(gpu(r), {3}, {x, 2 * x, 3 * x}), block, ReduceOp::Sum, opt());
  EXPECT(block.device() == gpu(r));
  EXPECT_VALUES(block, (std::vector<double>{6.0 * (r + 1)}));

  Tensor b = on(gpu(r), {2}, {x, x}, DType::I64);
  c.broadcast(b, 1, opt());
  EXPECT_VALUES(b, (std::vector<double>{2, 2}));

  // A ring: each rank sends its x to the next and gets the previous's.
  Tensor got = on(gpu(r), {1}, {0});
  c.send_recv(on(gpu(r), {1}, {x}), (r + 1) % 3, got, (r + 2) % 3, opt());
  EXPECT_VALUES(got, (std::vector<double>{double((r + 2) % 3 + 1)}));

  c.barrier(opt());

  // A host tensor (a kernel signature, a count) is taken too, and its
  // result stays on the host.
  Tensor host_all;
  c.all_gather(Tensor::from_doubles({1}, {x}, DType::I32), host_all, opt());
  EXPECT(host_all.device() == Device{});
  EXPECT_VALUES(host_all, (std::vector<double>{1, 2, 3}));

  // Another rank's GPU is refused before anything moves.
  bool refused = false;
  try {
    Tensor elsewhere = on(gpu((r + 1) % 3), {1}, {x});
    c.all_reduce(elsewhere, ReduceOp::Sum, opt());
  } catch (const CollectiveError& e) {
    refused =
        e.kind() == CollectiveError::Kind::Other &&
        std::string(e.what()).find(
            "this communicator takes CPU tensors or cuda:" + std::to_string(r) +
            "'s") != std::string::npos;
  }
  EXPECT(refused);
}

}  // namespace

TEST_CASE("a GPU rank's collectives through the host: every op, in place",
          "[dist]") {
  StandInGpu stand_in;
  auto hub = std::make_shared<InprocHub>(3);
  require_ok(run_ranks(3, [&](int r) {
    HostStagedComm c(std::make_unique<InprocComm>(hub, r), gpu(r));
    every_collective(c);
    // Its log is what it was handed, as NCCL's would be.
    std::vector<CollectiveRecord> log = c.log();
    EXPECT(!log.empty() && log[0].op == CollectiveOp::AllReduce &&
           log[0].count == 2 && log[0].bytes == 8);
  }));
  // Every device tensor went to the host and back.
  REQUIRE(stand_in.memory.downloads > 0);
  REQUIRE(stand_in.memory.uploads > 0);
}

TEST_CASE("a GPU rank's collectives through the host over Gloo", "[dist]") {
  StandInGpu stand_in;
  JobDir dir = make_job_dir("ss-transport-test");
  require_ok(run_ranks(3, [&](int r) {
    std::unique_ptr<Communicator> c =
        Transport::of(gpu(r), /*shared_gpu=*/true)
            .join(r, 3, dir.path(), "t", milliseconds(10000));
    every_collective(*c);
  }));
}

TEST_CASE("a GPU rank's communicator through the host, once closed, refuses",
          "[dist]") {
  StandInGpu stand_in;
  HostStagedComm c(
      std::make_unique<InprocComm>(std::make_shared<InprocHub>(1), 0), gpu(0));
  Tensor t = on(gpu(0), {1}, {4});
  c.all_reduce(t, ReduceOp::Sum, opt());
  CHECK(t.to_doubles() == std::vector<double>{4});
  c.close();
  CHECK_THROWS_AS(c.barrier(opt()), CollectiveError);
  CHECK_THROWS_AS(c.all_reduce(t, ReduceOp::Sum, opt()), CollectiveError);
}

TEST_CASE("Transport: Gloo on the CPU, NCCL on a GPU of each rank", "[dist]") {
  CHECK(Transport::of(Device{}).kind == Transport::Kind::Gloo);
  Transport t = Transport::of(gpu(3));
  CHECK(t.kind == Transport::Kind::Nccl);
  CHECK(t.device == gpu(3));
  CHECK(Transport::of(gpu(0), true).kind == Transport::Kind::GlooThroughHost);

  if (ss::ops::cuda_device_count() > 0) {
    WARN("a GPU answers: NCCL's join is ss_cuda_tests' to check");
    return;
  }
  // Without a GPU (or without the CUDA module) NCCL's join says why, as a
  // Connect error, before it waits for anyone.
  JobDir dir = make_job_dir("ss-transport-test");
  const auto t0 = Clock::now();
  try {
    t.join(1, 2, dir.path(), "t", milliseconds(30000));
    FAIL("joined an NCCL group without a GPU");
  } catch (const CollectiveError& e) {
    CHECK(e.kind() == CollectiveError::Kind::Other);
    CHECK(e.op() == CollectiveOp::Connect);
    CHECK_THAT(e.what(), Catch::Contains("NCCL is not available: "));
  }
  CHECK(Clock::now() - t0 < std::chrono::seconds(5));
}

TEST_CASE("the store's value of rank 0: made once, read by every rank",
          "[dist]") {
  JobDir dir = make_job_dir("ss-transport-test");
  std::atomic<int> made{0};
  std::vector<std::vector<char>> seen(3);
  require_ok(run_ranks(3, [&](int r) {
    auto store = rendezvous::open_store(dir.path());
    seen[size_t(r)] = detail::value_of_rank0(
        *store,
        r,
        "g",
        "g.id",
        [&] {
          ++made;
          return std::vector<char>{'i', 'd', char(0), char(-1)};
        },
        milliseconds(10000),
        milliseconds(1));
  }));
  CHECK(made == 1);
  for (const auto& s : seen)
    CHECK(s == (std::vector<char>{'i', 'd', char(0), char(-1)}));

  auto store = rendezvous::open_store(dir.path());
  auto never = [] { return std::vector<char>{}; };
  // Rank 0 never comes: a timeout, worded as the Gloo join's.
  const auto t0 = Clock::now();
  try {
    detail::value_of_rank0(
        *store, 1, "h", "h.id", never, milliseconds(100), milliseconds(1));
    FAIL("no rank 0");
  } catch (const std::runtime_error& e) {
    CHECK_THAT(e.what(), Catch::StartsWith("Wait timeout"));
  }
  CHECK(Clock::now() - t0 < std::chrono::seconds(5));
  // A member that failed before joining ends the wait at once.
  Transport::leave_unjoined(dir.path(), "k");
  try {
    detail::value_of_rank0(
        *store, 2, "k", "k.id", never, milliseconds(30000), milliseconds(1));
    FAIL("waited for a group a member left");
  } catch (const std::runtime_error& e) {
    CHECK_THAT(e.what(), Catch::Contains("failed before it joined"));
  }
}

TEST_CASE("Tensor::copy_from writes in place between the host and a device",
          "[dist]") {
  StandInGpu stand_in;
  Tensor d = Tensor::zeros({3}, DType::F64, gpu(1));
  void* bytes = d.raw();
  d.copy_from(Tensor::from_doubles({3}, {1, -2, 3.5}, DType::F64));
  CHECK(d.raw() == bytes);
  CHECK(d.to_doubles() == std::vector<double>{1, -2, 3.5});
  Tensor h = Tensor::zeros({3}, DType::F64);
  h.copy_from(d);
  CHECK(h.to_doubles() == std::vector<double>{1, -2, 3.5});
  // Another GPU: through the host.
  Tensor e = Tensor::zeros({3}, DType::F64, gpu(0));
  e.copy_from(d);
  CHECK(e.to_doubles() == std::vector<double>{1, -2, 3.5});
  // Its own bytes: nothing to do.
  d.copy_from(d);
  CHECK(d.to_doubles() == std::vector<double>{1, -2, 3.5});
  CHECK_THROWS_AS(d.copy_from(Tensor::zeros({2}, DType::F64)),
                  std::invalid_argument);
  CHECK_THROWS_AS(d.copy_from(Tensor::zeros({3}, DType::F32)),
                  std::invalid_argument);
}
