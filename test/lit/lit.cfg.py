# lit configuration for trlc: every `.trl` and `.test` file under test/lit is a
# test; RUN lines use %trlc, %trl-opt, %python, FileCheck and not.
import os
import lit.formats

config.name = "trlc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".trl", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.trlc_obj_root, "test", "lit")

bindir = os.path.join(config.trlc_obj_root, "compiler")
toolsdir = os.path.join(config.trlc_obj_root, "tools")
config.substitutions.append(("%trlc", os.path.join(bindir, "trlc")))
config.substitutions.append(("%trl-opt", os.path.join(toolsdir, "trl-opt")))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%expect-exit", config.python_executable + " " + os.path.join(config.test_source_root, "Inputs", "expect_exit.py")))
config.substitutions.append(("%stdlib", os.path.join(config.trlc_src_root, "dsl")))
config.substitutions.append(("%samples", os.path.join(config.trlc_src_root, "samples")))
config.substitutions.append(("%tools", os.path.join(config.trlc_src_root, "tools")))
# Generated programs (test/lit/codegen): the host C++ compiler and the runtime's headers.
config.substitutions.append(("%host_cxx", os.environ.get("CXX", "c++")))
config.substitutions.append(("%runtime", os.path.join(config.trlc_src_root, "runtime")))
import shutil
# Clang as the host compiler (tools/setup.sh installs clang-14): feature "clang", %clangxx.
clangxx = shutil.which("clang++") or shutil.which("clang++-14")
if clangxx:
    config.available_features.add("clang")
    config.substitutions.append(("%clangxx", clangxx))
if shutil.which("nvcc"):
    config.available_features.add("nvcc")  # compile-only: no test runs a GPU
    # NCCL (trlc --distributed=nccl): nccl.h where trlc looks for it (driver/build_program.cpp,
    # find_nccl_header): the toolkit of nvcc, then the system's include directories.
    toolkit = os.path.dirname(os.path.dirname(os.path.realpath(shutil.which("nvcc"))))
    if any(os.path.exists(os.path.join(d, "nccl.h")) for d in
           [os.path.join(toolkit, "include"), os.path.join(toolkit, "targets", "x86_64-linux", "include"),
            "/usr/local/cuda/include", "/usr/include", "/usr/local/include"]):
        config.available_features.add("nccl")

# Data-parallel programs (trlc --distributed=mpi): "REQUIRES: mpi" and `%mpirun -np N PROG`
# (mpiexec with --oversubscribe for Open MPI: more ranks than cores), when trlc was configured
# with MPI (test/CMakeLists.txt).  Open MPI refuses root without the two variables below.
if getattr(config, "mpiexec", ""):
    config.available_features.add("mpi")
    mpirun = " ".join([config.mpiexec] + [f for f in config.mpiexec_preflags.split(";") if f])
    config.substitutions.append(("%mpirun", mpirun))
    config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"

path = os.pathsep.join([config.llvm_tools_dir, bindir, config.environment.get("PATH", os.environ["PATH"])])
config.environment["PATH"] = path
config.environment["FILECHECK_OPTS"] = "-enable-var-scope --allow-unused-prefixes=false"
# Diagnostics are tested without colour; a test that wants colour asks for it.
config.environment["TERM"] = "dumb"
# Every -o builds the program: the build cache (compiler/driver/build_cache.h) stays off, so no
# test passes on an executable an earlier run built; driver/build-cache.test turns it on.
config.environment["TRLC_CACHE_DIR"] = "off"
for var in ("PYTHONPATH", "HOME"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
