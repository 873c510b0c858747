#include "interp/devices/controller/controller.h"

#include <chrono>
#include <stdexcept>

#include "dist/comm/communicator.h"
#include "interp/data/batches.h"
#include "interp/devices/protocol/messages.h"
#include "interp/eval/spmd/blocks.h"
#include "interp/eval/spmd/instance.h"

namespace ss::devices::controller {

using devices::protocol::Codec;
using devices::protocol::Reader;
using devices::protocol::Writer;
using namespace protocol;

void LazyPool::set_program(const protocol::ProgramSources& s) {
  protocol::Writer w;
  protocol::write_program_sources(w, s);
  program_ = std::move(w.buf);
}

dist::WorkerPool& LazyPool::get() {
  if (!pool_) {
    // The collective timeout in effect now (SHAPESCRIPT_COLLECTIVE_TIMEOUT
    // or collective_timeout(seconds) before this first call): the pool
    // reports a worker waiting longer than that, with where each worker
    // was. The workers' own (Gloo's) timeout is set later than it, so
    // that report comes first.
    double t = std::chrono::duration<double>(dist::default_collective_timeout())
                   .count();
    lo_.collective_timeout = std::chrono::duration<double>(t);
    lo_.extra_args.insert(
        lo_.extra_args.begin(),
        {"--collective-timeout", std::to_string(t + std::max(5.0, t / 10))});
    pool_ = dist::WorkerPool::start(lo_);
    std::vector<dist::Message> ready = pool_->call_all(
        dist::Message{kInit, 0, program_}, "starting the workers");
    for (const dist::Message& m : ready)
      if (!m.payload.empty())
        throw std::runtime_error(m.payload.substr(m.payload.find('\n') + 1));
    if (ready_) {
      try {
        ready_(*pool_);
      } catch (...) {
        pool_.reset();  // the next need starts them again
        throw;
      }
    }
  }
  return *pool_;
}

namespace {

// Where a bad item of a call's batch is raised: its loop, as on one
// device.
diag::Span loop_of(const std::vector<eval::Value>& args, diag::Span site) {
  for (const eval::Value& v : args)
    if (v.kind == eval::Value::Kind::Record)
      if (auto* lazy = data::LazyBatch::of(*v.as<eval::RecordValue>()))
        return lazy->loop;
  return site;
}

uint8_t status_of(const dist::Message& m) {
  return m.payload.empty() ? kFailed : static_cast<uint8_t>(m.payload[0]);
}

}  // namespace

Controller::Controller(LazyPool& pool,
                       const check::Program& prog,
                       const diag::SourceMap& sm,
                       eval::Interpreter& in)
    : pool_(pool),
      sm_(&sm),
      in_(&in),
      codec_(Codec::Side::Controller, prog),
      shard_params_(prog.devices().shard_params ||
                    !prog.devices().split_dim.empty()) {}

void Controller::bind(const check::Program& prog,
                      const diag::SourceMap& sm,
                      eval::Interpreter& in) {
  sm_ = &sm;
  in_ = &in;
  codec_.set_program(prog);
  // A worker that dies between inputs is reported at the input, not at a
  // call of an earlier input's text.
  last_call_ = {};
}

std::optional<eval::Value> Controller::call(const check::FnInfo& fn,
                                            std::vector<eval::Value>& args,
                                            diag::Span site,
                                            Later later) {
  // A call whose result is read now waits behind the ones sent ahead; a
  // call sent ahead waits only for room.
  if (!later) in_->settle();
  while (in_flight_.size() >= kInFlight) settle_first();
  Writer w;
  w.str(fn.name);
  write_span(w, site);
  w.u32(static_cast<uint32_t>(args.size()));
  codec_.sent_models.clear();
  codec_.sent_optims.clear();
  // The stores of `mut` params: newer on the workers after the call.
  std::vector<std::shared_ptr<eval::ModelStore>> models;
  std::vector<std::shared_ptr<eval::OptimState>> optims;
  for (size_t i = 0; i < args.size(); ++i) {
    size_t m0 = codec_.sent_models.size(), o0 = codec_.sent_optims.size();
    try {
      codec_.write(w, args[i]);
    } catch (const devices::protocol::WireError& e) {
      in_->fail("ValueError", site, e.what());
    }
    if (i < fn.params.size() && fn.params[i].mut) {
      models.insert(models.end(),
                    codec_.sent_models.begin() + m0,
                    codec_.sent_models.end());
      optims.insert(optims.end(),
                    codec_.sent_optims.begin() + o0,
                    codec_.sent_optims.end());
    }
  }
  // Train modes entering device work: the controller counts the entry
  // (language.md, Randomness); the workers received the count before it
  // and count the same entry in their own call.
  InFlight c;
  for (size_t i = 0; i < args.size() && i < fn.params.size(); ++i)
    if (args[i].kind == eval::Value::Kind::Mode) {
      auto* m = args[i].as<eval::ModeState>();
      ++m->calls;
      m->draws = 0;
      c.modes.push_back(args[i].obj);
    }
  ++calls_;
  c.what = "running `" + fn.name + "` (" + where(*sm_, site) + ")";
  c.loop = loop_of(args, site);
  c.call = {fn.name, site, in_->stack()};
  c.later = std::move(later);
  uint32_t kind = in_flight_.empty() ? kCall : kCallAfter;
  if (kind == kCallAfter) ++ahead_;
  last_call_ = c.call;
  try {
    c.id =
        pool_.get().post_all(dist::Message{kind, 0, std::move(w.buf)}, c.what);
  } catch (const dist::CallTimeout&) {
    throw;
  } catch (const dist::WorkerError& e) {
    worker_stopped(e, c.call);
  }
  // Read here, they are copied back first (eval::sync).
  for (auto& s : models) s->newer_on = this;
  for (auto& o : optims) o->newer_on = this;
  if (!c.later) return finish(c);
  in_flight_.push_back(std::move(c));
  return eval::Value::unit();
}

// Note [A worker that dies between calls]: the pool notices a death when
// it waits for the workers; a worker killed while the controller works on
// its own (saving a model it holds, printing) was noticed by nobody, and
// the run ended with exit 0 (issue 16 item 8). Every builtin settles
// first, so the workers are looked at here too (reaping is a few
// syscalls, done at most every 20 ms), and once more before the run ends.
void Controller::settle() {
  while (!in_flight_.empty()) settle_first();
  // A pool that failed has had its WorkerError raised, at the call the
  // worker died in: looking again would raise it a second time, as if
  // the worker had died after that call, over the first.
  if (dist::WorkerPool* p = pool_.started(); p && p->running()) {
    auto now = std::chrono::steady_clock::now();
    if (now - last_alive_check_ >= std::chrono::milliseconds(20)) {
      last_alive_check_ = now;
      try {
        p->check_alive();
      } catch (const dist::CallTimeout&) {
        throw;
      } catch (const dist::WorkerError& e) {
        if (last_call_.fn.empty()) throw;
        worker_stopped(e, last_call_, /*after=*/true);
      }
    }
  }
}

void Controller::settle_first() {
  InFlight c = std::move(in_flight_.front());
  in_flight_.pop_front();
  try {
    eval::Value v = finish(c);
    c.later(std::move(v));
  } catch (...) {
    // The program stops here: what was sent after is not its to see.
    in_flight_.clear();
    throw;
  }
}

// The calls sent after one that failed: on the workers they did nothing
// (kSkipped) when every worker failed it; a worker that didn't fail went on
// to the next call and may wait in its collectives for the others, so the
// workers are stopped.
void Controller::drop_in_flight(bool workers_went_on) {
  if (in_flight_.empty()) return;
  if (workers_went_on) {
    in_flight_.clear();
    if (dist::WorkerPool* p = pool_.started()) p->stop();
    return;
  }
  while (!in_flight_.empty()) {
    uint64_t id = in_flight_.front().id;
    in_flight_.pop_front();
    pool_.get().collect(id);
  }
}

eval::Value Controller::finish(InFlight& c) {
  std::vector<dist::Message> replies;
  try {
    replies = pool_.get().collect(c.id);
  } catch (const dist::CallTimeout&) {
    throw;  // the seed's report of where every worker was
  } catch (const dist::WorkerError& e) {
    worker_stopped(e, c.call);
  }
  bool any_ok = false, all_ok = true;
  for (const dist::Message& m : replies) {
    bool ok = status_of(m) == kOk;
    any_ok = any_ok || ok;
    all_ok = all_ok && ok;
    if (!ok) {
      Reader r(m.payload);
      std::string kind;
      if (status_of(m) == kRuntime) {
        r.u8();
        kind = r.str();
      }
      if (leaves_group(status_of(m), kind)) usable_ = false;
    }
  }
  if (all_ok) {
    Reader r(replies[0].payload);
    r.u8();
    eval::Value v = codec_.read(r);
    // Note [Modes' draws]: a Train mode's draws are keyed by its entry
    // count and the draw's ordinal in the entry (language.md,
    // Randomness). The workers drew in this entry; a draw here before the
    // next entry (dropout in main) goes on from their count, as on one
    // device.
    uint32_t n = r.u32();
    for (uint32_t i = 0; i < n; ++i) {
      uint64_t draws = r.u64();
      if (i < c.modes.size())
        static_cast<eval::ModeState*>(c.modes[i].get())->draws = draws;
    }
    return v;
  }
  drop_in_flight(any_ok);
  raise_failed(replies, c);
}

void Controller::raise_failed(const std::vector<dist::Message>& replies,
                              const InFlight& c) {
  // The program's error first: a worker that failed alone left the group,
  // and the others' collectives then failed (kFailed) because of it.
  std::vector<size_t> order;
  for (size_t rank = 0; rank < replies.size(); ++rank)
    if (status_of(replies[rank]) != kFailed) order.push_back(rank);
  for (size_t rank = 0; rank < replies.size(); ++rank)
    if (status_of(replies[rank]) == kFailed) order.push_back(rank);
  for (size_t rank : order) {
    Reader r(replies[rank].payload);
    uint8_t status = status_of(replies[rank]);
    if (!replies[rank].payload.empty()) r.u8();
    if (status == kOk || status == kSkipped) continue;
    if (status == kData) {
      if (r.u8() == 0) continue;  // another worker found it
      std::string kind = r.str();
      eval::RuntimeError e(kind, r.str(), c.loop);
      e.stack() = c.call.stack;
      for (uint32_t n = r.u32(), i = 0; i < n; ++i)
        e.notes().push_back(r.str());
      throw e;
    }
    if (status == kRuntime) raise(r, static_cast<int>(rank), c.call.stack);
    throw std::runtime_error("worker " + std::to_string(rank) +
                             " failed while " + c.what + ": " +
                             (replies[rank].payload.empty() ? "" : r.str()));
  }
  throw std::runtime_error("the workers skipped a call while " + c.what);
}

// Note [Spmd fns on workers] (interp/devices/lower/worker_mesh.h): the
// controller cuts the whole arguments by the fn's specs, one message per
// worker with its own blocks (a model, whose truth is on the workers, goes
// as its handle, and each worker cuts it), and joins the blocks that come back
// by the return type, as the simulated mode does with the same code (blocks.h);
// the instances' prints come back with them and are printed here, merged
// as the simulated mode merges them (Note [Prints of instances]).
eval::Value Controller::call_spmd(const check::FnInfo& fn,
                                  const std::vector<eval::Value>& args,
                                  diag::Span site) {
  in_->settle();
  const eval::spmd::MeshShape mesh(in_->program().mesh());
  const int world = pool_.get().world();
  // A batch the workers would load is loaded here, to be cut (as a batch
  // the controller reads is: objects.h).
  for (const eval::Value& a : args)
    if (a.kind == eval::Value::Kind::Record)
      eval::load_unloaded_batch(*in_, *a.as<eval::RecordValue>());
  std::vector<dist::Message> ms;
  for (int rank = 0; rank < world; ++rank) {
    Writer w;
    w.str(fn.name);
    write_span(w, site);
    w.u32(static_cast<uint32_t>(fn.params.size()));
    for (size_t i = 0; i < fn.params.size(); ++i) {
      // A model lives on the workers (the controller holds its handle):
      // each worker cuts its own block of it.
      const bool model =
          i < args.size() && args[i].kind == eval::Value::Kind::Model;
      eval::Value block;
      if (model)
        block = args[i];
      else if (i < args.size())
        block = eval::spmd::param_block(mesh, rank, args[i], fn.params[i]);
      w.u8(model);
      try {
        codec_.write(w, block);
      } catch (const devices::protocol::WireError& e) {
        in_->fail("ValueError", site, e.what());
      }
    }
    ms.push_back(dist::Message{kSpmdCall, 0, std::move(w.buf)});
  }
  ++calls_;
  InFlight c;
  c.what = "running `" + fn.name + "` (" + where(*sm_, site) + ")";
  c.loop = site;
  c.call = {fn.name, site, in_->stack()};
  last_call_ = c.call;
  std::vector<dist::Message> replies;
  try {
    replies = pool_.get().call_each(ms, c.what);
  } catch (const dist::CallTimeout&) {
    throw;
  } catch (const dist::WorkerError& e) {
    // The WorkerError as any call's (Note [A stopped worker at its call]),
    // naming the instance the worker ran.
    try {
      worker_stopped(e, c.call);
    } catch (eval::RuntimeError& err) {
      if (e.rank >= 0)
        err.notes().push_back(
            "the worker ran " +
            eval::spmd::instance_note(mesh, e.rank).substr(3));
      throw;
    }
  }
  // Each reply: its status, the instance's prints, then the result or the
  // error. What the instances printed comes first, an error's too, as in
  // the simulated mode (Note [Prints of instances]).
  std::vector<std::vector<std::string>> prints;
  bool all_ok = true;
  for (dist::Message& m : replies) {
    prints.emplace_back();
    if (m.payload.empty()) {
      all_ok = false;
      continue;
    }
    Reader r(m.payload);
    const uint8_t status = r.u8();
    for (uint32_t n = r.u32(), i = 0; i < n; ++i)
      prints.back().push_back(r.str());
    m.payload =
        std::string(1, static_cast<char>(status)) + m.payload.substr(r.at());
    all_ok = all_ok && status == kOk;
  }
  in_->out() << eval::spmd::merged_prints(mesh, prints) << std::flush;
  if (!all_ok) raise_failed(replies, c);
  std::vector<eval::Value> results;
  for (const dist::Message& m : replies) {
    Reader r(m.payload);
    r.u8();
    results.push_back(codec_.read(r));
  }
  return eval::spmd::join(mesh, results, fn.result);
}

std::string Controller::stats(const dist::WorkerPool& pool) const {
  return "control: " + std::to_string(calls_) + " calls, " +
         std::to_string(pool.messages_sent()) + " messages to " +
         std::to_string(pool.world()) + " workers, " +
         std::to_string(fetches_) + " fetches, " + std::to_string(ahead_) +
         " calls sent ahead\n";
}

// A reply's tensors are read out of it in place (the kOk byte skipped, not
// cut off: a copy of the model's size).
void Controller::fetch(eval::ModelStore& s) {
  dist::Message m =
      reply('m', s.remote_id, {}, "copying a model from the workers");
  Reader r(m.payload);
  r.u8();
  Codec::read_tensors(r, s);
  s.newer_on = nullptr;
}

void Controller::fetch(eval::OptimState& o) {
  dist::Message m = reply(
      'o', o.remote_id, {}, "copying an optimizer's state from the workers");
  Reader r(m.payload);
  r.u8();
  Codec::read_optim_state(r, o);
  o.newer_on = nullptr;
}

// Rank 0's reply (kOk first) to a fetch of store [id] ('m' a model, 'o' an
// optimizer; [extra] after the id), after the calls sent ahead of it.
dist::Message Controller::reply(char what_store,
                                uint64_t id,
                                const std::string& extra,
                                const std::string& what) {
  if (in_) in_->settle();
  Writer w;
  w.u8(static_cast<uint8_t>(what_store));
  w.u64(id);
  w.buf += extra;
  ++fetches_;
  // With `shard params` each worker holds pieces: all of them gather the
  // store whole, and rank 0 answers (Note [Sharded params]).
  dist::Message msg{kFetch, 0, std::move(w.buf)};
  dist::Message m;
  try {
    m = shard_params_ ? pool_.get().call_all(msg, what).at(0)
                      : pool_.get().call(0, msg, what);
  } catch (const dist::CallTimeout&) {
    throw;
  } catch (const dist::WorkerError& e) {
    // A worker that died between calls (a streaming save fetches from
    // them after the last call): reported at that call, as settle() does.
    if (last_call_.fn.empty()) throw;
    worker_stopped(e, last_call_, /*after=*/true);
  }
  if (m.payload.empty() || m.payload[0] != kOk)
    throw std::runtime_error(what + " failed");
  return m;
}

// Note [A streaming save]'s fetches: 'p' one field of a model, 'q' one
// state of an optimizer's param (a flag, then the tensor), 'l' an
// optimizer without its tensors. The tensor is read out of the reply,
// which goes at once: a field costs its bytes twice for a moment, never
// the model's.
ops::Tensor Controller::fetch_tensor(const eval::ModelStore& s,
                                     const std::string& path) {
  Writer x;
  x.str(path);
  dist::Message m =
      reply('p', s.remote_id, x.buf, "copying a param from the workers");
  Reader r(m.payload);
  r.u8();
  return r.tensor();
}

ops::Tensor Controller::fetch_tensor(const eval::OptimState& o,
                                     const std::string& path,
                                     const std::string& state) {
  Writer x;
  x.str(path);
  x.str(state);
  dist::Message m = reply(
      'q', o.remote_id, x.buf, "copying an optimizer's state from the workers");
  Reader r(m.payload);
  r.u8();
  return r.u8() ? r.tensor() : ops::Tensor();
}

void Controller::fetch_layout(const eval::OptimState& o,
                              eval::OptimState& out) {
  dist::Message m = reply(
      'l', o.remote_id, {}, "copying an optimizer's step from the workers");
  Reader r(m.payload);
  r.u8();
  out.hyper_newer = o.hyper_newer;
  if (o.hyper_newer) {  // the controller's own (Note [Optimizer
                        // hyperparameters])
    static_cast<eval::OptimSettings&>(out) = o;
  }
  Codec::read_optim_state(r, out, /*tensors=*/false);
}

// Note [A stopped worker at its call]: devices.md item 12 asks a
// WorkerError to name the fn and the `.ss` location the worker was
// running, and errors.md gives errors one form; the pool knows the worker
// and how it stopped, the controller knows the call. So the error is a
// RuntimeError of kind WorkerError at the call's site, with the stack it
// left from and the fn on top (`ss` still exits 3), and the worker's last
// output as a note. A worker that stopped between calls is reported at the
// last call the workers ran ("after running `f`").
void Controller::worker_stopped(const dist::WorkerError& e,
                                const CallSite& c,
                                bool after) {
  in_flight_.clear();
  eval::RuntimeError err("WorkerError",
                         std::string(e.what()) +
                             (after ? " (after running `" : " (running `") +
                             c.fn + "`)",
                         c.site);
  err.stack() = c.stack;
  err.stack().push_back({c.fn, c.site});
  err.worker() = eval::RuntimeError::Worker{e.rank, e.how, c.fn, c.site};
  if (!e.stderr_tail.empty())
    err.notes().push_back("the worker's last output:\n" + e.stderr_tail);
  throw err;
}

// The worker's runtime error, raised here with the controller's stack (as
// it was when the call left) before the worker's.
void Controller::raise(Reader& r,
                       int rank,
                       const std::vector<eval::StackEntry>& stack) {
  std::string kind = r.str();
  std::string message = r.str();
  diag::Span span = read_span(r);
  eval::RuntimeError e(kind, message, span);
  e.stack() = stack;
  for (uint32_t n = r.u32(), i = 0; i < n; ++i) {
    eval::StackEntry s;
    s.fn = r.str();
    s.site = read_span(r);
    e.stack().push_back(s);
  }
  for (uint32_t n = r.u32(), i = 0; i < n; ++i) e.notes().push_back(r.str());
  e.notes().push_back("raised on worker " + std::to_string(rank) + " of " +
                      std::to_string(pool_.get().world()));
  throw e;
}

}  // namespace ss::devices::controller
