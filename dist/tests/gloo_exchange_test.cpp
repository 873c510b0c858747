// GlooComm's all-reduce without Gloo's ring: two ranks exchanging whole
// buffers on the event loop (Note [Two ranks exchange]) and the direct
// exchange on sync-mode pairs, one mesh per lane (Note [Direct
// exchange]), or through shared memory where the ranks share a host (Note
// [Direct exchange in shared memory]: each case runs both ways), with their
// failures; and the latency benchmarks (`ss_tests "[dist_bench]"`).

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "dist/tests/comm_test_util.h"

// Latency of a Gloo all-reduce on loopback, thread ranks (not part of the
// [dist] suite: run with `ss_tests "[dist_bench]"`).
TEST_CASE("GlooComm: all-reduce latency", "[.][dist_bench]") {
  for (int n : {2, 3}) {
    for (int64_t count : {int64_t{1}, int64_t{203264}}) {
      const int iters = count == 1 ? 400 : 100;
      std::vector<double> us;
      require_ok(run_gloo(n, [&](Communicator& c) {
        Tensor t = Tensor::full({count}, 1, DType::F32);
        for (int i = 0; i < 10; ++i) c.all_reduce(t, ReduceOp::Sum, opt());
        c.barrier(opt());
        for (int i = 0; i < iters; ++i) {
          auto t0 = Clock::now();
          c.all_reduce(t, ReduceOp::Sum, opt());
          if (c.rank() == 0)
            us.push_back(
                std::chrono::duration<double, std::micro>(Clock::now() - t0)
                    .count());
        }
      }));
      std::sort(us.begin(), us.end());
      std::printf(
          "gloo all-reduce %d ranks, %lld f32: median %.1f us, p90 %.1f us\n",
          n,
          (long long)count,
          us[us.size() / 2],
          us[us.size() * 9 / 10]);
    }
  }
}

// Note [Direct exchange]'s measurement: a 2-float and an 813 KB
// all-reduce with 0.5 ms of busy computation around them, per step, on
// the event loop's path (a timeout of their own) and on the direct
// exchange, on thread ranks (`ss_tests "[dist_bench]"`).
TEST_CASE("GlooComm: all-reduces between computations", "[.][dist_bench]") {
  for (int n : {2, 3}) {
    for (int ms : {20001, 20000}) {
      std::vector<double> us;
      require_ok(run_gloo_direct(n, [&](GlooComm& c) {
        Tensor big = Tensor::full({203264}, 1, DType::F32);
        Tensor small = Tensor::full({2}, 1, DType::F32);
        auto spin = [](double micros) {
          auto t0 = Clock::now();
          while (std::chrono::duration<double, std::micro>(Clock::now() - t0)
                     .count() < micros) {
          }
        };
        for (int i = 0; i < 10; ++i) c.all_reduce(big, ReduceOp::Sum, opt(ms));
        c.barrier(opt());
        for (int i = 0; i < 300; ++i) {
          auto t0 = Clock::now();
          spin(250);
          c.all_reduce(small, ReduceOp::Sum, opt(ms));
          spin(250);
          c.all_reduce(big, ReduceOp::Sum, opt(ms));
          if (c.rank() == 0)
            us.push_back(
                std::chrono::duration<double, std::micro>(Clock::now() - t0)
                    .count() -
                500);
        }
      }));
      std::sort(us.begin(), us.end());
      std::printf(
          "%d ranks, %s: all-reduces took median %.1f us, p90 %.1f us a step "
          "beyond the 500 us of computation\n",
          n,
          ms == 20000 ? "direct exchange" : "event loop",
          us[us.size() / 2],
          us[us.size() * 9 / 10]);
    }
  }
}

