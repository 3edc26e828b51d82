// emit_program — the C++17/CUDA source of a scheduled program (see emit_program.h): the kernels
// (one per statement, or one per fused chain; the operand kernels of BLAS products; kernels
// split by rows over the host's threads, codegen/row_split.h) and emit_cuda.  The file header,
// run_program and main are emit_host.cpp's; the class is codegen/program_emitter.h.
// Expressions are written by codegen/expr_emitter.h.
//
// Which statements run through trl_gemm and which share a kernel is decided before, by the
// blas and fusion passes (codegen/kernel_plan.h, rules in plan_blas.cpp and
// plan_fusion.cpp); this file writes what they decided.
#include "codegen/emit_program.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "codegen/compile_parts.h"
#include "codegen/expr_emitter.h"
#include "codegen/horizontal_fusion.h"
#include "codegen/kernel_plan.h"
#include "codegen/program_emitter.h"
#include "codegen/prune_locals.h"
#include "codegen/work_estimate.h"
#include "passes/distribute.h"

namespace trlc {

namespace codegen {

void ProgramEmitter::point_setup(const Statement &st, const std::vector<int> &dims, std::string &body, int indent,
                                 const char *elem) {
    std::string pad(indent * 4, ' ');
    std::vector<bool> batch(dims.size(), false);
    for (int p : st.batch_positions) batch[p] = true;
    std::string rest = elem;
    for (size_t k = dims.size(); k-- > 0;) {
        if (!batch[k]) continue;
        int64_t bd = prog_.dims[dims[k]].bound;
        body += pad + "const long long p" + std::to_string(k) + " = " + rest + " % " + lit_int(bd) + ";\n";
        body += pad + "const long long r" + std::to_string(k) + " = " + rest + " / " + lit_int(bd) + ";\n";
        body += pad + "(void)r" + std::to_string(k) + ";\n";
        rest = "r" + std::to_string(k);
    }
    for (size_t k = 0, a = 0; k < dims.size(); ++k)
        if (!batch[k]) body += pad + "const long long p" + std::to_string(k) + " = a" + std::to_string(a++) + ";\n";
    for (size_t k = 0; k < dims.size(); ++k) body += pad + "(void)p" + std::to_string(k) + ";\n";
}

int64_t ProgramEmitter::batch_count(const Statement &st, const std::vector<int> &dims) {
    int64_t n = 1;
    for (int p : st.batch_positions) n *= prog_.dims[dims[p]].bound;
    return n;
}

std::string ProgramEmitter::params(const Statement &st) {
    std::string s;
    for (size_t a = 0; a < st.dims.size(); ++a) s += ", long long a" + std::to_string(a);
    return s;
}

bool ProgramEmitter::copies_onto_itself(const Statement &st) const {
    return trlc::copies_onto_itself(prog_, plan_, st);
}

std::string ProgramEmitter::tensor_point_body(const Statement &st, int indent, std::optional<RowSplit> *rows,
                                              std::set<int> *reads) {
    const ir::Tensor &x = prog_.tensors.at(st.index);
    const ir::Equation &eq = x.equations.at(st.equation);
    std::string body;
    point_vars(st, body, indent);
    ExprEmitter ee(prog_, plan_, body, indent);
    ee.bound_values = &bound_values_;
    frame_.reset();  // a kernel's statement, or one fused member's scope
    ee.frame = &frame_;
    auto bp = kp_.blas.find(statement_index(st));
    std::vector<std::string> p;
    for (size_t k = 0; k < x.dims.size(); ++k) p.push_back("p" + std::to_string(k));
    if (opts_.fuse && bp == kp_.blas.end() && x.type.is_tuple) {  // codegen/horizontal_fusion.h
        if (auto hp = plan_horizontal_fusion(prog_, plan_, eq.body, x.type)) {
            emit_horizontal(ee, plan_, *hp, plan_.buffer_of(st.index), ee.address(st.index, p), eq.loc, rows);
            if (reads) *reads = ee.reads;
            return body;
        }
    }
    if (bp != kp_.blas.end()) bind_products(ee, bp->second, bp->second.products.size());
    if (rows) {  // codegen/row_split.h
        *rows = plan_row_split({eq.body.get()}, {}, ee.memoized(), enable_publish(ee));
        if (!*rows) throw RowSplitUnsupported{"nothing to split"};
        ee.set_row_split(&**rows);
    }
    if (opts_.fuse) ee.count_uses(*eq.body);
    Val v = ee.emit_ew(*eq.body);
    if (!v.tuple && !x.type.is_tuple && v.dt != x.type.dtype) v = ee.emit_cast(v, x.type.dtype);
    // An elementwise root is computed as it is stored (the store loop reads its operands),
    // when its shape is static and the destination shares no bytes with what it reads.
    if (v.lazy) {
        bool clash = false, fixed = true;
        for (int t : ee.reads) clash = clash || ee.overlap(plan_.buffer_of(t), plan_.buffer_of(st.index));
        for (const auto &d : v.dims) fixed = fixed && ExprEmitter::static_dim(d);
        if (clash || !fixed || x.type.is_tuple) v = ee.materialize(v);
    }
    v = ee.unalias(v, plan_.buffer_of(st.index));  // a value read in place from bytes it overwrites
    ee.row_barrier_before_store(plan_.buffer_of(st.index));
    ee.line("char *dst = " + ee.address(st.index, p) + ";");
    ee.store_value(x.type, v, "dst", 0, eq.loc);
    if (reads) *reads = ee.reads;
    return body;
}

std::string ProgramEmitter::with_row_split(int64_t points, const std::string &kernel,
                                           const std::function<std::string(std::optional<RowSplit> *)> &emit) {
    if (opts_.row_split && points == 1) {
        std::optional<RowSplit> rows;
        try {
            kernel_publish_ = 0;
            std::string body = emit(&rows);
            row_split_[kernel] = *rows;
            publish_bytes_ = std::max(publish_bytes_, kernel_publish_);
            return body;
        } catch (const RowSplitUnsupported &) {  // emitted for one thread below
        }
    }
    return emit(nullptr);
}

std::string ProgramEmitter::row_params(const std::string &kernel) const {
    return row_split_.count(kernel) ? ", long long trl_r0, long long trl_r1" : "";
}

std::string ProgramEmitter::launch(const std::string &name, const std::string &npts, const std::string &work) const {
    auto r = row_split_.find(name);
    if (r == row_split_.end()) return "TRL_LAUNCH(" + name + ", " + npts + ", " + work;
    return "TRL_LAUNCH_ROWS(" + name + ", " + npts + ", " + lit_int(r->second.rows) + ", " + lit_int(r->second.work);
}

void ProgramEmitter::point_vars(const Statement &st, std::string &body, int indent) {
    const ir::Tensor &x = prog_.tensors.at(st.index);
    const ir::Equation &eq = x.equations.at(st.equation);
    std::string pad(indent * 4, ' ');
    point_setup(st, x.dims, body, indent, "e");
    for (size_t k = 0; k < eq.pattern.size(); ++k) {
        const ir::PatternItem &p = eq.pattern[k];
        if (p.kind == ir::PatternItem::Constant) continue;
        body += pad + "const long long v" + std::to_string(p.var) + " = p" + std::to_string(k) +
                (p.kind == ir::PatternItem::Shift ? " - " + lit_int(p.offset) : "") + ";\n";
    }
    for (size_t v = 0; v < eq.vars.size(); ++v) body += pad + "(void)v" + std::to_string(v) + ";\n";
}

int64_t ProgramEmitter::statement_work(const Statement &st, std::set<const ir::Node *> &seen) const {
    const ir::Tensor &x = prog_.tensors.at(st.index);
    const ir::Node &root = *x.equations.at(st.equation).body;
    return std::max(work_numel(root.type), work_estimate(root, seen));  // at least its store
}

int64_t ProgramEmitter::run_work(const Statement &st, int si) {
    const ir::Tensor &x = prog_.tensors.at(st.index);
    const ir::Node &root = *x.equations.at(st.equation).body;
    return std::max(work_numel(root.type), weighted_work(root)) * batch_count(st, x.dims) *
           statement_instances(sched_, si);
}

int64_t ProgramEmitter::operand_work(const BlasProduct &p, int64_t points) {
    std::set<const ir::Node *> seen;
    int64_t a = p.a_in_place ? 0 : work_estimate(*p.node->args.at(0), seen);
    int64_t b = p.b_in_place ? 0 : work_estimate(*p.node->args.at(1), seen);
    return points * a + b;
}

void ProgramEmitter::in_place_operands(const Statement &st, const BlasPlan &bp, const std::vector<std::string> &args,
                                       const std::string &pad, std::vector<std::string> &a_src,
                                       std::vector<std::string> &b_src) {
    a_src.assign(bp.products.size(), "");
    b_src.assign(bp.products.size(), "");
    bool any = false;
    for (const auto &p : bp.products) any = any || p.a_in_place || p.b_in_place;
    if (!any) return;
    const ir::Tensor &x = prog_.tensors.at(st.index);
    const ir::Equation &eq = x.equations.at(st.equation);
    std::string body;
    int indent = static_cast<int>(pad.size() / 4);
    std::string in(indent * 4, ' ');
    body += in + "const long long e = 0;  // the operands read in place (batch point 0)\n";
    for (size_t k = 0; k < args.size(); ++k)
        body += in + "const long long a" + std::to_string(k) + " = " + args[k] + ";\n";
    point_vars(st, body, indent);
    ExprEmitter ee(prog_, plan_, body, indent);
    ee.bound_values = &bound_values_;
    for (size_t j = 0; j < bp.products.size(); ++j) {
        const BlasProduct &p = bp.products[j];
        if (p.a_product >= 0)
            a_src[j] = "ws + " + lit_int(bp.products.at(p.a_product).c_off);
        else if (p.a_in_place)
            a_src[j] = ee.emit(p.a_trans ? *ExprEmitter::transpose_2d_source(*p.node->args[0]) : *p.node->args[0]).name;
        if (p.b_product >= 0)
            b_src[j] = "ws + " + lit_int(bp.products.at(p.b_product).c_off);
        else if (p.b_in_place)
            b_src[j] = ee.emit(*p.node->args[1]).name;
    }
    (void)eq;
    out_ += body;
}

void ProgramEmitter::bind_products(ExprEmitter &ee, const BlasPlan &bp, size_t count) {
    for (size_t j = 0; j < count && j < bp.products.size(); ++j) {
        const BlasProduct &p = bp.products[j];
        Val v;
        v.name = ee.fresh("gemm");
        v.dt = p.dt;
        v.maxs = p.a_vector ? std::vector<int64_t>{p.n} : std::vector<int64_t>{p.m, p.n};
        for (int64_t d : v.maxs) v.dims.push_back(lit_int(d));
        ee.line(std::string("const ") + ctype(p.dt) + " *" + v.name + " = (const " + ctype(p.dt) + " *)(ws + " +
                lit_int(p.c_off) + ") + e * " + lit_int(p.m * p.n) + ";  // product at " + short_where(p.node->loc));
        ee.bind(*p.node, v);
        // Its operands computed into the workspace by the operand kernel are read from
        // there too (dy of a backward layer feeds dy·Wᵀ and xᵀ·dy): not computed again.
        bind_operand(ee, *p.node->args[0], p, !p.a_in_place, p.a_off, "e * " + lit_int(p.m * p.k));
        bind_operand(ee, *p.node->args[1], p, !p.b_in_place, p.b_off, "");
    }
    // Values an earlier operand kernel stored for the later kernels (BlasSpill).
    for (const BlasSpill &sp : bp.spills)
        if (sp.producer < static_cast<int>(count))
            ee.bind(*sp.node, workspace_value(sp.node->type, sp.node->type.dtype, sp.off, "e * " + lit_int(sp.numel)));
}

void ProgramEmitter::store_spills(ExprEmitter &ee, const BlasPlan &bp, size_t j) {
    for (const BlasSpill &sp : bp.spills) {
        if (sp.producer != static_cast<int>(j)) continue;
        std::string ct = ctype(sp.node->type.dtype), name = ee.fresh("spill");
        ee.line(ct + " *" + name + " = (" + ct + " *)(ws + " + lit_int(sp.off) + ") + e * " + lit_int(sp.numel) +
                ";  // read by the later kernels (" + where(sp.node->loc) + ")");
        ee.store_node(*sp.node, name);
    }
}

void ProgramEmitter::bind_operand(ExprEmitter &ee, const ir::Node &op, const BlasProduct &p, bool stored, int64_t off,
                                  const std::string &at) {
    if (stored && operand_read_back(op, p.dt)) ee.bind(op, workspace_value(op.type, p.dt, off, at));
}

Val ProgramEmitter::workspace_value(const ir::Type &t, DType dt, int64_t off, const std::string &at) {
    Val v;
    v.dt = dt;
    for (const auto &e : t.shape) {
        v.maxs.push_back(e.max_value);
        v.dims.push_back(lit_int(e.max_value));
    }
    std::string ptr =
        "((const " + std::string(ctype(dt)) + " *)(ws + " + lit_int(off) + ")" + (at.empty() ? "" : " + " + at) + ")";
    v.name = v.dims.empty() ? ptr + "[0]" : ptr;
    return v;
}

void ProgramEmitter::operand_function(int si, size_t j) {
    const Statement &st = sched_.statements[si];
    const BlasPlan &bp = kp_.blas.at(si);
    const BlasProduct &p = bp.products[j];
    std::string body;
    out_ += "\n// " + st.name + ": operands of the product at " + where(p.node->loc) + " ([" +
            std::to_string(bp.points * p.m) + ", " + std::to_string(p.k) + "] x [" + std::to_string(p.k) + ", " +
            std::to_string(p.n) + "], trl_gemm)\n";
    const std::string kname = "k_" + ident(st.name) + "_operands" + std::to_string(j);
    publish_ok_ = true;  // an operand kernel takes the workspace
    body +=
        with_row_split(bp.points, kname, [&](std::optional<RowSplit> *rows) { return operand_body(st, bp, j, rows); });
    publish_ok_ = false;
    if (opts_.compile_parts) {
        const int64_t launches = statement_instances(sched_, si);
        kernel_work_[kname] = {operand_work(p, bp.points) * launches, launches, /*operands=*/true};
    }
    out_ += kernel_text(kname,
                        "TRL_KERNEL " + kname + "(TRL_KERNEL_RANGE" + row_params(kname) +
                            ", char *arena, char *ws, trl::Philox2x32Key stream" + params(st) + ") {\n",
                        body, bp.points);
}

std::string ProgramEmitter::kernel_text(const std::string &name, const std::string &header, const std::string &body,
                                        int64_t points) {
    std::string s = header + body;
    const std::string index = "    TRL_KERNEL_INDEX(";
    if (s.compare(header.size(), index.size(), index) != 0)
        throw CodegenError{Loc{}, "internal error: a kernel body does not start with TRL_KERNEL_INDEX"};
    // A row-split kernel: every thread of the device's block runs its point, on its rows.
    if (row_split_.count(name)) s.replace(header.size() + 4, index.size() - 4, "TRL_ROWS_INDEX(");
    if (frame_.max > 0) {  // `TRLG_FRAME(bytes) TRL_KERNEL_INDEX(e, n) {`: the frame, then the points
        s.insert(header.size() + 4, "TRLG_FRAME(" + std::to_string(frame_.max) + ") ");
        // a row-split kernel's one block has up to TRL_ROWS_MAX_BLOCK threads (trl_rows_block)
        const int64_t threads = row_split_.count(name) ? kDeviceRowsMaxBlock : device_grid_threads(points);
        frames_bytes_ = std::max(frames_bytes_, frame_.max * threads);
    }
    frame_ = KernelFrame{};
    if (opts_.compile_parts) return part_begin_marker(name) + s + "}\n" + part_end_marker(name);
    return s + "}\n";
}

std::string ProgramEmitter::operand_body(const Statement &st, const BlasPlan &bp, size_t j,
                                         std::optional<RowSplit> *rows) {
    const BlasProduct &p = bp.products[j];
    std::string body, ct = ctype(p.dt);
    body += "    TRL_KERNEL_INDEX(e, n) {\n";
    point_vars(st, body, 2);
    ExprEmitter ee(prog_, plan_, body, 2);
    ee.bound_values = &bound_values_;
    frame_.reset();
    ee.frame = &frame_;
    bind_products(ee, bp, j);
    if (opts_.fuse) ee.count_uses(*p.node);
    for (const BlasSpill &sp : bp.spills)
        if (sp.producer == static_cast<int>(j)) ee.keep_stored(*sp.node);
    if (rows) {
        // Both operands may be stored by rows: trl_gemm reads them after the launch.  Where A's
        // rows are C's (A·B), each thread then reads back the rows of C that trl_gemm's split
        // gave it; a Bᵀ-side operand ([K, N] with the rows as K) is read by every thread.
        std::vector<const ir::Node *> split_roots, whole_roots;
        if (!p.a_in_place) split_roots.push_back(p.node->args[0].get());
        if (!p.b_in_place) split_roots.push_back(p.node->args[1].get());
        for (const BlasSpill &sp : bp.spills)
            if (sp.producer == static_cast<int>(j)) whole_roots.push_back(sp.node);
        *rows = plan_row_split(split_roots, whole_roots, ee.memoized(), enable_publish(ee));
        if (!*rows) throw RowSplitUnsupported{"nothing to split"};
        ee.set_row_split(&**rows);
    }
    if (!p.a_in_place) {
        ee.line(ct + " *opa = (" + ct + " *)(ws + " + lit_int(p.a_off) + ") + e * " + lit_int(p.m * p.k) + ";");
        ee.store_operand(*p.node, 0, p.dt, "opa");
        store_spills(ee, bp, j);
    }
    if (!p.b_in_place) {
        ee.open("if (e == 0)");
        ee.line(ct + " *opb = (" + ct + " *)(ws + " + lit_int(p.b_off) + ");");
        ee.store_operand(*p.node, 1, p.dt, "opb");
        ee.close();
    }
    body += "    }\n";
    return body;
}

std::string ProgramEmitter::fused_name(int g) const {
    auto base = [&](int h) {
        const auto &m = kp_.groups.at(h);
        return "k_fused_" + ident(sched_.statements.at(m.front()).name) + "_x" + std::to_string(m.size());
    };
    const std::string name = base(g);
    int earlier = 0;
    for (int h = 0; h < g; ++h) earlier += base(h) == name ? 1 : 0;
    return earlier ? name + "_" + std::to_string(earlier + 1) : name;
}

void ProgramEmitter::fused_function(int g) {
    const auto &members = kp_.groups.at(g);
    std::string names, sig;
    for (size_t i = 0; i < members.size(); ++i) {
        const Statement &st = sched_.statements.at(members[i]);
        const ir::Tensor &x = prog_.tensors.at(st.index);
        names += "//   " + st.name + ": " + x.name + " at " + where(x.equations.at(st.equation).loc) + "\n";
        sig += ", trl::Philox2x32Key stream" + std::to_string(i);
        for (size_t a = 0; a < st.dims.size(); ++a)
            sig += ", long long m" + std::to_string(i) + "_a" + std::to_string(a);
    }
    out_ += "\n// fused: " + std::to_string(members.size()) +
            " statements, one launch; each batch point runs them in order:\n";
    out_ += names;
    std::vector<std::string> bodies = fused_row_split(g);
    const std::string name = fused_name(g);
    std::string body = "    TRL_KERNEL_INDEX(e, n) {\n";
    for (size_t i = 0; i < members.size(); ++i) {
        const Statement &st = sched_.statements.at(members[i]);
        const ir::Tensor &x = prog_.tensors.at(st.index);
        body += "        {  // " + st.name + ": " + x.name + " at " + where(x.equations.at(st.equation).loc) + "\n";
        body += "            const trl::Philox2x32Key stream = stream" + std::to_string(i) + ";\n";
        body += "            (void)stream;\n";
        for (size_t a = 0; a < st.dims.size(); ++a)
            body += "            const long long a" + std::to_string(a) + " = m" + std::to_string(i) + "_a" +
                    std::to_string(a) + ";\n";
        body += bodies[i].empty() ? tensor_point_body(st, 3) : bodies[i];
        body += "        }\n";
    }
    body += "    }\n";
    const Statement &first = sched_.statements.at(members.front());
    if (opts_.compile_parts) {
        int64_t work = 0;
        for (int m : members) work += run_work(sched_.statements.at(m), m);
        kernel_work_[name] = {work, statement_instances(sched_, members.front())};
    }
    out_ += kernel_text(name,
                        "TRL_KERNEL " + name + "(TRL_KERNEL_RANGE" + row_params(name) + ", char *arena" + sig + ") {\n",
                        body, batch_count(first, prog_.tensors.at(first.index).dims));
}

std::vector<std::string> ProgramEmitter::fused_row_split(int g) {
    const auto &members = kp_.groups.at(g);
    std::vector<std::string> bodies(members.size());
    const Statement &first = sched_.statements.at(members.front());
    if (!opts_.row_split || batch_count(first, prog_.tensors.at(first.index).dims) != 1) return bodies;
    RowSplit all;
    std::set<int> reads, writes;  // buffers of the members since the last barrier
    auto conflict = [&](const std::set<int> &r, int w) {
        for (int a : reads)
            if (plan_.overlap(a, w)) return true;
        for (int b : writes)
            if (plan_.overlap(b, w)) return true;
        for (int a : r)
            for (int b : writes)
                if (plan_.overlap(a, b)) return true;
        return false;
    };
    for (size_t i = 0; i < members.size(); ++i) {
        const Statement &st = sched_.statements.at(members[i]);
        std::optional<RowSplit> rows;
        std::set<int> r, rb;
        try {
            bodies[i] = tensor_point_body(st, 3, &rows, &r);
            if (all.rows && rows->rows != all.rows) throw RowSplitUnsupported{"another row count"};
            all.rows = rows->rows;
            all.work += rows->work;
        } catch (const RowSplitUnsupported &) {
            bodies[i] = "            if (trl_r0 == 0) {  // thread 0 alone: not split by rows\n" +
                        tensor_point_body(st, 4, nullptr, &r) + "            }\n";
        }
        for (int t : r) rb.insert(plan_.buffer_of(t));
        const int w = plan_.buffer_of(st.index);
        if (i > 0 && conflict(rb, w)) {
            bodies[i] =
                "            TRL_ROW_BARRIER();  // it reads or writes what an earlier member writes\n" + bodies[i];
            reads.clear(), writes.clear();
        }
        reads.insert(rb.begin(), rb.end());
        writes.insert(w);
    }
    if (all.rows == 0) return std::vector<std::string>(members.size());
    row_split_[fused_name(g)] = all;
    return bodies;
}

int64_t ProgramEmitter::staged_bytes(const std::string &key, const Val &v) {
    auto pad8 = [](int64_t n) { return (n + 7) / 8 * 8; };
    int64_t n = 16 + pad8(static_cast<int64_t>(key.size()) + 1);  // dtype, rank, key length, 0; the key
    if (v.tuple) {
        for (const auto &e : v.elems) n += staged_bytes("", e);
        return n;
    }
    return n + 8 * static_cast<int64_t>(v.maxs.size()) + pad8(v.max_numel() * leaf_size(v.dt));
}

void ProgramEmitter::statement_function(int si) {
    const Statement &st = sched_.statements[si];
    std::string fname = "k_" + ident(st.name);
    std::string body;
    if (st.kind == Statement::Tensor) {
        const ir::Tensor &x = prog_.tensors.at(st.index);
        const ir::Equation &eq = x.equations.at(st.equation);
        if (plan_.buffer_of(st.index) < 0) throw CodegenError{eq.loc, "code generation found no buffer for " + x.name};
        bool gemm = kp_.blas.count(si) > 0;
        if (gemm)
            for (size_t j = 0; j < kp_.blas.at(si).products.size(); ++j)
                if (!kp_.blas.at(si).products[j].a_in_place || !kp_.blas.at(si).products[j].b_in_place)
                    operand_function(si, j);
        out_ += "\n// " + st.name + ": " + x.name + " at " + where(eq.loc) +
                (gemm ? " (its products read from the workspace)" : "") + "\n";
        body += "    TRL_KERNEL_INDEX(e, n) {\n";
        publish_ok_ = gemm;  // the kernel takes the workspace
        body += with_row_split(batch_count(st, x.dims), fname,
                               [&](std::optional<RowSplit> *rows) { return tensor_point_body(st, 2, rows); });
        publish_ok_ = false;
        body += "    }\n";
        if (opts_.compile_parts) kernel_work_[fname] = {run_work(st, si), statement_instances(sched_, si)};
        out_ += kernel_text(fname,
                            "TRL_KERNEL " + fname + "(TRL_KERNEL_RANGE" + row_params(fname) + ", char *arena, " +
                                (gemm ? "char *ws, " : "") + "trl::Philox2x32Key stream" + params(st) + ") {\n",
                            body, batch_count(st, x.dims));
        return;
    }
    if (st.kind == Statement::Emit) {
        // One kernel text (runtime/trl_emit_stage.h): on the host a function writing each record
        // at once, on the device a kernel staging them, a slot per point.
        const ir::Emit &em = prog_.emits.at(st.index);
        out_ += "\n// " + st.name + ": emit \"" + em.stream + "\" at " + where(em.loc) + " (staged on the device)\n";
        std::string header = "TRL_KERNEL " + fname +
                             "(TRL_KERNEL_RANGE, TRLG_EMIT_PARAM, const char *arena, trl::Philox2x32Key stream" +
                             params(st) + ") {\n";
        const std::string slot_mark = "\x02slot\x02";
        body += "    TRL_KERNEL_INDEX(e, n) {\n        TRLG_EMIT_POINT(e, " + slot_mark + ")\n";
        point_setup(st, em.vars, body, 2, "e");
        std::string lin;
        for (size_t k = 0; k < em.vars.size(); ++k) {
            body += "        const long long v" + std::to_string(k) + " = p" + std::to_string(k) + ";\n";
            lin = lin.empty() ? "v" + std::to_string(k)
                              : "(" + lin + ") * " + lit_int(prog_.dims[em.vars[k]].bound) + " + v" + std::to_string(k);
        }
        ExprEmitter ee(prog_, plan_, body, 2);
        ee.bound_values = &bound_values_;
        frame_.reset();
        ee.frame = &frame_;
        ee.error_base = "trlg_earena";
        std::string index = lin.empty() ? "0" : lin, sid = std::to_string(st.index);
        if (em.guard) {
            // `when`: a false guard writes no record; the runtime is told the point is done.
            Val g = ee.emit(*em.guard);
            ee.open("if (!(" + g.name + "))");
            ee.line("TRLG_EMIT_SKIP(" + sid + ", " + index + ");");
            ee.line("continue;");
            ee.close();
        }
        std::vector<std::string> fields;
        int64_t slot = kStagedHeadBytes;
        for (const auto &f : em.fields) {
            Val v = ee.emit(*f.second);
            fields.push_back(ee.field_init(f.first, v, f.second->loc));  // tuples too (TRL_TUPLE)
            slot += staged_bytes(f.first, v);
        }
        ee.line("const trl_field fields[] = {" + join(fields) + "};");
        ee.line("TRLG_EMIT(" + sid + ", " + index + ", fields, " + std::to_string(fields.size()) + ");");
        body += "    }\n";
        body.replace(body.find(slot_mark), slot_mark.size(), std::to_string(slot));
        if (opts_.compile_parts) kernel_work_[fname] = {0, statement_instances(sched_, si)};
        out_ += kernel_text(fname, header, body, batch_count(st, em.vars));
        emit_slot_[si] = slot;
        return;
    }
    const ir::Save &sv = prog_.saves.at(st.index);
    out_ += "\n// " + st.name + ": " + sv.label() + " at " + where(sv.loc) + " (host)\n";
    out_ +=
        "static void " + fname + "(trl_ctx *ctx, const char *arena, trl::Philox2x32Key stream" + params(st) + ") {\n";
    ExprEmitter ee(prog_, plan_, body, 1);
    ee.bound_values = &bound_values_;
    Val v = ee.emit(*sv.value);
    if (!sv.output.empty()) {  // library mode: into the caller's buffer (emit_library.cpp)
        if (opts_.library.empty()) unsupported(sv.loc, "an output outside a library (--emit=library)");
        ee.line(output_store(ee, sv, v));
        ee.line("(void)ctx;");
        out_ += body + "}\n";
        emit_reads_[si] = ee.reads;
        return;
    }
    std::vector<std::string> arrays;
    if (v.tuple) {
        for (const auto &e : v.elems) arrays.push_back(field_of(ee, "", e, sv.loc));
    } else {
        arrays.push_back(field_of(ee, "", v, sv.loc));
    }
    ee.line("const trl_field arrays[] = {" + join(arrays) + "};");
    if (prog_.distributed && save_is_replicated(prog_, sv))  // the same bytes on every rank
        ee.line("TRL_CHECK(trl_digest(ctx, arrays, " + std::to_string(arrays.size()) + "));");
    ee.line("TRL_CHECK(trl_save(ctx, " + c_string(sv.path) + ", arrays, " + std::to_string(arrays.size()) + "));");
    out_ += body + "}\n";
    emit_reads_[si] = ee.reads;
}

}  // namespace codegen

using codegen::ProgramEmitter;

std::string emit_cuda(const ir::Program &prog, const Schedule &sched, const MemPlan &plan, const SourceManager *sm) {
    return ProgramEmitter(prog, sched, plan, sm).run();
}

std::string emit_cuda(const ir::Program &prog, const Pdg &pdg, const Schedule &sched, const MemPlan &plan,
                      const SourceManager *sm, const CodegenOptions &opts, const KernelPlan *kernels) {
    return ProgramEmitter(prog, sched, plan, sm, &pdg, opts, kernels).run();
}

std::string emit_cuda(const ir::Program &prog, const Schedule &sched, const MemPlan &plan) {
    return emit_cuda(prog, sched, plan, nullptr);
}

}  // namespace trlc
