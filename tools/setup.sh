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
