#pragma once
// Thread ranks in one process: N InprocComm objects share an InprocHub
// (a mutex and a condition variable). Same semantics, payload log and
// timeouts as GlooComm, for fast tests and the reference mode. A rank's
// collectives with different tags may run from different threads at once
// (as Gloo's); with one tag, from one thread at a time.
//
//   auto hub = std::make_shared<InprocHub>(3);
//   // in thread r: InprocComm c(hub, r); c.all_reduce(t, ReduceOp::Sum, {});

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "dist/comm/communicator.h"

namespace ss::dist {

class InprocHub {
 public:
  explicit InprocHub(int size);
  int size() const { return size_; }

 private:
  friend class InprocComm;
  struct Part {
    bool posted = false;
    int64_t count = 0;
    types::DType dtype = types::DType::F32;
    int64_t aux = 0;  // root, reduce op, ...
    std::vector<unsigned char> bytes;
  };
  struct Round {
    CollectiveOp op;
    std::vector<Part> parts;
    int posted = 0;
    int fetched = 0;
  };
  int size_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::pair<uint64_t, uint64_t>, std::shared_ptr<Round>> rounds_;
  std::vector<bool> gone_;
  // (src, dst, tag) -> queued messages
  std::map<std::tuple<int, int, uint64_t>,
           std::deque<std::vector<unsigned char>>>
      mail_;
};

class InprocComm final : public Communicator {
 public:
  InprocComm(std::shared_ptr<InprocHub> hub, int rank);
  ~InprocComm() override;
  InprocComm(const InprocComm&) = delete;
  InprocComm& operator=(const InprocComm&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return hub_->size(); }

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

 private:
  /// Post this rank's part of a round and wait for every rank's; returns
  /// the round (read-only once complete).
  std::shared_ptr<InprocHub::Round> exchange(CollectiveOp op,
                                             const Options& o,
                                             InprocHub::Part mine);
  void check_usable(CollectiveOp op) override;
  [[noreturn]] void fail_and_close(CollectiveError::Kind k,
                                   CollectiveOp op,
                                   int peer,
                                   const std::string& what);
  void do_send(const Tensor& t, int dst, const Options& o);
  void do_recv(Tensor& t,
               int src,
               const Options& o,
               std::chrono::steady_clock::time_point deadline);

  std::shared_ptr<InprocHub> hub_;
  int rank_;
  bool broken_ = false;
  std::string broken_why_;
  std::map<uint64_t, uint64_t> seq_;  // tag -> next round
};

}  // namespace ss::dist
