// row_split — plan_row_split (codegen/row_split.h): the values of a one-point kernel that its
// threads compute by rows.
#include "codegen/row_split.h"

#include <algorithm>
#include <functional>
#include <map>

namespace trlc::codegen {

namespace {

using ir::NodeKind;

bool is_matmul(const ir::Node &n) {
    return n.kind == NodeKind::Builtin && n.builtin == ir::BuiltinOp::MatMul && n.args.size() == 2 && n.args[0] &&
           n.args[1];
}

bool static_shape(const ir::Type &t) {
    if (t.is_tuple) return false;
    for (const auto &e : t.shape)
        if (!e.is_static()) return false;
    return true;
}

int64_t numel(const ir::Type &t) {
    int64_t n = 1;
    for (const auto &e : t.shape) n *= std::max<int64_t>(1, e.max_value);
    return n;
}

/** Element operations of node "n" alone (work_estimate's units: a product m·n·k, a read or a
 *  tuple nothing, else the larger of its elements and its operands'). */
int64_t own_work(const ir::Node &n) {
    if (n.kind == NodeKind::Read || n.kind == NodeKind::TupleGet || n.kind == NodeKind::Tuple || n.type.is_tuple)
        return 0;
    int64_t w = numel(n.type);
    if (is_matmul(n) && !n.args[0]->type.shape.empty())
        return w * std::max<int64_t>(1, n.args[0]->type.shape.back().max_value);
    for (const auto &a : n.args)  // a reduction reads all of its operand
        if (a && !a->type.is_tuple) w = std::max(w, numel(a->type));
    return w;
}

/** Whether "n" may be split by rows at row count "rows", its operands aside. */
bool candidate(const ir::Node &n, int64_t rows) {
    const ir::Type &t = n.type;
    if (!static_shape(t) || t.shape.empty() || t.shape[0].max_value != rows) return false;
    if (t.dtype == ir::DType::Key) return false;
    switch (n.kind) {
    case NodeKind::Unary: return n.uop != ir::UnaryOp::StopGrad;  // stop_grad(x) is x's own value
    case NodeKind::Binary:
    case NodeKind::Where:
    case NodeKind::Cast: return true;
    case NodeKind::Builtin:
        if ((n.builtin == ir::BuiltinOp::Sum || n.builtin == ir::BuiltinOp::Mean) && n.has_axes && !n.axes.empty())
            return (t.dtype == ir::DType::F32 || t.dtype == ir::DType::F64) && n.args.size() == 1 && n.args[0] &&
                   n.args[0]->type.dtype == t.dtype && !n.args[0]->type.is_tuple;  // its rows, operand whole
        return is_matmul(n) && t.shape.size() == 2 && n.args[0]->type.shape.size() == 2 &&
               n.args[1]->type.shape.size() == 2 && !n.args[0]->type.is_tuple && !n.args[1]->type.is_tuple;
    default: return false;
    }
}

/** Whether operand "k" of split node "n" may itself be split (see row_split.h). */
bool operand_may_split(const ir::Node &n, size_t k) {
    if (is_matmul(n)) return k == 0;
    if (n.kind == NodeKind::Builtin) return false;  // a reduction reads its operand whole
    return n.args[k] && n.args[k]->type.shape.size() == n.type.shape.size();
}

}  // namespace

std::optional<RowSplit> plan_row_split(const std::vector<const ir::Node *> &split_roots,
                                       const std::vector<const ir::Node *> &uniform_roots,
                                       const std::set<const ir::Node *> &leaves, bool publish) {
    // Every node the kernel computes (not below a leaf), in post order.
    std::vector<const ir::Node *> order;
    std::set<const ir::Node *> seen;
    std::function<void(const ir::Node &)> walk = [&](const ir::Node &n) {
        if (!seen.insert(&n).second) return;
        if (!leaves.count(&n)) {
            for (const auto &a : n.args)
                if (a) walk(*a);
            for (const auto &si : n.sindex)
                if (si.value) walk(*si.value);
        }
        order.push_back(&n);
    };
    for (const ir::Node *r : split_roots) walk(*r);
    for (const ir::Node *r : uniform_roots) walk(*r);

    // R: the leading extent holding the most work among the candidates of each extent.
    std::map<int64_t, int64_t> by_rows;
    int64_t total = 0;
    for (const ir::Node *n : order) {
        if (leaves.count(n)) continue;
        total += own_work(*n);
        if (static_shape(n->type) && !n->type.shape.empty() && n->type.shape[0].max_value >= 16 &&
            candidate(*n, n->type.shape[0].max_value))
            by_rows[n->type.shape[0].max_value] += own_work(*n);
    }
    if (by_rows.empty()) return std::nullopt;
    RowSplit rs;
    rs.rows = std::max_element(by_rows.begin(), by_rows.end(), [](const auto &a, const auto &b) {
                  return a.second < b.second || (a.second == b.second && a.first < b.first);  // ties: more rows
              })->first;

    // Candidates, then drop every one a non-split consumer reads (or publish it), to a fixed
    // point.  An index value (sindex) is always uniform.  An elementwise value read once is
    // not published but made whole: the emitter would fuse it into its reader, and publishing
    // it would store it first (its operands are published instead, where split).
    std::map<const ir::Node *, int> uses;
    for (const ir::Node *n : order)
        if (!leaves.count(n))
            for (const auto &a : n->args)
                if (a) ++uses[a.get()];
    auto publishable = [&](const ir::Node &a) {
        const bool elementwise = a.kind == NodeKind::Unary || a.kind == NodeKind::Binary || a.kind == NodeKind::Where ||
                                 a.kind == NodeKind::Cast;
        return !a.type.is_tuple && !(elementwise && uses[&a] <= 1);
    };
    std::set<const ir::Node *> split, transparent, published;
    for (const ir::Node *n : order)
        if (!leaves.count(n) && candidate(*n, rs.rows)) split.insert(n);
    for (const ir::Node *r : split_roots)
        if (r->kind == NodeKind::Tuple && !leaves.count(r)) transparent.insert(r);  // stored element by element
    for (const ir::Node *r : uniform_roots) split.erase(r);
    for (bool changed = true; changed;) {
        changed = false;
        for (const ir::Node *n : order) {
            if (leaves.count(n)) continue;
            const bool in = split.count(n) > 0;
            for (size_t k = 0; k < n->args.size(); ++k) {
                const ir::Node *a = n->args[k].get();
                if (!a || !split.count(a)) continue;
                bool keep = transparent.count(n) || (in && operand_may_split(*n, k));
                if (keep) continue;
                if (publish && publishable(*a))
                    published.insert(a);
                else
                    split.erase(a), changed = true;
            }
            for (const auto &si : n->sindex)
                if (si.value && split.erase(si.value.get())) changed = true;
        }
    }
    for (const ir::Node *n : split) rs.work += own_work(*n);
    for (const ir::Node *n : published)
        if (split.count(n)) rs.published.insert(n);
    if (rs.work < (1LL << 14) || 5 * rs.work < 2 * total) return std::nullopt;
    rs.nodes = split;
    rs.nodes.insert(transparent.begin(), transparent.end());
    return rs;
}

}  // namespace trlc::codegen
