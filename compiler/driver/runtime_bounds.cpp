// runtime_bounds — decide which program bounds a generated executable reads at run time
// (`--bound NAME=V`, issue 4 §3) and build the loop nest that reads them.
//
// Rule (a deterministic function of the program and the flags; no clock is read).
// A bound B with compiled value v is a *candidate* when it bounds some dim, no batch axis,
// and no buffer of the memory plan stores every point along a dim it bounds.  Candidates are
// checked in Program::bounds order, each together with the ones already accepted:
//   1. the loop nest, proven (schedule/runtime_loop_nest.h): the compiled schedule tree,
//      applied to the PDG's parametric statement domains with B as an isl parameter, orders
//      every parametric flow dependence for all B >= m, and isl builds the AST for all those
//      values;
//   2. the memory plan and the kernels, at one other value w: the program compiled with
//      -D B=w, run under the *compiled* schedule (not a new one), must have the same memory
//      plan (every buffer's kind, moduli, strides, bytes, offset; the peak) and the same
//      kernels and host functions, byte for byte.  w = 2 (then m = 2) when v > 2; when that
//      fails, or v <= 2, w = v + 1 and m = v;
//   3. the statements (tensors and equations after the passes) at a large value,
//      max(v + 1, the incrementalize pass's threshold in bytes), when that pass has one
//      (--incrementalize-min-bytes; none by default): it then chooses running sums by sizes
//      that grow with B (statements_at_large).
// The generated program accepts B = V for every V >= m (up to 2^31 - 1).  The loop nest is
// exact for every such V; the memory plan and the kernels are compared at m (or v + 1) and
// v only, and trusted in between and above (they come from isl relations affine in B).
// A bound used as a value (`i / I`) is a literal tagged with its name in the typed IR
// (ir::Node::bound); both compilations of part 2 print it as TRLG_BOUND(k), the run-time
// value, so only a value compiled in some other way (a shape, a slice, float arithmetic that
// sema folds with other literals) makes the kernels differ.
// Cost: one compilation without the isl scheduler (front end, statements, memory plan,
// kernels) per comparison made, plus the parametric proof: ~2 to 7 s of CPU per bound that
// qualifies for the training samples.  Every candidate of every program is checked by default
// (no size limit); `--runtime-bound=NAME[,NAME]` checks only the named bounds (an error when
// one does not qualify) and `--runtime-bound=none` keeps every bound fixed.
#include "driver/runtime_bounds.h"

#include <algorithm>
#include <future>
#include <memory>
#include <set>
#include <sstream>
#include <system_error>

#include "schedule/runtime_loop_nest.h"
#include "support/time_passes.h"

