// plan_blas — the blas pass (codegen/kernel_plan.h): matrix products through BLAS.
//
// Matrix products through BLAS (dsl/README §7.7).  A matmul node of a tensor statement whose
// operands have static shapes A [M, K] or [K] and B [K, N], with K·N >= blas_min_kn, an f32 or
// f64 result, and a B that does not depend on the statement's batch coordinates (it reads no
// batch variable), is computed for all n batch points at once by one trl_gemm:
// [n·M, K] · [K, N] (obs[b] @ W over the batch b becomes one GEMM with M = batch).  The
// statement then runs as: per product, an operand kernel (each point writes its A rows to the
// workspace, point 0 writes B), the gemm call into the workspace, and last the statement's
// kernel, in which each product node reads its rows of the workspace (ExprEmitter::bind).
// Products are taken in post-order, so an operand may use an earlier product's result; the
// operand kernels compute the (pure) subexpressions they need, and a value one operand kernel
// computes that a later kernel of the statement needs is stored to the workspace and read there
// (a spill, plan_spills below).  Such statements are not fused.
// An operand needs no operand kernel when trl_gemm can read it where it is: a point read of the
// arena, the transpose of one (A only: trl_gemm_tn reads x [K, M] for xᵀ, a weight gradient
// xᵀ·dy), or the result of the statement's earlier product (its workspace rows).
// Only the order of the sums of each product changes (BLAS's blocking instead of k = 0, 1, …).
// Example: logits[b, i, t] = matmul(ob[b, i, t], W) + c over B = 16 batch points, ob f32[4] and
// W f32[4, 64] (K·N = 256 < 4096) stays a loop; with W f32[64, 64] (K·N = 4096) the statement's
// product is one trl_gemm [16, 64] x [64, 64].
#include <algorithm>
#include <functional>
#include <set>

#include "codegen/expr_emitter.h"
#include "codegen/kernel_plan.h"

namespace trlc {

namespace {

using namespace codegen;

class ProductPlanner {
public:
    ProductPlanner(const ir::Program &prog, const Schedule &sched, const MemPlan &plan, const CodegenOptions &opts,
                   KernelPlan *out)
        : prog_(prog), sched_(sched), plan_(plan), opts_(opts), blas_(out->blas),
          workspace_bytes_(out->workspace_bytes) {}

    void run() { plan_blas(); }

private:
    int64_t batch_count(const Statement &st, const std::vector<int> &dims) {
        int64_t n = 1;
        for (int p : st.batch_positions) n *= prog_.dims[dims[p]].bound;
        return n;
    }

    static bool index_uses(const ir::IndexExpr *e, const std::set<int> &vars) {
        if (!e) return false;
        if (e->kind == ir::IndexExpr::Aff) {
            for (size_t v = 0; v < e->aff.coef.size(); ++v)
                if (e->aff.coef[v] != 0 && vars.count(static_cast<int>(v))) return true;
            return false;
        }
        return index_uses(e->a.get(), vars) || index_uses(e->b.get(), vars);
    }
    static bool type_uses(const ir::Type &t, const std::set<int> &vars) {
        for (const auto &e : t.shape)
            if (index_uses(e.dynamic.get(), vars)) return true;
        for (const auto &e : t.elems)
            if (type_uses(e, vars)) return true;
        return false;
    }
    /** Whether the value of "n" may depend on the variables "vars" (coordinates, read indices,
     *  slice ends, dynamic extents anywhere below it). */
    static bool depends_on(const ir::Node &n, const std::set<int> &vars, std::set<const ir::Node *> &seen) {
        if (!seen.insert(&n).second) return false;
        if (n.kind == NodeKind::Coord && vars.count(n.var)) return true;
        if (type_uses(n.type, vars)) return true;
        for (const auto &ri : n.index)
            if (index_uses(ri.point.get(), vars) || index_uses(ri.lo.get(), vars) || index_uses(ri.hi.get(), vars))
                return true;
        for (const auto &si : n.sindex)
            if (index_uses(si.lo.get(), vars) || index_uses(si.hi.get(), vars)) return true;
        for (const auto &a : n.args)
            if (a && depends_on(*a, vars, seen)) return true;
        return false;
    }
    static bool static_type(const ir::Type &t, size_t rank) {
        if (t.is_tuple || t.shape.size() != rank) return false;
        for (const auto &e : t.shape)
            if (!e.is_static() || e.max_value <= 0) return false;
        return true;
    }