TEST_CASE("GlooComm: two ranks exchange (Note [Two ranks exchange])",
          "[dist]") {
  // Each rank's sum is mine + theirs: exact for these values, the same
  // bits on both ranks, every op and dtype; and two tags at once from two
  // threads of each rank (the gradient buckets' communication thread).
  std::vector<std::vector<float>> got(2);
  require_ok(run_gloo(2, [&](Communicator& c) {
    const int r = c.rank();
    std::vector<double> v(100000);
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = (r + 1) * 0.25 * double(i % 97);
    Tensor t = Tensor::from_doubles({int64_t(v.size())}, v, DType::F32);
    c.all_reduce(t, ReduceOp::Sum, opt());
    for (size_t i = 0; i < v.size(); i += 997)
      EXPECT(t.at(i) == 0.75 * double(i % 97));
    got[r].assign(t.data<float>(), t.data<float>() + t.numel());
    Tensor m =
        Tensor::from_doubles({3}, {double(r), 5.0 - r, -1.0}, DType::I64);
    c.all_reduce(m, ReduceOp::Max, opt());
    EXPECT(m.to_doubles() == std::vector<double>({1, 5, -1}));
    Tensor p = Tensor::from_doubles({2}, {2.0 + r, 0.5}, DType::F64);
    c.all_reduce(p, ReduceOp::Prod, opt());
    EXPECT(p.to_doubles() == std::vector<double>({6, 0.25}));
    Tensor a = Tensor::full({5000}, 1.0 + r, DType::F32);
    Tensor b = Tensor::full({7}, 10.0 * (r + 1), DType::F64);
    std::thread other([&] {
      c.all_reduce(
          b, ReduceOp::Sum, Options::with_timeout(milliseconds(20000), 7));
    });
    c.all_reduce(a, ReduceOp::Min, opt());
    other.join();
    EXPECT(a.at(4999) == 1.0);
    EXPECT(b.at(6) == 30.0);
  }));
  CHECK(got[0] == got[1]);
}

TEST_CASE("GlooComm: direct exchange on 2 and 3 ranks (Note [Direct exchange])",
          "[dist]") {
  for (bool shm : {true, false})
    for (int n : {2, 3}) {
      INFO(n << " ranks, " << (shm ? "shared memory" : "sockets"));
      ExchangeVia via(shm);
      // Values whose f32 sums depend on the order: every rank must add the
      // buffers in rank order, b0 + b1 + b2, and get the same bits.
      const int64_t count = 100003;  // 6.1 chunks of 64 KiB
      auto value = [](int r, int64_t i) {
        return std::ldexp(1.0 + double(i % 89) / 7.0, int(r * 11 % 23) - 11);
      };
      std::vector<std::vector<float>> got(n);
      std::vector<uint64_t> direct(n), before(n);
      require_ok(run_gloo_direct(n, [&](GlooComm& c) {
        const int r = c.rank();
        EXPECT(c.shared_memory() == shm);
        before[r] = c.direct_all_reduces();
        std::vector<double> v(count);
        for (int64_t i = 0; i < count; ++i) v[i] = value(r, i);
        Tensor t = Tensor::from_doubles({count}, v, DType::F32);
        // Lane 1 at the same time from a second thread (the gradient
        // buckets' thread) has a direct exchange of its own.
        Tensor b = Tensor::full({7}, 10.0 * (r + 1), DType::F64);
        std::thread other([&] {
          c.all_reduce(b,
                       ReduceOp::Sum,
                       Options::with_timeout(milliseconds(20000), 7, 1));
        });
        c.all_reduce(t, ReduceOp::Sum, opt());
        other.join();
        EXPECT(b.at(6) == (n == 2 ? 30.0 : 60.0));
        got[r].assign(t.data<float>(), t.data<float>() + t.numel());
        Tensor one = Tensor::full({1}, r + 1.0, DType::F32);
        c.all_reduce(one, ReduceOp::Sum, opt());
        EXPECT(one.at(0) == (n == 2 ? 3.0 : 6.0));
        Tensor m =
            Tensor::from_doubles({3}, {double(r), 5.0 - r, -1.0}, DType::I64);
        c.all_reduce(m, ReduceOp::Max, opt());
        EXPECT(m.to_doubles() == std::vector<double>({n - 1.0, 5, -1}));
        Tensor lo = Tensor::from_doubles({2}, {double(r), 7.0}, DType::I32);
        c.all_reduce(lo, ReduceOp::Min, opt());
        EXPECT(lo.to_doubles() == std::vector<double>({0, 7}));
        Tensor p = Tensor::from_doubles({2}, {2.0 + r, 0.5}, DType::F64);
        c.all_reduce(p, ReduceOp::Prod, opt());
        EXPECT(p.at(0) == (n == 2 ? 6.0 : 24.0));
        EXPECT(p.at(1) == (n == 2 ? 0.25 : 0.125));
        // A timeout other than the sync pairs' takes the event loop.
        Tensor q = Tensor::full({3}, 1.0, DType::F32);
        c.all_reduce(q, ReduceOp::Sum, opt(20001));
        EXPECT(q.at(2) == double(n));
        direct[r] = c.direct_all_reduces() - before[r];
      }));
      for (int r = 0; r < n; ++r) {
        CHECK(direct[r] == 6);  // 5 on lane 0, 1 on lane 1, not opt(20001)
        CHECK(got[r] == got[0]);
      }
      for (int64_t i = 0; i < count; i += 1009) {
        float s = float(value(0, i)) + float(value(1, i));
        if (n == 3) s += float(value(2, i));
        CHECK(got[0][i] == s);
      }
    }
}

