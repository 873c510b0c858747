// Fuzz target: a .csv file through `dataset(R, "in.csv")` (parse_csv, then
// the store's conversions and domain checks) for records of f32 columns
// (x_0..x_3, y) and of CSV's other dtypes (f16, bool, i32, f64).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ss;
  std::string path = fuzz::write_scratch("in.csv", data, size);
  fuzz::load_dataset_as("dataset(.csv)", {"Vec", "Mixed"}, path, false);
  return 0;
}
