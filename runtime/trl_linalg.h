#pragma once
// trl_linalg — the numeric kernels behind the builtins `orthogonal` and `permutation`: an
// orthogonal initializer (as torch.nn.init.orthogonal_) by Householder QR in double, and a
// Fisher–Yates shuffle.  Header-only, host and device (nvcc), shared by the reference
// interpreter (compiler/interp/value.cpp) and generated programs (codegen/extra_builtins.cpp), so
// both compute the same bits.  The exact use of the random stream is specified in
// dsl/README.md §8 (Initializers and permutations); summary:
//
//   orthogonal(key, [r, c], gain)  A = normal(key, [m, k], dtype=f64), m = max(r, c),
//                                  k = min(r, c) (element e = i·k + j is normal_f64(key, e));
//                                  A = QR by Householder; Q ← Q · sign(diag R) (sign 0 → 1);
//                                  W = Q (r >= c) or Qᵀ (r < c); W · gain, in double
//   permutation(key, n)            p = [0, 1, …, n-1]; for s = 0 … n-2: i = n-1-s,
//                                  j = floor(uniform_f64(key, s) · (i + 1)), swap p[i], p[j]
#include "trl_libm.h"
#include <stddef.h>
#include <stdint.h>

#include "trl_random.h"

namespace trl {

/** Orthogonal matrix of shape rows × cols times "gain", written to "out" (row-major doubles).
 *  "work" holds 2 · rows · cols doubles.  Householder reflections in double; every sum is
 *  accumulated sequentially in increasing index order. */
#if TRL_OUTLINED
void orthogonal_f64_outlined(RngKey key, int64_t rows, int64_t cols, double gain, double *out, double *work);
static inline void orthogonal_f64(RngKey key, int64_t rows, int64_t cols, double gain, double *out, double *work) {
    orthogonal_f64_outlined(key, rows, cols, gain, out, work);
}
#else
TRL_HD inline void orthogonal_f64(RngKey key, int64_t rows, int64_t cols, double gain, double *out, double *work) {
    const int64_t m = rows > cols ? rows : cols;
    const int64_t k = rows > cols ? cols : rows;
    double *a = work;          // m × k: the draw, then R above the diagonal and v below
    double *q = work + m * k;  // m × k: the thin Q
    for (int64_t e = 0; e < m * k; ++e) a[e] = normal_f64(key, static_cast<uint64_t>(e));
    // Factor: column j's reflector v_j is stored in a[j:, j]; R_jj is kept in rdiag (out[0..k),
    // read before out is written).
    double *rdiag = out;  // k entries, overwritten at the end
    for (int64_t j = 0; j < k; ++j) {
        double nx = 0.0;
        for (int64_t i = j; i < m; ++i) nx = nx + a[i * k + j] * a[i * k + j];
        nx = sqrt(nx);
        double x0 = a[j * k + j];
        double alpha = x0 < 0.0 ? nx : -nx;  // -sign(x0)·‖x‖, sign(0) = +1
        a[j * k + j] = x0 - alpha;           // v = x - alpha·e1 (in place)
        double vv = 0.0;
        for (int64_t i = j; i < m; ++i) vv = vv + a[i * k + j] * a[i * k + j];
        rdiag[j] = alpha;
        if (vv == 0.0) continue;  // x is already alpha·e1: H = I
        for (int64_t l = j + 1; l < k; ++l) {
            double s = 0.0;
            for (int64_t i = j; i < m; ++i) s = s + a[i * k + j] * a[i * k + l];
            s = 2.0 * s / vv;
            for (int64_t i = j; i < m; ++i) a[i * k + l] = a[i * k + l] - s * a[i * k + j];
        }
    }
    // Q = H_0 · H_1 · … · H_{k-1} · I[:, :k], applied right to left.
    for (int64_t i = 0; i < m; ++i)
        for (int64_t l = 0; l < k; ++l) q[i * k + l] = i == l ? 1.0 : 0.0;
    for (int64_t j = k - 1; j >= 0; --j) {
        double vv = 0.0;
        for (int64_t i = j; i < m; ++i) vv = vv + a[i * k + j] * a[i * k + j];
        if (vv == 0.0) continue;
        for (int64_t l = 0; l < k; ++l) {
            double s = 0.0;
            for (int64_t i = j; i < m; ++i) s = s + a[i * k + j] * q[i * k + l];
            s = 2.0 * s / vv;
            for (int64_t i = j; i < m; ++i) q[i * k + l] = q[i * k + l] - s * a[i * k + j];
        }
    }
    // Q · sign(diag R): the unique Q whose R has a positive diagonal (torch, CleanRL).
    for (int64_t l = 0; l < k; ++l) {
        double sg = rdiag[l] < 0.0 ? -1.0 : 1.0;
        for (int64_t i = 0; i < m; ++i) q[i * k + l] = q[i * k + l] * sg;
    }
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = (rows >= cols ? q[r * k + c] : q[c * k + r]) * gain;
}
#endif  // TRL_OUTLINED

/** A uniformly random permutation of 0 … n-1 (Fisher–Yates from the key's f64 uniforms).
 *  Out of line in a host program linked with the runtime objects (TRL_OUTLINED): its one copy
 *  is compiled at -O3 there, so a kernel calling it (a minibatch permutation) runs as fast in
 *  the -O2 compile part (codegen/compile_parts.h), where inlined it ran 27 % slower. */
#if TRL_OUTLINED
void permutation_i32_outlined(RngKey key, int64_t n, int32_t *out);
static inline void permutation_i32(RngKey key, int64_t n, int32_t *out) { permutation_i32_outlined(key, n, out); }
#else
TRL_HD inline void permutation_i32(RngKey key, int64_t n, int32_t *out) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<int32_t>(i);
    for (int64_t s = 0; s + 1 < n; ++s) {
        int64_t i = n - 1 - s;
        int64_t j = static_cast<int64_t>(uniform_f64(key, static_cast<uint64_t>(s)) * static_cast<double>(i + 1));
        if (j > i) j = i;  // cannot happen (u < 1), kept for safety
        int32_t t = out[i];
        out[i] = out[j];
        out[j] = t;
    }
}
#endif  // TRL_OUTLINED

}  // namespace trl
