// Workers on any host, each over one authenticated TCP connection
// (pool_workers.h; issue 26).
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <iostream>

#include "dist/control/build_id.h"
#include "dist/control/channel.h"
#include "dist/control/pool_workers.h"
#include "dist/net/acceptor.h"
#include "dist/net/auth.h"
#include "dist/net/frames.h"
#include "dist/rendezvous/net_store.h"

namespace ss::dist::pool_detail {

using namespace detail;
using Clock = std::chrono::steady_clock;

// Note [The controller's side of several hosts]
// With RemoteOptions the pool's workers are not its children over
// /dev/shm but peers over TCP. The controller makes the job's key (or
// reads it from a token file), listens (Acceptor: every connection proves
// the key before anything else is read, Note [Authenticated connections]),
// serves the job's rendezvous store (Note [The controller's store]), and
// starts each rank with the launch template: `/bin/sh -c` of `ssh
// node1 ss worker --connect ADDR:PORT --slot R`, the key written to the
// launcher's stdin, never to its command line. In manual mode nothing is
// launched: the workers a scheduler starts connect and take the ranks in
// order. A worker's hello names its slot; its reply (kAssign) carries what
// a local worker finds on its command line, plus the address its Gloo
// pairs bind to (the hostfile's addr=, else the address its connection
// came from) and the store's address as that connection reaches us.
//
// A rank is lost when its connection ends (at once: a killed worker's
// kernel closes it), when its launcher exits (ssh that could not log in),
// or when nothing, neither a message nor a heartbeat (every second, Note
// [A remote worker's connection]), came from it for the heartbeat timeout
// (a host that went away, a cut link). Stopping a rank is ending its
// connection, which ends the worker (it ends itself at its connection's
// end), and signalling its launcher. The heartbeats carry the status the
// shared-memory board gives a local controller; a worker's "waiting since"
// comes as a duration and is turned into this host's clock on arrival.

namespace {

// Writes [text] to a launcher's stdin. A launcher that exits at once (ssh
// refused, a wrong command) has closed the pipe, and the write's SIGPIPE
// would kill the controller (a Python process or a test that does not
// ignore it) before its error is reported: the signal is held on this
// thread during the write, and one it raised is taken before letting go.
// The launcher's exit is what the pool reports.
void write_to_launcher(int fd, const std::string& text) {
  sigset_t pipe, old;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  const bool held = ::pthread_sigmask(SIG_BLOCK, &pipe, &old) == 0;
  const bool broken =
      ::write(fd, text.data(), text.size()) < 0 && errno == EPIPE;
  if (held) {
    const timespec now{0, 0};
    if (broken) (void)::sigtimedwait(&pipe, nullptr, &now);
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
}

constexpr std::chrono::milliseconds kSendTime{120000};
constexpr std::chrono::milliseconds kHelloTime{3000};

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1" ||
         host == "[::1]";
}

// The address part of a host's name ("user@node1" → "node1").
std::string address_of(const Host& h) {
  if (!h.addr.empty()) return h.addr;
  const size_t at = h.name.find('@');
  return at == std::string::npos ? h.name : h.name.substr(at + 1);
}

// Whether a template is one command a shell could exec: nothing that
// makes a list, a pipeline, a redirection or a subshell.
bool simple_command(const std::string& tmpl) {
  return tmpl.find_first_of(";&|<>()`$\n") == std::string::npos &&
         tmpl.rfind("exec ", 0) != 0;
}

bool is_wildcard(const std::string& host) {
  return host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]";
}

std::string this_binary(const LaunchOptions& opts) {
  if (!opts.remote->remote_binary.empty()) return opts.remote->remote_binary;
  if (!opts.binary.empty())
    return std::filesystem::absolute(opts.binary).string();
  std::error_code ec;
  std::string self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "ss" : self;
}

// "key=value" from a hello's words.
std::string hello_field(const std::string& hello, const std::string& key) {
  size_t at = 0;
  while (at < hello.size()) {
    size_t end = hello.find(' ', at);
    if (end == std::string::npos) end = hello.size();
    const std::string word = hello.substr(at, end - at);
    if (word.rfind(key + "=", 0) == 0) return word.substr(key.size() + 1);
    at = end + 1;
  }
  return "";
}

int hello_pid(const std::string& hello) {
  try {
    return std::stoi(hello_field(hello, "pid"));
  } catch (const std::exception&) {
    return 0;
  }
}

class TcpWorkers : public Workers {
 public:
  TcpWorkers(const LaunchOptions& opts, std::string job, int reg)
      : opts_(opts),
        remote_(*opts.remote),
        job_(std::move(job)),
        children_(opts.world, reg, opts.forward_output),
        ranks_(opts.world) {}

