// Reference rows of the losses (ref_table.h): each option against
// ref/ref_losses.cpp's loops.
#include <catch2/catch.hpp>

#include "ref/tests/ref_table.h"

namespace ref_table {

namespace {

// Labels in [0, 4] with some set to [ignored].
Tensor labels_with(const Shape& s, uint64_t seed, int64_t ignored) {
  std::vector<double> v = Ri(s, seed, 0, 4).to_doubles();
  for (size_t i = 1; i < v.size(); i += 3) v[i] = double(ignored);
  return I(s, v);
}

}  // namespace

void losses_rows(std::vector<Row>& rows) {
  const Tensor z = R({2, 3, 5}, 800, -3, 3), w = R({5}, 801, 0.5, 2);
  struct Class {
    const char* op;
    std::string label;
    Tensor labels;
    bool weight;
    int64_t ignore;
    double smoothing;
    const char* reduction;
  };
  for (const Class& c : {Class{"cross_entropy",
                               "ignore -100",
                               labels_with({2, 3}, 802, -100),
                               false,
                               -100,
                               0,
                               "mean"},
                         Class{"cross_entropy",
                               "weight ignore 2 smoothing",
                               labels_with({2, 3}, 803, 2),
                               true,
                               2,
                               0.2,
                               "mean"},
                         Class{"cross_entropy",
                               "weight smoothing none",
                               labels_with({2, 3}, 804, -100),
                               true,
                               -100,
                               0.1,
                               "none"},
                         Class{"cross_entropy",
                               "sum",
                               labels_with({2, 3}, 805, -100),
                               false,
                               -100,
                               0,
                               "sum"},
                         Class{"nll_loss",
                               "weight ignore",
                               labels_with({2, 3}, 806, 3),
                               true,
                               3,
                               0,
                               "mean"},
                         Class{"nll_loss",
                               "none",
                               labels_with({2, 3}, 807, -100),
                               false,
                               -100,
                               0,
                               "none"}}) {
    const bool ce = std::string(c.op) == "cross_entropy";
    rows.push_back({c.op,
                    std::string(c.op) + " " + c.label,
                    kBig,
                    {z, c.labels, w},
                    one([c, ce](const Ts& in) {
                      FakeFwd f(c.op);
                      f.t(ce ? "logits" : "logp", in[0])
                          .t("label", in[1])
                          .integer("ignore_index", c.ignore)
                          .str("reduction", c.reduction);
                      if (c.weight) f.t("weight", in[2]);
                      if (ce) f.num("label_smoothing", c.smoothing);
                      return f.run1();
                    }),
                    one([c, ce](const Ts& in) {
                      ref::ClassLossOptions o;
                      if (c.weight) o.weight = in[2];
                      o.ignore_index = c.ignore;
                      o.label_smoothing = c.smoothing;
                      o.reduction = c.reduction;
                      return ce ? ref::cross_entropy(in[0], in[1], o)
                                : ref::nll_loss(in[0], in[1], o);
                    })});
  }
  {
    // Probabilities with weight= and label smoothing.
    Tensor p = ref::softmax(R({3, 5}, 808, -2, 2), 1);
    rows.push_back({"cross_entropy",
                    "cross_entropy probabilities weight smoothing",
                    kBig,
                    {R({3, 5}, 809, -3, 3), p, w},
                    one([](const Ts& in) {
                      return FakeFwd("cross_entropy")
                          .t("logits", in[0])
                          .t("label", in[1])
                          .t("weight", in[2])
                          .num("label_smoothing", 0.1)
                          .run1();
                    }),
                    one([](const Ts& in) {
                      ref::ClassLossOptions o;
                      o.weight = in[2];
                      o.label_smoothing = 0.1;
                      return ref::cross_entropy(in[0], in[1], o);
                    })});
  }
  const Tensor p = R({3, 4}, 810, 0.05, 0.95), y = R({3, 4}, 811, 0, 1),
               x = R({3, 4}, 812, -4, 4), wb = R({4}, 813, 0.5, 2),
               pw = R({4}, 814, 0.5, 3);
  for (const char* red : {"mean", "sum", "none"}) {
    const std::string r = red;
    rows.push_back({"binary_cross_entropy",
                    "binary_cross_entropy weight " + r,
                    kBig,
                    {p, y, wb},
                    one([r](const Ts& in) {
                      return FakeFwd("binary_cross_entropy")
                          .t("p", in[0])
                          .t("target", in[1])
                          .t("weight", in[2])
                          .str("reduction", r)
                          .run1();
                    }),
                    one([r](const Ts& in) {
                      return ref::binary_cross_entropy(in[0], in[1], in[2], r);
                    })});
    rows.push_back({"binary_cross_entropy_with_logits",
                    "binary_cross_entropy_with_logits weights " + r,
                    kBig,
                    {x, y, wb, pw},
                    one([r](const Ts& in) {
                      return FakeFwd("binary_cross_entropy_with_logits")
                          .t("x", in[0])
                          .t("target", in[1])
                          .t("weight", in[2])
                          .t("pos_weight", in[3])
                          .str("reduction", r)
                          .run1();
                    }),
                    one([r](const Ts& in) {
                      return ref::binary_cross_entropy_with_logits(
                          in[0], in[1], in[2], in[3], r);
                    })});
    rows.push_back(
        {"mse",
         "mse " + r,
         kElem,
         {x, R({4}, 815)},
         one([r](const Ts& in) {
           return FakeFwd("mse")
               .t("a", in[0])
               .t("b", in[1])
               .str("reduction", r)
               .run1();
         }),
         one([r](const Ts& in) { return ref::mse(in[0], in[1], r); })});
    for (double t : {1.0, 0.5}) {
      rows.push_back({"smooth_l1",
                      "smooth_l1 beta " + std::to_string(t) + " " + r,
                      kElem,
                      {x, R({3, 4}, 816, -3, 3)},
                      one([r, t](const Ts& in) {
                        return FakeFwd("smooth_l1")
                            .t("a", in[0])
                            .t("b", in[1])
                            .num("beta", t)
                            .str("reduction", r)
                            .run1();
                      }),
                      one([r, t](const Ts& in) {
                        return ref::smooth_l1(in[0], in[1], t, r);
                      })});
      rows.push_back({"huber",
                      "huber delta " + std::to_string(t) + " " + r,
                      kElem,
                      {x, R({3, 4}, 817, -3, 3)},
                      one([r, t](const Ts& in) {
                        return FakeFwd("huber")
                            .t("a", in[0])
                            .t("b", in[1])
                            .num("delta", t)
                            .str("reduction", r)
                            .run1();
                      }),
                      one([r, t](const Ts& in) {
                        return ref::huber(in[0], in[1], t, r);
                      })});
    }
  }
  for (const char* red : {"mean", "batchmean", "sum", "none"})
    for (bool log_target : {false, true}) {
      const std::string r = red;
      std::vector<double> tv = R({3, 4}, 818, 0, 1).to_doubles();
      tv[2] = 0;  // 0 · log 0 is 0
      Tensor t = log_target ? R({3, 4}, 819, -2, 0)
                            : Tensor::from_doubles({3, 4}, tv, DType::F64);
      rows.push_back(
          {"kl_div",
           "kl_div " + r + (log_target ? " log_target" : ""),
           kBig,
           {x, t},
           one([r, log_target](const Ts& in) {
             FakeFwd f("kl_div");
             f.t("input", in[0]).t("target", in[1]).str("reduction", r);
             if (log_target) f.num("log_target", 1, true);
             return f.run1();
           }),
           one([r, log_target](const Ts& in) {
             return ref::kl_div(in[0], in[1], r, log_target);
           })});
    }
  rows.push_back({"one_hot",
                  "one_hot [2 3] of 5",
                  kElem,
                  {Ri({2, 3}, 820, 0, 4)},
                  one([](const Ts& in) {
                    return FakeFwd("one_hot")
                        .t("label", in[0])
                        .integer("classes", 5)
                        .run1();
                  }),
                  one([](const Ts& in) { return ref::one_hot(in[0], 5); })});
}

}  // namespace ref_table
