#pragma once
// trl_libm — the C library's <math.h>, without the C++ library's <cmath>.
//
// The runtime and generated programs call only libm's exactly defined functions (sqrt, fabs,
// floor, ceil, fmod, trunc, fma and their f forms: trl_ops.h) and its classification macros;
// every transcendental is trl_math.h's.  Under GCC's C++ library, `#include <math.h>` is a
// wrapper that includes <cmath>: ~4,000 lines of overloads and C++17 special functions (Bessel,
// elliptic integrals, hypergeometric series) that no generated program uses: 5.6 of the 22.9 MB
// of the precompiled prelude (trl_prelude.h), and about 0.025 s of CPU for every compile unit of
// a `trlc -o` build to load (PPO CartPole's six: 3.54 -> 3.39 s).  libstdc++'s own
// <cmath> reaches the C header by defining _GLIBCXX_INCLUDE_NEXT_C_HEADERS around
// `#include_next <math.h>`; this header does the same.  The names then are the C library's
// only (no float overloads of sqrt, fabs, ...): the runtime writes the f forms for f32 (sqrtf,
// fabsf), so its calls are the same functions, and the generated programs compile to the same
// instructions (every sample at -O3, objdump, when this header was introduced, 2026-11-29; one
// function's stack slots moved).  nvcc gets the
// ordinary <math.h> (its device declarations), and so does a file that included <cmath> first
// (its names are std::isinf ..., which the wrapper brings in); another C++ library ignores
// the macro.
#if defined(__cplusplus) && !defined(__CUDACC__) && !defined(_GLIBCXX_MATH_H) && !defined(_GLIBCXX_CMATH)
#define _GLIBCXX_INCLUDE_NEXT_C_HEADERS
#include <math.h>
#undef _GLIBCXX_INCLUDE_NEXT_C_HEADERS
#else
#include <math.h>
#endif
