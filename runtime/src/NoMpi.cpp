//===- NoMpi.cpp - runMpi of the threads-only runtime (pps_runtime) -------===//
//
// pps_runtime_mpi defines ppsrt::runMpi in mpi_Runtime.cpp; pps_runtime,
// which has no MPI, defines it here to say so. Each archive holds exactly
// one definition (see runtime/CMakeLists.txt for why not a weak symbol).
//
//===----------------------------------------------------------------------===//
#include "ppsrt/Main.h"

#include <fmt/format.h>

namespace ppsrt {

int runMpi(const ScheduleDesc &, Kernels &, const RunOptions &, int *,
           char ***) {
  fmt::print(stderr, "error: this executor was built without MPI support "
                     "(link pps_runtime_mpi: pps_add_executor(... MPI), or "
                     "-lpps_runtime_mpi)\n");
  return ExitUsage;
}

} // namespace ppsrt
