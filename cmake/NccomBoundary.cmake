# The plugin boundary, checked when the build is configured.
#
# A plugin sees the SDK (nccom::sdk, nccom::sdk_topo) and its own folder,
# nothing of the host: a third party builds the same plugin against the
# installed SDK, so anything else it reached would be a dependency no one
# outside this tree can satisfy. Two checks enforce it:
#
#   nccom_check_target_boundary(DIRECTORY dir FORBIDDEN dir...)
#     every target defined under DIRECTORY (recursively) and everything it
#     links, transitively: no linked target defined under a FORBIDDEN
#     directory, no include directory or linked file inside one.
#
#   nccom_check_source_boundary(DIRECTORY dir FORBIDDEN dir... [OUT var])
#     every #include "..." of every C/C++ file under DIRECTORY that resolves
#     next to the including file (the only lookup the include path does not
#     decide): it must not resolve inside a FORBIDDEN directory.
#
# Both stop the configure step with a message naming the target or file, what
# it reached and what to use instead; with OUT the source check returns the
# violations instead.
include_guard(GLOBAL)

set(_nccom_boundary_hint
    "A plugin may use only nccom::sdk, nccom::sdk_topo and files of its own folder (docs/decisions.md, \"The plugin boundary\").")

function(_nccom_under path dirs out)
  set(hit "")
  cmake_path(NORMAL_PATH path OUTPUT_VARIABLE norm)
  foreach(d ${dirs})
    cmake_path(NORMAL_PATH d OUTPUT_VARIABLE dn)
    cmake_path(IS_PREFIX dn "${norm}" NORMALIZE inside)
    if(inside)
      set(hit "${d}")
      break()
    endif()
  endforeach()
  set(${out} "${hit}" PARENT_SCOPE)
endfunction()

function(_nccom_dir_targets dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    _nccom_dir_targets(${sub} more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# A link or include entry without its generator expression ($<LINK_ONLY:x>,
# $<BUILD_INTERFACE:x>); the directory markers CMake inserts (::@...) are dropped.
function(_nccom_plain entry out)
  set(value "${entry}")
  while(value MATCHES "^\\$<[A-Z_]+:(.*)>$")
    set(value "${CMAKE_MATCH_1}")
  endwhile()
  if(value MATCHES "^::@" OR value MATCHES "^\\$<")
    set(value "")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

function(nccom_check_target_boundary)
  cmake_parse_arguments(B "" "DIRECTORY" "FORBIDDEN" ${ARGN})
  _nccom_dir_targets(${B_DIRECTORY} roots)
  foreach(root ${roots})
    get_target_property(root_type ${root} TYPE)
    if(root_type STREQUAL "UTILITY")
      continue()
    endif()
    set(queue ${root})
    set(seen "")
    set(via_${root} "${root}")
    while(queue)
      list(POP_FRONT queue cur)
      if(cur IN_LIST seen)
        continue()
      endif()
      list(APPEND seen ${cur})
      if(NOT TARGET ${cur})
        # A linked file or flag: only a path into a forbidden directory matters.
        if(IS_ABSOLUTE "${cur}")
          _nccom_under("${cur}" "${B_FORBIDDEN}" hit)
          if(hit)
            message(FATAL_ERROR "plugin target '${root}' links '${cur}', inside ${hit} "
                                "(through ${via_${cur}}). ${_nccom_boundary_hint}")
          endif()
        endif()
        continue()
      endif()
      set(real ${cur})
      get_target_property(aliased ${cur} ALIASED_TARGET)
      if(aliased)
        set(real ${aliased})
      endif()
      get_target_property(source_dir ${real} SOURCE_DIR)
      get_target_property(imported ${real} IMPORTED)
      if(NOT imported)
        _nccom_under("${source_dir}" "${B_FORBIDDEN}" hit)
        if(hit)
          message(FATAL_ERROR "plugin target '${root}' links '${cur}', a target of ${source_dir} "
                              "(through ${via_${cur}}). ${_nccom_boundary_hint}")
        endif()
      endif()
      get_target_property(type ${real} TYPE)
      set(props INTERFACE_INCLUDE_DIRECTORIES INTERFACE_LINK_LIBRARIES)
      if(NOT type STREQUAL "INTERFACE_LIBRARY" AND NOT imported)
        # A library of the plugin folder compiles with its own include path
        # and links its own libraries too.
        _nccom_under("${source_dir}" "${B_DIRECTORY}" local)
        if(local)
          list(APPEND props INCLUDE_DIRECTORIES LINK_LIBRARIES)
        endif()
      endif()
      foreach(prop ${props})
        get_target_property(values ${real} ${prop})
        if(NOT values)
          continue()
        endif()
        foreach(v ${values})
          _nccom_plain("${v}" v)
          if(v STREQUAL "")
            continue()
          endif()
          if(prop MATCHES "INCLUDE_DIRECTORIES$")
            _nccom_under("${v}" "${B_FORBIDDEN}" hit)
            if(hit)
              message(FATAL_ERROR "plugin target '${root}' has include directory '${v}' "
                                  "(from ${cur}'s ${prop}). ${_nccom_boundary_hint}")
            endif()
          else()
            if(NOT DEFINED via_${v})
              set(via_${v} "${via_${cur}} -> ${v}")
            endif()
            list(APPEND queue ${v})
          endif()
        endforeach()
      endforeach()
    endwhile()
  endforeach()
endfunction()

function(nccom_check_source_boundary)
  cmake_parse_arguments(B "" "DIRECTORY;OUT" "FORBIDDEN" ${ARGN})
  file(GLOB_RECURSE files LIST_DIRECTORIES false
       ${B_DIRECTORY}/*.h ${B_DIRECTORY}/*.hpp ${B_DIRECTORY}/*.c ${B_DIRECTORY}/*.cc
       ${B_DIRECTORY}/*.cpp)
  set(violations "")
  foreach(f ${files})
    file(STRINGS ${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    cmake_path(GET f PARENT_PATH here)
    foreach(line ${lines})
      if(NOT line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
        continue()
      endif()
      set(name "${CMAKE_MATCH_1}")
      set(target "${here}/${name}")
      if(EXISTS "${target}")
        file(REAL_PATH "${target}" resolved)
        _nccom_under("${resolved}" "${B_FORBIDDEN}" hit)
        if(hit)
          list(APPEND violations "${f}: #include \"${name}\" resolves to ${resolved}, inside ${hit}")
        endif()
      endif()
    endforeach()
  endforeach()
  if(B_OUT)
    set(${B_OUT} "${violations}" PARENT_SCOPE)
  elseif(violations)
    list(JOIN violations "\n  " text)
    message(FATAL_ERROR "plugin sources reach outside the SDK:\n  ${text}\n${_nccom_boundary_hint}")
  endif()
endfunction()

# Script mode (cmake -DNCCOM_BOUNDARY_DIR=... -DNCCOM_BOUNDARY_FORBIDDEN=a;b -P this file):
# the source check alone, for tests and for a check without configuring.
if(CMAKE_SCRIPT_MODE_FILE AND CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  nccom_check_source_boundary(DIRECTORY ${NCCOM_BOUNDARY_DIR} FORBIDDEN ${NCCOM_BOUNDARY_FORBIDDEN})
  message(STATUS "plugin sources: no include reaches outside the SDK")
endif()
