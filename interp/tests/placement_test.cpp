// Several devices, statically: each fn's placement, the batch axis through
// calls, and E1801-E1804, E1901 (devices.md; docs/errors/E18*.md).
#include <catch2/catch.hpp>

#include "interp/check/checker.h"
#include "interp/tests/check_test_util.h"

using ss::check::FnInfo;
using ss::testing::check_text;
using ss::testing::read_source_file;
using Codes = std::vector<std::string>;

namespace {

const char* kPrelude = R"(dim D = 784
dim Hd = 256
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Mlp:
    w1: [D Hd] = normal(std=1/sqrt(D))
    w2: [Hd C] = normal(std=1/sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C]:
    return relu(x @ m.w1) @ m.w2
)";

// [body] after the prelude (lines 1-15 are the prelude, 16 the first of
// [body]) on the device list [devices].
std::unique_ptr<ss::testing::Checked> on(const std::string& devices,
                                         const std::string& body) {
  ss::check::Options o;
  o.devices_override = devices;
  return check_text(std::string(kPrelude) + "\n" + body, o);
}

std::string readme_on(const std::string& devices) {
  (void)devices;
  return read_source_file("examples/readme_mlp.ss");
}

}  // namespace

TEST_CASE("the README example on cpu[0 1 2]: placement as the spec says",
          "[placement]") {
  ss::check::Options o;
  o.devices_override = "cpu[0 1 2]";
  auto c = check_text(readme_on("cpu[0 1 2]"), o);
  INFO(c->rendered());
  REQUIRE(c->prog);
  CHECK(c->prog->devices().count() == 3);
  using P = FnInfo::Placement;
  for (const char* w : {"forward", "loss", "train_step", "evaluate"})
    CHECK(c->prog->fn(w)->placement == P::Workers);
  for (const char* w : {"run", "main"})
    CHECK(c->prog->fn(w)->placement == P::Controller);
  CHECK(c->prog->fn("run")->placement_reason == "it loops over a dataset");
  // The batch is split; forward's x follows it through loss.
  CHECK(c->prog->fn("train_step")->param_split ==
        std::vector<bool>{false, false, true});
  CHECK(c->prog->fn("forward")->param_split == std::vector<bool>{false, true});
  CHECK(!c->prog->fn("forward")->batch_vars.empty());
  std::string t = ss::check::describe_types(*c->prog);
  CHECK_THAT(t,
             Catch::Contains(
                 "fn forward(m: Mlp, x: [b D]) -> [b C]  # on the workers"));
  CHECK_THAT(t, Catch::Contains("fn main()  # in the controller"));
}

TEST_CASE("placement is computed on one device too, and anywhere for ints",
          "[placement]") {
  auto c = on("cpu", R"(fn twice(n: int) -> int:
    return 2 * n

fn show(x: [b D]):
    print(x)
)");
  INFO(c->rendered());
  REQUIRE(c->prog);
  using P = FnInfo::Placement;
  CHECK(c->prog->fn("twice")->placement == P::Anywhere);
  CHECK(c->prog->fn("forward")->placement == P::Workers);
  CHECK(c->prog->fn("show")->placement == P::Controller);
  CHECK(c->prog->fn("show")->placement_reason == "it prints");
}

TEST_CASE("the attention example checks clean on three devices",
          "[placement]") {
  ss::check::Options o;
  o.devices_override = "cpu[0 1 2]";
  auto c = check_text(read_source_file("examples/attention.ss"), o);
  INFO(c->rendered());
  REQUIRE(c->prog);
  CHECK(c->prog->fn("attention")->placement == FnInfo::Placement::Workers);
}

