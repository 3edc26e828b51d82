// demand — on-demand evaluation of tensor points without recursion along dependences.
//
// tensor_point(x, p), asked from outside (an emit, a save), evaluates p and every point p needs,
// keeping the chain of pending points on a heap work stack (one Frame, 64 bytes, per point)
// instead of the C++ stack.  For the reverse recurrence
//     ret[T-1] = 1.0;  ret[t] = 1.0 + 0.5 * ret[t+1]
// asking ret[0] pushes ret[1], ret[2], …, ret[T-1] (the Reads of a frame's equation, listed once
// per equation in the order eval() reaches them, are computed before its body runs), then pops
// them back computing each body once: depth 10^7 costs ~0.7 GB of frames on the heap (3.5 GB
// peak with the 10^7 memoized values), no stack.
//
// The result is that of the plain depth-first recursion (eval → Read → tensor_point → eval),
// including its first error: a frame's dependences are computed in the order its body reads
// them; when one fails (its own error or one it read), the error is kept (State::Failed) and
// the reader's body runs, so the reader reports its own earlier error if it has one, else the
// failed point's error when it reads it.  A body that reads a point still missing (the read list
// missed it, or its dependences were cut short by an error) is suspended (Suspend unwinds only
// that body's expression) and rerun once the point is done.  A dependence cycle is seen as a
// Read of a point that is pending, exactly as in the recursion: the pending points are the
// recursion's call chain.  Running out of memory is a RuntimeError at the outermost Read.
#include <algorithm>
#include <new>
#include <unordered_set>

#include "interp/eval.h"
#include "support/diagnostics.h"

