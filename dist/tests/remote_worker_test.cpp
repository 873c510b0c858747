// A remote worker (Note [A remote worker's connection] in
// dist/control/worker_tcp_link.cpp): `ss worker --connect` against a
// controller this test plays over loopback TCP: the key on stdin, the
// hello and the assignment, requests and replies as frames, heartbeats
// that carry the status, shutdown; a wrong key refused; a cut connection
// ending a busy worker. Run: ss_tests "[net]".
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "dist/control/channel.h"
#include "dist/net/acceptor.h"
#include "dist/net/frames.h"
#include "dist/tests/process_util.h"

extern char** environ;

namespace net = ss::dist::net;
using namespace ss::dist;
using Catch::Matchers::Contains;
using std::chrono::milliseconds;

namespace {

// `ss worker ARGS` with [stdin_text] on its stdin; its pid.
pid_t spawn_worker(const std::vector<std::string>& args,
                   const std::string& stdin_text) {
  int in[2];
  REQUIRE(::pipe(in) == 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_addclose(&fa, in[1]);
  std::vector<std::string> all = {SS_BINARY, "worker"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  REQUIRE(::posix_spawn(&pid, SS_BINARY, &fa, nullptr, argv.data(), environ) ==
          0);
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  REQUIRE(::write(in[1], stdin_text.data(), stdin_text.size()) ==
          static_cast<ssize_t>(stdin_text.size()));
  ::close(in[1]);
  return pid;
}

// The worker's exit: its wait status, or -1 if it is still running at
// [deadline] (then killed).
int wait_exit(pid_t pid, milliseconds within) {
  const auto end = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < end) {
    int st = 0;
    if (::waitpid(pid, &st, WNOHANG) == pid) return st;
    std::this_thread::sleep_for(milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

std::string assignment(int rank, int world) {
  std::string p;
  for (std::string w : {std::string("--job"),
                        std::string("ssdist.test"),
                        std::string("--rank"),
                        std::to_string(rank),
                        std::string("--world"),
                        std::to_string(world),
                        std::string("--store"),
                        std::string("/nonexistent")})
    p += (p.empty() ? "" : std::string(1, '\0')) + w;
  return p;
}

// The next frame that is not a heartbeat.
net::Frame next_reply(net::FrameReader& r, int fd) {
  for (;;) {
    net::Frame f = r.read_blocking(fd, net::deadline_in(milliseconds(5000)));
    if (f.kind != detail::kStatusBeat) return f;
  }
}

}  // namespace

TEST_CASE("remote worker: hello, assignment, requests, heartbeats, shutdown",
          "[net]") {
  net::JobKey key = net::JobKey::generate();
  net::Acceptor acc(
      net::listen_tcp("127.0.0.1", 0), key, net::Role::Controller);
  pid_t pid = spawn_worker({"--connect", acc.endpoint().str(), "--slot", "0"},
                           key.hex() + "\n");
  net::Fd c = acc.take(net::deadline_in(milliseconds(10000)));
  REQUIRE(c.valid());
  net::FrameReader r("the worker");
  net::Frame hello =
      r.read_blocking(c.get(), net::deadline_in(milliseconds(5000)));
  CHECK(hello.kind == detail::kHello);
  // The worker is the child of the process we started, its supervisor
  // (Note [A remote worker's supervisor]).
  const std::string hello_pid =
      hello.payload.substr(4, hello.payload.find(' ') - 4);
  const pid_t worker = std::stoi(hello_pid);
  CHECK(ss::dist::testing::parent_pid(worker) == pid);
  CHECK_THAT(hello.payload, Contains("slot=0"));
  const auto t = net::deadline_in(milliseconds(5000));
  net::send_frame(c.get(), {detail::kAssign, 0, 0, assignment(0, 1)}, t);
  net::send_frame(c.get(), {kEcho, 0, 7, "hi"}, t);
  net::Frame echo = next_reply(r, c.get());
  CHECK(echo.id == 7);
  CHECK(echo.payload == "hi");
  net::send_frame(c.get(), {kWhoAmI, 0, 8, ""}, t);
  CHECK_THAT(next_reply(r, c.get()).payload,
             Contains("0 1 " + std::to_string(worker)));
  // A request that takes 2.5 s: heartbeats say what it is doing.
  net::send_frame(c.get(), {kSleep, 0, 9, "2500"}, t);
  std::vector<std::string> beats;
  for (;;) {
    net::Frame f =
        r.read_blocking(c.get(), net::deadline_in(milliseconds(5000)));
    if (f.kind != detail::kStatusBeat) {
      CHECK(f.id == 9);
      break;
    }
    beats.push_back(f.payload);
  }
  REQUIRE(beats.size() >= 1);
  CHECK_THAT(beats.back(), Contains("sleeping 2500 ms"));
  // A request in a collective: waiting, and for how long.
  net::send_frame(c.get(), {kStall, 0, 10, "1500"}, t);
  std::string stalled;
  for (;;) {
    net::Frame f =
        r.read_blocking(c.get(), net::deadline_in(milliseconds(5000)));
    if (f.kind != detail::kStatusBeat) break;
    stalled = f.payload;
  }
  CHECK(stalled.rfind("1 ", 0) == 0);
  CHECK_THAT(stalled, Contains("stall.ss:1:1"));
  net::send_frame(c.get(), {detail::kShutdown, detail::kFlagNoReply, 0, ""}, t);
  // The supervisor's last word: how the worker ended.
  net::Frame last = next_reply(r, c.get());
  CHECK(last.kind == detail::kWorkerExit);
  CHECK(last.payload == "0 exited with code 0");
  int st = wait_exit(pid, milliseconds(5000));
  CHECK(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 0);
}

TEST_CASE("remote worker: a wrong key ends it, refused", "[net]") {
  net::JobKey key = net::JobKey::generate();
  net::Acceptor acc(
      net::listen_tcp("127.0.0.1", 0), key, net::Role::Controller);
  pid_t pid = spawn_worker({"--connect", acc.endpoint().str()},
                           net::JobKey::generate().hex() + "\n");
  int st = wait_exit(pid, milliseconds(5000));
  CHECK(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 2);
  CHECK_FALSE(acc.take(net::deadline_in(milliseconds(100))).valid());
  CHECK(acc.refused() == 1);
}

TEST_CASE("remote worker: a cut connection ends a busy worker", "[net]") {
  net::JobKey key = net::JobKey::generate();
  net::Acceptor acc(
      net::listen_tcp("127.0.0.1", 0), key, net::Role::Controller);
  pid_t pid =
      spawn_worker({"--connect", acc.endpoint().str()}, key.hex() + "\n");
  net::Fd c = acc.take(net::deadline_in(milliseconds(10000)));
  REQUIRE(c.valid());
  net::FrameReader r("the worker");
  r.read_blocking(c.get(), net::deadline_in(milliseconds(5000)));  // hello
  const auto t = net::deadline_in(milliseconds(5000));
  net::send_frame(c.get(), {detail::kAssign, 0, 0, assignment(0, 1)}, t);
  net::send_frame(c.get(), {kSleep, 0, 1, "60000"}, t);
  std::this_thread::sleep_for(milliseconds(200));
  const auto cut = std::chrono::steady_clock::now();
  c = net::Fd();  // the controller is gone
  int st = wait_exit(pid, milliseconds(5000));
  CHECK(st != -1);
  CHECK(WIFSIGNALED(st));
  CHECK(WTERMSIG(st) == SIGTERM);
  // Within a heartbeat (1 s) and a little.
  CHECK(std::chrono::steady_clock::now() - cut < milliseconds(2500));
}
