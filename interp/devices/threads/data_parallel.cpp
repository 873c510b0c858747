#include "interp/devices/threads/data_parallel.h"

#include <ostream>
#include <thread>

#include "dist/comm/gloo_comm.h"
#include "dist/comm/inproc_comm.h"
#include "dist/rendezvous/job_dir.h"
#include "interp/devices/lower/lowering.h"
#include "interp/devices/lower/rank_context.h"
#include "interp/devices/null_buf.h"
#include "interp/eval/interpreter.h"
#include "ops/cpu/cpu_backend.h"

namespace ss::devices::threads {

std::optional<eval::RuntimeError> run_data_parallel(
    const check::Program& prog,
    const diag::SourceMap& sm,
    std::ostream& out,
    const ParallelOptions& opts) {
  int world = opts.world;
  auto hub = std::make_shared<dist::InprocHub>(world);
  dist::JobDir dir = dist::make_job_dir("ss_dp");
  std::vector<std::optional<eval::RuntimeError>> errors(world);
  std::vector<std::string> crashes(world);
  std::vector<std::thread> threads;
  if (opts.final_params) opts.final_params->assign(world, {});
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      NullBuf nb;  // ranks other than 0: host effects happen once
      std::ostream null(&nb);
      std::unique_ptr<dist::Communicator> comm;
      try {
        if (opts.gloo)
          comm = std::make_unique<dist::GlooComm>(r, world, dir.path());
        else
          comm = std::make_unique<dist::InprocComm>(hub, r);
        lower::DeviceContext d;
        d.rank = r;
        d.world = world;
        d.comm = comm.get();
        d.deterministic = prog.devices().deterministic;
        if (d.deterministic) ops::pin_blas_to_one_thread();
        d.kernels = ops::kernel_signature();
        // `split H`: whole batches; every rank makes its models whole in
        // main, and cuts a param to its heads where it is read (Note
        // [Split heads]).
        if (const std::string& h = prog.devices().split_dim;
            !h.empty() && world > 1) {
          d.split_dim = h;
          d.split_size = prog.dims().at(h);
        }
        if (opts.grad_bucket_bytes)
          d.grad_bucket_bytes = opts.grad_bucket_bytes;
        lower::RankContext context(d);
        if (opts.final_params) context.keep_final_params();
        eval::Interpreter in(prog, sm, r == 0 ? out : null);
        in.set_device_hooks(&context);
        in.run_main({});
        if (opts.final_params) (*opts.final_params)[r] = context.final_params();
      } catch (const eval::RuntimeError& e) {
        errors[r] = e;
        if (comm) comm->close();  // the others stop at their next collective
      } catch (const std::exception& e) {
        crashes[r] = e.what();
        if (comm) comm->close();
      }
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < world; ++r)
    if (errors[r]) return errors[r];
  for (int r = 0; r < world; ++r)
    if (!crashes[r].empty())
      return eval::RuntimeError(
          "WorkerError",
          "rank " + std::to_string(r) + " failed: " + crashes[r],
          {});
  return std::nullopt;
}

}  // namespace ss::devices::threads
