// pdg — build the polyhedral dependence graph of an ir::Program (TimeRL §4).
//
// For each tensor equation: its variable domain `[T] -> { [t] : 0 <= t < T and
// guard }`, its pattern `{ [t] -> x[t'] : t' = t + 1 }` and image (the points
// it defines).  Where images of one tensor overlap, the more specific pattern
// wins (per position: constant > shift > var; A is more specific than B if it is
// at least as specific at every position and strictly at one); the effective
// domain of an equation is its image minus the images of more specific
// equations.  Overlaps that no specificity resolves are errors:
//   ambiguous definitions of x: the equations at 3:1 and 4:1 both define x at t = 3
// Emits and saves are consumer-only nodes.  Each Read node (the body DAG is
// walked once per node) becomes an edge whose access relation goes from the
// consumer's point to the producer's points:
//   { y[t] -> x[t'] : t' = t + 1 }      restricted to y's effective domain.
#include "pdg/pdg.h"

#include <functional>
#include <set>

#include "pdg/pdg_impl.h"
#include "pdg/to_isl.h"

namespace trlc {

Pdg::Pdg() : impl_(std::make_unique<PdgImpl>()) {}
Pdg::~Pdg() = default;
Pdg::Pdg(Pdg &&) noexcept = default;
Pdg &Pdg::operator=(Pdg &&) noexcept = default;

namespace {

bool is_identifier(const std::string &s) {
    if (s.empty() || !(isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    for (char c : s)
        if (!(isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return true;
}

const char *dtype_str(ir::DType d) {
    switch (d) {
    case ir::DType::Bool: return "bool";
    case ir::DType::I32: return "i32";
    case ir::DType::F32: return "f32";
    case ir::DType::F64: return "f64";
    case ir::DType::Key: return "key";
    }
    return "?";
}

std::string type_str(const ir::Type &t) {
    if (t.is_tuple) {
        std::string s = "(";
        for (size_t i = 0; i < t.elems.size(); ++i) s += (i ? ", " : "") + type_str(t.elems[i]);
        return s + ")";
    }
    std::string s = dtype_str(t.dtype);
    if (t.shape.empty()) return s;
    s += "[";
    for (size_t i = 0; i < t.shape.size(); ++i) {
        s += i ? ", " : "";
        s +=
            t.shape[i].is_static() ? std::to_string(t.shape[i].max_value) : "<=" + std::to_string(t.shape[i].max_value);
    }
    return s + "]";
}

/* The read as written, rebuilt from the IR: "x[t+1]", "r[t:min(t+3, 12)]", "w". */
std::string read_text(const ir::Program &prog, const ir::Node &n, const std::vector<std::string> &vars) {
    std::string s = prog.tensors.at(n.tensor).name;
    if (n.index.empty()) return s;
    s += "[";
    for (size_t k = 0; k < n.index.size(); ++k) {
        const ir::ReadIndex &ix = n.index[k];
        s += k ? ", " : "";
        if (ix.is_slice)
            s += ir::index_expr_compact(*ix.lo, vars) + ":" + ir::index_expr_compact(*ix.hi, vars);
        else
            s += ir::index_expr_compact(*ix.point, vars);
    }
    return s + "]";
}

std::string sanitize(const std::string &s) {
    std::string out;
    for (char c : s) out += isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return out;
}

int spec_of(const ir::PatternItem &it) {
    return it.kind == ir::PatternItem::Constant ? 2 : it.kind == ir::PatternItem::Shift ? 1 : 0;
}

bool more_specific(const std::vector<int> &a, const std::vector<int> &b) {
    bool strict = false;
    for (size_t k = 0; k < a.size() && k < b.size(); ++k) {
        if (a[k] < b[k]) return false;
        if (a[k] > b[k]) strict = true;
    }
    return strict;
}

class Builder {
public:
    Builder(const ir::Program &prog, Diagnostics &diag, PdgImpl &g) : prog_(prog), diag_(diag), g_(g) {}

    void run() {
        for (const ir::Dim &d : prog_.dims) g_.program_dims.push_back(d.name);
        for (const auto &b : prog_.bounds)
            if (is_identifier(b.first)) g_.params.push_back(b);
        build_context();
        for (size_t i = 0; i < prog_.tensors.size(); ++i) add_tensor(static_cast<int>(i));
        for (size_t i = 0; i < prog_.emits.size(); ++i) add_emit(static_cast<int>(i));
        for (size_t i = 0; i < prog_.saves.size(); ++i) add_save(static_cast<int>(i));
        for (size_t i = 0; i < prog_.tensors.size(); ++i) resolve_specificity(g_.nodes[i]);
        for (size_t n = 0; n < g_.nodes.size(); ++n) add_edges(static_cast<int>(n));
    }

private:
    void build_context() {
        isl::space sp = set_space(g_, "", {});
        isl::set c = sp.universe_set();
        for (const auto &p : g_.params)
            c = c.intersect(isl::pw_aff(sp.param_aff_on_domain(p.first))
                                .eq_set(isl::pw_aff(sp.zero_aff_on_domain().add_constant(
                                    isl::val(sp.ctx(), static_cast<long>(p.second))))));
        g_.context = c.params();
    }

    std::vector<std::string> dim_names(const std::vector<int> &dims) const {
        std::vector<std::string> out;
        for (int d : dims) out.push_back(prog_.dims.at(d).name);
        return out;
    }

    /* An equation whose pattern is the identity on "vars" (emits, loads). */
    PdgEquation identity_equation(const std::vector<int> &vars, const isl::space &space, Loc loc) {
        PdgEquation eq;
        eq.loc = loc;
        eq.vars = var_domain(g_, prog_, vars, nullptr);
        std::vector<ir::PatternItem> pat;
        for (size_t v = 0; v < vars.size(); ++v) {
            ir::PatternItem it;
            it.kind = ir::PatternItem::Var;
            it.var = static_cast<int>(v);
            pat.push_back(it);
            eq.spec.push_back(0);
        }
        eq.pattern = pattern_map(eq.vars, space, pat);
        eq.image = eq.pattern.range();
        eq.effective = eq.image;
        eq.synthetic = true;
        return eq;
    }

    void add_tensor(int i) {
        const ir::Tensor &t = prog_.tensors[i];
        PdgNode n;
        n.kind = PdgNode::Tensor;
        n.name = t.name;
        n.tuple = is_identifier(t.name) ? t.name : "tuple_" + sanitize(t.name);
        n.ir_index = i;
        n.dim_names = dim_names(t.dims);
        n.loc = t.loc;
        n.dtype = t.type.is_tuple ? "tuple" : dtype_str(t.type.dtype);
        n.type = type_str(t.type);
        if (!t.type.is_tuple)
            for (const ir::Extent &e : t.type.shape) n.shape.push_back(e.max_value);
        n.is_load = t.is_load;
        isl::space sp = set_space(g_, n.tuple, n.dim_names);
        n.domain = isl::set::empty(sp);
        for (const ir::Equation &e : t.equations) {
            TRLC_ASSERT(e.pattern.size() == t.dims.size())
                << "equation of " << t.name << " has " << e.pattern.size() << " pattern positions";
            PdgEquation eq;
            eq.loc = e.loc;
            for (const ir::PatternItem &it : e.pattern) eq.spec.push_back(spec_of(it));
            eq.vars = var_domain(g_, prog_, e.vars, e.guard.get());
            eq.pattern = pattern_map(eq.vars, sp, e.pattern);
            eq.image = eq.pattern.range().coalesce();
            eq.effective = eq.image;
            n.domain = n.domain.unite(eq.image);
            n.equations.push_back(eq);
        }
        if (t.is_load && t.equations.empty()) {
            // A load defines its whole box; it keeps one pseudo-equation with no reads.
            n.equations.push_back(identity_equation(t.dims, sp, t.loc));
            n.domain = n.equations.back().image;
        }
        n.domain = n.domain.coalesce();
        g_.nodes.push_back(std::move(n));
    }

    void add_emit(int i) {
        const ir::Emit &e = prog_.emits[i];
        PdgNode n;
        n.kind = PdgNode::Emit;
        n.name = "emit \"" + e.stream + "\"";
        n.tuple = "emit_" + sanitize(e.stream);
        for (const PdgNode &o : g_.nodes)
            if (o.tuple == n.tuple) n.tuple += "_" + std::to_string(i);
        n.ir_index = i;
        n.dim_names = dim_names(e.vars);
        n.loc = e.loc;
        isl::space sp = set_space(g_, n.tuple, n.dim_names);
        n.equations.push_back(identity_equation(e.vars, sp, e.loc));
        n.domain = n.equations.back().image;
        if (e.guard && !e.field_guard)
            n.read_note = "the guard of " + n.name +
                          " reads values, so it does not restrict the points its fields read at compile "
                          "time; a quasi-affine guard does, alone or in a `&&` (`when done[t] && t >= 5`, "
                          "dsl/README.md §7.2)";
        g_.nodes.push_back(std::move(n));
    }

    void add_save(int i) {
        const ir::Save &s = prog_.saves[i];
        PdgNode n;
        n.kind = PdgNode::Save;
        n.name = s.output.empty() ? "save \"" + s.path + "\"" : "output " + s.output;
        n.tuple = "save_" + std::to_string(i);
        for (const PdgNode &o : g_.nodes)
            if (o.tuple == n.tuple) n.tuple += "_";
        n.ir_index = i;
        n.loc = s.loc;
        isl::space sp = set_space(g_, n.tuple, {});
        n.equations.push_back(identity_equation({}, sp, s.loc));
        n.domain = n.equations.back().image;
        g_.nodes.push_back(std::move(n));
    }

    /* Effective domains, then the overlaps that no specificity resolves. */
    void resolve_specificity(PdgNode &n) {
        std::vector<PdgEquation> &eqs = n.equations;
        for (size_t b = 0; b < eqs.size(); ++b)
            for (size_t a = 0; a < eqs.size(); ++a)
                if (a != b && more_specific(eqs[a].spec, eqs[b].spec))
                    eqs[b].effective = eqs[b].effective.subtract(eqs[a].image);
        for (PdgEquation &e : eqs) e.effective = e.effective.coalesce();
        for (size_t j = 0; j < eqs.size(); ++j) {
            for (size_t i = 0; i < j; ++i) {
                if (more_specific(eqs[i].spec, eqs[j].spec) || more_specific(eqs[j].spec, eqs[i].spec)) continue;
                isl::set both = eqs[i].effective.intersect(eqs[j].effective).intersect_params(g_.context);
                if (both.is_empty()) continue;
                diag_.error(eqs[j].loc, "ambiguous definitions of " + n.name + ": the equations at " +
                                            loc_string(eqs[i].loc) + " and " + loc_string(eqs[j].loc) +
                                            " both define " + n.name + " at " + describe_points(g_, both, n.dim_names));
                diag_.note(eqs[i].loc, "the other definition of " + n.name + " is here");
                break;  // one report per equation
            }
        }
    }

    void add_edges(int node) {
        PdgNode &n = g_.nodes[node];
        // Per equation: its variables and the roots of what it reads; an emit's fields also
        // the quasi-affine form of its guard (ir::Emit::field_guard), where alone they are read.
        struct Body {
            const std::vector<int> *vars;
            std::vector<const ir::Node *> roots;
            const ir::Guard *only_where = nullptr;
        };
        std::vector<Body> bodies;
        if (n.kind == PdgNode::Tensor) {
            const ir::Tensor &t = prog_.tensors[n.ir_index];
            for (const ir::Equation &e : t.equations) bodies.push_back({&e.vars, {e.body.get()}});
        } else if (n.kind == PdgNode::Emit) {
            const ir::Emit &e = prog_.emits[n.ir_index];
            Body fields{&e.vars, {}, e.field_guard.get()};
            for (const auto &f : e.fields) fields.roots.push_back(f.second.get());
            bodies.push_back(fields);
            if (e.guard) bodies.push_back({&e.vars, {e.guard.get()}});  // read at every point
        } else {
            static const std::vector<int> none;
            bodies.push_back({&none, {prog_.saves[n.ir_index].value.get()}});
        }
        // Each Read node of an equation is one edge.  An emit's two bodies (fields, guard) share
        // its one equation; where the fields' reads are restricted, a Read node the guard shares
        // with a field is an edge of each (the guard's at every point).
        std::set<const ir::Node *> seen;
        for (const Body &b : bodies) {
            int q = n.kind == PdgNode::Emit ? 0 : static_cast<int>(&b - bodies.data());
            if (n.kind != PdgNode::Emit || (&b != bodies.data() && bodies[0].only_where)) seen.clear();
            if (q >= static_cast<int>(n.equations.size())) break;
            std::vector<std::string> vars = dim_names(*b.vars);
            isl::set where;
            if (b.only_where) {
                const isl::set &eff = n.equations[q].effective;
                where = eff.intersect(guard_to_set(eff.space(), b.only_where, static_cast<int>(b.vars->size())));
            }
            std::function<void(const ir::Node *)> walk = [&](const ir::Node *x) {
                if (!x || !seen.insert(x).second) return;
                if (x->kind == ir::NodeKind::Read) add_read(node, q, *x, vars, where);
                for (const ir::NodePtr &a : x->args) walk(a.get());
                for (const ir::SpatialIndex &s : x->sindex) walk(s.value.get());
            };
            for (const ir::Node *root : b.roots) walk(root);
        }
    }

    /** The edge of read "r" in equation "eq_index" of "node", at the equation's effective
     *  points, or at "where" (a subset of them) when it is not null. */
    void add_read(int node, int eq_index, const ir::Node &r, const std::vector<std::string> &vars,
                  const isl::set &where = isl::set()) {
        TRLC_ASSERT(r.tensor >= 0 && r.tensor < static_cast<int>(prog_.tensors.size()))
            << "read of tensor " << r.tensor;
        const PdgNode &producer = g_.nodes[r.tensor];
        TRLC_ASSERT(r.index.size() == producer.dim_names.size())
            << "read of " << producer.name << " with " << r.index.size() << " indices";
        PdgNode &consumer = g_.nodes[node];
        PdgEquation &eq = consumer.equations[eq_index];
        isl::space psp = set_space(g_, producer.tuple, producer.dim_names);
        isl::map reads = read_map(eq.vars, psp, r.index);
        isl::map access =
            eq.pattern.reverse().apply_range(reads).intersect_domain(where.is_null() ? eq.effective : where).coalesce();
        std::vector<std::string> out = producer.dim_names;
        for (std::string &o : out)
            while (std::find(consumer.dim_names.begin(), consumer.dim_names.end(), o) != consumer.dim_names.end())
                o += "'";
        PdgEdge e;
        e.consumer = node;
        e.equation = eq_index;
        e.producer = r.tensor;
        e.loc = r.loc;
        e.text = read_text(prog_, r, vars);
        e.access = rename_map_dims(access, consumer.dim_names, out);
        e.index = r.index;
        eq.edges.push_back(static_cast<int>(g_.edges.size()));
        g_.edges.push_back(std::move(e));
    }

    const ir::Program &prog_;
    Diagnostics &diag_;
    PdgImpl &g_;
};

}  // namespace

Pdg build_pdg(const ir::Program &prog, Diagnostics &diag) {
    Pdg pdg;
    Builder(prog, diag, pdg.impl()).run();
    return pdg;
}

}  // namespace trlc
