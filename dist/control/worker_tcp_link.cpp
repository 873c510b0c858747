// A remote worker's end of the control channel: one authenticated TCP
// connection to the controller (worker_link.h; issue 26).
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "dist/control/build_id.h"
#include "dist/control/channel.h"
#include "dist/control/pool_impl.h"
#include "dist/control/worker_link.h"
#include "dist/net/auth.h"
#include "dist/net/frames.h"

namespace ss::dist::detail {

// Note [A remote worker's connection]
// `ss worker --connect ADDR:PORT` is started by a launch template (ssh,
// srun, a namespace) or by hand, with nothing on its command line that
// `ps` would show to others but the address: the job's key comes on stdin
// (one hex line, as ssh forwards it) or from a 0600 token file. It
// connects, proves the key (Note [Authenticated connections] in
// dist/net/auth.cpp), says hello (its pid, host and the slot a launcher
// gave it, if any) and gets its assignment: the job, rank, world, store
// and program arguments a local worker finds on its command line. Then
// requests and replies are frames (Note [Control frames over TCP]), the
// same {kind, flags, id, payload} as the queues', payloads of any size in
// one frame.
//
// What the status board gives a local controller, a heartbeat gives a
// remote one: every second the worker sends its status (the text, whether
// it waits in a collective, and for how long: a duration, since the hosts'
// clocks differ), from a thread of its own, so a worker busy in a long
// computation is still heard from. A controller that stops hearing
// anything declares the worker lost; a worker whose connection ends
// (the controller died or cut it) ends itself at once, whatever it was
// doing, as PR_SET_PDEATHSIG ends a local one: its Gloo peers then see it
// go and end their collectives.

namespace {

constexpr std::chrono::milliseconds kConnectTime{10000};
constexpr std::chrono::milliseconds kSendTime{60000};
constexpr auto kBeat = std::chrono::milliseconds(1000);

std::string flag_value(const std::vector<std::string>& args,
                       const std::string& flag) {
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == flag) return args[i + 1];
  return "";
}

std::string host_name() {
  char h[256] = {};
  ::gethostname(h, sizeof h - 1);
  return h;
}

// Whether the worker has half a frame on the connection: a word in a page
// shared with its supervisor (mapped before the fork).
std::atomic<uint32_t>* g_midway = nullptr;

class TcpLink : public ControllerLink {
 public:
  TcpLink(net::Fd fd, std::string peer)
      : fd_(std::move(fd)), reader_(std::move(peer)) {}

  ~TcpLink() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    wake_.wake();
    if (beat_.joinable()) beat_.join();
    if (read_.joinable()) read_.join();
  }

  // The hello and the assignment (Note [A remote worker's connection]).
  std::vector<std::string> introduce(const std::string& slot) {
    std::string hello =
        "pid=" + std::to_string(::getpid()) + " host=" + host_name() +
        " slot=" + (slot.empty() ? "-" : slot) + " build=" + build_id();
    net::send_frame(
        fd_.get(), {kHello, 0, 0, hello}, net::deadline_in(kConnectTime));
    net::Frame f =
        reader_.read_blocking(fd_.get(), net::deadline_in(kConnectTime));
    if (f.kind == kErrorReply) throw std::runtime_error(f.payload);
    if (f.kind != kAssign)
      throw std::runtime_error("the controller sent no assignment");
    std::vector<std::string> args;
    size_t at = 0;
    while (at <= f.payload.size() && !f.payload.empty()) {
      size_t end = f.payload.find('\0', at);
      if (end == std::string::npos) end = f.payload.size();
      args.push_back(f.payload.substr(at, end - at));
      at = end + 1;
    }
    beat_ = std::thread([this] { beat(); });
    read_ = std::thread([this] { read(); });
    return args;
  }

  Received receive(int ms) override {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(
        lock, std::chrono::milliseconds(ms), [&] { return !inbox_.empty(); });
    Received out;
    if (inbox_.empty()) return out;
    out = std::move(inbox_.front());
    inbox_.pop_front();
    return out;
  }

  bool send(const Message& m, uint64_t id, uint32_t flags) override {
    std::lock_guard<std::mutex> lock(send_mu_);
    // Marked while a frame is half written: a supervisor must not write
    // after half a frame (Note [A remote worker's supervisor]).
    try {
      net::send_frame(fd_.get(),
                      m.kind,
                      flags,
                      id,
                      m.payload,
                      net::deadline_in(kSendTime),
                      g_midway);
      return true;
    } catch (const net::NetError&) {
      return false;
    }
  }

  void set_status(std::string_view text, bool waiting) override {
    std::lock_guard<std::mutex> lock(status_mu_);
    if (waiting && !waiting_) since_ = net::Clock::now();
    waiting_ = waiting;
    status_.assign(text);
  }

 private:
  bool stopping() {
    std::lock_guard<std::mutex> lock(mu_);
    return stop_ || shutdown_;
  }

  // The controller is gone: end now, as a local worker's PDEATHSIG does.
  [[noreturn]] static void end_worker() {
    ::signal(SIGTERM, SIG_DFL);
    ::raise(SIGTERM);
    ::_exit(143);
  }

