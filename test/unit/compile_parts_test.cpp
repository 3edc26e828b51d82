// codegen/compile_parts: which kernels go to part 0 (-O2) and part 1 (-O3), and which part 1
// kernels keep -O3 without unrolling their loops (kNoPeelShare).  The sources are marked as
// kernel_text marks them; the weights are chosen so that each rule decides one kernel.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "codegen/compile_parts.h"

namespace {

using trlc::codegen::KernelWeight;

/** A marked kernel "name" whose body has one loop preceded by TRLG_SEQ. */
std::string kernel(const std::string &name) {
    return trlc::codegen::part_begin_marker(name) + "TRL_KERNEL " + name + "(TRL_KERNEL_RANGE) {\n" +
           "    TRLG_SEQ\n    for (long long i = 0; i < 128; ++i) x[i] = 0;\n}\n" +
           trlc::codegen::part_end_marker(name);
}

/** The text of "src" from the line of kernel "name"'s definition to its closing brace. */
std::string body_of(const std::string &src, const std::string &name) {
    size_t at = src.find("TRL_KERNEL " + name + "(TRL_KERNEL_RANGE) {");
    if (at == std::string::npos) return "";
    return src.substr(at, src.find("\n}\n", at) + 3 - at);
}

/** The guard line before kernel "name" (its "#if TRL_IN_PART(p) // ..." and any note). */
std::string guard_of(const std::string &src, const std::string &name) {
    size_t at = src.find("TRL_KERNEL " + name + "(TRL_KERNEL_RANGE) {");
    size_t g = src.rfind("#if TRL_IN_PART(", at);
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
    EXPECT_NE(guard_of(s.src, "k_heavy").find("TRL_IN_PART(1)"), std::string::npos);
    EXPECT_NE(guard_of(s.src, "k_env").find("TRL_IN_PART(1)"), std::string::npos);
    EXPECT_NE(guard_of(s.src, "k_init").find("TRL_IN_PART(0)"), std::string::npos);
    EXPECT_NE(guard_of(s.src, "k_ops").find("TRL_IN_PART(1)"), std::string::npos);
    EXPECT_NE(guard_of(s.src, "k_ops_hot").find("TRL_IN_PART(1)"), std::string::npos);
    // Only the light, rarely launched part 1 kernel loses its unrolling.
    EXPECT_NE(body_of(s.src, "k_ops").find("    TRLG_SEQ_COLD\n    for"), std::string::npos);
    EXPECT_NE(guard_of(s.src, "k_ops").find("not unrolled"), std::string::npos);
    for (const char *k : {"k_heavy", "k_env", "k_init", "k_ops_hot"}) {
        EXPECT_EQ(body_of(s.src, k).find("TRLG_SEQ_COLD"), std::string::npos) << k;
        EXPECT_NE(body_of(s.src, k).find("    TRLG_SEQ\n    for"), std::string::npos) << k;
        EXPECT_EQ(guard_of(s.src, k).find("not unrolled"), std::string::npos) << k;
    }
    // The rewrite kept every marker's offset: each part 1 kernel ends with its declaration for
    // part 0, and no marker is left.
    EXPECT_NE(s.src.find("#else\nTRL_KERNEL k_ops(TRL_KERNEL_RANGE);\n#endif\n"), std::string::npos);
    EXPECT_EQ(s.src.find('\x03'), std::string::npos);
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
