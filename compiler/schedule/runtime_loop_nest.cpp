// runtime_loop_nest — the compiled schedule applied to other values of some program bounds
// (run-time `--bound NAME=V`, issue 4 §3; driver/runtime_bounds.cpp decides which bounds).
//
// The schedule isl computed at the compiled values is a tree of bands (affine time
// functions per statement, e.g. `ret_1[t] -> [(-t)]`), sequences and filters over concrete
// statement domains.  `lift` rebuilds that tree over another domain: each filter keeps the
// statements it held whole, each band keeps each statement's affine function (one piece,
// defined on the statement's whole compiled domain; anything else is refused).  A constant
// time c in [v - 1, v + 1] of a changed bound compiled at v is a statement after the loop over
// that bound (`save_0[] -> [977]` in PPO at I = 977): it becomes c - v + I (shift_end).  A
// read of a constant point in that range along the bound's dim (`save net[I]`, net[977] in
// the IR) is taken to follow the bound the same way (shift_access).
//
// parametric_loop_nest lifts the tree onto the *parametric* statement domains — the PDG's
// sets keep every bound as an isl parameter (pdg/pdg_impl.h); the run-time bounds stay
// parameters with context `I >= m and I < 2^31`, the others are fixed — and lets isl build
// the AST from it.  What makes the result valid for every I >= m, not just the values tried:
//   1. the parametric domains, fixed at the compiled values, equal the compiled ones, and a
//      statement absent at the compiled values is absent at every value (else refused);
//   2. every flow dependence, rebuilt parametrically as in dependences.cpp, runs producer
//      before consumer under the lifted schedule for every value (isl: subset of lex <);
//   3. the loop nest isl's AST generator builds runs every instance of the domain once and
//      every flow dependence producer first, for every value in the context — checked, not
//      assumed (ast_order.cpp: isl's AST can break the schedule's order, an isl bug).
// schedule_like lifts the tree onto the statements of the program compiled at other values
// (another isl context: the tree travels as text), so that the memory plan and kernels of
// the *same* schedule can be compared there (runtime_bounds.cpp).
#include "schedule/runtime_loop_nest.h"

#include <isl/ast_build.h>
#include <isl/constraint.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>

#include <algorithm>
#include <climits>
#include <set>

#include "pdg/pdg_impl.h"
#include "schedule/schedule_impl.h"
#include "support/time_passes.h"

namespace trlc {

namespace {

const char *kPiecewise = "the schedule of a statement is piecewise";

/** A bound whose value changes: compiled value, and the isl parameter (param) or the
 *  concrete value "target" it takes in the lifted schedule. */
struct BoundShift {
    std::string name;
    int64_t compiled = 0;
    int64_t target = 0;
    bool param = false;
};

/** Tuple name → set, for a union set whose sets have distinct tuples (statement domains). */
std::map<std::string, isl::set> by_name(const isl::union_set &u) {
    std::map<std::string, isl::set> out;
    u.foreach_set([&](isl::set s) {
        const char *n = isl_set_get_tuple_name(s.get());
        out[n ? n : ""] = s;
    });
    return out;
}

/** The schedule tree at "node" rebuilt over "domain" (taken): see the file comment.  Null with
 *  "why" when it cannot be carried over.  "old" holds each statement's compiled domain. */
class Lifter {
public:
    Lifter(std::map<std::string, isl::set> old, const std::vector<BoundShift> &shifts)
        : old_(std::move(old)), shifts_(shifts) {}

