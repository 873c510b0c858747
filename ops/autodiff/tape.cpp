// Reverse-mode autodiff: recording and the backward walk (tape.h).
//
// A node keeps every input of its op in position, so a VJP's result lines
// up with them; inputs that need no gradient are skipped when cotangents are
// summed (and VJPs may leave their slot undefined). Nodes get a global,
// increasing sequence number at creation, so visiting the reachable nodes in
// decreasing order is a valid reverse topological order: a node's output is
// only ever consumed by nodes created after it.
//
// Note [Replicated cotangents]
// On several devices each rank runs the same tape on its share of the
// batch. A cross-rank all-reduce's VJP sums its cotangent across the ranks,
// which is only needed when that cotangent differs between them: when some
// path from the all-reduce's output to the root meets a value computed from
// the rank's own rows (`x - mean(x, over=b)`). When every consumer between
// it and the root is replicated (the usual loss = cross_entropy(...)), each
// rank holds the same cotangent and the sum is world x it, with no message.
// backward() works this out while it walks: a node's cotangent is replicated
// when the root's is and every consumer that sent it one has a replicated
// output and a replicated cotangent itself (consumers come first in the
// walk, so the flag is final when the node is visited).
//
// Note [The tape below the API]
// The API (ops/api.h) records onto the tape, so the tape does not call the
// API: the sums, casts and scalings backward() does on cotangents are the
// backend's primitives (ops/backend/backend.h). That is what the API's
// add, cast and mul would do here: backward() runs with grad mode off
// (nothing is recorded), the cotangents of one input share its shape
// (accumulate checks) and its device, and they are floats (only float
// values are recorded), for which the API neither promotes nor casts.

#include "ops/autodiff/tape.h"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "ops/backend/backend.h"
#include "ops/core/op_error.h"

