// The correctly rounded f64 functions of runtime/trl_math_f64.h against MPFR, bit for bit: MPFR
// computes each function at 53 bits in double's exponent range (emin -1073, emax 1024, with
// mpfr_subnormalize), so its result is the correctly rounded double, subnormals included.
// Inputs: special values, thresholds, exact and midpoint pow cases, and a few hundred thousand
// random inputs per function spread over the exponents (fixed seed).  How many random inputs
// glibc's own functions round differently is printed, not asserted.
#include <gtest/gtest.h>
#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <string.h>

#include <random>
#include <vector>

#include "trl_math_f64.h"

namespace {

enum Fn { EXP, LOG, LOG1P, TANH, POW };
const char *const NAMES[] = {"exp", "log", "log1p", "tanh", "pow"};

uint64_t bits_of(double x) {
    uint64_t b;
    memcpy(&b, &x, 8);
    return b;
}
double of_bits(uint64_t b) {
    double x;
    memcpy(&x, &b, 8);
    return x;
}

// The correctly rounded double of f(x, y), by MPFR.
double reference(Fn f, double x, double y) {
    static bool init = false;
    static mpfr_t r, a, b;
    if (!init) {
        mpfr_set_emin(-1073);
        mpfr_set_emax(1024);
        mpfr_init2(r, 53);
        mpfr_init2(a, 53);
        mpfr_init2(b, 53);
        init = true;
    }
    mpfr_set_d(a, x, MPFR_RNDN);
    mpfr_set_d(b, y, MPFR_RNDN);
    int t = 0;
    switch (f) {
    case EXP: t = mpfr_exp(r, a, MPFR_RNDN); break;
    case LOG: t = mpfr_log(r, a, MPFR_RNDN); break;
    case LOG1P: t = mpfr_log1p(r, a, MPFR_RNDN); break;
    case TANH: t = mpfr_tanh(r, a, MPFR_RNDN); break;
    case POW: t = mpfr_pow(r, a, b, MPFR_RNDN); break;
    }
    t = mpfr_check_range(r, t, MPFR_RNDN);
    mpfr_subnormalize(r, t, MPFR_RNDN);
    return mpfr_get_d(r, MPFR_RNDN);
}

double ours(Fn f, double x, double y) {
    switch (f) {
    case EXP: return trl::exp_f64(x);
    case LOG: return trl::log_f64(x);
    case LOG1P: return trl::log1p_f64(x);
    case TANH: return trl::tanh_f64(x);
    case POW: return trl::pow_f64(x, y);
    }
    return 0;
}

double glibc(Fn f, double x, double y) {
    switch (f) {
    case EXP: return exp(x);
    case LOG: return log(x);
    case LOG1P: return log1p(x);
    case TANH: return tanh(x);
    case POW: return pow(x, y);
    }
    return 0;
}

bool same(double a, double b) { return (a != a && b != b) || bits_of(a) == bits_of(b); }

// Checks every input; returns how many glibc rounds differently.
int check(Fn f, const std::vector<double> &xs, const std::vector<double> &ys = {}) {
    int bad = 0, glibc_diff = 0;
    for (size_t i = 0; i < xs.size(); i++) {
        double x = xs[i], y = ys.empty() ? 0.0 : ys[i];
        double want = reference(f, x, y), got = ours(f, x, y);
        if (!same(want, got) && ++bad <= 10)
            ADD_FAILURE() << NAMES[f] << "(" << std::hexfloat << x << (f == POW ? ", " : "")
                          << (f == POW ? std::to_string(y) : "") << " = " << y << ") = " << got << ", MPFR " << want
                          << std::defaultfloat;
        if (!same(want, glibc(f, x, y))) glibc_diff++;
    }
    EXPECT_EQ(bad, 0) << NAMES[f] << ": " << bad << " of " << xs.size() << " differ from MPFR";
    return glibc_diff;
}

// ±2^e·(1 + f), e uniform in [emin, emax], f uniform.
double spread(std::mt19937_64 &g, int emin, int emax, bool both_signs) {
    int e = emin + static_cast<int>(g() % static_cast<uint64_t>(emax - emin + 1));
    uint64_t b = (static_cast<uint64_t>(e + 1023) << 52) | (g() >> 12);
    if (e < -1022) b = g() >> (12 + (-1022 - e) % 52);  // subnormal
    double x = of_bits(b);
    return both_signs && (g() & 1) ? -x : x;
}

std::vector<double> specials() {
    return {0.0,
            -0.0,
            INFINITY,
            -INFINITY,
            NAN,
            1.0,
            -1.0,
            0.5,
            2.0,
            0x1p-1074,
            -0x1p-1074,
            0x1p-1022,
            0x1.fffffffffffffp-1023,
            0x1.fffffffffffffp1023,
            -0x1.fffffffffffffp1023,
            0x1p-54,
            -0x1p-54,
            0x1p-53,
            -0x1p-53,
            0x1p-27,
            -0x1p-27,
            1e-300,
            1e300,
            3.0};
}

TEST(MathF64, Exp) {
    std::vector<double> xs = specials();
    for (double x : {709.782712893384, 709.7827128933840, 0x1.62e42fefa39efp+9, 0x1.62e42fefa39f0p+9, 709.79,
                     -708.3964185322641, -708.4, -709.0, -744.44007192138126, -745.1332191019411, -745.1332191019412,
                     -745.13321910194122, -745.2, -0x1.74910d52d3051p+9, -0x1.74910d52d3052p+9, 0x1.62e42fefa39efp-1,
                     0x1p-60, -0x1p-60, 0x1.fffffffffffffp-55, -0x1.fffffffffffffp-55,
                     // candidates recalled from the hard-to-round literature (not checked against the published lists)
                     7.5417527749959590085206221e-10, 0x1.9e9cbbfd6080bp-31, 0x1.2c8b7b2c9abe8p-4})
        xs.push_back(x);
    for (int i = -1080; i <= 1030; i++) xs.push_back(i * 0x1.62e42fefa39efp-1);  // near k·ln2
    std::mt19937_64 g(1);
    for (int i = 0; i < 150000; i++) xs.push_back(-746 + 1456 * ((g() >> 11) * 0x1p-53));
    for (int i = 0; i < 100000; i++) xs.push_back(spread(g, -60, 9, true));
    int d = check(EXP, xs);
    printf("exp: %zu inputs, glibc differs on %d\n", xs.size(), d);
}

TEST(MathF64, Log) {
    std::vector<double> xs = specials();
    for (double x : {0x1.0000000000001p0, 0x1.fffffffffffffp-1, 0x1.ea71d85cee020p-509, 0x1.1b0d3afcd5a1bp+0,
                     0x1.8c2cf0c8d0ddep+0, 2.718281828459045, 0x1.5bf0a8b145769p+1, 0x1.5bf0a8b14576ap+1})
        xs.push_back(x);
    std::mt19937_64 g(2);
    for (int i = 0; i < 150000; i++) xs.push_back(spread(g, -1074, 1023, false));
    for (int i = 0; i < 80000; i++) xs.push_back(1.0 + spread(g, -60, -1, true));
    int d = check(LOG, xs);
    printf("log: %zu inputs, glibc differs on %d\n", xs.size(), d);
}

TEST(MathF64, Log1p) {
    std::vector<double> xs = specials();
    for (double x : {-0.5, -0x1.fffffffffffffp-1, -0x1p-1074, 0x1.555p-9, -0x1.555p-9, 0x1.5555555555555p-9,
                     0x1.fffffffffffffp-55, 0x1p-52, 1e16, 0x1p53, 0x1p60, -2.0})
        xs.push_back(x);
    std::mt19937_64 g(3);
    for (int i = 0; i < 120000; i++) xs.push_back(spread(g, -60, 1023, false));
    for (int i = 0; i < 100000; i++) xs.push_back(-spread(g, -60, -1, false));
    int d = check(LOG1P, xs);
    printf("log1p: %zu inputs, glibc differs on %d\n", xs.size(), d);
}

TEST(MathF64, Tanh) {
    std::vector<double> xs = specials();
    for (double x : {19.06, 19.07, 19.0615474653984, 22.0, 0x1.fffffffffffffp-28, 0x1p-26, 0x1.62e42fefa39efp-9,
                     0x1.62e42fefa39efp-10, 0.5493061443340548, 1e-310})
        xs.push_back(x), xs.push_back(-x);
    std::mt19937_64 g(4);
    for (int i = 0; i < 200000; i++) xs.push_back(spread(g, -30, 4, true));
    int d = check(TANH, xs);
    printf("tanh: %zu inputs, glibc differs on %d\n", xs.size(), d);
}

TEST(MathF64, PowSpecial) {
    std::vector<double> v = specials();
    for (double x : {-2.0, -0.5, 0.25, 10.0, -3.0}) v.push_back(x);
    std::vector<double> ys = v;
    for (double y : {3.0, -3.0, 0.5, -0.5, 1.5, 4.0, -4.0, 1e20, -1e20, 0x1p63, 0x1p53 + 1}) ys.push_back(y);
    std::vector<double> xs2, ys2;
    for (double x : v)
        for (double y : ys) xs2.push_back(x), ys2.push_back(y);
    // Exact and midpoint results.
    const double t18 = 262143.0, t27 = 134217727.0;
    double cases[][2] = {{3, 2},
                         {1 + 0x1p-26, 2},
                         {0.5, 3},
                         {3, 34},           // 3^34 has 54 bits: a midpoint, to even
                         {7, 19},           // 54 bits
                         {t27, 2},          // (2^27 - 1)^2: 54 bits
                         {t18, 3},          // 54 bits
                         {t18 * t18, 1.5},  // t^3: a midpoint through y = 3/2
                         {t18 * t18, 0.5},  // exact
                         {16, 0.5},
                         {2, 0.5},
                         {0.5, 1075},  // 2^-1075: the tie to +0
                         {0.5, 1074},
                         {0.25, 537.5},  // 2^-1075 again
                         {0x1p-2, 537},
                         {2, 1023},
                         {2, 1024},
                         {2, -1074},
                         {2, -1075},
                         {3 * 0x1p-215, 5},  // 243·2^-1075: a subnormal midpoint
                         {3 * 0x1p-359, 3},  // 27·2^-1077
                         {5 * 0x1p-200, 3},
                         {-3, 3},
                         {-3, 34},
                         {-t18, 3},
                         {10, 22},
                         {10, 23},
                         {10, -5},
                         {1.5, 64},
                         {1.5, 63},
                         {0x1.fffffffffffffp-1, 0x1p62},
                         {0x1.0000000000001p0, 0x1p62},
                         {0x1.0000000000001p0, -0x1p62},
                         {-0x1.0000000000001p0, 0x1p53 + 1},
                         {9, 0.5},
                         {27, 1.0 / 3},
                         {1e-300, -1.05},
                         {2.5, 774.5},
                         {0.999, -709000},
                         {1.0000001, 7.0978271289338397e9}};
    for (auto &c : cases) xs2.push_back(c[0]), ys2.push_back(c[1]);
    check(POW, xs2, ys2);
}

TEST(MathF64, PowRandom) {
    std::mt19937_64 g(5);
    std::vector<double> xs, ys;
    // x anywhere, y such that y·log x spreads over [-760, 760].
    for (int i = 0; i < 100000; i++) {
        double x = spread(g, -1074, 1023, false);
        double z = -760 + 1520 * ((g() >> 11) * 0x1p-53);
        xs.push_back(x), ys.push_back(z / log(x));
    }
    // Moderate x and y (the environments' use).
    for (int i = 0; i < 100000; i++) {
        xs.push_back(spread(g, -8, 8, false)), ys.push_back(spread(g, -8, 4, true));
    }
    // Negative x with integer y, integer y of either sign.
    for (int i = 0; i < 30000; i++) {
        xs.push_back(spread(g, -20, 20, true)), ys.push_back(static_cast<double>(static_cast<int>(g() % 81) - 40));
    }
    // x near 1, big y.
    for (int i = 0; i < 20000; i++) {
        xs.push_back(1 + spread(g, -52, -10, true)), ys.push_back(spread(g, 0, 60, true));
    }
    int d = check(POW, xs, ys);
    printf("pow: %zu inputs, glibc differs on %d\n", xs.size(), d);
}

}  // namespace
