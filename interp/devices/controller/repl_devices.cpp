// Note [Repl sessions on devices]
// `ss repl --devices 'cpu[0 1]'` (or a session whose devices line names
// several) is a controller, as `ss run`'s main is (devices.md: "the ss
// process running main (or the repl)"). Each input's statements run in an
// Interpreter with the session's ControllerContext, so a call of a worker
// fn goes to the workers. The workers are started at the session's first
// such call and kept until `:reset`, a new device list, a failure that
// ends them, or the end of the session, so models and optimizers live on
// them across inputs: a handle sent once is named by its id from then on,
// and the controller copies a store back only when it reads it (printing
// `m.w`, `save`), as in `ss run`.
//
// Declarations. The workers check the session's declarations as the repl
// does, from the same text (kDeclare, Note [The session's text]), when they
// start and again at each input that declares something. The input's own
// fn follows the declarations in the repl's text, so every span in the
// declarations means the same on both sides: an error raised on a worker
// is shown at the right line of what was typed or loaded. Each new program
// gets a new Interpreter on the workers; the stores stay (their models'
// layouts are what the repl's redefinition rules keep: Note [Repl
// redefinition]).
//
// Failures. An error every worker raised alike (a ValueError in a worker
// fn) leaves the workers' group (Note [A call that failed alone] in
// program_server.cpp): what they held newer is copied back from rank 0 and
// they end; the session goes on from the last good step, as on one device,
// and new workers start at the next need. A worker that died (WorkerError)
// takes the stores it held newer with it: their handles are lost(), and
// the repl drops them with an error saying the devices' state is gone; a
// store the controller held current is sent whole to the next workers.
//
// Ctrl-C. The pool passes it on to the workers as SIGINT (Note
// [Interrupting the workers] in dist/control/pool.cpp): each stops its
// call at its next statement and answers KeyboardInterrupt, and the group
// stays. What is kept: the workers, and every store they hold whose copies
// still agree, compared by digest (kDigest) because ranks stop at
// different statements (one past `update`, another before it); a store
// whose copies came apart is lost(). When a worker cannot stop (it waits
// in a collective for one that stopped) the pool ends them all within
// interrupt_grace, and their newer stores are lost().
#include "interp/devices/controller/repl_devices.h"

#include <cstdlib>
#include <iostream>

#include "interp/devices/controller/controller.h"
#include "interp/devices/controller/controller_context.h"
#include "interp/devices/controller/device_run.h"
#include "interp/devices/protocol/messages.h"
#include "interp/eval/objects.h"

