// The worker side of the control channel (control.h): `ss worker`.
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "dist/control/channel.h"
#include "dist/control/remove_signal_safe.h"

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

// Note [Workers clean up after a dead controller]
// A controller killed by SIGKILL (or crashing) runs no cleanup: its
// /dev/shm objects (the queues, the status board, its and the workers'
// payload blocks: ~193 MB after a few steps of the README MLP) and its
// rendezvous directory would stay until the next pool's sweep (Note
// [Sweeping dead jobs] in pool.cpp). So the workers, who outlive it by a
// moment, remove them. The pool forks each worker with
// PR_SET_PDEATHSIG(SIGTERM) (and SIGTERM's default action, whatever the
// controller's was), so a worker dies with the controller as before, and
// a worker whose handler is installed cleans up first. The attribute must
// be set before exec: the kernel reads it from the worker's main thread,
// and `ss worker` runs on another (Note [A deep stack] in
// interp/cli/main.cpp).
//
// The handler must tell that SIGTERM from the live controller's, which
// stops the workers after a failure and must remove nothing. getppid()
// alone cannot: the signal comes when the controller's *thread* that
// forked exits, and while its other threads are still exiting the kernel
// reparents the worker to one of them, so getppid() is still the
// controller's pid (the first test of this lost the race one run in
// three). What does tell them apart is how the signal was sent: the
// kernel sends PDEATHSIG as SI_USER from the dying controller's pid, and
// the controller stops its workers with sigqueue (SI_QUEUE; pool.cpp's
// stop_workers). So the handler cleans up on SI_USER from the controller,
// or when its parent is no longer the controller: every /dev/shm name of
// the job and the rendezvous directory (only one the pool made for this
// job: its name starts with the job's), with raw syscalls. Either way it
// then dies of SIGTERM. Every worker does this at once; unlinking a name
// another has removed is harmless. A worker whose handler cannot run
// (SIGTERM blocked) sees getppid() change within a second in its receive
// loop, or its bell's EPIPE, and does the same before it returns; one
// killed before its handler was installed leaves the rest to its peers
// or to the next pool's sweep.
char g_job[64];
char g_store[512];  // empty unless the pool made it for this job
int g_shm_dir = -1;
pid_t g_controller = 0;

void remove_dead_controllers_job() {
  if (g_shm_dir >= 0 && g_job[0]) unlink_entries_signal_safe(g_shm_dir, g_job);
  if (g_store[0]) remove_dir_signal_safe(g_store);
}

void on_sigterm(int sig, siginfo_t* info, void*) {
  int saved = errno;
  const bool pdeathsig =
      info && info->si_code == SI_USER && info->si_pid == g_controller;
  if (g_controller > 0 && (pdeathsig || ::getppid() != g_controller))
    remove_dead_controllers_job();
  errno = saved;
  ::signal(sig, SIG_DFL);
  ::raise(sig);  // delivered once this handler returns: die of it
}

void clean_up_after_controller(const WorkerArgs& a, pid_t controller) {
  if (controller <= 0 || a.job.size() >= sizeof g_job) return;
  std::memcpy(g_job, a.job.c_str(), a.job.size() + 1);
  std::string base = a.store.substr(a.store.find_last_of('/') + 1);
  if (base.rfind(a.job + ".", 0) == 0 && a.store.size() < sizeof g_store)
    std::memcpy(g_store, a.store.c_str(), a.store.size() + 1);
  g_shm_dir = ::open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  g_controller = controller;
  struct sigaction sa {};
  sa.sa_sigaction = on_sigterm;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
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
  clean_up_after_controller(a, controller);
  // Checked after the handler is in place: a controller that died before
  // sent its SIGKILL already, or sends no signal at all.
  auto controller_gone = [&] {
    bool gone = controller > 0 && ::getppid() != controller;
    if (gone) remove_dead_controllers_job();
    return gone;
  };
  if (controller_gone()) return 0;
  // The bell's read end closed: the controller is dying (its files close
  // before the kernel reparents us and signals), so wait for the
  // reparenting, up to a second, and clean up as the handler would have.
  auto controller_dying = [&] {
    for (int i = 0; i < 1000 && !controller_gone(); ++i) ::usleep(1000);
  };

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
      if (w < 0 && errno == EPIPE) {
        controller_dying();
        return false;
      }  // EAGAIN: a ring is already pending
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
