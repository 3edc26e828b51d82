// no_zero_cycle — prove with isl that no point depends on itself.
//
// Per strongly connected component of the tensor-level graph (a tensor reading
// itself counts), take the union R of the component's access relations under
// the context, concrete (all bounds are known, so every relation is finite):
//   R = { a[t] -> b[t]; b[t] -> a[t] }
// A point depends on itself iff R+ (transitive closure) meets the identity.
// isl's closure may be an over-approximation: when it is not exact and seems to
// meet the identity, R+ is recomputed exactly by repeated squaring
// (C := C ∪ C∘C until nothing changes; ≤ 64 rounds cover any path length).
// Before the closure, a cheap sufficient proof (prove_acyclic): pick a dim that
// every tensor of the component has and along which no read goes forward
// (consumer coordinate ≥ producer coordinate on every edge); on a point-level
// cycle the distances along it sum to zero, so every edge of the cycle has
// distance 0 there: drop the edges' positive-distance parts, split the rest into
// tensor-level components again and recurse.  When every component dissolves,
// there is no cycle; otherwise (or on a real cycle) the exact closure decides.
// For the first point on a cycle (first tensor in definition order, smallest
// point), a shortest cycle is found breadth-first and reported:
//   zero-distance dependence cycle: a[t] -> b[t] -> a[t]
// at the first tensor's equation, with a note at each read along the cycle.
// Points are written relative to the first one (`x[t] -> x[t+1] -> x[t]` is a
// "dependence cycle" whose distance is not zero but which is still a cycle);
// when only some points of the first tensor are on cycles, " (at t = 7)" names
// the first point.
// Requires: build_pdg, check_reads_defined (relations restricted to defined points).
#include <isl/ctx.h>
#include <isl/map.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/val.h>

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

#include "checks/checks.h"
#include "pdg/pdg_impl.h"