    isl_schedule *lift(isl_schedule_node *node, isl_union_set *domain, std::string *why) {
        auto child = [&](int i, isl_union_set *dom) -> isl_schedule * {
            isl_schedule_node *c = isl_schedule_node_get_child(node, i);
            isl_schedule *r = lift(c, dom, why);
            isl_schedule_node_free(c);
            return r;
        };
        switch (isl_schedule_node_get_type(node)) {
        case isl_schedule_node_leaf: return isl_schedule_from_domain(domain);
        case isl_schedule_node_domain:
            if (isl_schedule_node_has_children(node) == isl_bool_true) return child(0, domain);
            return isl_schedule_from_domain(domain);
        case isl_schedule_node_filter: {
            isl::union_set f = isl::manage(isl_schedule_node_filter_get_filter(node));
            isl::union_set dom = isl::manage(domain);
            std::map<std::string, isl::set> in_filter = by_name(f);
            isl::union_set kept = isl::union_set::empty(dom.ctx());
            bool partial = false;
            dom.foreach_set([&](isl::set s) {
                std::string n = isl_set_get_tuple_name(s.get());
                auto o = old_.find(n);
                auto fi = in_filter.find(n);
                if (o == old_.end() || fi == in_filter.end()) return;
                isl::set inside = o->second.intersect(fi->second);
                if (inside.is_empty()) return;
                if (!o->second.is_subset(fi->second)) partial = true;
                kept = kept.unite(isl::union_set(s));
            });
            if (partial) {
                *why = "the schedule splits a statement's instances";
                return nullptr;
            }
            return child(0, kept.release());
        }
        case isl_schedule_node_band: {
            isl::union_set dom = isl::manage(domain);
            isl::multi_union_pw_aff mupa = isl::manage(isl_schedule_node_band_get_partial_schedule(node));
            isl_size n = isl_schedule_node_band_n_member(node);
            isl::space sp = isl::manage(isl_space_align_params(isl_multi_union_pw_aff_get_space(mupa.get()),
                                                               isl_union_set_get_space(dom.get())));
            isl_union_pw_aff_list *list = isl_union_pw_aff_list_alloc(dom.ctx().get(), n);
            for (isl_size i = 0; i < n; ++i) {
                isl::union_pw_aff upa = isl::manage(isl_multi_union_pw_aff_get_union_pw_aff(mupa.get(), i));
                isl::union_pw_aff lifted = member(upa, dom, why);
                if (lifted.is_null()) {
                    isl_union_pw_aff_list_free(list);
                    return nullptr;
                }
                list = isl_union_pw_aff_list_add(list, lifted.release());
            }
            isl_multi_union_pw_aff *nm = isl_multi_union_pw_aff_from_union_pw_aff_list(sp.release(), list);
            isl_schedule *sub = child(0, isl_union_set_copy(dom.get()));
            if (!sub) {
                isl_multi_union_pw_aff_free(nm);
                return nullptr;
            }
            return insert_band_like(sub, nm, node);
        }
        case isl_schedule_node_sequence:
        case isl_schedule_node_set: return sequence_children(node, domain, child);
        default:
            isl_union_set_free(domain);
            *why = "the schedule tree has a node kind that cannot be carried over";
            return nullptr;
        }
    }

private:
    /** A constant time c in [v - 1, v + 1] of a bound compiled at v (a statement after the
     *  loop over that bound: `save_0[] -> [977]` for I = 977; not an inner band's position,
     *  `opt_1[i] -> [16]` at I = 10, further up) becomes c - v + I, so it stays after the
     *  loop at every value; the first bound that fits, in Program::bounds order.  Any choice
     *  is safe: parametric_loop_nest proves the lifted schedule, schedule_like re-checks it. */
    isl::aff shift_end(isl::aff a, const isl::set &dom) const {
        if (isl_aff_is_cst(a.get()) != isl_bool_true) return a;
        isl::val c = isl::manage(isl_aff_get_constant_val(a.get()));
        if (!c.is_int()) return a;
        int64_t cv = c.get_num_si();
        for (const BoundShift &b : shifts_) {
            if (b.compiled < 2 || cv < b.compiled - 1 || cv > b.compiled + 1) continue;
            isl_aff *r;
            if (b.param) {
                isl_space *sp = isl_set_get_space(dom.get());
                isl_id *id = isl_id_alloc(isl_set_get_ctx(dom.get()), b.name.c_str(), nullptr);
                r = isl_aff_param_on_domain_space_id(sp, id);
                r = isl_aff_add_constant_si(r, static_cast<int>(cv - b.compiled));
            } else {
                r = isl_aff_add_constant_si(a.copy(), static_cast<int>(b.target - b.compiled));
            }
            return isl::manage(r);
        }
        return a;
    }

