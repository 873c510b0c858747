// Workers on this host, as the pool's children, over the shared-memory
// control channel (pool_workers.h; the protocol is in README.md).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "dist/control/channel.h"
#include "dist/control/pool_workers.h"
#include "dist/rendezvous/job_dir.h"

namespace ss::dist::pool_detail {

using namespace detail;

namespace {

class ShmWorkers : public Workers {
 public:
  ShmWorkers(const LaunchOptions& opts, std::string job, int reg)
      : opts_(opts),
        job_(std::move(job)),
        reg_(reg),
        children_(opts.world, reg, opts.forward_output),
        to_(opts.world),
        from_(opts.world),
        rx_(opts.world),
        bells_(opts.world, -1) {}

  ~ShmWorkers() override { cleanup(); }

  void start() {
    make_store();
    const int N = opts_.world;
    try {
      board_ = StatusBoard::create(job_, N);
      tx_ = std::make_unique<BlockSender>(job_ + ".bc");
      for (int r = 0; r < N; ++r)
        for (bool to_worker : {true, false}) {
          std::string name = queue_name(job_, to_worker, r);
          bip::message_queue::remove(name.c_str());
          (to_worker ? to_ : from_)[r] =
              std::make_unique<bip::message_queue>(bip::create_only,
                                                   name.c_str(),
                                                   kQueueDepth,
                                                   kWireMax,
                                                   bip::permissions(0600));
        }
    } catch (const std::exception& e) {
      throw std::runtime_error(
          std::string("WorkerPool: cannot create the control channel in "
                      "/dev/shm: ") +
          e.what());
    }
    const std::string binary =
        opts_.binary.empty() ? "/proc/self/exe" : opts_.binary;
    std::vector<std::string> env = worker_environment(opts_.env);
    std::vector<char*> envp = pointers(env);
    try {
      for (int r = 0; r < N; ++r) {
        std::vector<std::string> args = opts_.command;
        if (args.empty()) args.push_back(binary);
        args.insert(args.end(),
                    {"worker",
                     "--job",
                     job_,
                     "--rank",
                     std::to_string(r),
                     "--world",
                     std::to_string(N),
                     "--store",
                     store_,
                     "--bell-fd",
                     "3"});
        args.insert(
            args.end(), opts_.extra_args.begin(), opts_.extra_args.end());
        int bellp[2];
        if (::pipe2(bellp, O_CLOEXEC | O_NONBLOCK) != 0)
          throw std::runtime_error(std::string("WorkerPool: pipe: ") +
                                   std::strerror(errno));
        const int bell_r = move_high(bellp[0]), bell_w = move_high(bellp[1]);
        bells_[r] = bell_r;
        try {
          children_.spawn(r, args, envp, -1, bell_w);
        } catch (...) {
          ::close(bell_w);
          throw;
        }
        ::close(bell_w);
      }
    } catch (...) {
      children_.forward();
      throw;
    }
    children_.forward();
  }

  int world() const override { return opts_.world; }

  void prepare(Outgoing& out, uint32_t readers) override {
    out.wire.resize(kWireMax);
    const size_t n =
        encode(*out.m, out.id, out.flags, *tx_, readers, out.wire.data());
    out.wire.resize(n);
  }

  bool try_send(int r, const Outgoing& out) override {
    return q_try_send(*to_[r], out.wire.data(), out.wire.size()) == QResult::Ok;
  }

  std::optional<Incoming> try_receive(int r) override {
    // Each message rings its worker's bell: drain it before looking, so
    // that one arriving after the look wakes wait_event's poll.
    char c[256];
    if (bells_[r] >= 0)
      while (::read(bells_[r], c, sizeof c) > 0) {
      }
    size_t n = 0;
    if (q_try_receive(*from_[r], buf_.data(), buf_.size(), &n) != QResult::Ok)
      return std::nullopt;  // empty, or a lock timeout (checked next time)
    Incoming in;
    in.m = decode(buf_.data(), n, rx_[r], &in.flags);
    return in;
  }

