// scheduled — `trlc --interpret=scheduled`: run a program in the order of its schedule, through
// its memory plan, and check both on the way.
//
// The loop nest (Schedule::root) is walked; a User node runs one statement instance:
//   tensor statement  x_k(args): for every value of the batch dims (row-major) the full tensor
//                     point p is formed, equation k's variables are solved from p
//                     (var = coord - shift) and its body is evaluated; all points of the instance
//                     are evaluated before any is stored (one tensor operation: an output donated
//                     from an input must not clobber it mid-instance); each value is stored as raw
//                     bytes in its slot, arena[offset + slot_of(p) * slot_bytes].
//   emit statement    the fields' JSON lines go to a per-stream reorder buffer, printed in the
//                     point-wise interpreter's order (streams in program order, points
//                     lexicographically), so the output does not depend on the schedule.
//   save statement    the value is evaluated (reads from the arena) and written at once.
// Reads of tensor points are served from the arena (PointSource); `load` tensors stay outside
// it, as in the point-wise interpreter.  Values are stored by leaves: f32 as float, f64 as
// double, i32 as int32, bool as one byte, keys as trl::RngKey.
//
// Checking.  Every arena byte records which write (tensor, point) last filled it.  Before the
// run, a dry walk of the loop nest counts how often each point will be read (Read indices are
// affine in the variables, never data dependent; every Read node of a body is evaluated, so the
// count is exact or an over-approximation).  A read decrements the count; at zero the slot is
// poisoned (0xFF bytes, a NaN pattern) and marked freed.  A read that finds another point, a
// freed slot or nothing in the slot is an internal error naming the tensor, the point and the
// slot ("read of ret[3] from slot 1 of ret, which holds ret[5]"): the schedule or the memory plan
// is wrong.  So are an instance whose point is not defined by its equation, a point written
// twice, and an emit point that never ran.  Under --mem-budget the swaps move buffers (bytes and
// owners) to a host arena and back around the runs of children the plan names, poisoning the
// arena bytes meanwhile, so a plan that swaps out a buffer still read is caught as well.
//
// Ranks (`--interpret=scheduled --ranks N`, issue 21): N runs, one per rank, each with its
// arena and its rank's streams, walk the same loop nest on threads of their own and meet at
// every instance of an all-reduced tensor (passes/distribute.h), where each point's value is
// the mean over the ranks as interp/ranks.h makes it (rank order, trl::rank_mean) before any
// rank stores it.  Records are printed at the end as the point-wise interpreter prints them
// (each point's records of rank 0, 1, …, with a "rank" field); rank 0 writes the saves and
// every rank's replicated saves give the parameter digest.
#include <pthread.h>

#include <condition_variable>
#include <cstring>
#include <iostream>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "interp/eval.h"
#include "interp/interpreter.h"
#include "interp/outputs.h"
#include "interp/ranks.h"
#include "interp/run.h"
#include "memory/memplan.h"
#include "passes/distribute.h"
#include "schedule/schedule.h"

namespace trlc {

namespace {

using interp::Evaluator;
using interp::OpError;
using interp::RuntimeError;
using interp::Value;

struct PointHash {
    size_t operator()(const std::vector<int64_t> &p) const {
        uint64_t h = 0xcbf29ce484222325ull;
        for (int64_t c : p) h = (h ^ static_cast<uint64_t>(c)) * 0x100000001b3ull;
        return static_cast<size_t>(h ^ (h >> 29));
    }
};
template <class V>
using PointMap = std::unordered_map<std::vector<int64_t>, V, PointHash>;

int64_t leaf_size(ir::DType dt) {
    switch (dt) {
    case ir::DType::Bool: return 1;
    case ir::DType::I32:
    case ir::DType::F32: return 4;
    case ir::DType::F64: return 8;
    case ir::DType::Key: return static_cast<int64_t>(sizeof(trl::RngKey));
    }
    return 8;
}

/** The shape of a value of tensor type "t" at point "p": a point-dependent extent (in the
 *  tensor's coordinates, sema's EqSrc::coord_type) evaluated there, the others static. */
interp::Shape shape_at(const ir::Type &t, const std::vector<int64_t> &p) {
    interp::Shape s;
    for (const auto &e : t.shape) s.push_back(e.is_static() ? e.max_value : interp::eval_index_expr(*e.dynamic, p));
    return s;
}

/** Bytes of a value of tensor type "t" at point "p", leaves packed in order (a point-dependent
 *  shape uses the first bytes of its padded slot). */
int64_t value_bytes(const ir::Type &t, const std::vector<int64_t> &p) {
    if (t.is_tuple) {
        int64_t n = 0;
        for (const auto &e : t.elems) n += value_bytes(e, p);
        return n;
    }
    return interp::numel(shape_at(t, p)) * leaf_size(t.dtype);
}

/** Another rank failed: this one stops at its next meeting (its own error is the other's). */
struct RankAborted {};

/** Where the ranks' runs meet at an instance of an all-reduced statement: each deposits its
 *  values of the instance's points (in point order) and gets the means once every rank has
 *  deposited.  The ranks walk the same loop nest, so their n-th meetings are the same instance. */
class RankMeeting {
public:
    explicit RankMeeting(int ranks) : ranks_(ranks), in_(static_cast<size_t>(ranks)) {}

