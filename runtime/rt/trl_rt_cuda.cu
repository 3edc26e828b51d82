// trl_rt_cuda — the CUDA device layer of generated programs (issue 4): the arena is one
// cudaMalloc, copies are cudaMemcpy, kernels are launched by TRL_LAUNCH (trl_rt.h) and checked
// through trl_launch_status (trl_cuda_kernel_check before a site's first launch), matrix
// products go to cuBLAS.  Compiled by nvcc together with
// trl_rt_common.cpp; host builds use trl_rt_host.cpp instead.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdlib.h>

#include <string>
#include <utility>
#include <vector>

#include "rt/trl_rt_internal.h"

namespace {

struct CudaState {
    cublasHandle_t blas = nullptr;
    // --profile: a pair of events around each launch and product (trl_prof_gpu_begin / end),
    // with the region and category to charge; read back by prof_flush.
    std::vector<cudaEvent_t> events;           // 2 per pending pair, reused
    std::vector<std::pair<int, int>> pending;  // (region, category)
};

/** Pairs of events pending at most (then trl_prof_gpu_begin reads them back). */
constexpr size_t kProfPairs = 4096;

int cuda_error(trl_ctx *ctx, cudaError_t e, const char *what) {
    return trl_rt::set_error(ctx, TRL_EDEVICE, std::string(what) + ": " + cudaGetErrorString(e));
}

/** Wait for the last pending event and charge every pair's GPU time to its region. */
void prof_flush(trl_ctx *ctx) {
    CudaState *st = static_cast<CudaState *>(ctx->device);
    if (!st || st->pending.empty()) return;
    cudaEventSynchronize(st->events[2 * st->pending.size() - 1]);
    for (size_t k = 0; k < st->pending.size(); ++k) {
        float ms = 0;
        if (cudaEventElapsedTime(&ms, st->events[2 * k], st->events[2 * k + 1]) == cudaSuccess)
            trl_prof_charge(st->pending[k].first, st->pending[k].second, 1e-3 * ms);
    }
    st->pending.clear();
}

/** While profiling, before a blocking call: wait for the queued device work (charged as waiting)
 *  and read the events back, so that the call's own time is its own. */
void prof_drain(trl_ctx *ctx) {
    if (!trl_prof_on) return;
    const long long t0 = trl_prof_begin();
    cudaDeviceSynchronize();
    trl_prof_end(t0, TRL_PROF_WAITING);
    prof_flush(ctx);
}

}  // namespace

namespace trl_rt {

const char *device_name() { return "cuda"; }
bool device_memory_is_host() { return false; }

int device_init(trl_ctx *ctx) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) return cuda_error(ctx, e, "no usable CUDA device");
    if (count == 0) return set_error(ctx, TRL_EDEVICE, "no CUDA device is visible");
    CudaState *st = new CudaState;
    cublasStatus_t bs = cublasCreate(&st->blas);
    if (bs != CUBLAS_STATUS_SUCCESS) {
        delete st;
        return set_error(ctx, TRL_EDEVICE, std::string("cublasCreate: ") + cublasGetStatusString(bs));
    }
    ctx->device = st;
    return TRL_OK;
}

int device_alloc_arena(trl_ctx *ctx, size_t bytes) {
    void *p = nullptr;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 256);
    if (e != cudaSuccess)
        return cuda_error(ctx, e,
                          ("cannot allocate the arena of " + std::to_string(bytes) + " bytes on the device").c_str());
    e = cudaMemset(p, 0, bytes ? bytes : 256);
    if (e != cudaSuccess) return cuda_error(ctx, e, "cudaMemset of the arena");
    ctx->arena = p;
    ctx->arena_bytes = bytes;
    return TRL_OK;
}

int device_alloc_block(trl_ctx *ctx, size_t bytes, void **slot, size_t *slot_bytes, const char *what) {
    void *p = nullptr;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 256);
    if (e != cudaSuccess)
        return cuda_error(
            ctx, e,
            ("cannot allocate the " + std::string(what) + " of " + std::to_string(bytes) + " bytes on the device")
                .c_str());
    e = cudaMemset(p, 0, bytes ? bytes : 256);
    if (e != cudaSuccess) {
        cudaFree(p);
        return cuda_error(ctx, e, ("cudaMemset of the " + std::string(what)).c_str());
    }
    if (*slot) cudaFree(*slot);
    *slot = p;
    *slot_bytes = bytes ? bytes : 256;
    return TRL_OK;
}

void device_release(trl_ctx *ctx) {
    if (ctx->arena) cudaFree(ctx->arena);
    ctx->arena = nullptr;
    if (ctx->workspace) cudaFree(ctx->workspace);
    ctx->workspace = nullptr;
    if (ctx->frames) cudaFree(ctx->frames);
    ctx->frames = nullptr;
    if (ctx->stage) cudaFree(ctx->stage);
    ctx->stage = nullptr;
    CudaState *st = static_cast<CudaState *>(ctx->device);
    if (st) {
        if (st->blas) cublasDestroy(st->blas);
        for (cudaEvent_t e : st->events) cudaEventDestroy(e);
        delete st;
    }
    ctx->device = nullptr;
}

}  // namespace trl_rt

