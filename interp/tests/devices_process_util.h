#pragma once
// Helpers for process tests of several devices: `ss run --devices ...`
// started as a child of the test (SS_BINARY), its workers found in /proc,
// killed, waited for, and what a job leaves behind listed.

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace ss::testing {

// Every thread's children: ss starts its workers from the thread that runs
// the command (Note [A deep stack] in interp/cli/main.cpp).
inline std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  std::error_code ec;
  std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& t : std::filesystem::directory_iterator(tasks, ec)) {
    std::ifstream f(t.path() / "children");
    pid_t c;
    while (f >> c) out.push_back(c);
  }
  return out;
}

// The descendants of [pid] [depth] generations down: its workers are its
// children (depth 1), or, over TCP with `--launch '{cmd}'`, the children
// of each worker's supervisor, which the launching shell exec'd (depth 2;
// Note [A remote worker's supervisor]).
inline std::vector<pid_t> descendants_at(pid_t pid, int depth) {
  std::vector<pid_t> level = {pid};
  for (int d = 0; d < depth; ++d) {
    std::vector<pid_t> next;
    for (pid_t p : level) {
      std::vector<pid_t> kids = children_of(p);
      next.insert(next.end(), kids.begin(), kids.end());
    }
    level = std::move(next);
  }
  return level;
}

// The CPU time process [pid] has used so far, in clock ticks (user +
// system, /proc/PID/stat fields 14 and 15); -1 when it is gone.
inline long cpu_ticks(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(f, text)) return -1;
  // The command name (field 2) may hold spaces: count from its ')'.
  std::istringstream rest(text.substr(text.rfind(')') + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stol(field);
    if (i == 15) stime = std::stol(field);
  }
  return utime + stime;
}

// Waits (up to [timeout] s of wall time) until each of [pids] has used
// [seconds] more CPU time than at [since] (cpu_ticks of each, in order):
// the event "they are all running their loop", however loaded the machine
// is, where a fixed sleep would guess.
inline bool each_used_cpu(const std::vector<pid_t>& pids,
                          const std::vector<long>& since,
                          double seconds,
                          double timeout = 30) {
  const long ticks = static_cast<long>(seconds * sysconf(_SC_CLK_TCK));
  auto until = std::chrono::steady_clock::now() +
               std::chrono::milliseconds(static_cast<int>(timeout * 1000));
  while (std::chrono::steady_clock::now() < until) {
    bool all = true;
    for (size_t i = 0; i < pids.size(); ++i) {
      long now = cpu_ticks(pids[i]);
      if (now < 0) return false;
      all = all && now - since[i] >= ticks;
    }
    if (all) return true;
    usleep(20000);
  }
  return false;
}

// Waits (up to [timeout] s) until one of [pids] is stopped (SIGSTOP: State
// T in /proc/PID/status).
inline bool some_stopped(const std::vector<pid_t>& pids, double timeout = 30) {
  auto until = std::chrono::steady_clock::now() +
               std::chrono::milliseconds(static_cast<int>(timeout * 1000));
  while (std::chrono::steady_clock::now() < until) {
    for (pid_t p : pids) {
      std::ifstream status("/proc/" + std::to_string(p) + "/status");
      std::string key, state;
      while (status >> key)
        if (key == "State:" && status >> state && state == "T") return true;
    }
    usleep(20000);
  }
  return false;
}

// Trains the README-like MLP for a very long time; [first] is main's first
// line, [step] the loop's (a call of train_step).
inline std::string long_training(
    const std::string& first,
    const std::string& step = "train_step(m, opt, batch)") {
  std::string main_head = "fn main():\n" + first;
  std::string text = R"(dim D = 784
dim Hd = 64
dim C = 10
data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C
model Mlp:
    w1: [D Hd] = normal(std=1/sqrt(D))
    w2: [Hd C] = normal(std=1/sqrt(Hd))
fn loss(m: Mlp, batch: [b] Digit) -> f32:
    return cross_entropy(relu(batch.img @ m.w1) @ m.w2, batch.label)
fn train_step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)
fn main():
    let train = synthetic_digits(Digit, 2000, seed=0)
    let m = Mlp.init(seed=0)
    let opt = adamw(m, lr=1e-3)
    for epoch in range(100000):
        for batch in train.batches(64, shuffle=epoch):
            STEP
)";
  text.replace(text.find("STEP"), 4, step);
  return text.replace(text.find("fn main():\n"), 11, main_head);
}

