#pragma once
// eval — the on-demand, memoized evaluation of tensor points (the heart of the interpreter).
//
// tensor_point(x, p) finds the equation of x that defines p (equations by specificity, most
// specific first; the first whose pattern matches p: var = coord - shift, constants equal, every
// var in [0, bound), guard true), evaluates its body with the variables bound, converts the
// result to x's dtype and remembers it.  A point no equation defines (points may lie past a
// dim's bound when a shift pattern reaches there) and a point that is already being evaluated
// (a dependence cycle) are run-time errors at the Read that asked for it.
//
// Evaluation does not recurse along dependences: demand.cpp keeps the chain of pending points
// on a heap work stack (ret[0] needs ret[1] needs … ret[10^7-1] is 10^7 frames of 64 bytes, not
// 10^7 nested C++ calls).  Before a pending point's body runs, the points its Reads will ask
// for (listed per equation, in evaluation order) are computed first; a Read of a point that is
// still missing suspends the body (it is rerun once that point is done).  The result, the order
// in which points are computed and the first error are those of the plain depth-first
// recursion.  Only the depth of one expression tree uses the C++ stack.
//
// Read nodes get their points from a pluggable PointSource: by default the evaluator itself
// (tensor_point: memoized on-demand evaluation, the point-wise mode); the scheduled interpreter
// (scheduled.cpp) plugs in its arena and runs equations itself with eval_equation.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "interp/value.h"
#include "ir/ir.h"

namespace trlc::interp {

/** A run-time error of the program: message at a source position, optional notes. */
struct RuntimeError {
    Loc loc;
    std::string message;
    std::vector<std::pair<Loc, std::string>> notes;
};

/** Where Read nodes find tensor points.  A source may throw RuntimeError (at "at"). */
class PointSource {
public:
    virtual ~PointSource() = default;
    virtual std::shared_ptr<const Value> read_point(int t, const std::vector<int64_t> &point, Loc at) = 0;
};

/** The ranks of `--interpret --ranks N` (interp/ranks.cpp): where a point of an
 *  `allreduce_mean` tensor (passes/distribute.h) gets its mean over the ranks. */
class Collective {
public:
    virtual ~Collective() = default;
    /** Rank "rank" computed "local" at point "point" of allreduce tensor "t": the mean over the
     *  ranks, which every rank's evaluator then holds there. */
    virtual Value complete(int rank, int t, const std::vector<int64_t> &point, Value local) = 0;
};

class Evaluator {
public:
    /** "rank": the data-parallel rank whose streams `rank_keyed` tensors draw (§8; 0 alone). */
    Evaluator(const ir::Program &prog, uint64_t seed, int rank = 0);

    /** Points of allreduce_mean tensors get their values from "c" (null: the local value, one
     *  rank).  Not owned. */
    void set_collective(Collective *c) { collective_ = c; }
    /** Whether demand() is running (a nested tensor_point would suspend instead of computing). */
    bool busy() const { return driving_; }
    /** Overwrite the value of a point already computed (Collective: the mean over the ranks). */
    void replace_point(int t, const std::vector<int64_t> &point, std::shared_ptr<const Value> v);

    /** Give a `load` tensor its value (checked by the caller). */
    void set_loaded(int tensor, Value v);

    /** The value of tensor "t" at "point"; "at" is the position of the read (for errors). */
    std::shared_ptr<const Value> tensor_point(int t, const std::vector<int64_t> &point, Loc at);

    /** Serve Read nodes from "src" (null = tensor_point, the default).  Not owned. */
    void set_source(PointSource *src) { source_ = src; }

    /** The loaded value of `load` tensor "t" (null before set_loaded). */
    std::shared_ptr<const Value> loaded(int t) const;

    /** Whether equation "ei" of tensor "t" defines "point": each variable is coordinate - shift
     *  (consistent where a variable repeats) in [0, bound), constants equal, the guard holds.
     *  On success "env" holds the variable values. */
    bool match_equation(int t, int ei, const std::vector<int64_t> &point, std::vector<int64_t> &env) const;

    /** Evaluate the body of equation "ei" of tensor "t" at variable values "env" (rng(...) uses
     *  the tensor's stream), converted to the tensor's dtype.  Not memoized; Reads go to the
     *  source.  Counts one point evaluated. */
    Value eval_equation(int t, int ei, const std::vector<int64_t> &env);

    /** Equation indices of tensor "t", most specific first (the order tensor_point tries). */
    const std::vector<int> &equation_order(int t) const { return order_[t]; }

    /** Evaluate a closed expression (an emit field or a save value): "env" holds the values of
     *  its variables, and rng(...) inside it uses the stream named "stream_name". */
    Value eval_root(const ir::NodePtr &node, const std::vector<int64_t> &env, const std::string &stream_name);

