#!/usr/bin/env bash
# Install tests (run by ctest, see CMakeLists.txt here): one step per call.
#   install_test.sh prefix|consumer-installed|consumer-build-tree|relocated|
#                   missing-mpi|by-hand|deb
# Environment (set by ctest): PPS_SOURCE_DIR, PPS_BUILD_DIR, WORK (scratch
# directory), CMAKE, CPACK, GENERATOR, MAKE_PROGRAM, HAVE_MPI (ON/OFF),
# HAVE_MAN (ON/OFF), MPIEXEC, CMAKEDIR (lib/cmake/pps relative to a prefix),
# LIBDIR (lib relative to a prefix).
set -euo pipefail
step="$1"
here="$PPS_SOURCE_DIR/tests/install"
prefix="$WORK/prefix"
consumer="$here/consumer"
# The test must not lean on variables of the developer's shell.
unset PPS_STDLIB PPS_STDLIB_PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# expect CODE REGEX... -- CMD...: runs CMD, checks its exit code and that
# its output (stdout + stderr) matches every extended REGEX.
expect() {
  local code="$1"
  shift
  local res=()
  while [ "$1" != "--" ]; do
    res+=("$1")
    shift
  done
  shift
  local out rc=0
  out="$("$@" 2>&1)" || rc=$?
  printf '%s\n' "$out"
  [ "$rc" = "$code" ] || fail "exit code $rc, expected $code: $*"
  # CMake wraps its messages: also try the output on one line.
  local flat
  flat="$(tr -s ' \n' '  ' <<<"$out")"
  for re in "${res[@]}"; do
    grep -Eq -- "$re" <<<"$out" || grep -Eq -- "$re" <<<"$flat" ||
      fail "output does not match '$re': $*"
  done
}
configure_consumer() { # BUILD_DIR ARGS...
  local dir="$1"
  shift
  rm -rf "$dir"
  "$CMAKE" -S "$consumer" -B "$dir" -G "$GENERATOR" \
    -DCMAKE_MAKE_PROGRAM="$MAKE_PROGRAM" -DCONSUMER_MPI="$HAVE_MPI" "$@"
}

case "$step" in
prefix)
  # A fresh install into a temporary prefix, and its layout.
  rm -rf "$prefix"
  "$CMAKE" --install "$PPS_BUILD_DIR" --prefix "$prefix"
  files=(bin/ppsc share/pps/stdlib/zb_h1.pps include/ppsrt/Main.h
    "$LIBDIR/libpps_runtime.a" "$CMAKEDIR/ppsConfig.cmake"
    "$CMAKEDIR/ppsConfigVersion.cmake" "$CMAKEDIR/ppsTargets.cmake"
    "$CMAKEDIR/PpsExecutor.cmake" "$LIBDIR/pkgconfig/pps-runtime.pc")
  if [ "$HAVE_MPI" = ON ]; then
    files+=("$LIBDIR/libpps_runtime_mpi.a" "$CMAKEDIR/pps-component-mpi.cmake"
      "$LIBDIR/pkgconfig/pps-runtime-mpi.pc")
  fi
  if [ "$HAVE_MAN" = ON ]; then
    files+=(share/man/man1/ppsc.1.gz)
  fi
  for f in "${files[@]}"; do
    [ -e "$prefix/$f" ] || fail "not installed: $f"
  done
  # No path of the source or build tree is compiled into ppsc.
  for p in "$PPS_SOURCE_DIR/stdlib" "$PPS_BUILD_DIR/share"; do
    if grep -qF "$p" "$prefix/bin/ppsc"; then fail "ppsc contains $p"; fi
  done
  "$prefix/bin/ppsc" --version
  echo "installed into $prefix: $(du -sk "$prefix" | cut -f1) KiB"
  ;;

consumer-installed)
  # The outside project against the installed prefix only.
  configure_consumer "$WORK/consumer-installed" \
    -DCMAKE_PREFIX_PATH="$prefix" -DEXPECT_PPS_DIR="$prefix/$CMAKEDIR"
  "$CMAKE" --build "$WORK/consumer-installed"
  ;;

consumer-build-tree)
  # The same project against the pps build tree, built and run.
  configure_consumer "$WORK/consumer-build-tree" \
    -Dpps_DIR="$PPS_BUILD_DIR/$CMAKEDIR" \
    -DEXPECT_PPS_DIR="$PPS_BUILD_DIR/$CMAKEDIR"
  "$CMAKE" --build "$WORK/consumer-build-tree"
  expect 0 "rank 3 stage 3: dL/dw" "^ok$" -- \
    "$WORK/consumer-build-tree/consumer" --steps=2
  if [ "$HAVE_MPI" = ON ]; then
    expect 0 "transport mpi" "rank 0 stage 0: dL/dw" "^ok$" -- \
      "$MPIEXEC" -n 4 "$WORK/consumer-build-tree/consumer_mpi" --transport=mpi
  fi
  ;;

