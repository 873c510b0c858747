# Whole training programs beside PyTorch (tests/torch/programs/compare.py):
# one test per program and dtype, each a few seconds. Included from
# tests/CMakeLists.txt; needs Debian's python3-torch for /usr/bin/python3
# (scripts/setup.sh installs it).
function(ss_torch_program name program)
  foreach(dtype f64 f32)
    add_test(NAME torch_program_${name}_${dtype}
      COMMAND /usr/bin/python3
              ${CMAKE_SOURCE_DIR}/tests/torch/programs/compare.py
              $<TARGET_FILE:ss> ${program} ${dtype} ${ARGN})
    set_tests_properties(torch_program_${name}_${dtype} PROPERTIES
      LABELS "torch" TIMEOUT 120)
  endforeach()
endfunction()

ss_torch_program(mlp mlp)
ss_torch_program(cnn cnn)
# Expected to fail until the einsum fix lands (compare.py,
# EXPECTED_FAILURES, reports it and passes); gpt_matmul is the same
# program with @ and must match now.
ss_torch_program(gpt_einsum gpt)
ss_torch_program(gpt_matmul gpt -D PRODUCTS=2)
ss_torch_program(resume resume)
