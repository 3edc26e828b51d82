// math_f64_tables — prints runtime/trl_math_f64_tables.h, the constant tables of the correctly
// rounded f64 functions (runtime/trl_math_f64.h), computed with MPFR at 400 bits and split into
// triple-doubles (hi = RN(v), mi = RN(v - hi), lo = RN(v - hi - mi)).
//   g++ -O2 tools/bench/math_f64_tables.cpp -lmpfr -lgmp -o /tmp/gen && /tmp/gen > runtime/trl_math_f64_tables.h
#include <mpfr.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static mpfr_t t, u;

// The triple-double of t: three doubles, each the nearest of what is left.
static void split3(mpfr_t v, double out[3]) {
    mpfr_set(u, v, MPFR_RNDN);
    for (int i = 0; i < 3; i++) {
        out[i] = mpfr_get_d(u, MPFR_RNDN);
        mpfr_sub_d(u, u, out[i], MPFR_RNDN);
    }
}

// v rounded to nearest with `bits` significant bits.
static double round_bits(mpfr_t v, int bits) {
    mpfr_t w;
    mpfr_init2(w, bits);
    mpfr_set(w, v, MPFR_RNDN);
    double d = mpfr_get_d(w, MPFR_RNDN);
    mpfr_clear(w);
    return d;
}

static double from_bits(uint64_t b) {
    double d;
    memcpy(&d, &b, 8);
    return d;
}