TEST_CASE("lowered reductions over the batch axis are marked all-reduces",
          "[placement]") {
  auto c = on("cpu[0 1 2]", R"(fn loss(m: Mlp, batch: [b] Digit) -> f32:
    return cross_entropy(forward(m, batch.img), batch.label)
)");
  REQUIRE(c->prog);
  const auto& body = c->prog->fn("loss")->decl->body;
  REQUIRE(body.size() == 1);
  const ss::check::ExprInfo* ce = c->prog->info(body[0]->value.get());
  REQUIRE(ce);
  CHECK(ce->allreduce);
  CHECK(ce->allreduce_payload == "2 values: a sum and a count");
}

TEST_CASE("E1801: max, softmax, indexing across the batch axis",
          "[placement]") {
  auto max = on("cpu[0 1 2]", R"(fn loss(m: Mlp, batch: [b] Digit) -> f32:
    let x = batch.img / max(batch.img, over=b)
    return cross_entropy(forward(m, x), batch.label)
)");
  CHECK(max->codes() == Codes{"E1801@17:25"});
  std::string r = max->rendered();
  CHECK_THAT(r,
             Catch::Contains("error[E1801]: max over the batch axis `b` has no "
                             "distributed lowering"));
  CHECK_THAT(r, Catch::Contains("`b` is split across the 3 devices"));
  CHECK_THAT(
      r,
      Catch::Contains("= help: sum, mean, cross_entropy, mse, batch_norm and "
                      "reduce(with=sum) are lowered to an all-reduce; max is "
                      "not"));
  auto sm = on("cpu[0 1 2]", R"(fn probs(m: Mlp, batch: [b] Digit) -> [b C]:
    return softmax(forward(m, batch.img), over=b)
)");
  CHECK(sm->codes() == Codes{"E1801@17:12"});
  CHECK_THAT(sm->rendered(),
             Catch::Contains("softmax along the batch axis `b`"));
  auto ix = on("cpu[0 1 2]", R"(fn first(m: Mlp, batch: [b] Digit) -> [C]:
    return forward(m, batch.img)[0]
)");
  CHECK(ix->codes() == Codes{"E1801@17:12"});
  CHECK_THAT(ix->rendered(), Catch::Contains("indexing the batch axis `b`"));
  // Over another axis, per example: fine.
  auto ok = on("cpu[0 1 2]", R"(fn probs(m: Mlp, batch: [b] Digit) -> [b C]:
    return softmax(forward(m, batch.img), over=C)
)");
  CHECK(ok->diags.empty());
}

TEST_CASE("E1801: a tensor condition computed from split data", "[placement]") {
  auto c = on("cpu[0 1 2]", R"(fn f(m: Mlp, batch: [b] Digit) -> f32:
    let l = cross_entropy(forward(m, batch.img), batch.label)
    if l > 10.0:
        return 0.0 * l
    return l
)");
  CHECK(c->codes() == Codes{"E1801@18:8"});
}

TEST_CASE("E1802: size, grouping, a fixed size, two batch axes",
          "[placement]") {
  auto size = on("cpu[0 1 2]", R"(fn f(batch: [b] Digit) -> f32:
    return sum(batch.img) / size(batch.img, b)
)");
  CHECK(size->codes() == Codes{"E1802@17:29"});
  CHECK_THAT(size->rendered(),
             Catch::Contains("the size of the batch axis `b` used as a "
                             "number"));
  CHECK_THAT(size->rendered(),
             Catch::Contains("on each worker this would be its part's size"));
  auto grp = on("cpu[0 1 2]", R"(dim P = 16
dim Q = 49
fn f(batch: [b] Digit) -> [(b P) Q]:
    return rearrange(batch.img, b (P Q) -> (b P) Q)
)");
  CHECK(grp->codes() == Codes{"E1802@19:44"});
  CHECK_THAT(grp->rendered(), Catch::Contains("grouped with another axis"));
  auto sized = on("cpu[0 1 2]", R"(fn f(batch: [64] Digit) -> f32:
    return mean(batch.img)
)");
  CHECK(sized->codes() == Codes{"E1802@16:13"});
  auto two = on("cpu[0 1 2]", R"(fn f(batch: [b] Digit) -> [b b]:
    return batch.img @ rearrange(batch.img, b D -> D b)
)");
  CHECK(two->codes() == Codes{"E1802@17:12"});
  CHECK_THAT(two->rendered(), Catch::Contains("two batch axes"));
}

