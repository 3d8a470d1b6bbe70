# Small helpers shared by every directory.

# nccom_hidden(target): compile with hidden visibility; only what an export
# list names leaves the shared object.
function(nccom_hidden target)
  set_target_properties(${target} PROPERTIES
    C_VISIBILITY_PRESET hidden CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
endfunction()

# nccom_add_plugin(name SOURCES ... [LIBS ...]): a MODULE library in lib/nccom/
# named libnccom-<name>.so (a name starting "nccom-" is the file name itself:
# target nccom-X builds libnccom-X.so), hidden visibility, linked only
# against the SDK.
function(nccom_add_plugin name)
  cmake_parse_arguments(P "" "OUTPUT_DIR;OUTPUT_NAME" "SOURCES;LIBS" ${ARGN})
  add_library(${name} MODULE ${P_SOURCES})
  nccom_hidden(${name})
  target_link_libraries(${name} PRIVATE nccom::sdk ${P_LIBS})
  if(NOT P_OUTPUT_DIR)
    set(P_OUTPUT_DIR ${NCCOM_PLUGIN_OUTPUT_DIR})
  endif()
  if(NOT P_OUTPUT_NAME AND name MATCHES "^nccom-")
    set(P_OUTPUT_NAME ${name})
  elseif(NOT P_OUTPUT_NAME)
    set(P_OUTPUT_NAME nccom-${name})
  endif()
  set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${P_OUTPUT_DIR}
                                           OUTPUT_NAME ${P_OUTPUT_NAME})
  target_link_options(${name} PRIVATE LINKER:--no-undefined)
endfunction()

# nccom_add_test(name SOURCES ... [LIBS ...] [LABELS ...] [TIMEOUT s]
#                [RESOURCE_LOCK lock]):
# one GoogleTest executable, its cases registered individually with ctest.
function(nccom_add_test name)
  cmake_parse_arguments(T "" "TIMEOUT;RESOURCE_LOCK" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE GTest::gtest GTest::gtest_main nccom_build_paths nccom_test_machine
                        ${T_LIBS})
  nccom_path_definitions(${name} NCCOM_BUILD_DIR ${PROJECT_BINARY_DIR}
                                 NCCOM_SOURCE_DIR ${PROJECT_SOURCE_DIR})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  list(LENGTH T_LABELS label_n)
  if(label_n GREATER 1)
    message(FATAL_ERROR "nccom_add_test(${name}): one label per test executable, not '${T_LABELS}'")
  endif()
  # Properties as name/value pairs: an empty value would drop out of the
  # list and pair the next name with the wrong value, so only set ones go in.
  set(props LABELS ${T_LABELS} TIMEOUT ${T_TIMEOUT})
  if(T_RESOURCE_LOCK)
    list(APPEND props RESOURCE_LOCK ${T_RESOURCE_LOCK})
  endif()
  include(GoogleTest)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES ${props})
endfunction()

# nccom_path_definitions(target NAME path [NAME path ...]): defines each NAME,
# for the target's sources, as an expression naming `path` at run time
# (tests/harness/build_paths.h; the sources include it). A path under the
# build tree, such as $<TARGET_FILE:x>, becomes nccom_test::in_build("rel"),
# one under the source tree nccom_test::in_source("rel"), any other a string
# literal. No absolute path of the tree reaches a command line, so the
# objects are the same in every clone and the compiler cache shares them
# (cmake/ccache-launch.sh). The target is linked to nccom_build_paths.
function(nccom_path_definitions target)
  set(args ${ARGN})
  list(LENGTH args n)
  math(EXPR odd "${n} % 2")
  if(n EQUAL 0 OR odd)
    message(FATAL_ERROR "nccom_path_definitions(${target}): NAME path pairs expected, got '${ARGN}'")
  endif()
  set(defs "")
  while(args)
    list(POP_FRONT args name path)
    cmake_path(IS_PREFIX PROJECT_BINARY_DIR "${path}" NORMALIZE in_build)
    cmake_path(IS_PREFIX PROJECT_SOURCE_DIR "${path}" NORMALIZE in_source)
    if(path MATCHES "^\\$<" OR in_build)
      # Generator expressions name build outputs; RELATIVE_PATH is evaluated
      # once they are known.
      list(APPEND defs
           "${name}=nccom_test::in_build(\"$<PATH:RELATIVE_PATH,${path},${PROJECT_BINARY_DIR}>\")")
    elseif(in_source)
      file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${path})
      list(APPEND defs "${name}=nccom_test::in_source(\"${rel}\")")
    else()
      list(APPEND defs "${name}=\"${path}\"")
    endif()
  endwhile()
  target_compile_definitions(${target} PRIVATE ${defs})
  target_link_libraries(${target} PRIVATE nccom_build_paths)
endfunction()
