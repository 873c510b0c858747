// Fuzz target: a .npy file through parse_npy in memory, and as the one
// file of a dataset folder (`dataset(Col, dir)`, x.npy; `dataset(Toks,
// dir)`, tokens.npy) in memory and streamed: stream_dataset reads the
// header only, maps the file and checks items as they load.
#include <cstddef>
#include <cstdint>

#include "interp/data/dataset.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ss;
  fuzz::expect_user_errors("parse_npy", [&] {
    (void)data::parse_npy(fuzz::bytes_of(data, size), 0, size, "in.npy");
  });
  fuzz::write_scratch("cols/x.npy", data, size);
  fuzz::load_dataset_as(
      "dataset(x.npy)", {"Col"}, fuzz::scratch_path("cols"), true);
  fuzz::write_scratch("toks/tokens.npy", data, size);
  fuzz::load_dataset_as(
      "dataset(tokens.npy)", {"Toks"}, fuzz::scratch_path("toks"), true);
  return 0;
}
