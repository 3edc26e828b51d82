// runtime/trl_math_trig.h: trl::sin_f64 and trl::cos_f64 are correctly rounded (round to
// nearest, ties to even) for every input tried: their bits equal MPFR's mpfr_sin / mpfr_cos
// with a 53-bit result, MPFR_RNDN, the exponent range of binary64 and mpfr_subnormalize (MPFR
// reduces huge arguments itself, so the reference holds up to DBL_MAX).  Inputs: special values
// (±0, ±inf, NaN), subnormals and tiny arguments around the 2^-27 cut-off, the doubles nearest
// k·π/2 for k ≤ 20000 and their neighbours, in each binade from 2^-1 to 2^1023 the double
// nearest a multiple of π/2 found by the continued fraction of 2^(e-52)·2/π (with the published
// worst case 6381956970095103·2^797) and its neighbours, the Cody–Waite / Payne–Hanek switch,
// 300000 random doubles over all exponents and 500000 random |x| < 100 (fixed seed).  The
// accurate phase alone (trig_detail::accurate) is also compared, on every 10th random input, and
// 24 inputs that the fast phase alone gets wrong are checked; the accurate phase's fixed-point
// value is checked against its error bound.
// The number of random inputs where glibc's sin / cos differ from MPFR is printed, not asserted.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "trl_math_trig.h"