    std::vector<Value> mean(int rank, std::vector<Value> vals) {
        std::unique_lock<std::mutex> lock(m_);
        if (aborted_) throw RankAborted{};
        in_[rank] = std::move(vals);
        if (++arrived_ == ranks_) {
            out_.clear();
            for (size_t p = 0; p < in_[0].size(); ++p) {
                std::vector<Value> vs;
                for (int r = 0; r < ranks_; ++r) {
                    if (in_[r].size() != in_[0].size())
                        internal_error("scheduled interpreter: the ranks met at different statements", __FILE__,
                                       __LINE__);
                    vs.push_back(std::move(in_[r][p]));
                }
                out_.push_back(interp::rank_mean(vs));
            }
            arrived_ = 0;
            ++generation_;
            cv_.notify_all();
            return out_;
        }
        const uint64_t g = generation_;
        cv_.wait(lock, [&] { return generation_ != g || aborted_; });
        if (generation_ == g) throw RankAborted{};
        return out_;
    }

    void abort() {
        std::lock_guard<std::mutex> lock(m_);
        aborted_ = true;
        cv_.notify_all();
    }

private:
    std::mutex m_;
    std::condition_variable cv_;
    const int ranks_;
    int arrived_ = 0;
    uint64_t generation_ = 0;
    bool aborted_ = false;
    std::vector<std::vector<Value>> in_;
    std::vector<Value> out_;
};

class ScheduledRun : public interp::PointSource {
public:
    /** "meeting": the ranks' meeting point (--ranks), with this run's "rank"; null alone. */
    ScheduledRun(const ir::Program &prog, const Schedule &sched, const MemPlan &plan, const InterpOptions &opts,
                 std::ostream &out, int rank = 0, RankMeeting *meeting = nullptr)
        : prog_(prog), sched_(sched), plan_(plan), opts_(opts), out_(out), ev_(prog, opts.seed, rank), rank_(rank),
          meeting_(meeting) {}

    /** With ranks: emit "e"'s record at row-major point "lin" ("" where its guard is false). */
    const std::string &line(size_t e, size_t lin) const { return lines_.at(e).at(lin); }
    /** With ranks: the `output` lines (Save index → JSON line) and the replicated saves' digest. */
    const std::map<int, std::string> &output_lines() const { return output_lines_; }
    uint64_t digest() const { return digest_; }
    bool any_replicated_save() const { return replicated_saves_ > 0; }

    void run() {
        interp::load_all(ev_, prog_, opts_.inputs);
        setup();
        counting_ = true;
        walk_root();
        counting_ = false;
        ev_.set_source(this);
        walk_root();
        flush_emits();
        for (size_t e = 0; e < prog_.emits.size(); ++e) {
            int64_t first = emitted_[e];  // with ranks nothing was printed: the first not filled
            if (meeting_)
                for (first = 0; first < static_cast<int64_t>(filled_[e].size()) && filled_[e][first];) ++first;
            if (first < static_cast<int64_t>(lines_[e].size()))
                fault("emit \"" + prog_.emits[e].stream + "\" point " + std::to_string(first) +
                      " (row-major) never ran in the schedule");
        }
        if (meeting_) return;  // interpret_scheduled prints the ranks' records and outputs
        for (const auto &[k, line] : output_lines_) out_ << line;  // outputs, in program order
        out_.flush();
    }

    /** Lines emitted so far, in order, are written; on an error the rest stays unwritten. */
    void flush_emits() {
        if (meeting_) return;
        while (cur_emit_ < lines_.size()) {
            auto &ls = lines_[cur_emit_];
            int64_t &i = emitted_[cur_emit_];
            while (i < static_cast<int64_t>(ls.size()) && filled_[cur_emit_][i]) {
                out_ << ls[i];
                ls[i].clear();
                ls[i].shrink_to_fit();
                ++i;
            }
            if (i < static_cast<int64_t>(ls.size())) break;
            ++cur_emit_;
        }
        out_.flush();
    }