relocated)
  # The installed tree copied elsewhere: ppsc finds the stdlib next to
  # itself, not where it was installed or built.
  moved="$WORK/moved/pps"
  rm -rf "$WORK/moved"
  mkdir -p "$WORK/moved"
  cp -a "$prefix" "$moved"
  expect 0 "free of deadlock" -- "$moved/bin/ppsc" lint "$consumer/pipeline.pps"
  # Through a symbolic link from another directory (as from a bin on PATH).
  mkdir -p "$WORK/moved/links"
  ln -sf "$moved/bin/ppsc" "$WORK/moved/links/ppsc"
  expect 0 "free of deadlock" -- "$WORK/moved/links/ppsc" lint "$consumer/pipeline.pps"
  # The stdlib gone: the error says where it looked and what to do.
  mv "$moved/share/pps/stdlib" "$WORK/moved/stdlib-aside"
  expect 1 "error: unknown schedule 'zb_h1'" \
    "note: looked for zb_h1\.pps in $moved/share/pps/stdlib \(next to $moved/bin/ppsc, no such directory\)" \
    "the standard library was not found: set PPS_STDLIB_PATH" -- \
    "$moved/bin/ppsc" lint "$consumer/pipeline.pps"
  # Overrides: PPS_STDLIB_PATH, its empty entry (the default), the older
  # PPS_STDLIB, and -I.
  expect 0 "free of deadlock" -- env PPS_STDLIB_PATH="$WORK/moved/stdlib-aside" \
    "$moved/bin/ppsc" lint "$consumer/pipeline.pps"
  expect 0 "free of deadlock" -- env PPS_STDLIB="$WORK/moved/stdlib-aside" \
    "$moved/bin/ppsc" lint "$consumer/pipeline.pps"
  expect 0 "free of deadlock" -- \
    "$moved/bin/ppsc" lint -I "$WORK/moved/stdlib-aside" "$consumer/pipeline.pps"
  expect 1 "looked for zb_h1\.pps in /nonexistent \(PPS_STDLIB_PATH, no such directory\), $moved/share/pps/stdlib \(next to" -- \
    env PPS_STDLIB_PATH=/nonexistent: "$moved/bin/ppsc" lint "$consumer/pipeline.pps"
  # A near miss is named.
  printf 'pipeline p { ranks 2; microbatches 2; schedule zb_h2x(); }\n' >"$WORK/moved/typo.pps"
  expect 1 "unknown schedule 'zb_h2x' .*did you mean 'zb_h2'\?" -- \
    env PPS_STDLIB_PATH="$WORK/moved/stdlib-aside" "$moved/bin/ppsc" check "$WORK/moved/typo.pps"
  ;;

missing-mpi)
  # A pps without MPI, and requests it cannot meet: configure-time errors.
  nompi="$WORK/nompi"
  rm -rf "$nompi"
  cp -a "$prefix" "$nompi"
  rm -f "$nompi/$CMAKEDIR"/pps-component-mpi*.cmake "$nompi/$LIBDIR/libpps_runtime_mpi.a" \
    "$nompi/$LIBDIR/pkgconfig/pps-runtime-mpi.pc"
  expect 1 "pps_add_executor\(consumer_mpi \.\.\. MPI\): the pps package in .* has no MPI runtime" -- \
    configure_consumer "$WORK/consumer-nompi" -DCMAKE_PREFIX_PATH="$nompi" -DCONSUMER_MPI=ON
  expect 0 "MPI: OFF" -- \
    configure_consumer "$WORK/consumer-nompi" -DCMAKE_PREFIX_PATH="$nompi" -DCONSUMER_MPI=OFF
  expect 1 "pps has no component 'mpi'" -- \
    configure_consumer "$WORK/consumer-nompi" -DCMAKE_PREFIX_PATH="$nompi" \
    -DCONSUMER_COMPONENTS=mpi
  expect 1 "pps has no component 'nosuch' .*installed: " -- \
    configure_consumer "$WORK/consumer-nompi" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCONSUMER_COMPONENTS=nosuch
  if [ "$HAVE_MPI" = ON ]; then
    # One executable, two runtimes: refused, not left to link order.
    expect 1 "PPS_ONE_RUNTIME_PER_EXECUTABLE" -- \
      configure_consumer "$WORK/consumer-nompi" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCONSUMER_LINK_BOTH=ON
  fi
  ;;

