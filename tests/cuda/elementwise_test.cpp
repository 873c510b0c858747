// The CUDA elementwise primitives (ops/cuda/cuda_elementwise.cu) against
// the CPU backend: every op of ops/core/elementwise.def at every dtype,
// on odd shapes, broadcasts, 0-d and empty tensors, and the special
// values (inf, NaN, -0) where the ops' semantics differ most.

#include <limits>
#include <string>
#include <vector>

#include "ops/core/op_error.h"
#include "tests/cuda/cuda_test_util.h"

using namespace cuda_test;

namespace {

const std::vector<DType> kAll = {DType::F32,
                                 DType::F64,
                                 DType::BF16,
                                 DType::F16,
                                 DType::I32,
                                 DType::I64,
                                 DType::Bool};

std::vector<UnaryOp> all_unary() {
  return {
#define SS_UNARY_OP(Enum, name, doc) UnaryOp::Enum,
#include "ops/core/elementwise.def"
  };
}

std::vector<BinaryOp> all_binary() {
  return {
#define SS_BINARY_OP(Enum, name, doc) BinaryOp::Enum,
#include "ops/core/elementwise.def"
  };
}

bool is_float_dtype(DType d) {
  return ss::types::is_float(d);
}

const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// Floats: random values with inf, -inf, NaN, -0 and 0 written over the
// first elements (where there are that many).
Tensor rand_special(const Shape& shape, DType d, uint64_t seed) {
  Tensor x = rand(shape, d, seed);
  if (!is_float_dtype(d)) return x;
  const double special[] = {kInf, -kInf, kNan, -0.0, 0.0, 1.0, -1.0};
  for (int64_t i = 0; i < x.numel() && i < 7; ++i) x.set(i, special[i]);
  return x;
}

// An output compared as its dtype allows: ints and bools bit for bit,
// floats within the dtype's tolerance (transcendentals differ in the last
// bits between libm and CUDA's), with an absolute floor of the same size
// for results near 0 (sin(pi) and the like).
void check(const Tensor& want, const Tensor& got, const std::string& what) {
  if (is_float_dtype(want.dtype())) {
    double r = rtol_of(want.dtype());
    require_close(want, got, r, r, what);
  } else {
    require_same_bits(want, got, what);
  }
}

std::string name_of(DType d) {
  return ss::types::dtype_name(d);
}

}  // namespace

TEST_CASE("cuda: unary ops match the CPU at every dtype", "[cuda]") {
  const std::vector<Shape> shapes = {{3, 5, 7}, {}, {0, 4}, {1}, {257}};
  for (UnaryOp op : all_unary())
    for (DType d : kAll)
      for (const Shape& s : shapes) {
        Tensor x = rand_special(s, d, 100 + static_cast<int>(op));
        std::string what = "unary op " + std::to_string(static_cast<int>(op)) +
                           " " + name_of(d) + " " + shape_string(s);
        INFO(what);
        Tensor want;
        try {
          want = CPU().unary(op, x);
        } catch (const std::exception&) {
          // A dtype the op's kind does not take: the GPU refuses it too.
          REQUIRE_THROWS(GPU().unary(op, to_gpu(x)));
          continue;
        }
        check(want, GPU().unary(op, to_gpu(x)), what);
      }
}