namespace trlc {

namespace {

struct Point {
    int node = -1;
    std::vector<int64_t> coords;
    bool operator==(const Point &o) const { return node == o.node && coords == o.coords; }
};

/* Tarjan's strongly connected components of the tensor graph, each sorted. */
std::vector<std::vector<int>> components(int n, const std::vector<std::vector<int>> &succ) {
    std::vector<int> index(n, -1), low(n, 0), stack;
    std::vector<bool> on(n, false);
    std::vector<std::vector<int>> out;
    int counter = 0;
    std::function<void(int)> visit = [&](int v) {
        index[v] = low[v] = counter++;
        stack.push_back(v);
        on[v] = true;
        for (int w : succ[v]) {
            if (index[w] < 0) {
                visit(w);
                low[v] = std::min(low[v], low[w]);
            } else if (on[w]) {
                low[v] = std::min(low[v], index[w]);
            }
        }
        if (low[v] == index[v]) {
            std::vector<int> comp;
            int w;
            do {
                w = stack.back();
                stack.pop_back();
                on[w] = false;
                comp.push_back(w);
            } while (w != v);
            std::sort(comp.begin(), comp.end());
            out.push_back(comp);
        }
    };
    for (int v = 0; v < n; ++v)
        if (index[v] < 0) visit(v);
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

bool exact_transitive_closure(const isl::union_map &r, isl::union_map *out) {
    isl_ctx *ctx = r.ctx().get();
    isl_ctx_set_max_operations(ctx, 20000000);
    isl_ctx_reset_operations(ctx);
    bool ok = true;
    try {
        isl::union_map c = r;
        for (int round = 0; round < 64; ++round) {
            isl::union_map next = c.unite(c.apply_range(c)).coalesce();
            if (next.is_subset(c)) break;
            c = next;
        }
        *out = c;
    } catch (const isl::exception &) {
        isl_ctx_reset_error(ctx);
        ok = false;
    }
    isl_ctx_set_max_operations(ctx, 0);
    return ok;
}

namespace {

class CycleChecker {
public:
    CycleChecker(const PdgImpl &g, Diagnostics &diag) : g_(g), diag_(diag) {
        for (size_t i = 0; i < g.nodes.size(); ++i) by_tuple_[g.nodes[i].tuple] = static_cast<int>(i);
    }

    void run() {
        int n = static_cast<int>(g_.nodes.size());
        std::vector<std::vector<int>> succ(n);
        std::vector<bool> self(n, false);
        for (const PdgEdge &e : g_.edges) {
            if (g_.nodes[e.consumer].kind != PdgNode::Tensor) continue;
            succ[e.consumer].push_back(e.producer);
            if (e.consumer == e.producer) self[e.consumer] = true;
        }
        for (const std::vector<int> &comp : components(n, succ))
            if (comp.size() > 1 || self[comp[0]]) check_component(comp);
    }

private:
    /* The access of "e" under the context, concrete, with canonical dim names
     * (the producer's own, unprimed) so that relations of one tensor unite. */
    isl::map concrete_access(const PdgEdge &e) const {
        const PdgNode &x = g_.nodes[e.producer];
        isl::map m = concrete(g_, e.access.intersect_range(x.domain));
        isl_map *raw = m.release();
        for (size_t k = 0; k < x.dim_names.size(); ++k)
            raw = isl_map_set_dim_name(raw, isl_dim_out, static_cast<unsigned>(k),
                                       x.dim_names[k].c_str());
        return isl::manage(raw);
    }

    isl::union_set point_set(const Point &p) const {
        const PdgNode &n = g_.nodes[p.node];
        isl_space *sp = isl_space_set_alloc(g_.isl.raw(), 0, static_cast<unsigned>(p.coords.size()));
        sp = isl_space_set_tuple_name(sp, isl_dim_set, n.tuple.c_str());
        for (size_t k = 0; k < n.dim_names.size(); ++k)
            sp = isl_space_set_dim_name(sp, isl_dim_set, static_cast<unsigned>(k),
                                        n.dim_names[k].c_str());
        isl_set *s = isl_set_universe(sp);
        for (size_t k = 0; k < p.coords.size(); ++k)
            s = isl_set_fix_val(s, isl_dim_set, static_cast<unsigned>(k),
                                isl_val_int_from_si(g_.isl.raw(), static_cast<long>(p.coords[k])));
        return isl::union_set(isl::manage(s));
    }

    /* The first point of "u": first node in definition order, smallest point. */
    bool first_point_of(const isl::union_set &u, Point *p) const {
        bool found = false;
        u.foreach_set([&](isl::set s) {
            if (s.is_empty()) return;
            const char *name = isl_set_get_tuple_name(s.get());
            auto it = by_tuple_.find(name ? name : "");
            if (it == by_tuple_.end()) return;
            if (found && it->second > p->node) return;
            Point q{it->second, first_point(s)};
            if (!found || q.node < p->node || q.coords < p->coords) *p = q;
            found = true;
        });
        return found;
    }

    /* Does "m" (consumer → producer) have a point where the consumer's "cpos"
     * coordinate is (lt) below / (eq) equal to the producer's "ppos"? */
    static isl::map order(const isl::map &m, unsigned cpos, unsigned ppos, bool lt) {
        isl_map *raw = m.copy();
        raw = lt ? isl_map_order_lt(raw, isl_dim_in, cpos, isl_dim_out, ppos)
                 : isl_map_equate(raw, isl_dim_in, cpos, isl_dim_out, ppos);
        return isl::manage(raw);
    }

    /* Sufficient test that the edges "es" (consumer, producer, concrete access)
     * form no point-level cycle; "used" are dims already fixed on this path. */
    bool prove_acyclic(const std::vector<std::tuple<int, int, isl::map>> &es,
                       std::vector<std::string> used, int depth) const {
        if (es.empty()) return true;
        if (depth > 16) return false;
        std::vector<int> nodes;
        for (const auto &e : es) {
            nodes.push_back(std::get<0>(e));
            nodes.push_back(std::get<1>(e));
        }
        std::sort(nodes.begin(), nodes.end());
        nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
        // Dims every tensor here has, in the first tensor's order.
        auto pos = [&](int node, const std::string &d) {
            const auto &names = g_.nodes[node].dim_names;
            auto it = std::find(names.begin(), names.end(), d);
            return it == names.end() ? -1 : static_cast<int>(it - names.begin());
        };
        for (const std::string &d : g_.nodes[nodes[0]].dim_names) {
            if (std::find(used.begin(), used.end(), d) != used.end()) continue;
            bool common = true;
            for (int n : nodes) common = common && pos(n, d) >= 0;
            if (!common) continue;
            bool forward = false;
            std::vector<std::tuple<int, int, isl::map>> zero;
            for (const auto &e : es) {
                unsigned cp = static_cast<unsigned>(pos(std::get<0>(e), d));
                unsigned pp = static_cast<unsigned>(pos(std::get<1>(e), d));
                if (!order(std::get<2>(e), cp, pp, true).is_empty()) {
                    forward = true;
                    break;
                }
                isl::map z = order(std::get<2>(e), cp, pp, false);
                if (!z.is_empty()) zero.push_back({std::get<0>(e), std::get<1>(e), z});
            }
            if (forward) continue;
            // The zero-distance edges' tensor-level components, each on its own.
            int n = static_cast<int>(g_.nodes.size());
            std::vector<std::vector<int>> succ(n);
            std::vector<bool> self(n, false);
            for (const auto &e : zero) {
                succ[std::get<0>(e)].push_back(std::get<1>(e));
                if (std::get<0>(e) == std::get<1>(e)) self[std::get<0>(e)] = true;
            }
            std::vector<std::string> used2 = used;
            used2.push_back(d);
            bool ok = true;
            for (const std::vector<int> &c : components(n, succ)) {
                if (!(c.size() > 1 || self[c[0]])) continue;
                std::vector<std::tuple<int, int, isl::map>> sub;
                for (const auto &e : zero)
                    if (std::binary_search(c.begin(), c.end(), std::get<0>(e)) &&
                        std::binary_search(c.begin(), c.end(), std::get<1>(e)))
                        sub.push_back(e);
                if (!prove_acyclic(sub, used2, depth + 1)) {
                    ok = false;
                    break;
                }
            }
            if (ok) return true;
        }
        return false;
    }

    void check_component(const std::vector<int> &comp) {
        {
            std::vector<std::tuple<int, int, isl::map>> es;
            for (const PdgEdge &e : g_.edges)
                if (std::binary_search(comp.begin(), comp.end(), e.consumer) &&
                    std::binary_search(comp.begin(), comp.end(), e.producer))
                    es.push_back({e.consumer, e.producer, concrete_access(e)});
            if (prove_acyclic(es, {}, 0)) return;
        }
        isl::union_map r = isl::union_map::empty(g_.isl.ctx());
        std::vector<std::pair<int, isl::map>> edges;  // edge index, concrete access
        for (size_t i = 0; i < g_.edges.size(); ++i) {
            const PdgEdge &e = g_.edges[i];
            if (!std::binary_search(comp.begin(), comp.end(), e.consumer) ||
                !std::binary_search(comp.begin(), comp.end(), e.producer))
                continue;
            isl::map m = concrete_access(e);
            edges.push_back({static_cast<int>(i), m});
            r = r.unite(isl::union_map(m));
        }
        isl_bool exact = isl_bool_false;
        isl::union_map closure =
            isl::manage(isl_union_map_transitive_closure(r.copy(), &exact));
        isl::union_set points = r.domain().unite(r.range());
        isl::union_map on_cycle = closure.intersect(points.identity());
        if (on_cycle.is_empty()) return;
        if (exact != isl_bool_true) {
            isl::union_map exact_c;
            if (!exact_transitive_closure(r, &exact_c)) {
                const PdgNode &first = g_.nodes[comp[0]];
                diag_.warning(first.loc, "could not prove that " + first.name +
                                             " has no dependence cycle (the analysis is too large)");
                return;
            }
            on_cycle = exact_c.intersect(points.identity());
            if (on_cycle.is_empty()) return;
        }
        Point start;
        if (!first_point_of(on_cycle.domain(), &start)) return;
        // Say where, unless every point of the first tensor is on a cycle.
        bool everywhere = false;
        const PdgNode &first = g_.nodes[start.node];
        on_cycle.domain().foreach_set([&](isl::set s) {
            const char *name = isl_set_get_tuple_name(s.get());
            if (name && first.tuple == name)
                everywhere = concrete(g_, first.domain).is_subset(s.coalesce());
        });
        report(start, r, edges, everywhere);
    }

    /* A shortest cycle from "start" back to itself, breadth first over R. */
    std::vector<Point> find_cycle(const Point &start, const isl::union_map &r) const {
        isl::union_set target = point_set(start);
        std::vector<isl::union_set> levels{target};
        for (int k = 1; k <= 4096; ++k) {
            isl::union_set next = levels.back().apply(r).coalesce();
            if (next.is_empty()) return {};
            levels.push_back(next);
            if (!target.is_subset(next)) continue;
            std::vector<Point> path{start};
            Point cur = start;
            for (int j = k - 1; j >= 1; --j) {
                isl::union_set pred = point_set(cur).apply(r.reverse()).intersect(levels[j]);
                Point p;
                if (!first_point_of(pred, &p)) return {};
                path.push_back(p);
                cur = p;
            }
            path.push_back(start);
            std::reverse(path.begin() + 1, path.end() - 1);
            return path;
        }
        return {};
    }

    std::string point_text(const Point &p, const Point &start, bool *zero) const {
        const PdgNode &n = g_.nodes[p.node];
        const PdgNode &s = g_.nodes[start.node];
        std::string out = n.name;
        if (n.dim_names.empty()) return out;
        out += "[";
        for (size_t k = 0; k < n.dim_names.size(); ++k) {
            out += k ? ", " : "";
            auto it = std::find(s.dim_names.begin(), s.dim_names.end(), n.dim_names[k]);
            if (it == s.dim_names.end()) {
                out += std::to_string(p.coords[k]);
                continue;
            }
            int64_t d = p.coords[k] - start.coords[it - s.dim_names.begin()];
            out += n.dim_names[k];
            if (d > 0) out += "+" + std::to_string(d);
            if (d < 0) out += std::to_string(d);
            if (d != 0) *zero = false;
        }
        return out + "]";
    }

    /* The first edge (in PDG order) that maps "a" to "b". */
    int edge_between(const Point &a, const Point &b,
                     const std::vector<std::pair<int, isl::map>> &edges) const {
        for (const auto &e : edges) {
            const PdgEdge &edge = g_.edges[e.first];
            if (edge.consumer != a.node || edge.producer != b.node) continue;
            isl::union_set img = point_set(a).apply(isl::union_map(e.second));
            if (point_set(b).is_subset(img)) return e.first;
        }
        return -1;
    }

    void report(const Point &start, const isl::union_map &r,
                const std::vector<std::pair<int, isl::map>> &edges, bool everywhere) {
        std::vector<Point> path = find_cycle(start, r);
        const PdgNode &first = g_.nodes[start.node];
        if (path.size() < 2) {
            diag_.error(first.loc, "dependence cycle through " + first.name +
                                       ": a point of " + first.name + " depends on itself");
            return;
        }
        bool zero = true;
        std::vector<std::string> texts;
        for (const Point &p : path) texts.push_back(point_text(p, start, &zero));
        std::string chain;
        for (size_t i = 0; i < texts.size(); ++i) chain += (i ? " -> " : "") + texts[i];
        std::vector<int> steps;
        for (size_t i = 0; i + 1 < path.size(); ++i)
            steps.push_back(edge_between(path[i], path[i + 1], edges));
        Loc at = first.loc;
        if (steps[0] >= 0) {
            const PdgEdge &e = g_.edges[steps[0]];
            at = g_.nodes[e.consumer].equations[e.equation].loc;
        }
        if (!everywhere && !first.dim_names.empty()) {
            chain += " (at ";
            if (first.dim_names.size() == 1) {
                chain += first.dim_names[0] + " = " + std::to_string(start.coords[0]);
            } else {
                std::string lhs, rhs;
                for (size_t k = 0; k < first.dim_names.size(); ++k) {
                    lhs += (k ? ", " : "") + first.dim_names[k];
                    rhs += (k ? ", " : "") + std::to_string(start.coords[k]);
                }
                chain += "(" + lhs + ") = (" + rhs + ")";
            }
            chain += ")";
        }
        diag_.error(at, std::string(zero ? "zero-distance dependence cycle: " : "dependence cycle: ") +
                            chain);
        for (size_t i = 0; i < steps.size(); ++i)
            if (steps[i] >= 0)
                diag_.note(g_.edges[steps[i]].loc, texts[i] + " reads " + texts[i + 1] + " here");
    }

    const PdgImpl &g_;
    Diagnostics &diag_;
    std::map<std::string, int> by_tuple_;
};

}  // namespace

void check_no_zero_cycle(const Pdg &pdg, Diagnostics &diag) {
    CycleChecker(pdg.impl(), diag).run();
}

}  // namespace trlc