extern "C" {

int trl_to_host(trl_ctx *ctx, void *dst, const void *device_src, size_t bytes) {
    if (!bytes) return TRL_OK;
    prof_drain(ctx);
    trl_rt::ProfScope prof(TRL_PROF_COPIES);
    cudaError_t e = cudaMemcpy(dst, device_src, bytes, cudaMemcpyDeviceToHost);
    return e == cudaSuccess ? TRL_OK : cuda_error(ctx, e, "cudaMemcpy to the host");
}

int trl_to_device(trl_ctx *ctx, void *device_dst, const void *src, size_t bytes) {
    if (!bytes) return TRL_OK;
    prof_drain(ctx);
    trl_rt::ProfScope prof(TRL_PROF_COPIES);
    cudaError_t e = cudaMemcpy(device_dst, src, bytes, cudaMemcpyHostToDevice);
    return e == cudaSuccess ? TRL_OK : cuda_error(ctx, e, "cudaMemcpy to the device");
}

int trl_synchronize(trl_ctx *ctx) {
    cudaError_t e = cudaDeviceSynchronize();
    prof_flush(ctx);
    return e == cudaSuccess ? TRL_OK : cuda_error(ctx, e, "cudaDeviceSynchronize");
}

void trl_prof_gpu_begin(trl_ctx *ctx) {
    CudaState *st = static_cast<CudaState *>(ctx->device);
    if (!st) return;
    if (st->pending.size() == kProfPairs) prof_flush(ctx);
    const size_t k = st->pending.size();
    while (st->events.size() < 2 * (k + 1)) {
        cudaEvent_t e;
        if (cudaEventCreate(&e) != cudaSuccess) return;  // no pair: this launch goes untimed
        st->events.push_back(e);
    }
    cudaEventRecord(st->events[2 * k]);
    st->pending.push_back({trl_prof_region_now, -1});
}

void trl_prof_gpu_end(trl_ctx *ctx, int category) {
    CudaState *st = static_cast<CudaState *>(ctx->device);
    if (!st || st->pending.empty() || st->pending.back().second != -1) return;
    cudaEventRecord(st->events[2 * st->pending.size() - 1]);
    st->pending.back().second = category;
}

int trl_cuda_status(trl_ctx *ctx, int cuda_status, const char *what) {
    cudaError_t e = static_cast<cudaError_t>(cuda_status);
    return e == cudaSuccess ? TRL_OK : cuda_error(ctx, e, what);
}

int trl_launch_status(trl_ctx *ctx, const char *kernel) {
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? TRL_OK : cuda_error(ctx, e, (std::string("launch of kernel ") + kernel).c_str());
}

int trl_rows_block(long long rows) {
    static const long long cap = [] {
        const char *v = getenv("TRLC_ROWS_THREADS");
        long long c = v && *v ? atoll(v) : TRL_ROWS_DEFAULT_BLOCK;
        c = c < 32 ? 32 : c > TRL_ROWS_MAX_BLOCK ? TRL_ROWS_MAX_BLOCK : c / 32 * 32;
        return c;
    }();
    const long long want = TRL_GRID_BLOCK(rows < 1 ? 1 : rows);  // rounded up to a warp, at most 256
    return (int)(want < cap ? want : cap);
}

int trl_cuda_kernel_check(trl_ctx *ctx, const void *func, const char *kernel, int block) {
    cudaFuncAttributes a;
    cudaError_t e = cudaFuncGetAttributes(&a, func);
    if (e != cudaSuccess) {
        int dev = 0, major = 0, minor = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
        return cuda_error(ctx, e,
                          (std::string("kernel ") + kernel + " cannot run on this GPU (compute capability " +
                           std::to_string(major) + "." + std::to_string(minor) + "; rebuild with --cuda-arch=sm_" +
                           std::to_string(major) + std::to_string(minor) + ")")
                              .c_str());
    }
    if (a.maxThreadsPerBlock < block)
        return trl_rt::set_error(ctx, TRL_EDEVICE,
                                 std::string("kernel ") + kernel + " runs at most " +
                                     std::to_string(a.maxThreadsPerBlock) + " threads per block on this GPU (" +
                                     std::to_string(a.numRegs) + " registers, " + std::to_string(a.localSizeBytes) +
                                     " bytes of local memory per thread); its launch needs " + std::to_string(block));
    return TRL_OK;
}

}  // extern "C"

int trl_rt::device_gemm(trl_ctx *ctx, int dtype, bool ta, long long m, long long n, long long k, const void *a,
                        const void *b, void *c) {
    cublasHandle_t h = static_cast<CudaState *>(ctx->device)->blas;
    // Row-major C = op(A)·B is column-major C^T = B^T·op(A)^T: swap the operands and m / n; A
    // stored [k, m] (ta) is column-major op(A) itself, so cuBLAS transposes it (ld m).
    const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int lda = (int)(ta ? m : (k ? k : 1));
    if (trl_prof_on) trl_prof_gpu_begin(ctx);  // the product's GPU time (the call's is counted too)
    cublasStatus_t s;
    if (dtype == TRL_F32) {
        const float one = 1, zero = 0;
        s = cublasSgemm(h, CUBLAS_OP_N, opa, (int)n, (int)m, (int)k, &one, static_cast<const float *>(b), (int)n,
                        static_cast<const float *>(a), lda, &zero, static_cast<float *>(c), (int)n);
    } else {  // TRL_F64 (trl_gemm checked the dtype)
        const double one = 1, zero = 0;
        s = cublasDgemm(h, CUBLAS_OP_N, opa, (int)n, (int)m, (int)k, &one, static_cast<const double *>(b), (int)n,
                        static_cast<const double *>(a), lda, &zero, static_cast<double *>(c), (int)n);
    }
    if (trl_prof_on) trl_prof_gpu_end(ctx, TRL_PROF_PRODUCTS);
    if (s != CUBLAS_STATUS_SUCCESS)
        return trl_rt::set_error(ctx, TRL_EDEVICE,
                                 "cuBLAS gemm failed (m = " + std::to_string(m) + ", n = " + std::to_string(n) +
                                     ", k = " + std::to_string(k) + "): " + cublasGetStatusString(s));
    return TRL_OK;
}