namespace ss::ops {

namespace {
thread_local bool g_grad_enabled = true;
thread_local bool g_cotangent_replicated = false;
std::atomic<uint64_t> g_next_seq{1};

// Note [Scaling a leaf's gradient in place]
// The seed scales every leaf's gradient at the end of the pass (Note [The
// seed scales the leaves]). As a new tensor, that held each param's
// gradient twice for a moment: one param's bytes above the params,
// gradients and optimizer state at data parallel's peak (36 MiB of
// 472 with three [3072 3072] f32 params, SS_MEMORY_REPORT). A cotangent
// nothing else holds (the pass gives a leaf listed once its slot) is
// scaled where it is, by the backend's scale_in_place, in the same
// arithmetic as its Mul by a 0-d tensor of its dtype: one rounded product
// of two values of it (exact in double, so rounding it once to f32 is the
// f32 product). A CUDA backend scales its own buffers the same way.
void scale_by_seed(Tensor& g, double seed) {
  Backend& b = backend_for(g.device());
  if (g.unique_storage())
    b.scale_in_place(g, seed);
  else
    g = b.binary(
        BinaryOp::Mul, g, Tensor::full({}, seed, g.dtype(), g.device()));
}

Tensor cast_to(const Tensor& g, DType dtype) {
  return g.dtype() == dtype ? g : backend_for(g.device()).cast(g, dtype);
}

// Adds [g] into [slot] (undefined = zero), casting to [dtype] first.
void accumulate(Tensor& slot,
                const Tensor& g,
                const Tensor& like,
                const char* node_name) {
  if (g.shape() != like.shape())
    throw std::logic_error(std::string("backward: the VJP of ") + node_name +
                           " gave a cotangent of shape " +
                           shape_string(g.shape()) + " for an input of shape " +
                           shape_string(like.shape()));
  Tensor gc = cast_to(g, like.dtype());
  slot = slot.defined()
             ? backend_for(slot.device()).binary(BinaryOp::Add, slot, gc)
             : gc;
}
// Before [n]'s VJP: the inputs whose bytes were let go and that the VJP
// reads, made again here, in node order on every rank (Note [Bytes made
// again] in ops/core/tensor.cpp). An input is read to give another input
// its gradient (x @ w: w for x's); for its own it is read only by ops
// such as log(w), whose data() makes it present. So `x @ w` with data x
// gathers nothing again.
void make_present(const Node& n) {
  int needing = 0;
  for (const Tensor& in : n.inputs) needing += needs_grad(in);
  for (const Tensor& in : n.inputs)
    if (in.defined() && in.storage()->let_go_of() &&
        needing - needs_grad(in) > 0)
      in.storage()->present();
}
}  // namespace

bool GradMode::enabled() {
  return g_grad_enabled;
}

GradMode::Guard::Guard(bool enabled) : prev_(g_grad_enabled) {
  g_grad_enabled = enabled;
}
GradMode::Guard::~Guard() {
  g_grad_enabled = prev_;
}

Tensor requires_grad(const Tensor& t) {
  Tensor out = t.detach();
  auto meta = std::make_shared<AutogradMeta>();
  meta->requires_grad = true;
  out.set_autograd(std::move(meta));
  return out;
}

bool needs_grad(const Tensor& t) {
  const auto& ag = t.autograd();
  return ag && (ag->requires_grad || ag->grad_fn);
}

Tensor record(const char* name,
              Tensor out,
              std::vector<Tensor> inputs,
              std::function<std::vector<Tensor>(const Tensor& gy)> vjp) {
  if (!GradMode::enabled()) return out;
  bool any = std::any_of(inputs.begin(), inputs.end(), [](const Tensor& t) {
    return needs_grad(t);
  });
  if (!any) return out;
  auto node = std::make_shared<Node>();
  node->name = name;
  node->out_replicated =
      std::all_of(inputs.begin(), inputs.end(), is_replicated);
  node->seq = g_next_seq.fetch_add(1);
  node->inputs = std::move(inputs);
  node->vjp = std::move(vjp);
  auto meta = std::make_shared<AutogradMeta>();
  meta->replicated = node->out_replicated;
  meta->grad_fn = std::move(node);
  // [out] may share storage with an input (reshape, cast to the same
  // dtype): it gets its own autodiff state either way.
  out.set_autograd(std::move(meta));
  return out;
}

Tensor mark_replicated(Tensor t) {
  if (!t.autograd()) t.set_autograd(std::make_shared<AutogradMeta>());
  t.autograd()->replicated = true;
  if (t.autograd()->grad_fn) t.autograd()->grad_fn->out_replicated = true;
  return t;
}

bool is_replicated(const Tensor& t) {
  return t.autograd() && t.autograd()->replicated;
}

bool cotangent_replicated() {
  return g_cotangent_replicated;
}

std::vector<Tensor> backward(const Tensor& root,
                             const std::vector<Tensor>& leaves,
                             const LeafReady& ready,
                             double seed,
                             double at_root) {
  if (!root.defined())
    throw OpError(OpError::Kind::Value, "backward: the root is undefined");
  if (root.rank() != 0 || !types::is_float(root.dtype()))
    throw OpError(OpError::Kind::Value,
                  "backward: the value to differentiate must be a 0-d float "
                  "tensor, got " +
                      shape_string(root.shape()) + " " +
                      types::dtype_name(root.dtype()));

  // Every node reachable from the root.
  std::vector<Node*> nodes;
  if (root.autograd() && root.autograd()->grad_fn) {
    std::unordered_set<Node*> seen;
    std::vector<Node*> stack = {root.autograd()->grad_fn.get()};
    seen.insert(stack.back());
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      nodes.push_back(n);
      for (const Tensor& in : n->inputs) {
        const auto& ag = in.autograd();
        if (ag && ag->grad_fn && seen.insert(ag->grad_fn.get()).second)
          stack.push_back(ag->grad_fn.get());
      }
    }
  }
  std::sort(nodes.begin(), nodes.end(), [](Node* a, Node* b) {
    return a->seq > b->seq;
  });

  // Nodes whose output was asked for (a non-leaf in [leaves]) keep their
  // cotangent; the others drop it once used.
  std::unordered_set<Node*> wanted;
  for (const Tensor& l : leaves)
    if (l.autograd() && l.autograd()->grad_fn)
      wanted.insert(l.autograd()->grad_fn.get());

  std::unordered_map<Node*, Tensor> node_cot;
  std::unordered_map<AutogradMeta*, Tensor> leaf_cot;

  // How many times each leaf is listed: one listed once gives its
  // cotangent away (Note [Scaling a leaf's gradient in place]).
  std::unordered_map<AutogradMeta*, int> listed;
  for (const Tensor& l : leaves)
    if (l.autograd()) ++listed[l.autograd().get()];

