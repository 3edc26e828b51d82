#!/usr/bin/env bash
# tools/setup.sh — install everything trlc needs to build and test on a fresh Debian machine.
#
# Idempotent: packages already present are skipped, so a second run takes seconds.
# Needs root (or sudo) for apt-get; Python packages go to the active python3's pip.
set -euo pipefail

APT_PACKAGES=(
    cmake ninja-build g++ make
    libisl-dev
    libmimalloc-dev  # trlc's allocator (CMakeLists.txt: TRLC_MIMALLOC)
    llvm-14-dev libclang-14-dev clang-14 llvm-14-tools libclang-rt-14-dev
    # Clang's OpenMP runtime: a host build with CXX=clang++ links -fopenmp against it
    # (lit driver/compile-parts-clang.test).
    libomp-14-dev
    # LLD links the generated programs (compiler/driver/build_program.cpp: host_linker_flag),
    # three times as fast as GNU ld.
    lld
    nlohmann-json3-dev libcli11-dev libgtest-dev
    libssl-dev
    libopenblas-dev libxsmm-dev
    libmpfr-dev
    ccache
    # Open MPI: data-parallel programs (trlc --distributed=mpi, runtime/rt/trl_dist_mpi.cpp) and
    # their tests (mpiexec).  Optional: CMake configures trlc without it, and --distributed=mpi
    # then says to install it.  As root, mpirun needs --allow-run-as-root or
    # OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 (the tests set both).
    libopenmpi-dev openmpi-bin
)
# torch: the PyTorch autograd reference of test/gradcheck/policy_gradient.py (lit
# autodiff/policy-gradient.test requires it).  PyPI serves the CUDA build with its nvidia-*
# wheels (~4 GB on disk; here the install took 1 min 46 s); the test runs it on the CPU.
PIP_PACKAGES=(lit numpy gymnasium matplotlib torch)

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing Debian packages: ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
    echo "setup: Debian packages present"
fi

PY=${PYTHON:-python3}
pip_missing=()
for p in "${PIP_PACKAGES[@]}"; do
    if ! "$PY" -c "import $p" 2>/dev/null; then pip_missing+=("$p"); fi
done
if [ ${#pip_missing[@]} -gt 0 ]; then
    echo "setup: installing Python packages: ${pip_missing[*]}"
    "$PY" -m pip install -q "${pip_missing[@]}"
else
    echo "setup: Python packages present"
fi

# isl as a static library optimized as one program (link-time optimization), for trlc's front
# end: Debian's libisl.so is position-independent code whose every call between its functions
# goes through the PLT, and isl makes millions of small calls (isl_space_dim, isl_seq_*).  The
# same isl release (the version of Debian's libisl-dev, from Debian's source package) and the
# same GMP arithmetic, built static and linked with -flto into one relocatable object: PPO
# CartPole's front end (--emit=cuda, one core, least of 3) 3.04 s with Debian's libisl, 2.50 s
# static, 2.15 s static with LTO; the same schedules and sources, byte for byte.  isl_tab_pip.o
# stays a separate object: trlc wraps the scheduler's calls of its
# isl_tab_basic_set_non_trivial_lexmin with the linker's --wrap (the per-ILP budget,
# compiler/schedule/schedule_pdg.cpp), which only sees calls between objects.  (isl's
# small-integer arithmetic, --with-int=imath-32, was faster still for PPO, 1.92 s, but 4x
# slower when isl schedules a whole program at once, whose ILPs hold values past 32 bits: PPO
# with --outer-band none 6.4 -> 16.6 s.)  Installed under /opt/trlc/isl (CMakeLists.txt:
# TRLC_ISL_PREFIX); when it cannot be built, CMake uses the system libisl and says so.  About 45 s
# on two cores (41-47 s measured), once per machine (a stamp file names the build).
ISL_PREFIX=${TRLC_ISL_PREFIX:-/opt/trlc/isl}
isl_version=$(dpkg-query -W -f='${Version}' libisl-dev)
isl_upstream=${isl_version%%-*}
isl_flags="-O2 -fPIE -flto=auto"
isl_stamp="isl $isl_upstream gmp static, $isl_flags, one relocatable object + isl_tab_pip.o"
if [ -f "$ISL_PREFIX/lib/libisl.a" ] && [ "$(cat "$ISL_PREFIX/trlc-stamp" 2>/dev/null)" = "$isl_stamp" ]; then
    echo "setup: isl (static, LTO) present in $ISL_PREFIX"
else
    echo "setup: building isl $isl_upstream (static, LTO) into $ISL_PREFIX"
    # an older build of ours (its stamp says so) goes first
    if [ -f "$ISL_PREFIX/trlc-stamp" ]; then $SUDO rm -rf "$ISL_PREFIX"; fi
    isl_tmp=$(mktemp -d)
    fetch_isl() { (cd "$isl_tmp" && apt-get source -qq --download-only "isl=$isl_version" >/dev/null 2>&1); }
    if ! fetch_isl; then
        # Debian's source packages: a deb-src entry for the mirror and suite of the binary ones.
        . /etc/os-release
        uri=$(grep -hoE '^(URIs: *|deb +)https?://[^ ]+' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list \
              2>/dev/null | head -1 | sed -E 's/^(URIs: *|deb +)//' || true)
        printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
            "${uri:-http://deb.debian.org/debian}" "$VERSION_CODENAME" |
            $SUDO tee /etc/apt/sources.list.d/trlc-deb-src.sources >/dev/null
        $SUDO apt-get update -qq || true
        fetch_isl || true
    fi
    orig=$(ls "$isl_tmp"/isl_"$isl_upstream".orig.tar.* 2>/dev/null | head -1)
    src="$isl_tmp/isl-$isl_upstream"
    if [ -n "$orig" ] && tar xf "$orig" -C "$isl_tmp" &&
        (cd "$src" &&
            ./configure -q --with-int=gmp --disable-shared --enable-static --prefix="$ISL_PREFIX" \
                CFLAGS="$isl_flags" AR=gcc-ar RANLIB=gcc-ranlib NM=gcc-nm >/dev/null 2>&1 &&
            make -s -j"$(nproc)" gitversion.h libisl.la >/dev/null 2>&1 &&
            mkdir objs && cd objs && ar x ../.libs/libisl.a &&
            gcc $isl_flags -r -flinker-output=nolto-rel -nostdlib -o isl_lto.o $(ls ./*.o | grep -v '/isl_tab_pip.o$') &&
            gcc $isl_flags -r -flinker-output=nolto-rel -nostdlib -o isl_tab_pip_lexmin.o isl_tab_pip.o &&
            ar rcs libisl.a isl_lto.o isl_tab_pip_lexmin.o && cd .. &&
            stage="$isl_tmp/stage" &&
            make -s DESTDIR="$stage" install-pkgincludeHEADERS install-nodist_pkgincludeHEADERS \
                install-pkgconfigDATA >/dev/null 2>&1 &&
            install -D -m 644 objs/libisl.a "$stage$ISL_PREFIX/lib/libisl.a" &&
            $SUDO mkdir -p "$ISL_PREFIX" && $SUDO cp -R "$stage$ISL_PREFIX/." "$ISL_PREFIX/"); then
        echo "$isl_stamp" | $SUDO tee "$ISL_PREFIX/trlc-stamp" >/dev/null
        echo "setup: isl built"
    else
        echo "setup: warning: could not build isl from Debian's source package; trlc will use the" \
             "system libisl, its front end about 30 % slower" >&2
    fi
    rm -rf "$isl_tmp"
fi