namespace trlc::interp {

namespace {

/** The body of a pending point reads "point" of tensor "t", not computed yet: evaluate that
 *  point (equation "ei" at "env") first, then rerun the body. */
struct Suspend {
    int t;
    std::vector<int64_t> point;
    Loc at;
    int ei;
    std::vector<int64_t> env;
};

/** The arguments of builtin "n" that Evaluator::eval_builtin evaluates, in its order. */
std::vector<size_t> evaluated_builtin_args(const ir::Node &n) {
    size_t k = n.args.size();
    auto first = [&](size_t m) {
        std::vector<size_t> r;
        for (size_t i = 0; i < std::min(m, k); ++i) r.push_back(i);
        return r;
    };
    switch (n.builtin) {
    case ir::BuiltinOp::Concat:
    case ir::BuiltinOp::Stack: return first(k);
    case ir::BuiltinOp::MatMul:
    case ir::BuiltinOp::Gather:
    case ir::BuiltinOp::DiscountedCumsum:
    case ir::BuiltinOp::Categorical:
    case ir::BuiltinOp::FoldIn:
    case ir::BuiltinOp::Orthogonal: return first(2);
    case ir::BuiltinOp::Clamp: return first(3);
    case ir::BuiltinOp::Zeros:
    case ir::BuiltinOp::Ones: return {};
    case ir::BuiltinOp::Full: return k ? std::vector<size_t>{k - 1} : std::vector<size_t>{};
    default:
        return first(1);  // reductions, softmax, transpose, reshape, one_hot, cumsum,
                          // arange, uniform, normal, permutation
    }
}

void collect_reads(const ir::Node &n, std::unordered_set<const ir::Node *> &seen, std::vector<const ir::Node *> &out) {
    if (!seen.insert(&n).second) return;
    switch (n.kind) {
    case ir::NodeKind::Read: out.push_back(&n); return;
    case ir::NodeKind::Builtin:
        for (size_t i : evaluated_builtin_args(n)) collect_reads(*n.args[i], seen, out);
        return;
    case ir::NodeKind::Index:
        if (!n.args.empty()) collect_reads(*n.args[0], seen, out);
        for (const auto &si : n.sindex)
            if (si.kind == ir::SpatialIndex::Scalar && si.value) collect_reads(*si.value, seen, out);
        return;
    default:
        for (const auto &a : n.args) collect_reads(*a, seen, out);
    }
}

}  // namespace

std::vector<const ir::Node *> reads_in_eval_order(const ir::Node &body) {
    std::unordered_set<const ir::Node *> seen;
    std::vector<const ir::Node *> out;
    collect_reads(body, seen, out);
    return out;
}

/** One pending point: its equation, where its variable values are, how far its dependences
 *  have been computed. */
struct Evaluator::Frame {
    int t = 0, ei = 0;
    uint32_t next = 0;                            // prefetch: the next Read of the read list …
    bool exact = false;                           // dependences done or cut short: run the body
    bool complete = false;                        // every listed Read was prefetched (the body must read in order)
    const std::vector<int64_t> *point = nullptr;  // the key of its memo_ entry (nodes stay put)
    Entry *entry = nullptr;
    size_t env_at = 0;  // its variable values: env_stack_[env_at, env_at + #vars)
    Loc at;             // the Read that asked for it
    int64_t sub = 0;    // … and the next point of that Read's block (row-major)
};

std::string Evaluator::point_string(int t, const std::vector<int64_t> &point) const {
    const ir::Tensor &x = prog_.tensors[t];
    std::string s;
    for (size_t k = 0; k < point.size(); ++k) {
        if (k) s += ", ";
        s += prog_.dims[x.dims[k]].name + " = " + std::to_string(point[k]);
    }
    return s;
}

RuntimeError Evaluator::cycle_error(int t, const std::vector<int64_t> &point, Loc at) const {
    const ir::Tensor &x = prog_.tensors[t];
    return RuntimeError{at,
                        x.name + (point.empty() ? "" : " at " + point_string(t, point)) +
                            " depends on itself (a dependence cycle)",
                        {{x.loc, x.name + " is defined here"}}};
}

RuntimeError Evaluator::undefined_error(int t, const std::vector<int64_t> &point, Loc at) const {
    const ir::Tensor &x = prog_.tensors[t];
    return RuntimeError{at,
                        x.name + " is not defined at " + point_string(t, point) + " (no equation of " + x.name +
                            " matches this point)",
                        {{x.loc, x.name + " is defined here"}}};
}

int Evaluator::find_equation(int t, const std::vector<int64_t> &point, std::vector<int64_t> &env) const {
    for (int ei : order_[t])
        if (match_equation(t, ei, point, env)) return ei;
    return -1;
}

std::shared_ptr<const Value> Evaluator::tensor_point(int t, const std::vector<int64_t> &point, Loc at) {
    const ir::Tensor &x = prog_.tensors[t];
    TRLC_ASSERT(point.size() == x.dims.size()) << "point of rank " << point.size() << " for " << x.name;
    // Points are not limited to [0, bound): a shift pattern reaches past the bound (§3).
    auto it = memo_[t].find(point);
    if (it != memo_[t].end()) {
        switch (it->second.state) {
        case State::Done: return it->second.value;
        case State::Pending: throw cycle_error(t, point, at);
        case State::Failed: throw failed_.at(&it->second);
        }
    }
    if (x.is_load) throw RuntimeError{at, x.name + " has not been loaded", {}};
    std::vector<int64_t> env;
    int ei = find_equation(t, point, env);
    if (ei < 0) throw undefined_error(t, point, at);
    if (driving_) throw Suspend{t, point, at, ei, std::move(env)};
    return demand(t, point, at, ei, env);
}

void Evaluator::push_frame(std::vector<Frame> &work, int t, const std::vector<int64_t> &point, Loc at, int ei,
                           const std::vector<int64_t> &env) {
    auto ins = memo_[t].emplace(point, Entry{});
    TRLC_ASSERT(ins.second) << "pushing a point that is already known";
    Frame f;
    f.t = t;
    f.ei = ei;
    f.point = &ins.first->first;
    f.entry = &ins.first->second;
    f.env_at = env_stack_.size();
    f.at = at;
    env_stack_.insert(env_stack_.end(), env.begin(), env.end());
    work.push_back(f);
    max_pending_ = std::max<int64_t>(max_pending_, static_cast<int64_t>(work.size()));
}

// Advance the dependences of the top frame: push the first listed point that is missing and
// return true, or mark the frame ready to run (exact) and return false.
bool Evaluator::prefetch(std::vector<Frame> &work) {
    Frame &f = work.back();
    const auto &reads = reads_[f.t][f.ei];
    const size_t nvars = prog_.tensors[f.t].equations[f.ei].vars.size();
    std::vector<int64_t> env(env_stack_.begin() + f.env_at, env_stack_.begin() + f.env_at + nvars);
    std::vector<int64_t> point, lo, len, dep_env;
    std::vector<size_t> slice_pos;
    for (; f.next < reads.size(); ++f.next, f.sub = 0) {
        const ir::Node &r = *reads[f.next];
        point.assign(r.index.size(), 0);
        lo.clear();
        len.clear();
        slice_pos.clear();
        for (size_t k = 0; k < r.index.size(); ++k) {
            const ir::ReadIndex &ri = r.index[k];
            if (!ri.is_slice) {
                point[k] = eval_index_expr(*ri.point, env);
                continue;
            }
            int64_t l = eval_index_expr(*ri.lo, env), h = eval_index_expr(*ri.hi, env);
            slice_pos.push_back(k);
            lo.push_back(l);
            len.push_back(std::max<int64_t>(0, h - l));
        }
        const int64_t total = numel(len);
        for (; f.sub < total; ++f.sub) {
            for (size_t s = slice_pos.size(), rest = f.sub; s-- > 0;) {
                point[slice_pos[s]] = lo[s] + static_cast<int64_t>(rest % len[s]);
                rest /= len[s];
            }
            auto it = memo_[r.tensor].find(point);
            if (it != memo_[r.tensor].end() && it->second.state == State::Done) continue;
            int ei = -1;
            if (it == memo_[r.tensor].end() && !prog_.tensors[r.tensor].is_load)
                ei = find_equation(r.tensor, point, dep_env);
            if (ei < 0) {  // pending (a cycle), failed, not loaded or undefined: the body says
                f.exact = true;
                return false;
            }
            push_frame(work, r.tensor, point, r.loc, ei, dep_env);  // invalidates f
            return true;
        }
    }
    f.exact = true;
    f.complete = true;
    return false;
}

std::shared_ptr<const Value> Evaluator::demand(int t, const std::vector<int64_t> &point, Loc at, int ei,
                                               const std::vector<int64_t> &env) {
    static_assert(sizeof(void *) != 8 || sizeof(Frame) <= 64, "a pending point costs 64 bytes");
    std::vector<Frame> work;
    std::vector<std::pair<int, std::vector<int64_t>>> failed;  // forgotten when this demand ends
    std::vector<int64_t> body_env;
    std::shared_ptr<const Value> result;
    auto forget = [&] {
        for (const Frame &f : work) memo_[f.t].erase(memo_[f.t].find(*f.point));
        for (const auto &k : failed) {
            auto it = memo_[k.first].find(k.second);
            failed_.erase(&it->second);
            memo_[k.first].erase(it);
        }
        std::vector<Frame>().swap(work);
        std::vector<int64_t>().swap(env_stack_);
        driving_ = false;
    };
    driving_ = true;
    try {
        push_frame(work, t, point, at, ei, env);
        for (;;) {
            if (!work.back().exact) {
                if (!prefetch_)
                    work.back().exact = true;
                else if (prefetch(work))
                    continue;  // a dependence was pushed
            }
            Frame &f = work.back();
            const size_t nvars = prog_.tensors[f.t].equations[f.ei].vars.size();
            body_env.assign(env_stack_.begin() + f.env_at, env_stack_.begin() + f.env_at + nvars);
            bool ok = true;
            try {
                Value v = eval_body(f.t, f.ei, body_env, f.complete ? &reads_[f.t][f.ei] : nullptr);
                if (collective_ && prog_.tensors[f.t].allreduce_mean)  // the mean over the ranks
                    v = collective_->complete(rank_, f.t, *f.point, std::move(v));
                f.entry->state = State::Done;
                f.entry->value = std::make_shared<const Value>(std::move(v));
            } catch (Suspend &s) {
                f.complete = false;
                push_frame(work, s.t, s.point, s.at, s.ei, s.env);
                continue;
            } catch (RuntimeError &e) {
                if (work.size() == 1) throw;
                ok = false;
                f.entry->state = State::Failed;
                failed_.emplace(f.entry, std::move(e));
                failed.push_back({f.t, *f.point});
            }
            if (work.size() == 1) {
                result = f.entry->value;
                work.clear();
                break;
            }
            env_stack_.resize(f.env_at);
            work.pop_back();
            if (!ok) work.back().exact = true;  // its reader runs its body and meets the error
        }
    } catch (const std::bad_alloc &) {
        const size_t pending = work.size();
        forget();
        throw RuntimeError{at,
                           "out of memory evaluating " + prog_.tensors[t].name +
                               (point.empty() ? "" : " at " + point_string(t, point)) + " (" + std::to_string(pending) +
                               " points were pending)",
                           {}};
    } catch (...) {
        forget();
        throw;
    }
    forget();
    return result;
}

}  // namespace trlc::interp
