// Scheduling on small .trl programs compiled in memory: statements (with and
// without hand-chosen batch dims), flow dependences of a shift, a slice and a
// reverse recurrence (expected relations derived by hand from the equations),
// schedule validity checked with isl (every flow pair is lexicographically
// ordered in time) and by walking the loop nest, and a --load-schedule round trip.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "checks/checks.h"
#include "frontend/parser.h"
#include "pdg/pdg_impl.h"
#include "schedule/schedule_impl.h"
#include "sema/sema.h"

namespace trlc {
namespace {

struct Compiled {
    SourceManager sm;
    std::ostringstream err;
    Diagnostics diag{sm, err};
    std::optional<ir::Program> prog;
    Pdg pdg;
    Schedule sched;
};

/* Parse, analyse, build the PDG and schedule "src"; batch per Program::dims index. */
std::unique_ptr<Compiled> compile(const std::string &src, std::vector<bool> batch = {}, const std::string &load = "") {
    auto c = std::make_unique<Compiled>();
    int file = c->sm.add("test.trl", src);
    ast::Module m = parse(c->sm, file, c->diag);
    EXPECT_FALSE(c->diag.has_errors()) << c->err.str();
    SemaOptions so;
    so.stdlib_dir = TRLC_STDLIB_DIR;
    c->prog = analyze(m, c->sm, c->diag, so);
    EXPECT_TRUE(c->prog.has_value()) << c->err.str();
    if (!c->prog) return c;
    c->pdg = build_pdg(*c->prog, c->diag);
    check_reads_defined(c->pdg, c->diag);
    check_no_zero_cycle(c->pdg, c->diag);
    EXPECT_FALSE(c->diag.has_errors()) << c->err.str();
    batch.resize(c->prog->dims.size(), false);
    ScheduleOptions opts;
    opts.load_schedule = load;
    c->sched = schedule_program(*c->prog, c->pdg, batch, opts, c->diag);
    return c;
}

std::vector<std::string> names(const Schedule &s) {
    std::vector<std::string> out;
    for (const Statement &st : s.statements) out.push_back(st.name);
    return out;
}

/* isl: (flow ∘ time) ⊆ lexicographically-less on the time space. */
bool flow_respected(const Schedule &s) {
    const ScheduleImpl &im = s.impl();
    isl::union_map tt = im.flow.apply_domain(im.schedule_map).apply_range(im.schedule_map);
    bool ok = true;
    tt.foreach_map([&](isl::map m) {
        isl::map lt = isl::manage(isl_map_lex_lt(isl_space_domain(m.space().release())));
        ok = ok && m.is_subset(lt);
    });
    return ok;
}

/* Walk the loop nest: every instance of the domain runs exactly once, each
 * producer before its consumers. */
void check_walk(const Schedule &s) {
    const ScheduleImpl &im = s.impl();
    std::map<std::string, int> when;
    int step = 0;
    for_each_instance(s, [&](int stmt, const std::vector<int64_t> &x) {
        std::string key = s.statements.at(stmt).name + "[";
        for (size_t i = 0; i < x.size(); ++i) key += (i ? "," : "") + std::to_string(x[i]);
        key += "]";
        EXPECT_EQ(when.count(key), 0u) << key << " runs twice";
        when[key] = step++;
    });
    long card = 0;
    im.domain.foreach_point([&](isl::point) { ++card; });
    EXPECT_EQ(static_cast<long>(when.size()), card);
    auto key_of = [](isl::point p) {
        isl::set st(p);
        std::string name = isl_set_get_tuple_name(st.get());
        std::string k = name + "[";
        isl_size n = isl_set_dim(st.get(), isl_dim_set);
        for (isl_size i = 0; i < n; ++i)
            k += (i ? "," : "") +
                 std::to_string(isl::manage(isl_point_get_coordinate_val(p.get(), isl_dim_set, i)).get_num_si());
        return k + "]";
    };
    im.flow.foreach_map([&](isl::map m) {
        isl::set pairs = m.wrap();
        pairs.foreach_point([&](isl::point pt) {
            isl::set w(pt);
            isl::map pair = w.unwrap();
            std::string a, b;
            pair.domain().foreach_point([&](isl::point q) { a = key_of(q); });
            pair.range().foreach_point([&](isl::point q) { b = key_of(q); });
            ASSERT_TRUE(when.count(a)) << a;
            ASSERT_TRUE(when.count(b)) << b;
            EXPECT_LT(when[a], when[b]) << a << " -> " << b;
        });
    });
}

TEST(Schedule, ShiftDependences) {
    auto c = compile("dim t < T = 8\nx[0] = 1.0\nx[t+1] = x[t] * 2.0\nemit \"e\"[t] { v: x[t] }\n");
    ASSERT_FALSE(c->diag.has_errors()) << c->err.str();
    EXPECT_EQ(names(c->sched), (std::vector<std::string>{"x_0", "x_1", "emit_e"}));
    // (isl writes 1 <= t as 0 < t.)  x_1 instance t' (the point t' = t + 1, 1 <= t' <= 8) reads x[t' - 1].
    std::string deps = dependences_to_string(c->sched);
    EXPECT_NE(deps.find("x_0[t = 0] -> x_1[t' = 1]"), std::string::npos) << deps;
    EXPECT_NE(deps.find("x_1[t] -> x_1[t' = 1 + t] : 0 < t <= 7"), std::string::npos) << deps;
    EXPECT_NE(deps.find("x_1[t] -> emit_e[t' = t] : 0 < t <= 7"), std::string::npos) << deps;
    EXPECT_TRUE(flow_respected(c->sched));
    check_walk(c->sched);
}

TEST(Schedule, SliceDependences) {
    auto c = compile("dim t < T = 12\nconst n = 3\nr[t] = f32(t)\ns[t] = sum(r[t:min(t+n, T)])\n"
                     "emit \"w\"[t] { s: s[t] }\n");
    ASSERT_FALSE(c->diag.has_errors()) << c->err.str();
    // s[t] reads r[u] for t <= u < min(t + 3, 12): r[u] -> s[t] for u - 2 <= t <= u.
    const ScheduleImpl &im = c->sched.impl();
    isl::union_map expect(c->pdg.impl().isl.ctx(), "{ r_0[u] -> s_0[t] : 0 <= t <= 11 and t <= u <= 11 and u <= t + 2;"
                                                   "  s_0[t] -> emit_w[t] : 0 <= t <= 11 }");
    EXPECT_TRUE(im.flow.is_equal(expect)) << isl_text(im.flow);
    EXPECT_TRUE(flow_respected(c->sched));
    check_walk(c->sched);
    // Interleaved: one outer loop holds both r_0 and s_0.
    ASSERT_TRUE(c->sched.root);
    const LoopNode *top = c->sched.root.get();
    ASSERT_EQ(top->kind, LoopNode::For);
}

TEST(Schedule, ReverseRecurrenceRunsBackwards) {
    auto c = compile("dim t < T = 16\nrew[t] = f64(t)\nret[T-1] = rew[T-1]\n"
                     "ret[t] = rew[t] + 0.9 * ret[t+1]\nemit \"r\"[t] { v: ret[t] }\n");
    ASSERT_FALSE(c->diag.has_errors()) << c->err.str();
    std::string deps = dependences_to_string(c->sched);
    EXPECT_NE(deps.find("ret_0[t = 15] -> ret_1[t' = 14]"), std::string::npos) << deps;
    EXPECT_NE(deps.find("ret_1[t] -> ret_1[t' = -1 + t] : 0 < t <= 14"), std::string::npos) << deps;
    EXPECT_TRUE(flow_respected(c->sched));
    check_walk(c->sched);
    // ret_1 instances run in decreasing t.
    std::vector<int64_t> order;
    int ret1 = 2;
    ASSERT_EQ(c->sched.statements[ret1].name, "ret_1");
    for_each_instance(c->sched, [&](int s, const std::vector<int64_t> &x) {
        if (s == ret1) order.push_back(x.at(0));
    });
    ASSERT_EQ(order.size(), 15u);
    EXPECT_EQ(order.front(), 14);
    EXPECT_EQ(order.back(), 0);
}

TEST(Schedule, BatchDimsDropFromInstances) {
    // b is a batch dim (chosen by hand): instances are x_k[t], writes expand b.
    auto c = compile("dim b < B = 4\ndim t < T = 5\nx[b, 0] = f32(b)\nx[b, t+1] = x[b, t] + 1.0\n"
                     "y[t] = sum(x[0:B, t])\nemit \"e\"[b, t] { v: x[b, t] }\n",
                     {true, false});
    ASSERT_FALSE(c->diag.has_errors()) << c->err.str();
    const ScheduleImpl &im = c->sched.impl();
    EXPECT_EQ(c->sched.statements[0].dims, (std::vector<int>{1}));
    EXPECT_EQ(c->sched.statements[0].batch_positions, (std::vector<int>{0}));
    isl::ctx ctx = c->pdg.impl().isl.ctx();
    EXPECT_TRUE(im.domain.is_equal(
        isl::union_set(ctx, "{ x_0[0]; x_1[t] : 1 <= t <= 5; y_0[t] : 0 <= t <= 4; emit_e[t] : 0 <= t <= 4 }")))
        << isl_text(im.domain);
    EXPECT_TRUE(im.writes.is_equal(
        isl::union_map(ctx, "{ x_0[0] -> x[b, 0] : 0 <= b <= 3; x_1[t] -> x[b, t] : 1 <= t <= 5 and 0 <= b <= 3;"
                            "  y_0[t] -> y[t] : 0 <= t <= 4 }")))
        << isl_text(im.writes);
    EXPECT_TRUE(
        im.flow.is_equal(isl::union_map(ctx, "{ x_0[0] -> x_1[1]; x_1[t] -> x_1[t + 1] : 1 <= t <= 4; x_0[0] -> y_0[0];"
                                             "  x_1[t] -> y_0[t] : 1 <= t <= 4; x_0[0] -> emit_e[0];"
                                             "  x_1[t] -> emit_e[t] : 1 <= t <= 4 }")))
        << isl_text(im.flow);
    EXPECT_TRUE(flow_respected(c->sched));
    check_walk(c->sched);
}

TEST(Schedule, ScheduleMapHasOneRangeSpace) {
    auto c = compile("dim t < T = 6\nrew[t] = f64(t)\nret[T-1] = rew[T-1]\n"
                     "ret[t] = rew[t] + ret[t+1]\nloss = sum(ret[0:T])\nemit \"l\" { v: loss }\n");
    ASSERT_FALSE(c->diag.has_errors()) << c->err.str();
    const ScheduleImpl &im = c->sched.impl();
    isl::union_set range = im.schedule_map.range();
    EXPECT_EQ(isl_union_set_n_set(range.get()), 1) << isl_text(range);
    EXPECT_TRUE(flow_respected(c->sched));
    check_walk(c->sched);
}

TEST(Schedule, LoadScheduleRoundTrip) {
    std::string src = "dim t < T = 10\nconst n = 3\nr[t] = f32(t)\ns[t] = sum(r[t:min(t+n, T)])\n"
                      "emit \"w\"[t] { s: s[t] }\n";
    auto a = compile(src);
    ASSERT_FALSE(a->diag.has_errors()) << a->err.str();
    std::ostringstream printed;
    print_schedule(a->sched, printed);
    std::string text = printed.str();
    std::string yaml = text.substr(0, text.find("\n\n") + 1);
    std::string nest = text.substr(text.find("\n\n") + 2);
    std::string path = ::testing::TempDir() + "trlc_sched_roundtrip.yaml";
    std::ofstream(path) << yaml;
    auto b = compile(src, {}, path);
    ASSERT_FALSE(b->diag.has_errors()) << b->err.str();
    std::ostringstream again;
    print_schedule(b->sched, again);
    EXPECT_EQ(again.str(), text);
    EXPECT_NE(nest.find("for ("), std::string::npos);
    std::remove(path.c_str());
}

TEST(Schedule, IllegalLoadedScheduleRejected) {
    std::string src = "dim t < T = 8\nx[0] = 1.0\nx[t+1] = x[t] * 2.0\n";
    std::string path = ::testing::TempDir() + "trlc_sched_bad.yaml";
    // x_1 runs backwards: x_1[t] reads x_1[t-1], which then runs later.
    std::ofstream(path) << "domain: \"{ x_0[t = 0]; x_1[t] : 1 <= t <= 8 }\"\n"
                           "child:\n  schedule: \"[{ x_0[t] -> [(0)]; x_1[t] -> [(-t)] }]\"\n";
    auto c = compile(src, {}, path);
    EXPECT_TRUE(c->diag.has_errors());
    EXPECT_NE(c->err.str().find("loaded schedule violates dependence"), std::string::npos) << c->err.str();
    std::remove(path.c_str());
}

}  // namespace
}  // namespace trlc
