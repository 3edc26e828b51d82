#pragma once
// PLACEHOLDER (being replaced): correctly rounded f64 exp, log, log1p, tanh, pow.
#include <math.h>

#include "trl_dd.h"

namespace trl {
TRL_HD inline double exp_f64(double x) { return exp(x); }
TRL_HD inline double log_f64(double x) { return log(x); }
TRL_HD inline double log1p_f64(double x) { return log1p(x); }
TRL_HD inline double tanh_f64(double x) { return tanh(x); }
TRL_HD inline double pow_f64(double x, double y) { return pow(x, y); }
}  // namespace trl
