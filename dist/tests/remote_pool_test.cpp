// A WorkerPool of remote workers (issue 26; Note [The controller's side of
// several hosts] in dist/control/pool_tcp.cpp), over loopback TCP: workers
// launched through a template (`{cmd}`: on this machine, as the loopback
// runs of every several-devices test start them) or started by hand
// (manual mode), the echo handler answering. Faults: a killed worker, a
// silent one (heartbeat timeout), a killed controller, strangers.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "dist/control/control.h"
#include "dist/net/auth.h"
#include "dist/net/frames.h"
#include "dist/net/socket.h"
#include "dist/tests/process_util.h"

using namespace ss::dist;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

LaunchOptions tcp_opts(int world) {
  LaunchOptions o;
  o.world = world;
  o.binary = SS_BINARY;
  o.grace = milliseconds(500);
  o.forward_output = false;
  RemoteOptions r;
  r.hosts = parse_hosts("127.0.0.1:" + std::to_string(world));
  r.launch = "{cmd}";
  o.remote = r;
  return o;
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

bool gone(int pid) {
  return ::kill(pid, 0) == -1 && errno == ESRCH;
}

// Waits up to [ms] for every pid to be gone.
bool all_gone(const std::vector<int>& pids, int ms) {
  auto t0 = Clock::now();
  while (ms_since(t0) < ms) {
    bool all = true;
    for (int p : pids) all = all && gone(p);
    if (all) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return false;
}

// A free port on 127.0.0.1 (the kernel's pick, released for the caller).
uint16_t free_port() {
  net::Fd l = net::listen_tcp("127.0.0.1", 0);
  return net::local_endpoint(l.get()).port;
}

// `ss worker --connect ... --token-file F`, started as a scheduler would:
// not our child's child, not the pool's.
pid_t start_worker(const std::string& at, const std::string& token) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_RDWR);
    ::dup2(devnull, 0);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    ::execl(SS_BINARY,
            SS_BINARY,
            "worker",
            "--connect",
            at.c_str(),
            "--token-file",
            token.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

// What WorkerError the pool's start ends in ("" when it started).
std::string start_error(const LaunchOptions& o) {
  try {
    WorkerPool::start(o);
  } catch (const WorkerError& e) {
    return e.what();
  }
  FAIL("the workers started");
  return "";
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char t[] = "/tmp/ss_remote_pool.XXXXXX";
    path = ::mkdtemp(t);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST_CASE("remote pool: three workers over loopback TCP answer",
          "[dist][process][tcp]") {
  auto pool = WorkerPool::start(tcp_opts(3));
  REQUIRE(pool->world() == 3);
  const std::vector<int> pids = pool->pids();
  // The controller's store, and no shared memory at all.
  CHECK(pool->store_dir().rfind("tcp:127.0.0.1:", 0) == 0);
  CHECK(shm_entries(pool->job()).empty());

  auto who = pool->call_all(Message{kWhoAmI, 0, ""});
  for (int r = 0; r < 3; ++r)
    CHECK(who[r].payload ==
          std::to_string(r) + " 3 " + std::to_string(pids[r]));
  CHECK(pool->status(1) == "idle");
  CHECK(pool->call(2, Message{kEcho, 0, "hello"}).payload == "hello");

  // 16 MiB to every worker and back, and 16 MiB made by each: one frame
  // each way, payloads crossing while the workers are busy.
  const size_t big = 16u << 20;
  std::string payload(big, '\0');
  std::mt19937_64 rng(42);
  for (char& c : payload) c = static_cast<char>(rng());
  auto t0 = Clock::now();
  auto back = pool->call_all(Message{kEcho, 0, payload});
  const double ms = ms_since(t0);
  for (auto& m : back) CHECK((m.payload == payload));
  auto made = pool->call_all(Message{kBig, 0, "*=" + std::to_string(big)});
  for (int r = 0; r < 3; ++r) {
    REQUIRE(made[r].payload.size() == big);
    bool same = true;
    for (size_t i = 0; i < big && same; i += 4099)
      same = static_cast<uint8_t>(made[r].payload[i]) ==
             static_cast<uint8_t>((i * 131 + r) & 0xff);
    CHECK(same);
  }
  std::printf("remote pool: 16 MiB to 3 workers and back over TCP: %.1f ms\n",
              ms);

  // Two calls posted before the first is collected, as async dispatch does.
  uint64_t a = pool->post_all(Message{kSleep, 0, "*=50"});
  uint64_t b = pool->post_all(Message{kEcho, 0, "second"});
  pool->collect(a);
  for (auto& m : pool->collect(b)) CHECK(m.payload == "second");

  // A handler's exception is a RemoteError, and the pool goes on.
  CHECK_THROWS_AS(pool->call_all(Message{kThrow, 0, "boom"}), RemoteError);
  CHECK(pool->call(0, Message{kEcho, 0, "after"}).payload == "after");

  pool->stop();
  CHECK(all_gone(pids, 2000));
}

TEST_CASE("remote pool: a killed worker is a WorkerError naming its host",
          "[dist][process][tcp]") {
  for (int round = 0; round < 3; ++round) {
    auto pool = WorkerPool::start(tcp_opts(3));
    const std::vector<int> pids = pool->pids();
    const int victim = round;
    Clock::time_point kill_time;
    std::thread killer([&] {
      std::this_thread::sleep_for(milliseconds(100));
      kill_time = Clock::now();
      ::kill(pids[victim], SIGKILL);
    });
    try {
      pool->call_all(Message{kSleep, 0, "*=3000"});
      killer.join();
      FAIL("no WorkerError");
    } catch (const WorkerError& e) {
      killer.join();
      const double ms = ms_since(kill_time);
      INFO(e.what());
      CHECK(ms < 1000);
      CHECK(e.rank == victim);
      CHECK(e.how == "killed by signal 9 (SIGKILL)");
      CHECK_THAT(e.what(),
                 Catch::Contains("worker " + std::to_string(victim) + " (pid " +
                                 std::to_string(pids[victim]) +
                                 " on 127.0.0.1) was killed by signal 9"));
      std::printf("remote pool: SIGKILL to WorkerError: %.1f ms\n", ms);
    }
    CHECK(all_gone(pids, 2000));
  }
}

TEST_CASE("remote pool: a silent worker is lost at the heartbeat timeout",
          "[dist][process][tcp]") {
  LaunchOptions o = tcp_opts(2);
  o.remote->heartbeat_timeout = milliseconds(1500);
  auto pool = WorkerPool::start(o);
  const std::vector<int> pids = pool->pids();
  // Stopped, it neither answers nor beats: a host that went away.
  ::kill(pids[1], SIGSTOP);
  auto t0 = Clock::now();
  try {
    pool->call_all(Message{kEcho, 0, "anyone?"});
    FAIL("no WorkerError");
  } catch (const WorkerError& e) {
    const double ms = ms_since(t0);
    INFO(e.what());
    CHECK(e.rank == 1);
    CHECK_THAT(e.what(),
               Catch::Contains("is unreachable: nothing came from it for "
                               "1.5 s (the heartbeat timeout)"));
    CHECK(ms > 400);  // the last beat came at most a second before
    CHECK(ms < 3500);
  }
  CHECK(all_gone(pids, 2000));
}

TEST_CASE("remote pool: a launcher that fails is named with its output",
          "[dist][process][tcp]") {
  LaunchOptions o = tcp_opts(2);
  o.remote->launch =
      "echo 'ssh: connect to host {host}: refused' >&2; exit 255; {cmd}";
  o.forward_output = false;
  const std::string what = start_error(o);
  CHECK_THAT(what, Catch::Contains("exited with code 255 while starting"));
  CHECK_THAT(what, Catch::Contains("ssh: connect to host 127.0.0.1: refused"));
}

TEST_CASE("remote pool: a worker of another build is refused, named",
          "[dist][process][tcp]") {
  // ss_test_hooks is the same code built into another binary: another
  // build, as another version or an -march build would be.
  LaunchOptions o = tcp_opts(2);
  o.remote->remote_binary = SS_HOOKS_BINARY;
  const std::string what = start_error(o);
  CHECK_THAT(what,
             Catch::Contains("on 127.0.0.1) runs another build of ss (build "));
  CHECK_THAT(what,
             Catch::Contains("install the same build at the same path on "
                             "every host"));
}

TEST_CASE("remote pool: manual mode, strangers refused, the job goes on",
          "[dist][process][tcp]") {
  TempDir dir;
  const std::string token = (dir.path / "job.key").string();
  const std::string wrong = (dir.path / "wrong.key").string();
  net::write_token_file(token, net::JobKey::generate());
  net::write_token_file(wrong, net::JobKey::generate());
  const std::string at = "127.0.0.1:" + std::to_string(free_port());

  LaunchOptions o = tcp_opts(2);
  o.remote->hosts.clear();
  o.remote->listen = at;
  o.remote->token_file = token;
  o.start_timeout = milliseconds(15000);

  // A worker with the wrong key, and two with the right one.
  pid_t stranger = start_worker(at, wrong);
  std::vector<pid_t> good = {start_worker(at, token), start_worker(at, token)};
  // Garbage, and a replayed first frame, from connections of our own.
  std::thread garbage([&] {
    std::this_thread::sleep_for(milliseconds(300));
    for (int i = 0; i < 3; ++i) {
      try {
        net::Fd c = net::connect_tcp(net::parse_endpoint(at),
                                     net::deadline_in(milliseconds(3000)));
        std::string junk(100, static_cast<char>(i * 37));
        net::write_all(c.get(),
                       junk.data(),
                       junk.size(),
                       net::deadline_in(milliseconds(1000)),
                       "junk");
      } catch (const net::NetError&) {
      }
    }
  });
  auto pool = WorkerPool::start(o);
  garbage.join();
  auto who = pool->call_all(Message{kWhoAmI, 0, ""});
  // Each worker is the child of a process we started (its supervisor).
  std::vector<int> parents;
  for (int pid : pool->pids()) parents.push_back(testing::parent_pid(pid));
  std::sort(parents.begin(), parents.end());
  std::vector<int> started(good.begin(), good.end());
  std::sort(started.begin(), started.end());
  CHECK(parents == started);
  for (int r = 0; r < 2; ++r)
    CHECK(who[r].payload.rfind(std::to_string(r) + " 2 ", 0) == 0);
  // The stranger was refused and ended (exit 2: it could not connect).
  int st = 0;
  REQUIRE(::waitpid(stranger, &st, 0) == stranger);
  CHECK(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 2);
  pool->stop();
  for (pid_t p : good) {
    REQUIRE(::waitpid(p, &st, 0) == p);
    CHECK(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 0);
  }
}

TEST_CASE("remote pool: workers end with a killed controller",
          "[dist][process][tcp]") {
  TempDir dir;
  const std::string token = (dir.path / "job.key").string();
  net::write_token_file(token, net::JobKey::generate());
  const std::string at = "127.0.0.1:" + std::to_string(free_port());
  std::vector<pid_t> workers = {start_worker(at, token),
                                start_worker(at, token)};
  int p[2];
  REQUIRE(::pipe(p) == 0);
  pid_t controller = ::fork();
  REQUIRE(controller >= 0);
  if (controller == 0) {
    ::close(p[0]);
    try {
      LaunchOptions o = tcp_opts(2);
      o.remote->hosts.clear();
      o.remote->listen = at;
      o.remote->token_file = token;
      auto pool = WorkerPool::start(o);
      (void)!::write(p[1], "up", 2);
      pool->call_all(Message{kSleep, 0, "*=60000"});
    } catch (...) {
    }
    ::_exit(1);
  }
  ::close(p[1]);
  char buf[2];
  REQUIRE(::read(p[0], buf, 2) == 2);
  ::close(p[0]);
  std::this_thread::sleep_for(milliseconds(200));  // both in the long call
  auto t0 = Clock::now();
  ::kill(controller, SIGKILL);
  ::waitpid(controller, nullptr, 0);
  // Busy in a 60 s call, each sees its connection end and ends itself.
  for (pid_t w : workers) {
    int st = 0;
    REQUIRE(::waitpid(w, &st, 0) == w);
    CHECK(WIFSIGNALED(st));
    CHECK(WTERMSIG(st) == SIGTERM);
  }
  const double ms = ms_since(t0);
  CHECK(ms < 1000);
  std::printf("remote pool: a killed controller's workers ended in %.1f ms\n",
              ms);
}
