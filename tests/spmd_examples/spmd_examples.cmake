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

# "0 1 ... count-1" into [out]: the ids of cpu[...] for a mesh of [count]
# instances.
function(ss_spmd_device_ids out count)
  math(EXPR last "${count} - 1")
  set(ids)
  foreach(i RANGE ${last})
    list(APPEND ids ${i})
  endforeach()
  string(REPLACE ";" " " ids "${ids}")
  set(${out} "${ids}" PARENT_SCOPE)
endfunction()

# And on as many devices as its mesh has instances (spmd.md: any other
# count is E2005), where main must leave the device work to worker fns
# (E1803): what the distributed mode runs.
foreach(pair matmul_basic:8 matmul_allgather:4 matmul_allgather_overlapped:4
             matmul_allgather_bidi:4 matmul_psumscatter:4
             matmul_psumscatter_overlapped:4 matmul_psumscatter_bidi:4
             nn_dp:8 nn_fsdp:8 nn_tp:8 nn_fsdp_tp:8 nn_pp:2)
  string(REPLACE ":" ";" parts ${pair})
  list(GET parts 0 name)
  list(GET parts 1 count)
  ss_spmd_device_ids(ids ${count})
  add_test(NAME example_check_spmd_${name}_cpu${count}
    COMMAND ss check --devices "cpu[${ids}]"
            ${CMAKE_SOURCE_DIR}/examples/spmd/${name}.ss)
  set_tests_properties(example_check_spmd_${name}_cpu${count} PROPERTIES
    LABELS "examples;spmd")
endforeach()

# Each program runs, simulated on `devices cpu` (example_run_spmd_<name>)
# and with an instance on each worker process of cpu[<mesh size>]
# (example_run_spmd_<name>_cpu<N>), and what it writes is compared with its
# oracle here, the same in both modes: numpy for the matmuls, PyTorch for
# the losses and gradients (the scripts say which tolerance and why).
function(ss_spmd_example_run name count script)
  add_test(NAME example_run_spmd_${name}
    COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/spmd_examples/${script}.py
            $<TARGET_FILE:ss> ${ARGN})
  set_tests_properties(example_run_spmd_${name} PROPERTIES
    LABELS "examples;spmd" TIMEOUT 120)
  ss_spmd_device_ids(ids ${count})
  add_test(NAME example_run_spmd_${name}_cpu${count}
    COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/spmd_examples/${script}.py
            $<TARGET_FILE:ss> ${ARGN} --devices "cpu[${ids}]")
  set_tests_properties(example_run_spmd_${name}_cpu${count} PROPERTIES
    LABELS "examples;spmd" TIMEOUT 120)
endfunction()

ss_spmd_example_run(matmul_basic 8 matmul_basic)
foreach(name matmul_allgather matmul_allgather_overlapped matmul_allgather_bidi
             matmul_psumscatter matmul_psumscatter_overlapped
             matmul_psumscatter_bidi)
  ss_spmd_example_run(${name} 4 matmul ${name})
endforeach()
foreach(strategy dp fsdp tp fsdp_tp)
  ss_spmd_example_run(nn_${strategy} 8 nn ${strategy})
endforeach()
ss_spmd_example_run(nn_pp 2 nn_pp)