    /** One band member over "dom": each statement's single affine piece, on its new domain. */
    isl::union_pw_aff member(const isl::union_pw_aff &upa, const isl::union_set &dom, std::string *why) {
        std::map<std::string, isl::pw_aff> old_pa;
        isl_union_pw_aff_foreach_pw_aff(
            upa.get(),
            [](isl_pw_aff *pa, void *user) -> isl_stat {
                isl_space *sp = isl_pw_aff_get_domain_space(pa);
                const char *n = isl_space_get_tuple_name(sp, isl_dim_set);
                (*static_cast<std::map<std::string, isl::pw_aff> *>(user))[n ? n : ""] = isl::manage(pa);
                isl_space_free(sp);
                return isl_stat_ok;
            },
            &old_pa);
        isl::union_pw_aff out = isl::manage(isl_union_pw_aff_empty(isl_space_params(dom.space().release())));
        bool ok = true;
        dom.foreach_set([&](isl::set s) {
            if (!ok) return;
            std::string n = isl_set_get_tuple_name(s.get());
            auto p = old_pa.find(n);
            auto o = old_.find(n);
            if (p == old_pa.end() || o == old_.end()) {
                ok = false;
                return;
            }
            isl::pw_aff pa = p->second;
            if (isl_pw_aff_n_piece(pa.get()) != 1) pa = pa.gist(o->second);
            if (isl_pw_aff_n_piece(pa.get()) != 1 || !o->second.is_subset(pa.domain())) {
                ok = false;
                return;
            }
            isl::aff a;
            isl_pw_aff_foreach_piece(
                pa.get(),
                [](isl_set *set, isl_aff *piece, void *user) -> isl_stat {
                    isl_set_free(set);
                    *static_cast<isl::aff *>(user) = isl::manage(piece);
                    return isl_stat_ok;
                },
                &a);
            isl::aff aligned = isl::manage(isl_aff_align_params(a.release(), s.space().release()));
            aligned = shift_end(aligned, s);
            isl::pw_aff on = isl::pw_aff(aligned).intersect_domain(s);
            out = out.union_add(isl::union_pw_aff(on));
        });
        if (!ok) {
            *why = kPiecewise;
            return isl::union_pw_aff();
        }
        return out;
    }

    std::map<std::string, isl::set> old_;
    const std::vector<BoundShift> &shifts_;
};

/** "tree" rebuilt over "domain"; null with "why". */
isl::schedule lift_schedule(const isl::schedule &tree, const isl::union_set &domain,
                            const std::vector<BoundShift> &shifts, std::string *why) {
    Lifter lifter(by_name(isl::manage(isl_schedule_get_domain(tree.get()))), shifts);
    isl_schedule_node *root = isl_schedule_get_root(tree.get());
    isl_schedule *r = lifter.lift(root, domain.copy(), why);
    isl_schedule_node_free(root);
    if (!r) return isl::schedule();  // not liftable; "why" says why (a piecewise schedule, ...)
    return isl::manage(r);
}

/** Whether every pair of "flow" runs producer before consumer under "time". */
bool ordered(const isl::union_map &flow, const isl::union_map &time) { return first_unordered(flow, time).is_null(); }

/** The PDG's parametric objects with the bounds of "keep" (name → smallest value) as
 *  parameters in [m, 2^31) and every other parameter fixed at its compiled value and
 *  projected out. */
class Params {
public:
    Params(const PdgImpl &g, const std::map<std::string, int64_t> &keep) : g_(g), keep_(keep) {
        std::string names, cons;
        for (const auto &p : g.params) {
            names += (names.empty() ? "" : ", ") + p.first;
            cons += cons.empty() ? "" : " and ";
            auto k = keep.find(p.first);
            if (k != keep.end())
                cons += p.first + " >= " + std::to_string(k->second) + " and " + p.first +
                        " <= " + std::to_string(INT32_MAX);
            else
                cons += p.first + " = " + std::to_string(p.second);
        }
        context_ = isl::set(g.isl.ctx(), "[" + names + "] -> { : " + cons + " }");
    }