    std::shared_ptr<const Value> read_point(int t, const std::vector<int64_t> &p, Loc at) override {
        const ir::Tensor &x = prog_.tensors[t];
        if (x.is_load) {
            auto v = ev_.loaded(t);
            if (!v) throw RuntimeError{at, x.name + " has not been loaded", {}};
            return v;
        }
        const Buffer &b = buffer(t);
        int64_t slot = slot_checked(b, p);
        int64_t base = b.offset + slot * b.slot_bytes, n = value_bytes(x.type, p);
        // The slot must hold exactly this point, written and not freed.
        for (int64_t i = 0; i < n; ++i) {
            uint32_t w = owner_[base + i];
            if (w != 0 && writes_[w].tensor == t && writes_[w].point == p && !writes_[w].freed) continue;
            std::string held = w == 0             ? "which was never written"
                               : writes_[w].freed ? "which was freed after the last read of " +
                                                        point_name(writes_[w].tensor, writes_[w].point)
                                                  : "which holds " + point_name(writes_[w].tensor, writes_[w].point);
            fault("read of " + point_name(t, p) + " from slot " + std::to_string(slot) + " of " + x.name + ", " + held +
                  " (arena byte " + std::to_string(base + i) + ")");
        }
        auto v = std::make_shared<Value>();
        const uint8_t *src = arena_.data() + base;
        decode(x.type, p, src, *v);
        auto it = reads_left_[t].find(p);
        if (it != reads_left_[t].end() && --it->second == 0) {
            writes_[owner_[base]].freed = true;
            std::memset(arena_.data() + base, 0xFF, static_cast<size_t>(n));
        }
        return v;
    }

private:
    struct WriteRec {
        int tensor = -1;
        std::vector<int64_t> point;
        bool freed = false;
    };

    [[noreturn]] void fault(const std::string &msg) {
        internal_error("scheduled interpreter: " + msg + " (the schedule or the memory plan is wrong)", __FILE__,
                       __LINE__);
    }

    std::string point_name(int t, const std::vector<int64_t> &p) const {
        std::string s = prog_.tensors[t].name;
        if (p.empty()) return s;
        s += '[';
        for (size_t k = 0; k < p.size(); ++k) s += (k ? ", " : "") + std::to_string(p[k]);
        return s + ']';
    }

    const Buffer &buffer(int t) {
        int bi = plan_.buffer_of(t);
        if (bi < 0 || bi >= static_cast<int>(plan_.buffers.size()))
            fault("no buffer for tensor " + prog_.tensors[t].name);
        return plan_.buffers[bi];
    }

    int64_t slot_checked(const Buffer &b, const std::vector<int64_t> &p) {
        int64_t slot = b.slot_of(p);
        const ir::Tensor &x = prog_.tensors[b.tensor];
        if (slot < 0 || slot >= b.slots)
            fault(point_name(b.tensor, p) + " maps to slot " + std::to_string(slot) + " of " + x.name + ", which has " +
                  std::to_string(b.slots) + " slots");
        int64_t n = value_bytes(x.type, p);
        if (n > b.slot_bytes)
            fault("a slot of " + x.name + " has " + std::to_string(b.slot_bytes) + " bytes, its value needs " +
                  std::to_string(n));
        if (b.offset < 0 || b.offset + (slot + 1) * b.slot_bytes > plan_.peak_bytes)
            fault("slot " + std::to_string(slot) + " of " + x.name + " lies outside the arena of " +
                  std::to_string(plan_.peak_bytes) + " bytes");
        return slot;
    }

    void setup() {
        arena_.assign(static_cast<size_t>(std::max<int64_t>(plan_.peak_bytes, 0)), 0xFF);
        owner_.assign(arena_.size(), 0);
        host_arena_.assign(static_cast<size_t>(std::max<int64_t>(plan_.host_bytes, 0)), 0xFF);
        host_owner_.assign(host_arena_.size(), 0);
        writes_.assign(1, WriteRec{});
        reads_left_.assign(prog_.tensors.size(), {});
        lines_.assign(prog_.emits.size(), {});
        filled_.assign(prog_.emits.size(), {});
        emitted_.assign(prog_.emits.size(), 0);
        for (size_t e = 0; e < prog_.emits.size(); ++e) {
            int64_t total = 1;
            for (int d : prog_.emits[e].vars) total *= prog_.dims[d].bound;
            lines_[e].resize(static_cast<size_t>(total));
            filled_[e].assign(static_cast<size_t>(total), false);
        }
        its_.assign(static_cast<size_t>(std::max(sched_.num_iterators, 0)), 0);
    }

