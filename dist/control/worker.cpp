// The worker side of the control channel (control.h): `ss worker`.
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <iostream>

#include "dist/control/channel.h"

namespace ss::dist {

using namespace detail;

Handler::~Handler() = default;

namespace {

StatusBoard* g_board = nullptr;
int g_rank = 0;

HandlerFactory& factory() {
  static HandlerFactory f;
  return f;
}

int parse_int(const std::string& opt, const std::string& v) {
  try {
    size_t used = 0;
    int x = std::stoi(v, &used);
    if (used != v.size()) throw std::invalid_argument(v);
    return x;
  } catch (const std::exception&) {
    throw std::invalid_argument("ss worker: " + opt + " takes a number, not '" +
                                v + "'");
  }
}

}  // namespace

void worker_set_status(std::string_view text, bool waiting) {
  if (g_board) g_board->set(g_rank, text, waiting);
}

void set_worker_handler_factory(HandlerFactory f) {
  factory() = std::move(f);
}

WorkerArgs parse_worker_args(const std::vector<std::string>& args) {
  WorkerArgs a;
  bool job = false, rank = false, world = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& s = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size())
        throw std::invalid_argument("ss worker: " + s + " needs a value");
      return args[++i];
    };
    if (s == "--job") {
      a.job = value();
      job = true;
    } else if (s == "--rank") {
      a.rank = parse_int(s, value());
      rank = true;
    } else if (s == "--world") {
      a.world = parse_int(s, value());
      world = true;
    } else if (s == "--store") {
      a.store = value();
    } else if (s == "--bell-fd") {
      a.bell_fd = parse_int(s, value());
    } else {
      a.extra.push_back(s);
    }
  }
  if (!job || !rank || !world)
    throw std::invalid_argument(
        "ss worker: needs --job JOB --rank R --world N (it is started by the "
        "controller, not by "
        "hand)");
  if (a.world < 1 || a.rank < 0 || a.rank >= a.world)
    throw std::invalid_argument("ss worker: rank " + std::to_string(a.rank) +
                                " is not in a world of " +
                                std::to_string(a.world));
  return a;
}

int worker_main(const std::vector<std::string>& args, Handler& h) {
  WorkerArgs a;
  try {
    a = parse_worker_args(args);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 64;
  }
  ::signal(SIGPIPE, SIG_IGN);
  const int controller = job_controller_pid(a.job);
  auto controller_gone = [&] {
    return controller > 0 && ::getppid() != controller;
  };
  if (controller_gone()) return 0;

  std::unique_ptr<bip::message_queue> from, to;
  std::unique_ptr<StatusBoard> board;
  try {
    from = std::make_unique<bip::message_queue>(
        bip::open_only, queue_name(a.job, true, a.rank).c_str());
    to = std::make_unique<bip::message_queue>(
        bip::open_only, queue_name(a.job, false, a.rank).c_str());
    board = StatusBoard::open(a.job, a.world);
  } catch (const std::exception& e) {
    std::cerr << "ss worker " << a.rank
              << ": cannot open the control channel of job " << a.job << ": "
              << e.what() << "\n";
    return 2;
  }
  g_board = board.get();
  g_rank = a.rank;
  worker_set_status("idle");

  BlockSender tx(a.job + ".bw" + std::to_string(a.rank));
  BlockReceiver rx;
  std::vector<char> buf(kWireMax);

  // Returns false if the controller is gone.
  auto send = [&](const Message& m, uint64_t id, uint32_t flags) {
    size_t n = encode(m, id, flags, tx, 1, buf.data());
    while (true) {
      QResult r = q_timed_send(*to, buf.data(), n, 1000);
      if (r == QResult::Ok) break;
      if (controller_gone()) return false;
    }
    if (a.bell_fd >= 0) {
      ssize_t w = ::write(a.bell_fd, "x", 1);
      if (w < 0 && errno == EPIPE)
        return false;  // EAGAIN: a ring is already pending
    }
    return true;
  };

  if (!send(Message{kHello, 0, std::to_string(::getpid())}, 0, 0)) return 0;

  std::string deferred_error;  // from a request that wanted no reply
  while (true) {
    size_t n = 0;
    QResult r = q_timed_receive(*from, buf.data(), buf.size(), &n, 1000);
    if (r != QResult::Ok) {
      if (controller_gone()) return 0;
      continue;
    }
    uint32_t flags = 0;
    Message m;
    Message reply;
    bool error = false;
    try {
      m = decode(buf.data(), n, rx, &flags);
    } catch (const std::exception& e) {
      error = true;
      reply.payload = std::string("ss worker: a bad message: ") + e.what();
      WireHeader hdr;
      std::memcpy(&hdr, buf.data(), sizeof hdr);
      m.id = hdr.id;
      m.kind = hdr.kind;
    }
    if (m.kind == kShutdown) break;
    if (!error && !deferred_error.empty() && !(flags & kFlagNoReply)) {
      error = true;
      reply.payload = std::move(deferred_error);
      deferred_error.clear();
    } else if (!error) {
      worker_set_status("running a request of kind " + std::to_string(m.kind));
      try {
        reply = h.handle(m);
      } catch (const std::exception& e) {
        error = true;
        reply = Message{};
        reply.payload = e.what();
      } catch (...) {
        error = true;
        reply = Message{};
        reply.payload = "an unknown exception";
      }
      worker_set_status("idle");
    }
    if (flags & kFlagNoReply) {
      if (error && deferred_error.empty()) deferred_error = reply.payload;
      continue;
    }
    if (error) reply.kind = kErrorReply;
    if (!send(reply, m.id, error ? kFlagError : 0)) return 0;
  }
  worker_set_status("stopped");
  g_board = nullptr;
  return 0;
}

int worker_entry(const std::vector<std::string>& args) {
  WorkerArgs a;
  try {
    a = parse_worker_args(args);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 64;
  }
  // Every large message is a fresh allocation of its size, and glibc's
  // default gives big blocks back to the kernel on free, so each one pays a
  // page fault per 4 KiB again (16 MiB echoed: 23 ms, 6 ms with these;
  // dist/control/README.md). Keep blocks up to 64 MiB in the heap.
  ::mallopt(M_MMAP_THRESHOLD, 64 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 128 << 20);
  try {
    std::unique_ptr<Handler> h =
        factory() ? factory()(a) : make_echo_handler(a);
    return worker_main(args, *h);
  } catch (const std::exception& e) {
    std::cerr << "ss worker " << a.rank << ": " << e.what() << "\n";
    return 2;
  }
}

}  // namespace ss::dist