TEST_CASE(
    "GlooComm: the direct reduce-scatter sends each rank its block (Note "
    "[Direct reduce-scatter]), and a large all-reduce is one and an exchange",
    "[dist]") {
  for (bool shm : {true, false})
    for (int n : {2, 3}) {
      INFO(n << " ranks, " << (shm ? "shared memory" : "sockets"));
      ExchangeVia via(shm);
      // Order-dependent f32 sums again: block r of b0 + b1 + b2, in that
      // order, whatever the rank; 2.4 chunks of 64 KiB a block.
      const int64_t block = 40001;
      auto value = [](int r, int64_t i) {
        return std::ldexp(1.0 + double(i % 89) / 7.0, int(r * 11 % 23) - 11);
      };
      std::vector<std::vector<float>> got(n);
      std::vector<uint64_t> sent(n);
      require_ok(run_gloo_direct(n, [&](GlooComm& c) {
        const int r = c.rank();
        EXPECT(c.shared_memory() == shm);
        std::vector<double> v(block * n);
        for (int64_t i = 0; i < block * n; ++i) v[i] = value(r, i);
        Tensor in = Tensor::from_doubles({block * n}, v, DType::F32);
        Tensor out;
        c.reduce_scatter(in, out, ReduceOp::Sum, opt());
        EXPECT((out.shape() == Shape{block}));
        got[r].assign(out.data<float>(), out.data<float>() + out.numel());
        // The input is left as it was; i64 and max take the same path.
        EXPECT(in.at(5) == float(value(r, 5)));
        Tensor m = Tensor::from_doubles(
            {2 * n}, std::vector<double>(2 * n, double(r)), DType::I64);
        Tensor mo;
        c.reduce_scatter(m, mo, ReduceOp::Max, opt());
        EXPECT(mo.to_doubles() == std::vector<double>({n - 1.0, n - 1.0}));
        sent[r] = c.bytes_sent(CollectiveOp::ReduceScatter);
        // A large all-reduce whose values divide among the ranks goes as
        // this reduce-scatter and an exchange of the blocks (Note [Large
        // direct all-reduces]): the same bits as the sums by hand.
        const int64_t big = 1572864;  // 6 MiB of f32, divisible by 2 and 3
        std::vector<double> w(big);
        for (int64_t i = 0; i < big; ++i) w[i] = value(r, i);
        Tensor t = Tensor::from_doubles({big}, w, DType::F32);
        c.all_reduce(t, ReduceOp::Sum, opt());
        for (int64_t i = 0; i < big; i += 9973) {
          float sum = float(value(0, i)) + float(value(1, i));
          if (n == 3) sum += float(value(2, i));
          EXPECT(t.data<float>()[i] == sum);
        }
        EXPECT(t.data<float>()[big - 1] ==
               float(value(0, big - 1)) + float(value(1, big - 1)) +
                   (n == 3 ? float(value(2, big - 1)) : 0.0f));
      }));
      for (int r = 0; r < n; ++r) {
        INFO("rank " << r);
        CHECK(sent[r] == uint64_t(block * n * 4 + 2 * n * 8));
        for (int64_t i = 0; i < block; i += 997) {
          const int64_t k = r * block + i;
          float s = float(value(0, k)) + float(value(1, k));
          if (n == 3) s += float(value(2, k));
          CHECK(got[r][i] == s);
        }
      }
    }
}

