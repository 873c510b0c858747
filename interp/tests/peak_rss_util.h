#pragma once
// The peak memory of an `ss run` child process (Note [Measuring a loader's
// peak]), for the tests of the loaders' memory (data_hostile_test.cpp,
// data_npz_stream_test.cpp).

#include <fcntl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <fstream>
#include <iterator>
#include <string>

#include "interp/tests/data_test_util.h"

namespace data_test {

// Note [Measuring a loader's peak]
// The peak is VmHWM of the `ss` process itself, read from /proc at its exit
// stop (PTRACE_O_TRACEEXIT: the process has finished but its memory is not
// yet released). wait4's ru_maxrss would also count the pages a fork copies
// from this test process, which is not what the loader took.
struct Peak {
  int rc = -1;
  std::string out, err;
  long hwm_mb = -1;
};

inline long vm_hwm_kb(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  for (std::string l; std::getline(f, l);)
    if (l.rfind("VmHWM:", 0) == 0) return std::stol(l.substr(6));
  return -1;
}

// Runs `ss run prog.ss` in [dir] with [program] as prog.ss.
inline Peak run_peak(const std::string& dir, const std::string& program) {
  write_file(dir + "/prog.ss", program);
  std::string err_path = dir + "/stderr.txt", out_path = dir + "/stdout.txt";
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(126);
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err < 0 || out < 0) _exit(126);
    dup2(err, 2);
    dup2(out, 1);
    ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    execl(SS_BINARY, SS_BINARY, "run", "prog.ss", static_cast<char*>(nullptr));
    _exit(127);
  }
  Peak p;
  int st = 0;
  long kb = -1;
  REQUIRE(waitpid(pid, &st, 0) == pid);  // the stop at exec
  REQUIRE(WIFSTOPPED(st));
  REQUIRE(ptrace(PTRACE_SETOPTIONS,
                 pid,
                 nullptr,
                 PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL) == 0);
  ptrace(PTRACE_CONT, pid, nullptr, nullptr);
  for (;;) {
    REQUIRE(waitpid(pid, &st, 0) == pid);
    if (WIFEXITED(st) || WIFSIGNALED(st)) break;
    int sig = 0;
    if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8)))
      kb = vm_hwm_kb(pid);
    else
      sig = WSTOPSIG(st);  // pass the process's own signals on
    ptrace(PTRACE_CONT, pid, nullptr, reinterpret_cast<void*>(long{sig}));
  }
  p.rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  std::ifstream e(err_path), o(out_path);
  p.err.assign(std::istreambuf_iterator<char>(e), {});
  p.out.assign(std::istreambuf_iterator<char>(o), {});
  p.hwm_mb = kb / 1024;
  return p;
}

// The baseline: a valid file of the same kind, loaded by [program],
// which prints [out].
inline Peak baseline(const std::string& dir,
                     const std::string& program,
                     const std::string& out) {
  Peak base = run_peak(dir, program);
  INFO(base.err);
  REQUIRE(base.rc == 0);
  CHECK(base.out == out);
  return base;
}

}  // namespace data_test
