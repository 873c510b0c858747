// Reference rows of the nn ops (ref_table.h).
#include <catch2/catch.hpp>

#include "ref/tests/ref_table.h"

namespace ref_table {

void nn_rows(std::vector<Row>& rows) {
  auto ce = [&](std::string label, Tensor logits, Tensor label_t, double rtol) {
    rows.push_back(
        {"cross_entropy",
         "cross_entropy " + label,
         rtol,
         {logits, label_t},
         one([](const Ts& in) {
           return FakeFwd("cross_entropy")
               .t("logits", in[0])
               .t("label", in[1])
               .run1();
         }),
         one([](const Ts& in) { return ref::cross_entropy(in[0], in[1]); })});
  };
  ce("[4 5]", R({4, 5}, 700, -3, 3), Ri({4}, 701, 0, 4), kBig);
  ce("[b n C]", R({2, 3, 5}, 702, -3, 3), Ri({2, 3}, 703, 0, 4), kBig);
  ce("[64 1000]", R({64, 1000}, 704, -3, 3), Ri({64}, 705, 0, 999), kBig);
  {
    // Probabilities: rows of a softmax.
    Tensor p = ref::softmax(R({3, 4}, 706, -2, 2), 1);
    ce("probabilities", R({3, 4}, 707, -3, 3), p, kBig);
  }
  rows.push_back({"mse",
                  "mse broadcast",
                  kElem,
                  {R({3, 4}, 708), R({4}, 709)},
                  one([](const Ts& in) {
                    return FakeFwd("mse").t("a", in[0]).t("b", in[1]).run1();
                  }),
                  one([](const Ts& in) { return ref::mse(in[0], in[1]); })});
  // dropout: the keep mask is u >= p for u = rand on the Train stream.
  for (double p : {0.3, 0.0, 1.0})
    for (bool train : {true, false})
      rows.push_back(
          {"dropout",
           "dropout p=" + std::to_string(p) + (train ? " train" : " eval"),
           kElem,
           {R({20, 30}, 710)},
           one([p, train](const Ts& in) {
             return FakeFwd("dropout")
                 .t("x", in[0])
                 .num("p", p)
                 .mode("mode", train, RandomStream{55, 9, 4})
                 .run1();
           }),
           one([p, train](const Ts& in) {
             if (!train)
               return ref::dropout(
                   in[0], ref::ones_like(ref::isnan(in[0])), 0.0);
             Tensor u = ref::rand(in[0].shape(), DType::F32, 55, 9, 4);
             return ref::dropout(
                 in[0], ref::ge(u, Tensor::scalar(p, DType::F64)), p);
           })});
  // batch_norm: y and the running stats after the call.
  for (auto [label, shape, train] :
       {std::tuple{"train [6 3]", Shape{6, 3}, true},
        std::tuple{"train [2 3 4 5]", Shape{2, 3, 4, 5}, true},
        std::tuple{"eval [2 3 4]", Shape{2, 3, 4}, false}}) {
    rows.push_back({"batch_norm",
                    std::string("batch_norm ") + label,
                    kBig,
                    {R(shape, 711, -2, 3),
                     R({3}, 712, 0.5, 1.5),
                     R({3}, 713),
                     R({3}, 714),
                     R({3}, 715, 0.5, 2)},
                    [train = train](const Ts& in) {
                      Model bn = {{"g", in[1]},
                                  {"b", in[2]},
                                  {"running_mean", in[3]},
                                  {"running_var", in[4]}};
                      Tensor y = FakeFwd("batch_norm")
                                     .t("x", in[0])
                                     .model("bn", &bn)
                                     .mode("mode", train)
                                     .run1();
                      return Ts{y, bn["running_mean"], bn["running_var"]};
                    },
                    [train = train](const Ts& in) {
                      auto r = ref::batch_norm(
                          in[0], in[1], in[2], in[3], in[4], train);
                      return Ts{r.y, r.running_mean, r.running_var};
                    }});
  }
  struct LN {
    const char* label;
    Shape x;
    std::vector<int> over;
    Shape g;  // empty: no affine
  };
  const LN lns[] = {
      {"over 1", {4, 6}, {1}, {}},
      {"over -1 affine", {4, 6}, {-1}, {6}},
      {"over 0 affine", {4, 6}, {0}, {4}},
      {"over 1 2 affine", {2, 3, 4}, {1, 2}, {3, 4}},
      {"over 2 1 affine", {2, 3, 4}, {2, 1}, {4, 3}},
      {"all axes", {3, 5}, {}, {}},
      {"[4 4096] over 1", {4, 4096}, {1}, {}},
  };
  uint64_t seed = 720;
  for (const LN& ln : lns) {
    Ts in = {R(ln.x, seed++, -2, 3)};
    bool affine = !ln.g.empty();
    if (affine) {
      in.push_back(R(ln.g, seed++, 0.5, 1.5));
      in.push_back(R(ln.g, seed++));
    }
    std::vector<int> over = ln.over;
    rows.push_back({"layer_norm",
                    std::string("layer_norm ") + ln.label,
                    kBig,
                    in,
                    one([over, affine](const Ts& in) {
                      FakeFwd f("layer_norm");
                      f.t("x", in[0]);
                      if (!over.empty()) f.over(over);
                      Model m;
                      if (affine) {
                        m = {{"g", in[1]}, {"b", in[2]}};
                        f.model("affine", &m);
                      }
                      return f.run1();
                    }),
                    one([over, affine](const Ts& in) {
                      if (!affine) return ref::layer_norm(in[0], over);
                      return ref::layer_norm(in[0], over, 1e-5, in[1], in[2]);
                    })});
    rows.push_back(
        {"rms_norm",
         std::string("rms_norm ") + ln.label,
         kBig,
         {in[0]},
         one([over](const Ts& in) {
           FakeFwd f("rms_norm");
           f.t("x", in[0]);
           if (!over.empty()) f.over(over);
           return f.run1();
         }),
         one([over](const Ts& in) { return ref::rms_norm(in[0], over); })});
  }
  rows.push_back(
      {"layer_norm",
       "layer_norm eps=0.1",
       kBig,
       {R({3, 4}, 740)},
       one([](const Ts& in) {
         return FakeFwd("layer_norm")
             .t("x", in[0])
             .over({1})
             .num("eps", 0.1)
             .run1();
       }),
       one([](const Ts& in) { return ref::layer_norm(in[0], {1}, 0.1); })});
  rows.push_back(
      {"rms_norm",
       "rms_norm eps=0.1",
       kBig,
       {R({3, 4}, 741)},
       one([](const Ts& in) {
         return FakeFwd("rms_norm")
             .t("x", in[0])
             .over({1})
             .num("eps", 0.1)
             .run1();
       }),
       one([](const Ts& in) { return ref::rms_norm(in[0], {1}, 0.1); })});
  rows.push_back(
      {"embedding",
       "embedding",
       kElem,
       {R({7, 4}, 742), Ri({2, 3}, 743, 0, 6)},
       one([](const Ts& in) {
         return FakeFwd("embedding").t("table", in[0]).t("ids", in[1]).run1();
       }),
       one([](const Ts& in) { return ref::embedding(in[0], in[1]); })});
  for (auto [label, xs, ks, stride, padding] :
       {std::tuple{"3x3", Shape{2, 3, 7, 6}, Shape{4, 3, 3, 3}, 1, 0},
        std::tuple{
            "stride 2 padding 1", Shape{2, 3, 7, 6}, Shape{4, 3, 3, 3}, 2, 1},
        std::tuple{"2x1 padding 2", Shape{1, 2, 4, 5}, Shape{3, 2, 2, 1}, 1, 2},
        std::tuple{
            "16 channels 5x5", Shape{1, 16, 9, 9}, Shape{2, 16, 5, 5}, 2, 2}})
    rows.push_back({"conv2d",
                    std::string("conv2d ") + label,
                    kElem,
                    {R(xs, 744), R(ks, 745)},
                    one([stride = stride, padding = padding](const Ts& in) {
                      return FakeFwd("conv2d")
                          .t("x", in[0])
                          .t("k", in[1])
                          .integer("stride", stride)
                          .integer("padding", padding)
                          .run1();
                    }),
                    one([stride = stride, padding = padding](const Ts& in) {
                      return ref::conv2d(in[0], in[1], stride, padding);
                    })});
  for (const char* op : {"max_pool2d", "avg_pool2d"})
    for (auto [k, stride, padding] : {std::tuple{2, 0, 0},
                                      std::tuple{3, 0, 0},
                                      std::tuple{3, 1, 1},
                                      std::tuple{3, 2, 1},
                                      std::tuple{2, 1, 0}})
      rows.push_back(
          {op,
           std::string(op) + " k=" + std::to_string(k) + " stride=" +
               std::to_string(stride) + " padding=" + std::to_string(padding),
           kElem,
           {R({2, 3, 7, 8}, 746)},
           one([op = op, k = k, stride = stride, padding = padding](
                   const Ts& in) {
             FakeFwd f(op);
             f.t("x", in[0]).integer("k", k);
             if (stride)
               f.integer("stride", stride).integer("padding", padding);
             return f.run1();
           }),
           one([op = op, k = k, stride = stride, padding = padding](
                   const Ts& in) {
             return std::string(op) == "max_pool2d"
                        ? ref::max_pool2d(in[0], k, stride, padding)
                        : ref::avg_pool2d(in[0], k, stride, padding);
           })});
  for (int n : {1, 3, 5})
    rows.push_back({"adaptive_avg_pool2d",
                    "adaptive_avg_pool2d " + std::to_string(n),
                    kElem,
                    {R({2, 3, 7, 8}, 748)},
                    one([n](const Ts& in) {
                      return FakeFwd("adaptive_avg_pool2d")
                          .t("x", in[0])
                          .integer("size", n)
                          .run1();
                    }),
                    one([n](const Ts& in) {
                      return ref::adaptive_avg_pool2d(in[0], n);
                    })});
  // stride, padding, dilation, groups.
  using Conv = std::tuple<const char*, Shape, Shape, int, int, int, int>;
  for (auto [label, xs, ks, s, p, d, g] :
       {Conv{"dilation 2", {2, 3, 9, 8}, {4, 3, 3, 3}, 1, 1, 2, 1},
        Conv{"groups 2", {2, 4, 6, 6}, {6, 2, 3, 3}, 2, 1, 1, 2},
        Conv{"depthwise", {1, 5, 7, 7}, {5, 1, 3, 3}, 1, 1, 1, 5},
        Conv{"all options", {2, 4, 9, 9}, {4, 2, 2, 3}, 2, 1, 3, 2}}) {
    // The builtin [op] with every option given.
    auto builtin = [s = s, p = p, d = d, g = g](const char* op) {
      return one([=](const Ts& in) {
        return FakeFwd(op)
            .t("x", in[0])
            .t("k", in[1])
            .integer("stride", s)
            .integer("padding", p)
            .integer("dilation", d)
            .integer("groups", g)
            .run1();
      });
    };
    rows.push_back({"conv2d",
                    std::string("conv2d ") + label,
                    kElem,
                    {R(xs, 749), R(ks, 750)},
                    builtin("conv2d"),
                    one([s = s, p = p, d = d, g = g](const Ts& in) {
                      return ref::conv2d(in[0], in[1], s, p, d, g);
                    })});
    Shape x1 = {xs[0], xs[1], xs[3]}, k1 = {ks[0], ks[1], ks[3]};
    rows.push_back({"conv1d",
                    std::string("conv1d ") + label,
                    kElem,
                    {R(x1, 751), R(k1, 752)},
                    builtin("conv1d"),
                    one([s = s, p = p, d = d, g = g](const Ts& in) {
                      return ref::conv1d(in[0], in[1], s, p, d, g);
                    })});
  }
  using Transpose =
      std::tuple<const char*, Shape, Shape, int, int, int, int, int>;
  for (auto [label, xs, ks, s, p, op, g, d] :
       {Transpose{"3x3", {2, 3, 4, 5}, {3, 2, 3, 3}, 1, 0, 0, 1, 1},
        Transpose{"stride 2 output_padding 1",
                  {1, 2, 4, 4},
                  {2, 3, 3, 3},
                  2,
                  1,
                  1,
                  1,
                  1},
        Transpose{
            "groups 2 dilation 2", {2, 4, 3, 4}, {4, 2, 2, 3}, 2, 1, 0, 2, 2}})
    rows.push_back({"conv_transpose2d",
                    std::string("conv_transpose2d ") + label,
                    kElem,
                    {R(xs, 753), R(ks, 754)},
                    one([s = s, p = p, op = op, g = g, d = d](const Ts& in) {
                      return FakeFwd("conv_transpose2d")
                          .t("x", in[0])
                          .t("k", in[1])
                          .integer("stride", s)
                          .integer("padding", p)
                          .integer("output_padding", op)
                          .integer("groups", g)
                          .integer("dilation", d)
                          .run1();
                    }),
                    one([s = s, p = p, op = op, g = g, d = d](const Ts& in) {
                      return ref::conv_transpose2d(
                          in[0], in[1], s, p, op, g, d);
                    })});
  // scaled_dot_product_attention (the fused kernel: Note [Fused attention]):
  // causal with fewer keys than rows, all keys with a scale given.
  for (bool causal : {true, false}) {
    rows.push_back({"scaled_dot_product_attention",
                    causal ? "scaled_dot_product_attention causal"
                           : "scaled_dot_product_attention scale=0.3",
                    kBig,
                    {R({2, 3, 7, 4}, 760, -2, 2),
                     R({2, 3, 5, 4}, 761, -2, 2),
                     R({2, 3, 5, 6}, 762)},
                    one([causal](const Ts& in) {
                      FakeFwd f("scaled_dot_product_attention");
                      f.t("q", in[0]).t("k", in[1]).t("v", in[2]);
                      if (causal)
                        f.num("causal", 1);
                      else
                        f.num("scale", 0.3);
                      return f.run1();
                    }),
                    one([causal](const Ts& in) {
                      return ref::scaled_dot_product_attention(
                          in[0], in[1], in[2], causal, causal ? 0.5 : 0.3);
                    })});
  }
  // fused_linear (Note [Products with epilogues]): gelu with bias, scale
  // and residual; relu with bias. Rows 5 x 7 of 4 features into 6.
  rows.push_back(
      {"fused_linear",
       "fused_linear gelu bias scale residual",
       kBig,
       {R({5, 7, 4}, 770), R({4, 6}, 771), R({6}, 772), R({5, 7, 6}, 773)},
       one([](const Ts& in) {
         return FakeFwd("fused_linear")
             .t("x", in[0])
             .t("w", in[1])
             .t("b", in[2])
             .str("act", "gelu")
             .t("residual", in[3])
             .num("scale", 0.5)
             .run1();
       }),
       one([](const Ts& in) {
         Tensor y = ref::add(ref::mul(ref::matmul(in[0], in[1]),
                                      ref::full({}, 0.5, in[0].dtype())),
                             in[2]);
         return ref::add(ref::gelu(y), in[3]);
       })});
  rows.push_back({"fused_linear",
                  "fused_linear relu bias",
                  kBig,
                  {R({9, 4}, 774), R({4, 3}, 775), R({3}, 776)},
                  one([](const Ts& in) {
                    return FakeFwd("fused_linear")
                        .t("x", in[0])
                        .t("w", in[1])
                        .t("b", in[2])
                        .str("act", "relu")
                        .run1();
                  }),
                  one([](const Ts& in) {
                    return ref::relu(
                        ref::add(ref::matmul(in[0], in[1]), in[2]));
                  })});
  rows.push_back({"stop_grad",
                  "stop_grad",
                  kElem,
                  {R({2, 3}, 747)},
                  one([](const Ts& in) {
                    return FakeFwd("stop_grad").t("x", in[0]).run1();
                  }),
                  one([](const Ts& in) { return ref::stop_grad(in[0]); })});
}

}  // namespace ref_table
