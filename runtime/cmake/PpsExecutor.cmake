# pps_add_executor(<target> <file.pps> [kernels.cpp ...]
#                  [PPSC_ARGS <ppsc emit options ...>] [NO_MPI])
#
# Compiles a schedule to a runnable executor at build time: runs
# `ppsc emit --target=cpp <file.pps> <PPSC_ARGS> -o <target>.cpp`, builds it
# with the given sources (your kernels: define ppsrt::makeKernels, see
# runtime/include/ppsrt/Kernels.h) and links the runtime: pps_runtime_mpi
# when MPI was found (so `--transport=mpi` works), pps_runtime otherwise.
# Generated translation units are compiled with -O1: they are tables, and
# -O1 keeps huge schedules fast to build.
#
# The ppsc used is the `ppsc` target of this build if there is one, else
# the program named by PPS_PPSC (or found on PATH).

function(pps_add_executor target pps)
  cmake_parse_arguments(ARG "NO_MPI" "" "PPSC_ARGS" ${ARGN})
  get_filename_component(pps_abs "${pps}" ABSOLUTE)
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${target}.cpp")
  if(TARGET ppsc)
    set(ppsc_cmd $<TARGET_FILE:ppsc>)
    set(ppsc_dep ppsc)
  else()
    if(NOT PPS_PPSC)
      find_program(PPS_PPSC ppsc REQUIRED)
    endif()
    set(ppsc_cmd ${PPS_PPSC})
    set(ppsc_dep)
  endif()
  # Schedules import the standard library implicitly: rebuild when it moves.
  set(stdlib_deps)
  if(PPS_STDLIB_DIR)
    file(GLOB stdlib_deps CONFIGURE_DEPENDS ${PPS_STDLIB_DIR}/*.pps)
  endif()
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${ppsc_cmd} emit --target=cpp "${pps_abs}" ${ARG_PPSC_ARGS} -o "${out}"
    DEPENDS ${ppsc_dep} "${pps_abs}" ${stdlib_deps}
    COMMENT "ppsc emit --target=cpp ${pps} -> ${target}.cpp"
    VERBATIM)
  set_source_files_properties("${out}" PROPERTIES COMPILE_OPTIONS "-O1")
  add_executable(${target} "${out}" ${ARG_UNPARSED_ARGUMENTS})
  if(TARGET pps_runtime_mpi AND NOT ARG_NO_MPI)
    target_link_libraries(${target} PRIVATE pps_runtime_mpi)
  else()
    target_link_libraries(${target} PRIVATE pps_runtime)
  endif()
endfunction()