    void walk_root() {
        if (sched_.root) walk(*sched_.root);
    }

    void walk(const LoopNode &n) {
        switch (n.kind) {
        case LoopNode::For: {
            if (n.var < 0 || n.var >= static_cast<int>(its_.size())) its_.resize(n.var + 1, 0);
            for (its_[n.var] = eval_ast_expr(*n.init, its_); eval_ast_expr(*n.cond, its_) != 0;
                 its_[n.var] += eval_ast_expr(*n.step, its_)) {
                stage(&n, true);
                for (const auto &c : n.children) walk(*c);
                stage(&n, false);
            }
            return;
        }
        case LoopNode::If:
            if (eval_ast_expr(*n.if_cond, its_) != 0) {
                if (!n.children.empty()) walk(*n.children[0]);
            } else if (n.children.size() > 1) {
                walk(*n.children[1]);
            }
            return;
        case LoopNode::Block:
            for (size_t i = 0; i < n.children.size(); ++i) {
                swap(&n, i, true);
                walk(*n.children[i]);
                swap(&n, i, false);
            }
            return;
        case LoopNode::User: {
            std::vector<int64_t> args;
            for (const auto &a : n.args) args.push_back(eval_ast_expr(*a, its_));
            run_instance(n.stmt, args);
            return;
        }
        }
    }

    /** n arena bytes at "dev" and their owners to the host arena at "host" (out: the arena
     *  bytes are then poisoned and unowned, so a read of them is an error), or back (!out). */
    void move_bytes(size_t dev, size_t host, size_t n, bool out) {
        if (out) {
            std::memcpy(host_arena_.data() + host, arena_.data() + dev, n);
            std::copy(owner_.begin() + dev, owner_.begin() + dev + n, host_owner_.begin() + host);
            std::memset(arena_.data() + dev, 0xFF, n);
            std::fill(owner_.begin() + dev, owner_.begin() + dev + n, 0u);
        } else {
            std::memcpy(arena_.data() + dev, host_arena_.data() + host, n);
            std::copy(host_owner_.begin() + host, host_owner_.begin() + host + n, owner_.begin() + dev);
        }
    }

    /** --mem-budget's swaps (memory/swap.cpp) around child "i" of "block": before it (out) the
     *  buffers whose run starts there go to the host arena with their bytes' owners, and their
     *  arena bytes are poisoned and unowned (a read of them during the run is an error); after
     *  it (in) those whose run ends there come back. */
    void swap(const LoopNode *block, size_t i, bool out) {
        for (const Swap &w : plan_.swaps) {
            if (w.block != block || (out ? w.first : w.last) != i) continue;
            const Buffer &b = plan_.buffers.at(w.buffer);
            const size_t dev = static_cast<size_t>(b.offset), host = static_cast<size_t>(w.host_offset);
            const size_t n = static_cast<size_t>(b.bytes);
            if (dev + n > arena_.size() || host + n > host_arena_.size())
                fault("the swap of " + prog_.tensors[b.tensor].name + " lies outside an arena");
            move_bytes(dev, host, n, out);
        }
    }

    /** --mem-budget's stagings (memory/staging.cpp) of loop "loop": at the start of an iteration
     *  (in) the slice the iterators name comes from the host arena with its owners; at its end
     *  (out) it goes back and the arena bytes are poisoned and unowned. */
    void stage(const LoopNode *loop, bool in) {
        for (const Staging &sg : plan_.stagings) {
            if (sg.loop != loop) continue;
            const Buffer &b = plan_.buffers.at(sg.buffer);
            int64_t slice = 0;
            for (size_t k = 0; k < sg.positions.size(); ++k) {
                int64_t r = (its_.at(sg.vars[k]) - sg.lower[k]) % sg.modulus[k];
                slice += (r < 0 ? r + sg.modulus[k] : r) * sg.host_stride[k];
            }
            const size_t dev = static_cast<size_t>(b.offset), n = static_cast<size_t>(sg.slice_bytes);
            const size_t host = static_cast<size_t>(sg.host_offset + slice * sg.slice_bytes);
            if (dev + n > arena_.size() || host + n > host_arena_.size())
                fault("the staged slice of " + prog_.tensors[b.tensor].name + " lies outside an arena");
            move_bytes(dev, host, n, !in);
        }
    }

