// A local worker's end of the control channel: the job's queues, blocks
// and status board in /dev/shm (worker_link.h, README.md).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "dist/control/channel.h"
#include "dist/control/remove_signal_safe.h"
#include "dist/control/worker_link.h"

namespace ss::dist::detail {

namespace {

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

class ShmLink : public ControllerLink {
 public:
  ShmLink(const WorkerArgs& a, int controller)
      : a_(a),
        controller_(controller),
        tx_(a.job + ".bw" + std::to_string(a.rank)),
        buf_(kWireMax) {}

  // Throws what Boost.Interprocess throws when the job is not there.
  void open() {
    from_ = std::make_unique<bip::message_queue>(
        bip::open_only, queue_name(a_.job, true, a_.rank).c_str());
    to_ = std::make_unique<bip::message_queue>(
        bip::open_only, queue_name(a_.job, false, a_.rank).c_str());
    board_ = StatusBoard::open(a_.job, a_.world);
  }

  // Checked after the handler is in place: a controller that died before
  // sent its SIGKILL already, or sends no signal at all.
  bool controller_gone() {
    bool gone = controller_ > 0 && ::getppid() != controller_;
    if (gone) remove_dead_controllers_job();
    return gone;
  }

  Received receive(int ms) override {
    Received out;
    if (!from_) {  // the controller was gone before the queues were opened
      out.kind = Received::Kind::Gone;
      return out;
    }
    size_t n = 0;
    QResult r = q_timed_receive(*from_, buf_.data(), buf_.size(), &n, ms);
    if (r != QResult::Ok) {
      out.kind =
          controller_gone() ? Received::Kind::Gone : Received::Kind::Nothing;
      return out;
    }
    out.kind = Received::Kind::Request;
    try {
      out.m = decode(buf_.data(), n, rx_, &out.flags);
    } catch (const std::exception& e) {
      out.bad = std::string("ss worker: a bad message: ") + e.what();
      WireHeader hdr;
      std::memcpy(&hdr, buf_.data(), sizeof hdr);
      out.m.id = hdr.id;
      out.m.kind = hdr.kind;
      out.flags = hdr.flags;
    }
    return out;
  }

  bool send(const Message& m, uint64_t id, uint32_t flags) override {
    if (!to_) return false;
    size_t n = encode(m, id, flags, tx_, 1, buf_.data());
    while (true) {
      QResult r = q_timed_send(*to_, buf_.data(), n, 1000);
      if (r == QResult::Ok) break;
      if (controller_gone()) return false;
    }
    if (a_.bell_fd >= 0) {
      ssize_t w = ::write(a_.bell_fd, "x", 1);
      if (w < 0 && errno == EPIPE) {
        // The bell's read end closed: the controller is dying (its files
        // close before the kernel reparents us and signals), so wait for
        // the reparenting, up to a second, and clean up as the handler
        // would have.
        for (int i = 0; i < 1000 && !controller_gone(); ++i) ::usleep(1000);
        return false;
      }  // EAGAIN: a ring is already pending
    }
    return true;
  }

  void set_status(std::string_view text, bool waiting) override {
    if (board_) board_->set(a_.rank, text, waiting);
  }

 private:
  WorkerArgs a_;
  int controller_;
  std::unique_ptr<bip::message_queue> from_, to_;
  std::unique_ptr<StatusBoard> board_;
  BlockSender tx_;
  BlockReceiver rx_;
  std::vector<char> buf_;
};

}  // namespace

ControllerLink::~ControllerLink() = default;

std::unique_ptr<ControllerLink> open_shm_link(const WorkerArgs& a) {
  const int controller = job_controller_pid(a.job);
  clean_up_after_controller(a, controller);
  auto link = std::make_unique<ShmLink>(a, controller);
  if (link->controller_gone()) return link;  // its receive says Gone
  try {
    link->open();
  } catch (const std::exception& e) {
    std::cerr << "ss worker " << a.rank
              << ": cannot open the control channel of job " << a.job << ": "
              << e.what() << "\n";
    return nullptr;
  }
  return link;
}

}  // namespace ss::dist::detail