  // The final gradient of leaf [i] (zeros when nothing reached it).
  auto final_grad = [&](size_t i) {
    const Tensor& l = leaves[i];
    const auto& ag = l.autograd();
    Tensor g;
    if (ag && ag->grad_fn) {
      auto it = node_cot.find(ag->grad_fn.get());
      if (it != node_cot.end()) g = it->second;
    } else if (ag && ag->requires_grad) {
      auto it = leaf_cot.find(ag.get());
      if (it != leaf_cot.end()) {
        if (listed[ag.get()] == 1) {
          g = std::move(it->second);
          leaf_cot.erase(it);
        } else {
          g = it->second;
        }
      }
    }
    // The root itself as a "leaf": its cotangent is the seed.
    if (!g.defined() && l.same_storage(root) && ag && ag == root.autograd())
      g = Tensor::full(root.shape(), at_root, root.dtype(), root.device());
    if (!g.defined()) {
      if (!l.defined())
        throw OpError(OpError::Kind::Value,
                      "zeros_like: an argument is an undefined tensor");
      g = Tensor::zeros(l.shape(), l.dtype(), l.device());
    }
    g = cast_to(g, l.dtype());
    // Note [The seed scales the leaves]: the pass runs from a cotangent of
    // 1 and [seed] scales each leaf's gradient at the end, in the leaf's
    // own dtype. Seeded at the root instead, 1/3 (three ranks) was rounded
    // to an f32 root's dtype (a loss cast to f32) before an f64 program's
    // gradients saw it, and a replicated cotangent is multiplied back by
    // the world at the all-reduce (Note [Replicated cotangents]): f64
    // params came out 3e-8 off one device's.
    // (An int leaf's gradient is zeros, which no seed changes.)
    if (seed != 1.0 && types::is_float(g.dtype())) scale_by_seed(g, seed);
    return g.detach();
  };
  // With [ready]: how many uses by the reachable nodes each true leaf has
  // left, and which of [leaves] it is.
  std::unordered_map<AutogradMeta*, int64_t> uses_left;
  std::unordered_map<AutogradMeta*, std::vector<size_t>> leaf_index;
  std::vector<bool> told(leaves.size(), false);
  if (ready) {
    for (size_t i = 0; i < leaves.size(); ++i) {
      const auto& ag = leaves[i].autograd();
      if (ag && ag->requires_grad && !ag->grad_fn)
        leaf_index[ag.get()].push_back(i);
    }
    for (Node* n : nodes)
      for (const Tensor& in : n->inputs)
        if (auto it = leaf_index.find(in.autograd().get());
            in.autograd() && it != leaf_index.end())
          ++uses_left[it->first];
  }
  auto used = [&](Node* n) {
    for (const Tensor& in : n->inputs) {
      if (!in.autograd()) continue;
      auto it = uses_left.find(in.autograd().get());
      if (it == uses_left.end() || --it->second > 0) continue;
      GradMode::Guard no_grad(false);
      for (size_t i : leaf_index[it->first]) {
        told[i] = true;
        ready(i, final_grad(i));
      }
      // Told: its cotangent is the receiver's now (a data-parallel run's
      // bucket sums it in place), not kept to the end of the pass.
      leaf_cot.erase(it->first);
    }
  };
  // Absent: replicated so far (Note [Replicated cotangents]).
  std::unordered_set<Node*> cot_differs;
  {
    GradMode::Guard no_grad(false);
    if (!nodes.empty()) {
      node_cot[nodes.front()] =
          Tensor::full(root.shape(), at_root, root.dtype(), root.device());
      if (!is_replicated(root)) cot_differs.insert(nodes.front());
    }
    struct Restore {
      ~Restore() { g_cotangent_replicated = false; }
    } restore;
    for (Node* n : nodes) {
      auto it = node_cot.find(n);
      if (it == node_cot.end()) {
        if (ready) used(n);
        continue;
      }
      Tensor gy = it->second;
      if (!wanted.count(n)) node_cot.erase(it);
      const bool sends_replicated = n->out_replicated && !cot_differs.count(n);
      g_cotangent_replicated = !cot_differs.count(n);
      make_present(*n);
      std::vector<Tensor> gs = n->vjp(gy);
      g_cotangent_replicated = false;
      if (gs.size() != n->inputs.size())
        throw std::logic_error(std::string("backward: the VJP of ") + n->name +
                               " gave " + std::to_string(gs.size()) +
                               " cotangents for " +
                               std::to_string(n->inputs.size()) + " inputs");
      for (size_t i = 0; i < gs.size(); ++i) {
        const Tensor& in = n->inputs[i];
        if (!gs[i].defined() || !needs_grad(in)) continue;
        const auto& ag = in.autograd();
        if (ag->grad_fn) {
          accumulate(node_cot[ag->grad_fn.get()], gs[i], in, n->name);
          if (!sends_replicated) cot_differs.insert(ag->grad_fn.get());
        } else
          accumulate(leaf_cot[ag.get()], gs[i], in, n->name);
      }
      gs.clear();  // the slots hold them now (a leaf's is given away)
      if (ready) used(n);
    }
  }

  std::vector<Tensor> out;
  out.reserve(leaves.size());
  GradMode::Guard no_grad(false);
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!ready) {
      out.push_back(final_grad(i));
      continue;
    }
    if (!told[i]) ready(i, final_grad(i));
    out.emplace_back();  // [ready] has it
  }
  return out;
}

}  // namespace ss::ops