// The long training's model after one step, saved by the controller
// alone (the workers idle), over and over: `save("CK", WHAT)`.
inline std::string saving_forever(const std::string& ck,
                                  const std::string& what = "m") {
  std::string program = long_training("");
  return program.replace(program.find("    for epoch in range(100000):"),
                         std::string::npos,
                         "    for batch in synthetic_digits(Digit, 64, "
                         "seed=1).batches(64):\n"
                         "        train_step(m, opt, batch)\n"
                         "    for i in range(100000):\n"
                         "        save(\"" +
                             ck + "\", " + what + ")\n");
}

// Starts `ss run --devices DEVICES PATH [extra...]` (with [env],
// "NAME=VALUE", set) with stderr to [err] (and stdout to [out]) and waits
// for its [n] workers; returns (ss's pid, the workers' pids). [extra]
// non-empty: `--hosts 127.0.0.1:N --launch '{cmd}'`, the workers over TCP.
inline std::pair<pid_t, std::vector<pid_t>> start_run(
    const std::string& path,
    const std::string& err,
    const std::string& devices = "cpu[0 1 2]",
    size_t n = 3,
    const std::string& env = "",
    const std::string& out = "",
    const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv = {
      SS_BINARY, "run", "--devices", devices, path};
  argv.insert(argv.end(), extra.begin(), extra.end());
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t ss = fork();
  REQUIRE(ss >= 0);
  if (ss == 0) {
    if (!env.empty()) putenv(const_cast<char*>(env.c_str()));
    int devnull = open("/dev/null", O_WRONLY);
    auto file = [&](const std::string& f) {
      return f.empty() ? devnull
                       : open(f.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    };
    int errfd = file(err);
    dup2(file(out), 1);
    dup2(errfd, 2);
    execv(SS_BINARY, args.data());
    _exit(127);
  }
  std::vector<pid_t> workers;
  for (int i = 0; i < 200 && workers.size() < n; ++i) {
    usleep(20000);
    workers = descendants_at(ss, extra.empty() ? 1 : 2);
  }
  if (workers.size() != n) {  // leave no run behind (its workers follow)
    kill(ss, SIGKILL);
    waitpid(ss, nullptr, 0);
  }
  REQUIRE(workers.size() == n);
  return {ss, workers};
}

inline std::string file_text(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

// Waits (up to 5 s) until [log] has [n] lines: steps ran, since a sink
// flushes each line.
inline void wait_for_lines(const std::string& log, long n) {
  for (int i = 0; i < 500; ++i) {
    std::string all = file_text(log);
    if (std::count(all.begin(), all.end(), '\n') >= n) return;
    usleep(10000);
  }
}

// Waits up to [limit] for [ss] to exit; its wait status, or -1 (then it
// was killed).
inline int wait_for(pid_t ss, std::chrono::milliseconds limit) {
  auto t0 = std::chrono::steady_clock::now();
  int st = 0;
  while (std::chrono::steady_clock::now() - t0 < limit) {
    if (waitpid(ss, &st, WNOHANG) == ss) return st;
    usleep(10000);
  }
  kill(ss, SIGKILL);
  waitpid(ss, &st, 0);
  return -1;
}

// Sends [sig] to [victim] and waits up to [limit] for [ss] to exit: its
// wait status (-1: it was killed) and the seconds it took.
struct Ending {
  int status = -1;
  double seconds = 0;
};
inline Ending signal_and_wait(pid_t ss,
                              pid_t victim,
                              int sig,
                              std::chrono::milliseconds limit) {
  auto t0 = std::chrono::steady_clock::now();
  kill(victim, sig);
  Ending e;
  e.status = wait_for(ss, limit);
  e.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  return e;
}

// Whether process [pid] has ended: gone, or a zombie (the orphaned worker
// of a dead controller, until init reaps it).
inline bool ended(pid_t pid) {
  if (kill(pid, 0) == -1 && errno == ESRCH) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_s, comm, state;
  stat >> pid_s >> comm >> state;
  return state == "Z" || !stat;
}

// Waits (up to 2 s) until every one of [pids] has ended; whether they did.
inline bool all_end(const std::vector<pid_t>& pids) {
  for (int i = 0; i < 200; ++i) {
    if (std::all_of(pids.begin(), pids.end(), ended)) return true;
    usleep(10000);
  }
  return false;
}

// Whether anything of controller [pid]'s jobs is left: a /dev/shm object
// or a rendezvous directory in [tmpdir] named ssdist.<pid>.*.
inline std::vector<std::string> left_by(pid_t pid, const std::string& tmpdir) {
  std::vector<std::string> out;
  std::string prefix = "ssdist." + std::to_string(pid) + ".";
  std::error_code ec;
  for (const std::string& d : {std::string("/dev/shm"), tmpdir})
    for (const auto& e : std::filesystem::directory_iterator(d, ec))
      if (e.path().filename().string().rfind(prefix, 0) == 0)
        out.push_back(e.path().string());
  return out;
}

}  // namespace ss::testing
