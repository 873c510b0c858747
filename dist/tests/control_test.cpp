// The control channel (dist/control): worker processes, queues and shared
// memory, and what happens when a worker or the controller dies.
#include "dist/control/control.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "dist/control/channel.h"

using namespace ss::dist;
using Clock = std::chrono::steady_clock;

namespace {

LaunchOptions opts(int world) {
  LaunchOptions o;
  o.world = world;
  o.binary = SS_BINARY;
  o.grace = std::chrono::milliseconds(500);
  return o;
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

bool gone(int pid) {
  return ::kill(pid, 0) == -1 && errno == ESRCH;
}

void check_all_gone(const std::vector<int>& pids, const std::string& job) {
  for (int pid : pids) {
    INFO("worker pid " << pid);
    CHECK(gone(pid));
  }
  CHECK(shm_entries(job).empty());
}

std::string pattern(size_t n, int rank) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i)
    s[i] = static_cast<char>((i * 131 + rank) & 0xff);
  return s;
}

}  // namespace

TEST_CASE("control: three workers answer, small and large payloads round-trip",
          "[dist][process]") {
  auto pool = WorkerPool::start(opts(3));
  REQUIRE(pool->world() == 3);
  const std::string job = pool->job();
  const std::vector<int> pids = pool->pids();
  CHECK(!shm_entries(job).empty());
  CHECK(std::filesystem::is_directory(pool->store_dir()));

  auto who = pool->call_all(Message{kWhoAmI, 0, ""});
  REQUIRE(who.size() == 3);
  for (int r = 0; r < 3; ++r)
    CHECK(who[r].payload ==
          std::to_string(r) + " 3 " + std::to_string(pids[r]));
  CHECK(pool->status(1) == "idle");

  // Small.
  auto small = pool->call_all(Message{kEcho, 0, "hello"});
  for (auto& m : small) {
    CHECK(m.payload == "hello");
    CHECK(m.kind == kEcho);
  }
  CHECK(pool->call(2, Message{kEcho, 0, std::string(1000, 'x')}).payload ==
        std::string(1000, 'x'));
  // Exactly at and just above the inline limit (32 KiB), and empty.
  for (size_t n : {size_t(0), size_t(32 * 1024), size_t(32 * 1024 + 1)}) {
    std::string p = pattern(n, 7);
    CHECK(pool->call(0, Message{kEcho, 0, p}).payload == p);
  }

  // Large: 16 MiB to every worker and back, then 16 MiB made by each.
  const size_t big = 16u << 20;
  std::string payload(big, '\0');
  std::mt19937_64 rng(42);
  for (size_t i = 0; i < big; i += 8) {
    uint64_t v = rng();
    std::memcpy(&payload[i], &v, 8);
  }
  double best = 1e9;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = Clock::now();
    auto back = pool->call_all(Message{kEcho, 0, payload});
    best = std::min(best, ms_since(t0));
    for (auto& m : back)
      CHECK((m.payload.size() == big && m.payload == payload));
  }
  std::printf(
      "control: 16 MiB to 3 workers and back (48 MiB each way): %.1f ms, %.2f "
      "GB/s\n",
      best,
      2 * 3 * big / (best * 1e6));
  best = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = Clock::now();
    auto back = pool->call(0, Message{kEcho, 0, payload});
    best = std::min(best, ms_since(t0));
    CHECK(back.payload.size() == big);
  }
  std::printf(
      "control: 16 MiB to one worker and back: %.1f ms, %.2f GB/s each way\n",
      best,
      big / (best / 2 * 1e6));
  best = 1e9;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = Clock::now();
    auto made = pool->call_all(Message{kBig, 0, std::to_string(big)});
    best = std::min(best, ms_since(t0));
    for (int r = 0; r < 3; ++r) CHECK((made[r].payload == pattern(big, r)));
  }
  std::printf("control: 16 MiB from each of 3 workers: %.1f ms, %.2f GB/s\n",
              best,
              3 * big / (best * 1e6));

  // One message each.
  auto each = pool->call_each({Message{kEcho, 0, "a"},
                               Message{kEcho, 0, payload.substr(0, 100000)},
                               Message{kBig, 0, "5"}});
  CHECK(each[0].payload == "a");
  CHECK(each[1].payload == payload.substr(0, 100000));
  CHECK(each[2].payload == pattern(5, 2));

  // A handler's exception is a RemoteError; the pool goes on.
  try {
    pool->call_all(Message{kThrow, 0, "no such tensor"});
    FAIL("no RemoteError");
  } catch (const RemoteError& e) {
    CHECK(std::string(e.what()) == "no such tensor");
    CHECK(e.rank == 0);
  }
  CHECK(pool->call(1, Message{kEcho, 0, "still here"}).payload == "still here");
  // send_all doesn't wait; its error comes with the next call.
  pool->send_all(Message{kSleep, 0, "20"});
  pool->send_all(Message{kThrow, 0, "deferred"});
  CHECK_THROWS_WITH(pool->call_all(Message{kEcho, 0, "x"}), "deferred");
  CHECK(pool->call_all(Message{kEcho, 0, "y"})[2].payload == "y");

  pool->stop();
  CHECK(!pool->running());
  check_all_gone(pids, job);
  CHECK(!std::filesystem::exists(pool->store_dir()));
  CHECK_THROWS_AS(pool->call_all(Message{kEcho, 0, "z"}), std::logic_error);
}

