# Whole training programs beside PyTorch (tests/torch/programs/compare.py),
# each test a few seconds. Included from tests/CMakeLists.txt; needs
# Debian's python3-torch for /usr/bin/python3 (scripts/setup.sh installs
# it).
# A program on several devices runs through the controller and its child
# workers; one program per layout (data parallel, shard params, split H,
# both, a resume across layouts, autocast) runs again with the workers
# over TCP as on other hosts (`--over-tcp`: --hosts 127.0.0.1:N --launch
# '{cmd}'; issue 26). Those are what the transport can change; a twin of
# every test cost CI a minute and a half (issue 27's trim).
set(SS_TORCH_TCP_TWINS
  gpt_matmul_f64_cpu3 gpt_matmul_f64_cpu3_shard gpt_matmul_f64_cpu2_split
  gpt_matmul_f64_cpu2_shard_split resume_f32_cpu2_shard_to_cpu3_shard
  gpt_autocast_cpu3_shard lstm_lm_f64_cpu3_shard)
function(ss_torch_test name)
  add_test(NAME torch_program_${name}
    COMMAND /usr/bin/python3
            ${CMAKE_SOURCE_DIR}/tests/torch/programs/compare.py
            $<TARGET_FILE:ss> ${ARGN})
  set_tests_properties(torch_program_${name} PROPERTIES
    LABELS "torch" TIMEOUT 120)
  if(name IN_LIST SS_TORCH_TCP_TWINS)
    add_test(NAME torch_program_${name}_tcp
      COMMAND /usr/bin/python3
              ${CMAKE_SOURCE_DIR}/tests/torch/programs/compare.py
              $<TARGET_FILE:ss> ${ARGN} --over-tcp)
    set_tests_properties(torch_program_${name}_tcp PROPERTIES
      LABELS "torch;tcp" TIMEOUT 120)
  endif()
endfunction()

# One program in f64 and in f32, on the file's devices (cpu).
function(ss_torch_program name program)
  ss_torch_test(${name}_f64 ${program} f64 ${ARGN})
  ss_torch_test(${name}_f32 ${program} f32 ${ARGN})
endfunction()

ss_torch_program(mlp mlp)
ss_torch_program(cnn cnn)
# gpt writes attention with einsum (run fused); gpt_matmul is the same program with @
# (both must match torch: einsum once summed a contracted label out of each
# operand first).
ss_torch_program(gpt_einsum gpt)
ss_torch_program(gpt_matmul gpt -D PRODUCTS=2)
ss_torch_program(gpt_einsum_grouped gpt -D PRODUCTS=3)
# gpt's attention runs fused (Note [The attention written out]); here the
# same einsums op by op.
ss_torch_test(gpt_einsum_unfused_f64 gpt f64 -D PRODUCTS=4)
ss_torch_program(resume resume)

# The f64 runs again through `ss run --devices`, the controller and `ss
# worker` processes that users run (the conformance suite runs ranks as
# threads): mlp sets the lr in main, cnn in a worker fn.
ss_torch_test(mlp_f64_cpu2 mlp f64 --devices "cpu[0 1]")
ss_torch_test(cnn_f64_cpu2 cnn f64 --devices "cpu[0 1]")
ss_torch_test(resume_f64_cpu2 resume f64 --devices "cpu[0 1]")
ss_torch_test(gpt_matmul_f64_cpu3 gpt f64 -D PRODUCTS=2 --devices "cpu[0 1 2]")
ss_torch_test(gpt_einsum_grouped_f64_cpu2 gpt f64 -D PRODUCTS=3 --devices "cpu[0 1]")
# `shard params` (devices.md item 9): each param, its gradient and its
# optimizer state cut into pieces, one a worker, through the same
# controller and workers; torch trains the whole model. AdamW with
# clip_norm and the gradients' norm (mlp), SGD with nesterov momentum and
# batch_norm's whole buffers (cnn), checkpoints torch wrote loaded and
# cut, then saved whole for torch to read (resume), layer_norm and a
# transformer block (gpt); a param length that 3 does not divide pads the
# last piece.
ss_torch_test(mlp_f64_cpu3_shard mlp f64 --devices "cpu[0 1 2]" --shard-params)
ss_torch_test(mlp_f32_cpu3_shard mlp f32 --devices "cpu[0 1 2]" --shard-params)
ss_torch_test(cnn_f64_cpu2_shard cnn f64 --devices "cpu[0 1]" --shard-params)
ss_torch_test(resume_f64_cpu3_shard resume f64 --devices "cpu[0 1 2]" --shard-params)
ss_torch_test(resume_f32_cpu2_shard resume f32 --devices "cpu[0 1]" --shard-params)
ss_torch_test(gpt_matmul_f64_cpu3_shard gpt f64 -D PRODUCTS=2 --devices "cpu[0 1 2]" --shard-params)
# A checkpoint moves between layouts (devices.md item 9): ss trains
# resume's first steps and saves on one layout (--pre-devices), loads and
# trains on on another; torch trains all the steps itself.
ss_torch_test(resume_f64_cpu3_shard_to_cpu resume f64
  --pre-devices "cpu[0 1 2]+shard")