    /** All full points of an instance: "args" at the non-batch positions, every value of the
     *  batch positions (row-major) at the others. */
    std::vector<std::vector<int64_t>> points_of(const Statement &s, const std::vector<int> &dims,
                                                const std::vector<int64_t> &args) {
        size_t rank = dims.size();
        std::vector<bool> is_batch(rank, false);
        for (int p : s.batch_positions) {
            if (p < 0 || p >= static_cast<int>(rank))
                fault("statement " + s.name + " has batch position " + std::to_string(p));
            is_batch[p] = true;
        }
        if (args.size() + s.batch_positions.size() != rank)
            fault("statement " + s.name + " runs with " + std::to_string(args.size()) + " coordinates and " +
                  std::to_string(s.batch_positions.size()) + " batch dims, its domain has " + std::to_string(rank));
        std::vector<int64_t> p(rank, 0);
        std::vector<int> bpos;
        for (size_t k = 0, a = 0; k < rank; ++k) {
            if (is_batch[k])
                bpos.push_back(static_cast<int>(k));
            else
                p[k] = args[a++];
        }
        std::vector<std::vector<int64_t>> out;
        while (true) {
            out.push_back(p);
            int q = static_cast<int>(bpos.size()) - 1;
            for (; q >= 0; --q) {
                int k = bpos[q];
                if (++p[k] < prog_.dims[dims[k]].bound) break;
                p[k] = 0;
            }
            if (q < 0) break;
        }
        for (int k : bpos)
            if (prog_.dims[dims[k]].bound <= 0) return {};
        return out;
    }

    void run_instance(int si, const std::vector<int64_t> &args) {
        if (si < 0 || si >= static_cast<int>(sched_.statements.size()))
            fault("loop nest runs statement " + std::to_string(si));
        const Statement &s = sched_.statements[si];
        switch (s.kind) {
        case Statement::Tensor: run_tensor(s, args); return;
        case Statement::Emit: run_emit(s, args); return;
        case Statement::Save: run_save(s); return;
        }
    }

    void run_tensor(const Statement &s, const std::vector<int64_t> &args) {
        const ir::Tensor &x = prog_.tensors.at(s.index);
        if (s.equation < 0 || s.equation >= static_cast<int>(x.equations.size()))
            fault("statement " + s.name + " names equation " + std::to_string(s.equation));
        const ir::Equation &eq = x.equations[s.equation];
        std::vector<std::vector<int64_t>> pts = points_of(s, x.dims, args);
        std::vector<std::vector<int64_t>> envs;
        for (const auto &p : pts) {
            std::vector<int64_t> env;
            int winner = -1;
            for (int ei : ev_.equation_order(s.index))
                if (ev_.match_equation(s.index, ei, p, env)) {
                    winner = ei;
                    break;
                }
            if (winner != s.equation)
                fault("statement " + s.name + " runs at " + point_name(s.index, p) + ", which " +
                      (winner < 0 ? std::string("no equation defines")
                                  : "equation " + std::to_string(winner) + " defines"));
            ev_.match_equation(s.index, s.equation, p, env);
            envs.push_back(std::move(env));
        }
        if (counting_) {
            for (const auto &env : envs) count_reads(*eq.body, env);
            return;
        }
        std::vector<Value> vals;
        for (const auto &env : envs) vals.push_back(ev_.eval_equation(s.index, s.equation, env));
        if (meeting_ && x.allreduce_mean) vals = meeting_->mean(rank_, std::move(vals));  // the mean over the ranks
        for (size_t i = 0; i < pts.size(); ++i) store(s.index, pts[i], vals[i]);
    }

