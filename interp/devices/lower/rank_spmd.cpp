// An spmd fn called from a worker fn, on each rank in place (Note [Spmd fns
// on workers] in worker_mesh.h): every rank holds the whole arguments, takes
// its instance's blocks, runs its instance, and joins every instance's
// result blocks, gathered over the world.
#include "interp/devices/lower/rank_context.h"
#include "interp/devices/lower/worker_mesh.h"
#include "interp/eval/grad_inputs.h"
#include "interp/eval/spmd/blocks.h"
#include "interp/eval/spmd/instance.h"
#include "ops/api.h"

namespace ss::devices::lower {

// The evaluator's values and objects, which the ranks' code works on.
using namespace ss::eval;

using eval::Value;
using VK = Value::Kind;

namespace {

// Every instance's result, from this rank's [mine]: each tensor's blocks
// gathered (gathered_blocks), other values as they are here.
std::vector<Value> every_instance(const Value& mine, WorkerMesh& m) {
  const auto n = static_cast<size_t>(m.shape().instances());
  if (mine.kind == VK::Tensor) {
    ops::Tensor all = gathered_blocks(mine.t, m);
    std::vector<Value> out;
    for (size_t j = 0; j < n; ++j)
      out.push_back(
          Value::tensor(ops::take_one(all, static_cast<int64_t>(j), 0)));
    return out;
  }
  if (mine.kind == VK::Tuple || mine.kind == VK::List) {
    std::vector<std::vector<Value>> items(n);
    for (const Value& item : *mine.items) {
      std::vector<Value> each = every_instance(item, m);
      for (size_t j = 0; j < n; ++j) items[j].push_back(each[j]);
    }
    std::vector<Value> out;
    for (auto& it : items)
      out.push_back(mine.kind == VK::Tuple ? Value::tuple(std::move(it))
                                           : Value::list(std::move(it)));
    return out;
  }
  return std::vector<Value>(n, mine);
}

// [args] with every tensor that needs a gradient (a model's too, and
// inside tuples and lists) passed through sum_on_backward.
std::vector<Value> summed_on_backward(const std::vector<Value>& args,
                                      WorkerMesh& m) {
  std::vector<Value> out;
  for (const Value& v : args) {
    if (v.kind == VK::Tuple || v.kind == VK::List) {
      std::vector<Value> items = summed_on_backward(*v.items, m);
      out.push_back(v.kind == VK::Tuple ? Value::tuple(std::move(items))
                                        : Value::list(std::move(items)));
      continue;
    }
    std::vector<ops::Tensor> found;
    out.push_back(eval::swap_grad_inputs({v}, found, [&](const ops::Tensor& t) {
      return sum_on_backward(t, m);
    })[0]);
  }
  return out;
}

}  // namespace

std::optional<Value> RankContext::call_spmd(eval::Interpreter& in,
                                            const check::FnInfo& fn,
                                            std::vector<Value>& args,
                                            diag::Span site) {
  if (!d_.mesh) return std::nullopt;
  WorkerMesh& mesh = *d_.mesh;
  const int64_t me = mesh.me();
  d_.at = site;
  // Each rank's cotangent of a whole argument is its instance's part: the
  // parts are summed over the ranks in the backward pass.
  std::vector<Value> whole = summed_on_backward(args, mesh);
  eval::spmd::InstanceRun r;
  r.prog = &in.program();
  r.sm = &in.sources();
  r.fn = &fn;
  r.site = site;
  r.stack = in.stack();
  r.grad = ops::GradMode::enabled();
  for (size_t i = 0; i < fn.params.size(); ++i)
    r.args.push_back(
        i < whole.size()
            ? eval::spmd::param_block(mesh.shape(), me, whole[i], fn.params[i])
            : Value());
  mesh.run(r);
  if (r.error) {
    eval::RuntimeError e = *r.error;
    e.notes().push_back(eval::spmd::instance_note(mesh.shape(), me));
    throw e;
  }
  d_.at = site;  // the join's all-gathers
  return eval::spmd::join(
      mesh.shape(), every_instance(r.result, mesh), fn.result);
}

}  // namespace ss::devices::lower
