// A job in another PID namespace (a container sharing /tmp and /dev/shm with
// the host) and a job on the host (issue 32, item 6): the host job's sweep
// of dead jobs took the container job's controller, whose pid means nothing
// here, for dead, removed its shared-memory names and rendezvous directory,
// and the container job died ("ss worker: a bad message"). Liveness is a
// lock the controller holds (Note [A job's life is a lock] in
// dist/control/channel.cpp), which a namespace cannot fake. Here the
// container is `unshare --pid --mount-proc`, with the next pid set so that
// the container's controller has a pid no process of the host has. Needs
// root (CI runs it so); skipped with the reason elsewhere.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "interp/tests/devices_process_util.h"
#include "interp/tests/process_util.h"

using namespace ss::testing;

namespace {

// A pid that no process of the host has now, for the container's
// controller (the container's own pids start over, so any number will do
// there).
int unused_host_pid() {
  for (int p = 30001; p > 1000; --p)
    if (::kill(p, 0) == -1 && errno == ESRCH) return p;
  return -1;
}

}  // namespace

TEST_CASE(
    "neighbours: a job on the host leaves alone a job in another PID "
    "namespace that shares its /dev/shm and /tmp",
    "[dist][process][neighbours]") {
  if (::geteuid() != 0) {
    WARN("skipped: unshare --pid needs root (CI runs this as root)");
    return;
  }
  const std::string dir = "/tmp/ss_neighbours_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string log = dir + "/a.csv";
  {
    // The container's job trains until it is stopped.
    std::ofstream(dir + "/a.ss")
        << long_training("    let out = csv(\"" + log + "\")\n",
                         "out.write(train_step(m, opt, batch))");
    std::ofstream(dir + "/b.ss")
        << "fn twice(x: [b]) -> [b]:\n    return x * 2.0\n\n"
           "fn main():\n    print(twice(tensor([1.0, 2.0, 3.0])))\n";
  }
  const int pid = unused_host_pid();
  REQUIRE(pid > 0);
  // In the container: the next pid is [pid], the controller's.
  const std::string inside = "echo " + std::to_string(pid - 1) +
                             " > /proc/sys/kernel/ns_last_pid && " + SS_BINARY +
                             " run --devices 'cpu[0 1]' '" + dir + "/a.ss'";
  pid_t container = ::fork();
  REQUIRE(container >= 0);
  if (container == 0) {
    ::setenv("TMPDIR", dir.c_str(), 1);
    int out =
        ::open((dir + "/a.out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err =
        ::open((dir + "/a.err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execl("/usr/bin/unshare",
            "unshare",
            "--pid",
            "--fork",
            "--kill-child",
            "--mount-proc",
            "sh",
            "-c",
            inside.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  wait_for_lines(log, 20);  // the container's job runs
  const std::string a_err_early = file_text(dir + "/a.err");
  INFO("the container's job: " << a_err_early);
  // Its names in /dev/shm carry the container's pid, dead here; its
  // rendezvous directory is in [dir].
  auto names = [&] {
    std::set<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator("/dev/shm"))
      if (e.path().filename().string().find("." + std::to_string(pid) + ".") !=
          std::string::npos)
        out.insert(e.path().string());
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.is_directory()) out.insert(e.path().string());
    return out;
  };
  const std::set<std::string> before_b = names();
  CHECK(before_b.size() >= 3);

  // The host's job, with the same TMPDIR: it sweeps dead jobs as it starts.
  auto b =
      run_ss_process("run --devices 'cpu[0 1]' b.ss", dir, "TMPDIR=" + dir);
  INFO("the host's job: " << b.err);
  CHECK(b.rc == 0);
  CHECK(b.out == "[3] f32\n[2 4 6]\n");
  // Its sweep of dead jobs left the container's names and directory alone
  // (by pid it would have taken that job for dead and removed them).
  for (const std::string& n : before_b) {
    INFO(n);
    CHECK(std::filesystem::exists(n));
  }

  // The container's job goes on: its log grows after the host's job ended.
  auto lines = [&] {
    const std::string t = file_text(log);
    return std::count(t.begin(), t.end(), '\n');
  };
  const long before = lines();
  usleep(500000);
  CHECK(lines() > before);
  CHECK(::waitpid(container, nullptr, WNOHANG) == 0);
  // Stopped as a user stops it (Ctrl-C to its controller: unshare, sh,
  // then ss), it ends cleanly, leaves nothing, and was never told a worker
  // failed.
  std::vector<pid_t> ss = descendants_at(container, 2);
  REQUIRE(ss.size() == 1);
  ::kill(ss[0], SIGINT);
  int st = wait_for(container, std::chrono::seconds(30));
  const std::string a_err = file_text(dir + "/a.err");
  INFO("the container's job, at its end: " << a_err);
  REQUIRE(st != -1);
  CHECK(a_err.find("WorkerError") == std::string::npos);
  CHECK(a_err.find("a bad message") == std::string::npos);
  // Ctrl-C ends `ss run` by SIGINT after it cleaned up, as Python does:
  // the shell says 130.
  CHECK(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 128 + SIGINT);
  bool left = false;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm"))
    left = left || e.path().filename().string().find("." + std::to_string(pid) +
                                                     ".") != std::string::npos;
  CHECK(!left);
  std::filesystem::remove_all(dir);
}