TEST_CASE(
    "control: calls posted ahead are answered in order, and the workers get "
    "LaunchOptions::env",
    "[dist][process]") {
  LaunchOptions o = opts(2);
  o.env = {"SS_TEST_ENV=from the pool", "HOME=/nowhere"};
  auto pool = WorkerPool::start(o);
  for (const Message& m : pool->call_all(Message{kEnv, 0, "SS_TEST_ENV"}))
    CHECK(m.payload == "from the pool");
  // A name in env replaces the controller's own value.
  CHECK(pool->call(1, Message{kEnv, 0, "HOME"}).payload == "/nowhere");
  // The controller's other variables pass through.
  CHECK(pool->call(0, Message{kEnv, 0, "PATH"}).payload ==
        std::string(std::getenv("PATH")));

  // Three calls in the workers' queues at once: the first sleeps, so the
  // others wait behind it; each is collected with its own replies.
  auto t0 = Clock::now();
  uint64_t a = pool->post_all(Message{kSleep, 0, "*=150"});
  uint64_t b = pool->post_all(Message{kEcho, 0, "second"});
  uint64_t c = pool->post_all(Message{kWhoAmI, 0, ""});
  CHECK(ms_since(t0) < 100);  // posting doesn't wait for the sleep
  pool->collect(a);
  CHECK(ms_since(t0) >= 150);
  for (const Message& m : pool->collect(b)) CHECK(m.payload == "second");
  std::vector<Message> who = pool->collect(c);
  CHECK(who[1].payload.rfind("1 2 ", 0) == 0);
  CHECK_THROWS_AS(pool->collect(c), std::logic_error);  // collected already

  // A call left uncollected: its replies are dropped by the next collect.
  pool->post_all(Message{kEcho, 0, "dropped"});
  CHECK(pool->call_all(Message{kEcho, 0, "kept"})[0].payload == "kept");
  // A failing call posted ahead raises when it is collected.
  uint64_t bad = pool->post_all(Message{kThrow, 0, "boom"});
  uint64_t after = pool->post_all(Message{kEcho, 0, "after"});
  CHECK_THROWS_WITH(pool->collect(bad), "boom");
  CHECK(pool->collect(after)[1].payload == "after");
}

