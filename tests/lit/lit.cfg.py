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
# `UNSUPPORTED: asan` with the reason; lit lists them as unsupported.
if getattr(config, "pps_sanitize", "").upper() in ("ON", "1", "TRUE", "YES", "Y"):
    config.available_features.add("asan")
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