    /** Whether operand "op" of a product in "dt" is a point read (or a tuple part of one) whose
     *  bytes are the operand, row-major: trl_gemm can read it in place (BlasProduct). */
    bool read_in_place(const ir::Node &op, DType dt) const {
        std::string scratch;
        codegen::ExprEmitter probe(prog_, plan_, scratch, 0);
        const ir::Node *b = nullptr;
        const ir::Type *t = nullptr;
        int64_t off = 0;
        return probe.point_read_part(op, b, t, off) && !t->is_tuple && t->dtype == dt && off % leaf_size(dt) == 0;
    }

    /** Matmul nodes below "n" in post-order (operands first), each once. */
    static void matmuls(const ir::Node &n, std::set<const ir::Node *> &seen, std::vector<const ir::Node *> &out) {
        if (!seen.insert(&n).second) return;
        for (const auto &a : n.args)
            if (a) matmuls(*a, seen, out);
        if (n.kind == NodeKind::Builtin && n.builtin == BuiltinOp::MatMul && n.args.size() == 2) out.push_back(&n);
    }

    /** Choose the products of every tensor statement that go to trl_gemm; size the workspace. */
    void plan_blas() {
        if (!opts_.blas) return;
        for (size_t si = 0; si < sched_.statements.size(); ++si) {
            const Statement &st = sched_.statements[si];
            if (st.kind != Statement::Tensor || plan_.buffer_of(st.index) < 0) continue;
            const ir::Tensor &x = prog_.tensors.at(st.index);
            if (st.equation < 0 || st.equation >= static_cast<int>(x.equations.size())) continue;
            const ir::Equation &eq = x.equations[st.equation];
            std::set<int> batch_vars;
            for (int p : st.batch_positions)
                if (p < static_cast<int>(eq.pattern.size()) && eq.pattern[p].kind != ir::PatternItem::Constant)
                    batch_vars.insert(eq.pattern[p].var);
            BlasPlan bp;
            bp.points = batch_count(st, x.dims);
            std::set<const ir::Node *> seen;
            std::vector<const ir::Node *> found;
            matmuls(*eq.body, seen, found);
            int64_t bytes = 0;
            auto take = [&](int64_t b) {
                int64_t at = bytes;
                bytes += (b + 255) / 256 * 256;
                return at;
            };
            for (const ir::Node *mm : found) {
                const ir::Type &ta = mm->args[0]->type, &tb = mm->args[1]->type;
                DType dt = mm->type.dtype;
                if (mm->type.is_tuple || (dt != DType::F32 && dt != DType::F64)) continue;
                bool a1 = static_type(ta, 1), a2 = static_type(ta, 2);
                if (!(a1 || a2) || !static_type(tb, 2) || ta.dtype == DType::Key || tb.dtype == DType::Key) continue;
                if (!static_type(mm->type, a1 ? 1 : 2)) continue;
                BlasProduct p;
                p.node = mm;
                p.dt = dt;
                p.a_vector = a1;
                p.m = a1 ? 1 : ta.shape[0].max_value;
                p.k = ta.shape.back().max_value;
                p.n = tb.shape[1].max_value;
                if (tb.shape[0].max_value != p.k || p.k * p.n < opts_.blas_min_kn) continue;
                std::set<const ir::Node *> seen_b;
                if (bp.points > 1 && depends_on(*mm->args[1], batch_vars, seen_b)) continue;
                int64_t sz = leaf_size(dt);
                for (size_t j = 0; j < bp.products.size(); ++j) {  // an earlier product's result
                    if (bp.products[j].node == mm->args[0].get() && bp.products[j].dt == dt)
                        p.a_product = static_cast<int>(j);
                    if (bp.products[j].node == mm->args[1].get() && bp.products[j].dt == dt && bp.points == 1)
                        p.b_product = static_cast<int>(j);
                }
                p.a_in_place = p.a_product >= 0 || (bp.points == 1 && read_in_place(*mm->args[0], dt));
                if (!p.a_in_place && bp.points == 1 && a2) {  // xᵀ of x read in place: trl_gemm_tn
                    const ir::Node *x = codegen::ExprEmitter::transpose_2d_source(*mm->args[0]);
                    p.a_trans = x && static_type(x->type, 2) && read_in_place(*x, dt);
                    p.a_in_place = p.a_trans;
                }
                p.b_in_place = p.b_product >= 0 || read_in_place(*mm->args[1], dt);
                if (!p.a_in_place) p.a_off = take(bp.points * p.m * p.k * sz);
                if (!p.b_in_place) p.b_off = take(p.k * p.n * sz);
                p.c_off = take(bp.points * p.m * p.n * sz);
                bp.products.push_back(p);
            }
            if (bp.products.empty()) continue;
            plan_spills(bp, *eq.body, take);
            workspace_bytes_ = std::max(workspace_bytes_, bytes);
            blas_[static_cast<int>(si)] = bp;
        }
    }

