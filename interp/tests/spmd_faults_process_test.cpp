// A worker that dies while it runs an instance of an spmd fn (devices.md
// item 12, for the distributed spmd mode: Note [Spmd fns on workers] in
// interp/devices/lower/worker_mesh.h): the run ends at once with the
// WorkerError naming the worker, how it stopped, the fn, its .ss location
// and the instance, the other instances stop though they were waiting in
// a group of their own (psum over y), and nothing of the job is left;
// the same when the others wait to join a group the dead one never
// reached, and an instance that fails there ends the run with its own
// error at once (Note [A peer that left before joining] in dist/comm/).
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "interp/tests/devices_process_util.h"
#include "interp/tests/process_util.h"

using namespace ss::testing;

namespace {

// A fresh job directory for one test (the run's TMPDIR too).
std::string job_dir(const std::string& name) {
  std::string dir =
      "/tmp/ss_spmd_faults_" + name + "_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// The CPU time [pid] has used so far, in clock ticks (utime + stime of
// /proc/<pid>/stat); -1 when it is gone.
long cpu_ticks(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(f)),
                   std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');  // the name may hold spaces
  if (close == std::string::npos) return -1;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int k = 3; k <= 15 && rest >> field; ++k) {
    if (k == 14) utime = std::stol(field);
    if (k == 15) stime = std::stol(field);
  }
  return utime + stime;
}

// Waits (at most 20 s) until [pid] has used [ticks] more clock ticks of
// CPU: a worker spinning in its instance's loop, not still receiving the
// call, however loaded the machine is (a fixed sleep was not enough once).
void wait_for_cpu(pid_t pid, long ticks) {
  const long start = cpu_ticks(pid);
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (cpu_ticks(pid) >= 0 && cpu_ticks(pid) < start + ticks &&
         std::chrono::steady_clock::now() < until)
    usleep(20000);
}

// The options that put the workers over TCP, as on other hosts (issue 26).
const std::vector<std::string> kOverTcp = {
    "--hosts", "127.0.0.1:4", "--launch", "{cmd}"};

// Runs `spin` ([spin_fn], an spmd fn on mesh x=2 y=2, called at line 5)
// on cpu[4], kills worker 3 (the instance at x=1 y=1) while it spins, and
// checks that the run ends with its WorkerError at once, nothing left.
// [extra]: ss run's options placing the workers (none: its children).
void kill_while_spinning(const std::string& name,
                         const std::string& spin_fn,
                         const std::vector<std::string>& extra = {}) {
  std::string dir = job_dir(name);
  std::string path = dir + "/p.ss", log = dir + "/log.csv",
              err = dir + "/err.txt";
  std::ofstream(path) << R"(devices cpu
mesh x=2 y=2
fn main():
    csv(")" + log + R"(").write(logs(started=1.0))
    print(spin(ones([4, 4])))
)" + spin_fn;
  auto [ss, workers] =
      start_run(path, err, "cpu[0 1 2 3]", 4, "TMPDIR=" + dir, "", extra);
  wait_for_lines(log, 1);
  // The instances are in their loops, or waiting: worker 3 spins in both
  // programs (30 ticks: 0.3 s of its CPU time at the usual 100 Hz).
  wait_for_cpu(workers[3], 30);
  Ending end =
      signal_and_wait(ss, workers[3], SIGKILL, std::chrono::seconds(20));
  std::string text = file_text(err);
  INFO(text);
  REQUIRE(end.status != -1);
  CHECK(WIFEXITED(end.status));
  CHECK(WEXITSTATUS(end.status) == 3);  // a WorkerError (cli.md)
  CHECK(text.find("p.ss:5:11: WorkerError: worker 3 ") != std::string::npos);
  CHECK(text.find("was killed by signal 9") != std::string::npos);
  CHECK(text.find("`spin`") != std::string::npos);
  CHECK(text.find("the worker ran the instance at x=1 y=1 of 4") !=
        std::string::npos);
  CHECK(end.seconds < 5);  // at once, not at the collective timeout (600 s)
  CHECK(all_end(workers));
  CHECK(left_by(ss, dir).empty());
  std::filesystem::remove_all(dir);
}

}  // namespace