    /** "x" (isl_set or isl_map, taken) in the context, every parameter not kept projected
     *  out; the isl functions of its type do the work. */
    template <typename T>
    T *in_context(T *x, T *(*intersect_params)(T *, isl_set *), int (*find_dim)(T *, enum isl_dim_type, const char *),
                  T *(*project_out)(T *, enum isl_dim_type, unsigned, unsigned)) const {
        x = intersect_params(x, context_.copy());
        for (const auto &p : g_.params) {
            if (keep_.count(p.first)) continue;
            int pos = find_dim(x, isl_dim_param, p.first.c_str());
            if (pos >= 0) x = project_out(x, isl_dim_param, pos, 1);
        }
        return x;
    }

    isl::set set(const isl::set &s) const {
        return isl::manage(
            in_context(s.copy(), isl_set_intersect_params, isl_set_find_dim_by_name, isl_set_project_out));
    }

    isl::map map(const isl::map &m) const {
        return isl::manage(
            in_context(m.copy(), isl_map_intersect_params, isl_map_find_dim_by_name, isl_map_project_out));
    }

    /** The kept parameters only: [I] -> { : I >= m and I <= 2^31 - 1 }. */
    isl::set context() const { return set(context_).params(); }

    /** "s" with the kept parameters fixed at their compiled values, parameters dropped. */
    isl::set at_compiled(const isl::set &s) const {
        isl_set *x = s.copy();
        for (const auto &p : g_.params) {
            if (!keep_.count(p.first)) continue;
            int pos = isl_set_find_dim_by_name(x, isl_dim_param, p.first.c_str());
            if (pos < 0) continue;
            x = isl_set_fix_val(x, isl_dim_param, pos, isl_val_int_from_si(isl_set_get_ctx(x), p.second));
            x = isl_set_project_out(x, isl_dim_param, pos, 1);
        }
        return isl::manage(x);
    }

private:
    const PdgImpl &g_;
    const std::map<std::string, int64_t> &keep_;
    isl::set context_;
};

const char *kFollows = "its value is compiled into a guard or an index (the statements or "
                       "dependences at another value are not the parametric ones)";

/** Access "m" (consumer point -> producer tensor points) with every position j of the
 *  producer that reads a constant c in [v - 1, v + 1] along a dim bounded by a run-time bound B
 *  (compiled v, an isl parameter of "m") made to read c - v + B instead: `save net[I]` is
 *  net[977] in the IR at I = 977, and net[I] here.  The IR keeps no trace of the bound in
 *  the constant; the choice is safe because the flow built from it is proven ordered for
 *  every value and compared with the program compiled at another value (schedule_like). */
isl::map shift_access(const isl::map &m, const std::vector<std::pair<std::string, int64_t>> &by_pos) {
    isl_map *x = m.copy();
    for (size_t j = 0; j < by_pos.size(); ++j) {
        const std::string &name = by_pos[j].first;
        if (name.empty() || by_pos[j].second < 2) continue;
        int param = isl_map_find_dim_by_name(x, isl_dim_param, name.c_str());
        isl_val *c = isl_map_plain_get_val_if_fixed(x, isl_dim_out, static_cast<unsigned>(j));
        bool fixed = c && isl_val_is_int(c) == isl_bool_true;
        int64_t cv = fixed ? isl_val_get_num_si(c) : 0;
        isl_val_free(c);
        if (param < 0 || !fixed || cv < by_pos[j].second - 1 || cv > by_pos[j].second + 1) continue;
        const char *tuple = isl_map_get_tuple_name(x, isl_dim_out);
        std::string out_name = tuple ? tuple : "";
        x = isl_map_project_out(x, isl_dim_out, static_cast<unsigned>(j), 1);
        x = isl_map_insert_dims(x, isl_dim_out, static_cast<unsigned>(j), 1);
        isl_local_space *ls = isl_local_space_from_space(isl_map_get_space(x));
        isl_constraint *eq = isl_constraint_alloc_equality(ls);
        eq = isl_constraint_set_coefficient_si(eq, isl_dim_out, static_cast<int>(j), 1);
        eq = isl_constraint_set_coefficient_si(eq, isl_dim_param, param, -1);
        eq = isl_constraint_set_constant_si(eq, static_cast<int>(by_pos[j].second - cv));
        x = isl_map_add_constraint(x, eq);
        x = isl_map_set_tuple_name(x, isl_dim_out, out_name.c_str());
    }
    return isl::manage(x);
}

/** The parameters of "obj" fixed at their values in "prog" ("[I] -> { : I = 2 }"). */
template <class T>
isl::set fixed_params(const T &obj, const ir::Program &prog) {
    isl::space sp = obj.space();
    isl::set ctx = isl::set::universe(sp.params());
    isl_size n = isl_space_dim(sp.get(), isl_dim_param);
    for (isl_size i = 0; i < n; ++i) {
        auto b = prog.bounds.find(isl_space_get_dim_name(sp.get(), isl_dim_param, i));
        int64_t v = b == prog.bounds.end() ? -1 : b->second;
        ctx = isl::manage(isl_set_fix_si(ctx.release(), isl_dim_param, i, static_cast<int>(v)));
    }
    return ctx;
}

/** Parametric text "text" (parametric_loop_nest's "domains" output: the statement domains,
 *  a newline, the flow dependences) read in pdg's context, each parameter fixed at its value
 *  in "prog" and projected out. */
std::pair<isl::union_set, isl::union_map> at_values(const std::string &text, const ir::Program &prog, const Pdg &pdg) {
    size_t nl = text.find('\n');
    isl::union_set d(pdg.impl().isl.ctx(), text.substr(0, nl));
    isl::union_map f(pdg.impl().isl.ctx(), nl == std::string::npos ? "{ }" : text.substr(nl + 1));
    d = d.intersect_params(fixed_params(d, prog));
    f = f.intersect_params(fixed_params(f, prog));
    return {isl::manage(isl_union_set_project_out_all_params(d.release())).coalesce(),
            isl::manage(isl_union_map_project_out_all_params(f.release())).coalesce()};
}

}  // namespace

namespace {

/** Steps 4 and 5 of parametric_loop_nest on what steps 1 to 3 proved. */
LoopNodePtr finish_parametric(const ParametricSteps &st, std::string *why) {
    try {
        // 4. isl's AST of the lifted schedule for every value in the context.
        isl_ast_node *ast = nullptr;
        {
            PassTimer ast_timer("parametric AST");
            isl_ast_build *build = isl_ast_build_from_context(st.context.copy());
            ast = isl_ast_build_node_from_schedule(build, st.lifted.copy());
            isl_ast_build_free(build);
        }
        if (!ast) {
            *why = "isl could not build the parametric loop nest";
            return nullptr;
        }
        LoopNodePtr root = loop_nest_from_ast(*st.sched, ast, st.ast_params);
        isl_ast_node_free(ast);
        // 5. The loop nest's own order, for every value (schedule/ast_order.cpp; helper astorder).
        PassTimer order_timer("parametric loop nest order");
        *why = check_loop_nest_order(*st.sched, *root, st.domain.intersect_params(st.context),
                                     st.flow.intersect_params(st.context), st.ast_params);
        if (!why->empty()) return nullptr;
        return root;
    } catch (const isl::exception &e) {
        *why = std::string("isl: ") + (e.what() ? e.what() : "error");
        return nullptr;
    }
}

/** Steps 1 to 3 of parametric_loop_nest: what they proved, or null with the reason in "why". */
std::shared_ptr<const ParametricSteps> parametric_steps(const ir::Program &prog, const Pdg &pdg, const Schedule &sched,
                                                        const std::map<int, int64_t> &min_values, bool shift,
                                                        std::string *why, std::string *domains) {
    const PdgImpl &g = pdg.impl();
    const ScheduleImpl &im = sched.impl();
    std::map<std::string, int64_t> keep;
    std::map<std::string, std::pair<int, int64_t>> ast_params;
    {
        int k = 0;
        for (const auto &b : prog.bounds) {
            auto m = min_values.find(k);
            if (m != min_values.end()) {
                keep[b.first] = m->second;
                ast_params[b.first] = {k, b.second};
            }
            ++k;
        }
    }
    try {
        Params par(g, keep);
        // 1. Parametric statements, in statements.cpp's order.
        isl::union_set domain = isl::union_set::empty(g.isl.ctx());
        std::vector<isl::map> points(sched.statements.size());  // instance -> tensor points
        std::vector<int> node_of(sched.statements.size(), -1);
        size_t si = 0;
        for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
            const PdgNode &n = g.nodes[ni];
            if (n.is_load) continue;
            for (size_t k = 0; k < n.equations.size(); ++k) {
                const PdgEquation &eq = n.equations[k];
                isl::set p = par.set(eq.effective).coalesce();
                if (concrete(g, eq.effective).is_empty()) {
                    if (!p.is_empty()) {
                        *why = "a statement runs only at some values of the bound";
                        return nullptr;
                    }
                    continue;
                }
                if (si >= sched.statements.size() || sched.statements[si].index != n.ir_index) {
                    *why = "the statements do not match the schedule";
                    return nullptr;
                }
                const Statement &st = sched.statements[si];
                isl::map proj = projection(p, st.batch_positions, st.name);
                isl::set dom = proj.range().coalesce();
                if (!par.at_compiled(dom).is_equal(im.stmt_domain[si])) {
                    *why = "the statement domains do not match the schedule";
                    return nullptr;
                }
                points[si] = proj.reverse().coalesce();
                node_of[si] = static_cast<int>(ni);
                domain = domain.unite(isl::union_set(dom));
                ++si;
            }
        }
        if (si != sched.statements.size()) {
            *why = "the statements do not match the schedule";
            return nullptr;
        }
        domain = domain.coalesce();
        // 2. The compiled schedule tree over the parametric domain.
        std::vector<BoundShift> shifts;
        for (const auto &b : prog.bounds)
            if (shift && keep.count(b.first)) shifts.push_back({b.first, b.second, 0, true});
        isl::schedule lifted = lift_schedule(im.schedule, domain, shifts, why);
        if (lifted.is_null()) return nullptr;
        isl::union_map time = lifted.get_map().intersect_domain(domain);
        // 3. Every parametric flow dependence is ordered (dependences.cpp, parametric).
        std::vector<std::vector<int>> of_node(g.nodes.size());
        for (size_t i = 0; i < node_of.size(); ++i) of_node[node_of[i]].push_back(static_cast<int>(i));
        isl::union_map flow = isl::union_map::empty(g.isl.ctx());
        for (size_t c = 0; c < sched.statements.size(); ++c) {
            const Statement &st = sched.statements[c];
            const PdgEquation &eq = g.nodes[node_of[c]].equations.at(st.kind == Statement::Tensor ? st.equation : 0);
            for (int e : eq.edges) {
                const PdgEdge &edge = g.edges.at(e);
                std::vector<std::pair<std::string, int64_t>> by_pos;  // producer positions
                const PdgNode &pn = g.nodes.at(edge.producer);
                if (pn.kind == PdgNode::Tensor)
                    for (int d : prog.tensors.at(pn.ir_index).dims) {
                        const std::string &b = prog.dims.at(d).bound_name;
                        by_pos.push_back(keep.count(b) ? std::make_pair(b, prog.bounds.at(b))
                                                       : std::make_pair(std::string(), int64_t(0)));
                    }
                isl::map reads = points[c].apply_range(shift_access(par.map(edge.access), by_pos));
                for (int p : of_node.at(edge.producer)) {
                    isl::map rel = reads.apply_range(points[p].reverse()).reverse();
                    if (rel.is_empty()) continue;
                    flow = flow.unite(isl::union_map(rel));
                    if (!ordered(isl::union_map(rel), time)) {
                        *why = "the schedule does not order the dependence " + edge.text + " at every value";
                        return nullptr;
                    }
                }
            }
        }
        if (domains) *domains = isl_text(domain) + "\n" + isl_text(flow.coalesce());
        auto steps = std::make_shared<ParametricSteps>();
        steps->sched = &sched;
        steps->context = par.context();
        steps->domain = domain;
        steps->flow = flow;
        steps->lifted = lifted;
        steps->ast_params = ast_params;
        return steps;
    } catch (const isl::exception &e) {
        *why = std::string("isl: ") + (e.what() ? e.what() : "error");
        return nullptr;
    }
}

}  // namespace

