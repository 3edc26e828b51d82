#pragma once
// trl_gen — what every program trlc generates defines after its own constants: the helpers
// and run-time checks of generated code, kept here instead of as text in the compiler.
// Included by generated code (codegen/expr_emitter.h's prelude()) after kArenaBytes (the
// arena's size, which the error record follows) and kTrlFiles (the program's source paths,
// which error messages name); not a standalone header.  Host (C++/OpenMP) and device (nvcc).
//
// Contents: TRLG_FRAME / TRLG_LOCAL (kernel locals: device frames, host stack or heap),
// TRLG_SEQ (no unrolling by NVVM), trlg_orthogonal_f64 (out of line on the device), and the
// run-time errors of the reference interpreter: a failing check (trlg_chk_i32, trlg_idiv,
// trlg_imod, trlg_ipow, trlg_f2i) calls trlg_raise, which records the first error in the arena
// tail inside a kernel (reported by trlg_check, TRLG_SYNC) or reports it at once
// ("path:line:col: error: message", exit 1).
// The element kernels shared with the interpreter are in trl_ops.h.
//
// Example (generated): `int32_t r = trlg_idiv(a, b, arena, 0, 12, 9);` raises "integer division
// by zero" at file 0, line 12, column 9 when b == 0.

// ---- locals of kernels (codegen/expr_emitter.h, KernelFrame and kStackArrayBytes).  In device
// code (nvcc's device pass, or the host under TRL_CUDA_EMU) a kernel's arrays beyond the
// private budget live in its thread's frame: TRLG_FRAME(bytes), before the kernel's
// TRL_KERNEL_INDEX on its line, points trlg_frame at this thread's `bytes` of trlg_frames (one
// frame per thread of the launch's grid, TRL_GRID_THREADS; run_program sizes and sets the
// region with trlg_set_frames), and
// TRLG_LOCAL(T, name, n, offset) is the array at `offset` in it.  On the host the same line is
// a stack array, or above 64 KiB (TRLG_LARGE_LOCAL, and TRLG_HEAP_LOCAL in host functions) a
// per-thread heap buffer: a few [2048, 256] f32 intermediates overflow an 8 MiB thread stack
// (every element is written before it is read, so keeping them between calls is harmless).  A
// thread_local array would sit in the static TLS block, which glibc carves out of every new
// thread's stack: a large one makes worker threads fail to start; only the pointer is
// thread_local here.
#if defined(__CUDACC__)
__device__ char *trlg_frames;
#elif defined(TRL_CUDA_EMU)
static char *trlg_frames;
#endif
#define TRLG_HEAP_LOCAL(T, name, n)                                                                                    \
    static thread_local T *name##_heap = nullptr;                                                                      \
    if (!name##_heap) name##_heap = static_cast<T *>(trl_scratch_alloc(sizeof(T) * (n)));                              \
    T *const name = name##_heap
#if defined(__CUDA_ARCH__) || defined(TRL_CUDA_EMU)
#define TRLG_FRAME(bytes)                                                                                              \
    char *const trlg_frame = trlg_frames + ((long long)blockIdx.x * blockDim.x + threadIdx.x) * (long long)(bytes);
#define TRLG_LOCAL(T, name, n, offset) T *const name = (T *)(trlg_frame + (offset))
#define TRLG_LARGE_LOCAL(T, name, n, offset) TRLG_LOCAL(T, name, n, offset)
#else
#define TRLG_FRAME(bytes)
#define TRLG_LOCAL(T, name, n, offset) T name[n]
#define TRLG_LARGE_LOCAL(T, name, n, offset) TRLG_HEAP_LOCAL(T, name, n)
#endif
/* The frames of every kernel thread: `bytes` of device memory (trl_frames), made trlg_frames
 * before the first launch.  Nothing on the host, whose kernels keep their arrays. */
static void trlg_set_frames(trl_ctx *ctx, size_t bytes) {
#if defined(__CUDACC__) || defined(TRL_CUDA_EMU)
    void *p = nullptr;
    TRL_CHECK(trl_frames(ctx, bytes, &p));
#if defined(__CUDACC__)
    TRL_CHECK(trl_cuda_status(ctx, (int)cudaMemcpyToSymbol(trlg_frames, &p, sizeof p),
                              "cudaMemcpyToSymbol of the kernel frames"));
#else
    trlg_frames = static_cast<char *>(p);
#endif
#else
    (void)ctx, (void)bytes;
#endif
}
// ---- TRLG_PROGRAM_HASH(h): the program's hash in kProgramInfo (trl_program_info::program_hash).
// In a compile unit of `trlc -o` (-DTRL_UNIT, compiler/codegen/compile_parts.h) it is the
// variable that the driver compiles alone (driver/build_program.cpp), so that the unit holding
// kProgramInfo does not change with every kernel the hash covers.
#if defined(TRL_UNIT)
extern "C" const unsigned long long trlg_program_hash;
#define TRLG_PROGRAM_HASH(h) trlg_program_hash
#else
#define TRLG_PROGRAM_HASH(h) (h)
#endif
// ---- TRLG_SEQ before a loop: not unrolled by NVVM (each loop runs sequentially in one thread;
// unrolling the many long static loops of a training program's kernels made nvcc's optimized
// build take minutes per kernel).  Nothing on the host.
#ifdef __CUDA_ARCH__
#define TRLG_SEQ _Pragma("unroll 1")
#else
#define TRLG_SEQ
#endif
// ---- TRLG_SEQ_COLD: TRLG_SEQ in a kernel of an -O3 compile part that does little of the work
// (compiler/codegen/compile_parts.h, kNoPeelShare): its loops are not unrolled on the host
// either, so that GCC -O3 does not peel them completely (PPO CartPole's part 1 compiled 22 %
// faster, its gradient region as fast).
#if defined(__CUDA_ARCH__)
#define TRLG_SEQ_COLD _Pragma("unroll 1")
#elif defined(__clang__)
#define TRLG_SEQ_COLD _Pragma("clang loop unroll(disable)")
#elif defined(__GNUC__)
#define TRLG_SEQ_COLD _Pragma("GCC unroll 1")
#else
#define TRLG_SEQ_COLD
#endif
// ---- a row-split kernel's publication (compiler/codegen/row_split.h): this thread's elements
// [lo, hi) of src copied into the workspace's publish region at dst, then a barrier of the
// kernel's threads (TRL_ROW_BARRIER: every thread of the block runs this statement), after
// which `T *const name` (= dst) holds every thread's rows.  One line per publication.
template <class T>
TRL_HOST_DEVICE inline T *trlg_publish(T *dst, const T *src, long long lo, long long hi) {
    for (long long i = lo; i < hi; ++i) dst[i] = src[i];
    return dst;
}
#define TRLG_PUBLISH(T, name, dst, src, lo, hi)                                                                        \
    T *const name = trlg_publish((T *)(dst), (src), (lo), (hi));                                                       \
    TRL_ROW_BARRIER()
// ---- orthogonal(): one out-of-line copy on the device.  Inlined at each call with its
// constant shape, NVVM specialised and unrolled the Householder loops per call (~10 s of CPU
// for the six calls of an actor-critic's initializer).  Same code on the host.
#ifdef __CUDA_ARCH__
#define TRLG_DEVICE_NOINLINE __noinline__
#else
#define TRLG_DEVICE_NOINLINE
#endif
TRL_HOST_DEVICE TRLG_DEVICE_NOINLINE inline void trlg_orthogonal_f64(trl::RngKey key, long long rows, long long cols,
                                                                     double gain, double *out, double *work) {
    trl::orthogonal_f64(key, rows, cols, gain, out, work);
}
// ---- run-time errors: a failing check in a kernel records the first error in the arena tail
// (device, or a split of a launch over the thread team); the host reports it after the launch.  Elsewhere it is reported
// at once.  Messages are those of the reference interpreter.
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdio.h>
enum {
    TRLG_E_INDEX = 1,
    TRLG_E_OVERFLOW,
    TRLG_E_DIV0,
    TRLG_E_MOD0,
    TRLG_E_NAN_I32,
    TRLG_E_RANGE_I32,
    TRLG_E_EMPTY,
    TRLG_E_ONE_HOT,
    TRLG_E_NEG_POW
};
enum {
    TRLG_OP_ADDITION,
    TRLG_OP_SUBTRACTION,
    TRLG_OP_MULTIPLICATION,
    TRLG_OP_DIVISION,
    TRLG_OP_NEGATION,
    TRLG_OP_ABS,
    TRLG_OP_SUM,
    TRLG_OP_PRODUCT,
    TRLG_OP_POWER
};
struct trlg_error_rec {
    int kind, file, line, col;
    double v[3];
};
static void trlg_report(int file, int line, int col, int kind, double a, double b, double c) {
    static const char *const ops[] = {"addition", "subtraction", "multiplication", "division", "negation",
                                      "abs",      "sum",         "product",        "power"};
    static const char *const reductions[] = {"max", "min", "argmax"};
    char msg[512];
    switch (kind) {
    case TRLG_E_INDEX:
        snprintf(msg, sizeof msg, "index %lld is out of bounds for axis %lld with size %lld", (long long)a,
                 (long long)b, (long long)c);
        break;
    case TRLG_E_OVERFLOW:
        snprintf(msg, sizeof msg, "i32 overflow in %s (result %.17g is outside [-2147483648, 2147483647])", ops[(int)b],
                 a);
        break;
    case TRLG_E_DIV0: snprintf(msg, sizeof msg, "integer division by zero"); break;
    case TRLG_E_MOD0: snprintf(msg, sizeof msg, "integer modulo by zero"); break;
    case TRLG_E_NAN_I32: snprintf(msg, sizeof msg, "cannot convert NaN to i32"); break;
    case TRLG_E_RANGE_I32:
        snprintf(msg, sizeof msg, "value %.17g is out of the i32 range in a conversion to i32", a);
        break;
    case TRLG_E_EMPTY:
        snprintf(msg, sizeof msg, "%s of an empty array (zero-size reduction)", reductions[(int)a]);
        break;
    case TRLG_E_ONE_HOT:
        snprintf(msg, sizeof msg, "one_hot index %.17g is out of range [0, %lld)", a, (long long)b);
        break;
    case TRLG_E_NEG_POW:
        snprintf(msg, sizeof msg, "negative integer power %.17g ** %.17g (use a float base)", a, b);
        break;
    default: snprintf(msg, sizeof msg, "run-time error %d", kind); break;
    }
    (void)c;
    const int nfiles = (int)(sizeof kTrlFiles / sizeof kTrlFiles[0]);
    char full[1024];
    snprintf(full, sizeof full, "%s:%d:%d: error: %s", file >= 0 && file < nfiles ? kTrlFiles[file] : "<input>", line,
             col, msg);
    trl_runtime_error(full);
}
/* The error record's fields after its kind (set first, by whoever claims the record). */
TRL_HOST_DEVICE inline void trlg_fill(trlg_error_rec *r, int file, int line, int col, double a, double b, double c) {
    r->file = file;
    r->line = line;
    r->col = col;
    r->v[0] = a;
    r->v[1] = b;
    r->v[2] = c;
}
TRL_HOST_DEVICE inline void trlg_raise(const char *arena, int file, int line, int col, int kind, double a, double b,
                                       double c) {
#ifdef __CUDA_ARCH__
    trlg_error_rec *r = (trlg_error_rec *)(arena + kArenaBytes);
    if (atomicCAS(&r->kind, 0, kind) == 0) {
        trlg_fill(r, file, line, col, a, b, c);
        __threadfence();
    }
#else
#if defined(__CUDACC__)
    bool recorded = false;  // host code of a CUDA build: no team
#elif defined(TRL_CUDA_EMU)
    bool recorded = trl_emu_in_kernel() != 0;  // a task of an emulated grid: recorded, as on a GPU
#else
    bool recorded = trl_team_member() != 0;
#endif
#ifdef _OPENMP
    recorded = recorded || omp_in_parallel();
#endif
    if (recorded) {  // the first error of the launch wins; trlg_check reports it after the join
        trlg_error_rec *r = (trlg_error_rec *)(arena + kArenaBytes);
        int expected = 0;
        if (__atomic_compare_exchange_n(&r->kind, &expected, kind, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            trlg_fill(r, file, line, col, a, b, c);
        return;
    }
    (void)arena;
    trlg_report(file, line, col, kind, a, b, c);
#endif
}
/* Report the error a kernel recorded, if any (a copy of the record to the host: on the device
 * it waits for the launches before it). */
static void trlg_check(trl_ctx *ctx, const char *arena) {
    trlg_error_rec r;
    TRL_CHECK(trl_to_host(ctx, &r, arena + kArenaBytes, sizeof r));
    if (r.kind != 0) trlg_report(r.file, r.line, r.col, r.kind, r.v[0], r.v[1], r.v[2]);
}
/* When errors are reported (issue 18 point 3).  On the host, after every launch (TRL_LAUNCH):
 * reading the record is a load.  On the device (and under TRL_CUDA_EMU) a check is a copy
 * that waits for the GPU, so launches are not followed by one: run_program checks with
 * TRLG_SYNC() where the host is about to see the kernels' results anyway (before a save's
 * copies), at the end of every iteration of its outermost loop (before a checkpoint) and at its
 * end; there it first writes the emits' staged records (trlg_flush, trl_emit_stage.h).  A kernel that raises an error records it and goes on with a harmless value
 * (an index checked to 0, ...), as do the launches after it, which cannot overwrite the first
 * record; what it reports is the first error of the first launch that raised one, and no record
 * after that error reaches the log. */
#undef TRL_AFTER_LAUNCH
#if defined(__CUDACC__) || defined(TRL_CUDA_EMU)
#define TRL_AFTER_LAUNCH() ((void)0)
#define TRLG_SYNC() trlg_flush(ctx, arena);
#else
#define TRL_AFTER_LAUNCH() trlg_check(ctx, arena)
#define TRLG_SYNC()
#endif
TRL_HOST_DEVICE inline int32_t trlg_chk_i32(long long v, int op, const char *arena, int f, int l, int c) {
    if (v < -2147483648LL || v > 2147483647LL) {
        trlg_raise(arena, f, l, c, TRLG_E_OVERFLOW, (double)v, op, 0);
        return 0;
    }
    return (int32_t)v;
}
TRL_HOST_DEVICE inline int32_t trlg_idiv(int32_t a, int32_t b, const char *arena, int f, int l, int c) {
    if (b == 0) {
        trlg_raise(arena, f, l, c, TRLG_E_DIV0, 0, 0, 0);
        return 0;
    }
    return trlg_chk_i32(trl::floordiv_i64(a, b), TRLG_OP_DIVISION, arena, f, l, c);
}
TRL_HOST_DEVICE inline int32_t trlg_imod(int32_t a, int32_t b, const char *arena, int f, int l, int c) {
    if (b == 0) {
        trlg_raise(arena, f, l, c, TRLG_E_MOD0, 0, 0, 0);
        return 0;
    }
    return (int32_t)trl::pmod_i64(a, b);
}
TRL_HOST_DEVICE inline int32_t trlg_ipow(int32_t x, int32_t b, const char *arena, int f, int l, int c) {
    if (b < 0) {
        trlg_raise(arena, f, l, c, TRLG_E_NEG_POW, x, b, 0);
        return 0;
    }
    long long r = 1;
    for (int32_t k = 0; k < b; ++k) {
        r *= x;
        if (r < -2147483648LL || r > 2147483647LL) return trlg_chk_i32(r, TRLG_OP_POWER, arena, f, l, c);
        if (r == 0 || r == 1) break;
    }
    if (r == -1 || (r == 1 && x == -1)) r = (b % 2 && x == -1) ? -1 : 1;
    return (int32_t)r;
}
TRL_HOST_DEVICE inline int32_t trlg_f2i(double x, const char *arena, int f, int l, int c) {
    if (x != x) {
        trlg_raise(arena, f, l, c, TRLG_E_NAN_I32, 0, 0, 0);
        return 0;
    }
    double t = trunc(x);
    if (t < -2147483648.0 || t > 2147483647.0) {
        trlg_raise(arena, f, l, c, TRLG_E_RANGE_I32, x, 0, 0);
        return 0;
    }
    return (int32_t)t;
}

// ---- emits: staged on the device, direct on the host (trlg_flush is TRLG_SYNC on the device)
#include "trl_emit_stage.h"