  // Every frame as it arrives, whatever the worker is doing: so that the
  // controller's sends never wait on a busy worker (the worker's replies
  // and the controller's requests cross without either waiting for the
  // other to read), an interrupt arrives during a call, and the
  // connection's end ends the worker at once (the Note).
  void read() {
    while (true) {
      std::optional<net::Frame> f;
      try {
        f = reader_.read(fd_.get());
        if (!f) {
          pollfd p[2] = {{fd_.get(), POLLIN, 0}, {wake_.read_fd(), POLLIN, 0}};
          ::poll(p, 2, -1);
          if (p[1].revents) return;
          continue;
        }
      } catch (const net::NetError&) {
        if (stopping()) return;
        end_worker();  // EOF, or a frame over the cap
      }
      if (f->kind == kInterrupt) {
        ::kill(::getpid(), SIGINT);
        continue;
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (f->kind == kShutdown) shutdown_ = true;
      Received& r = inbox_.emplace_back();
      r.kind = Received::Kind::Request;
      r.flags = f->flags;
      r.m = Message{f->kind, f->id, std::move(f->payload)};
      cv_.notify_all();
    }
  }

  // Every second: the status, as a heartbeat.
  void beat() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, kBeat, [&] { return stop_; });
      if (stop_) return;
      lock.unlock();
      std::string payload;
      {
        std::lock_guard<std::mutex> s(status_mu_);
        const int64_t waited =
            waiting_ ? std::chrono::duration_cast<std::chrono::milliseconds>(
                           net::Clock::now() - since_)
                           .count()
                     : 0;
        payload = std::string(waiting_ ? "1" : "0") + " " +
                  std::to_string(waited) + " " + status_;
      }
      if (!send(Message{kStatusBeat, 0, payload}, 0, 0) && !stopping())
        end_worker();
      lock.lock();
    }
  }

  net::Fd fd_;
  net::FrameReader reader_;
  net::WakePipe wake_;  // ends read's poll
  std::mutex send_mu_;
  std::mutex status_mu_;
  std::string status_ = "idle";
  bool waiting_ = false;
  net::Clock::time_point since_;
  std::mutex mu_;  // inbox_, stop_, shutdown_
  std::condition_variable cv_;
  std::deque<Received> inbox_;
  bool stop_ = false;
  bool shutdown_ = false;  // the controller said shutdown: its end is no loss
  std::thread beat_, read_;
};

// Note [A remote worker's supervisor]
// A local worker's death is told by waitpid: "killed by signal 9". A
// remote one's connection just ends, and its launcher (ssh) does not say
// how it ended. So once the connection is authenticated, `ss worker
// --connect` forks: the child is the worker (it says hello with its own
// pid), and the parent, holding the same socket and nothing else, waits
// for it and sends one last frame, kWorkerExit with how the worker ended,
// then ends the same way (so a `{cmd}` launcher's status is the worker's
// too). The parent only writes after the child is gone, so frames do not
// interleave; and not at all when the child died with half a frame
// written (a word they share says so: net::send_frame's midway), since its
// bytes would complete the torn frame with garbage: the controller then
// sees the connection end inside a frame and says it was lost. A small
// frame goes in one write, so it is torn only when the socket's buffer
// was full. The
// controller ending the connection ends the worker (the Note above), and
// with it the supervisor.
void report_exit(int fd, int st, bool torn);

[[noreturn]] void supervise(int fd, pid_t worker) {
  int st = 0;
  while (::waitpid(worker, &st, 0) < 0 && errno == EINTR) {
  }
  report_exit(fd, st, /*torn=*/g_midway && g_midway->load() != 0);
  if (WIFSIGNALED(st)) {
    ::signal(WTERMSIG(st), SIG_DFL);
    ::raise(WTERMSIG(st));
  }
  ::_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
}

// The supervisor's last frame, how the worker ended, unless it [torn] a
// frame (then the connection's end says it all).
void report_exit(int fd, int st, bool torn) {
  const std::string how =
      (WIFSIGNALED(st) ? "1 " : "0 ") + pool_detail::describe_wait_status(st);
  try {
    const net::Deadline deadline =
        net::deadline_in(std::chrono::milliseconds(2000));
    if (!torn) net::send_frame(fd, kWorkerExit, kFlagNoReply, 0, how, deadline);
    // Closing a socket with unread bytes (a request the worker never read)
    // resets the connection, and the controller, reset in the middle of a
    // send, might never read this frame: so half-close, and read and drop
    // what comes until the controller closes its end.
    ::shutdown(fd, SHUT_WR);
    char sink[65536];
    while (net::wait_readable(fd, deadline) &&
           net::read_some(fd, sink, sizeof sink) > 0) {
    }
  } catch (const net::NetError&) {
  }
}

}  // namespace

bool connects(const std::vector<std::string>& args) {
  for (const std::string& a : args)
    if (a == "--connect") return true;
  return false;
}

std::unique_ptr<ControllerLink> open_tcp_link(
    const std::vector<std::string>& args, std::vector<std::string>& assigned) {
  const net::Endpoint at = net::parse_endpoint(flag_value(args, "--connect"));
  const net::Deadline deadline = net::deadline_in(kConnectTime);
  const std::string token = flag_value(args, "--token-file");
  const net::JobKey key = token.empty() ? net::read_key_line(0, deadline)
                                        : net::read_token_file(token);
  net::set_process_job_key(key);  // the rendezvous store's connection
  net::Fd fd = net::connect_tcp(at, deadline);
  net::handshake(fd.get(), key, net::Role::Worker, deadline);
  // The Note [A remote worker's supervisor]: no thread runs yet.
  void* page = ::mmap(nullptr,
                      sizeof(std::atomic<uint32_t>),
                      PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS,
                      -1,
                      0);
  if (page != MAP_FAILED) g_midway = new (page) std::atomic<uint32_t>(0);
  const pid_t worker = ::fork();
  if (worker > 0) {
    ::signal(SIGINT, SIG_IGN);  // the worker's (an interrupt is its)
    supervise(fd.get(), worker);
  }
  auto link =
      std::make_unique<TcpLink>(std::move(fd), "the controller at " + at.str());
  assigned = link->introduce(flag_value(args, "--slot"));
  return link;
}

}  // namespace ss::dist::detail