    /** Number of tensor points evaluated so far (for tests). */
    int64_t points_evaluated() const { return points_; }

    /** Number of bodies whose Reads ran in another order than their equation's read list
     *  (demand.cpp): 0 unless that list and eval() disagree (for tests). */
    int64_t read_order_mismatches() const { return order_mismatches_; }

    /** Largest number of points pending at once in on-demand evaluation (for tests). */
    int64_t max_pending() const { return max_pending_; }

    /** Off: compute no dependence ahead of a body; every missing point suspends its reader
     *  (the fallback path of demand.cpp alone, for tests).  On by default. */
    void set_prefetch(bool on) { prefetch_ = on; }

private:
    enum class State : uint8_t { Pending, Done, Failed };
    struct Entry {
        State state = State::Pending;
        std::shared_ptr<const Value> value;  // Done
    };
    struct Ctx {
        const std::vector<int64_t> *env;
        trl::Philox2x32Key stream;
        std::unordered_map<const ir::Node *, Value> cache;
        const std::vector<const ir::Node *> *expect = nullptr;  // reads in order, to check
        size_t next_read = 0;
    };
    struct Frame;

    // demand.cpp: the work-stack driver.
    std::shared_ptr<const Value> demand(int t, const std::vector<int64_t> &point, Loc at, int ei,
                                        const std::vector<int64_t> &env);
    bool prefetch(std::vector<Frame> &work);
    void push_frame(std::vector<Frame> &work, int t, const std::vector<int64_t> &point, Loc at, int ei,
                    const std::vector<int64_t> &env);
    int find_equation(int t, const std::vector<int64_t> &point, std::vector<int64_t> &env) const;
    RuntimeError cycle_error(int t, const std::vector<int64_t> &point, Loc at) const;
    RuntimeError undefined_error(int t, const std::vector<int64_t> &point, Loc at) const;
    Value eval_body(int t, int ei, const std::vector<int64_t> &env, const std::vector<const ir::Node *> *expect);

    const Value &eval(const ir::Node &n, Ctx &c);
    Value eval_uncached(const ir::Node &n, Ctx &c);
    Value eval_read(const ir::Node &n, Ctx &c);
    Value eval_builtin(const ir::Node &n, Ctx &c);
    Value eval_index(const ir::Node &n, Ctx &c);
    Shape shape_of(const ir::Type &t, const std::vector<int64_t> &env) const;
    std::string point_string(int t, const std::vector<int64_t> &point) const;

    std::shared_ptr<const Value> read_point(int t, const std::vector<int64_t> &point, Loc at) {
        return source_ ? source_->read_point(t, point, at) : tensor_point(t, point, at);
    }

    const ir::Program &prog_;
    uint64_t seed_;
    int rank_ = 0;
    Collective *collective_ = nullptr;
    PointSource *source_ = nullptr;
    std::vector<std::vector<int>> order_;  // per tensor: equation indices, most specific first
    // per tensor, per equation: its body's Read nodes in the order eval() reaches them
    std::vector<std::vector<std::vector<const ir::Node *>>> reads_;
    std::vector<trl::Philox2x32Key> streams_;
    struct PointHash {
        size_t operator()(const std::vector<int64_t> &p) const {
            uint64_t h = 0xcbf29ce484222325ull;
            for (int64_t c : p) h = (h ^ static_cast<uint64_t>(c)) * 0x100000001b3ull;
            return static_cast<size_t>(h ^ (h >> 29));
        }
    };
    std::vector<std::unordered_map<std::vector<int64_t>, Entry, PointHash>> memo_;
    // errors of points that failed during the current demand (State::Failed in memo_)
    std::unordered_map<const Entry *, RuntimeError> failed_;
    std::vector<int64_t> env_stack_;  // the variable values of the frames of the work stack
    bool driving_ = false;            // inside demand(): a missing point suspends its reader
    bool prefetch_ = true;
    int64_t points_ = 0;
    int64_t order_mismatches_ = 0;
    int64_t max_pending_ = 0;
};

/** The Read nodes of "body" in the order Evaluator::eval reaches them (each node once, as
 *  eval caches a node shared within one body; only the arguments a builtin evaluates). */
std::vector<const ir::Node *> reads_in_eval_order(const ir::Node &body);

/** Value of an index expression at the variable values "env". */
int64_t eval_index_expr(const ir::IndexExpr &e, const std::vector<int64_t> &env);
/** Whether a guard holds at "env" (null = true). */
bool eval_guard(const ir::Guard *g, const std::vector<int64_t> &env);

}  // namespace trlc::interp
