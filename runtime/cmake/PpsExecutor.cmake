# pps_add_executor(<target> <file.pps> [sources ...] [MPI]
#                  [COMPONENTS <component> ...] [PPSC_ARGS <ppsc emit options ...>])
#
# Compiles a schedule to a runnable executor at build time: runs
# `ppsc emit --target=cpp <file.pps> <PPSC_ARGS> -o <target>.cpp`, builds it
# with the given sources (your kernels: define ppsrt::makeKernels, see
# ppsrt/Kernels.h) and links the runtime:
#   * pps::runtime: the threads transport;
#   * with MPI, pps::runtime_mpi instead: threads and `--transport=mpi`
#     under mpirun. A runtime built without MPI makes this a configure-time
#     error, never an executor that fails at run time;
#   * with COMPONENTS c..., pps::runtime_<c> as well (e.g. torch), which
#     must exist (find_package(pps COMPONENTS c) from an installed pps).
# Give kernels as sources or $<TARGET_OBJECTS:...>, not as a static
# library: makeKernels replaces a weak default, which only an object file
# named on the link line does.
# Generated translation units are compiled with -O1: they are tables, and
# -O1 keeps huge schedules fast to build.
#
# This file is the same inside the pps build (runtime/CMakeLists.txt
# includes it) and in an installed package (ppsConfig.cmake includes it):
# it uses only pps::ppsc, pps::runtime* and pps_STDLIB_DIR, which both
# define.

function(pps_add_executor target pps)
  cmake_parse_arguments(ARG "MPI" "" "PPSC_ARGS;COMPONENTS" ${ARGN})
  if(NOT TARGET pps::ppsc OR NOT TARGET pps::runtime)
    message(FATAL_ERROR "pps_add_executor(${target}): pps::ppsc and "
      "pps::runtime are not defined; call find_package(pps) first")
  endif()
  if(pps_DIR)
    set(where "the pps package in ${pps_DIR}")
  else()
    set(where "this pps build")
  endif()
  set(runtime pps::runtime)
  if(ARG_MPI)
    if(NOT TARGET pps::runtime_mpi)
      message(FATAL_ERROR "pps_add_executor(${target} ... MPI): ${where} "
        "has no MPI runtime (pps::runtime_mpi): it was configured without "
        "MPI (PPS_ENABLE_MPI=OFF, or no MPI found; on Debian install "
        "libopenmpi-dev and reconfigure pps). Drop MPI for a threads-only "
        "executor.")
    endif()
    set(runtime pps::runtime_mpi)
  endif()
  set(extra)
  foreach(c ${ARG_COMPONENTS})
    if(c STREQUAL "mpi")
      message(FATAL_ERROR "pps_add_executor(${target}): ask for MPI with "
        "the MPI keyword, not COMPONENTS mpi")
    endif()
    if(NOT TARGET pps::runtime_${c})
      message(FATAL_ERROR "pps_add_executor(${target} ... COMPONENTS ${c}): "
        "${where} has no component '${c}' (pps::runtime_${c}): pps was "
        "built without it, or find_package(pps COMPONENTS ${c}) was not "
        "asked for it")
    endif()
    list(APPEND extra pps::runtime_${c})
  endforeach()

  get_filename_component(pps_abs "${pps}" ABSOLUTE)
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${target}.cpp")
  # Schedules import the standard library implicitly: re-emit when it
  # changes.
  set(stdlib_deps)
  if(pps_STDLIB_DIR)
    file(GLOB stdlib_deps CONFIGURE_DEPENDS ${pps_STDLIB_DIR}/*.pps)
  endif()
  add_custom_command(
    OUTPUT "${out}"
    COMMAND $<TARGET_FILE:pps::ppsc> emit --target=cpp "${pps_abs}"
            ${ARG_PPSC_ARGS} -o "${out}"
    DEPENDS pps::ppsc "${pps_abs}" ${stdlib_deps}
    COMMENT "ppsc emit --target=cpp ${pps} -> ${target}.cpp"
    VERBATIM)
  set_source_files_properties("${out}" PROPERTIES COMPILE_OPTIONS "-O1")
  add_executable(${target} "${out}" ${ARG_UNPARSED_ARGUMENTS})
  # Components first: they use the runtime, whose archive must follow them.
  target_link_libraries(${target} PRIVATE ${extra} ${runtime})
endfunction()