namespace trlc {

namespace {

const char *kSizesBuffer = "sizes a buffer";
const char *kCompiledIn = "its value is compiled into the code";
const char *kNotDim = "it bounds no dim (its value is compiled into the code)";
const char *kNoCompile = "the program does not compile at other values";
const char *kStatements = "the statements change with it";
const char *kNotAsked = "not asked for (trlc --runtime-bound)";
const char *kNone = "trlc --runtime-bound=none";
const char *kMemBudget = "the memory budget's swaps are planned at the compiled value (trlc --mem-budget)";
const char *kQuasiGuard =
    "an emit's guard takes % or / of a dim it bounds (the last point where it holds moves with the "
    "value's residue, which comparing two values cannot prove)";

/** The generated source up to the loop nest: kernels, host functions, the arena constants. */
std::string kernel_part(const std::string &src) { return src.substr(0, src.find("\n// The schedule's loop nest")); }

/** kCompiledIn, naming the first kernel or host function of "base" (the generated source up
 *  to the loop nest) whose text differs in "other": "(in x_1: x at prog.trl:4)". */
std::string compiled_in(const std::string &base, const std::string &other) {
    size_t n = std::min(base.size(), other.size()), at = 0;
    while (at < n && base[at] == other[at]) ++at;
    std::string where;
    for (size_t line = base.rfind("\n// ", at); line != std::string::npos && where.empty();
         line = line ? base.rfind("\n// ", line - 1) : std::string::npos) {
        std::string text = base.substr(line + 4, base.find('\n', line + 1) - line - 4);
        size_t colon = text.find(": ");
        if (colon != std::string::npos && colon > 0 && text.find(' ') > colon && text.find(" at ") != std::string::npos)
            where = text;  // `x_1: x at prog.trl:4`, a statement's kernel
    }
    size_t at_file = where.rfind(" at "), slash = where.rfind('/');
    if (at_file != std::string::npos && slash != std::string::npos && slash > at_file)
        where.erase(at_file + 4, slash + 1 - (at_file + 4));  // the file's name, not its path
    return std::string(kCompiledIn) + (where.empty() ? "" : " (in " + where + ")");
}

/** The options of a compilation at other bound values: the same flags, "defines" added, and
 *  nothing printed, built or interpreted. */
DriverOptions nested_options(const DriverOptions &opts, const std::vector<std::string> &defines) {
    DriverOptions o = opts;
    o.emit.clear();
    o.output.clear();
    o.interpret.clear();
    o.print_after.clear();
    o.stop_after.clear();
    o.raw_defines.insert(o.raw_defines.end(), defines.begin(), defines.end());
    return o;
}

/** The program compiled at other bound values by the pipeline's stages up to vectorize (the
 *  schedule and the memory plan are made here, under the compiled schedule); its messages go
 *  to "sink", they are not the user's. */
struct Variant {
    explicit Variant(DriverOptions o) : opts(std::move(o)), diag(sm, sink), st(opts, sm, diag) {}
    DriverOptions opts;
    SourceManager sm;
    std::ostringstream sink;
    Diagnostics diag;
    PipelineState st;
};

bool same_layout(const MemPlan &a, const MemPlan &b) {
    if (a.peak_bytes != b.peak_bytes || a.buffers.size() != b.buffers.size() || a.frees_after != b.frees_after)
        return false;
    for (size_t i = 0; i < a.buffers.size(); ++i) {
        const Buffer &x = a.buffers[i], &y = b.buffers[i];
        if (x.tensor != y.tensor || x.kind != y.kind || x.lower != y.lower || x.modulus != y.modulus ||
            x.stride != y.stride || x.batch != y.batch || x.slots != y.slots || x.slot_bytes != y.slot_bytes ||
            x.bytes != y.bytes || x.offset != y.offset || x.donated_from != y.donated_from)
            return false;
    }
    return true;
}

std::vector<std::string> split_names(const std::string &s) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s + ",") {
        if (c == ',') {
            if (!cur.empty()) out.push_back(cur);
            cur.clear();
        } else if (c != ' ') {
            cur += c;
        }
    }
    return out;
}

class Finder {
public:
    Finder(const DriverOptions &opts, const ir::Program &prog, const Pdg &pdg, const Schedule &sched,
           const SourceManager &sm)
        : opts_(opts), prog_(prog), pdg_(pdg), sched_(sched), sm_(sm) {
        for (const auto &b : prog.bounds) {
            names_.push_back(b.first);
            values_.push_back(b.second);
        }
    }

    /** The memory plan made since (at the compiled values) and the code generation flags, both
     *  needed by run(). */
    void attach(const MemPlan &plan, const CodegenOptions &cg) {
        plan_ = &plan;
        cg_ = cg;
    }

    /** Before the memory plan is made: the first try of the first bound that run() will check
     *  unless the plan rules it out (its parametric domains here, its variant on a thread of
     *  its own: start_attempt), so that the variant's compilation overlaps the memory plan. */
    void prefetch() {
        std::set<std::string> asked;
        bool none = opts_.runtime_bound == "none", explicit_ = !opts_.runtime_bound.empty() && !none;
        if (none || opts_.mem_budget > 0 || !sched_.root) return;
        if (explicit_)
            for (const std::string &n : split_names(opts_.runtime_bound)) asked.insert(n);
        for (size_t k = 0; k < names_.size(); ++k) {
            if (explicit_ && !asked.count(names_[k])) continue;
            if (!plan_free_reason(static_cast<int>(k)).empty()) continue;
            const auto t = tries(values_[k]).front();
            prefetched_ = start_attempt(static_cast<int>(k), {}, t.first, t.second, true);
            return;
        }
    }