  ~TcpWorkers() override { cleanup(); }

  void start() {
    key_ = job_key();
    std::vector<int> placed;
    if (!remote_.hosts.empty()) placed = place_ranks(remote_.hosts, world());
    const net::Endpoint listen = listen_endpoint();
    acceptor_ = std::make_unique<net::Acceptor>(
        net::listen_tcp(listen.host, listen.port), key_, net::Role::Controller);
    store_server_ =
        std::make_unique<rendezvous::StoreServer>(key_, listen.host);
    store_ = store_server_->address();
    for (int r = 0; r < world(); ++r) {
      ranks_[r].placed = placed.empty() ? -1 : placed[r];
      if (ranks_[r].placed >= 0)
        ranks_[r].host = remote_.hosts[ranks_[r].placed].name;
    }
    if (placed.empty()) {
      std::cerr << "waiting for " << world() << " worker"
                << (world() == 1 ? "" : "s") << " at "
                << acceptor_->endpoint().str() << ": on each host run `ss "
                << "worker --connect " << acceptor_->endpoint().str()
                << " --token-file FILE` with this job's token file\n";
    } else {
      launch(placed, listen.host);
    }
    children_.forward();
  }

  int world() const override { return opts_.world; }

  void prepare(Outgoing&, uint32_t) override {}

  bool try_send(int r, const Outgoing& out) override {
    Rank& k = ranks_[r];
    if (!k.fd.valid() || k.lost) return true;  // reap reports it
    try {
      net::send_frame(k.fd.get(),
                      out.m->kind,
                      out.flags,
                      out.id,
                      out.m->payload,
                      net::deadline_in(kSendTime));
    } catch (const net::NetError& e) {
      // What it sent before the connection broke may say how it ended
      // (Note [A remote worker's supervisor]).
      pump(r);
      lose(r, std::string("lost its connection (") + e.what() + ")");
    }
    return true;
  }

  std::optional<Incoming> try_receive(int r) override {
    Rank& k = ranks_[r];
    if (k.inbox.empty()) pump(r);
    if (k.inbox.empty()) return std::nullopt;
    Incoming in = std::move(k.inbox.front());
    k.inbox.pop_front();
    return in;
  }

  void wait_event(int ms) override {
    ms = std::max(0, std::min(ms, 100));  // the heartbeats' clock
    if (connected_ < world()) {
      // Starting: a connection that completed its handshake is taken here.
      const int slice = std::min(ms, 20);
      if (net::Fd fd = acceptor_->take(
              net::deadline_in(std::chrono::milliseconds(slice)));
          fd.valid())
        admit(std::move(fd));
      ms -= slice;
    }
    std::vector<pollfd> pf;
    for (Rank& k : ranks_)
      if (k.fd.valid() && !k.lost) pf.push_back({k.fd.get(), POLLIN, 0});
    children_.add_pidfds(pf);
    if (ms > 0 || !pf.empty()) ::poll(pf.data(), pf.size(), ms);
  }

