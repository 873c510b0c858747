#pragma once
// Thread ranks for the communicator tests (comm_test.cpp,
// gloo_exchange_test.cpp). Catch2 assertions are not thread-safe, so rank
// threads report failures as strings (EXPECT throws RankFailure) and the
// main thread checks them (require_ok); run_processes forks ranks.

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "dist/comm/communicator.h"
#include "dist/comm/gloo_comm.h"
#include "dist/comm/inproc_comm.h"
#include "dist/rendezvous/job_dir.h"

using namespace ss::dist;
using ss::ops::Shape;
using ss::ops::Tensor;
using ss::types::DType;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

struct RankFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

#define EXPECT(cond)                                                      \
  do {                                                                    \
    if (!(cond))                                                          \
      throw RankFailure(std::string("line ") + std::to_string(__LINE__) + \
                        ": " #cond);                                      \
  } while (0)

inline void expect_values(const Tensor& t,
                          const std::vector<double>& want,
                          int line) {
  auto got = t.to_doubles();
  if (got != want) {
    std::ostringstream os;
    os << "line " << line << ": got";
    for (size_t i = 0; i < got.size() && i < 12; ++i) os << " " << got[i];
    os << " want";
    for (size_t i = 0; i < want.size() && i < 12; ++i) os << " " << want[i];
    throw RankFailure(os.str());
  }
}
#define EXPECT_VALUES(t, want) expect_values(t, want, __LINE__)

/// Run f(rank) on n threads; returns one message per failing rank.
inline std::vector<std::string> run_ranks(int n,
                                          const std::function<void(int)>& f) {
  std::vector<std::string> errs(n);
  std::vector<std::thread> ts;
  for (int r = 0; r < n; ++r)
    ts.emplace_back([&, r] {
      try {
        f(r);
      } catch (const std::exception& e) {
        errs[r] = "rank " + std::to_string(r) + ": " + e.what();
      } catch (...) {
        errs[r] = "rank " + std::to_string(r) + ": unknown exception";
      }
    });
  for (auto& t : ts) t.join();
  std::vector<std::string> out;
  for (auto& e : errs)
    if (!e.empty()) out.push_back(e);
  return out;
}

inline void require_ok(const std::vector<std::string>& errs) {
  for (auto& e : errs) UNSCOPED_INFO(e);
  REQUIRE(errs.empty());
}

inline Options opt(int ms = 20000, uint64_t tag = 0) {
  return Options::with_timeout(milliseconds(ms), tag);
}

/// Thread ranks over one InprocHub.
inline std::vector<std::string> run_inproc(
    int n, const std::function<void(Communicator&)>& f) {
  auto hub = std::make_shared<InprocHub>(n);
  return run_ranks(n, [&](int r) {
    InprocComm c(hub, r);
    f(c);
  });
}

/// Thread ranks, each with its own Gloo context over TCP loopback.
inline std::vector<std::string> run_gloo(
    int n, const std::function<void(Communicator&)>& f) {
  JobDir dir = make_job_dir("ss-comm-test");
  return run_ranks(n, [&](int r) {
    GlooComm c(r, n, dir.path(), "t", milliseconds(10000));
    f(c);
  });
}

/// Thread ranks whose all-reduces with opt(ms) at tag 0 take the direct
/// exchange (Note [Direct exchange]): its sync pairs' timeout is ms.
// Runs [child](r) in [n] forked processes, each ending with _exit of what
// it returned (no destructors: what the parent made stays the parent's),
// and waits up to [limit] for them; their wait statuses, -1 for one that
// had to be killed. A child that throws exits 2 and says why.
inline std::vector<int> run_processes(int n,
                                      const std::function<int(int)>& child,
                                      std::chrono::seconds limit) {
  std::vector<pid_t> kids;
  for (int r = 0; r < n; ++r) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::alarm(static_cast<unsigned>(limit.count()) + 10);  // never outlive
      int code = 2;
      try {
        code = child(r);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child %d: %s\n", r, e.what());
      }
      ::_exit(code);
    }
    kids.push_back(pid);
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<int> status(n, -1);
  int left = n;
  while (left > 0 && std::chrono::steady_clock::now() < deadline) {
    for (int r = 0; r < n; ++r) {
      int st = 0;
      if (status[r] == -1 && ::waitpid(kids[r], &st, WNOHANG) == kids[r]) {
        status[r] = st;
        --left;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (int r = 0; r < n; ++r)
    if (status[r] == -1) {
      ::kill(kids[r], SIGKILL);
      ::waitpid(kids[r], nullptr, 0);
    }
  return status;
}

// Which transport the direct exchange of the GlooComms made while it lives
// takes (Note [Direct exchange in shared memory]): shared memory, as a
// `cpu[...]` job's groups do, or the sync meshes' sockets, as the benches'
// SHAPESCRIPT_DIRECT_EXCHANGE=tcp and groups across hosts do.
struct ExchangeVia {
  explicit ExchangeVia(bool shared_memory) {
    if (shared_memory)
      ::unsetenv("SHAPESCRIPT_DIRECT_EXCHANGE");
    else
      ::setenv("SHAPESCRIPT_DIRECT_EXCHANGE", "tcp", 1);
  }
  ~ExchangeVia() { ::unsetenv("SHAPESCRIPT_DIRECT_EXCHANGE"); }
  ExchangeVia(const ExchangeVia&) = delete;
  ExchangeVia& operator=(const ExchangeVia&) = delete;
};

inline std::vector<std::string> run_gloo_direct(
    int n, const std::function<void(GlooComm&)>& f, int ms = 20000) {
  JobDir dir = make_job_dir("ss-comm-direct");
  return run_ranks(n, [&](int r) {
    GlooComm c(r, n, dir.path(), "d", milliseconds(ms));
    f(c);
  });
}

}  // namespace
