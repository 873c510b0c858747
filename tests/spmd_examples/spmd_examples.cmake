# examples/spmd/: the shard_map tutorial's programs. Included from
# tests/CMakeLists.txt.
#
# Each file checks clean (the shared layers.ss, nn.ss and data.ss too).
file(GLOB SS_SPMD_EXAMPLES CONFIGURE_DEPENDS
  ${CMAKE_SOURCE_DIR}/examples/spmd/*.ss)
foreach(ex ${SS_SPMD_EXAMPLES})
  get_filename_component(name ${ex} NAME_WE)
  add_test(NAME example_check_spmd_${name} COMMAND ss check ${ex})
  set_tests_properties(example_check_spmd_${name} PROPERTIES
    LABELS "examples;spmd")
endforeach()

# Each program runs (simulated, on `devices cpu`) and what it writes is
# compared with its oracle here: numpy for the matmuls, PyTorch for the
# losses and gradients (the scripts say which tolerance and why).
function(ss_spmd_example_run name script)
  add_test(NAME example_run_spmd_${name}
    COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/spmd_examples/${script}.py
            $<TARGET_FILE:ss> ${ARGN})
  set_tests_properties(example_run_spmd_${name} PROPERTIES
    LABELS "examples;spmd" TIMEOUT 120)
endfunction()

ss_spmd_example_run(matmul_basic matmul_basic)
foreach(name matmul_allgather matmul_allgather_overlapped matmul_allgather_bidi
             matmul_psumscatter matmul_psumscatter_overlapped
             matmul_psumscatter_bidi)
  ss_spmd_example_run(${name} matmul ${name})
endforeach()
foreach(strategy dp fsdp tp fsdp_tp)
  ss_spmd_example_run(nn_${strategy} nn ${strategy})
endforeach()
ss_spmd_example_run(nn_pp nn_pp)