  int reap() override {
    int first = -1;
    auto note = [&](int r) {
      if (first < 0 && !ranks_[r].reported) first = r;
    };
    for (int r = 0; r < world(); ++r) pump(r);
    const int64_t now = monotonic_ms();
    const int64_t limit = remote_.heartbeat_timeout.count();
    for (int r = 0; r < world(); ++r) {
      Rank& k = ranks_[r];
      if (!k.lost && k.fd.valid() && now - k.heard_ms > limit) {
        char secs[32];
        std::snprintf(secs, sizeof secs, "%g", limit / 1000.0);
        lose(r,
             std::string("is unreachable: nothing came from it for ") + secs +
                 " s (the heartbeat timeout)");
      }
    }
    if (children_.reap() >= 0)
      for (int r = 0; r < world(); ++r) {
        Rank& k = ranks_[r];
        if (children_.spawned(r) && !children_.alive(r) && !k.lost) {
          const int st = children_.wait_status(r);
          lose(r, describe_wait_status(st), WIFSIGNALED(st));
        }
      }
    for (int r = 0; r < world(); ++r)
      if (ranks_[r].lost) note(r);
    if (first >= 0) ranks_[first].reported = true;
    return first;
  }

  bool any_alive() const override {
    if (children_.any_alive()) return true;
    for (const Rank& k : ranks_)
      if (k.fd.valid() && !k.lost) return true;
    return false;
  }

  void stop_all(int sig, std::chrono::milliseconds grace) override {
    // Ending a connection ends its worker (Note [A remote worker's
    // connection]); after a shutdown message (sig 0) they end their own.
    if (sig != 0)
      for (Rank& k : ranks_)
        if (k.fd.valid()) ::shutdown(k.fd.get(), SHUT_RDWR);
    const auto deadline = Clock::now() + grace;
    while (Clock::now() < deadline) {
      bool open = false;
      for (int r = 0; r < world(); ++r) {
        pump(r);
        open = open || (ranks_[r].fd.valid() && !ranks_[r].lost);
      }
      children_.reap();
      if (!open && !children_.any_alive()) break;
      wait_event(5);
    }
    for (int r = 0; r < world(); ++r)
      if (!ranks_[r].lost) lose(r, "was stopped");
    for (Rank& k : ranks_) k.fd = net::Fd();
    children_.stop(sig == 0 ? SIGTERM : sig, std::chrono::milliseconds(0));
  }

  void interrupt(int r) override {
    Rank& k = ranks_[r];
    if (!k.fd.valid() || k.lost) return;
    try {
      net::send_frame(k.fd.get(),
                      kInterrupt,
                      kFlagNoReply,
                      0,
                      {},
                      net::deadline_in(kHelloTime));
    } catch (const net::NetError& e) {
      lose(r, std::string("lost its connection (") + e.what() + ")");
    }
  }

  void cleanup() override {
    if (cleaned_) return;
    cleaned_ = true;
    for (Rank& k : ranks_) k.fd = net::Fd();
    children_.reap();
    if (children_.any_alive())
      children_.stop(SIGKILL, std::chrono::milliseconds(0));
    acceptor_.reset();
    store_server_.reset();
  }

  Loss loss(int r) const override { return ranks_[r].loss; }

  std::string status(int r, bool* waiting, int64_t* since_ms) const override {
    const Rank& k = ranks_[r];
    if (waiting) *waiting = k.waiting;
    if (since_ms) *since_ms = k.since_ms;
    return k.status;
  }
  bool stopped(int r) const override {
    // Only a worker that is its own launcher (`--launch '{cmd}'`) is a
    // process here; a stopped remote one goes silent and is lost.
    return children_.spawned(r) && children_.alive(r) &&
           ranks_[r].pid == children_.pid(r) &&
           process_stopped(children_.pid(r));
  }
  int pid(int r) const override { return ranks_[r].pid; }
  std::string host(int r) const override { return ranks_[r].host; }
  std::string output_tail(int r, std::chrono::milliseconds wait) override {
    return children_.spawned(r) ? children_.tail(r, wait) : std::string();
  }
  const std::string& store() const override { return store_; }