    /** Fills codegen.bounds / loop_nest; false after an error in "diag" (--runtime-bound). */
    bool run(CodegenOptions &codegen, Diagnostics &diag) {
        codegen.bounds.assign(names_.size(), BoundInfo());
        std::string flag = opts_.runtime_bound;
        std::set<std::string> asked;
        bool none = flag == "none", explicit_ = !flag.empty() && !none;
        if (explicit_)
            for (const std::string &n : split_names(flag)) {
                if (std::find(names_.begin(), names_.end(), n) == names_.end()) {
                    std::string all;
                    for (const auto &x : names_) all += (all.empty() ? "" : ", ") + x;
                    diag.error("--runtime-bound: the program has no bound '" + n + "'" +
                               (all.empty() ? std::string(" (it has none)") : "; its bounds are " + all));
                    return false;
                }
                asked.insert(n);
            }
        std::map<int, int64_t> accepted;  // bound index → smallest value
        LoopNodePtr nest;
        for (size_t k = 0; k < names_.size(); ++k) {
            BoundInfo &info = codegen.bounds[k];
            if (none) {
                info.fixed_reason = kNone;
                continue;
            }
            if (opts_.mem_budget > 0) {
                info.fixed_reason = kMemBudget;
                if (!explicit_ || !asked.count(names_[k])) continue;
                diag.error("--runtime-bound: bound '" + names_[k] + "' cannot change at run time: " + kMemBudget);
                return false;
            }
            if (explicit_ && !asked.count(names_[k])) {
                info.fixed_reason = kNotAsked;
                continue;
            }
            info.fixed_reason = sched_.root ? quick_reason(static_cast<int>(k)) : kStatements;
            if (info.fixed_reason.empty())
                info.fixed_reason = check(static_cast<int>(k), accepted, &info.min_value, &nest);
            if (info.fixed_reason.empty()) {
                info.runtime = true;
                accepted[static_cast<int>(k)] = info.min_value;
            } else if (explicit_) {
                diag.error("--runtime-bound: bound '" + names_[k] + "' (= " + std::to_string(values_[k]) +
                           ") cannot change at run time: " + info.fixed_reason);
                return false;
            }
        }
        codegen.loop_nest = accepted.empty() ? nullptr : nest;
        return true;
    }

private:
    /** True when "g" (over variables "vars", Program dims) compares a `%` or `/` of an affine
     *  form that involves a dim bounded by "name". */
    bool quasi_over(const ir::GuardPtr &g, const std::vector<int> &vars, const std::string &name) const {
        if (!g) return false;
        if (g->kind != ir::Guard::Cmp) return quasi_over(g->a, vars, name) || quasi_over(g->b, vars, name);
        auto uses = [&](const ir::Affine &a) {
            for (size_t v = 0; v < a.coef.size() && v < vars.size(); ++v)
                if (a.coef[v] != 0 && prog_.dims.at(vars[v]).bound_name == name) return true;
            return false;
        };
        return (g->lhs_quasi != ir::Guard::Plain && uses(g->lhs)) || (g->rhs_quasi != ir::Guard::Plain && uses(g->rhs));
    }

    /** quick_reason's checks that need no memory plan: "" or the reason. */
    std::string plan_free_reason(int k) const {
        const std::string &name = names_[k];
        bool used = false;
        for (size_t d = 0; d < prog_.dims.size(); ++d) {
            if (prog_.dims[d].bound_name != name) continue;
            used = true;
            if (d < sched_.batch_dims.size() && sched_.batch_dims[d]) return kSizesBuffer;
        }
        if (!used) return kNotDim;
        // `emit …[b] when b % 2 == 1`: at B = 2 and 3 the last emitted point is b = 1, at B = 4 it
        // is b = 3, after the storage its fields read was reused (tools/fuzz/diff_fuzz.py seed
        // 827626015; lit runtime-bounds/quasi-guard-fixed.trl).  Only emit guards: an equation's
        // guard with % (lit programs/guard-quasi-affine.trl, `loss[u] … when u % 10 == 0` at
        // --bound U=57) runs equal to --interpret, and no failing case of one is known.
        for (const ir::Emit &e : prog_.emits)
            if (quasi_over(e.field_guard, e.vars, name)) return kQuasiGuard;
        if (values_[k] >= INT32_MAX) return kCompiledIn;
        return "";
    }

    /** A reason to keep bound k fixed that needs no compilation, or "". */
    std::string quick_reason(int k) const {
        const std::string &name = names_[k];
        const std::string why = plan_free_reason(k);
        if (!why.empty() && why != kCompiledIn) return why;  // the plan's reason comes before that one
        for (const Buffer &b : plan_->buffers) {
            const ir::Tensor &t = prog_.tensors.at(b.tensor);
            for (size_t p = 0; p < t.dims.size() && p < b.modulus.size(); ++p)
                if (prog_.dims[t.dims[p]].bound_name == name && b.modulus[p] > 1 && b.modulus[p] == b.extent[p] &&
                    b.extent[p] >= values_[k])
                    return kSizesBuffer;
        }
        return why;
    }

