#!/usr/bin/env bash
# A manual check of the Debian package (not a ctest test: it needs root,
# the network and a few minutes): a clean Debian 12 root made by
# debootstrap, `apt-get install ./pps_*.deb` in it (the declared
# dependencies and recommendations pulled from the archive), then, inside
# that root: ppsc --version, ppsc lint with a stdlib schedule, and the
# outside project tests/install/consumer configured with find_package(pps),
# built, and run on threads and under mpirun -n 4.
#
#   tests/install/deb_clean_root.sh BUILD_DIR [ROOT]     (ROOT: /tmp/pps-clean-root)
#
# Needs debootstrap (apt-get install debootstrap). ROOT is reused when it
# already holds a debootstrapped system; delete it to start from scratch.
set -euo pipefail
build="$(cd "$1" && pwd)"
root="${2:-/tmp/pps-clean-root}"
src="$(cd "$(dirname "$0")/../.." && pwd)"

echo "== cpack -G DEB"
out="$root.deb"
rm -rf "$out"
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$out" >/dev/null
deb="$(ls "$out"/pps_*.deb)"
ls -l "$deb"

if [ ! -x "$root/usr/bin/apt-get" ]; then
  echo "== debootstrap --variant=minbase bookworm $root"
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
# /proc and /sys for Open MPI (hwloc reads the CPU topology there).
mounted=()
for fs in proc sys; do
  if ! mountpoint -q "$root/$fs"; then
    mount -t "${fs/sys/sysfs}" "$fs" "$root/$fs" && mounted+=("$root/$fs")
  fi
done
cleanup() { for m in "${mounted[@]}"; do umount "$m"; done; }
trap cleanup EXIT
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
  DEBIAN_FRONTEND=noninteractive OMPI_ALLOW_RUN_AS_ROOT=1 \
  OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$@"; }

echo "== apt-get install ./$(basename "$deb") in the clean root"
cp "$deb" "$root/tmp/"
in_root apt-get update -qq
in_root apt-get install -y -q "/tmp/$(basename "$deb")"
in_root dpkg -s pps | grep -E '^(Status|Version|Depends|Recommends):'

echo "== ppsc in the clean root"
in_root ppsc --version
rm -rf "$root/tmp/consumer"
cp -r "$src/tests/install/consumer" "$root/tmp/consumer"
in_root ppsc lint /tmp/consumer/pipeline.pps

echo "== the outside project against /usr (find_package(pps))"
in_root cmake -S /tmp/consumer -B /tmp/consumer-build
in_root cmake --build /tmp/consumer-build -j 2
in_root /tmp/consumer-build/consumer --steps=2
in_root mpirun --oversubscribe -n 4 /tmp/consumer-build/consumer_mpi --transport=mpi --steps=2
echo "== pkg-config in the clean root"
in_root pkg-config --cflags --libs pps-runtime-mpi
echo "clean-root check passed"