int main() {
    mpfr_set_default_prec(400);
    mpfr_init(t);
    mpfr_init(u);
    mpfr_t ln2, l;
    mpfr_init(ln2);
    mpfr_init(l);
    mpfr_const_log2(ln2, MPFR_RNDN);
    printf("#pragma once\n// trl_math_f64_tables — constant tables of trl_math_f64.h, printed by "
           "tools/bench/math_f64_tables.cpp\n// (MPFR at 400 bits, split into triple-doubles hi + mi + lo). "
           "Do not edit by hand.\n#include \"trl_dd.h\"\n\nnamespace trl {\nnamespace f64_detail {\n\n");

    // Cody–Waite parts of ln2 / 128: L1, L2 of 35 bits (n·L1, n·L2 exact for |n| < 2^18), L3, L4.
    mpfr_div_ui(l, ln2, 128, MPFR_RNDN);
    double L[4];
    mpfr_set(t, l, MPFR_RNDN);
    for (int i = 0; i < 4; i++) {
        L[i] = round_bits(t, i < 2 ? 35 : 53);
        mpfr_sub_d(t, t, L[i], MPFR_RNDN);
    }
    mpfr_ui_div(t, 128, ln2, MPFR_RNDN);
    printf(
        "/** 128 / ln2, and ln2 / 128 = L1 + L2 + L3 + L4 (L1, L2 of 35 bits: n·L1, n·L2 exact for |n| < 2^18). */\n");
    printf("constexpr double INV_L = %a;\n", mpfr_get_d(t, MPFR_RNDN));
    for (int i = 0; i < 4; i++) printf("constexpr double L%d = %a;\n", i + 1, L[i]);
    // ln2 = LN2A + LN2B + LN2C, LN2A of 42 bits (k·LN2A exact for |k| < 2^11).
    double N[3];
    mpfr_set(t, ln2, MPFR_RNDN);
    for (int i = 0; i < 3; i++) {
        N[i] = round_bits(t, i == 0 ? 42 : 53);
        mpfr_sub_d(t, t, N[i], MPFR_RNDN);
    }
    printf("/** ln2 = LN2A + LN2B + LN2C (LN2A of 42 bits: k·LN2A exact for |k| < 2^11). */\n");
    for (int i = 0; i < 3; i++) printf("constexpr double LN2%c = %a;\n", 'A' + i, N[i]);

    double d[3];
    printf("\n/** 2^(j/128), j = 0..127, as hi, mi, lo. */\nTRL_MATH_TABLE(double, exp_table, {\n");
    for (int j = 0; j < 128; j++) {
        mpfr_set_si(t, j, MPFR_RNDN);
        mpfr_div_ui(t, t, 128, MPFR_RNDN);
        mpfr_ui_pow(t, 2, t, MPFR_RNDN);
        split3(t, d);
        printf("    %a, %a, %a,\n", d[0], d[1], d[2]);
    }
    printf("})\n");

    // log: z in [OFF, 2·OFF) by bits, interval i = bits [OFF + i·2^45, OFF + (i+1)·2^45); c_i = 1/centre
    // rounded to 20 bits (c = 1 for i = 80, the interval [1 - 2^-7/3, 1 + 2^-7/3) around 1).
    const uint64_t OFF = 0x3fe6000000000000ULL - 0x155555555555ULL;
    printf("\n/** log: x = 2^k·z, z in [LOG_OFF, 2·LOG_OFF) by bits, i = bits 45..51 of bits(x) - LOG_OFF;\n"
           " *  c_i (20 bits, about 1/z; c_80 = 1 on [1 - 2^-7/3, 1 + 2^-7/3)) and -log(c_i) as hi, mi, lo. */\n");
    printf("constexpr uint64_t LOG_OFF = 0x%llxULL;\nTRL_MATH_TABLE(double, log_table, {\n", (unsigned long long)OFF);
    double rmax = 0;
    for (int i = 0; i < 128; i++) {
        double lo = from_bits(OFF + (uint64_t)i * (1ULL << 45)), hi = from_bits(OFF + (uint64_t)(i + 1) * (1ULL << 45));
        double c;
        if (i == 80) {
            c = 1.0;
        } else {
            mpfr_set_d(t, lo, MPFR_RNDN);
            mpfr_add_d(t, t, hi, MPFR_RNDN);
            mpfr_div_ui(t, t, 2, MPFR_RNDN);
            mpfr_ui_div(t, 1, t, MPFR_RNDN);
            c = round_bits(t, 20);
        }
        double r1 = lo * c - 1, r2 = hi * c - 1;
        if (r1 < 0) r1 = -r1;
        if (r2 < 0) r2 = -r2;
        if (r1 > rmax) rmax = r1;
        if (r2 > rmax) rmax = r2;
        mpfr_set_d(t, c, MPFR_RNDN);
        mpfr_log(t, t, MPFR_RNDN);
        mpfr_neg(t, t, MPFR_RNDN);
        split3(t, d);
        printf("    %a, %a, %a, %a,\n", c, d[0], d[1], d[2]);
    }
    printf("})\n");
    fprintf(stderr, "log: max |z·c - 1| = %a\n", rmax);

    // Accurate-phase coefficients: 1/k! (k = 0..12) and (-1)^(k+1)/k (k = 1..17) as hi, mi, lo.
    printf(
        "\n/** 1/k!, k = 0..12, as hi, mi, lo (the accurate phase of exp). */\nTRL_MATH_TABLE(double, exp_coef, {\n");
    mpfr_set_ui(t, 1, MPFR_RNDN);
    for (int k = 0; k <= 12; k++) {
        if (k > 0) mpfr_div_ui(t, t, k, MPFR_RNDN);
        split3(t, d);
        printf("    %a, %a, %a,\n", d[0], d[1], d[2]);
    }
    printf("})\n");
    printf("\n/** (-1)^(k+1)/k, k = 1..17, as hi, mi, lo (the accurate phase of log1p(r)). */\n"
           "TRL_MATH_TABLE(double, log_coef, {\n");
    for (int k = 1; k <= 17; k++) {
        mpfr_set_si(t, k % 2 ? 1 : -1, MPFR_RNDN);
        mpfr_div_ui(t, t, k, MPFR_RNDN);
        split3(t, d);
        printf("    %a, %a, %a,\n", d[0], d[1], d[2]);
    }
    printf("})\n\n}  // namespace f64_detail\n}  // namespace trl\n");
    return 0;
}
