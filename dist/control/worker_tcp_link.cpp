// A remote worker's end of the control channel: one authenticated TCP
// connection to the controller (worker_link.h; issue 26).
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "dist/control/channel.h"
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

class TcpLink : public ControllerLink {
 public:
  TcpLink(net::Fd fd, std::string peer)
      : fd_(std::move(fd)), reader_(std::move(peer)) {}

  ~TcpLink() override {
    {
      std::lock_guard<std::mutex> lock(beat_mu_);
      stop_ = true;
    }
    beat_cv_.notify_all();
    if (beat_.joinable()) beat_.join();
  }

  // The hello and the assignment (Note [A remote worker's connection]).
  std::vector<std::string> introduce(const std::string& slot) {
    std::string hello = "pid=" + std::to_string(::getpid()) +
                        " host=" + host_name() +
                        " slot=" + (slot.empty() ? "-" : slot);
    net::send_frame(
        fd_.get(), {kHello, 0, 0, hello}, net::deadline_in(kConnectTime));
    net::Frame f =
        reader_.read_blocking(fd_.get(), net::deadline_in(kConnectTime));
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
    return args;
  }

  Received receive(int ms) override {
    Received out;
    try {
      if (auto f = reader_.read(fd_.get())) return request(std::move(*f));
      if (!net::wait_readable(fd_.get(),
                              net::deadline_in(std::chrono::milliseconds(ms))))
        return out;
      if (auto f = reader_.read(fd_.get())) return request(std::move(*f));
    } catch (const net::NetError&) {
      out.kind = Received::Kind::Gone;  // EOF, or a frame over the cap
    }
    return out;
  }

  bool send(const Message& m, uint64_t id, uint32_t flags) override {
    std::lock_guard<std::mutex> lock(send_mu_);
    try {
      net::send_frame(fd_.get(),
                      {m.kind, flags, id, m.payload},
                      net::deadline_in(kSendTime));
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
  static Received request(net::Frame f) {
    Received out;
    out.kind = Received::Kind::Request;
    out.flags = f.flags;
    out.m = Message{f.kind, f.id, std::move(f.payload)};
    return out;
  }

  // Every second: the status, as a heartbeat. The connection's end, seen
  // here without reading (POLLRDHUP), ends the worker (the Note).
  void beat() {
    std::unique_lock<std::mutex> lock(beat_mu_);
    while (!stop_) {
      beat_cv_.wait_for(lock, kBeat, [&] { return stop_; });
      if (stop_) return;
      pollfd p{fd_.get(), POLLRDHUP, 0};
      const bool hung_up =
          ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
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
      if (hung_up || !send(Message{kStatusBeat, 0, payload}, 0, 0)) {
        // The controller is gone: end now, as a local worker's PDEATHSIG.
        ::signal(SIGTERM, SIG_DFL);
        ::raise(SIGTERM);
      }
    }
  }

  net::Fd fd_;
  net::FrameReader reader_;
  std::mutex send_mu_;
  std::mutex status_mu_;
  std::string status_ = "idle";
  bool waiting_ = false;
  net::Clock::time_point since_;
  std::mutex beat_mu_;
  std::condition_variable beat_cv_;
  bool stop_ = false;
  std::thread beat_;
};

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
  auto link =
      std::make_unique<TcpLink>(std::move(fd), "the controller at " + at.str());
  assigned = link->introduce(flag_value(args, "--slot"));
  return link;
}

}  // namespace ss::dist::detail
