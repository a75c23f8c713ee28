# The stream rule on the runtime, timed (cmake -P script; ctest
# exec.threads.stream_timing and exec.mpi.stream_timing):
#
#   PyTorch's lowering of interleaved 1F1B (8 ranks x 2 chunks, 16
#   microbatches; PyTorch #188833's warm-up) run under the nccl model, where
#   early receives hold back the sends behind them on each rank's one comm
#   stream, and the same computes with the comms `ppsc lint --fix` reorders.
#   Both run with sleep kernels; each measured step time must be within
#   TOLERANCE (10%) of ppsc sim's makespan for it (168 and 117 units), and
#   the measured head-of-line delay (the difference) within TOLERANCE of the
#   simulated one (51 units).
#
#   cmake -DPYTORCH=exec -DFIXED=exec [-DLAUNCH="mpirun;-n;8"] [-DARGS=...]
#         [-DSTEPS=2] [-DSCALE=10] [-DTOLERANCE=0.1] [-DATTEMPTS=3]
#         -P stream_timing.cmake
if(NOT STEPS)
  set(STEPS 2)
endif()
if(NOT SCALE)
  set(SCALE 10)
endif()
if(NOT TOLERANCE)
  set(TOLERANCE 0.1)
endif()

function(timed var exe)
  execute_process(
    COMMAND ${LAUNCH} ${exe} ${ARGS} --kernel=sleep --time-scale=${SCALE}
            --steps=${STEPS} --watchdog=60
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  string(REPLACE ";" " " cmd "${LAUNCH};${exe};${ARGS}")
  message("$ ${cmd}\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${exe} failed (exit ${rc})")
  endif()
  if(NOT out MATCHES "comm nccl")
    message(FATAL_ERROR "${exe} did not run under the nccl model")
  endif()
  if(NOT out MATCHES "= ([0-9.]+) units at [0-9.]+ ms/unit; predicted ([0-9.]+) units by ppsc sim")
    message(FATAL_ERROR "no measured makespan with ppsc sim's prediction")
  endif()
  set(${var} ${CMAKE_MATCH_1} PARENT_SCOPE)
  set(${var}_sim ${CMAKE_MATCH_2} PARENT_SCOPE)
endfunction()

# A loaded machine only makes sleep kernels wake late, so a run that misses
# the tolerance is tried again, ATTEMPTS times in all (default 3): the
# figures must hold in one run, each run measured whole.
if(NOT ATTEMPTS)
  set(ATTEMPTS 3)
endif()
foreach(attempt RANGE 1 ${ATTEMPTS})
  timed(held "${PYTORCH}")
  timed(fixed "${FIXED}")

  execute_process(
    COMMAND awk "BEGIN { t = ${TOLERANCE};
                         a = (${held} - ${held_sim}) / ${held_sim};
                         b = (${fixed} - ${fixed_sim}) / ${fixed_sim};
                         dm = ${held} - ${fixed}; ds = ${held_sim} - ${fixed_sim};
                         c = (dm - ds) / ds;
                         printf \"%+.2f%% %+.2f%% %.3f %+.2f%%\", 100 * a, 100 * b, dm, 100 * c;
                         exit !(a <= t && a >= -t && b <= t && b >= -t && c <= t && c >= -t) }"
    RESULT_VARIABLE within OUTPUT_VARIABLE figures)
  string(REPLACE " " ";" f "${figures}")
  list(GET f 0 held_pct)
  list(GET f 1 fixed_pct)
  list(GET f 2 delay)
  list(GET f 3 delay_pct)
  message("PyTorch's comm order: measured ${held} units, ppsc sim ${held_sim} "
          "(${held_pct}); reordered: measured ${fixed}, ppsc sim ${fixed_sim} "
          "(${fixed_pct}); head-of-line delay measured ${delay}, simulated "
          "${held_sim} - ${fixed_sim} (${delay_pct})")
  if(within EQUAL 0)
    return()
  endif()
  message("attempt ${attempt}: a figure is off by more than ${TOLERANCE}")
endforeach()
message(FATAL_ERROR "a figure is off by more than ${TOLERANCE} in ${ATTEMPTS} attempts")