TEST_CASE(
    "GlooComm: the direct exchange fails fast when a rank leaves, and "
    "times out after the pairs' timeout",
    "[dist]") {
  for (bool shm : {true, false})
    for (bool leave : {true, false}) {
      INFO((leave ? "a rank leaves, " : "a rank is late, ")
           << (shm ? "shared memory" : "sockets"));
      ExchangeVia via(shm);
      CollectiveError::Kind kind = CollectiveError::Kind::Other;
      std::string what;
      double secs = 0;
      require_ok(run_gloo_direct(
          2,
          [&](GlooComm& c) {
            EXPECT(c.shared_memory() == shm);
            c.barrier(opt(1000));
            if (c.rank() == 1) {
              std::this_thread::sleep_for(milliseconds(leave ? 100 : 2500));
              c.close();
              return;
            }
            auto t0 = Clock::now();
            try {
              Tensor t = Tensor::full({200000}, 1, DType::F32);
              c.all_reduce(t, ReduceOp::Sum, opt(1000));
              throw RankFailure("all_reduce succeeded");
            } catch (const CollectiveError& e) {
              kind = e.kind();
              what = e.what();
            }
            secs = std::chrono::duration<double>(Clock::now() - t0).count();
            EXPECT(c.direct_all_reduces() == 1);
          },
          1000));
      INFO(what);
      CHECK(kind == (leave ? CollectiveError::Kind::PeerGone
                           : CollectiveError::Kind::Timeout));
      // Leaving is seen at once; a late peer after the pairs' 1 s timeout
      // (not the 20 s of opt()), with room for a loaded machine.
      if (leave) {
        CHECK(secs < 1.0);
      } else {
        CHECK(secs >= 0.9);
        CHECK(secs < 3.0);
      }
    }
}

TEST_CASE(
    "GlooComm: with two ranks, a rank that leaves fails the other "
    "quickly",
    "[dist]") {
  CollectiveError::Kind kind = CollectiveError::Kind::Other;
  double secs = 0;
  require_ok(run_gloo(2, [&](Communicator& c) {
    c.barrier(opt());
    if (c.rank() == 1) {
      std::this_thread::sleep_for(milliseconds(100));
      c.close();
      return;
    }
    auto t0 = Clock::now();
    try {
      Tensor t = Tensor::full({200000}, 1, DType::F32);
      c.all_reduce(t, ReduceOp::Sum, opt(30000));
      throw RankFailure("all_reduce succeeded");
    } catch (const CollectiveError& e) {
      kind = e.kind();
    }
    secs = std::chrono::duration<double>(Clock::now() - t0).count();
  }));
  CHECK(kind == CollectiveError::Kind::PeerGone);
  CHECK(secs < 5.0);
}

TEST_CASE(
    "GlooComm: a rank whose process is killed fails its peers' "
    "shared-memory exchange within a second",
    "[dist][process]") {
  // Note [Direct exchange in shared memory]: nothing flows on the sockets,
  // so a dead peer is seen by its lock, which the kernel drops with the
  // process.
  JobDir dir = make_job_dir("ss-comm-shm-kill");
  const int n = 3;
  std::vector<int> status = run_processes(
      n,
      [&](int r) {
        GlooComm c(r, n, dir.path(), "k", milliseconds(20000));
        if (!c.shared_memory()) return 3;
        Tensor t = Tensor::full({300000}, r + 1, DType::F32);
        c.all_reduce(t, ReduceOp::Sum, opt());  // one that goes through
        if (t.data<float>()[299999] != 6.0f) return 4;
        if (r == 2) {
          std::this_thread::sleep_for(milliseconds(100));
          ::raise(SIGKILL);
        }
        const auto t0 = Clock::now();
        try {
          c.all_reduce(t, ReduceOp::Sum, opt());
          return 5;
        } catch (const CollectiveError& e) {
          const double secs =
              std::chrono::duration<double>(Clock::now() - t0).count();
          const std::string what = e.what();
          int code = 0;
          if (e.kind() != CollectiveError::Kind::PeerGone) code = 6;
          if (e.peer() != 2 || what.find("rank 2 is gone (its process "
                                         "ended)") == std::string::npos)
            code = 7;
          if (secs >= 1.0) code = 8;
          if (code)
            std::fprintf(
                stderr, "rank %d: %s after %.3f s\n", r, what.c_str(), secs);
          return code;
        }
      },
      std::chrono::seconds(30));
  CHECK(status[2] != -1);
  CHECK(WIFSIGNALED(status[2]));
  for (int r = 0; r < 2; ++r) {
    INFO("rank " << r << " status " << status[r]);
    CHECK(WIFEXITED(status[r]));
    CHECK(WEXITSTATUS(status[r]) == 0);
  }
  // The segment's name went as soon as every rank had mapped it.
  const std::string job =
      std::filesystem::path(dir.path()).filename().string() + ".x";
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm"))
    CHECK(e.path().filename().string().rfind(job, 0) != 0);
}