ss_torch_test(resume_f64_cpu_to_cpu3_shard resume f64
  --pre-devices "cpu" --devices "cpu[0 1 2]" --shard-params)
ss_torch_test(resume_f64_cpu3_shard_to_cpu2 resume f64
  --pre-devices "cpu[0 1 2]+shard" --devices "cpu[0 1]")
ss_torch_test(resume_f64_cpu3_to_cpu2_shard resume f64
  --pre-devices "cpu[0 1 2]" --devices "cpu[0 1]" --shard-params)
ss_torch_test(resume_f32_cpu2_shard_to_cpu3_shard resume f32
  --pre-devices "cpu[0 1]+shard" --devices "cpu[0 1 2]" --shard-params)
# `split H` (devices.md item 9): every value and param typed with H holds
# H / N heads on each worker; torch trains the whole model. gpt's attention
# (H = 2, one head a worker) in its three spellings: q, k, v cut from the
# whole x @ w_qkv, w_o's rows and the all-reduce of the partial products,
# layer_norm's whole params and the residuals around the heads counted
# once; resume's Linear[D H] layers (H = 24 wide: l1's columns and l2's
# rows split, their optimizer state too), and its checkpoints moved
# between one device, split H, and split H with shard params.
ss_torch_test(gpt_einsum_f64_cpu2_split gpt f64 --devices "cpu[0 1]" --split-heads)
# q, v and o as Linear layers, k a plain [D (H Dh)] param: column- and
# row-parallel layers (Note [An op in parts under split H]), whose input's
# cotangent is all-reduced (Megatron's f); before that fix the losses
# left torch's from step 1 (1e-3 by step 10).
ss_torch_test(gpt_heads_f64 gpt_heads f64)
ss_torch_test(gpt_heads_f64_cpu2_split gpt_heads f64 --devices "cpu[0 1]" --split-heads)
ss_torch_test(gpt_heads_f32_cpu2_shard_split gpt_heads f32 --devices "cpu[0 1]" --shard-params --split-heads)
ss_torch_test(gpt_matmul_f64_cpu2_split gpt f64 -D PRODUCTS=2 --devices "cpu[0 1]" --split-heads)
ss_torch_test(gpt_einsum_grouped_f32_cpu2_split gpt f32 -D PRODUCTS=3 --devices "cpu[0 1]" --split-heads)
ss_torch_test(gpt_matmul_f64_cpu2_shard_split gpt f64 -D PRODUCTS=2 --devices "cpu[0 1]" --shard-params --split-heads)
ss_torch_test(resume_f64_cpu3_split resume f64 --devices "cpu[0 1 2]" --split-heads)
ss_torch_test(resume_f64_cpu3_split_to_cpu resume f64
  --pre-devices "cpu[0 1 2]+split")
ss_torch_test(resume_f64_cpu_to_cpu2_split resume f64
  --pre-devices "cpu" --devices "cpu[0 1]" --split-heads)
ss_torch_test(resume_f32_cpu2_split_shard_to_cpu3_split resume f32
  --pre-devices "cpu[0 1]+split+shard" --devices "cpu[0 1 2]" --split-heads)
ss_torch_test(resume_f64_cpu3_split_to_cpu2_shard_split resume f64
  --pre-devices "cpu[0 1 2]+split" --devices "cpu[0 1]" --shard-params --split-heads)

# bf16 mixed precision (Note [Autocast]): whole training runs with the loss
# under autocast(loss, bf16) beside torch.autocast, f32 master weights, at
# bf16's tolerance (Note [bf16 tolerances]); on one device, on cpu[0 1 2]
# through the workers, and with shard params.
ss_torch_test(mlp_autocast mlp_autocast f32)
ss_torch_test(gpt_autocast gpt_autocast f32)
ss_torch_test(mlp_autocast_cpu3 mlp_autocast f32 --devices "cpu[0 1 2]")
ss_torch_test(gpt_autocast_cpu3_shard gpt_autocast f32 --devices "cpu[0 1 2]" --shard-params)