namespace ss::devices::controller {

using VK = eval::Value::Kind;
using namespace protocol;

struct ReplDevices::Workers {
  Workers(dist::LaunchOptions lo,
          std::function<void(dist::WorkerPool&)> ready,
          eval::Interpreter& in)
      : pool(std::move(lo), std::move(ready)),
        c(pool, in.program(), in.sources(), in),
        context(c),
        world(in.program().devices().count()),
        shard(in.program().devices().shard_params) {}
  LazyPool pool;
  Controller c;
  ControllerContext context;
  size_t world;  // the device list they run
  bool shard;
};

ReplDevices::ReplDevices(check::Options opts, volatile int* interrupted)
    : opts_(std::move(opts)), interrupted_(interrupted) {}

ReplDevices::~ReplDevices() {
  forget(false);
}

void ReplDevices::declare_on(dist::WorkerPool& p) {
  devices::protocol::Writer w;
  write_session_text(w, decls_);
  for (const dist::Message& m :
       p.call_all(dist::Message{kDeclare, 0, std::move(w.buf)},
                  "checking the session's declarations"))
    if (!m.payload.empty())
      throw std::runtime_error(
          "a worker could not check the session's declarations:\n" +
          m.payload.substr(m.payload.find('\n') + 1));
}

std::string ReplDevices::declare(protocol::SessionText decls,
                                 const check::Program& prog) {
  decls_ = std::move(decls);
  lost_.clear();
  if (!w_) return "";
  if (prog.devices().count() != w_->world ||
      prog.devices().shard_params != w_->shard) {
    forget(/*bring_back=*/true);
    return lost_.empty() ? ""
                         : "the workers of the old device list ended, and "
                           "could not give back all they held";
  }
  dist::WorkerPool* p = w_->pool.started();
  if (!p) return "";
  try {
    declare_on(*p);
  } catch (const std::exception& e) {
    forget(/*bring_back=*/false);
    return e.what();
  }
  return "";
}

void ReplDevices::run(eval::Interpreter& in,
                      diag::Span input,
                      const std::function<void()>& body) {
  lost_.clear();
  if (!w_) {
    dist::LaunchOptions lo =
        worker_launch_options(in.program(), worker_run_args(opts_, "main", {}));
    lo.extra_args.insert(lo.extra_args.begin(), "--interruptible");
    lo.interrupted = [f = interrupted_] { return *f != 0; };
    lo.interrupt_workers = true;
    if (remote_) lo.remote = remote_(lo.world);
    if (launch_) launch_(lo);
    w_ = std::make_unique<Workers>(
        std::move(lo), [this](dist::WorkerPool& p) { declare_on(p); }, in);
  }
  w_->c.bind(in.program(), in.sources(), in);
  in.set_device_hooks(&w_->context);
  auto unhook = [&] {
    in.set_device_hooks(nullptr);
    if (w_) w_->c.unbind();
  };
  try {
    try {
      body();
      in.settle();
      // A worker that died after the input's last call (Note [A worker
      // that dies between calls] in controller.cpp).
      if (dist::WorkerPool* p = w_->pool.started()) p->check_alive();
    } catch (const eval::RuntimeError&) {
      throw;
    } catch (const dist::Interrupted& e) {
      throw eval::RuntimeError("KeyboardInterrupt", e.what(), input);
    } catch (const dist::WorkerError& e) {
      // A worker that died between calls, found here: it ran nothing.
      eval::RuntimeError err("WorkerError", e.what(), input);
      err.worker() = eval::RuntimeError::Worker{e.rank, e.how, "", input};
      throw err;
    } catch (const std::exception& e) {
      // The workers failing to start or outside a call (ss run's
      // unlocated WorkerError), at the input here.
      throw eval::RuntimeError("WorkerError", e.what(), input);
    }
  } catch (const eval::RuntimeError& e) {
    // The calls sent ahead: their errors came after this one. Ctrl-C
    // stops them too (the workers' step), not only this process's
    // statement.
    *interrupted_ = e.kind() == "KeyboardInterrupt";
    try {
      in.settle();
    } catch (...) {
    }
    *interrupted_ = 0;
    after_failure(e);
    unhook();
    throw;
  }
  unhook();
}

void ReplDevices::after_failure(const eval::RuntimeError& e) {
  dist::WorkerPool* p = w_->pool.started();
  if (p && p->running() && w_->c.workers_usable()) {
    if (e.kind() == "KeyboardInterrupt") keep_agreeing(*p);
    return;
  }
  // The workers can run no more calls. After an error every worker raised
  // alike their copies agree, and rank 0's come back; after a WorkerError
  // they may not.
  forget(/*bring_back=*/p && p->running() && e.kind() != "WorkerError");
}

// After Ctrl-C: the stores the workers hold newer stay only where every
// worker's copy is the same.
void ReplDevices::keep_agreeing(dist::WorkerPool& p) {
  const eval::NewerCopies* ctx = &w_->c;
  std::vector<std::pair<eval::ModelStore*, eval::OptimState*>> newer;
  w_->c.each_store_sent(
      [&](eval::ModelStore& s) {
        if (s.newer_on == ctx) newer.push_back({&s, nullptr});
      },
      [&](eval::OptimState& o) {
        if (o.newer_on == ctx) newer.push_back({nullptr, &o});
      });
  if (newer.empty()) return;
  devices::protocol::Writer w;
  w.u32(static_cast<uint32_t>(newer.size()));
  for (auto [s, o] : newer) {
    w.u8(s ? 'm' : 'o');
    w.u64(s ? s->remote_id : o->remote_id);
  }
  std::vector<dist::Message> replies;
  try {
    replies = p.call_all(dist::Message{kDigest, 0, std::move(w.buf)},
                         "comparing the workers' copies after Ctrl-C");
  } catch (const std::exception&) {
    forget(/*bring_back=*/false);
    return;
  }
  std::vector<std::vector<uint64_t>> digests;
  for (const dist::Message& m : replies) {
    devices::protocol::Reader r(m.payload);
    std::vector<uint64_t>& d = digests.emplace_back();
    if (m.payload.empty() || r.u8() != kOk) continue;
    for (size_t i = 0; i < newer.size(); ++i) d.push_back(r.u64());
  }
  for (size_t i = 0; i < newer.size(); ++i) {
    bool agree = true;
    for (const auto& d : digests)
      agree = agree && d.size() == newer.size() && d[i] != 0 &&
              d[i] == digests[0][i];
    if (agree) continue;
    auto [s, o] = newer[i];
    lost_[s ? static_cast<const void*>(s) : o] =
        "Ctrl-C stopped the workers at different statements, and their "
        "copies of it differ";
  }
}

// The workers end. Each store they held newer is copied back if
// [bring_back] and it still can be, else lost(); every store is sent whole
// to the next workers.
void ReplDevices::forget(bool bring_back) {
  if (!w_) return;
  const eval::NewerCopies* ctx = &w_->c;
  auto one = [&](auto& s) {
    if (s.newer_on == ctx) {
      bool copied = bring_back;
      if (copied) {
        try {
          eval::sync(s);
        } catch (...) {
          copied = false;  // the workers stopped (Ctrl-C during a call)
        }
      }
      if (!copied)
        lost_[&s] =
            "the workers held it newer than this process and could not give "
            "it back";
    }
    s.newer_on = nullptr;
    s.remote_id = 0;
  };
  w_->c.each_store_sent([&](eval::ModelStore& s) { one(s); },
                        [&](eval::OptimState& o) { one(o); });
  // The session's workers' counters, as `ss run` prints its run's.
  if (dist::WorkerPool* p = w_->pool.started();
      p && std::getenv("SHAPESCRIPT_CONTROL_STATS"))
    std::cerr << w_->c.stats(*p);
  w_.reset();  // the pool stops its workers
}

void ReplDevices::reset() {
  forget(/*bring_back=*/false);
  decls_ = {};
  lost_.clear();
}

namespace {

// Every store [v] holds.
void each_store(const eval::Value& v, std::set<const void*>& out) {
  switch (v.kind) {
    case VK::Model:
    case VK::Grads:
      out.insert(v.as<eval::ModelRef>()->store.get());
      break;
    case VK::Optim: {
      auto* o = v.as<eval::OptimState>();
      out.insert(o);
      out.insert(o->model.get());
      break;
    }
    case VK::Tuple:
    case VK::List:
      if (v.items)
        for (const eval::Value& i : *v.items) each_store(i, out);
      break;
    default:
      break;
  }
}

}  // namespace

void stores_of(const eval::Value& v, std::set<const void*>& out) {
  each_store(v, out);
}

std::string ReplDevices::lost(const eval::Value& v) const {
  if (lost_.empty()) return "";
  std::set<const void*> held;
  stores_of(v, held);
  for (const void* s : held)
    if (auto it = lost_.find(s); it != lost_.end()) return it->second;
  return "";
}

}  // namespace ss::devices::controller