    void run_emit(const Statement &s, const std::vector<int64_t> &args) {
        const ir::Emit &e = prog_.emits.at(s.index);
        for (const auto &p : points_of(s, e.vars, args)) {
            // The fields are read only where the guard's quasi-affine part holds
            // (ir::Emit::field_guard), as the PDG and the memory plan count them.
            const bool fields_read = interp::eval_guard(e.field_guard.get(), p);
            if (counting_) {
                if (fields_read)
                    for (const auto &f : e.fields) count_reads(*f.second, p);
                if (e.guard) count_reads(*e.guard, p);
                continue;
            }
            int64_t lin = 0;
            for (size_t k = 0; k < p.size(); ++k) {
                int64_t bd = prog_.dims[e.vars[k]].bound;
                if (p[k] < 0 || p[k] >= bd) fault("statement " + s.name + " runs at a point outside the emit's domain");
                lin = lin * bd + p[k];
            }
            if (filled_[s.index][lin]) fault("statement " + s.name + " runs twice at one point");
            // The guard's reads count like a field's.  Where it is false the line is empty and
            // the fields' reads are still done (not evaluated) where the plan counts them:
            // every point is freed as planned.
            std::string line = interp::emit_line(ev_, e, p, meeting_ ? rank_ : -1);
            if (line.empty() && fields_read)
                for (const auto &f : e.fields) count_reads(*f.second, p, true);
            lines_[s.index][lin] = std::move(line);
            filled_[s.index][lin] = true;
            if (static_cast<size_t>(s.index) == cur_emit_) flush_emits();
        }
    }

    void run_save(const Statement &s) {
        const ir::Save &sv = prog_.saves.at(s.index);
        if (counting_) {
            count_reads(*sv.value, {});
            return;
        }
        if (!sv.output.empty()) {  // printed after the emits, in program order (as --interpret)
            output_lines_[s.index] = interp::output_line(sv, ev_.eval_root(sv.value, {}, sv.output));
            return;
        }
        Value v = ev_.eval_root(sv.value, {}, sv.path);
        if (meeting_ && save_is_replicated(prog_, sv)) {  // the ranks' parameter digest
            digest_ = interp::digest_value(digest_, v);
            ++replicated_saves_;
        }
        if (rank_ == 0) interp::write_save(sv, v, opts_.output_dir);  // rank 0 alone writes
    }

    /** Dry walk: count the points every Read node of "body" reads at "env" (each node once);
     *  with "consume", read each of them instead (checked, and freed after its last read)
     *  without evaluating "body": the fields of an emit point whose guard is false. */
    void count_reads(const ir::Node &body, const std::vector<int64_t> &env, bool consume = false) {
        std::vector<const ir::Node *> stack{&body};
        std::unordered_map<const ir::Node *, bool> seen;
        while (!stack.empty()) {
            const ir::Node *n = stack.back();
            stack.pop_back();
            if (!seen.emplace(n, true).second) continue;
            for (const auto &a : n->args) stack.push_back(a.get());
            for (const auto &si : n->sindex)
                if (si.value) stack.push_back(si.value.get());
            if (n->kind != ir::NodeKind::Read || prog_.tensors.at(n->tensor).is_load) continue;
            std::vector<int64_t> p(n->index.size(), 0), lo, len;
            std::vector<size_t> pos;
            for (size_t k = 0; k < n->index.size(); ++k) {
                const ir::ReadIndex &ri = n->index[k];
                if (!ri.is_slice) {
                    p[k] = interp::eval_index_expr(*ri.point, env);
                    continue;
                }
                int64_t l = interp::eval_index_expr(*ri.lo, env);
                pos.push_back(k);
                lo.push_back(l);
                len.push_back(std::max<int64_t>(0, interp::eval_index_expr(*ri.hi, env) - l));
            }
            int64_t total = interp::numel(len);
            std::vector<int64_t> idx(len.size(), 0);
            for (int64_t i = 0; i < total; ++i) {
                for (size_t q = 0; q < pos.size(); ++q) p[pos[q]] = lo[q] + idx[q];
                if (consume)
                    read_point(n->tensor, p, n->loc);
                else
                    ++reads_left_[n->tensor][p];
                for (size_t d = len.size(); d-- > 0;) {
                    if (++idx[d] < len[d]) break;
                    idx[d] = 0;
                }
            }
        }
    }

    void store(int t, const std::vector<int64_t> &p, const Value &v) {
        const ir::Tensor &x = prog_.tensors[t];
        const Buffer &b = buffer(t);
        int64_t slot = slot_checked(b, p);
        int64_t base = b.offset + slot * b.slot_bytes, n = value_bytes(x.type, p);
        if (written_.size() < prog_.tensors.size()) written_.resize(prog_.tensors.size());
        if (!written_[t].emplace(p, true).second) fault(point_name(t, p) + " is written twice");
        writes_.push_back(WriteRec{t, p, false});
        uint32_t w = static_cast<uint32_t>(writes_.size() - 1);
        encode(x.type, p, v, arena_.data() + base, x.name);
        std::fill(owner_.begin() + base, owner_.begin() + base + n, w);
        // A point nobody reads is dead at once (its slot keeps the value but is not checked).
    }

