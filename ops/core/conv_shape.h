#pragma once
// A 2-d convolution's geometry beyond its operands' shapes: torch's
// stride, padding and dilation per spatial axis (h, w), and groups. conv1d
// is a conv2d over a height of 1; conv_transpose2d is conv2d's input
// gradient (ops/defs/conv.cpp).

#include <cstdint>
#include <string>

namespace ss::ops {

struct ConvShape {
  int64_t stride[2] = {1, 1};
  int64_t padding[2] = {0, 0};
  int64_t dilation[2] = {1, 1};
  int64_t groups = 1;

  /// The same stride, padding and dilation on both axes.
  static ConvShape square(int64_t stride,
                          int64_t padding,
                          int64_t dilation = 1,
                          int64_t groups = 1) {
    return {{stride, stride}, {padding, padding}, {dilation, dilation}, groups};
  }
  /// Along spatial axis [a] (0: h, 1: w), the output size for an input of
  /// [n] and a kernel of [k]: (n + 2p - d(k - 1) - 1) / s + 1, as torch's
  /// Conv2d; below 1 when the dilated kernel outgrows the padded input.
  int64_t out(int a, int64_t n, int64_t k) const {
    const int64_t span = dilation[a] * (k - 1) + 1;
    if (n + 2 * padding[a] < span) return 0;
    return (n + 2 * padding[a] - span) / stride[a] + 1;
  }
  /// What is wrong with it ("" when nothing): strides and dilations >= 1,
  /// paddings >= 0, groups >= 1.
  std::string invalid() const {
    for (int a = 0; a < 2; ++a) {
      if (stride[a] < 1) return "stride must be >= 1";
      if (dilation[a] < 1) return "dilation must be >= 1";
      if (padding[a] < 0) return "padding must be >= 0";
    }
    if (groups < 1) return "groups must be >= 1";
    return "";
  }
};

}  // namespace ss::ops
