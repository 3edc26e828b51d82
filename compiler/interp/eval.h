#pragma once
// eval — the on-demand, memoized evaluation of tensor points (the heart of the interpreter).
//
// tensor_point(x, p) finds the equation of x that defines p (equations by specificity, most
// specific first; the first whose pattern matches p: var = coord - shift, constants equal, every
// var in [0, bound), guard true), evaluates its body with the variables bound, converts the
// result to x's dtype and remembers it.  A point no equation defines (points may lie past a
// dim's bound when a shift pattern reaches there) and a point that is already being evaluated
// (a dependence cycle) are run-time errors at the Read that asked for it.  Recursion follows the
// dependences, so the caller must run on a large stack (interpreter.cpp uses a 2 GiB thread).
//
// Read nodes get their points from a pluggable PointSource: by default the evaluator itself
// (tensor_point: memoized on-demand recursion, the point-wise mode); the scheduled interpreter
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
    virtual std::shared_ptr<const Value> read_point(int t, const std::vector<int64_t> &point,
                                                    Loc at) = 0;
};

class Evaluator {
public:
    Evaluator(const ir::Program &prog, uint64_t seed);

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
    bool match_equation(int t, int ei, const std::vector<int64_t> &point,
                        std::vector<int64_t> &env) const;

    /** Evaluate the body of equation "ei" of tensor "t" at variable values "env" (rng(...) uses
     *  the tensor's stream), converted to the tensor's dtype.  Not memoized; Reads go to the
     *  source.  Counts one point evaluated. */
    Value eval_equation(int t, int ei, const std::vector<int64_t> &env);

    /** Equation indices of tensor "t", most specific first (the order tensor_point tries). */
    const std::vector<int> &equation_order(int t) const { return order_[t]; }

    /** Evaluate a closed expression (an emit field or a save value): "env" holds the values of
     *  its variables, and rng(...) inside it uses the stream named "stream_name". */
    Value eval_root(const ir::NodePtr &node, const std::vector<int64_t> &env,
                    const std::string &stream_name);

    /** Number of tensor points evaluated so far (for tests). */
    int64_t points_evaluated() const { return points_; }

private:
    struct Entry {
        bool done = false;
        std::shared_ptr<const Value> value;
    };
    struct Ctx {
        const std::vector<int64_t> *env;
        trl::Philox2x32Key stream;
        std::unordered_map<const ir::Node *, Value> cache;
    };

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
    PointSource *source_ = nullptr;
    std::vector<std::vector<int>> order_;  // per tensor: equation indices, most specific first
    std::vector<trl::Philox2x32Key> streams_;
    struct PointHash {
        size_t operator()(const std::vector<int64_t> &p) const {
            uint64_t h = 0xcbf29ce484222325ull;
            for (int64_t c : p) h = (h ^ static_cast<uint64_t>(c)) * 0x100000001b3ull;
            return static_cast<size_t>(h ^ (h >> 29));
        }
    };
    std::vector<std::unordered_map<std::vector<int64_t>, Entry, PointHash>> memo_;
    int64_t points_ = 0;
};

/** Value of an index expression at the variable values "env". */
int64_t eval_index_expr(const ir::IndexExpr &e, const std::vector<int64_t> &env);
/** Whether a guard holds at "env" (null = true). */
bool eval_guard(const ir::Guard *g, const std::vector<int64_t> &env);

}  // namespace trlc::interp
