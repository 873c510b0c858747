// Fuzz target: a .npz file through `dataset(R, "in.npz")` for a record of
// fixed shapes (x, y) and one with a size variable (tokens, tokens_lengths,
// y), in memory and streamed (Note [Reading an npz in place]).
#include <cstddef>
#include <cstdint>

#include "interp/data/dataset.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ss;
  std::string path = fuzz::write_scratch("in.npz", data, size);
  fuzz::load_dataset_as("dataset(.npz)", {"Vec", "Seq"}, path, true);
  return 0;
}