    /** The program at "values" (bound index → value) under the compiled schedule: "" and the
     *  compilation in "out" (its statements and dependences checked against the parametric
     *  "domains"), or a reason.  Cheap (no scheduler, no memory plan), so it runs before the
     *  parametric loop nest is built. */
    std::string variant_schedule(const std::map<int, int64_t> &values, bool shift, const std::string &domains,
                                 const std::string &base_tree, std::unique_ptr<Variant> *out) {
        std::vector<std::string> defines;
        for (const auto &v : values) defines.push_back(names_[v.first] + "=" + std::to_string(v.second));
        auto var = std::make_unique<Variant>(nested_options(opts_, defines));
        PipelineState &st = var->st;
        try {
            if (run_pipeline(st, "dead-points") != 0) return kNoCompile;
            std::string why;
            PassTimer timer("compiled schedule at the other value");
            // No loop nest of its own: variant_kernels emits it under the parametric one (0.14 s
            // of PPO CartPole's compile was isl's AST of the variant and its order check).
            if (!schedule_like(st.prog, st.pdg, st.vec.batch, prog_, sched_, base_tree, shift, domains, st.sched, &why,
                               /*loop_nest=*/false))
                return why;
        } catch (...) {  // isl, internal errors: this value is simply not usable
            return kNoCompile;
        }
        *out = std::move(var);
        return "";
    }

    /** The memory plan of variant "var" (variant_schedule's) with the compiled program's
     *  checkpointed statements "checkpoint": "" when it was made (run() compares it with the
     *  compiled plan), else the reason. */
    std::string variant_plan(Variant &var, const std::vector<int> &checkpoint) {
        PipelineState &st = var.st;
        try {
            st.plan = plan_memory(st.prog, st.pdg, st.sched, var.diag, &checkpoint);
            if (var.diag.has_errors()) return kNoCompile;
        } catch (const CodegenError &) {
            return kCompiledIn;
        } catch (...) {
            return kNoCompile;
        }
        return "";
    }

    /** The kernels of variant "var" (after variant_plan) under loop nest "nest"; "" and the text
     *  in "kernels", or a reason. */
    std::string variant_kernels(Variant &var, const LoopNodePtr &nest, const std::vector<BoundInfo> &bounds,
                                std::string *kernels) {
        PipelineState &st = var.st;
        CodegenOptions cg = cg_;
        cg.bounds = bounds;
        cg.loop_nest = nest;
        try {
            PassTimer timer("kernels at the other value");
            *kernels = kernel_part(emit_cuda(st.prog, st.pdg, st.sched, st.plan, &var.sm, cg));
        } catch (const CodegenError &) {
            return kCompiledIn;
        } catch (...) {
            return kNoCompile;
        }
        return "";
    }

    /** What check() finds at the other value on a thread of its own (the variant has its own
     *  isl context): the variant under the compiled schedule, its memory plan (check() compares
     *  it with the compiled one), and the statements at a large value. */
    struct VariantCheck {
        std::unique_ptr<Variant> var;
        std::string why;    // variant_schedule's reason, or if it held variant_plan's ("" when that held)
        std::string large;  // statements_at_large's, when both held
    };

    /** The variant's work; "scheduled" is told whether variant_schedule held as soon as it is
     *  known (check() builds the parametric loop nest only then: a try whose variant fails
     *  there, such as the n-step sample's at I = 2, needs none). */
    VariantCheck variant_check(int k, const std::map<int, int64_t> &values, bool shift, const std::string &domains,
                               const std::string &base_tree, const std::vector<int> &checkpoint,
                               std::promise<bool> &scheduled) {
        VariantCheck c;
        try {
            c.why = variant_schedule(values, shift, domains, base_tree, &c.var);
        } catch (...) {
            scheduled.set_value(false);
            throw;
        }
        scheduled.set_value(c.why.empty());
        if (!c.why.empty()) return c;
        c.why = variant_plan(*c.var, checkpoint);
        if (c.why.empty()) c.large = statements_at_large(k);
        return c;
    }

    /** The (w, m) pairs check() tries for a bound compiled at "v": the other value w and the
     *  smallest value m it would accept. */
    static std::vector<std::pair<int64_t, int64_t>> tries(int64_t v) {
        std::vector<std::pair<int64_t, int64_t>> out;
        if (v > 2) out.push_back({2, 2});
        out.push_back({v + 1, v});
        return out;
    }

