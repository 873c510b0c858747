// Fuzz target: an IDX file (MNIST's format) through parse_idx in memory,
// and through `mnist(R, dir)` (load_mnist) as the images file (beside two
// good labels) and as the labels file (beside two good 2x2 images). An
// input that starts with gzip's magic is written as the `.gz` copy, which
// load_mnist inflates no further than its IDX header declares (Note
// [Inflate no more than declared]); the corpus holds both kinds.
#include <cstddef>
#include <cstdint>

#include "interp/data/dataset.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// IDX u8 [2] labels 3, 7 and u8 [2 2 2] images: what fits record Img.
const std::string kLabels("\0\0\x08\x01\0\0\0\x02\x03\x07", 10);
const std::string kImages(
    "\0\0\x08\x03\0\0\0\x02\0\0\0\x02\0\0\0\x02"
    "\x00\x40\x80\xff\x10\x20\x30\x40",
    24);

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ss;
  fuzz::expect_user_errors("parse_idx", [&] {
    (void)data::parse_idx(fuzz::bytes_of(data, size), "in.idx");
  });
  // A folder per kind and role, so that no file of an earlier input is
  // read instead (load_mnist prefers the plain file to its .gz).
  bool gz = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  std::string ext = gz ? ".gz" : "";
  std::string img = gz ? "gz_images" : "images";
  std::string lab = gz ? "gz_labels" : "labels";
  fuzz::write_scratch(img + "/train-images-idx3-ubyte" + ext, data, size);
  fuzz::write_scratch(img + "/train-labels-idx1-ubyte", kLabels);
  fuzz::write_scratch(lab + "/train-images-idx3-ubyte", kImages);
  fuzz::write_scratch(lab + "/train-labels-idx1-ubyte" + ext, data, size);
  for (const char* r : {"Img", "Digit"})
    fuzz::expect_user_errors("mnist(images)", [&] {
      (void)data::load_mnist(
          fuzz::record(r), fuzz::record_dims(), fuzz::scratch_path(img));
    });
  fuzz::expect_user_errors("mnist(labels)", [&] {
    (void)data::load_mnist(
        fuzz::record("Img"), fuzz::record_dims(), fuzz::scratch_path(lab));
  });
  return 0;
}