    /** Store "v" (converted to the leaf dtypes of "t") at "dst"; returns the bytes written. */
    int64_t encode(const ir::Type &t, const std::vector<int64_t> &p, const Value &v, uint8_t *dst,
                   const std::string &name) {
        if (t.is_tuple) {
            if (!v.is_tuple || v.elems.size() != t.elems.size())
                fault("value of " + name + " does not match its tuple type");
            int64_t off = 0;
            for (size_t i = 0; i < t.elems.size(); ++i) off += encode(t.elems[i], p, v.elems[i], dst + off, name);
            return off;
        }
        if (v.is_tuple) fault("value of " + name + " is a tuple, its type is not");
        interp::Shape shape = shape_at(t, p);
        int64_t n = interp::numel(shape);
        if (v.numel() != n)
            fault("value of " + name + " has " + std::to_string(v.numel()) + " elements, its type " +
                  std::to_string(n));
        if (t.dtype == ir::DType::Key) {
            if (v.dtype != ir::DType::Key) fault("value of " + name + " is not a key");
            std::memcpy(dst, v.keys.data(), static_cast<size_t>(n) * sizeof(trl::RngKey));
            return n * static_cast<int64_t>(sizeof(trl::RngKey));
        }
        Value c = v.dtype == t.dtype ? v : interp::cast(v, t.dtype);
        for (int64_t i = 0; i < n; ++i) {
            double x = c.data[i];
            switch (t.dtype) {
            case ir::DType::Bool: dst[i] = x != 0; break;
            case ir::DType::I32: {
                int32_t y = static_cast<int32_t>(x);
                std::memcpy(dst + 4 * i, &y, 4);
                break;
            }
            case ir::DType::F32: {
                float y = static_cast<float>(x);
                std::memcpy(dst + 4 * i, &y, 4);
                break;
            }
            case ir::DType::F64: std::memcpy(dst + 8 * i, &x, 8); break;
            case ir::DType::Key: break;
            }
        }
        return n * leaf_size(t.dtype);
    }

    int64_t decode(const ir::Type &t, const std::vector<int64_t> &p, const uint8_t *src, Value &v) {
        if (t.is_tuple) {
            v.is_tuple = true;
            v.elems.resize(t.elems.size());
            int64_t off = 0;
            for (size_t i = 0; i < t.elems.size(); ++i) off += decode(t.elems[i], p, src + off, v.elems[i]);
            return off;
        }
        v.dtype = t.dtype;
        v.shape = shape_at(t, p);
        int64_t n = interp::numel(v.shape);
        if (t.dtype == ir::DType::Key) {
            v.keys.resize(static_cast<size_t>(n));
            std::memcpy(v.keys.data(), src, static_cast<size_t>(n) * sizeof(trl::RngKey));
            return n * static_cast<int64_t>(sizeof(trl::RngKey));
        }
        v.data.resize(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) {
            switch (t.dtype) {
            case ir::DType::Bool: v.data[i] = src[i] ? 1 : 0; break;
            case ir::DType::I32: {
                int32_t y;
                std::memcpy(&y, src + 4 * i, 4);
                v.data[i] = y;
                break;
            }
            case ir::DType::F32: {
                float y;
                std::memcpy(&y, src + 4 * i, 4);
                v.data[i] = y;
                break;
            }
            case ir::DType::F64: std::memcpy(&v.data[i], src + 8 * i, 8); break;
            case ir::DType::Key: break;
            }
        }
        return n * leaf_size(t.dtype);
    }