by-hand)
  # The recipe of docs/runtime.md ("By hand"), run as written against the
  # installed prefix (on PATH and PKG_CONFIG_PATH, as docs/install.md says).
  dir="$WORK/by-hand"
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$consumer/pipeline.pps" "$dir/schedule.pps"
  cp "$consumer/chain_kernels.cpp" "$dir/my_kernels.cpp"
  export PATH="$prefix/bin:$PATH" PKG_CONFIG_PATH="$prefix/$LIBDIR/pkgconfig"
  # The lines for pps under /usr or /usr/local: the compiler's own search
  # path, which CPATH and LIBRARY_PATH extend.
  export CPATH="$prefix/include" LIBRARY_PATH="$prefix/$LIBDIR"
  awk '/<!-- by-hand recipe: begin -->/{on=1; next}
       /<!-- by-hand recipe: end -->/{on=0}
       on && /^```/{fence=!fence; next}
       on && fence && !/^#/ && NF' "$PPS_SOURCE_DIR/docs/runtime.md" >"$dir/recipe.sh"
  [ -s "$dir/recipe.sh" ] || fail "no recipe found in docs/runtime.md"
  if [ "$HAVE_MPI" != ON ]; then
    grep -v 'mpi' "$dir/recipe.sh" >"$dir/recipe-threads.sh"
    mv "$dir/recipe-threads.sh" "$dir/recipe.sh"
  fi
  cat "$dir/recipe.sh"
  (cd "$dir" && bash -ex recipe.sh) >"$dir/out.txt" 2>&1 || {
    cat "$dir/out.txt"
    fail "the recipe of docs/runtime.md failed"
  }
  cat "$dir/out.txt"
  n_ok=$(grep -c '^ok$' "$dir/out.txt" || true)
  want=1
  if [ "$HAVE_MPI" = ON ]; then want=4; fi
  [ "$n_ok" -ge "$want" ] || fail "expected $want runs ending in ok, got $n_ok"
  grep -q "transport mpi" "$dir/out.txt" || [ "$HAVE_MPI" != ON ] ||
    fail "no MPI run in the recipe"
  ;;

deb)
  # cpack -G DEB, then the package's metadata and an install into an empty
  # root with dpkg (dependencies checked against this system's packages),
  # and ppsc run from there with its stdlib.
  dir="$WORK/deb"
  rm -rf "$dir"
  mkdir -p "$dir"
  (cd "$dir" && "$CPACK" -G DEB --config "$PPS_BUILD_DIR/CPackConfig.cmake" -B "$dir/out")
  deb=$(ls "$dir"/out/pps_*.deb)
  [ -f "$deb" ] || fail "no pps_*.deb"
  ls -l "$dir"/out/*.deb
  dpkg-deb --info "$deb"
  depends=$(dpkg-deb --field "$deb" Depends)
  for want in libfmt-dev libantlr4-runtime libc6 libstdc++6; do
    grep -q "$want" <<<"$depends" || fail "Depends lacks $want: $depends"
  done
  if [ "$HAVE_MPI" = ON ]; then
    for want in libopenmpi-dev openmpi-bin; do
      grep -q "$want" <<<"$depends" || fail "Depends lacks $want: $depends"
    done
  fi
  dpkg-deb --contents "$deb" >"$dir/contents.txt"
  for f in ./usr/bin/ppsc ./usr/share/pps/stdlib/zb_h1.pps ./usr/include/ppsrt/Main.h \
    "./usr/$CMAKEDIR/ppsConfig.cmake" "./usr/$LIBDIR/libpps_runtime.a" \
    "./usr/$LIBDIR/pkgconfig/pps-runtime.pc"; do
    grep -qF " $f" "$dir/contents.txt" || fail "the package lacks $f"
  done
  # An empty root whose dpkg database is this system's: `dpkg --root`
  # refuses the package unless every declared dependency is installed.
  root="$dir/root"
  mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
  cp /var/lib/dpkg/status "$root/var/lib/dpkg/status"
  touch "$root/var/lib/dpkg/available"
  # (their file lists stay here; empty ones keep dpkg from warning per package)
  dpkg-query --admindir="$root/var/lib/dpkg" -W -f '${db:Status-Abbrev} ${binary:Package}\n' |
    awk '$1 ~ /^.i/ {print $2}' | while read -r p; do
    : >"$root/var/lib/dpkg/info/$p.list"
  done
  if [ "$(id -u)" = 0 ]; then
    dpkg --root="$root" --log=/dev/null -i "$deb"
  else
    echo "not root: unpacking with dpkg-deb -x (dependencies not checked)"
    dpkg-deb -x "$deb" "$root"
  fi
  expect 0 "^ppsc \(pps\) [0-9]" -- "$root/usr/bin/ppsc" --version
  expect 0 "free of deadlock" -- "$root/usr/bin/ppsc" lint "$consumer/pipeline.pps"
  grep -q "prefix=/usr$" "$root/usr/$LIBDIR/pkgconfig/pps-runtime.pc" ||
    fail "pps-runtime.pc in the package does not say prefix=/usr"
  echo "package: $(basename "$deb"), $(stat -c %s "$deb") bytes"
  ;;

*)
  fail "unknown step '$step'"
  ;;
esac