TEST_CASE("cuda: binary ops match the CPU at every dtype and broadcast",
          "[cuda]") {
  struct Case {
    Shape a, b;
  };
  const std::vector<Case> cases = {{{3, 5, 7}, {3, 5, 7}},
                                   {{3, 1, 7}, {5, 1}},
                                   {{}, {4, 3}},
                                   {{2, 3}, {}},
                                   {{2, 0, 3}, {3}},
                                   {{1}, {1}},
                                   {{4, 1, 6, 1}, {1, 5, 1, 3}}};
  for (BinaryOp op : all_binary())
    for (DType d : kAll)
      for (const Case& c : cases) {
        Tensor a = rand_special(c.a, d, 7), b = rand(c.b, d, 8);
        // Integer divisors of 0 and negative powers are errors on both
        // sides (tested below): keep the int operands clear of them.
        if (ss::types::is_int(d) &&
            (op == BinaryOp::FloorDiv || op == BinaryOp::Mod ||
             op == BinaryOp::Pow))
          for (int64_t i = 0; i < b.numel(); ++i) {
            double v = std::abs(b.at(i));
            b.set(i, op == BinaryOp::Pow ? v : v == 0 ? 3 : b.at(i));
          }
        std::string what = "binary op " + std::to_string(static_cast<int>(op)) +
                           " " + name_of(d) + " " + shape_string(c.a) + " " +
                           shape_string(c.b);
        INFO(what);
        Tensor want;
        try {
          want = CPU().binary(op, a, b);
        } catch (const std::exception&) {
          REQUIRE_THROWS(GPU().binary(op, to_gpu(a), to_gpu(b)));
          continue;
        }
        check(want, GPU().binary(op, to_gpu(a), to_gpu(b)), what);
      }
}

TEST_CASE("cuda: binary ops on every pair of special values", "[cuda]") {
  // [7 1] against [1 7]: all 49 pairs of inf, -inf, NaN, -0, 0, 1, -1;
  // maximum / minimum keep a NaN from either side, comparisons with NaN
  // are false (but !=), floored division and modulo follow Python.
  const std::vector<double> v = {kInf, -kInf, kNan, -0.0, 0.0, 1.0, -1.0};
  for (DType d : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
    Tensor a = Tensor::from_doubles({7, 1}, v, d);
    Tensor b = Tensor::from_doubles({1, 7}, v, d);
    for (BinaryOp op : all_binary()) {
      std::string what = "special binary op " +
                         std::to_string(static_cast<int>(op)) + " " +
                         name_of(d);
      check(
          CPU().binary(op, a, b), GPU().binary(op, to_gpu(a), to_gpu(b)), what);
    }
  }
}

TEST_CASE("cuda: integer floordiv, mod and pow by extreme values", "[cuda]") {
  // The wrapping cases: the most negative value divided by -1, and powers
  // that overflow.
  for (DType d : {DType::I32, DType::I64}) {
    double lo = d == DType::I32 ? -2147483648.0 : -9223372036854775808.0;
    Tensor a = Tensor::from_doubles({6}, {lo, lo, 7, -7, 3, -3}, d);
    Tensor b = Tensor::from_doubles({6}, {-1, 2, -2, 2, 40, 41}, d);
    // Powers take no negative exponent (of a base other than 1 or -1):
    // that is an error, tested below.
    Tensor b_pow = Tensor::from_doubles({6}, {1, 2, 2, 2, 40, 41}, d);
    for (BinaryOp op : {BinaryOp::FloorDiv,
                        BinaryOp::Mod,
                        BinaryOp::Pow,
                        BinaryOp::Mul,
                        BinaryOp::Add,
                        BinaryOp::Sub})
      require_same_bits(
          CPU().binary(op, a, op == BinaryOp::Pow ? b_pow : b),
          GPU().binary(op, to_gpu(a), to_gpu(op == BinaryOp::Pow ? b_pow : b)),
          "extreme ints, op " + std::to_string(static_cast<int>(op)) + " " +
              name_of(d));
    Tensor one = Tensor::from_doubles({3}, {1, -1, -1}, d);
    Tensor neg = Tensor::from_doubles({3}, {-5, -3, -4}, d);
    require_same_bits(CPU().binary(BinaryOp::Pow, one, neg),
                      GPU().binary(BinaryOp::Pow, to_gpu(one), to_gpu(neg)),
                      "1 and -1 to negative powers");
  }
}

