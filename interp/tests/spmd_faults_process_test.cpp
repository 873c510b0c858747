// A worker that dies while it runs an instance of an spmd fn (devices.md
// item 12, for the distributed spmd mode: Note [Spmd fns on workers] in
// interp/devices/lower/worker_mesh.h): the run ends at once with the
// WorkerError naming the worker, how it stopped, the fn, its .ss location
// and the instance, the other instances stop though they were waiting in
// a group of their own (psum over y), and nothing of the job is left.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "interp/tests/devices_process_util.h"
#include "interp/tests/process_util.h"

using namespace ss::testing;

TEST_CASE(
    "spmd on workers: a worker killed inside an instance is a WorkerError "
    "naming the instance, and nothing is left",
    "[dist][process][faults][spmd]") {
  std::string dir = "/tmp/ss_spmd_faults_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string path = dir + "/p.ss", log = dir + "/log.csv",
              err = dir + "/err.txt";
  // Line 5 is the call main makes; the instances spin in psum over y (a
  // group of two: x=1 y=1's partner is x=1 y=0) until one is killed.
  std::ofstream(path) << R"(devices cpu
mesh x=2 y=2
fn main():
    csv(")" + log + R"(").write(logs(started=1.0))
    print(spin(ones([4, 4])))
spmd fn spin(a: [n/x m/y]) -> [n/x m/y]:
    let s = a
    for i in range(100000000):
        s = psum(s, y) * 0.5
    return s
)";
  auto [ss, workers] = start_run(path, err, "cpu[0 1 2 3]", 4, "TMPDIR=" + dir);
  wait_for_lines(log, 1);
  usleep(200000);  // the instances are in their loops
  Ending end =
      signal_and_wait(ss, workers[3], SIGKILL, std::chrono::seconds(10));
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
  CHECK(end.seconds < 5);  // at once, not at the collective timeout
  CHECK(all_end(workers));
  CHECK(left_by(ss, dir).empty());
  std::filesystem::remove_all(dir);
}
