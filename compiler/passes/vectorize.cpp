// vectorize — the batch-axis decision (rule and its proof sketch in
// vectorize.h).  One walk over the IR: each equation, emit and save
// is a consumer with variables; each fact that breaks the rule for a dim is
// recorded as that dim's reason (the first one found, in program order), so
// `trl-opt --print-vectorize` can say why a dim stays a loop.
#include "passes/vectorize.h"

#include <functional>
#include <set>

namespace trlc {

namespace {

std::string loc_text(const Loc &l) { return std::to_string(l.line) + ":" + std::to_string(l.col); }

bool affine_uses(const ir::Affine &a, int v) { return a.coef_of(v) != 0; }

bool index_uses(const ir::IndexExpr *e, int v) {
    if (!e) return false;
    if (e->kind == ir::IndexExpr::Aff) return affine_uses(e->aff, v);
    return index_uses(e->a.get(), v) || index_uses(e->b.get(), v);
}

bool guard_uses(const ir::Guard *g, int v) {
    if (!g) return false;
    switch (g->kind) {
    case ir::Guard::True: return false;
    case ir::Guard::Cmp: return affine_uses(g->lhs, v) || affine_uses(g->rhs, v);
    default: return guard_uses(g->a.get(), v) || guard_uses(g->b.get(), v);
    }
}

bool type_uses(const ir::Type &t, int v) {
    for (const ir::Extent &e : t.shape)
        if (index_uses(e.dynamic.get(), v)) return true;
    for (const ir::Type &el : t.elems)
        if (type_uses(el, v)) return true;
    return false;
}

/* True when "e" is exactly the variable v (coefficient 1, nothing else). */
bool is_plain_var(const ir::IndexExpr &e, int v) {
    if (e.kind != ir::IndexExpr::Aff || e.aff.constant != 0) return false;
    for (size_t k = 0; k < e.aff.coef.size(); ++k)
        if (e.aff.coef[k] != (static_cast<int>(k) == v ? 1 : 0)) return false;
    return e.aff.coef_of(v) == 1;
}

class Decider {
public:
    Decider(const ir::Program &prog, VectorizeDecision &d) : prog_(prog), d_(d) {}

    void run() {
        std::vector<bool> used(prog_.dims.size(), false);
        for (const ir::Tensor &t : prog_.tensors) {
            for (int dim : t.dims) used[dim] = true;
            for (const ir::Equation &eq : t.equations) equation(t, eq);
        }
        for (const ir::Emit &e : prog_.emits) {
            for (int dim : e.vars) used[dim] = true;
            std::vector<std::string> names = var_names(e.vars);
            std::string who = "emit \"" + e.stream + "\"";
            if (!e.vars.empty()) who += "[" + join(names) + "]";
            for (const auto &f : e.fields) body(who, e.vars, names, f.second.get());
            if (e.guard) body(who, e.vars, names, e.guard.get());
        }
        for (const ir::Save &s : prog_.saves) body(s.label(), {}, {}, s.value.get());
        for (size_t dim = 0; dim < prog_.dims.size(); ++dim)
            if (!used[dim]) fail(static_cast<int>(dim), "no tensor or emit is indexed by it");
    }

private:
    std::vector<std::string> var_names(const std::vector<int> &vars) const {
        std::vector<std::string> out;
        for (int dim : vars) out.push_back(prog_.dims[dim].name);
        return out;
    }

    static std::string join(const std::vector<std::string> &xs) {
        std::string s;
        for (size_t k = 0; k < xs.size(); ++k) s += (k ? ", " : "") + xs[k];
        return s;
    }

    void fail(int dim, const std::string &why) {
        if (dim < 0 || dim >= static_cast<int>(d_.batch.size()) || !d_.batch[dim]) return;
        d_.batch[dim] = false;
        d_.reasons[dim] = why;
    }

    void equation(const ir::Tensor &t, const ir::Equation &eq) {
        std::vector<std::string> names = var_names(eq.vars);
        std::vector<std::string> pos;
        for (const ir::PatternItem &p : eq.pattern) {
            if (p.kind == ir::PatternItem::Constant)
                pos.push_back(std::to_string(p.offset));
            else if (p.var >= 0 && p.var < static_cast<int>(names.size()))
                pos.push_back(names[p.var] + (p.kind == ir::PatternItem::Shift ? "+" + std::to_string(p.offset) : ""));
            else
                pos.push_back("?");
        }
        std::string who = t.name + (pos.empty() ? "" : "[" + join(pos) + "]");
        std::string at = " at " + loc_text(eq.loc);
        // Rule 1: plain pattern positions.
        for (size_t k = 0; k < eq.pattern.size() && k < t.dims.size(); ++k) {
            const ir::PatternItem &p = eq.pattern[k];
            int dim = t.dims[k];
            const std::string &dn = prog_.dims[dim].name;
            if (p.kind == ir::PatternItem::Constant)
                fail(dim, "the equation " + who + at + " fixes " + dn + " to a constant");
            else if (p.kind == ir::PatternItem::Shift)
                fail(dim, "the equation " + who + at + " shifts " + dn + " (carried dependence)");
            else if (p.var < 0 || p.var >= static_cast<int>(eq.vars.size()) || eq.vars[p.var] != dim)
                fail(dim, "the equation " + who + at + " does not index " + dn + " by itself");
        }
        // Rule 2: guards.
        for (size_t v = 0; v < eq.vars.size(); ++v)
            if (guard_uses(eq.guard.get(), static_cast<int>(v)))
                fail(eq.vars[v], "the guard of " + who + at + " mentions " + names[v]);
        body(who, eq.vars, names, eq.body.get());
    }

