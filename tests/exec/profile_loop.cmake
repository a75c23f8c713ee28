# The profile loop, end to end (cmake -P script; ctest exec.threads.profile_loop):
#
#   1. run an executor compiled for unit costs (stdlib 1F1B) whose kernels
#      take other times (profile_kernels.cpp), with --profile;
#   2. `ppsc synth PROFILE --comm-placement=producer` re-plans for the
#      measured costs within the run's memory, each send placed right
#      after its producer;
#   3. emit the new schedule's executor under the stream rule `peer` (its
#      sends go to a comm stream, so its rank goes on computing), compile
#      it with the same kernels, run it with --profile;
#   4. its measured step time must be within TOLERANCE (5%) of the
#      makespan the compiler predicted for it from the measured costs, and
#      below the profiled 1F1B's: the re-planned schedule is faster.
#
#   cmake -DPPSC=ppsc -DPROFILED=exec -DKERNELS=profile_kernels.cpp
#         -DCXX=c++ -DINCLUDE=runtime/include -DRUNTIME=libpps_runtime.a
#         -DWORK=dir [-DSTEPS=5] [-DSCALE=20] [-DTOLERANCE=0.05]
#         [-DCXXFLAGS=flags] -P profile_loop.cmake
# CXXFLAGS: a ;-list the new executor is compiled and linked with besides
# the script's own (a sanitized build's: its runtime archive calls ASan and
# UBSan, so whatever links it must be instrumented the same way).
if(NOT STEPS)
  set(STEPS 5)
endif()
# Kernel times in ms per unit: long enough that waking a sleeping thread
# (tens of us, more on a loaded machine) is noise.
if(NOT SCALE)
  set(SCALE 20)
endif()
if(NOT TOLERANCE)
  set(TOLERANCE 0.05)
endif()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 300)
  message("$ ${ARGN}\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (exit ${rc})")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

# The step time an executor's --profile line reports, and the compiler's
# predictions for it (ppsc sim's, the executor timing's).
function(step_time var)
  if(NOT out MATCHES "profile: step time ([0-9.]+) ms[^\n]*predicted ([0-9.]+) \\(ppsc sim\\), ([0-9.]+) \\(executor timing\\)")
    message(FATAL_ERROR "no profile line with predictions in the executor's output")
  endif()
  set(${var} ${CMAKE_MATCH_1} PARENT_SCOPE)
  set(${var}_sim ${CMAKE_MATCH_2} PARENT_SCOPE)
  set(${var}_exec ${CMAKE_MATCH_3} PARENT_SCOPE)
endfunction()

# 1. Profile 1F1B.
run("the profiled run" "${PROFILED}" --steps=${STEPS} --watchdog=60
    "--profile=${WORK}/profile.pps" -- --scale=${SCALE})
step_time(before)

# 2. Re-plan.
run("ppsc synth" "${PPSC}" synth "${WORK}/profile.pps"
    --comm-placement=producer -o "${WORK}/replanned.pps")

# 3. The new schedule's executor, with the same kernels. Its costs are the
#    measured ones (ms), so the predictions it carries are in ms.
run("ppsc emit" "${PPSC}" emit --target=cpp --stream=peer -Wno-early-recv
    "${WORK}/replanned.pps" -o "${WORK}/replanned.cpp")
run("compiling the new executor" "${CXX}" -std=c++17 -O1 ${CXXFLAGS} -I "${INCLUDE}"
    "${WORK}/replanned.cpp" "${KERNELS}" "${RUNTIME}" -lfmt -pthread
    -o "${WORK}/replanned")
run("the re-planned run" "${WORK}/replanned" --steps=${STEPS} --watchdog=60
    "--profile=${WORK}/replanned_profile.pps" -- --scale=${SCALE})
step_time(after)

# 4. Measured against the compiler's prediction of how this runtime runs it
#    (the executor timing: a rank posts a send when its thread gets there,
#    to its comm stream); ppsc sim's figure is shown beside it.
execute_process(
  COMMAND awk "BEGIN { m = ${after}; p = ${after_exec}; d = (m - p) / p;
                       printf \"%+.2f\", 100 * d;
                       exit !(d <= ${TOLERANCE} && d >= -${TOLERANCE}) }"
  RESULT_VARIABLE within OUTPUT_VARIABLE percent)
message("profiled 1F1B: ${before} ms per step; re-planned: measured ${after} "
        "ms, predicted ${after_exec} ms by the executor timing (${percent}%), "
        "${after_sim} ms by ppsc sim")
if(NOT within EQUAL 0)
  message(FATAL_ERROR "the re-planned schedule's step time is not within "
                      "${TOLERANCE} of its prediction")
endif()
execute_process(COMMAND awk "BEGIN { exit !(${after} < ${before}) }"
                RESULT_VARIABLE faster)
if(NOT faster EQUAL 0)
  message(FATAL_ERROR "the re-planned schedule (${after} ms) is not faster "
                      "than the profiled 1F1B (${before} ms)")
endif()
