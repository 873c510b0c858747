// An spmd fn called from ordinary code, simulated (spmd.md, Mesh: `devices
// cpu`): its whole arguments are cut into blocks, every instance runs the
// body on its own thread with its own Interpreter (so per-instance control
// flow, host loops and autodiff tapes work unchanged) and meets the others
// at each collective (sim_mesh.h), and the instances' results are joined.
// Nested spmd calls inside an instance are inlined (Interpreter::call).
#include <ostream>
#include <sstream>

#include "interp/eval/interpreter.h"
#include "interp/eval/spmd/blocks.h"
#include "interp/eval/spmd/instance_output.h"
#include "interp/eval/spmd/instance_threads.h"
#include "interp/eval/spmd/remat_instances.h"
#include "interp/eval/spmd/sim_mesh.h"
#include "ops/autodiff/tape.h"

namespace ss::eval {

namespace {

// One instance's run.
struct Instance {
  spmd::SimMesh* mesh = nullptr;
  spmd::RematShared* remat = nullptr;
  int64_t n = 0;
  const check::Program* prog = nullptr;
  const diag::SourceMap* sm = nullptr;
  const check::FnInfo* fn = nullptr;
  std::vector<Value> args;
  diag::Span site;
  std::vector<StackEntry> stack;  // the caller's
  bool grad = true;               // the caller's GradMode
  volatile int* interrupt = nullptr;

  spmd::EntryBuffer out;
  Value result;
  std::unique_ptr<RuntimeError> error;
  std::string abandoned;  // waited at a collective another left
};

void run_instance(Instance& in) {
  ops::GradMode::Guard grad(in.grad);
  std::ostream os(&in.out);
  spmd::RematComm comm(*in.mesh, in.n, *in.remat);
  Interpreter it(*in.prog, *in.sm, os);
  it.set_mesh(&comm);
  it.set_interrupt_flag(in.interrupt);
  it.exchange_stack(in.stack);
  bool failed = true;
  try {
    in.result = it.call(*in.fn, std::move(in.args), in.site);
    failed = false;
  } catch (const RuntimeError& e) {
    in.error = std::make_unique<RuntimeError>(e);
  } catch (const spmd::Abandoned& a) {
    in.abandoned = a.why;
  }
  os.flush();
  in.mesh->finished(in.n, failed);
}

}  // namespace

Value Interpreter::call_spmd(const check::FnInfo& fn,
                             std::vector<Value> args,
                             diag::Span site) {
  if (prog_.devices().count() > 1)
    fail("ValueError",
         site,
         "`" + fn.name +
             "` is an spmd fn: this build runs spmd fns simulated, on "
             "`devices cpu`, and not yet on several devices (the "
             "distributed mode, one instance per worker, is not in this "
             "build)",
         {"help: run it with --devices cpu"});
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
    in->prog = &prog_;
    in->sm = &sm_;
    in->fn = &fn;
    in->site = site;
    in->stack = stack_;
    in->grad = ops::GradMode::enabled();
    in->interrupt = interrupt_;
    for (size_t i = 0; i < fn.params.size(); ++i) {
      const ast::TypeExpr* te = fn.params[i].decl && fn.params[i].decl->type
                                    ? &*fn.params[i].decl->type
                                    : nullptr;
      in->args.push_back(
          i < args.size()
              ? spmd::block_of(mesh, n, args[i], fn.params[i].type, te)
              : Value());
    }
    runs.push_back(std::move(in));
  }
  spmd::run_instance_threads(
      mesh,
      [&](int64_t n) { run_instance(*runs[n]); },
      [&](int64_t n) {
        runs[n]->abandoned = "could not start a thread for this instance";
      });

  // Note [Prints of instances]: merged by ordinal, in instance order.
  std::vector<std::vector<std::string>*> entries;
  for (auto& r : runs) entries.push_back(&r->out.entries());
  spmd::merge_prints(out_, mesh, entries);

  // The first instance's own error is the call's; one that only waited at
  // a collective another instance left reports the other's.
  for (int64_t n = 0; n < count; ++n)
    if (runs[n]->error) {
      RuntimeError e = *runs[n]->error;
      e.notes().push_back("in the instance at " + mesh.label(n) + " of " +
                          std::to_string(count));
      throw e;
    }
  for (int64_t n = 0; n < count; ++n)
    if (!runs[n]->abandoned.empty())
      fail("ValueError",
           site,
           "instance " + mesh.label(n) + " of `" + fn.name +
               "` stopped: " + runs[n]->abandoned);
  std::vector<Value> results;
  for (auto& r : runs) results.push_back(std::move(r->result));
  return spmd::join(mesh, results, fn.result);
}

}  // namespace ss::eval