    /** One try of check(): bound k at smallest value m (the bounds in "accepted" at theirs),
     *  the program at w, "shift" as in parametric_loop_nest.  Its parametric domains, and its
     *  variant (variant_check) running on a thread of its own with its own isl context. */
    struct Attempt {
        int k = -1;
        int64_t w = 0, m = 0;
        bool shift = true, proven = false;
        std::map<int, int64_t> accepted;
        std::string why, domains;
        std::shared_ptr<const ParametricSteps> steps;
        std::vector<int> checkpoint;  // the checkpointed statements the variant's plan was given
        std::future<VariantCheck> variant;
        std::future<bool> scheduled;  // variant_check's variant_schedule held
        bool threaded = false;        // else "variant" runs when waited for
    };

    Attempt start_attempt(int k, const std::map<int, int64_t> &accepted, int64_t w, int64_t m, bool shift) {
        Attempt a;
        a.k = k;
        a.w = w;
        a.m = m;
        a.shift = shift;
        a.accepted = accepted;
        if (plan_) {
            a.checkpoint = plan_->checkpoint_statements;
        } else if (const LoopNode *loop = checkpoint_loop(sched_.root.get())) {
            a.checkpoint = statements_in(*loop);  // what plan_memory will give the compiled plan
        }
        std::map<int, int64_t> mins = accepted;
        mins[k] = m;
        {
            PassTimer timer("parametric domains and dependences");
            a.proven = parametric_domains(prog_, pdg_, sched_, mins, shift, &a.why, &a.domains, &a.steps);
        }
        if (!a.proven) return a;
        std::map<int, int64_t> values = accepted;  // the others at their smallest values
        values[k] = w;
        // The program at the other value (variant_check: its statements and dependences against
        // the parametric ones, then its memory plan) on a thread of its own, while this one makes
        // the compiled program's memory plan (prefetch) and builds the parametric loop nest and
        // the kernels under it (check); the reasons are then taken in a sequential check's
        // order.  PPO CartPole on two cores: memplan and runtime-bounds 0.23 + 0.72 s of wall
        // time sequentially, 0.23 + 0.51 s with the loop nest overlapped, 0.30 + 0.26 s with the
        // memory plan too (2026-11-29).
        if (base_tree_.empty()) base_tree_ = schedule_tree_text(sched_);  // this thread's isl context
        auto scheduled = std::make_shared<std::promise<bool>>();
        a.scheduled = scheduled->get_future();
        auto work = [this, k, values, shift, domains = a.domains, tree = base_tree_, cps = a.checkpoint, scheduled] {
            return variant_check(k, values, shift, domains, tree, cps, *scheduled);
        };
        try {
            a.variant = std::async(std::launch::async, work);
            a.threaded = true;
        } catch (const std::system_error &) {  // no thread: the same work, here, when waited for
            a.variant = std::async(std::launch::deferred, work);
        }
        return a;
    }

    /** The tensors and their equation counts: what the passes made of the program. */
    static std::string statement_list(const ir::Program &p) {
        std::string out;
        for (const auto &t : p.tensors) out += t.name + "/" + std::to_string(t.equations.size()) + " ";
        return out;
    }

    /** "" when the program's statements at a large value of bound k (the others as compiled)
     *  are those compiled, else the reason.  The incrementalize pass chooses running sums by
     *  sizes in bytes against min_bytes (passes/incrementalize.h), sizes that grow with the
     *  bound; from k = max(v + 1, min_bytes) on every size that grows with k is over the
     *  threshold.  Compared here and at m (part 2), trusted in between.  Without a threshold
     *  (the default, or -fno-incrementalize) no choice follows a size: nothing to compare
     *  (PPO CartPole: the front end, autodiff and checks once more at I = 2^20, ~0.05 s). */
    std::string statements_at_large(int k) {
        if (!opts_.incrementalize || opts_.incrementalize_min_bytes <= 0) return "";
        int64_t big = std::max<int64_t>(values_[k] + 1, opts_.incrementalize_min_bytes);
        big = std::min<int64_t>(big, INT32_MAX - 1);
        Variant v(nested_options(opts_, {names_[k] + "=" + std::to_string(big)}));
        try {
            if (run_pipeline(v.st, "checks") != 0) return kNoCompile;
        } catch (...) {
            return kNoCompile;
        }
        if (statement_list(v.st.prog) == statement_list(prog_)) return "";
        return std::string(kStatements) + " (at " + names_[k] + " = " + std::to_string(big) + ")";
    }