namespace {

uint64_t to_bits(double x) {
    uint64_t b;
    std::memcpy(&b, &x, 8);
    return b;
}
double from_bits(uint64_t b) {
    double x;
    std::memcpy(&x, &b, 8);
    return x;
}

/** MPFR's correctly rounded sin (cos when is_cos) of x, as a double (subnormals rounded once). */
class Reference {
public:
    Reference() {
        emin_ = mpfr_get_emin();
        emax_ = mpfr_get_emax();
        mpfr_set_emin(-1073);  // binary64: 2^-1074 = 0.1·2^-1073 ... (1 - 2^-53)·2^1024
        mpfr_set_emax(1024);
        mpfr_init2(x_, 53);
        mpfr_init2(y_, 53);
    }
    ~Reference() {
        mpfr_clear(x_);
        mpfr_clear(y_);
        mpfr_set_emin(emin_);
        mpfr_set_emax(emax_);
    }
    double operator()(double x, bool is_cos) {
        mpfr_set_d(x_, x, MPFR_RNDN);
        int t = is_cos ? mpfr_cos(y_, x_, MPFR_RNDN) : mpfr_sin(y_, x_, MPFR_RNDN);
        mpfr_subnormalize(y_, t, MPFR_RNDN);
        return mpfr_get_d(y_, MPFR_RNDN);
    }

private:
    mpfr_t x_, y_;
    mpfr_exp_t emin_, emax_;
};

/** Counts inputs and mismatches against MPFR; prints the first few mismatches. */
struct Checker {
    Reference ref;
    long inputs = 0, bad = 0, glibc_bad = 0;
    void check(double x, bool glibc = false) {
        ++inputs;
        for (int c = 0; c < 2; ++c) {
            double want = ref(x, c == 1);
            double got = c ? trl::cos_f64(x) : trl::sin_f64(x);
            if (std::isnan(want) ? !std::isnan(got) : to_bits(got) != to_bits(want)) {
                if (++bad <= 10)
                    ADD_FAILURE() << (c ? "cos" : "sin") << "(" << std::hexfloat << x << ") = " << got << ", MPFR "
                                  << want;
            }
            if (glibc) glibc_bad += to_bits(c ? std::cos(x) : std::sin(x)) != to_bits(want);
        }
    }
    void check_accurate(double x) {
        for (int c = 0; c < 2; ++c) {
            double want = ref(x, c == 1);
            double got = trl::trig_detail::accurate(x, c);
            if (to_bits(got) != to_bits(want) && ++bad <= 10)
                ADD_FAILURE() << "accurate " << (c ? "cos" : "sin") << "(" << std::hexfloat << x << ") = " << got
                              << ", MPFR " << want;
        }
    }
    void check_around(double x, int n) {  // x and n neighbours on each side, both signs
        for (int d = -n; d <= n; ++d) {
            double y = from_bits(to_bits(x) + d);
            check(y);
            check(-y);
        }
    }
};

TEST(MathTrig, SpecialValues) {
    const double inf = HUGE_VAL;
    for (double x : {inf, -inf, std::nan(""), -std::nan("")}) {
        EXPECT_TRUE(std::isnan(trl::sin_f64(x))) << x;
        EXPECT_TRUE(std::isnan(trl::cos_f64(x))) << x;
    }
    EXPECT_EQ(to_bits(trl::sin_f64(0.0)), to_bits(0.0));
    EXPECT_EQ(to_bits(trl::sin_f64(-0.0)), to_bits(-0.0));
    EXPECT_EQ(trl::cos_f64(0.0), 1.0);
    EXPECT_EQ(trl::cos_f64(-0.0), 1.0);
    EXPECT_EQ(trl::sin_f64(1.0), 0x1.aed548f090ceep-1);  // the file comment's examples
    EXPECT_EQ(trl::cos_f64(0x1.921fb54442d18p+0), 0x1.1a62633145c07p-54);
}

TEST(MathTrig, TinyAndSubnormal) {
    Checker ck;
    for (uint64_t b :
         {uint64_t(1), uint64_t(2), uint64_t(3), uint64_t(0x000fffffffffffff), uint64_t(0x0010000000000000)})
        ck.check_around(from_bits(b), 1);
    for (int e = -1074; e <= -20; ++e) ck.check_around(std::ldexp(1.0, e), 2);
    ck.check_around(0x1p-27, 8);
    ck.check_around(0x1p-26, 8);
    std::mt19937_64 g(11);
    for (int i = 0; i < 20000; ++i) {
        double m = 1.0 + static_cast<double>(g() >> 12) * 0x1p-52;
        ck.check(std::ldexp(m, -40 + static_cast<int>(g() % 35)));
    }
    EXPECT_EQ(ck.bad, 0) << "of " << ck.inputs;
}

TEST(MathTrig, NearMultiplesOfPiOver2) {
    Checker ck;
    mpfr_t t;
    mpfr_init2(t, 200);
    for (int k = 1; k <= 20000; ++k) {  // the doubles nearest k·π/2
        mpfr_const_pi(t, MPFR_RNDN);
        mpfr_mul_si(t, t, k, MPFR_RNDN);
        mpfr_div_2ui(t, t, 1, MPFR_RNDN);
        ck.check_around(mpfr_get_d(t, MPFR_RNDN), k <= 1000 ? 2 : 0);
    }
    // In each binade [2^e, 2^(e+1)): m·c near an integer, c = 2^(e-52)·2/π, m < 2^53 from the
    // largest continued-fraction denominator of frac(c) below 2^53 (times a small factor to reach
    // [2^52, 2^53)); x = m·2^(e-52) is then about as close to a multiple of π/2 as the binade has.
    mpfr_t c, a;
    mpfr_init2(c, 1300);
    mpfr_init2(a, 1300);
    for (int e = -1; e <= 1023; ++e) {
        mpfr_const_pi(c, MPFR_RNDN);
        mpfr_ui_div(c, 2, c, MPFR_RNDN);
        mpfr_mul_2si(c, c, e - 52, MPFR_RNDN);
        mpfr_frac(c, c, MPFR_RNDN);
        uint64_t q = 1, q_prev = 0;  // the last two denominators
        for (int it = 0; it < 200 && !mpfr_zero_p(c); ++it) {
            mpfr_ui_div(c, 1, c, MPFR_RNDN);
            mpfr_floor(a, c);
            mpfr_sub(c, c, a, MPFR_RNDN);
            if (mpfr_cmp_ui_2exp(a, 1, 53) >= 0) break;
            uint64_t ai = mpfr_get_ui(a, MPFR_RNDN);
            if (q > ((uint64_t(1) << 53) - 1 - q_prev) / ai) break;  // the next one reaches 2^53
            uint64_t qn = ai * q + q_prev;
            q_prev = q;
            q = qn;
        }
        uint64_t m = q;
        if (m < (uint64_t(1) << 52)) m *= ((uint64_t(1) << 52) + m - 1) / m;
        ck.check_around(std::ldexp(static_cast<double>(m), e - 52), 2);
    }
    mpfr_clear(a);
    mpfr_clear(c);
    mpfr_clear(t);
    ck.check_around(std::ldexp(6381956970095103.0, 797), 4);  // the published worst case, |r| ≈ 2^-60.9
    ck.check_around(1.6e6, 4);                                // Cody–Waite / Payne–Hanek switch
    ck.check_around(DBL_MAX, 4);
    EXPECT_EQ(ck.bad, 0) << "of " << ck.inputs;
}

// Inputs where the fast phase's yh is not the correctly rounded result (its error straddles a
// rounding boundary), so only the accurate phase gets them right: found among 2·10^8 random
// arguments by a copy of the header that compared yh with the final result.
TEST(MathTrig, FastPhaseNotEnough) {
    Checker ck;
    for (double x : {
             0x1.621dc96a9332ap+6,   -0x1.01da61e50b184p+6,   -0x1.86f86676a0bfep+6,  -0x1.cf79d423712cep+5,
             0x1.7f8e74d57313bp+116, 0x1.4ce8f9282e8e2p+30,   0x1.17319194bafd3p+554, 0x1.4d042d68aef94p+6,
             0x1.cd5caafd38a8p+1,    0x1.d64c6f01b6d35p+453,  0x1.7a32f8f098752p+681, 0x1.fcc63b0b29652p+71,
             0x1.5b1a1a400065ep+218, 0x1.ffbf5e527775cp+1013, 0x1.414d0241c467cp+983, 0x1.55951b17b39b3p+296,
             0x1.07e95048e0c8ep-9,   0x1.724a5a5d16daap+823,  0x1.c16f2a8dd05fcp+5,   0x1.6ed694c775dd4p+6,
             0x1.1d0345852b788p+6,   0x1.7e8a02f788294p+4,    0x1.d2ac62c86d113p+922, 0x1.357c302e71cbp+362,
         })
        ck.check_around(x, 0);
    EXPECT_EQ(ck.bad, 0) << "of " << ck.inputs;
}

// The accurate phase before rounding is within its proven 64·2^-224 of |sin| or |cos| (MPFR at
// 500 bits), on random arguments over all exponents and near multiples of π/2.
TEST(MathTrig, AccuratePhaseErrorBound) {
    mpfr_t x, y, v, d;
    mpfr_inits2(500, x, y, v, d, static_cast<mpfr_ptr>(nullptr));
    std::mt19937_64 g(5);
    double worst = 0;
    for (int i = 0; i < 4000; ++i) {
        double a = i % 2 ? std::ldexp(1.0 + static_cast<double>(g() >> 12) * 0x1p-52, static_cast<int>(g() % 1050) - 27)
                         : (static_cast<double>(g() >> 11) * 0x1p-53 - 0.5) * 200.0;
        if (i % 7 == 0) a = std::ldexp(6381956970095103.0, 797 - static_cast<int>(g() % 2));
        if (std::fabs(a) < 0x1p-27) continue;
        for (int c = 0; c < 2; ++c) {
            uint32_t Y[trl::trig_detail::FX];
            bool negative = trl::trig_detail::accurate_fixed(a, c, Y);
            mpfr_set_ui(v, 0, MPFR_RNDN);
            for (int k = 0; k < trl::trig_detail::FX; ++k) {
                mpfr_set_ui_2exp(d, Y[k], 32 * k - 224, MPFR_RNDN);
                mpfr_add(v, v, d, MPFR_RNDN);  // exact at 500 bits
            }
            mpfr_set_d(x, a, MPFR_RNDN);
            if (c)
                mpfr_cos(y, x, MPFR_RNDN);
            else
                mpfr_sin(y, x, MPFR_RNDN);
            EXPECT_EQ(negative, mpfr_sgn(y) < 0) << std::hexfloat << a << " " << c;
            mpfr_abs(y, y, MPFR_RNDN);
            mpfr_sub(d, v, y, MPFR_RNDN);
            mpfr_abs(d, d, MPFR_RNDN);
            mpfr_mul_2ui(d, d, 224, MPFR_RNDN);  // in units of 2^-224
            worst = std::max(worst, mpfr_get_d(d, MPFR_RNDN));
        }
    }
    mpfr_clears(x, y, v, d, static_cast<mpfr_ptr>(nullptr));
    std::printf("[ trig     ] accurate phase: largest error %.2f·2^-224 (bound 64)\n", worst);
    EXPECT_LE(worst, 64.0);
}

TEST(MathTrig, Random) {
    Checker ck;
    std::mt19937_64 g(20240601);
    for (int i = 0; i < 300000; ++i) {  // every exponent, both signs
        uint64_t b = g() & 0x7fffffffffffffffu;
        if ((b >> 52) == 0x7ff) b &= ~(uint64_t(1) << 62);
        double x = from_bits(b | (g() & 0x8000000000000000u));
        ck.check(x, true);
        if (i % 10 == 0 && (b >> 52) >= 0x3e4) ck.check_accurate(x);
    }
    long glibc_all = ck.glibc_bad;
    for (int i = 0; i < 500000; ++i) {  // |x| < 100, the RL environments' range
        double x = (static_cast<double>(g() >> 11) * 0x1p-53 - 0.5) * 200.0;
        ck.check(x, true);
        if (i % 10 == 0 && std::fabs(x) >= 0x1p-27) ck.check_accurate(x);
    }
    std::printf("[ trig     ] glibc's sin/cos differ from MPFR in %ld of 600000 results over all exponents, %ld of "
                "1000000 with |x| < 100\n",
                glibc_all, ck.glibc_bad - glibc_all);
    EXPECT_EQ(ck.bad, 0) << "of " << ck.inputs;
}

}  // namespace
