// runtime_bounds — decide which program bounds a generated executable reads at run time
// (`--bound NAME=V`, issue 4 §3) and build the loop nest that reads them.
//
// Rule.  A bound B (compiled value v) is run-time when the program, compiled again with
// `-D B=w` for other values w, gives
//   1. the same statements and the same memory plan (every buffer's kind, offset, bytes,
//      moduli, strides; the arena's size): B sizes no buffer and no storage window;
//   2. the same kernels and host functions, byte for byte (the generated source before the
//      loop nest): B's value is compiled into no expression, shape or emit index;
//   3. a loop nest of the same structure whose integers are affine in B
//      (schedule/runtime_loop_nest.cpp): fitted from v and v + 1, checked at v + 2, at the
//      smallest value m tried that passes (1, 2, 3, 4, 8, … below v) and at (m + v) / 2.
// The generated program then accepts B = w for every w >= m (the smallest value checked;
// larger values than v + 2 and values between the checked ones are trusted to follow the
// same affine loop nest — isl builds it by the same steps for every large enough B).
// When several bounds qualify, the program is compiled once more with all of them changed
// together (at v + 1 and at m); if that fails only the first stays run-time.
// Quick rejections without compiling: a bound of a batch axis, or of a dim along which a
// buffer stores every point (modulus = extent), sizes a buffer.
// Cost.  Each check is one more compilation up to the generated source (about 7 per
// run-time bound).  When the program's own compilation so far took more than kSkipSeconds
// of CPU time, or the checks exceed kBudgetFactor times that (and kMinBudget seconds), the
// remaining bounds stay fixed ("not checked: ..."): large programs (PPO: a minute per
// memory plan) are not compiled again and again; recompile with -D to change their bounds.
#include "driver/runtime_bounds.h"

#include <algorithm>
#include <ctime>
#include <memory>
#include <sstream>

#include "passes/vectorize_free_dims.h"

namespace trlc {

namespace {

const char *kSizesBuffer = "sizes a buffer";
const char *kCompiledIn = "its value is compiled into the code";
const char *kSchedule = "the schedule changes with it";
const char *kNoCompile = "the program does not compile at other values";
const char *kTooSlow = "not checked: the program takes long to compile";
const double kSkipSeconds = 3.0;
const double kBudgetFactor = 8.0;
const double kMinBudget = 2.0;  // small programs (tests) always get every check

double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

/** The program compiled at other bound values (member order: the schedule's isl objects
 *  live in the PDG's context, so the PDG is destroyed last). */
struct Variant {
    SourceManager sm;
    ir::Program prog;
    Pdg pdg;
    Schedule sched;
    MemPlan plan;
    std::string kernels;
};

/** The generated source up to the loop nest: kernels, host functions, the arena constants. */
std::string kernel_part(const std::string &src) {
    return src.substr(0, src.find("\n// The schedule's loop nest"));
}

std::unique_ptr<Variant> compile_at(const DriverOptions &base,
                                    const std::map<std::string, int64_t> &values) {
    DriverOptions o = base;
    o.incrementalize_log = nullptr;
    for (const auto &v : values) o.raw_defines.push_back(v.first + "=" + std::to_string(v.second));
    auto out = std::make_unique<Variant>();
    std::ostringstream sink;  // messages of a failed variant are not the user's
    Diagnostics diag(out->sm, sink);
    try {
        if (!run_front_end(o, out->sm, diag, &out->prog, &out->pdg)) return nullptr;
        std::vector<bool> batch = vectorize_free_dims(out->prog, out->pdg, o.vectorize);
        ScheduleOptions so;
        so.load_schedule = o.load_schedule;
        out->sched = schedule_program(out->prog, out->pdg, batch, so, diag);
        if (diag.has_errors() || !out->sched.root) return nullptr;
        out->plan = plan_memory(out->prog, out->pdg, out->sched, diag);
        if (diag.has_errors()) return nullptr;
        CodegenOptions cg;
        cg.fuse = o.fuse;
        out->kernels = kernel_part(emit_cuda(out->prog, out->pdg, out->sched, out->plan, &out->sm, cg));
    } catch (...) {  // CodegenError, isl, internal errors: this value is simply not usable
        return nullptr;
    }
    return out;
}

bool same_statements(const Schedule &a, const Schedule &b) {
    if (a.statements.size() != b.statements.size() || a.batch_dims != b.batch_dims) return false;
    for (size_t i = 0; i < a.statements.size(); ++i) {
        const Statement &x = a.statements[i], &y = b.statements[i];
        if (x.name != y.name || x.kind != y.kind || x.index != y.index || x.equation != y.equation ||
            x.dims != y.dims || x.batch_positions != y.batch_positions)
            return false;
    }
    return true;
}

bool same_layout(const MemPlan &a, const MemPlan &b) {
    if (a.peak_bytes != b.peak_bytes || a.buffers.size() != b.buffers.size() ||
        a.frees_after != b.frees_after)
        return false;
    for (size_t i = 0; i < a.buffers.size(); ++i) {
        const Buffer &x = a.buffers[i], &y = b.buffers[i];
        if (x.tensor != y.tensor || x.kind != y.kind || x.lower != y.lower ||
            x.modulus != y.modulus || x.stride != y.stride || x.batch != y.batch ||
            x.slots != y.slots || x.slot_bytes != y.slot_bytes || x.bytes != y.bytes ||
            x.offset != y.offset || x.donated_from != y.donated_from)
            return false;
    }
    return true;
}

class Finder {
public:
    Finder(const DriverOptions &opts, const ir::Program &prog, const Pdg &pdg,
           const Schedule &sched, const MemPlan &plan, const SourceManager &sm)
        : opts_(opts), prog_(prog), sched_(sched), plan_(plan) {
        base_seconds_ = cpu_seconds();  // the program's compilation so far
        CodegenOptions cg;
        cg.fuse = opts.fuse;
        if (base_seconds_ <= kSkipSeconds)  // else nothing is checked (over_budget)
            kernels_ = kernel_part(emit_cuda(prog, pdg, sched, plan, &sm, cg));
        for (const auto &b : prog.bounds) {
            names_.push_back(b.first);
            values_[static_cast<int>(names_.size()) - 1] = b.second;
        }
    }