TEST_CASE("control: round-trip latency", "[dist][process]") {
  auto pool = WorkerPool::start(opts(3));
  Message m{kEcho, 0, std::string(64, 'x')};
  for (int i = 0; i < 100; ++i) pool->call(0, m);
  auto median_us = [&](auto&& f) {
    std::vector<double> t;
    for (int i = 0; i < 1000; ++i) {
      auto t0 = Clock::now();
      f();
      t.push_back(
          std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    return std::make_pair(t[500], t[990]);
  };
  auto one = median_us([&] { pool->call(0, m); });
  auto all = median_us([&] { pool->call_all(m); });
  std::printf(
      "control: 64-byte round trip to one worker: median %.1f us, p99 %.1f "
      "us\n",
      one.first,
      one.second);
  std::printf(
      "control: 64-byte call_all to 3 workers: median %.1f us, p99 %.1f us\n",
      all.first,
      all.second);
  SUCCEED();
}

TEST_CASE("control: a worker that exits is a WorkerError at once",
          "[dist][process]") {
  auto pool = WorkerPool::start(opts(3));
  auto pids = pool->pids();
  auto job = pool->job();
  pool->call(1, Message{kSleep, 0, "1"});
  auto t0 = Clock::now();
  try {
    pool->call_all(Message{kExit, 0, "1=3"});
    FAIL("no WorkerError");
  } catch (const WorkerError& e) {
    double ms = ms_since(t0);
    std::printf("control: exit(3) seen and the pool stopped in %.1f ms\n", ms);
    CHECK(ms < 1000);
    CHECK(e.rank == 1);
    CHECK(e.pid == pids[1]);
    CHECK(e.how == "exited with code 3");
    CHECK(e.last_status == "running a request of kind 3");
    CHECK(std::string(e.what()) ==
          "worker 1 (pid " + std::to_string(pids[1]) +
              ") exited with code 3 while running a request of kind 3");
  }
  CHECK(!pool->running());
  check_all_gone(pids, job);
  // Later calls repeat the error.
  CHECK_THROWS_AS(pool->call_all(Message{kEcho, 0, ""}), WorkerError);
}

TEST_CASE("control: a crash names the signal", "[dist][process]") {
  auto pool = WorkerPool::start(opts(2));
  auto pids = pool->pids();
  try {
    pool->call_all(Message{kCrash, 0, "0=1"});
    FAIL("no WorkerError");
  } catch (const WorkerError& e) {
    CHECK(e.rank == 0);
    CHECK(e.how.rfind("killed by signal 11 (SIGSEGV)", 0) == 0);
    CHECK(std::string(e.what()).find("was killed by signal 11 (SIGSEGV)") !=
          std::string::npos);
  }
  check_all_gone(pids, pool->job());
}

TEST_CASE("control: SIGKILL during a request, 20 times", "[dist][process]") {
  std::mt19937 rng(7);
  double worst = 0, total = 0;
  for (int round = 0; round < 20; ++round) {
    auto pool = WorkerPool::start(opts(3));
    auto pids = pool->pids();
    auto job = pool->job();
    int victim = static_cast<int>(rng() % 3);
    int delay_ms = static_cast<int>(rng() % 60);
    std::atomic<bool> killed{false};
    Clock::time_point kill_time;
    std::thread killer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      kill_time = Clock::now();
      ::kill(pids[victim], SIGKILL);
      killed = true;
    });
    try {
      pool->call_all(Message{kSleep, 0, "*=2000"});
      killer.join();
      FAIL("no WorkerError");
    } catch (const WorkerError& e) {
      killer.join();
      double ms = ms_since(kill_time);
      worst = std::max(worst, ms);
      total += ms;
      INFO("round " << round << ", victim " << victim << " after " << delay_ms
                    << " ms");
      CHECK(ms < 5000);
      CHECK(e.rank == victim);
      CHECK(e.how == "killed by signal 9 (SIGKILL)");
      // Killed before it read the request, or while running it.
      CHECK((e.last_status == "sleeping 2000 ms" || e.last_status == "idle" ||
             e.last_status == "running a request of kind 2"));
    }
    check_all_gone(pids, job);
  }
  std::printf(
      "control: SIGKILL to WorkerError (others stopped and reaped): mean %.1f "
      "ms, worst %.1f ms\n",
      total / 20,
      worst);
}