    /** Check bound k together with "accepted"; "" with its smallest value and the loop nest
     *  of accepted + k, or the reason it stays fixed. */
    std::string check(int k, const std::map<int, int64_t> &accepted, int64_t *min_value, LoopNodePtr *nest) {
        std::string reason, first;
        for (const auto &t : tries(values_[k])) {
            for (bool shift : {true, false}) {  // statements after the loop move with the bound
                Attempt a;
                Attempt &p = prefetched_;
                if (p.k == k && p.w == t.first && p.m == t.second && p.shift == shift && p.accepted == accepted &&
                    p.checkpoint == plan_->checkpoint_statements) {
                    a = std::move(p);
                    p.k = -1;
                } else {
                    a = start_attempt(k, accepted, t.first, t.second, shift);
                }
                std::map<int, int64_t> mins = accepted;
                mins[k] = t.second;
                std::string why = a.why;
                if (!a.proven) {
                    reason = "the schedule changes with it (" + why + ")";
                    continue;
                }
                if (!a.threaded) a.variant.wait();
                if (!a.scheduled.get()) {  // the variant's statements or schedule: no loop nest needed
                    VariantCheck var = a.variant.get();
                    if (shift || first.empty()) first = var.why;
                    continue;
                }
                LoopNodePtr n;
                {
                    PassTimer timer("parametric loop nest");
                    n = parametric_loop_nest(*a.steps, &why);  // steps 1 to 3 done above
                }
                CodegenOptions cg = cg_;
                cg.bounds.assign(names_.size(), BoundInfo());  // kernels read these as TRLG_BOUND
                for (const auto &b : mins) cg.bounds[b.first].runtime = true;
                cg.loop_nest = n;
                std::string base;
                bool base_compiled_in = false;
                if (n) {
                    try {
                        base = kernel_part(emit_cuda(prog_, pdg_, sched_, *plan_, &sm_, cg));
                    } catch (const CodegenError &) {
                        base_compiled_in = true;
                    }
                }
                VariantCheck var = a.variant.get();
                if (!n) {
                    reason = "the schedule changes with it (" + why + ")";
                    continue;
                }
                if (base_compiled_in) return kCompiledIn;
                std::string kernels, why_here = var.why;
                if (why_here.empty() && !same_layout(*plan_, var.var->st.plan)) why_here = kSizesBuffer;
                if (why_here.empty()) why_here = variant_kernels(*var.var, n, cg.bounds, &kernels);
                if (why_here.empty() && kernels != base) why_here = compiled_in(base, kernels);
                if (why_here.empty()) why_here = var.large;
                if (why_here.empty()) {
                    *min_value = t.second;
                    *nest = n;
                    return "";
                }
                if (shift || first.empty()) first = why_here;
            }
        }
        // The reason at the last value tried, statements moved with the bound (w = v + 1: at
        // w = 2 a program often degenerates), else the last one found at another value, else
        // the proof's.
        return first.empty() ? reason : first;
    }

    const DriverOptions &opts_;
    const ir::Program &prog_;
    const Pdg &pdg_;
    const Schedule &sched_;
    const MemPlan *plan_ = nullptr;  // attach()
    const SourceManager &sm_;
    CodegenOptions cg_;  // attach(): the flags, no bounds, no loop nest
    std::vector<std::string> names_;
    std::vector<int64_t> values_;
    std::string base_tree_;  // schedule_tree_text(sched_), made on this thread before the first variant
    Attempt prefetched_;     // prefetch()'s, until check() takes it
};

}  // namespace

struct RuntimeBoundsCheck {
    Finder finder;
};

std::shared_ptr<RuntimeBoundsCheck> start_runtime_bounds(const DriverOptions &opts, const ir::Program &prog,
                                                         const Pdg &pdg, const Schedule &sched,
                                                         const SourceManager &sm) {
    auto check = std::make_shared<RuntimeBoundsCheck>(RuntimeBoundsCheck{Finder(opts, prog, pdg, sched, sm)});
    check->finder.prefetch();
    return check;
}

bool find_runtime_bounds(const DriverOptions &opts, const ir::Program &prog, const Pdg &pdg, const Schedule &sched,
                         const MemPlan &plan, const SourceManager &sm, CodegenOptions &codegen, Diagnostics &diag,
                         RuntimeBoundsCheck *started) {
    CodegenOptions base = codegen;
    base.bounds.clear();
    base.loop_nest = nullptr;
    if (started) {
        started->finder.attach(plan, base);
        return started->finder.run(codegen, diag);
    }
    Finder finder(opts, prog, pdg, sched, sm);
    finder.attach(plan, base);
    return finder.run(codegen, diag);
}

}  // namespace trlc