    void run(CodegenOptions &codegen) {
        codegen.bounds.assign(names_.size(), BoundInfo());
        if (!sched_.root) return;
        std::vector<int> runtime;
        std::map<int, LoopNestFit> fits;
        for (size_t k = 0; k < names_.size(); ++k) {
            BoundInfo &info = codegen.bounds[k];
            info.fixed_reason = quick_reason(static_cast<int>(k));
            if (!info.fixed_reason.empty()) continue;
            if (over_budget()) {
                info.fixed_reason = kTooSlow;
                continue;
            }
            info.fixed_reason = fit_one(static_cast<int>(k), fits[k], &info.min_value);
            if (info.fixed_reason.empty()) {
                info.runtime = true;
                runtime.push_back(static_cast<int>(k));
            }
        }
        LoopNestFit all;
        for (int k : runtime)
            for (const auto &s : fits[k].slopes) all.slopes[s.first][k] = s.second.at(k);
        bool slow = runtime.size() > 1 && over_budget();
        if (runtime.size() > 1 && (slow || !joint_ok(runtime, all, codegen))) {
            for (size_t i = 1; i < runtime.size(); ++i) {
                codegen.bounds[runtime[i]].runtime = false;
                codegen.bounds[runtime[i]].fixed_reason = slow ? kTooSlow : kSchedule;
            }
            runtime.resize(1);
            all = LoopNestFit();
            for (const auto &s : fits[runtime[0]].slopes)
                all.slopes[s.first][runtime[0]] = s.second.at(runtime[0]);
        }
        if (!runtime.empty()) codegen.loop_nest = parametrize_loop_nest(*sched_.root, all, values_);
    }

private:
    bool over_budget() const {
        return base_seconds_ > kSkipSeconds ||
               cpu_seconds() - base_seconds_ > std::max(kBudgetFactor * base_seconds_, kMinBudget);
    }

