# SPMD pipeline parallelism, GPipe style (seeds/shard-map.md, "SPMD
# pipeline parallelism (PP)"): the inner layers are stacked and split over
# the stages, the first and last layers replicated, the batch split over
# the stages. Each step runs every stage's layers on the microbatch in its
# state and ppermute shifts the states one stage along.
#
# One change from the tutorial: the pipeline starts from zeros, not
# zeros * nan. The garbage the first steps compute is discarded either way,
# but nan * 0 is nan in the backward pass, and these gradients are compared
# with the plain loss's.
import "layers.ss"

devices cpu
mesh stages=2

dim L = 4  # inner layers, L / |stages| per stage
dim K = 2  # microbatches per stage: each stage's N / 2 examples are K of mb

# The tutorial's params_ = (first_params, params_stacked, last_params):
# the inner layers' weights and biases stacked along L.
model NetPP:
    first: Layer[D F]
    inner_w: [L F F] = zeros()
    inner_b: [L F] = zeros()
    last: Layer[F C]

fn predict_plain(m: NetPP, inputs: [b D]) -> [b C]:
    let h = relu(dense(m.first, inputs))
    for j in range(L):
        h = relu(h @ take(m.inner_w, j, over=0) + take(m.inner_b, j, over=0))
    return dense(m.last, h)

# The plain single-device loss, on the same params as the pipeline's.
fn loss(m: NetPP, inputs: [b D], targets: [b C]) -> f32:
    return mean(sum((predict_plain(m, inputs) - targets) ** 2, over=-1))

# Runs every stage's layers over K microbatches per stage: M = K |stages|
# microbatches pass L layers in M + L - 1 steps.
spmd fn spmd_pipeline(w: [L/stages F F], b: [L/stages F], inputs: [K mb F]) -> [K mb F]:
    let n_stages = axis_size(stages)
    let stage = axis_index(stages)
    let bias = rearrange(b, ls F -> ls 1 F)
    let outputs = zeros_like(inputs)
    let state = zeros([L/stages mb F])
    let x = inputs
    for i in range(K * n_stages + L - 1):
        # Stage 0 takes in the next microbatch.
        state = put(state, 0,
                    where(stage == 0, take(x, i % K, over=0), take(state, 0, over=0)),
                    over=0)
        # Every stage applies its layers (the tutorial's vmap over them).
        state = relu(state @ w + bias)
        # The last stage's last layer is a finished microbatch.
        let done = (i - L + 1) % K
        outputs = put(outputs, done,
                      where(stage == n_stages - 1, take(state, -1, over=0),
                            take(outputs, done, over=0)), over=0)
        # shift: each layer's result moves to the next layer, the last one
        # to the next stage; the inputs and outputs rotate every K steps.
        state = put(roll(state, 1, over=0), 0,
                    ppermute(take(state, -1, over=0), stages, shift=1), over=0)
        if i % K == K - 1:
            x = ppermute(x, stages, shift=1)
        if done == K - 1:
            outputs = ppermute(outputs, stages, shift=1)
    return ppermute(outputs, stages, shift=1)

spmd fn predict_pp(m: NetPP{inner_w/stages, inner_b/stages},
                   inputs: [n/stages D]) -> [n/stages C]:
    let h = relu(dense(m.first, inputs))
    let micro = rearrange(h, (K mb) F -> K mb F)
    let piped = spmd_pipeline(m.inner_w, m.inner_b, micro)
    return dense(m.last, rearrange(piped, K mb F -> (K mb) F))

spmd fn loss_pp(m: NetPP{inner_w/stages, inner_b/stages}, inputs: [n/stages D],
                targets: [n/stages C]) -> f32:
    let predictions = predict_pp(m, inputs)
    let local_loss = mean(sum((predictions - targets) ** 2, over=-1))
    return pmean(local_loss, stages)

# first and last are nn.ss's init_net's l1 and l6; the inner layers a
# pattern of their own.
fn init_net_pp() -> NetPP:
    let m = NetPP.init(seed=0)
    m.first.w = reshape(ramp(arange(D * F), 3), [D, F]) / 4.0
    m.first.b = reshape(ramp(arange(F), 7), [F]) / 4.0
    m.inner_w = reshape(ramp(arange(L * F * F), 4), [L, F, F]) / 4.0
    m.inner_b = reshape(ramp(arange(L * F), 8), [L, F]) / 4.0
    m.last.w = reshape(ramp(arange(F * C), 8), [F, C]) / 4.0
    m.last.b = reshape(ramp(arange(C), 12), [C]) / 4.0
    return m

# Every gradient by its field's path, for the results file.
fn grad_logs_pp(g: Grads[NetPP]) -> Logs:
    return logs(first_w=g.first.w, first_b=g.first.b, inner_w=g.inner_w,
                inner_b=g.inner_b, last_w=g.last.w, last_b=g.last.b)

# The comparison is device work (a worker fn), so that on cpu[N] it can
# run on the workers while main prints and writes.
fn compare(m: NetPP, inputs: [N D], targets: [N C]) -> (Logs, Logs):
    let l, g = value_and_grad(loss, m, inputs, targets)
    let l_pp, g_pp = value_and_grad(loss_pp, m, inputs, targets)
    return logs(loss=l, loss_pp=l_pp, grad_diff_norm=norm(g_pp - g)), grad_logs_pp(g_pp)

fn main():
    let summary, grads = compare(init_net_pp(), batch_inputs(), batch_targets())
    print(summary)
    let results = jsonl("nn_pp.jsonl")
    results.write(summary)
    results.write(grads)
