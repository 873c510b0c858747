// WorkerPool's OutputForwarder: the workers' output forwarded to our stderr
// (each line prefixed with its rank), a tail of it kept for errors.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>

#include "dist/control/pool_impl.h"

namespace ss::dist::pool_detail {

OutputForwarder::OutputForwarder(std::vector<int> fds, bool forward)
    : fds_(std::move(fds)),
      forward_(forward),
      tails_(fds_.size()),
      eof_(fds_.size(), false),
      at_line_start_(fds_.size(), true) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0) {
    wake_r_ = p[0];
    wake_w_ = p[1];
  }
  for (size_t r = 0; r < fds_.size(); ++r)
    if (fds_[r] < 0) eof_[r] = true;
  thread_ = std::thread([this] { run(); });
}

OutputForwarder::~OutputForwarder() {
  stop_.store(true);
  if (wake_w_ >= 0) (void)!::write(wake_w_, "x", 1);
  if (thread_.joinable()) thread_.join();
  for (int fd : fds_)
    if (fd >= 0) ::close(fd);
  if (wake_r_ >= 0) ::close(wake_r_);
  if (wake_w_ >= 0) ::close(wake_w_);
}

/// The rank's output tail, after waiting up to `wait` for its end.
std::string OutputForwarder::tail(int rank, std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait_for(lk, wait, [&] { return eof_[rank]; });
  return tails_[rank];
}

void OutputForwarder::run() {
  std::vector<pollfd> pf;
  char buf[8192];
  while (true) {
    pf.clear();
    std::vector<int> ranks;
    {
      std::lock_guard<std::mutex> lk(mu_);
      for (size_t r = 0; r < fds_.size(); ++r)
        if (!eof_[r]) {
          pf.push_back({fds_[r], POLLIN, 0});
          ranks.push_back(static_cast<int>(r));
        }
    }
    if (pf.empty() || stop_.load()) {
      if (stop_.load()) drain_all(buf, sizeof buf);
      if (stop_.load() || pf.empty()) {
        if (stop_.load()) return;
        // Every pipe ended: wait for stop.
        pollfd w{wake_r_, POLLIN, 0};
        ::poll(&w, 1, -1);
        continue;
      }
    }
    pf.push_back({wake_r_, POLLIN, 0});
    int n = ::poll(pf.data(), pf.size(), -1);
    if (n < 0 && errno != EINTR) return;
    for (size_t i = 0; i + 1 < pf.size(); ++i)
      if (pf[i].revents) read_some(ranks[i], buf, sizeof buf);
    if (pf.back().revents) {
      char c[64];
      while (::read(wake_r_, c, sizeof c) > 0) {
      }
    }
  }
}

void OutputForwarder::drain_all(char* buf, size_t cap) {
  for (size_t r = 0; r < fds_.size(); ++r) {
    while (!eof_[r] && read_some(static_cast<int>(r), buf, cap)) {
    }
    if (forward_ && !at_line_start_[r]) {
      (void)!::write(2, "\n", 1);
      at_line_start_[r] = true;
    }
  }
}

// Returns true if it read something.
bool OutputForwarder::read_some(int r, char* buf, size_t cap) {
  ssize_t n = ::read(fds_[r], buf, cap);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return false;
  if (n <= 0) {
    if (forward_ && !at_line_start_[r]) {
      (void)!::write(2, "\n", 1);  // the output ended mid-line
      at_line_start_[r] = true;
    }
    std::lock_guard<std::mutex> lk(mu_);
    eof_[r] = true;
    cv_.notify_all();
    return false;
  }
  {
    std::lock_guard<std::mutex> lk(mu_);
    std::string& t = tails_[r];
    t.append(buf, n);
    constexpr size_t kTail = 4096;
    if (t.size() > 2 * kTail) t.erase(0, t.size() - kTail);
  }
  if (forward_) {
    std::string out;
    std::string prefix = "[worker " + std::to_string(r) + "] ";
    for (ssize_t i = 0; i < n; ++i) {
      if (at_line_start_[r]) out += prefix;
      out += buf[i];
      at_line_start_[r] = buf[i] == '\n';
    }
    size_t off = 0;
    while (off < out.size()) {
      ssize_t w = ::write(2, out.data() + off, out.size() - off);
      if (w <= 0) break;
      off += w;
    }
  }
  return true;
}

std::string last_lines(const std::string& s, int lines) {
  std::string t = s;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  size_t pos = t.size();
  for (int i = 0; i < lines && pos != std::string::npos && pos > 0; ++i)
    pos = t.rfind('\n', pos - 1);
  if (pos != std::string::npos && pos < t.size() && t[pos] == '\n') ++pos;
  if (pos == std::string::npos) pos = 0;
  return t.substr(pos);
}

std::string join_ranks(const std::vector<int>& ranks) {
  std::string s = ranks.size() == 1 ? "worker " : "workers ";
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) s += i + 1 == ranks.size() ? " and " : ", ";
    s += std::to_string(ranks[i]);
  }
  return s;
}

}  // namespace ss::dist::pool_detail
