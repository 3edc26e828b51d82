// interp_scheduled_test — the scheduled interpreter on hand-made loop nests and memory plans
// (independent of the scheduler and the memory planner): a correct plan reproduces the
// point-wise output; a too-small window, overlapping buffers and a read before its write are
// internal errors naming the tensor, the point and the slot.
#include <gtest/gtest.h>

#include <sstream>

#include "frontend/parser.h"
#include "interp/interpreter.h"
#include "memory/memplan.h"
#include "schedule/schedule.h"
#include "sema/sema.h"

namespace trlc {
namespace {

// x[0] = 1; x[t+1] = x[t] * 0.5 + 1 (points 0 .. 4); y[t] = x[t] + 2 (f64); the emit reads
// x[t] and y[t].  Statements: 0 x_0, 1 x_1, 2 y_0, 3 emit_e.
const char *kProgram = "dim t < T = 4\n"
                       "x[0] = 1.0\n"
                       "x[t+1] = x[t] * 0.5 + 1.0\n"
                       "y[t] = f64(x[t]) + 2.0\n"
                       "emit \"e\"[t] { x: x[t], y: y[t] }\n";

struct Fixture {
    SourceManager sm;
    std::ostringstream errors;
    std::optional<ir::Program> prog;
};

std::unique_ptr<Fixture> compile() {
    auto f = std::make_unique<Fixture>();
    Diagnostics diag(f->sm, f->errors);
    int file = f->sm.add("test.trl", kProgram);
    ast::Module m = parse(f->sm, file, diag);
    f->prog = analyze(m, f->sm, diag, SemaOptions{});
    return f;
}

AstExprPtr lit(int64_t v) {
    auto e = std::make_shared<AstExpr>();
    e->op = AstExpr::Int;
    e->value = v;
    return e;
}
AstExprPtr it(int var) {
    auto e = std::make_shared<AstExpr>();
    e->op = AstExpr::Var;
    e->var = var;
    return e;
}
AstExprPtr le(AstExprPtr a, AstExprPtr b) {
    auto e = std::make_shared<AstExpr>();
    e->op = AstExpr::Le;
    e->args = {a, b};
    return e;
}
LoopNodePtr user(int stmt, std::vector<AstExprPtr> args) {
    auto n = std::make_shared<LoopNode>();
    n->kind = LoopNode::User;
    n->stmt = stmt;
    n->args = std::move(args);
    return n;
}
/** for (c<var> = lo; c<var> <= hi; ++c<var>) body... */
LoopNodePtr loop(int var, int64_t lo, int64_t hi, std::vector<LoopNodePtr> body) {
    auto n = std::make_shared<LoopNode>();
    n->kind = LoopNode::For;
    n->var = var;
    n->init = lit(lo);
    n->cond = le(it(var), lit(hi));
    n->step = lit(1);
    auto b = std::make_shared<LoopNode>();
    b->kind = LoopNode::Block;
    b->children = std::move(body);
    n->children = {b};
    return n;
}
LoopNodePtr block(std::vector<LoopNodePtr> items) {
    auto n = std::make_shared<LoopNode>();
    n->kind = LoopNode::Block;
    n->children = std::move(items);
    return n;
}

Schedule statements(const ir::Program &p) {
    Schedule s;
    int x = p.tensor_index("x"), y = p.tensor_index("y");
    auto st = [](std::string name, Statement::Kind k, int index, int eq, std::vector<int> dims) {
        Statement s;
        s.name = name;
        s.kind = k;
        s.index = index;
        s.equation = eq;
        s.dims = dims;
        return s;
    };
    // x's equations in source order: 0 = x[0], 1 = x[t+1].
    s.statements = {st("x_0", Statement::Tensor, x, 0, {0}), st("x_1", Statement::Tensor, x, 1, {0}),
                    st("y_0", Statement::Tensor, y, 0, {0}), st("emit_e", Statement::Emit, 0, -1, {0})};
    s.batch_dims = {false};
    s.num_iterators = 1;
    return s;
}

/** A one-dim buffer along t: "modulus" slots of 16 bytes at "offset". */
Buffer buf(int tensor, int64_t modulus, int64_t offset) {
    Buffer b;
    b.tensor = tensor;
    b.kind = modulus == 1 ? Buffer::Point : Buffer::Window;
    b.lower = {0};
    b.modulus = {modulus};
    b.stride = {1};
    b.slots = modulus;
    b.slot_bytes = 16;
    b.bytes = 16 * modulus;
    b.offset = offset;
    return b;
}

MemPlan plan(const ir::Program &p, int64_t x_slots, int64_t y_offset) {
    MemPlan m;
    m.buffers = {buf(p.tensor_index("x"), x_slots, 0), buf(p.tensor_index("y"), 4, y_offset)};
    m.peak_bytes = std::max<int64_t>(16 * x_slots, y_offset + 64);
    m.frees_after.resize(4);
    return m;
}

std::string run(const ir::Program &p, const Schedule &s, const MemPlan &m, std::string *ice) {
    SourceManager sm;
    std::ostringstream err, out;
    Diagnostics diag(sm, err);
    InterpOptions o;
    o.log = &out;
    try {
        EXPECT_EQ(interpret_scheduled(p, s, m, o, diag), 0) << err.str();
    } catch (const InternalError &e) {
        *ice = e.message;
    }
    return out.str();
}

std::string pointwise(const ir::Program &p) {
    SourceManager sm;
    std::ostringstream err, out;
    Diagnostics diag(sm, err);
    InterpOptions o;
    o.log = &out;
    EXPECT_EQ(interpret(p, o, diag), 0);
    return out.str();
}

// Point order: all of x, then all of y, then the emit.  x keeps 5 points (a block).
Schedule sequential(const ir::Program &p) {
    Schedule s = statements(p);
    s.root = block({user(0, {lit(0)}), loop(0, 1, 4, {user(1, {it(0)})}), loop(0, 0, 3, {user(2, {it(0)})}),
                    loop(0, 0, 3, {user(3, {it(0)})})});
    return s;
}

TEST(InterpScheduled, SequentialBlockPlanMatchesPointwise) {
    auto f = compile();
    ASSERT_TRUE(f->prog) << f->errors.str();
    std::string ice;
    std::string got = run(*f->prog, sequential(*f->prog), plan(*f->prog, 5, 256), &ice);
    EXPECT_EQ(ice, "");
    // x = 1, 1.5, 1.75, 1.875 (halve and add one); y = x + 2 in f64.
    EXPECT_EQ(got, "{\"x\":1.0,\"y\":3.0}\n{\"x\":1.5,\"y\":3.5}\n{\"x\":1.75,\"y\":3.75}\n"
                   "{\"x\":1.875,\"y\":3.875}\n");
    EXPECT_EQ(got, pointwise(*f->prog));
}

TEST(InterpScheduled, InterleavedOneSlotOfXIsEnough) {
    // for c: y_0(c), emit_e(c), x_1(c + 1).  x_1(c + 1) is the last reader of x[c] and writes
    // x[c + 1]: an instance reads all its inputs before it stores, so x[c + 1] may take x[c]'s
    // slot (as a donated buffer would), and one slot of x suffices.
    auto f = compile();
    ASSERT_TRUE(f->prog);
    Schedule s = statements(*f->prog);
    auto add = std::make_shared<AstExpr>();
    add->op = AstExpr::Add;
    add->args = {it(0), lit(1)};
    s.root = block({user(0, {lit(0)}), loop(0, 0, 3, {user(2, {it(0)}), user(3, {it(0)}), user(1, {add})})});
    std::string ice;
    std::string got = run(*f->prog, s, plan(*f->prog, 1, 256), &ice);
    EXPECT_EQ(ice, "");
    EXPECT_EQ(got, pointwise(*f->prog));
}

TEST(InterpScheduled, TooSmallWindowIsCaught) {
    // The sequential order computes all of x (0 .. 4) before y_0(0) reads x[0]; with a window
    // of 2 along t, x[2] and then x[4] went into x[0]'s slot (4 mod 2 = 0).
    auto f = compile();
    ASSERT_TRUE(f->prog);
    std::string ice;
    run(*f->prog, sequential(*f->prog), plan(*f->prog, 2, 256), &ice);
    EXPECT_NE(ice.find("read of x[0] from slot 0 of x, which holds x[4]"), std::string::npos) << ice;
    EXPECT_NE(ice.find("the schedule or the memory plan is wrong"), std::string::npos) << ice;
}

TEST(InterpScheduled, OverlappingBuffersAreCaught) {
    // y's buffer at offset 16 overlaps x's slots 1 .. 4: y_0(0) writes y[0] over x[1] while x is
    // still to be read by y_0(1).
    auto f = compile();
    ASSERT_TRUE(f->prog);
    std::string ice;
    run(*f->prog, sequential(*f->prog), plan(*f->prog, 5, 16), &ice);
    EXPECT_NE(ice.find("read of x[1] from slot 1 of x, which holds y[0]"), std::string::npos) << ice;
}

TEST(InterpScheduled, ReadBeforeWriteIsCaught) {
    // The emit runs first: x[0] has not been written.
    auto f = compile();
    ASSERT_TRUE(f->prog);
    Schedule s = statements(*f->prog);
    s.root = block({loop(0, 0, 3, {user(3, {it(0)})}), user(0, {lit(0)}), loop(0, 1, 4, {user(1, {it(0)})}),
                    loop(0, 0, 3, {user(2, {it(0)})})});
    std::string ice;
    run(*f->prog, s, plan(*f->prog, 5, 256), &ice);
    EXPECT_NE(ice.find("read of x[0] from slot 0 of x, which was never written"), std::string::npos) << ice;
}

TEST(InterpScheduled, ReadOfFreedSlotIsCaught) {
    // x_0(0), y_0(0), emit_e(0), y_0(1): the loop nest has two reads of x[0], so x[0]'s slot is
    // poisoned after emit_e(0); y_0(1) then reads x[1], never written, from that slot.
    auto f = compile();
    ASSERT_TRUE(f->prog);
    Schedule s = statements(*f->prog);
    s.root = block({user(0, {lit(0)}), user(2, {lit(0)}), user(3, {lit(0)}), user(2, {lit(1)})});
    std::string ice;
    run(*f->prog, s, plan(*f->prog, 1, 256), &ice);
    EXPECT_NE(ice.find("read of x[1] from slot 0 of x, which was freed after the last read of x[0]"), std::string::npos)
        << ice;
}

TEST(InterpScheduled, EmitPointsThatNeverRunAreCaught) {
    auto f = compile();
    ASSERT_TRUE(f->prog);
    Schedule s = sequential(*f->prog);
    s.root = block({user(0, {lit(0)}), loop(0, 1, 4, {user(1, {it(0)})}), loop(0, 0, 3, {user(2, {it(0)})}),
                    loop(0, 0, 2, {user(3, {it(0)})})});
    std::string ice;
    std::string got = run(*f->prog, s, plan(*f->prog, 5, 256), &ice);
    EXPECT_NE(ice.find("emit \"e\" point 3 (row-major) never ran"), std::string::npos) << ice;
}

}  // namespace
}  // namespace trlc
