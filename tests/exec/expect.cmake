# Runs a command and checks its exit code and output (cmake -P script):
#   cmake -DCMD="prog;arg;..." -DEXIT=<code> -DMATCH="regex;regex" [-DENV="A=1;B=2"]
#         [-DMAX_SECONDS=N] -P expect.cmake
# Every MATCH regex must occur in stdout+stderr; with MAX_SECONDS the
# command must end within that many seconds.
foreach(kv ${ENV})
  string(REGEX MATCH "^([^=]*)=(.*)$" _ "${kv}")
  set(ENV{${CMAKE_MATCH_1}} "${CMAKE_MATCH_2}")
endforeach()
if(NOT MAX_SECONDS)
  set(MAX_SECONDS 120)
endif()
string(TIMESTAMP t0 "%s")
execute_process(COMMAND ${CMD} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err TIMEOUT ${MAX_SECONDS})
string(TIMESTAMP t1 "%s")
math(EXPR took "${t1} - ${t0}")
message("(ran ${took} s)")
set(all "${out}${err}")
message("${all}")
if(NOT "${rc}" STREQUAL "${EXIT}")
  message(FATAL_ERROR "expected exit code ${EXIT}, got '${rc}'")
endif()
foreach(re ${MATCH})
  if(NOT all MATCHES "${re}")
    message(FATAL_ERROR "output does not match: ${re}")
  endif()
endforeach()