 private:
  struct Rank {
    int placed = -1;  // its host in remote_.hosts; -1 in manual mode
    std::string host;
    net::Fd fd;
    std::unique_ptr<net::FrameReader> reader;
    int pid = 0;
    int64_t heard_ms = 0;  // when anything last came from it
    std::string status = "starting";
    bool waiting = false;
    int64_t since_ms = 0;
    std::deque<Incoming> inbox;
    bool lost = false;
    bool reported = false;  // reap returned it
    Loss loss;
  };

  net::JobKey job_key() {
    if (remote_.token_file.empty()) return net::JobKey::generate();
    if (std::filesystem::exists(remote_.token_file))
      return net::read_token_file(remote_.token_file);
    const net::JobKey key = net::JobKey::generate();
    net::write_token_file(remote_.token_file, key);
    std::cerr << "wrote a new job key to " << remote_.token_file
              << " (mode 0600): copy it to each worker's host\n";
    return key;
  }

  net::Endpoint listen_endpoint() const {
    if (!remote_.listen.empty()) return net::parse_endpoint(remote_.listen);
    bool local = true;
    for (const Host& h : remote_.hosts)
      local = local && is_loopback(address_of(h));
    if (local) return {"127.0.0.1", 0};
    for (const Host& h : remote_.hosts)
      if (!is_loopback(address_of(h)))
        return {net::source_address_to(address_of(h)), 0};
    return {"127.0.0.1", 0};
  }

  void launch(const std::vector<int>& placed, const std::string& listen_host) {
    const std::string binary = this_binary(opts_);
    std::vector<std::string> env = worker_environment({});
    std::vector<char*> envp = pointers(env);
    const uint16_t port = acceptor_->endpoint().port;
    const std::vector<std::string> remote_env = environment_to_send();
    for (int r = 0; r < world(); ++r) {
      const Host& h = remote_.hosts[placed[r]];
      const std::string connect = is_wildcard(listen_host)
                                      ? net::source_address_to(address_of(h))
                                      : listen_host;
      std::vector<std::string> cmd;
      if (!remote_env.empty()) {
        cmd.push_back("env");
        cmd.insert(cmd.end(), remote_env.begin(), remote_env.end());
      }
      const std::vector<std::string> worker = {
          binary,
          "worker",
          "--connect",
          net::Endpoint{connect, port}.str(),
          "--slot",
          std::to_string(r)};
      cmd.insert(cmd.end(), worker.begin(), worker.end());
      // A template that is one simple command is exec'd, so that the
      // launcher (ssh, or with '{cmd}' the worker's supervisor) is our
      // child and no shell stands between (nor reports its signal).
      const std::string line = (simple_command(remote_.launch) ? "exec " : "") +
                               expand_launch(remote_.launch, h.name, cmd);
      int in[2];
      if (::pipe2(in, O_CLOEXEC) != 0)
        throw std::runtime_error(std::string("WorkerPool: pipe: ") +
                                 std::strerror(errno));
      try {
        children_.spawn(r, {"/bin/sh", "-c", line}, envp, in[0], -1);
      } catch (...) {
        ::close(in[0]);
        ::close(in[1]);
        throw;
      }
      ::close(in[0]);
      // The key, on the launcher's stdin (ssh forwards it): never argv.
      write_to_launcher(in[1], key_.hex() + "\n");
      ::close(in[1]);
    }
  }