  void wait_event(int ms) override {
    std::vector<pollfd> pf;
    for (int r = 0; r < opts_.world; ++r)
      if (children_.alive(r) && bells_[r] >= 0)
        pf.push_back({bells_[r], POLLIN, 0});
    const size_t nbells = pf.size();
    // Without pidfds, deaths are seen by polling waitpid every 10 ms.
    const int tick = children_.add_pidfds(pf) ? 100 : 10;
    const int n = ::poll(pf.data(), pf.size(), std::max(0, std::min(ms, tick)));
    if (n <= 0) return;
    for (size_t i = 0; i < nbells; ++i) {
      if (!(pf[i].revents & (POLLHUP | POLLERR)) || (pf[i].revents & POLLIN))
        continue;
      // The worker closed its end (it's exiting): stop polling it.
      for (int& b : bells_)
        if (b == pf[i].fd) {
          ::close(b);
          b = -1;
        }
    }
  }

  int reap() override { return children_.reap(); }
  bool any_alive() const override { return children_.any_alive(); }
  void stop_all(int sig, std::chrono::milliseconds grace) override {
    children_.stop(sig, grace);
  }
  void interrupt(int r) override {
    if (children_.alive(r)) ::kill(children_.pid(r), SIGINT);
  }

  void cleanup() override {
    if (cleaned_) return;
    cleaned_ = true;
    children_.reap();
    if (children_.any_alive())
      children_.stop(SIGKILL, std::chrono::milliseconds(0));
    to_.clear();
    from_.clear();
    for (int& b : bells_)
      if (b >= 0) {
        ::close(b);
        b = -1;
      }
    tx_.reset();
    board_.reset();
    for (int r = 0; r < opts_.world; ++r)
      for (bool to_worker : {true, false})
        bip::message_queue::remove(queue_name(job_, to_worker, r).c_str());
    bip::shared_memory_object::remove(status_name(job_).c_str());
    remove_job_objects(job_);  // the workers' blocks, and anything else
    if (own_store_ && !store_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(store_, ec);
    }
  }

  Loss loss(int r) const override {
    const int st = children_.wait_status(r);
    return {describe_wait_status(st), WIFSIGNALED(st)};
  }
  std::string status(int r, bool* waiting, int64_t* since_ms) const override {
    return board_ ? board_->get(r, waiting, since_ms) : std::string();
  }
  bool stopped(int r) const override {
    return process_stopped(children_.pid(r));
  }
  int pid(int r) const override { return children_.pid(r); }
  std::string host(int) const override { return {}; }
  std::string output_tail(int r, std::chrono::milliseconds wait) override {
    return children_.tail(r, wait);
  }
  const std::string& store() const override { return store_; }

 private:
  // The rendezvous directory: the caller's, or a private one.
  void make_store() {
    store_ = opts_.store_dir;
    if (!store_.empty()) return;
    // `<job>.XXXXXX`: the name sweep_stale_stores parses for the pid.
    try {
      store_ = create_job_dir(job_ + ".");
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("WorkerPool: ") + e.what());
    }
    own_store_ = true;
    registry_set_store(reg_, store_);
  }

  LaunchOptions opts_;
  std::string job_;
  int reg_;
  std::string store_;
  bool own_store_ = false;
  Children children_;
  std::vector<std::unique_ptr<bip::message_queue>> to_, from_;
  std::vector<BlockReceiver> rx_;
  std::vector<int> bells_;  // read ends; a worker rings after each message
  std::unique_ptr<StatusBoard> board_;
  std::unique_ptr<BlockSender> tx_;
  std::vector<char> buf_ = std::vector<char>(kWireMax);
  bool cleaned_ = false;
};

}  // namespace

std::unique_ptr<Workers> start_shm_workers(const LaunchOptions& opts,
                                           const std::string& job,
                                           int registry_slot) {
  auto w = std::make_unique<ShmWorkers>(opts, job, registry_slot);
  w->start();  // on a throw, ~ShmWorkers cleans up
  return w;
}

}  // namespace ss::dist::pool_detail
