// Fuzz target: a .safetensors file through the checkpoint reader
// (read_safetensors: header and tensors, as `load` reads one) and the
// dataset readers: in memory and streamed (every item loaded, where a
// streamed item is checked), for a record of fixed shapes and one with a
// size variable.
#include <cstddef>
#include <cstdint>

#include "interp/data/safetensors.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ss;
  std::string path = fuzz::write_scratch("in.safetensors", data, size);
  fuzz::expect_user_errors("read_safetensors",
                           [&] { (void)data::read_safetensors(path); });
  fuzz::load_dataset_as("dataset(.safetensors)", {"Vec", "Seq"}, path, true);
  return 0;
}