    const ir::Program &prog_;
    const Schedule &sched_;
    const MemPlan &plan_;
    const InterpOptions &opts_;
    std::ostream &out_;
    Evaluator ev_;
    int rank_ = 0;
    RankMeeting *meeting_ = nullptr;
    uint64_t digest_ = trl::kFnv64Offset;
    int replicated_saves_ = 0;
    bool counting_ = false;
    std::vector<int64_t> its_;
    std::vector<uint8_t> arena_;
    std::vector<uint32_t> owner_;            // per arena byte: index into writes_ (0 = never written)
    std::vector<unsigned char> host_arena_;  // --mem-budget: swapped buffers' bytes (MemPlan::host_bytes)
    std::vector<uint32_t> host_owner_;       // and their owners
    std::vector<WriteRec> writes_;
    std::vector<PointMap<int64_t>> reads_left_;  // per tensor: reads still to come per point
    std::vector<PointMap<bool>> written_;
    std::vector<std::vector<std::string>> lines_;  // per emit: lines by row-major point index
    std::vector<std::vector<bool>> filled_;
    std::map<int, std::string> output_lines_;  // per `output` (Save index): its JSON line
    std::vector<int64_t> emitted_;
    size_t cur_emit_ = 0;
};

}  // namespace

namespace {

/** --ranks N: every rank's run on a thread of its own (a large stack, as run_on_big_stack),
 *  then their records in the point-wise interpreter's order.  The first rank's error (by rank)
 *  is reported; the others stop at their next meeting. */
int interpret_ranks(const ir::Program &prog, const Schedule &sched, const MemPlan &plan, const InterpOptions &opts,
                    Diagnostics &diag) {
    std::ostream &out = opts.log ? *opts.log : std::cout;
    const int n = opts.ranks;
    RankMeeting meeting(n);
    std::ostringstream unused;
    std::vector<std::unique_ptr<ScheduledRun>> runs;
    for (int r = 0; r < n; ++r)
        runs.push_back(std::make_unique<ScheduledRun>(prog, sched, plan, opts, unused, r, &meeting));
    struct Task {
        ScheduledRun *run;
        RankMeeting *meeting;
        std::exception_ptr error;
        bool aborted = false;
    };
    std::vector<Task> tasks(static_cast<size_t>(n));
    auto body = [](void *arg) -> void * {
        auto *t = static_cast<Task *>(arg);
        try {
            t->run->run();
        } catch (const RankAborted &) {
            t->aborted = true;
        } catch (...) {
            t->error = std::current_exception();
            t->meeting->abort();
        }
        return nullptr;
    };
    std::vector<pthread_t> threads(static_cast<size_t>(n));
    std::vector<bool> started(static_cast<size_t>(n), false);
    for (int r = 0; r < n; ++r) {
        tasks[r] = Task{runs[r].get(), &meeting, nullptr, false};
        pthread_attr_t attr;
        if (pthread_attr_init(&attr) == 0) {
            started[r] = pthread_attr_setstacksize(&attr, size_t{512} << 20) == 0 &&
                         pthread_create(&threads[r], &attr, +body, &tasks[r]) == 0;
            pthread_attr_destroy(&attr);
        }
        if (!started[r]) {
            meeting.abort();
            for (int q = 0; q < r; ++q)
                if (started[q]) pthread_join(threads[q], nullptr);
            diag.error("--ranks " + std::to_string(n) + ": cannot start a thread for rank " + std::to_string(r));
            return 1;
        }
    }
    for (int r = 0; r < n; ++r) pthread_join(threads[r], nullptr);
    for (int r = 0; r < n; ++r) {
        if (!tasks[r].error) continue;
        try {
            std::rethrow_exception(tasks[r].error);
        } catch (const RuntimeError &e) {
            diag.error(e.loc, e.message);
            for (const auto &note : e.notes) diag.note(note.first, note.second);
            return 1;
        }
    }
    for (size_t e = 0; e < prog.emits.size(); ++e) {
        int64_t total = 1;
        for (int d : prog.emits[e].vars) total *= prog.dims[d].bound;
        for (int64_t lin = 0; lin < total; ++lin)
            for (int r = 0; r < n; ++r) out << runs[r]->line(e, static_cast<size_t>(lin));
    }
    for (const auto &[k, line] : runs[0]->output_lines()) out << line;
    out.flush();
    if (runs[0]->any_replicated_save()) {
        for (int r = 1; r < n; ++r)
            if (runs[r]->digest() != runs[0]->digest())
                internal_error("scheduled interpreter: rank " + std::to_string(r) +
                                   "'s saved parameters differ from rank 0's",
                               __FILE__, __LINE__);
        std::cerr << interp::identical_parameters_line(n, runs[0]->digest()) << "\n";
    }
    return 0;
}

}  // namespace

int interpret_scheduled(const ir::Program &prog, const Schedule &sched, const MemPlan &plan, const InterpOptions &opts,
                        Diagnostics &diag) {
    if (opts.ranks > 0) return interpret_ranks(prog, sched, plan, opts, diag);
    std::ostream &out = opts.log ? *opts.log : std::cout;
    ScheduledRun run(prog, sched, plan, opts, out);
    try {
        // The walk does not recurse along dependences, but deep expression trees might.
        interp::run_on_big_stack([&] { run.run(); });
    } catch (const RuntimeError &e) {
        run.flush_emits();
        diag.error(e.loc, e.message);
        for (const auto &n : e.notes) diag.note(n.first, n.second);
        return 1;
    }
    return 0;
}

}  // namespace trlc
