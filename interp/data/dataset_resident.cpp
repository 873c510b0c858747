// Note [Datasets kept on a GPU]
// A TensorDataset on `cuda[...]` is kept on every GPU (devices.md item 8):
// the first batch that goes to a GPU uploads each fixed-shape field whole
// to it, once per process and GPU, and every batch after is gathered there
// (the backend's take, on the device's compute stream, by the loader
// thread that builds it), so a step's batch crosses the bus as its row
// indices only, not as its values (PyTorch users move a TensorDataset's
// tensors to the GPU themselves to get the same). A field with a size
// variable is padded on the host and uploaded as it was; a streamed or a
// host language's dataset is read on the host as it loads. The copies are
// the store's, so a dataset's splits and takes share them.

#include <cstring>

#include "interp/data/dataset.h"
#include "ops/api.h"
#include "ops/autodiff/tape.h"

namespace ss::data {

ops::Tensor gather_on_device(const TensorStore& s,
                             const std::string& name,
                             const std::vector<int64_t>& rows,
                             ops::Device device) {
  ops::Tensor whole;
  {
    std::lock_guard<std::mutex> lock(s.resident->mu);
    ops::Tensor& on = s.resident->on[{name, device.index}];
    if (!on.defined()) on = s.fields.at(name).to(device);
    whole = on;
  }
  const int64_t b = static_cast<int64_t>(rows.size());
  ops::Tensor idx = ops::Tensor::empty({b}, types::DType::I64);
  if (b) std::memcpy(idx.raw(), rows.data(), sizeof(int64_t) * size_t(b));
  ops::GradMode::Guard off(false);
  return ops::take(whole, idx.to(device), 0);
}

}  // namespace ss::data
