// trl_outlined — the one copy of the largest functions of the runtime headers for host programs
// that the driver links with the runtime objects (TRL_OUTLINED, runtime/trl_dd.h): such a program
// is compiled with -DTRL_RT_OUTLINED and only declares these; this file defines them from the
// same header code, compiled once per toolchain and flags into the build cache's runtime objects
// instead of once per program build.  Without the cache (--no-cache) the driver compiles this
// file in the program's own command, whose -DTRL_RT_OUTLINED is undone here.
#undef TRL_RT_OUTLINED
#include "trl_linalg.h"
#include "trl_math.h"

namespace trl {

void orthogonal_f64_outlined(RngKey key, int64_t rows, int64_t cols, double gain, double *out, double *work) {
    orthogonal_f64(key, rows, cols, gain, out, work);
}

void permutation_i32_outlined(RngKey key, int64_t n, int32_t *out) { permutation_i32(key, n, out); }

namespace trig_detail {
double sin_quadrant_outlined(double x, int off) { return sin_quadrant(x, off); }
}  // namespace trig_detail

namespace f64_detail {
double pow_positive_outlined(double x, double y, bool int_y) { return pow_positive(x, y, int_y); }
ExpAcc exp_accurate_outlined(TD z) { return exp_accurate(z); }
TD log_accurate_outlined(int k, int i, TD r) { return log_accurate(k, i, r); }
}  // namespace f64_detail

}  // namespace trl