// The instances spin in psum over y (a group of two: x=1 y=1's partner is
// x=1 y=0) until one is killed.
const char* kSpinInPsum = R"(spmd fn spin(a: [n/x m/y]) -> [n/x m/y]:
    let s = a
    for i in range(100000000):
        s = psum(s, y) * 0.5
    return s
)";

TEST_CASE(
    "spmd on workers: a worker killed inside an instance is a WorkerError "
    "naming the instance, and nothing is left",
    "[dist][process][faults][spmd]") {
  kill_while_spinning("killed", kSpinInPsum);
}

TEST_CASE(
    "spmd on workers over TCP: a worker killed inside an instance is a "
    "WorkerError naming the instance, and nothing is left",
    "[dist][process][faults][spmd][tcp]") {
  // Named by its supervisor (Note [A remote worker's supervisor]); the
  // others' group over y ends at its connection's end.
  kill_while_spinning("killed_tcp", kSpinInPsum, kOverTcp);
}

TEST_CASE(
    "spmd on workers: a worker killed before joining a group the others "
    "wait in is a WorkerError naming the instance, at once",
    "[dist][process][faults][spmd]") {
  // Instance x=1 y=1 spins on its own (no collective in the loop), so
  // x=1 y=0 waits to join their psum's group over y, joined on first use
  // (Note [A peer that left before joining]), when x=1 y=1's worker is
  // killed.
  kill_while_spinning("killed_unjoined",
                      R"(spmd fn spin(a: [n/x m/y]) -> [n/x m/y]:
    let s = a
    if axis_index(x) == 1 and axis_index(y) == 1:
        for i in range(100000000):
            s = s * 0.5 + 0.5
    return psum(s, y)
)");
}

namespace {

// x=1 y=1 takes element 5 of its block of 2 before its psum over y; x=1
// y=0 waits to join that group, joined on first use. The failed worker
// says it will not come (Note [A peer that left before joining]), so the
// run ends with x=1 y=1's ValueError (exit 2) within seconds; it waited
// until the collective timeout (30 s here) before. [extra]: ss run's
// options placing the workers.
void fail_before_joining(const std::string& name, const std::string& extra) {
  std::string dir = job_dir(name);
  std::ofstream(dir + "/bad.ss") << R"(devices cpu
mesh x=2 y=2
fn main():
    print(bad(ones([4, 4])))
spmd fn bad(a: [n/x m/y]) -> [n/x m/y]:
    let k = axis_index(x) * axis_index(y) * 5
    let v = take(a, k, over=n)
    return psum(a, y) + v
)";
  auto t0 = std::chrono::steady_clock::now();
  auto p =
      run_ss_process("run bad.ss --devices 'cpu[0 1 2 3]' " + extra,
                     dir,
                     "TMPDIR=" + dir + " SHAPESCRIPT_COLLECTIVE_TIMEOUT=30");
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  INFO(p.err);
  CHECK(p.rc == 2);
  CHECK(p.err.find("bad.ss:7:13: ValueError: take: index 5 is out of range") !=
        std::string::npos);
  CHECK(p.err.find("in the instance at x=1 y=1 of 4") != std::string::npos);
  CHECK(p.err.find("raised on worker 3 of 4") != std::string::npos);
  CHECK(seconds < 5);
  std::filesystem::remove_all(dir);
}

}  // namespace

TEST_CASE(
    "spmd on workers: an instance that fails before joining a group the "
    "others wait in ends the run with its error, at once",
    "[dist][process][faults][spmd]") {
  fail_before_joining("failed_unjoined", "");
}

TEST_CASE(
    "spmd on workers over TCP: an instance that fails before joining a "
    "group the others wait in ends the run with its error, at once",
    "[dist][process][faults][spmd][tcp]") {
  // Its leaving goes through the controller's store (Note [The
  // controller's store]).
  fail_before_joining("failed_unjoined_tcp",
                      "--hosts 127.0.0.1:4 --launch '{cmd}'");
}