    /** Whether a later kernel should read node "n" from the workspace rather than compute it
     *  again: a computed value (not a read, literal, coordinate, tuple or key, nor a view of a
     *  read) of a static shape and a storable dtype. */
    static bool spillable(const ir::Node &n) {
        const ir::Type &t = n.type;
        if (t.is_tuple ||
            !(t.dtype == DType::F32 || t.dtype == DType::F64 || t.dtype == DType::I32 || t.dtype == DType::Bool))
            return false;
        for (const auto &e : t.shape)
            if (!e.is_static() || e.max_value <= 0) return false;
        auto leaf = [](const ir::NodePtr &a) {
            return !a || a->kind == NodeKind::Read || a->kind == NodeKind::Const || a->kind == NodeKind::Coord;
        };
        switch (n.kind) {
        case NodeKind::Unary:
        case NodeKind::Binary:
        case NodeKind::Where: return true;
        case NodeKind::Cast:
        case NodeKind::Index: return !leaf(n.args.at(0));
        case NodeKind::Builtin:
            return !(n.builtin == BuiltinOp::Arange || n.builtin == BuiltinOp::Zeros || n.builtin == BuiltinOp::Ones ||
                     n.builtin == BuiltinOp::Full);
        default: return false;
        }
    }

    /** The spills of a statement with products "bp" and body "body" (kernel_plan.h BlasSpill).
     *  Its kernels run in order: the operand kernel of each product j (A rows per point, B at
     *  point 0), then the statement's kernel.  Kernel j reads products < j and their stored
     *  operands from the workspace; walking each later kernel's DAG from its roots, the first
     *  node on a path that an earlier operand kernel computes on its A side becomes a spill of
     *  that kernel (stored there, read here: the walk stops).  Example: PPO's backward computes
     *  the value head's dv in the operand kernel of dh2 = (dv·W3ᵀ) ⊙ (1 - h2²); the statement's
     *  kernel, which sums dv into db3 and multiplies h2ᵀ·dv into dW3, read dv instead of
     *  recomputing the value head's forward and the loss's adjoint. */
    void plan_spills(BlasPlan &bp, const ir::Node &body, const std::function<int64_t(int64_t)> &take) {
        std::set<const ir::Node *> bound;                  // read from the workspace by kernel j
        std::vector<std::set<const ir::Node *>> computed;  // A sides of the earlier operand kernels
        std::vector<int> producer;
        std::function<void(const ir::Node &, std::set<const ir::Node *> &)> frontier =
            [&](const ir::Node &n, std::set<const ir::Node *> &seen) {
                if (!seen.insert(&n).second || bound.count(&n)) return;
                if (spillable(n))
                    for (size_t q = 0; q < computed.size(); ++q) {
                        if (!computed[q].count(&n)) continue;
                        BlasSpill sp;
                        sp.node = &n;
                        sp.producer = producer[q];
                        for (const auto &e : n.type.shape) sp.numel *= e.max_value;
                        sp.off = take(bp.points * sp.numel * leaf_size(n.type.dtype));
                        bp.spills.push_back(sp);
                        bound.insert(&n);
                        return;
                    }
                for (const auto &a : n.args)
                    if (a) frontier(*a, seen);
                for (const auto &si : n.sindex)
                    if (si.value) frontier(*si.value, seen);
            };
        std::function<void(const ir::Node &, std::set<const ir::Node *> &)> reach =
            [&](const ir::Node &n, std::set<const ir::Node *> &out) {
                if (bound.count(&n) || !out.insert(&n).second) return;
                for (const auto &a : n.args)
                    if (a) reach(*a, out);
                for (const auto &si : n.sindex)
                    if (si.value) reach(*si.value, out);
            };
        for (size_t j = 0; j <= bp.products.size(); ++j) {
            if (j > 0) {
                const BlasProduct &q = bp.products[j - 1];
                bound.insert(q.node);
                if (!q.a_in_place && operand_read_back(*q.node->args[0], q.dt)) bound.insert(q.node->args[0].get());
                if (!q.b_in_place && operand_read_back(*q.node->args[1], q.dt)) bound.insert(q.node->args[1].get());
            }
            std::set<const ir::Node *> seen;
            if (j == bp.products.size()) {
                frontier(body, seen);
                break;
            }
            const BlasProduct &p = bp.products[j];
            if (p.a_in_place) continue;  // no operand kernel, or one that writes B only (point 0)
            frontier(*p.node->args[0], seen);
            std::set<const ir::Node *> mine;
            reach(*p.node->args[0], mine);
            computed.push_back(std::move(mine));
            producer.push_back(static_cast<int>(j));
        }
    }