TEST_CASE("E1803: device work in a controller fn, with why it is there",
          "[placement]") {
  auto c = on("cpu[0 1 2]", R"(fn loss(m: Mlp, batch: [b] Digit) -> f32:
    return cross_entropy(forward(m, batch.img), batch.label)

fn run(train: Dataset[Digit], mut m: Mlp, mut opt: AdamW[Mlp], out: Sink):
    for batch in train.batches(64, shuffle=0):
        let l, g = value_and_grad(loss, m, batch)
        update(m, opt, g)
        out.write(logs(loss=l))
)");
  CHECK(c->codes() == Codes{"E1803@21:20", "E1803@22:9"});
  std::string r = c->rendered();
  CHECK_THAT(r,
             Catch::Contains("`value_and_grad` is device work, but `run` "
                             "runs in the controller"));
  CHECK_THAT(r,
             Catch::Contains("= note: `run` runs in the controller "
                             "because it loops over a dataset (at "
                             "test.ss:20:5)"));
}

TEST_CASE("E1804: split in one call, whole in another, noted at the first",
          "[placement]") {
  auto c = on("cpu[0 1 2]", R"(fn loss(m: Mlp, batch: [b] Digit) -> f32:
    return cross_entropy(forward(m, batch.img), batch.label)

fn blank_logits(m: Mlp) -> [1 C]:
    return forward(m, zeros([1 D]))
)");
  CHECK(c->codes() == Codes{"E1804@20:23"});
  std::string r = c->rendered();
  CHECK_THAT(r,
             Catch::Contains("`forward` is called here with `x` whole, "
                             "but in another call with it split across "
                             "the devices"));
  CHECK_THAT(r,
             Catch::Contains("= note: `x` is split in this call (at "
                             "test.ss:17:37)"));
}

TEST_CASE("E1901: a host call given split data", "[placement]") {
  auto c = on("cpu[0 1 2]", R"(fn run(train: Dataset[Digit], m: Mlp):
    for batch in train.batches(64, shuffle=0):
        print(batch.label)
        print(forward(m, batch.img))
)");
  // The second print gets forward's joined (whole) result.
  CHECK(c->codes() == Codes{"E1901@18:15"});
  CHECK_THAT(c->rendered(),
             Catch::Contains("`print` is a host call, but `batch.label` is "
                             "split across the 3 devices"));
  CHECK_THAT(c->rendered(), Catch::Contains("[b] i64, split along b"));
}

TEST_CASE("one device reports none of E1801-E1804, E1901", "[placement]") {
  const char* body = R"(fn loss(m: Mlp, batch: [b] Digit) -> f32:
    let x = batch.img / max(batch.img, over=b)
    return cross_entropy(forward(m, x), batch.label) + 0.0 * size(x, b)

fn blank_logits(m: Mlp) -> [1 C]:
    return forward(m, zeros([1 D]))

fn run(train: Dataset[Digit], mut m: Mlp, mut opt: AdamW[Mlp], out: Sink):
    for batch in train.batches(64, shuffle=0):
        print(batch.label)
        let l, g = value_and_grad(loss, m, batch)
        update(m, opt, g)
        out.write(logs(loss=l))
)";
  auto one = on("cpu", body);
  INFO(one->rendered());
  CHECK(one->diags.empty());
  auto three = on("cpu[0 1 2]", body);
  CHECK(three->codes() == Codes{"E1801@17:25",
                                "E1802@18:62",
                                "E1804@21:23",
                                "E1901@25:15",
                                "E1803@26:20",
                                "E1803@27:9"});
}