    /** A reason to keep bound k fixed that needs no compilation, or "". */
    std::string quick_reason(int k) const {
        const std::string &name = names_[k];
        bool used = false;
        for (size_t d = 0; d < prog_.dims.size(); ++d) {
            if (prog_.dims[d].bound_name != name) continue;
            used = true;
            if (d < sched_.batch_dims.size() && sched_.batch_dims[d]) return kSizesBuffer;
        }
        if (!used) return kCompiledIn;  // not a dim's bound: only a value
        for (const Buffer &b : plan_.buffers) {
            const ir::Tensor &t = prog_.tensors.at(b.tensor);
            for (size_t p = 0; p < t.dims.size() && p < b.modulus.size(); ++p)
                if (prog_.dims[t.dims[p]].bound_name == name && b.modulus[p] > 1 &&
                    b.modulus[p] == b.extent[p] && b.extent[p] >= values_.at(k))
                    return kSizesBuffer;
        }
        return "";
    }

    /** Compile with the bounds of "delta" moved and compare with the base; "" when equal
     *  (with "fit" and "delta" predicting the loop nest). */
    std::string check(const std::map<int, int64_t> &delta, const LoopNestFit &fit,
                      LoopNestFit *fit_into = nullptr, int fit_bound = -1) {
        std::map<std::string, int64_t> values;
        for (const auto &d : delta) values[names_[d.first]] = values_.at(d.first) + d.second;
        std::unique_ptr<Variant> v = compile_at(opts_, values);
        if (!v) return kNoCompile;
        if (!same_layout(plan_, v->plan)) return kSizesBuffer;
        if (!same_statements(sched_, v->sched)) return kSchedule;
        if (v->kernels != kernels_) return kCompiledIn;
        std::string why;
        if (fit_into) return fit_loop_nest(*sched_.root, *v->sched.root, fit_bound, *fit_into, &why) ? "" : kSchedule;
        return loop_nest_matches(*sched_.root, fit, delta, *v->sched.root, &why) ? "" : kSchedule;
    }

    /** Fit bound k alone; "" and its smallest accepted value in "min_value", or a reason. */
    std::string fit_one(int k, LoopNestFit &fit, int64_t *min_value) {
        // Over budget part-way: the fit and the +2 check are required, the smallest value
        // search is not (the compiled value is then the smallest accepted).
        int64_t v = values_.at(k);
        if (v > (int64_t(1) << 30)) return kCompiledIn;
        std::string r = check({{k, 1}}, fit, &fit, k);
        if (r.empty()) r = check({{k, 2}}, fit);
        if (!r.empty()) return r;
        int64_t lo = v;
        int tries = 0;
        for (int64_t m = 1; m < v && tries < 4 && !over_budget(); m = m < 4 ? m + 1 : m * 2, ++tries) {
            if (check({{k, m - v}}, fit).empty()) {
                lo = m;
                break;
            }
        }
        int64_t mid = (lo + v) / 2;
        if (mid != lo && mid != v && (over_budget() || !check({{k, mid - v}}, fit).empty())) lo = v;
        *min_value = lo;
        return "";
    }

    bool joint_ok(const std::vector<int> &runtime, const LoopNestFit &all,
                  const CodegenOptions &codegen) {
        std::map<int, int64_t> up, low;
        for (int k : runtime) {
            up[k] = 1;
            low[k] = codegen.bounds[k].min_value - values_.at(k);
        }
        return check(up, all).empty() && check(low, all).empty();
    }

    const DriverOptions &opts_;
    const ir::Program &prog_;
    const Schedule &sched_;
    const MemPlan &plan_;
    std::string kernels_;
    std::vector<std::string> names_;
    std::map<int, int64_t> values_;
    double base_seconds_ = 0;
};

}  // namespace

void find_runtime_bounds(const DriverOptions &opts, const ir::Program &prog, const Pdg &pdg,
                         const Schedule &sched, const MemPlan &plan, const SourceManager &sm,
                         CodegenOptions &codegen) {
    try {
        Finder(opts, prog, pdg, sched, plan, sm).run(codegen);
    } catch (const CodegenError &) {  // reported by the code generation that follows
        codegen.bounds.clear();
        codegen.loop_nest = nullptr;
    }
}

}  // namespace trlc