    const ir::Program &prog_;
    const Schedule &sched_;
    const MemPlan &plan_;
    const CodegenOptions &opts_;
    std::map<int, BlasPlan> &blas_;
    int64_t &workspace_bytes_;
};

}  // namespace

const LoopNode *codegen_root(const Schedule &sched, const CodegenOptions &opts) {
    return opts.loop_nest ? opts.loop_nest.get() : sched.root.get();
}

void plan_blas(const ir::Program &prog, const Schedule &sched, const MemPlan &plan, const CodegenOptions &opts,
               KernelPlan *out) {
    ProductPlanner(prog, sched, plan, opts, out).run();
}

void print_blas(const Schedule &sched, const KernelPlan &k, std::ostream &out) {
    if (k.blas.empty()) out << "no products through trl_gemm\n";
    for (const auto &b : k.blas) {
        out << sched.statements.at(b.first).name << ":";
        for (size_t j = 0; j < b.second.products.size(); ++j) {
            const BlasProduct &p = b.second.products[j];
            out << (j ? ", [" : " [") << b.second.points * p.m << ", " << p.k << "] x [" << p.k << ", " << p.n << "]";
        }
        out << " by trl_gemm\n";
        for (const BlasSpill &sp : b.second.spills) {
            out << sched.statements.at(b.first).name << ": stores " << ir::type_to_string(sp.node->type)
                << " from the operand kernel of product " << sp.producer << " (line " << sp.node->loc.line << ":"
                << sp.node->loc.col << ")\n";
        }
    }
    if (k.workspace_bytes > 0) out << "workspace: " << k.workspace_bytes << " bytes\n";
}

}  // namespace trlc
