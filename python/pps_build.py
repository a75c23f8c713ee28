"""A PEP 517 build backend for the pps Python module that needs nothing but
CMake, a C++ compiler and the Debian packages pps builds with (no
setuptools, no scikit-build, no network): `pip install ./python` calls
build_wheel, which configures the repository with CMake (or reuses a build
directory), builds the extension target, installs the `python` component
into a staging directory and zips it into a wheel.

config_settings (pip --config-settings KEY=VALUE) or environment:
  build-dir / PPS_BUILD_DIR   the CMake build directory, relative to the
      repository root (default: python/build). One that is already
      configured is reused as it is, so `pip install ./python
      --config-settings build-dir=build` after a normal build only packs.
  jobs / CMAKE_BUILD_PARALLEL_LEVEL   parallel build jobs.
"""

import base64
import csv
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)
_NAME = "pps"
_SUMMARY = ("pps: pipeline-parallel training schedules as programs - "
            "compile, lint, simulate and synthesise them from Python")


def _version():
    with open(os.path.join(_ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(\s*pps\s+VERSION\s+([0-9][0-9.]*)", f.read())
    if not m:
        raise RuntimeError("cannot find the version in CMakeLists.txt")
    return m.group(1)


def _setting(config_settings, key, env):
    if config_settings and config_settings.get(key):
        return str(config_settings[key])
    return os.environ.get(env) or None


def _run(cmd):
    print("pps_build: " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def _tag():
    """The wheel tag of the running interpreter, e.g. cp311-cp311-linux_x86_64."""
    impl = "cp" if sys.implementation.name == "cpython" else "py"
    py = "%s%d%d" % (impl, sys.version_info[0], sys.version_info[1])
    abi = py + getattr(sys, "abiflags", "")
    plat = re.sub(r"[^A-Za-z0-9]", "_", sysconfig.get_platform())
    return "%s-%s-%s" % (py, abi, plat)


def _build_tree(config_settings, staging):
    """Builds the extension and installs the `python` component into
    staging; returns the directory holding the installed `pps` package."""
    if not os.path.isfile(os.path.join(_ROOT, "compiler", "CMakeLists.txt")):
        raise RuntimeError("the pps module builds from a pps source checkout "
                           "(python/ inside the repository)")
    cmake = shutil.which("cmake")
    if not cmake:
        raise RuntimeError("cmake is needed to build the pps module "
                           "(apt-get install cmake)")
    given = _setting(config_settings, "build-dir", "PPS_BUILD_DIR")
    # A relative build-dir is taken from the repository root (pip runs the
    # backend in python/).
    build = os.path.join(_ROOT, given) if given else os.path.join(_HERE, "build")
    build = os.path.abspath(build)
    configured = os.path.isfile(os.path.join(build, "CMakeCache.txt"))
    if not configured:
        cmd = [cmake, "-S", _ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
               "-DPPS_BUILD_TESTS=OFF", "-DPPS_BUILD_BENCHMARKS=OFF",
               "-DPPS_ENABLE_MPI=OFF", "-DPPS_BUILD_PYTHON=ON",
               "-DPPS_PYTHON_EXECUTABLE=" + sys.executable]
        if shutil.which("ninja"):
            cmd += ["-G", "Ninja"]
        _run(cmd)
    elif not given:
        # Our own build directory follows the interpreter pip runs under.
        _run([cmake, "-S", _ROOT, "-B", build,
              "-DPPS_PYTHON_EXECUTABLE=" + sys.executable])
    cmd = [cmake, "--build", build, "--target", "pps_python"]
    jobs = _setting(config_settings, "jobs", "CMAKE_BUILD_PARALLEL_LEVEL")
    cmd += ["-j", jobs or str(os.cpu_count() or 1)]
    _run(cmd)
    _run([cmake, "--install", build, "--component", "python", "--prefix",
          staging])
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    for dirpath, dirnames, filenames in os.walk(staging):
        if os.path.basename(dirpath) == _NAME and "__init__.py" in filenames:
            if "_pps" + suffix not in filenames:
                raise RuntimeError(
                    "the build directory %s builds the module for another "
                    "Python than %s (no _pps%s); configure it with "
                    "-DPPS_PYTHON_EXECUTABLE=%s or use another build-dir"
                    % (build, sys.executable, suffix, sys.executable))
            return os.path.dirname(dirpath)
    raise RuntimeError("cmake --install put no pps package into %s (was the "
                       "build directory configured with PPS_BUILD_PYTHON=ON?)"
                       % staging)


def _metadata():
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\n"
            "Requires-Python: >=3.8\n" % (_NAME, _version(), _SUMMARY))


def _record_hash(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    tag = _tag()
    dist_info = "%s-%s.dist-info" % (_NAME, version)
    wheel_name = "%s-%s-%s.whl" % (_NAME, version, tag)
    with tempfile.TemporaryDirectory(prefix="pps-wheel-") as staging:
        site = _build_tree(config_settings, staging)
        files = []
        for dirpath, dirnames, filenames in os.walk(os.path.join(site, _NAME)):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith((".pyc", ".pyo")):
                    continue
                full = os.path.join(dirpath, name)
                files.append((os.path.relpath(full, site).replace(os.sep, "/"),
                              full))
        extra = {
            dist_info + "/METADATA": _metadata().encode(),
            dist_info + "/WHEEL": ("Wheel-Version: 1.0\nGenerator: pps_build\n"
                                   "Root-Is-Purelib: false\nTag: %s\n"
                                   % tag).encode(),
            dist_info + "/top_level.txt": (_NAME + "\n").encode(),
        }
        os.makedirs(wheel_directory, exist_ok=True)
        target = os.path.join(wheel_directory, wheel_name)
        tmp = target + ".part"
        record = io.StringIO()
        writer = csv.writer(record, lineterminator="\n")
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
            for arc, full in files:
                with open(full, "rb") as f:
                    data = f.read()
                info = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
                info.external_attr = (os.stat(full).st_mode & 0o777) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, data)
                writer.writerow([arc, _record_hash(data), len(data)])
            for arc, data in extra.items():
                zf.writestr(arc, data)
                writer.writerow([arc, _record_hash(data), len(data)])
            writer.writerow([dist_info + "/RECORD", "", ""])
            zf.writestr(dist_info + "/RECORD", record.getvalue())
        os.replace(tmp, target)
    return wheel_name


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    dist_info = "%s-%s.dist-info" % (_NAME, _version())
    path = os.path.join(metadata_directory, dist_info)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    return dist_info


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_sdist(sdist_directory, config_settings=None):
    raise RuntimeError("the pps module is built from the repository checkout "
                       "(it compiles the compiler with it); there is no "
                       "separate source distribution: pip install ./python")
