// The pool's local processes (pool_workers.h): started, watched, stopped.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "dist/control/pool_workers.h"

extern char** environ;

namespace ss::dist::pool_detail {

using Clock = std::chrono::steady_clock;

Workers::~Workers() = default;

std::vector<std::string> worker_environment(
    const std::vector<std::string>& over) {
  std::vector<std::string> env = over;
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    bool replaced = false;
    for (const std::string& mine : over)
      if (kv.substr(0, kv.find('=') + 1) ==
          std::string_view(mine).substr(0, mine.find('=') + 1))
        replaced = true;
    if (!replaced) env.emplace_back(kv);
  }
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

Children::Children(int count, int registry_slot, bool forward_output)
    : procs_(count),
      out_fds_(count, -1),
      registry_slot_(registry_slot),
      forward_output_(forward_output) {}

Children::~Children() {
  if (any_alive()) stop(SIGKILL, std::chrono::milliseconds(0));
  for (Proc& p : procs_)
    if (p.pidfd >= 0) ::close(p.pidfd);
  if (!fwd_)
    for (int fd : out_fds_)
      if (fd >= 0) ::close(fd);
}

void Children::spawn(int i,
                     const std::vector<std::string>& argv_strings,
                     const std::vector<char*>& envp,
                     int stdin_fd,
                     int fd3) {
  std::vector<std::string> argv_copy = argv_strings;
  std::vector<char*> argv = pointers(argv_copy);
  const std::string exec_fail = "ss worker: cannot run " + argv_copy[0] + "\n";
  int outp[2];
  if (::pipe2(outp, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("WorkerPool: pipe: ") +
                             std::strerror(errno));
  const int out_r = move_high(outp[0]), out_w = move_high(outp[1]);
  const int devnull =
      stdin_fd >= 0 ? -1 : ::open("/dev/null", O_RDWR | O_CLOEXEC);
  const int in = stdin_fd >= 0 ? stdin_fd : devnull;
  const pid_t parent = ::getpid();
  const pid_t group = pgid_;

  const pid_t pid = ::fork();
  if (pid == 0) {
    // The child: async-signal-safe calls only until exec. SIGTERM when
    // we die: a worker then removes what we leave (Note [Workers clean up
    // after a dead controller] in worker_shm_link.cpp).
    ::signal(SIGTERM, SIG_DFL);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(111);  // we died before prctl
    ::setpgid(0, group);  // group 0: a new group led by child 0
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(in, 0);
    ::dup2(out_w, 1);
    ::dup2(out_w, 2);
    int first_closed = 3;
    if (fd3 >= 0) {
      ::dup2(fd3, 3);
      first_closed = 4;
    }
    if (::syscall(SYS_close_range, unsigned(first_closed), ~0u, 0u) != 0)
      for (int fd = first_closed; fd < 4096; ++fd) ::close(fd);
    ::execve(argv[0], argv.data(), envp.data());
    (void)!::write(2, exec_fail.data(), exec_fail.size());
    ::_exit(127);
  }
  const int err = errno;
  ::close(out_w);
  if (devnull >= 0) ::close(devnull);
  if (pid < 0) {
    ::close(out_r);
    throw std::runtime_error(std::string("WorkerPool: fork: ") +
                             std::strerror(err));
  }
  ::setpgid(pid, group == 0 ? pid : group);  // here too: no race
  if (pgid_ == 0) {
    pgid_ = pid;
    if (registry_slot_ >= 0) registry_set_pgid(registry_slot_, pid);
  }
  registry_add_pid(registry_slot_, pid);
  Proc& p = procs_[i];
  p.pid = pid;
  p.alive = true;
  p.pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  ::fcntl(out_r, F_SETFL, ::fcntl(out_r, F_GETFL) | O_NONBLOCK);
  out_fds_[i] = out_r;
}

void Children::forward() {
  fwd_ = std::make_unique<OutputForwarder>(out_fds_, forward_output_);
}

int Children::reap() {
  int first = -1;
  for (size_t i = 0; i < procs_.size(); ++i) {
    Proc& p = procs_[i];
    if (!p.alive) continue;
    int st = 0;
    const pid_t r = ::waitpid(p.pid, &st, WNOHANG);
    if (r == p.pid || (r < 0 && errno == ECHILD)) {
      p.alive = false;
      p.wstatus = r == p.pid ? st : 0;
      if (first < 0) first = static_cast<int>(i);
    }
  }
  return first;
}

bool Children::any_alive() const {
  for (const Proc& p : procs_)
    if (p.alive) return true;
  return false;
}

bool Children::add_pidfds(std::vector<pollfd>& pf) const {
  bool all = true;
  for (const Proc& p : procs_) {
    if (!p.alive) continue;
    if (p.pidfd >= 0)
      pf.push_back({p.pidfd, POLLIN, 0});
    else
      all = false;
  }
  return all;
}

void Children::signal(int i, int sig) {
  if (procs_[i].alive) ::sigqueue(procs_[i].pid, sig, sigval{});
}

void Children::stop(int sig, std::chrono::milliseconds grace) {
  if (sig != 0)
    for (size_t i = 0; i < procs_.size(); ++i) signal(static_cast<int>(i), sig);
  const auto deadline = Clock::now() + grace;
  while (reap(), any_alive() && Clock::now() < deadline) {
    std::vector<pollfd> pf;
    const bool pidfds = add_pidfds(pf);
    ::poll(pf.data(), pf.size(), pidfds ? 5 : 1);
  }
  reap();
  if (!any_alive()) return;
  // A child not yet reaped keeps the group alive, so pgid is still ours.
  if (pgid_ > 0) ::killpg(pgid_, SIGKILL);
  for (Proc& p : procs_)
    if (p.alive) ::kill(p.pid, SIGKILL);
  for (Proc& p : procs_) {
    if (!p.alive) continue;
    int st = 0;
    while (::waitpid(p.pid, &st, 0) < 0 && errno == EINTR) {
    }
    p.alive = false;
    p.wstatus = st;
  }
}

std::string Children::tail(int i, std::chrono::milliseconds wait) {
  return fwd_ ? fwd_->tail(i, wait) : std::string();
}

}  // namespace ss::dist::pool_detail
