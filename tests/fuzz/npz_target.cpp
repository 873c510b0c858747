// Fuzz target: a .npz file through parse_npz in memory and `dataset(R,
// "in.npz")` for a record of fixed shapes (x, y) and one with a size
// variable (tokens, tokens_lengths, y). An npz is read whole even with
// stream=true (dataset.h), so there is no streamed path to add.
#include <cstddef>
#include <cstdint>

#include "interp/data/dataset.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ss;
  fuzz::expect_user_errors("parse_npz", [&] {
    (void)data::parse_npz(fuzz::bytes_of(data, size), "in.npz");
  });
  std::string path = fuzz::write_scratch("in.npz", data, size);
  fuzz::load_dataset_as("dataset(.npz)", {"Vec", "Seq"}, path, false);
  return 0;
}
