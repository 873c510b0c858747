// The worker side of the control channel (control.h): `ss worker`.
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "dist/comm/gloo_comm.h"
#include "dist/control/channel.h"
#include "dist/control/worker_link.h"

namespace ss::dist {

using namespace detail;

Handler::~Handler() = default;

namespace {

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

// The link the loop runs on, for worker_set_status.
ControllerLink* g_link = nullptr;

// Requests → handler → replies until shutdown or the controller is gone.
// [hello]: say it first (a remote worker said it when it connected).
int serve(ControllerLink& link, Handler& h, bool hello) {
  g_link = &link;
  struct Unset {
    ~Unset() { g_link = nullptr; }
  } unset;
  worker_set_status("idle");
  if (hello && !link.send(Message{kHello, 0, std::to_string(::getpid())}, 0, 0))
    return 0;
  std::string deferred_error;  // from a request that wanted no reply
  while (true) {
    ControllerLink::Received got = link.receive(1000);
    if (got.kind == ControllerLink::Received::Kind::Gone) return 0;
    if (got.kind == ControllerLink::Received::Kind::Nothing) continue;
    Message& m = got.m;
    const uint32_t flags = got.flags;
    Message reply;
    bool error = !got.bad.empty();
    if (error) reply.payload = got.bad;
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
    if (!link.send(reply, m.id, error ? kFlagError : 0)) return 0;
  }
  worker_set_status("stopped");
  return 0;
}

// Every large message is a fresh allocation of its size, and glibc's
// default gives big blocks back to the kernel on free, so each one pays a
// page fault per 4 KiB again (16 MiB echoed: 23 ms, 6 ms with these;
// dist/control/README.md). Keep blocks up to 64 MiB in the heap.
void keep_large_blocks() {
  ::mallopt(M_MMAP_THRESHOLD, 64 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 128 << 20);
}

}  // namespace

void worker_set_status(std::string_view text, bool waiting) {
  if (g_link) g_link->set_status(text, waiting);
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
    } else if (s == "--bind") {
      a.bind = value();
    } else if (s == "--cwd") {
      a.cwd = value();
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
  std::unique_ptr<ControllerLink> link = open_shm_link(a);
  if (!link) return 2;
  return serve(*link, h, /*hello=*/true);
}

namespace {
int serve_remote(const std::vector<std::string>& args);
}  // namespace

int worker_entry(const std::vector<std::string>& args) {
  keep_large_blocks();
  if (!connects(args)) {
    WorkerArgs a;
    try {
      a = parse_worker_args(args);
    } catch (const std::exception& e) {
      std::cerr << e.what() << "\n";
      return 64;
    }
    try {
      std::unique_ptr<Handler> h =
          factory() ? factory()(a) : make_echo_handler(a);
      return worker_main(args, *h);
    } catch (const std::exception& e) {
      std::cerr << "ss worker " << a.rank << ": " << e.what() << "\n";
      return 2;
    }
  }
  // A remote worker (Note [A remote worker's connection]): its arguments
  // come from the controller once it has proved the job's key. Once
  // connected it is a forked child (Note [A remote worker's supervisor])
  // whose only thread was the one running this, not the program's main
  // thread, which would exit() the process when it returned: so the child
  // ends itself, or threads still running (a communication thread's)
  // would keep it, half exited, from its supervisor's wait.
  const pid_t started_as = ::getpid();
  const int rc = serve_remote(args);
  if (::getpid() != started_as) {
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    ::_exit(rc);
  }
  return rc;
}

namespace {

int serve_remote(const std::vector<std::string>& args) {
  ::signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> assigned;
  std::unique_ptr<ControllerLink> link;
  try {
    link = open_tcp_link(args, assigned);
  } catch (const std::exception& e) {
    std::cerr << "ss worker: " << e.what() << "\n";
    return 2;
  }
  WorkerArgs a;
  try {
    a = parse_worker_args(assigned);
    if (!a.bind.empty()) set_gloo_host(a.bind);
    // Note [A remote worker's working directory]: the controller's, where
    // this host has it (a shared file system, or the same layout), so that
    // a relative path in the program (a streamed dataset's) means what it
    // means to the controller, as for a local worker; else ssh's (the
    // home directory), and such a path fails by name (Note [A streamed
    // dataset on every host]).
    if (!a.cwd.empty()) (void)!::chdir(a.cwd.c_str());
    std::unique_ptr<Handler> h =
        factory() ? factory()(a) : make_echo_handler(a);
    return serve(*link, *h, /*hello=*/false);
  } catch (const std::exception& e) {
    std::cerr << "ss worker " << a.rank << ": " << e.what() << "\n";
    return 2;
  }
}

}  // namespace

}  // namespace ss::dist
