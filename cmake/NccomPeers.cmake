# The optional peers the benchmarks compare against: Open MPI and Gloo.
# Each is probed without anything that can stop the configure step, and an
# absent peer is reported in one line and its programs are not built.
#
#   NCCOM_MPI_OK    an MPI compiler wrapper, mpirun, and mpi.h that the wrapper
#                   can include; MPI::MPI_C is then defined
#   NCCOM_MPICC / NCCOM_MPIRUN   the programs
#   NCCOM_GLOO_OK   gloo/allreduce.h and libgloo
#   NCCOM_GLOO_INCLUDE_DIR / NCCOM_GLOO_LIBRARY
#
# FindMPI is only asked once mpi.h is known to be there: with Debian's
# openmpi-bin but not libopenmpi-dev it finds the wrapper, builds an imported
# target whose include directory does not exist, and CMake's try_compile then
# fails the whole configure.

set(NCCOM_MPI_OK OFF)
find_program(NCCOM_MPICC mpicc)
find_program(NCCOM_MPIRUN mpirun)
set(_nccom_mpi_missing "")
if(NOT NCCOM_MPICC)
  set(_nccom_mpi_missing "mpicc is not on PATH")
elseif(NOT NCCOM_MPIRUN)
  set(_nccom_mpi_missing "mpirun is not on PATH")
else()
  set(_probe ${CMAKE_BINARY_DIR}/CMakeFiles/nccom_mpi_probe.c)
  file(WRITE ${_probe} "#include <mpi.h>\nint main(void) { return MPI_VERSION > 0 ? 0 : 1; }\n")
  execute_process(COMMAND ${NCCOM_MPICC} -E ${_probe} -o ${CMAKE_BINARY_DIR}/CMakeFiles/nccom_mpi_probe.i
                  RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET TIMEOUT 60)
  if(NOT _rc EQUAL 0)
    set(_nccom_mpi_missing "${NCCOM_MPICC} cannot include mpi.h (the headers are not installed)")
  else()
    find_package(MPI COMPONENTS C QUIET)
    if(MPI_C_FOUND)
      set(NCCOM_MPI_OK ON)
    else()
      set(_nccom_mpi_missing "CMake's FindMPI did not accept ${NCCOM_MPICC}")
    endif()
  endif()
endif()
if(NOT NCCOM_MPI_OK)
  message(STATUS "Open MPI peer skipped: ${_nccom_mpi_missing}; the Open MPI benchmark "
                 "programs are not built (bash scripts/deps.sh installs openmpi-bin libopenmpi-dev)")
endif()

set(NCCOM_GLOO_OK OFF)
find_path(NCCOM_GLOO_INCLUDE_DIR gloo/allreduce.h)
find_library(NCCOM_GLOO_LIBRARY gloo)
if(NCCOM_GLOO_INCLUDE_DIR AND NCCOM_GLOO_LIBRARY)
  set(NCCOM_GLOO_OK ON)
else()
  message(STATUS "Gloo peer skipped: gloo/allreduce.h or libgloo not found; the Gloo benchmark "
                 "program is not built (bash scripts/deps.sh installs libgloo-dev)")
endif()