  // What a local worker's environment would hold that decides how it
  // computes travels as `env` words (ssh passes none of ours): opts.env,
  // and our OPENBLAS_* and SHAPESCRIPT_* settings, so that a host runs
  // the kernels this one would (OPENBLAS_CORETYPE picks OpenBLAS's, and
  // with it the bits of every product).
  std::vector<std::string> environment_to_send() const {
    const std::vector<std::string> all = worker_environment(opts_.env);
    std::vector<std::string> env(all.begin(), all.begin() + opts_.env.size());
    for (size_t i = opts_.env.size(); i < all.size(); ++i)
      if (all[i].rfind("OPENBLAS_", 0) == 0 ||
          all[i].rfind("SHAPESCRIPT_", 0) == 0)
        env.push_back(all[i]);
    return env;
  }

  // A connection that proved the key: its hello, its rank, its
  // assignment (the Note).
  void admit(net::Fd fd) {
    const net::Endpoint peer = net::peer_endpoint(fd.get());
    auto reader =
        std::make_unique<net::FrameReader>("a worker at " + peer.str());
    std::string hello;
    try {
      net::Frame f =
          reader->read_blocking(fd.get(), net::deadline_in(kHelloTime));
      if (f.kind != kHello) return;
      hello = f.payload;
    } catch (const net::NetError&) {
      return;
    }
    const int r = rank_for(hello_field(hello, "slot"));
    if (r < 0) return;  // a rank taken, or no rank free: refused
    const std::string build = hello_field(hello, "build");
    if (build != build_) {
      // Another version, or a build for another instruction set: other
      // bits, or other messages. Refused, and the rank with it.
      const std::string why = "runs another build of ss (build " + build +
                              ", this "
                              "controller's is " +
                              build_ +
                              "): install the same build at "
                              "the same path on every host";
      try {
        net::send_frame(
            fd.get(),
            {kErrorReply, 0, 0, "the controller refused it: it " + why},
            net::deadline_in(kHelloTime));
      } catch (const net::NetError&) {
      }
      if (remote_.hosts.empty()) {
        std::cerr << "refused a worker from " << hello_field(hello, "host")
                  << " (" << peer.host << "): it " << why << "\n";
        return;
      }
      ranks_[r].pid = hello_pid(hello);
      lose(r, why);
      return;
    }
    Rank& k = ranks_[r];
    if (k.placed < 0) k.host = hello_field(hello, "host");
    k.pid = hello_pid(hello);
    const std::string bind =
        k.placed >= 0 && !remote_.hosts[k.placed].addr.empty()
            ? remote_.hosts[k.placed].addr
            : peer.host;
    const std::string store =
        std::string(rendezvous::kTcpStorePrefix) +
        net::Endpoint{net::local_endpoint(fd.get()).host, store_server_->port()}
            .str();
    std::vector<std::string> args = {"--job",
                                     job_,
                                     "--rank",
                                     std::to_string(r),
                                     "--world",
                                     std::to_string(world()),
                                     "--store",
                                     store,
                                     "--bind",
                                     bind,
                                     "--cwd",
                                     cwd_};
    args.insert(args.end(), opts_.extra_args.begin(), opts_.extra_args.end());
    std::string payload;
    for (size_t i = 0; i < args.size(); ++i)
      payload += (i ? std::string(1, '\0') : std::string()) + args[i];
    try {
      net::send_frame(
          fd.get(), {kAssign, 0, 0, payload}, net::deadline_in(kHelloTime));
    } catch (const net::NetError&) {
      return;
    }
    k.fd = std::move(fd);
    k.reader = std::move(reader);
    k.heard_ms = monotonic_ms();
    k.status = "idle";
    k.inbox.push_back({Message{kHello, 0, std::to_string(k.pid)}, 0});
    ++connected_;
  }

  // The rank a hello's slot asks for: launched ranks must come to their
  // own; in manual mode the slot is a wish, else the next free rank.
  int rank_for(const std::string& slot) const {
    int want = -1;
    try {
      if (!slot.empty() && slot != "-") want = std::stoi(slot);
    } catch (const std::exception&) {
      want = -1;
    }
    const bool manual = remote_.hosts.empty();
    if (want >= 0 && want < world() && !ranks_[want].fd.valid() &&
        !ranks_[want].lost)
      return want;
    if (!manual) return -1;
    for (int r = 0; r < world(); ++r)
      if (!ranks_[r].fd.valid() && !ranks_[r].lost) return r;
    return -1;
  }

