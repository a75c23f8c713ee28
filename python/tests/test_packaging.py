"""The install paths: the wheel pip builds through python/pps_build.py and
`cmake --install --component python`, each importable from anywhere with
the stdlib inside the package. They reuse the build directory ctest runs
in (PPS_BUILD_DIR), where the module is already built."""

import importlib.util
import os
import subprocess
import sys
import zipfile

import pytest

from conftest import SOURCE_DIR

BUILD_DIR = os.environ.get("PPS_BUILD_DIR")
pytestmark = pytest.mark.skipif(not BUILD_DIR, reason="needs PPS_BUILD_DIR")

ZB_V = ("pipeline p { ranks 4; stages 2 * P placement v; microbatches 8; "
        "schedule zb_v(); }")
CHECK = """
import os, sys, pps
site = sys.argv[1]
assert pps.__file__.startswith(site), pps.__file__
assert pps.stdlib_dir() == os.path.join(site, "pps", "stdlib"), pps.stdlib_dir()
s = pps.compile(%r)
assert not s.lint()
print(s.simulate().makespan)
""" % ZB_V


def run_isolated(site, tmp_path):
    """Imports pps from `site` only, in a fresh interpreter elsewhere."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PPS_STDLIB", "PPS_STDLIB_PATH")}
    env["PYTHONPATH"] = str(site)
    out = subprocess.run([sys.executable, "-c", CHECK, str(site)], cwd=tmp_path,
                         env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return float(out.stdout)


def expected_makespan():
    import pps
    return pps.compile(ZB_V).simulate().makespan


def test_wheel(tmp_path):
    wheels = tmp_path / "wheels"
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-build-isolation",
           "--no-index", "--no-deps", "--no-cache-dir", "-q", "-w", str(wheels),
           "--config-settings", "build-dir=" + BUILD_DIR,
           os.path.join(SOURCE_DIR, "python")]
    if importlib.util.find_spec("pip"):
        subprocess.run(cmd, check=True, cwd=tmp_path)
    else:  # no python3-pip: call the backend as pip would
        sys.path.insert(0, os.path.join(SOURCE_DIR, "python"))
        import pps_build
        pps_build.build_wheel(str(wheels), {"build-dir": BUILD_DIR})
    (wheel,) = wheels.iterdir()
    assert wheel.name.startswith("pps-") and wheel.suffix == ".whl"
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        assert "pps/__init__.py" in names
        assert "pps/stdlib/zb_v.pps" in names
        assert any(n.startswith("pps/_pps.") and n.endswith(".so") for n in names)
        record = [n for n in names if n.endswith(".dist-info/RECORD")]
        assert len(record) == 1
        listed = {l.split(",")[0] for l in zf.read(record[0]).decode().splitlines()}
        assert listed == set(names)
        zf.extractall(site)
    assert run_isolated(site, tmp_path) == expected_makespan()


def test_cmake_install(tmp_path):
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", BUILD_DIR, "--component", "python",
                    "--prefix", str(prefix)], check=True, capture_output=True)
    (init,) = prefix.glob("**/pps/__init__.py")
    assert run_isolated(init.parent.parent, tmp_path) == expected_makespan()
