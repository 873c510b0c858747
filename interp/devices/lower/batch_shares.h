#pragma once
// A worker's own rows of the controller's batches (devices.md 8). The
// controller sends each batch as a reference (data::LazyBatch, interp/devices/
// protocol/wire_data.cpp); the worker builds the walk's order from the seed,
// loads only its share of each batch (padded over the whole batch first, so the
// ranks' shares line up), and loads the next shares ahead on the walk's
// own threads. Before a step with a streamed dataset the workers agree, in
// one all-reduce, that each has its part: a bad item stops every worker
// before the step, and the controller raises it.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "interp/eval/value.h"

namespace ss::eval {
struct RecordValue;
}  // namespace ss::eval
namespace ss::data {
struct LazyBatch;
}  // namespace ss::data

namespace ss::devices::lower {

struct DeviceContext;

/// Why a call's batches could not be loaded: [here] when this rank found
/// the bad item ([kind] ShapeError/DomainError/IOError and [message] as one
/// device raises them), else another rank did.
struct ShareFailure {
  bool here = false;
  std::string kind, message;
  std::vector<std::string> notes;  // the DataError's help lines
};

class BatchShares {
 public:
  /// [deterministic]: shares of whole canonical chunks (Note
  /// [Deterministic mode] in chunks.h); [device]: where the shares go, on
  /// the loader threads (a GPU worker's: Note [Uploads off the step] in
  /// ops/cuda/cuda_memory.cu).
  BatchShares(int rank,
              int world,
              bool deterministic = false,
              ops::Device device = {});
  ~BatchShares();
  BatchShares(const BatchShares&) = delete;
  BatchShares& operator=(const BatchShares&) = delete;

  /// Replaces every lazy batch among [args] by this rank's rows of it. When
  /// one comes from a streamed dataset, the ranks then agree over [d]'s
  /// communicator (waiting as its other collectives do); the failure every
  /// rank reports, if any (no step may start).
  std::optional<ShareFailure> resolve(std::vector<eval::Value>& args,
                                      DeviceContext& d);

  /// This rank's rows of [b]'s batch (a DataError for a bad item).
  std::shared_ptr<eval::RecordValue> share(const data::LazyBatch& b);

 private:
  struct Walk;
  Walk& walk(const data::LazyBatch& b);

  int rank_, world_;
  bool deterministic_;
  ops::Device device_;
  uint64_t uses_ = 0;
  std::map<uint64_t, std::unique_ptr<Walk>> walks_;
};

}  // namespace ss::devices::lower
