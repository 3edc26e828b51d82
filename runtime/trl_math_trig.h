#pragma once
// PLACEHOLDER (being replaced): correctly rounded f64 sin, cos.
#include <math.h>

#include "trl_dd.h"

namespace trl {
TRL_HD inline double sin_f64(double x) { return sin(x); }
TRL_HD inline double cos_f64(double x) { return cos(x); }
}  // namespace trl