LoopNodePtr parametric_loop_nest(const ir::Program &prog, const Pdg &pdg, const Schedule &sched,
                                 const std::map<int, int64_t> &min_values, bool shift, std::string *why,
                                 std::string *domains) {
    std::shared_ptr<const ParametricSteps> steps = parametric_steps(prog, pdg, sched, min_values, shift, why, domains);
    return steps ? finish_parametric(*steps, why) : nullptr;
}

LoopNodePtr parametric_loop_nest(const ParametricSteps &steps, std::string *why) {
    return finish_parametric(steps, why);
}

bool parametric_domains(const ir::Program &prog, const Pdg &pdg, const Schedule &sched,
                        const std::map<int, int64_t> &min_values, bool shift, std::string *why, std::string *domains,
                        std::shared_ptr<const ParametricSteps> *steps) {
    std::shared_ptr<const ParametricSteps> s = parametric_steps(prog, pdg, sched, min_values, shift, why, domains);
    if (steps) *steps = s;
    return s != nullptr;
}

std::string schedule_tree_text(const Schedule &s) {
    char *text = isl_schedule_to_str(s.impl().schedule.get());
    std::string out = text ? text : "";
    free(text);
    return out;
}

bool schedule_like(const ir::Program &prog, const Pdg &pdg, const std::vector<bool> &batch_dims,
                   const ir::Program &base_prog, const Schedule &base, const std::string &base_tree, bool shift,
                   const std::string &domains, Schedule &out, std::string *why, bool loop_nest) {
    try {
        out.batch_dims = batch_dims;
        out.batch_dims.resize(prog.dims.size(), false);
        build_statements(prog, pdg, out);
        build_dependences(pdg, out);
        if (out.statements.size() != base.statements.size()) {
            *why = "the statements change with it";
            return false;
        }
        for (size_t i = 0; i < out.statements.size(); ++i)
            if (out.statements[i].name != base.statements[i].name) {
                *why = "the statements change with it";
                return false;
            }
        ScheduleImpl &im = out.impl();
        if (!domains.empty()) {
            auto [dom, flow] = at_values(domains, prog, pdg);
            if (!dom.is_equal(im.domain) || !flow.is_equal(im.flow)) {
                *why = kFollows;
                return false;
            }
        }
        isl::schedule tree(pdg.impl().isl.ctx(), base_tree);
        std::vector<BoundShift> shifts;
        for (const auto &b : base_prog.bounds) {
            auto w = prog.bounds.find(b.first);
            if (shift && w != prog.bounds.end() && w->second != b.second)
                shifts.push_back({b.first, b.second, w->second, false});
        }
        im.schedule = lift_schedule(tree, im.domain, shifts, why);
        if (im.schedule.is_null()) return false;
        im.schedule_map = im.schedule.get_map().intersect_domain(im.domain).coalesce();
        if (!ordered(im.flow, im.schedule_map)) {
            *why = "the schedule breaks a dependence at other values";
            return false;
        }
        if (loop_nest) build_loop_nest(out);
        return true;
    } catch (const isl::exception &e) {
        *why = std::string("isl: ") + (e.what() ? e.what() : "error");
        return false;
    } catch (const std::runtime_error &e) {
        *why = e.what();
        return false;
    }
}

}  // namespace trlc
