// trl_dist_nccl — the trl_dist_layer of `trlc --target=cuda --distributed=nccl` (runtime/trl_rt.h,
// dsl/README.md §7.12): the gradients' mean over the ranks by NCCL, in the GPUs' memory, on the
// stream the program's kernels run on; everything else (launch, ranks, the records sent to rank
// 0, the parameter digest) through MPI, the layer of runtime/rt/trl_dist_mpi.cpp, which the
// program links too.  Compiled (by nvcc, with MPI's flags) only into programs built with
// --distributed=nccl; linked with -lnccl from the CUDA toolkit.
//
// The calls, as PyTorch DDP, Horovod and JAX multi-host make them (NCCL 2 user guide,
// "Creating a communicator with options" / "Using NCCL with MPI"):
//   init       trl_dist_mpi.init (MPI_Init_thread, the rank, the size, the node-local rank);
//              cudaSetDevice(local rank mod the visible devices), before the runtime creates its
//              CUDA context (device_init runs after dist_init); rank 0's ncclGetUniqueId sent to
//              every rank with MPI_Bcast; ncclCommInitRank(size, id, rank).
//   allreduce_mean_device
//              ncclAllReduce in place with ncclAvg (NCCL >= 2.10) on the default stream, where
//              the kernels that computed the gradient and the optimizer that reads it run: no
//              host synchronization, no copy.  NCCL chooses the order of the sum (ring or tree
//              by size and topology), so a GPU run of N >= 2 ranks matches `trlc --interpret
//              --ranks N` within a tolerance, not bit for bit (§7.12); one rank never calls it.
//   allgather, gather, error of MPI; finalize: ncclCommDestroy, then MPI's; abort:
//              ncclCommAbort (a rank waiting inside a collective is released), then MPI_Abort.
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdio>

#include "trl_rt.h"

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 10, 0)
#error "trlc --distributed=nccl needs NCCL 2.10 or later (ncclAvg)"
#endif

namespace trl_dist_nccl_impl {
namespace {

ncclComm_t g_comm = nullptr;
char g_error[512];  // error()'s text for NCCL and CUDA failures
bool g_own_error = false;

int fail(const char *what, const char *text) {
    int rank = -1, initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank >= 0)
        std::snprintf(g_error, sizeof g_error, "rank %d: %s: %s", rank, what, text);
    else
        std::snprintf(g_error, sizeof g_error, "%s: %s", what, text);
    g_own_error = true;
    return 1;
}

int nccl_init(int *argc, char ***argv, int *rank, int *size, int *local_rank, char *err, size_t errlen) {
    if (trl_dist_mpi.init(argc, argv, rank, size, local_rank, err, errlen) != 0) return 1;
    int devices = 0, rc = 0;
    cudaError_t ce = cudaGetDeviceCount(&devices);
    if (ce != cudaSuccess) {
        rc = fail("cudaGetDeviceCount", cudaGetErrorString(ce));
    } else if (devices == 0) {
        rc = fail("cudaGetDeviceCount", "no CUDA device is visible");
    } else if ((ce = cudaSetDevice(*local_rank % devices)) != cudaSuccess) {
        rc = fail("cudaSetDevice (the node-local rank's GPU)", cudaGetErrorString(ce));
    }
    // Every rank takes part in the broadcast, also one whose device failed (the others would
    // wait in it): its id is then not used.
    ncclUniqueId id{};
    ncclResult_t nr = ncclSuccess;
    if (*rank == 0 && rc == 0 && (nr = ncclGetUniqueId(&id)) != ncclSuccess)
        rc = fail("ncclGetUniqueId", ncclGetErrorString(nr));
    int mrc = MPI_Bcast(&id, static_cast<int>(sizeof id), MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rc == 0 && mrc != MPI_SUCCESS) rc = fail("MPI_Bcast of NCCL's unique id", "failed");
    // A rank that failed so far reports it to every rank, so that none waits in
    // ncclCommInitRank for it.
    int failed = rc, any = 0;
    if (MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS && !rc)
        rc = fail("MPI_Allreduce of the ranks' set-up status", "failed");
    if (!rc && any) rc = fail("ncclCommInitRank", "another rank failed to set up its GPU or NCCL's id");
    if (!rc && (nr = ncclCommInitRank(&g_comm, *size, id, *rank)) != ncclSuccess)
        rc = fail("ncclCommInitRank", ncclGetErrorString(nr));
    if (rc && err && errlen) std::snprintf(err, errlen, "%s", g_error);
    return rc;
}

int nccl_allreduce_mean_device(void *data, long long count, int dtype, void *stream) {
    if (dtype != TRL_F32 && dtype != TRL_F64) return fail("ncclAllReduce", "a dtype other than f32, f64");
    ncclResult_t nr =
        ncclAllReduce(data, data, static_cast<size_t>(count), dtype == TRL_F32 ? ncclFloat32 : ncclFloat64, ncclAvg,
                      g_comm, static_cast<cudaStream_t>(stream));
    if (nr != ncclSuccess) {
        const char *last = g_comm ? ncclGetLastError(g_comm) : nullptr;
        return fail("ncclAllReduce", last && *last ? last : ncclGetErrorString(nr));
    }
    return 0;
}

int nccl_allgather(const void *send, unsigned long long bytes, void *recv) {
    g_own_error = false;
    return trl_dist_mpi.allgather(send, bytes, recv);
}

int nccl_gather(const void *send, unsigned long long bytes, unsigned long long *sizes, void **recv) {
    g_own_error = false;
    return trl_dist_mpi.gather(send, bytes, sizes, recv);
}

const char *nccl_error() { return g_own_error ? g_error : trl_dist_mpi.error(); }

void nccl_finalize() {
    if (g_comm) ncclCommDestroy(g_comm);
    g_comm = nullptr;
    trl_dist_mpi.finalize();
}

void nccl_abort(int code) {
    if (g_comm) ncclCommAbort(g_comm);
    g_comm = nullptr;
    trl_dist_mpi.abort(code);
}

}  // namespace
}  // namespace trl_dist_nccl_impl

extern "C" const trl_dist_layer trl_dist_nccl = {
    "nccl",
    trl_dist_nccl_impl::nccl_init,
    trl_dist_nccl_impl::nccl_allgather,
    trl_dist_nccl_impl::nccl_gather,
    trl_dist_nccl_impl::nccl_error,
    trl_dist_nccl_impl::nccl_finalize,
    trl_dist_nccl_impl::nccl_abort,
    trl_dist_nccl_impl::nccl_allreduce_mean_device,
};
