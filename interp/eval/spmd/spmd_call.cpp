// An spmd fn called from ordinary code, simulated (spmd.md, Mesh: `devices
// cpu`): its whole arguments are cut into blocks, every instance runs the
// body on its own thread with its own Interpreter (so per-instance control
// flow, host loops and autodiff tapes work unchanged) and meets the others
// at each collective (sim_mesh.h), and the instances' results are joined.
// Nested spmd calls inside an instance are inlined (Interpreter::call).
#include "interp/eval/interpreter.h"
#include "interp/eval/spmd/blocks.h"
#include "interp/eval/spmd/instance.h"
#include "interp/eval/spmd/instance_threads.h"
#include "interp/eval/spmd/remat_instances.h"
#include "interp/eval/spmd/sim_mesh.h"
#include "ops/autodiff/tape.h"

namespace ss::eval {

namespace {

// One instance's run on its thread.
struct Instance {
  spmd::SimMesh* mesh = nullptr;
  spmd::RematShared* remat = nullptr;
  int64_t n = 0;
  spmd::InstanceRun run;
  std::string abandoned;  // waited at a collective another left
};

void run_instance(Instance& in) {
  spmd::RematComm comm(*in.mesh, in.n, *in.remat);
  try {
    spmd::run_instance(in.run, comm);
  } catch (const spmd::Abandoned& a) {
    in.abandoned = a.why;
  }
  in.mesh->finished(in.n, !in.abandoned.empty() || in.run.error);
}

}  // namespace

Value Interpreter::call_spmd(const check::FnInfo& fn,
                             std::vector<Value> args,
                             diag::Span site) {
  if (prog_.devices().count() > 1) {
    // cpu[N]: an instance on each worker (Note [Spmd fns on workers]).
    if (hooks_)
      if (std::optional<Value> r = hooks_->call(*this, fn, args, site))
        return *r;
    fail("ValueError",
         site,
         "`" + fn.name +
             "` is an spmd fn: here it runs simulated, on `devices cpu`, "
             "or with an instance on each worker of `ss run`",
         {"help: run it with --devices cpu"});
  }
  spmd::SimMesh mesh(prog_.mesh());
  const int64_t count = mesh.instances();
  spmd::RematShared remat;  // Note [Remat in instances]
  remat.prog = &prog_;
  remat.sm = &sm_;
  remat.out = &out_;
  remat.stack = stack_;
  remat.calls.resize(size_t(count));
  std::vector<std::unique_ptr<Instance>> runs;
  for (int64_t n = 0; n < count; ++n) {
    auto in = std::make_unique<Instance>();
    in->mesh = &mesh;
    in->remat = &remat;
    in->n = n;
    in->run.prog = &prog_;
    in->run.sm = &sm_;
    in->run.fn = &fn;
    in->run.site = site;
    in->run.stack = stack_;
    in->run.grad = ops::GradMode::enabled();
    in->run.interrupt = interrupt_;
    for (size_t i = 0; i < fn.params.size(); ++i)
      in->run.args.push_back(
          i < args.size() ? spmd::param_block(mesh, n, args[i], fn.params[i])
                          : Value());
    remat.outs.push_back(&in->run.out);
    runs.push_back(std::move(in));
  }
  spmd::run_instance_threads(
      mesh,
      [&](int64_t n) { run_instance(*runs[n]); },
      [&](int64_t n) {
        runs[n]->abandoned = "could not start a thread for this instance";
      });

  // Note [Prints of instances]: merged by ordinal, in instance order.
  std::vector<std::vector<std::string>> entries;
  for (auto& r : runs) entries.push_back(r->run.out.entries());
  out_ << spmd::merged_prints(mesh, entries) << std::flush;

  // The first instance's own error is the call's; one that only waited at
  // a collective another instance left reports the other's.
  for (int64_t n = 0; n < count; ++n)
    if (runs[n]->run.error) {
      RuntimeError e = *runs[n]->run.error;
      e.notes().push_back(spmd::instance_note(mesh, n));
      throw e;
    }
  for (int64_t n = 0; n < count; ++n)
    if (!runs[n]->abandoned.empty())
      fail("ValueError",
           site,
           "instance " + mesh.label(n) + " of `" + fn.name +
               "` stopped: " + runs[n]->abandoned);
  std::vector<Value> results;
  for (auto& r : runs) results.push_back(std::move(r->run.result));
  return spmd::join(mesh, results, fn.result);
}

}  // namespace ss::eval
