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
