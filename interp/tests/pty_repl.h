#pragma once
// `ss repl` driven through a pseudo-terminal (forkpty), shared by the
// repl's tests: send keys, wait for text.

#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

namespace ss::testing {

/// `ss repl ARGS...` on a pseudo-terminal, as a user at a terminal runs it
/// ([binary]: ss, or ss_test_hooks; [env]: NAME=VALUE set for it).
class PtyRepl {
 public:
  explicit PtyRepl(std::vector<std::string> args = {},
                   std::vector<std::string> env = {},
                   const char* binary = SS_BINARY) {
    args.insert(args.begin(), {binary, "repl"});
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = forkpty(&fd_, nullptr, nullptr, nullptr);
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      setenv("HOME", "/tmp", 1);
      setenv("TERM", "xterm", 1);
      for (std::string& e : env) putenv(e.data());
      execv(binary, argv.data());
      _exit(127);
    }
  }
  ~PtyRepl() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    close(fd_);
  }
  void send(const std::string& s) {
    REQUIRE(write(fd_, s.data(), s.size()) == ssize_t(s.size()));
  }
  // Reads until [want] appears (true) or [seconds] pass (false); what came
  // before it goes to [skipped].
  bool expect(const std::string& want,
              double seconds = 10,
              std::string* skipped = nullptr) {
    auto end = std::chrono::steady_clock::now() +
               std::chrono::milliseconds(int(seconds * 1000));
    while (buf_.find(want) == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      end - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, int(left)) <= 0) return false;
      char tmp[4096];
      ssize_t n = read(fd_, tmp, sizeof tmp);
      if (n <= 0) return false;
      buf_.append(tmp, size_t(n));
    }
    if (skipped) *skipped = buf_.substr(0, buf_.find(want));
    buf_.erase(0, buf_.find(want) + want.size());
    return true;
  }
  /// Everything read and not yet consumed by expect() after [ms] of
  /// quiet: what follows the last expected text.
  std::string rest(int ms = 300) {
    pollfd p{fd_, POLLIN, 0};
    char tmp[4096];
    while (poll(&p, 1, ms) > 0) {
      ssize_t n = read(fd_, tmp, sizeof tmp);
      if (n <= 0) break;
      buf_.append(tmp, size_t(n));
    }
    return buf_;
  }
  /// The repl's process (its workers are its children).
  pid_t pid() const { return pid_; }
  int wait_exit() {
    int st = 0;
    for (int i = 0; i < 100; ++i) {
      if (waitpid(pid_, &st, WNOHANG) == pid_) return WEXITSTATUS(st);
      usleep(50000);
    }
    return -1;
  }

 private:
  int fd_ = -1;
  pid_t pid_ = -1;
  std::string buf_;
};

}  // namespace ss::testing
