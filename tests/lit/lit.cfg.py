# lit configuration for pps golden tests: `ppsc ... | FileCheck %s`.
import os
import sys
import lit.formats

config.name = "pps"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".pps", ".csv", ".test"]
config.excludes = ["Inputs", "inputs"]
config.test_source_root = os.path.join(config.pps_source_dir, "tests", "lit")
config.test_exec_root = os.path.join(config.pps_binary_dir, "tests", "lit-out")

config.environment["PPS_STDLIB"] = os.path.join(config.pps_source_dir, "stdlib")
config.environment["NO_COLOR"] = "1"
# `asan`: an ASan + UBSan build (PPS_SANITIZE, .ci/sanitize). Tests that
# bound address space, time or memory for an uninstrumented build say
# `UNSUPPORTED: asan` with the reason; lit lists them as unsupported. The
# bounds of Inputs/bounded.py grow for ASan (PPS_BOUNDS), and %as_limit_1g
# (an address-space limit of 1 GiB, which ASan's shadow mapping alone
# exceeds) is dropped: the outputs and exit codes are still checked.
asan = getattr(config, "pps_sanitize", "").upper() in ("ON", "1", "TRUE", "YES", "Y")
if asan:
    config.available_features.add("asan")
    config.environment["PPS_BOUNDS"] = "asan"
config.substitutions.append(("%as_limit_1g", "" if asan else "prlimit --as=1073741824"))
config.substitutions.append(("%ppsc", os.path.join(config.pps_binary_dir, "bin", "ppsc")))
config.substitutions.append(("%stdlib", os.path.join(config.pps_source_dir, "stdlib")))
config.substitutions.append(("%examples", os.path.join(config.pps_source_dir, "examples")))
config.substitutions.append(("%srcroot", config.pps_source_dir))
config.substitutions.append(("%bindir", config.pps_binary_dir))
# Scripted clients (the language server tests) run on the system Python.
config.substitutions.append(("%python", "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable))
# %exitcode N cmd ...: cmd must exit with exactly N (0 ok, 1 findings, 2 usage).
config.substitutions.append(("%exitcode", "%s %s" % (
    "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable,
    os.path.join(config.pps_source_dir, "tests", "lit", "exitcode.py"))))
for tool in ["FileCheck", "not", "count"]:
    config.substitutions.append((r"\b%s\b" % tool if tool != "not" else r"(?<![\w-])not\b",
                                 os.path.join(config.llvm_tools_dir, tool)))
