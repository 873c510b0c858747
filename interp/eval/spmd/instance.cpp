// One instance's run, and its prints merged (instance.h).
#include "interp/eval/spmd/instance.h"

#include <algorithm>
#include <ostream>

#include "ops/autodiff/tape.h"

namespace ss::eval::spmd {

void run_instance(InstanceRun& r, ops::MeshComm& comm) {
  ops::GradMode::Guard grad(r.grad);
  std::ostream os(&r.out);
  Interpreter it(*r.prog, *r.sm, os);
  it.set_mesh(&comm);
  it.set_interrupt_flag(r.interrupt);
  it.exchange_stack(r.stack);
  struct Flush {
    std::ostream& os;
    ~Flush() { os.flush(); }
  } flush{os};
  try {
    r.result = it.call(*r.fn, std::move(r.args), r.site);
  } catch (const RuntimeError& e) {
    r.error = std::make_unique<RuntimeError>(e);
  }
}

std::string merged_prints(
    const MeshShape& mesh,
    const std::vector<std::vector<std::string>>& entries) {
  size_t most = 0;
  for (const auto& e : entries) most = std::max(most, e.size());
  std::string out;
  for (size_t k = 0; k < most; ++k)
    for (size_t n = 0; n < entries.size(); ++n)
      if (k < entries[n].size())
        out += prefixed(entries[n][k],
                        "[" + mesh.label(static_cast<int64_t>(n)) + "] ");
  return out;
}

std::string instance_note(const MeshShape& mesh, int64_t n) {
  return "in the instance at " + mesh.label(n) + " of " +
         std::to_string(mesh.instances());
}

}  // namespace ss::eval::spmd