namespace {

// A forked controller with a pool of 3 workers busy in a long call.
struct ForkedController {
  pid_t pid = 0;
  std::string job;
  std::string store;  // its rendezvous directory
  std::vector<int> workers;
};

ForkedController fork_controller() {
  ForkedController fc;
  int p[2];
  REQUIRE(::pipe(p) == 0);
  fc.pid = ::fork();
  REQUIRE(fc.pid >= 0);
  if (fc.pid == 0) {
    ::close(p[0]);
    try {
      auto o = opts(3);
      o.forward_output = false;
      auto pool = WorkerPool::start(o);
      std::string line = pool->job() + " " + pool->store_dir();
      for (int pid : pool->pids()) {
        line += ' ';
        line += std::to_string(pid);
      }
      line += "\n";
      (void)!::write(p[1], line.data(), line.size());
      pool->call_all(Message{kSleep, 0, "*=30000"});
    } catch (...) {
    }
    ::_exit(1);
  }
  ::close(p[1]);
  std::string line;
  char c;
  while (::read(p[0], &c, 1) == 1 && c != '\n') line += c;
  ::close(p[0]);
  std::istringstream in(line);
  in >> fc.job >> fc.store;
  for (int pid; in >> pid;) fc.workers.push_back(pid);
  REQUIRE(fc.workers.size() == 3);
  std::this_thread::sleep_for(
      std::chrono::milliseconds(50));  // they're in the sleep now
  return fc;
}

// Reaps the workers (orphans come to us as the subreaper) for up to 2 s,
// each killed by [sig]; returns the ms until the last one died.
double reap_orphans(const std::vector<int>& pids,
                    Clock::time_point t0,
                    int sig) {
  std::vector<bool> dead(pids.size(), false);
  double last = -1;
  while (ms_since(t0) < 2000) {
    for (size_t i = 0; i < pids.size(); ++i) {
      int wst = 0;
      if (!dead[i] && ::waitpid(pids[i], &wst, WNOHANG) == pids[i]) {
        dead[i] = true;
        CHECK(WIFSIGNALED(wst));
        CHECK(WTERMSIG(wst) == sig);
      }
    }
    if (std::all_of(dead.begin(), dead.end(), [](bool b) { return b; })) {
      last = ms_since(t0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (size_t i = 0; i < pids.size(); ++i) {
    INFO("worker " << i << " pid " << pids[i]);
    CHECK(dead[i]);
    if (!dead[i]) ::kill(pids[i], SIGKILL);
  }
  return last;
}

}  // namespace

TEST_CASE("control: a killed controller leaves no worker behind",
          "[dist][process]") {
  // Orphans come to us (not init), so we can reap them and see they died.
  REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
  ForkedController fc = fork_controller();
  auto t0 = Clock::now();
  ::kill(fc.pid, SIGKILL);
  int st = 0;
  ::waitpid(fc.pid, &st, 0);
  // PR_SET_PDEATHSIG: SIGTERM, which the workers handle (Note [Workers
  // clean up after a dead controller] in dist/control/worker.cpp).
  double ms = reap_orphans(fc.workers, t0, SIGTERM);
  std::printf("control: controller SIGKILLed, its workers gone in %.1f ms\n",
              ms);
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  // Its workers removed its names and its rendezvous directory as they
  // died: nothing is left for the next pool's sweep (issue 16 item 10:
  // ~193 MB of a training job stayed in /dev/shm until then).
  CHECK(shm_entries(fc.job).empty());
  CHECK(!std::filesystem::exists(fc.store));
}

TEST_CASE(
    "control: a controller killed by SIGHUP takes its workers and names along",
    "[dist][process]") {
  struct sigaction cur {};
  ::sigaction(SIGHUP, nullptr, &cur);
  if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN) {
    WARN("SIGHUP is ignored here (nohup?): skipped");
    return;
  }
  REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
  ForkedController fc = fork_controller();
  auto t0 = Clock::now();
  ::kill(fc.pid, SIGHUP);
  int st = 0;
  ::waitpid(fc.pid, &st, 0);
  CHECK(WIFSIGNALED(st));
  CHECK(WTERMSIG(st) == SIGHUP);
  CHECK(
      shm_entries(fc.job).empty());  // removed by its handler, no sweep needed
  double ms = reap_orphans(fc.workers, t0, SIGKILL);  // by its handler
  std::printf("control: controller SIGHUPed, its workers gone in %.1f ms\n",
              ms);
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST_CASE("control: the collective timeout says where each worker was",
          "[dist][process]") {
  auto o = opts(3);
  o.call_timeout = std::chrono::milliseconds(500);
  auto pool = WorkerPool::start(o);
  auto pids = pool->pids();
  auto job = pool->job();
  auto t0 = Clock::now();
  try {
    pool->call_each({Message{kStall, 0, "5000"},
                     Message{kSleep, 0, "5000"},
                     Message{kStall, 0, "5000"}},
                    "running `train_step` (train.ss:32:4)");
    FAIL("no CallTimeout");
  } catch (const CallTimeout& e) {
    double ms = ms_since(t0);
    CHECK(ms >= 500);
    CHECK(ms < 2500);
    CHECK(std::string(e.what()) ==
          "a worker failed while running `train_step` (train.ss:32:4), and "
          "worker 1 didn't "
          "finish:\n"
          "  worker 0: was waiting for the other workers at stall.ss:1:1\n"
          "  worker 1: didn't answer; it was sleeping 5000 ms\n"
          "  worker 2: was waiting for the other workers at stall.ss:1:1");
    CHECK(e.rank == 1);
    CHECK(e.workers.size() == 3);
    CHECK(e.workers[0].waiting);
    CHECK(!e.workers[1].waiting);
  }
  check_all_gone(pids, job);

  // Replies that came in time are "had finished"; idle workers say so.
  pool = WorkerPool::start(o);
  try {
    pool->call_each({Message{kSleep, 0, "0"},
                     Message{kSleep, 0, "5000"},
                     Message{kSleep, 0, "0"}});
    FAIL("no CallTimeout");
  } catch (const CallTimeout& e) {
    std::string w = e.what();
    CHECK(w.find("a call (message kind 2), and worker 1 didn't finish:") !=
          std::string::npos);
    CHECK(w.find("  worker 0: had finished\n") != std::string::npos);
  }
}

TEST_CASE(
    "control: a worker waiting in one collective longer than the "
    "collective timeout stops a long call",
    "[dist][process]") {
  // The call may run long (call_timeout is a minute); what counts is how
  // long a worker has been waiting for the others (its status set with
  // waiting=true), checked against collective_timeout.
  auto o = opts(3);
  o.call_timeout = std::chrono::seconds(60);
  o.collective_timeout = std::chrono::milliseconds(400);
  auto pool = WorkerPool::start(o);
  auto pids = pool->pids();
  auto job = pool->job();
  // Sleeping (not in a collective) for longer than the timeout is fine.
  pool->call_each({Message{kSleep, 0, "900"},
                   Message{kSleep, 0, "900"},
                   Message{kSleep, 0, "900"}});
  auto t0 = Clock::now();
  try {
    pool->call_each({Message{kStall, 0, "30000"},
                     Message{kSleep, 0, "30000"},
                     Message{kStall, 0, "30000"}},
                    "running `train_step` (train.ss:32:4)");
    FAIL("no CallTimeout");
  } catch (const CallTimeout& e) {
    double ms = ms_since(t0);
    CHECK(ms >= 400);
    CHECK(ms < 3000);
    CHECK(e.rank == 1);
    CHECK(std::string(e.what()).find("worker 1: didn't answer; it was "
                                     "sleeping 30000 ms") != std::string::npos);
  }
  check_all_gone(pids, job);
}

TEST_CASE("control: workers that don't start", "[dist][process]") {
  SECTION("exits at once, with its output") {
    auto o = opts(2);
    o.forward_output = false;
    o.binary = "/bin/sh";
    o.extra_args = {};
    // `sh worker --job ...` fails: sh can't open a script named "worker".
    try {
      WorkerPool::start(o);
      FAIL("no WorkerError");
    } catch (const WorkerError& e) {
      std::string w = e.what();
      INFO(w);
      CHECK(w.find("exited with code") != std::string::npos);
      CHECK(w.find("while starting; its last output:") != std::string::npos);
      CHECK(w.find("worker") != std::string::npos);
    }
  }
  SECTION("a binary that isn't there") {
    auto o = opts(1);
    o.forward_output = false;
    o.binary = "/nonexistent/ss";
    try {
      WorkerPool::start(o);
      FAIL("no WorkerError");
    } catch (const WorkerError& e) {
      CHECK(e.how == "exited with code 127");
      CHECK(std::string(e.what()).find("cannot run /nonexistent/ss") !=
            std::string::npos);
    }
  }
  SECTION("never says hello") {
    auto dir = std::filesystem::temp_directory_path() /
               ("ss_control_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    auto script = dir / "slow.sh";
    {
      std::ofstream f(script);
      f << "#!/bin/sh\necho starting slowly >&2\nexec sleep 30\n";
    }
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    auto o = opts(2);
    o.forward_output = false;
    o.binary = script.string();
    o.start_timeout = std::chrono::milliseconds(300);
    auto t0 = Clock::now();
    try {
      WorkerPool::start(o);
      FAIL("no WorkerError");
    } catch (const WorkerError& e) {
      CHECK(ms_since(t0) < 2000);
      std::string w = e.what();
      INFO(w);
      CHECK(w.rfind("workers 0 and 1 didn't start within 0.3 s", 0) == 0);
      CHECK(w.find("starting slowly") != std::string::npos);
      CHECK(gone(e.pid));
    }
    std::filesystem::remove_all(dir);
  }
}

TEST_CASE("control: the interrupt hook stops a call", "[dist][process]") {
  std::atomic<bool> flag{false};
  auto o = opts(2);
  o.interrupted = [&] { return flag.load(); };
  auto pool = WorkerPool::start(o);
  auto pids = pool->pids();
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    flag = true;
  });
  auto t0 = Clock::now();
  CHECK_THROWS_AS(pool->call_all(Message{kSleep, 0, "5000"}), Interrupted);
  t.join();
  CHECK(ms_since(t0) < 2000);
  check_all_gone(pids, pool->job());
}

TEST_CASE("control: a job whose lock is held is alive, whatever its pid says",
          "[dist]") {
  // Issue 32 item 6: a job in another PID namespace names a pid of its
  // own, which here is nobody's; the sweep took it for dead and removed
  // its objects. Liveness is the job's lock (Note [A job's life is a lock]).
  using namespace ss::dist::detail;
  pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  int st = 0;
  ::waitpid(gone, &st, 0);  // a pid nobody has now
  char buf[64];
  std::snprintf(buf, sizeof buf, "ssdist.%d.0badf00d", static_cast<int>(gone));
  const std::string job = buf;
  CHECK(job_of(job + ".c2w.0") == job);
  CHECK(job_of(job + ".AbC123") == job);
  CHECK(job_of("ssdist.test") == "");
  const std::string object = "/dev/shm/" + job + ".status";
  std::ofstream(object) << "x";
  int lock = hold_job_lock(job);
  REQUIRE(lock >= 0);
  CHECK(job_alive(job));
  sweep_stale_jobs();
  CHECK(std::filesystem::exists(object));  // kept: its lock is held
  CHECK(std::filesystem::exists("/dev/shm/" + job + ".alive"));
  ::close(lock);  // as the kernel does when the controller dies
  CHECK_FALSE(job_alive(job));
  sweep_stale_jobs();
  CHECK_FALSE(std::filesystem::exists(object));
  CHECK_FALSE(std::filesystem::exists("/dev/shm/" + job + ".alive"));
}
