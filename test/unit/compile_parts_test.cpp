// codegen/compile_parts: which kernels go to part 0 (-O1) and part 1 (-O3), and which part 1
// kernels keep -O3 without unrolling their loops (kNoPeelShare); the compile units and what
// each one's cache key sees (unit_view).  The sources are marked as
// kernel_text marks them; the weights are chosen so that each rule decides one kernel.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "codegen/compile_parts.h"

namespace {

using trlc::codegen::KernelWeight;

/** Kernel "name" with body "body", between the markers kernel_text puts around it. */
std::string marked(const std::string &name, const std::string &body) {
    return trlc::codegen::part_begin_marker(name) + "TRL_KERNEL " + name + "(TRL_KERNEL_RANGE) {\n" + body + "}\n" +
           trlc::codegen::part_end_marker(name);
}

/** A marked kernel "name" whose body has one loop preceded by TRLG_SEQ. */
std::string kernel(const std::string &name) {
    return marked(name, "    TRLG_SEQ\n    for (long long i = 0; i < 128; ++i) x[i] = 0;\n");
}

/** The text of "src" from the line of kernel "name"'s definition to its closing brace. */
std::string body_of(const std::string &src, const std::string &name) {
    size_t at = src.find("TRL_KERNEL " + name + "(TRL_KERNEL_RANGE) {");
    if (at == std::string::npos) return "";
    return src.substr(at, src.find("\n}\n", at) + 3 - at);
}

/** The guard line before kernel "name" (its "#if TRL_IN_UNIT(p, u) // ..." and any note). */
std::string guard_of(const std::string &src, const std::string &name) {
    size_t at = src.find("TRL_KERNEL " + name + "(TRL_KERNEL_RANGE) {");
    size_t g = src.rfind("#if TRL_IN_UNIT(", at);
    return src.substr(g, at - g);
}

struct Split {
    std::string src;
    bool split = false;
};

Split split_of(const std::map<std::string, KernelWeight> &weights) {
    Split s;
    for (const auto &w : weights) s.src += kernel(w.first);
    s.src += trlc::codegen::kHostBegin + std::string("static void run_program() {}\n") + trlc::codegen::kHostEnd;
    s.split = trlc::codegen::assign_compile_parts(s.src, weights);
    return s;
}

// heavy: 90 % of the work; env: light but launched as often as heavy (part 1, peeled); init:
// light and launched once (part 0); ops: a product's operands, 1 % of the work, launched 10
// times (part 1, its loops not unrolled); ops_hot: operands doing 5 % (part 1, peeled).
TEST(CompileParts, EachRuleDecidesOneKernel) {
    std::map<std::string, KernelWeight> w;
    w["k_heavy"] = {900, 1000, false};
    w["k_env"] = {10, 1000, false};
    w["k_init"] = {5, 1, false};
    w["k_ops"] = {10, 10, true};
    w["k_ops_hot"] = {50, 10, true};
    Split s = split_of(w);
    ASSERT_TRUE(s.split);
    EXPECT_NE(guard_of(s.src, "k_heavy").find("TRL_IN_UNIT(1, 2)"), std::string::npos);
    EXPECT_NE(guard_of(s.src, "k_env").find("TRL_IN_UNIT(1, 2)"), std::string::npos);
    EXPECT_NE(guard_of(s.src, "k_init").find("TRL_IN_UNIT(0, 1)"), std::string::npos);
    EXPECT_NE(guard_of(s.src, "k_ops").find("TRL_IN_UNIT(1, 2)"), std::string::npos);
    EXPECT_NE(guard_of(s.src, "k_ops_hot").find("TRL_IN_UNIT(1, 2)"), std::string::npos);
    // Only the light, rarely launched part 1 kernel loses its unrolling.
    EXPECT_NE(body_of(s.src, "k_ops").find("    TRLG_SEQ_COLD\n    for"), std::string::npos);
    EXPECT_NE(guard_of(s.src, "k_ops").find("not unrolled"), std::string::npos);
    for (const char *k : {"k_heavy", "k_env", "k_init", "k_ops_hot"}) {
        EXPECT_EQ(body_of(s.src, k).find("TRLG_SEQ_COLD"), std::string::npos) << k;
        EXPECT_NE(body_of(s.src, k).find("    TRLG_SEQ\n    for"), std::string::npos) << k;
        EXPECT_EQ(guard_of(s.src, k).find("not unrolled"), std::string::npos) << k;
    }
    // The rewrite kept every marker's offset: each kernel ends with its declaration for the
    // other units, and no marker is left.
    EXPECT_NE(s.src.find("#else\nTRL_KERNEL k_ops(TRL_KERNEL_RANGE);\n#endif\n"), std::string::npos);
    EXPECT_NE(s.src.find("#else\nTRL_KERNEL k_init(TRL_KERNEL_RANGE);\n#endif\n"), std::string::npos);
    EXPECT_EQ(s.src.find('\x03'), std::string::npos);
    // Three units: the host code, part 0's kernels, part 1's (a few lines: one unit).
    EXPECT_EQ(trlc::codegen::compile_units(s.src), (std::vector<int>{0, 0, 1}));
    EXPECT_NE(s.src.find("#if TRL_IN_UNIT(0, 0)  // run_program, main\n"), std::string::npos);
}

/** A marked kernel "name" of "lines" lines. */
std::string long_kernel(const std::string &name, int lines) {
    std::string body;
    for (int l = 0; l < lines; ++l) body += "    x[" + std::to_string(l) + "] = 0;\n";
    return marked(name, body);
}

// Part 1's kernels fill units of about kUnitLines lines, the largest first onto the unit with
// the fewest lines: kernels of about 700, 700, 100 and 100 lines (1,612 with their header,
// closing brace and marker lines) make ceil(1612 / 500) = 4 units, one kernel each.
TEST(CompileParts, UnitsByLines) {
    std::map<std::string, KernelWeight> w;
    w["k_a"] = {300, 1000, false};
    w["k_b"] = {300, 1000, false};
    w["k_c"] = {300, 1000, false};
    w["k_d"] = {300, 1000, false};
    w["k_init"] = {1, 1, false};
    std::string src = long_kernel("k_a", 700) + long_kernel("k_b", 700) + long_kernel("k_c", 100) +
                      long_kernel("k_d", 100) + long_kernel("k_init", 10) + trlc::codegen::kHostBegin +
                      "static void run_program() {}\n" + trlc::codegen::kHostEnd;
    ASSERT_TRUE(trlc::codegen::assign_compile_parts(src, w));
    // 1,600 + 2 lines of part 1: 4 units (2..5); k_a, k_b on units 2, 3, then k_c on 4, k_d on 5.
    EXPECT_EQ(trlc::codegen::compile_units(src), (std::vector<int>{0, 0, 1, 1, 1, 1}));
    auto unit_of = [&](const std::string &k) {
        size_t at = src.find("TRL_KERNEL " + k + "(TRL_KERNEL_RANGE) {");
        size_t g = src.rfind("#if TRL_IN_UNIT(", at);
        return src.substr(g + 16, src.find(')', g) - g - 16);
    };
    EXPECT_EQ(unit_of("k_a"), "1, 2");
    EXPECT_EQ(unit_of("k_b"), "1, 3");
    EXPECT_EQ(unit_of("k_c"), "1, 4");
    EXPECT_EQ(unit_of("k_d"), "1, 5");
    EXPECT_EQ(unit_of("k_init"), "0, 1");
}

// unit_view(src, u): unit u's kernels whole, the others' declarations only, no comment lines, no
// program hash line; an #if nested in another unit's kernel does not end its guard early.
TEST(CompileParts, UnitViewKeepsOwnBodiesOnly) {
    const std::string src = "static int shared = 1;\n"
                            "// k_a: a at prog.trl:3\n"
                            "#if TRL_IN_UNIT(1, 2)  // 50 % of the work\n"
                            "TRL_KERNEL k_a() {\n"
                            "#if defined(__CUDA_ARCH__)\n"
                            "  device_only();\n"
                            "#else\n"
                            "  a_body();\n"
                            "#endif\n"
                            "}\n"
                            "#else\n"
                            "TRL_KERNEL k_a();\n"
                            "#endif\n"
                            "#if TRL_IN_UNIT(1, 3)  // 50 % of the work\n"
                            "TRL_KERNEL k_b() { b_body(); }\n"
                            "#else\n"
                            "TRL_KERNEL k_b();\n"
                            "#endif\n"
                            "#if TRL_IN_UNIT(0, 0)  // run_program, main\n"
                            "    TRLG_PROGRAM_HASH(0x0123456789abcdefULL) /* program hash */, 1,\n"
                            "#endif  // TRL_IN_UNIT(0, 0)\n";
    const std::string a = trlc::codegen::unit_view(src, 2);
    EXPECT_NE(a.find("a_body();"), std::string::npos);
    EXPECT_NE(a.find("device_only();"), std::string::npos);
    EXPECT_EQ(a.find("b_body();"), std::string::npos);
    EXPECT_NE(a.find("TRL_KERNEL k_b();"), std::string::npos);
    EXPECT_NE(a.find("static int shared = 1;"), std::string::npos);
    EXPECT_EQ(a.find("prog.trl:3"), std::string::npos);
    EXPECT_EQ(a.find("program hash"), std::string::npos);
    const std::string b = trlc::codegen::unit_view(src, 3);
    EXPECT_NE(b.find("b_body();"), std::string::npos);
    EXPECT_EQ(b.find("a_body();"), std::string::npos);
    EXPECT_EQ(b.find("device_only();"), std::string::npos);
    EXPECT_NE(b.find("TRL_KERNEL k_a();"), std::string::npos);
    // A comment or the hash changes no view; a kernel's body changes its own unit's only.
    std::string edited = src;
    edited.replace(edited.find("prog.trl:3"), 10, "prog.trl:4");
    edited.replace(edited.find("0123456789abcdef"), 16, "fedcba9876543210");
    for (int u : {0, 1, 2, 3}) EXPECT_EQ(trlc::codegen::unit_view(edited, u), trlc::codegen::unit_view(src, u)) << u;
    edited.replace(edited.find("b_body"), 6, "c_body");
    EXPECT_EQ(trlc::codegen::unit_view(edited, 2), a);
    EXPECT_NE(trlc::codegen::unit_view(edited, 3), b);
    EXPECT_EQ(trlc::codegen::program_hash_literal(src), "0x0123456789abcdefULL");
    EXPECT_EQ(trlc::codegen::program_hash_literal("no hash"), "");
    EXPECT_TRUE(trlc::codegen::compile_units("no units line").empty());
}

// A source that does not split (every kernel in part 1) keeps its loops as they were.
TEST(CompileParts, NoSplitNoRewrite) {
    std::map<std::string, KernelWeight> w;
    w["k_a"] = {10, 10, true};
    w["k_b"] = {1000, 1000, false};
    Split s = split_of(w);
    EXPECT_FALSE(s.split);
    EXPECT_EQ(s.src.find("TRLG_SEQ_COLD"), std::string::npos);
    EXPECT_EQ(s.src.find('\x03'), std::string::npos);
}

}  // namespace