TEST_CASE(
    "cuda: integer mod by zero and negative powers are errors at the "
    "next read",
    "[cuda]") {
  Tensor a = to_gpu(Tensor::from_doubles({3}, {1, 2, 3}, DType::I32));
  Tensor z = to_gpu(Tensor::from_doubles({3}, {1, 0, 1}, DType::I32));
  REQUIRE_THROWS_AS(to_cpu(GPU().binary(BinaryOp::Mod, a, z)),
                    ss::ops::OpError);
  Tensor e = to_gpu(Tensor::from_doubles({3}, {1, -2, 1}, DType::I32));
  REQUIRE_THROWS(to_cpu(GPU().binary(BinaryOp::Pow, a, e)));
  // Reported once: the next read is clean.
  require_same_bits(Tensor::from_doubles({3}, {1, 2, 3}, DType::I32),
                    to_cpu(a),
                    "after the errors");
}

TEST_CASE("cuda: scale_in_place is binary's Mul by a 0-d scalar", "[cuda]") {
  for (DType d : kAll)
    for (const Shape& s : {Shape{3, 5, 7}, Shape{}, Shape{0, 2}})
      for (double k : {0.37, -2.0, 3.0e5}) {
        Tensor x = rand_special(s, d, 21);
        std::string what = "scale " + name_of(d) + " " + shape_string(s) +
                           " by " + std::to_string(k);
        INFO(what);
        Tensor want = x.clone();
        try {
          CPU().scale_in_place(want, k);
        } catch (const std::exception&) {
          Tensor g = to_gpu(x);
          REQUIRE_THROWS(GPU().scale_in_place(g, k));
          continue;
        }
        Tensor g = to_gpu(x);
        GPU().scale_in_place(g, k);
        // One rounded product on both sides: the same value (NaN's bits
        // may differ between the devices, so floats by value).
        if (is_float_dtype(d))
          require_close(want, g, 0.0, 0.0, what);
        else
          require_same_bits(want, g, what);
      }
}

TEST_CASE("cuda: where moves the selected bytes at every dtype", "[cuda]") {
  struct Case {
    Shape c, a, b;
  };
  const std::vector<Case> cases = {{{3, 5, 7}, {3, 5, 7}, {3, 5, 7}},
                                   {{3, 1, 7}, {5, 1}, {}},
                                   {{}, {4, 3}, {4, 3}},
                                   {{2, 3}, {}, {1, 3}},
                                   {{2, 0, 3}, {3}, {1}},
                                   {{6, 1}, {1, 6}, {6, 6}}};
  for (DType d : kAll)
    for (const Case& c : cases) {
      Tensor cond = rand(c.c, DType::Bool, 31);
      Tensor a = rand_special(c.a, d, 32), b = rand(c.b, d, 33);
      std::string what = "where " + name_of(d) + " " + shape_string(c.c) + " " +
                         shape_string(c.a) + " " + shape_string(c.b);
      require_same_bits(CPU().where(cond, a, b),
                        GPU().where(to_gpu(cond), to_gpu(a), to_gpu(b)),
                        what);
    }
}

TEST_CASE("cuda: cast between every pair of dtypes", "[cuda]") {
  // Saturation (1e10 to ints), rounding to halves (ties, f16's subnormals
  // and overflow to inf), NaN to ints (0) and to bool (true).
  const std::vector<double> v = {kInf,
                                 -kInf,
                                 kNan,
                                 -0.0,
                                 0.0,
                                 0.5,
                                 -0.5,
                                 2.5,
                                 -3.7,
                                 1e10,
                                 -1e10,
                                 1e-6,
                                 3e-8,
                                 65520,
                                 1.0,
                                 70000.5,
                                 123.456,
                                 -1.0};
  for (DType from : kAll)
    for (DType to : kAll)
      for (const Tensor& x : {Tensor::from_doubles({18}, v, from),
                              rand({3, 5, 7}, from, 41),
                              rand({}, from, 42),
                              rand({0, 3}, from, 43)}) {
        std::string what = "cast " + name_of(from) + " -> " + name_of(to) +
                           " " + shape_string(x.shape());
        // Exact on both sides; floats by value (NaN's bits may differ).
        Tensor want = CPU().cast(x, to), got = GPU().cast(to_gpu(x), to);
        if (is_float_dtype(to))
          require_close(want, got, 0.0, 0.0, what);
        else
          require_same_bits(want, got, what);
      }
}