    /* Rules 3 and 4 over one body DAG of a consumer with variables "vars". */
    void body(const std::string &who, const std::vector<int> &vars, const std::vector<std::string> &names,
              const ir::Node *root) {
        std::set<const ir::Node *> seen;
        std::function<void(const ir::Node *)> walk = [&](const ir::Node *x) {
            if (!x || !seen.insert(x).second) return;
            if (x->kind == ir::NodeKind::Read) read(who, vars, names, *x);  // the precise reason first
            for (size_t v = 0; v < vars.size(); ++v) {
                int iv = static_cast<int>(v);
                bool dyn = type_uses(x->type, iv);
                for (const ir::SpatialIndex &s : x->sindex)
                    dyn = dyn || index_uses(s.lo.get(), iv) || index_uses(s.hi.get(), iv);
                if (dyn) fail(vars[v], who + " at " + loc_text(x->loc) + " has an extent that depends on " + names[v]);
            }
            for (const ir::NodePtr &a : x->args) walk(a.get());
            for (const ir::SpatialIndex &s : x->sindex) walk(s.value.get());
        };
        walk(root);
    }

    void read(const std::string &who, const std::vector<int> &vars, const std::vector<std::string> &names,
              const ir::Node &r) {
        if (r.tensor < 0 || r.tensor >= static_cast<int>(prog_.tensors.size())) return;
        const ir::Tensor &p = prog_.tensors[r.tensor];
        std::string text = p.name;
        if (!r.index.empty()) {
            std::vector<std::string> ix;
            for (const ir::ReadIndex &i : r.index)
                ix.push_back(i.is_slice
                                 ? ir::index_expr_compact(*i.lo, names) + ":" + ir::index_expr_compact(*i.hi, names)
                                 : ir::index_expr_compact(*i.point, names));
            text += "[" + join(ix) + "]";
        }
        std::string prefix = who + " reads " + text + " at " + loc_text(r.loc);
        for (size_t v = 0; v < vars.size(); ++v) {
            int iv = static_cast<int>(v), dim = vars[v];
            const std::string &dn = names[v];
            int own = -1;  // the producer's position of dim d
            for (size_t k = 0; k < p.dims.size(); ++k)
                if (p.dims[k] == dim) own = static_cast<int>(k);
            for (size_t k = 0; k < r.index.size(); ++k) {
                const ir::ReadIndex &i = r.index[k];
                bool uses = i.is_slice ? index_uses(i.lo.get(), iv) || index_uses(i.hi.get(), iv)
                                       : index_uses(i.point.get(), iv);
                if (static_cast<int>(k) == own) {
                    if (i.is_slice)
                        fail(dim, prefix + " (a slice over " + dn + ")");
                    else if (!i.point || !is_plain_var(*i.point, iv))
                        fail(dim, prefix + " (" + dn + " is not mapped to itself: carried dependence)");
                } else if (uses) {
                    std::string pd = k < p.dims.size() ? prog_.dims[p.dims[k]].name : "?";
                    fail(dim,
                         prefix + (i.is_slice ? " (the slice of " + p.name + "'s dim " + pd + " depends on " + dn + ")"
                                              : " (" + dn + " indexes " + p.name + "'s dim " + pd + ")"));
                }
            }
        }
    }

    const ir::Program &prog_;
    VectorizeDecision &d_;
};

}  // namespace

VectorizeDecision vectorize(const ir::Program &prog, const Pdg &, bool enabled) {
    VectorizeDecision d;
    d.batch.assign(prog.dims.size(), enabled);
    d.reasons.assign(prog.dims.size(), enabled ? "" : "vectorization disabled (-fno-vectorize)");
    if (enabled) Decider(prog, d).run();
    return d;
}

std::string vectorize_decision_to_string(const ir::Program &prog, const VectorizeDecision &d) {
    std::string out;
    for (size_t k = 0; k < prog.dims.size() && k < d.batch.size(); ++k) {
        out += prog.dims[k].name + ": ";
        out += d.batch[k] ? "batch axis" : "not a batch axis: " + d.reasons[k];
        out += "\n";
    }
    return out;
}

}  // namespace trlc
