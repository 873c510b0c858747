// synthetic_digits(R, n, seed=): the README's default data, made in memory
// (library.md, Data). Item i draws everything from Philox keyed by
// (seed, "synthetic_digits") with counters (i, j), so an item does not
// depend on n, on the order items are made, or on the thread count:
//   counter (i, 0): w0 -> label (w0 * 10 >> 32), w1 -> dx, w2 -> dy
//                   (each in -3..3), w3 -> thickening (0 or 1 pixel);
//   counter (i, 1 + b), b < 196: one word per pixel 4b .. 4b+3, made
//                   N(0, 1) by the inverse normal CDF (a 4096-entry table,
//                   interpolated; |z| <= 3.5, which the clipping hides).
// The image: the label's 5x7 glyph scaled (nearest) to a 20x20 box centred
// in a 28x28 canvas, dilated by 1 pixel when thickened, shifted by
// (dx, dy), plus 0.15 * noise, clipped to [0, 1].
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <thread>

#include "interp/data/dataset.h"
#include "ops/core/philox.h"

namespace ss::data {

namespace {

constexpr int kSide = 28, kBox = 20, kOrigin = 4, kPixels = kSide * kSide;

// Rows top to bottom; bit 4 is the leftmost column.
constexpr uint8_t kGlyphs[10][7] = {
    {0b01110, 0b10001, 0b10011, 0b10101, 0b11001, 0b10001, 0b01110},  // 0
    {0b00100, 0b01100, 0b00100, 0b00100, 0b00100, 0b00100, 0b01110},  // 1
    {0b01110, 0b10001, 0b00001, 0b00010, 0b00100, 0b01000, 0b11111},  // 2
    {0b11111, 0b00010, 0b00100, 0b00010, 0b00001, 0b10001, 0b01110},  // 3
    {0b00010, 0b00110, 0b01010, 0b10010, 0b11111, 0b00010, 0b00010},  // 4
    {0b11111, 0b10000, 0b11110, 0b00001, 0b00001, 0b10001, 0b01110},  // 5
    {0b00110, 0b01000, 0b10000, 0b11110, 0b10001, 0b10001, 0b01110},  // 6
    {0b11111, 0b00001, 0b00010, 0b00100, 0b01000, 0b01000, 0b01000},  // 7
    {0b01110, 0b10001, 0b10001, 0b01110, 0b10001, 0b10001, 0b01110},  // 8
    {0b01110, 0b10001, 0b10001, 0b01111, 0b00001, 0b00010, 0b01100},  // 9
};

using Canvas = std::array<float, kPixels>;

// [digit][thick]: the glyph in the centred box, before the shift.
struct Templates {
  Canvas t[10][2];
  Templates() {
    for (int d = 0; d < 10; ++d) {
      Canvas& c = t[d][0];
      c.fill(0);
      for (int y = 0; y < kBox; ++y)
        for (int x = 0; x < kBox; ++x) {
          int gy = y * 7 / kBox, gx = x * 5 / kBox;
          if (kGlyphs[d][gy] >> (4 - gx) & 1)
            c[(kOrigin + y) * kSide + kOrigin + x] = 1;
        }
      Canvas& th = t[d][1];
      th = c;
      for (int y = 0; y < kSide; ++y)
        for (int x = 0; x < kSide; ++x) {
          if (c[y * kSide + x] == 0) continue;
          if (y > 0) th[(y - 1) * kSide + x] = 1;
          if (y + 1 < kSide) th[(y + 1) * kSide + x] = 1;
          if (x > 0) th[y * kSide + x - 1] = 1;
          if (x + 1 < kSide) th[y * kSide + x + 1] = 1;
        }
    }
  }
};

const Templates& templates() {
  static const Templates t;
  return t;
}

// The inverse normal CDF at (k + 0.5) / kQ, k < kQ, for one word's draw.
constexpr int kQBits = 12, kQ = 1 << kQBits;
struct Quantiles {
  float z[kQ + 1];
  Quantiles() {
    for (int k = 0; k < kQ; ++k) {
      double u = (k + 0.5) / kQ, lo = -8, hi = 8;
      for (int it = 0; it < 80; ++it) {  // bisection on Phi(x) = u
        double mid = 0.5 * (lo + hi);
        if (0.5 * std::erfc(-mid / std::sqrt(2.0)) < u)
          lo = mid;
        else
          hi = mid;
      }
      z[k] = static_cast<float>(0.5 * (lo + hi));
    }
    z[kQ] = z[kQ - 1];
  }
};

const Quantiles& quantiles() {
  static const Quantiles q;
  return q;
}

inline float normal_of(const float* z, uint32_t w) {
  // Top 12 bits pick the bin, the next 20 interpolate towards the next.
  uint32_t k = w >> (32 - kQBits);
  float frac = static_cast<float>(w & ((1u << (32 - kQBits)) - 1)) *
               (1.0f / (1u << (32 - kQBits)));
  return z[k] + frac * (z[k + 1] - z[k]);
}

void make_item(uint64_t key, int64_t i, float* img, int64_t* label) {
  ops::philox::Block b0 = ops::philox::draw(key, static_cast<uint64_t>(i), 0);
  int digit = static_cast<int>((static_cast<uint64_t>(b0[0]) * 10) >> 32);
  int dx = static_cast<int>(b0[1] % 7) - 3;
  int dy = static_cast<int>(b0[2] % 7) - 3;
  int thick = static_cast<int>(b0[3] & 1);
  *label = digit;
  const Canvas& t = templates().t[digit][thick];
  constexpr float kSigma = 0.15f;
  const float* z = quantiles().z;
  // Noise first (one Philox block per 4 pixels), then the shifted glyph.
  constexpr uint32_t kHalfBin = 1u << (31 - kQBits);
  for (int blk = 0; blk < kPixels / 4; ++blk) {
    ops::philox::Block w =
        ops::philox::draw(key, static_cast<uint64_t>(i), 1 + blk);
    // Half a bin's offset makes bin k's centre the quantile at (k+0.5)/kQ.
    for (int q = 0; q < 4; ++q)
      img[blk * 4 + q] =
          kSigma * normal_of(z, w[q] >= kHalfBin ? w[q] - kHalfBin : 0);
  }
  for (int y = 0; y < kSide; ++y) {
    int ty = y - dy;
    float* row = img + y * kSide;
    for (int x = 0; x < kSide; ++x) {
      int tx = x - dx;
      float v = row[x];
      if (ty >= 0 && ty < kSide && tx >= 0 && tx < kSide)
        v += t[ty * kSide + tx];
      row[x] = std::min(1.0f, std::max(0.0f, v));
    }
  }
}

}  // namespace

std::shared_ptr<TensorStore> make_synthetic_digits(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    int64_t n,
    uint64_t seed) {
  if (n < 0)
    throw DataError("ValueError",
                    "synthetic_digits needs a count of 0 or "
                    "more, not " +
                        std::to_string(n));
  if (n > (int64_t{1} << 31))
    throw DataError("ValueError",
                    "synthetic_digits: " + std::to_string(n) +
                        " items is too many to hold in memory");
  const types::FieldInfo* img = nullptr;
  const types::FieldInfo* label = nullptr;
  for (const types::FieldInfo& f : r.fields) {
    if (!f.type.is_tensor()) continue;
    if (types::is_float(f.type.dtype) && !img)
      img = &f;
    else if (f.type.dtype == types::DType::I64 && f.type.rank() == 0 && !label)
      label = &f;
    else
      throw DataError("ShapeError",
                      "synthetic_digits needs " + r.name +
                          " to have one float field of 784 values and one "
                          "0-d i64 field, but `" +
                          f.name + "` is " + f.type.str());
  }
  if (!img || !label)
    throw DataError("ShapeError",
                    "synthetic_digits needs " + r.name +
                        " to have one float field of 784 values and one 0-d "
                        "i64 field");
  ops::Shape ishape = field_shape(*img, dims);
  if (ops::numel_of(ishape) != kPixels ||
      std::any_of(
          ishape.begin(), ishape.end(), [](int64_t d) { return d < 0; }))
    throw DataError("ShapeError",
                    "synthetic_digits needs field `" + img->name +
                        "` to hold 784 values, not " + img->type.str());
  ops::Shape full = ishape;
  full.insert(full.begin(), n);
  ops::Tensor x = ops::Tensor::empty(full, types::DType::F32);
  ops::Tensor y = ops::Tensor::empty({n}, types::DType::I64);
  uint64_t key = ops::philox::key_for(seed, "synthetic_digits");
  templates();  // built once, before the threads start
  quantiles();
  float* xp = x.data<float>();
  int64_t* yp = y.data<int64_t>();
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  int64_t threads =
      std::min<int64_t>({static_cast<int64_t>(hw), 16, n / 2048 + 1});
  auto work = [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      make_item(key, i, xp + i * kPixels, yp + i);
  };
  std::vector<std::thread> pool;
  int64_t per = (n + threads - 1) / std::max<int64_t>(threads, 1);
  for (int64_t t = 1; t < threads; ++t)
    pool.emplace_back(work, std::min(n, t * per), std::min(n, (t + 1) * per));
  work(0, std::min(n, per));
  for (auto& th : pool) th.join();

  std::string source =
      "synthetic_digits(" + r.name + ", " + std::to_string(n) + ")";
  if (img->type.dtype != types::DType::F32) {
    std::map<std::string, RawArray> cols;
    cols[img->name] = raw_from_tensor(x);
    cols[label->name] = raw_from_tensor(y);
    return make_store(r, dims, std::move(cols), {}, source);
  }
  auto s = std::make_shared<TensorStore>();
  s->info = &r;
  s->n = n;
  s->fields[img->name] = x;
  s->fields[label->name] = y;
  check_store(*s, dims, source);
  return s;
}

}  // namespace ss::data
