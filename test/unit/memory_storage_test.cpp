// Unit tests of the memory planner without the scheduler: programs are parsed from
// strings, their PDG built, and the schedule's isl objects (schedule_map, writes, reads)
// written by hand as isl strings in the PDG's context.  Expected storage is derived in
// each test's comment from the lives of the points (write .. last read).  Also: the
// greedy-by-size arena on hand-made conflict sets, slot_of, slot sizes, the printers.
#include <gtest/gtest.h>

#include <sstream>

#include "frontend/parser.h"
#include "memory/memplan_impl.h"
#include "sema/sema.h"

namespace trlc {
namespace {

struct Planned {
    SourceManager sm;
    std::ostringstream errors;
    std::optional<ir::Program> prog;
    Pdg pdg;
    MemPlan plan;
    std::string text;
};

Statement stmt(const std::string &name, int tensor, int equation) {
    Statement s;
    s.name = name;
    s.index = tensor;
    s.equation = equation;
    return s;
}

/** Parse "src", build the PDG and plan memory for the hand-written schedule. */
std::unique_ptr<Planned> plan(const std::string &src, std::vector<Statement> stmts, const std::string &sched,
                              const std::string &writes, const std::string &reads,
                              const std::vector<std::string> &batch = {}) {
    auto p = std::make_unique<Planned>();
    Diagnostics diag(p->sm, p->errors);
    int file = p->sm.add("test.trl", src);
    ast::Module m = parse(p->sm, file, diag);
    if (diag.has_errors()) return p;
    p->prog = analyze(m, p->sm, diag, {});
    if (!p->prog) return p;
    p->pdg = build_pdg(*p->prog, diag);
    if (diag.has_errors()) return p;
    const PdgImpl &g = p->pdg.impl();
    MemInput in;
    in.statements = stmts;
    in.batch_dims.assign(p->prog->dims.size(), false);
    for (size_t d = 0; d < p->prog->dims.size(); ++d)
        for (const std::string &b : batch)
            if (p->prog->dims[d].name == b) in.batch_dims[d] = true;
    in.schedule_map = isl::union_map(g.isl.ctx(), sched);
    in.writes = isl::union_map(g.isl.ctx(), writes);
    in.reads = isl::union_map(g.isl.ctx(), reads.empty() ? "{ }" : reads);
    p->plan = plan_memory_from(*p->prog, g, in, diag);
    std::ostringstream out;
    print_memplan(*p->prog, p->plan, out);
    p->text = out.str();
    return p;
}

const Buffer &buffer(const Planned &p, const std::string &name) {
    int t = p.prog->tensor_index(name);
    int b = p.plan.buffer_of(t);
    EXPECT_GE(b, 0) << name;
    return p.plan.buffers.at(b);
}

// x[t+1] = x[t] + 1: x[t] is last read by the instance writing x[t+1] (single point, same
// type), so x[t+1] takes x[t]'s slot: 1 slot of f32 (4 B padded to 16 B), donated from x.
// Without donation the pair (x[t], x[t+1]) would be alive together at x_1(t+1): 2 slots.
TEST(MemoryStorage, ForwardRecurrenceDonatesToItself) {
    auto p = plan("dim t < T = 8\nx[0] = 1.0\nx[t+1] = x[t] + 1.0\n", {stmt("x_0", 0, 0), stmt("x_1", 0, 1)},
                  "{ x_0[0] -> [0]; x_1[t] -> [t] : 1 <= t <= 8 }", "{ x_0[0] -> x[0]; x_1[t] -> x[t] : 1 <= t <= 8 }",
                  "{ x_1[t] -> x[u] : u = t - 1 and 1 <= t <= 8 }");
    ASSERT_TRUE(p->prog) << p->errors.str();
    const Buffer &x = buffer(*p, "x");
    EXPECT_EQ(x.kind, Buffer::Point);
    EXPECT_EQ(x.modulus, std::vector<int64_t>({1}));
    EXPECT_EQ(x.slot_bytes, 16);
    EXPECT_EQ(x.bytes, 16);
    EXPECT_EQ(x.donated_from, 0);
    EXPECT_EQ(x.live_range, "x_0(0) .. x_1(8)");
    EXPECT_EQ(p->plan.peak_bytes, 16);
}

// x[t+1] = x[t] + x[t-1] (Fibonacci-like): x[t-1] dies at the instance writing x[t+1],
// which donates its slot; x[t] and x[t+1] are alive together: window 2 of 9 points.
TEST(MemoryStorage, TwoTermRecurrenceKeepsTwo) {
    auto p = plan("dim t < T = 8\nx[0] = 1.0\nx[1] = 1.0\nx[t+1] = x[t] + x[t-1] when t >= 1\n",
                  {stmt("x_0", 0, 0), stmt("x_1", 0, 1), stmt("x_2", 0, 2)},
                  "{ x_0[0] -> [0]; x_1[1] -> [1]; x_2[t] -> [t] : 2 <= t <= 8 }",
                  "{ x_0[0] -> x[0]; x_1[1] -> x[1]; x_2[t] -> x[t] : 2 <= t <= 8 }",
                  "{ x_2[t] -> x[u] : t - 2 <= u <= t - 1 and 2 <= t <= 8 }");
    ASSERT_TRUE(p->prog) << p->errors.str();
    const Buffer &x = buffer(*p, "x");
    EXPECT_EQ(x.kind, Buffer::Window);
    EXPECT_EQ(x.modulus, std::vector<int64_t>({2}));
    EXPECT_EQ(x.bytes, 32);
    EXPECT_NE(p->text.find("x: window 2 along t of 9, 2 slots x 16 B = 32 B"), std::string::npos) << p->text;
}

// s[t] = sum(r[t:min(t+4, T)]) interleaved: r(t) at [t, 0], s(t) at [t+3, 1].  r[u] is read
// by s[u-3..u], last at [u+3, 1]; r[u+3] is written at [u+3, 0] (alive together), r[u+4] at
// [u+4, 0] (after): window 4 along t of 16, 4 slots x 16 B = 64 B.  s is never read: a point
// (it lives only at its write).  r and s are both alive at [3, 1]: they conflict in the
// arena (r at 0, s at 256); peak 256 + 16 = 272 B.
TEST(MemoryStorage, InterleavedWindowKeepsFour) {
    const char *src = "dim t < T = 16\nr[t] = 1.0\ns[t] = sum(r[t:min(t+4, T)])\n";
    auto p = plan(src, {stmt("r_0", 0, 0), stmt("s_0", 1, 0)},
                  "{ r_0[t] -> [t, 0] : 0 <= t < 16; s_0[t] -> [t + 3, 1] : 0 <= t < 16 }",
                  "{ r_0[t] -> r[t] : 0 <= t < 16; s_0[t] -> s[t] : 0 <= t < 16 }",
                  "{ s_0[t] -> r[u] : t <= u < t + 4 and u < 16 and 0 <= t < 16 }");
    ASSERT_TRUE(p->prog) << p->errors.str();
    const Buffer &r = buffer(*p, "r");
    EXPECT_EQ(r.kind, Buffer::Window);
    EXPECT_EQ(r.modulus, std::vector<int64_t>({4}));
    EXPECT_EQ(r.bytes, 64);
    EXPECT_EQ(r.donated_from, -1);  // a slice read: no donation
    const Buffer &s = buffer(*p, "s");
    EXPECT_EQ(s.kind, Buffer::Point);
    EXPECT_EQ(s.bytes, 16);
    EXPECT_EQ(r.offset, 0);
    EXPECT_EQ(s.offset, 256);
    EXPECT_EQ(p->plan.peak_bytes, 272);
    EXPECT_NE(p->text.find("r: window 4 along t of 16, 4 slots x 16 B = 64 B, live r_0(0) .. "
                           "s_0(15), dead after s_0(15), offset 0"),
              std::string::npos)
        << p->text;
    EXPECT_NE(p->text.find("predicted peak: 272 bytes"), std::string::npos) << p->text;
}

// The same program with the loops separated (all r, then all s): every r[u] is alive
// until s's loop reads it, so all 16 points conflict: block 16 = 256 B.
TEST(MemoryStorage, SeparatedLoopsKeepTheBlock) {
    const char *src = "dim t < T = 16\nr[t] = 1.0\ns[t] = sum(r[t:min(t+4, T)])\n";
    auto p = plan(src, {stmt("r_0", 0, 0), stmt("s_0", 1, 0)},
                  "{ r_0[t] -> [0, t] : 0 <= t < 16; s_0[t] -> [1, t] : 0 <= t < 16 }",
                  "{ r_0[t] -> r[t] : 0 <= t < 16; s_0[t] -> s[t] : 0 <= t < 16 }",
                  "{ s_0[t] -> r[u] : t <= u < t + 4 and u < 16 and 0 <= t < 16 }");
    ASSERT_TRUE(p->prog) << p->errors.str();
    const Buffer &r = buffer(*p, "r");
    EXPECT_EQ(r.kind, Buffer::Block);
    EXPECT_EQ(r.modulus, std::vector<int64_t>({16}));
    EXPECT_EQ(r.bytes, 256);
}

// h[b, i, t+1] = h[b, i, t] + 1 with i outer, t inner, b a batch axis: the instance
// h_1(i, t) reads every h[., i, t-1] (the batch) for the last time and writes h[., i, t],
// so donation removes those pairs; the only conflicts left are the 3 batch points written
// together.  Moduli (3, 1, 1): 3 slots x 16 B = 48 B.
TEST(MemoryStorage, SuccessiveModuloAndBatch) {
    const char *src = "dim b < B = 3\ndim i < I = 4\ndim t < T = 5\n"
                      "h[b, i, 0] = 0.0\nh[b, i, t+1] = h[b, i, t] + 1.0\n";
    auto p = plan(src, {stmt("h_0", 0, 0), stmt("h_1", 0, 1)},
                  "{ h_0[i, 0] -> [i, 0] : 0 <= i < 4; h_1[i, t] -> [i, t] : 0 <= i < 4 and "
                  "1 <= t <= 5 }",
                  "{ h_0[i, 0] -> h[b, i, 0] : 0 <= b < 3 and 0 <= i < 4; h_1[i, t] -> h[b, i, t] "
                  ": 0 <= b < 3 and 0 <= i < 4 and 1 <= t <= 5 }",
                  "{ h_1[i, t] -> h[b, i, u] : u = t - 1 and 0 <= b < 3 and 0 <= i < 4 and "
                  "1 <= t <= 5 }",
                  {"b"});
    ASSERT_TRUE(p->prog) << p->errors.str();
    const Buffer &h = buffer(*p, "h");
    EXPECT_EQ(h.kind, Buffer::Point);
    EXPECT_EQ(h.modulus, std::vector<int64_t>({3, 1, 1}));
    EXPECT_EQ(h.bytes, 3 * 16);
    EXPECT_NE(p->text.find("h: point, batch 3 along b, 3 slots x 16 B = 48 B"), std::string::npos) << p->text;
}

// y[t] = x[t] * 2 with x read only there: x[t] dies at y_0(t), which writes y[t]; x and y
// are alive together only at those hand-over instances, so y reuses x's buffer (same
// offset) and the peak is one buffer.  z[t] = y[t] + 1 then reuses it again.
TEST(MemoryStorage, CrossTensorDonationSharesTheBuffer) {
    const char *src = "dim t < T = 4\nx[t] = 1.0\ny[t] = x[t] * 2.0\nz[t] = y[t] + 1.0\n"
                      "emit \"z\"[t] { v: z[t] }\n";
    auto p = plan(src, {stmt("x_0", 0, 0), stmt("y_0", 1, 0), stmt("z_0", 2, 0)},
                  "{ x_0[t] -> [t, 0]; y_0[t] -> [t, 1]; z_0[t] -> [t, 2]; emit_z[t] -> [t, 3] }",
                  "{ x_0[t] -> x[t] : 0 <= t < 4; y_0[t] -> y[t] : 0 <= t < 4; "
                  "z_0[t] -> z[t] : 0 <= t < 4 }",
                  "{ y_0[t] -> x[t] : 0 <= t < 4; z_0[t] -> y[t] : 0 <= t < 4; "
                  "emit_z[t] -> z[t] : 0 <= t < 4 }");
    ASSERT_TRUE(p->prog) << p->errors.str();
    const Buffer &x = buffer(*p, "x"), &y = buffer(*p, "y"), &z = buffer(*p, "z");
    EXPECT_EQ(x.bytes, 16);
    EXPECT_EQ(y.donated_from, p->prog->tensor_index("x"));
    EXPECT_EQ(z.donated_from, p->prog->tensor_index("y"));
    EXPECT_EQ(x.offset, y.offset);
    EXPECT_EQ(y.offset, z.offset);
    EXPECT_EQ(p->plan.peak_bytes, 16);
}

// ---- arena ---------------------------------------------------------------------------

// Sizes 100, 300, 200; 0-1 and 1-2 conflict, 0-2 do not.  Largest first: 1 at 0; 2 after
// it at align(300) = 512; 0 also at 512 (it only avoids 1).  Peak max(300, 712, 612) = 712.
TEST(MemoryArena, GreedyBySizeSharesNonConflicting) {
    std::vector<std::vector<bool>> c = {{false, true, false}, {true, false, true}, {false, true, false}};
    std::vector<int64_t> off;
    EXPECT_EQ(pack_arena({100, 300, 200}, c, 256, &off), 712);
    EXPECT_EQ(off, std::vector<int64_t>({512, 0, 512}));
}

// All conflict: 64 at 0, 48 at 256, 16 at 512 → peak 528; none conflict: all at 0.
TEST(MemoryArena, AllOrNothing) {
    std::vector<std::vector<bool>> all(3, std::vector<bool>(3, true)), none(3, std::vector<bool>(3));
    std::vector<int64_t> off;
    EXPECT_EQ(pack_arena({16, 64, 48}, all, 256, &off), 528);
    EXPECT_EQ(off, std::vector<int64_t>({512, 0, 256}));
    EXPECT_EQ(pack_arena({16, 64, 48}, none, 256, &off), 64);
    EXPECT_EQ(off, std::vector<int64_t>({0, 0, 0}));
}

// A gap between placed buffers is reused when large enough: A, B, C (256 B each) all
// conflict (0, 256, 512); D (200 B) conflicts with A and C only, so it fits in B's place
// [256, 512) rather than after C.  Peak 768.
TEST(MemoryArena, FillsGaps) {
    std::vector<std::vector<bool>> c(4, std::vector<bool>(4, false));
    auto link = [&](int a, int b) { c[a][b] = c[b][a] = true; };
    link(0, 1);
    link(1, 2);
    link(0, 2);
    link(3, 0);
    link(3, 2);
    std::vector<int64_t> off;
    EXPECT_EQ(pack_arena({256, 256, 256, 200}, c, 256, &off), 768);
    EXPECT_EQ(off, std::vector<int64_t>({0, 256, 512, 256}));
}

// ---- slots ----------------------------------------------------------------------------------

TEST(MemorySlots, SlotOfIsModularRowMajor) {
    Buffer b;
    b.lower = {0, 2};
    b.modulus = {2, 4};
    b.stride = {4, 1};
    EXPECT_EQ(b.slot_of({3, 7}), 1 * 4 + 1);  // (3 mod 2)·4 + ((7-2) mod 4)
    EXPECT_EQ(b.slot_of({0, 2}), 0);
    EXPECT_EQ(b.slot_of({1, 5}), 4 + 3);
}

TEST(MemorySlots, SlotBytes) {
    ir::Type f32;
    EXPECT_EQ(ir::slot_bytes(f32), 16);  // 4 B scalar, padded to 16
    ir::Type v;
    v.dtype = ir::DType::F64;
    v.shape = {ir::Extent{3, nullptr}};
    EXPECT_EQ(ir::slot_bytes(v), 32);  // 24 → 32
    ir::Type key;
    key.dtype = ir::DType::Key;
    ir::Type tup;
    tup.is_tuple = true;
    tup.elems = {v, key, f32};
    EXPECT_EQ(ir::slot_bytes(tup), 32 + 16 + 16);
    ir::Type b;
    b.dtype = ir::DType::Bool;
    b.shape = {ir::Extent{17, nullptr}};
    EXPECT_EQ(ir::slot_bytes(b), 32);
}

}  // namespace
}  // namespace trlc
