#pragma once
// A GPU rank's collectives over a host transport (Gloo), each tensor copied
// to the host and its result back, as torch's Gloo process group takes CUDA
// tensors (Note [Collectives through the host]).

#include <functional>
#include <memory>

#include "dist/comm/communicator.h"

namespace ss::dist {

class HostStagedComm final : public Communicator {
 public:
  /// [host]: a communicator of CPU tensors; [device]: where this one's
  /// tensors live.
  HostStagedComm(std::unique_ptr<Communicator> host, ops::Device device);

  int rank() const override { return host_->rank(); }
  int size() const override { return host_->size(); }
  ops::Device device() const override { return device_; }

  void all_reduce(Tensor& t, ReduceOp op, const Options& o) override;
  void all_gather(const Tensor& in, Tensor& out, const Options& o) override;
  void all_gather_v(const Tensor& in,
                    Tensor& out,
                    const std::vector<int64_t>& rows,
                    const Options& o) override;
  void reduce_scatter(const Tensor& in,
                      Tensor& out,
                      ReduceOp op,
                      const Options& o) override;
  void broadcast(Tensor& t, int root, const Options& o) override;
  void send(const Tensor& t, int dst, const Options& o) override;
  void recv(Tensor& t, int src, const Options& o) override;
  void send_recv(const Tensor& out,
                 int dst,
                 Tensor& in,
                 int src,
                 const Options& o) override;
  void barrier(const Options& o) override;
  void close() override;

 protected:
  void check_usable(CollectiveOp op) override;

 private:
  using HostFn = std::function<void(std::vector<Tensor>& reads,
                                    std::vector<Tensor>& writes)>;
  /// [fn] on host copies of [reads], its results copied into [writes]:
  /// now, or at each replay of the step this thread records (the Note).
  void through_host(std::vector<Tensor> reads,
                    std::vector<Tensor> writes,
                    HostFn fn);

  std::unique_ptr<Communicator> host_;
  ops::Device device_;
  bool closed_ = false;
};

}  // namespace ss::dist