  // Reads what rank r sent: messages to its inbox, heartbeats to its
  // status; the connection's end loses it.
  void pump(int r) {
    Rank& k = ranks_[r];
    if (!k.fd.valid() || k.lost) return;
    try {
      while (std::optional<net::Frame> f = k.reader->read(k.fd.get())) {
        if (f->kind == kStatusBeat) {
          beat(k, f->payload);
          continue;
        }
        if (f->kind == kWorkerExit) {  // Note [A remote worker's supervisor]
          const bool killed = f->payload.rfind("1 ", 0) == 0;
          lose(r,
               f->payload.substr(std::min<size_t>(2, f->payload.size())),
               killed);
          return;
        }
        k.inbox.push_back(
            {Message{f->kind, f->id, std::move(f->payload)}, f->flags});
      }
      if (k.reader->take_bytes_read() > 0) k.heard_ms = monotonic_ms();
    } catch (const net::NetError& e) {
      lost_connection(r, e.what());
    }
  }

  // "WAITING WAITED_MS STATUS".
  static void beat(Rank& k, const std::string& payload) {
    const size_t a = payload.find(' ');
    const size_t b = a == std::string::npos ? a : payload.find(' ', a + 1);
    if (b == std::string::npos) return;
    k.waiting = payload.substr(0, a) == "1";
    int64_t waited = 0;
    try {
      waited = std::stoll(payload.substr(a + 1, b - a - 1));
    } catch (const std::exception&) {
    }
    k.since_ms = monotonic_ms() - waited;
    k.status = payload.substr(b + 1);
  }

  // The connection ended: a worker that is our child (`{cmd}`) is waited
  // for a moment, so that its signal or exit code is what we report.
  void lost_connection(int r, const std::string& why) {
    Rank& k = ranks_[r];
    if (children_.spawned(r) && k.pid == children_.pid(r)) {
      for (int i = 0; i < 20 && children_.alive(r); ++i) {
        children_.reap();
        if (children_.alive(r)) ::usleep(5000);
      }
      if (!children_.alive(r)) {
        const int st = children_.wait_status(r);
        lose(r, describe_wait_status(st), WIFSIGNALED(st));
        return;
      }
    }
    lose(r,
         k.reader && k.reader->eof() ? "lost its connection (it closed)"
                                     : "lost its connection (" + why + ")");
  }

  void lose(int r, std::string how, bool killed = false) {
    Rank& k = ranks_[r];
    if (k.lost) return;
    k.lost = true;
    k.loss = {std::move(how), killed};
    k.fd = net::Fd();
  }

  LaunchOptions opts_;
  RemoteOptions remote_;
  std::string job_;
  net::JobKey key_;
  Children children_;
  std::vector<Rank> ranks_;
  int connected_ = 0;
  std::unique_ptr<net::Acceptor> acceptor_;
  std::unique_ptr<rendezvous::StoreServer> store_server_;
  std::string store_;
  std::string cwd_ = std::filesystem::current_path().string();
  // The build every worker must be: the `ss` this controller starts
  // workers from (LaunchOptions::binary, else itself).
  std::string build_ =
      opts_.binary.empty() ? build_id() : build_id_of(opts_.binary);
  bool cleaned_ = false;
};

}  // namespace

std::unique_ptr<Workers> start_tcp_workers(const LaunchOptions& opts,
                                           const std::string& job,
                                           int registry_slot) {
  auto w = std::make_unique<TcpWorkers>(opts, job, registry_slot);
  w->start();  // on a throw, ~TcpWorkers cleans up
  return w;
}

}  // namespace ss::dist::pool_detail