# f16 mixed precision with a grad scaler (Note [Loss scaling]): skipped
# steps and a scale that backs off and grows, beside torch computing the
# same roundings on the same shares of each batch (MlpF16, Note [f16
# tolerances]); one device, cpu[0 1], cpu[0 1 2] and with shard params.
ss_torch_test(mlp_f16 mlp_f16 f32)
ss_torch_test(mlp_f16_cpu2 mlp_f16 f32 --devices "cpu[0 1]")
ss_torch_test(mlp_f16_cpu3 mlp_f16 f32 --devices "cpu[0 1 2]")
ss_torch_test(mlp_f16_cpu3_shard mlp_f16 f32 --devices "cpu[0 1 2]" --shard-params)

# The word language model's truncated backprop through time: the LSTM's
# state kept in the controller between calls of the worker fn that takes
# one chunk (Note [State carried across batches]); one device, and the
# streams split across cpu[0 1] and cpu[0 1 2] with shard params.
ss_torch_program(lstm_lm lstm_lm)
ss_torch_test(lstm_lm_f64_cpu2 lstm_lm f64 --devices "cpu[0 1]")
ss_torch_test(lstm_lm_f64_cpu3_shard lstm_lm f64 --devices "cpu[0 1 2]" --shard-params)

# nanoGPT's recipe on gpt.ss: a no-decay param group, gradient accumulation
# over two batches a step, targets padded with -100 (ignore_index); on one
# device and on cpu[0 1 2], with and without shard params.
ss_torch_program(gpt_groups gpt_groups)
ss_torch_test(gpt_groups_f64_cpu3 gpt_groups f64 --devices "cpu[0 1 2]")
ss_torch_test(gpt_groups_f64_cpu3_shard gpt_groups f64 --devices "cpu[0 1 2]" --shard-params)

# A ResNet with every size in its types (Note [Divided dims]): a depthwise
# conv with bias, a downsampling block and its strided 1x1 shortcut with
# bias, adaptive_avg_pool2d; one device, cpu[0 1 2], and shard params.
ss_torch_program(resnet resnet)
ss_torch_test(resnet_f64_cpu3 resnet f64 --devices "cpu[0 1 2]")
ss_torch_test(resnet_f64_cpu3_shard resnet f64 --devices "cpu[0 1 2]" --shard-params)


# Deterministic mode (issue 28; Note [Deterministic mode] in
# interp/devices/lower/chunks.h): the chunks and their fold tree change how
# sums are grouped, not what they are, so the programs still give torch's
# numbers, f64 to 1e-10: on two and three devices, with shard params, and
# through a checkpoint saved on three devices and resumed on two.
ss_torch_test(mlp_f64_cpu3_det mlp f64 --devices "cpu[0 1 2]" --deterministic)
ss_torch_test(cnn_f64_cpu2_det cnn f64 --devices "cpu[0 1]" --deterministic)
ss_torch_test(gpt_matmul_f64_cpu3_det gpt f64 -D PRODUCTS=2
  --devices "cpu[0 1 2]" --deterministic)
ss_torch_test(resnet_f64_cpu3_det resnet f64 --devices "cpu[0 1 2]"
  --deterministic)
ss_torch_test(lstm_lm_f64_cpu3_shard_det lstm_lm f64 --devices "cpu[0 1 2]"
  --shard-params --deterministic)
ss_torch_test(resume_f64_cpu3_to_cpu2_det resume f64 --pre-devices "cpu[0 1 2]"
  --devices "cpu[0 1]" --deterministic)

# On GPUs through the stand-in (Note [A stand-in GPU] in
# tests/stand_in_gpu/stand_in_gpu.cpp): one GPU, convolutions across two,
# a checkpoint torch wrote loaded into and cut across three with shard
# params, a transformer block across three, and a checkpoint saved on three
# GPUs resumed on one. Each against torch as its CPU twin is.
function(ss_torch_stand_in_test name)
  add_test(NAME torch_program_${name}
    COMMAND /usr/bin/python3
            ${CMAKE_SOURCE_DIR}/tests/torch/programs/compare.py
            $<TARGET_FILE:ss> ${ARGN})
  set_tests_properties(torch_program_${name} PROPERTIES
    LABELS "torch;gpu" TIMEOUT 120
    ENVIRONMENT "SS_CUDA_MODULE=$<TARGET_FILE:ss_stand_in_gpu>")
endfunction()
ss_torch_stand_in_test(mlp_f64_gpu1 mlp f64 --devices "cuda[0]")
ss_torch_stand_in_test(cnn_f64_gpu2 cnn f64 --devices "cuda[0 1]")
ss_torch_stand_in_test(resume_f64_gpu3_shard resume f64 --devices "cuda[0 1 2]"
  --shard-params)
ss_torch_stand_in_test(gpt_matmul_f64_gpu3 gpt f64 -D PRODUCTS=2
  --devices "cuda[0 1 2]")
ss_torch_stand_in_test(resume_f64_gpu3_shard_to_gpu1 resume f64
  --pre-devices "cuda[0 1 2]+shard" --devices "cuda[0]")
