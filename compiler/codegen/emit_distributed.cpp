// emit_distributed — what a --distributed program adds to run_program (passes/distribute.h,
// dsl/README.md §7.12): the mean over the ranks after each statement of an allreduce_mean tensor
// (trl_allreduce_mean, runtime/trl_rt.h: one message per point, its leaves as segments, one call
// per dtype), and stream keys that include the rank.  With --distributed=nccl the mean runs on
// the device (trl_dist_nccl's ncclAllReduce on the kernels' stream) and nothing waits for it.
//
//   k_allreduce_p(ctx, 1, 1, arena, s_allreduce_p, c0, c1);
//   {  // allreduce.(p, o): the mean over the ranks
//       const long long a0 = c0, a1 = c1;
//       char *dst = arena + 330240;
//       void *const seg32[] = {dst + 0};        // the 12 leaves of PPO's gradient, one run
//       const long long len32[] = {9160};
//       TRLG_SYNC() TRL_CHECK(trl_allreduce_mean(ctx, TRL_F32, 1, seg32, len32));
//   }
#include "codegen/program_emitter.h"

namespace trlc::codegen {

namespace {

/** The leaves of a value of type "t" in its slot: dtype, elements, byte offset (each leaf's
 *  bytes rounded up to 4, as ExprEmitter::store_value lays them out: value_bytes). */
void leaves(const ir::Type &t, int64_t &off, std::vector<std::tuple<DType, int64_t, int64_t>> &out) {
    if (t.is_tuple) {
        for (const ir::Type &e : t.elems) leaves(e, off, out);
        return;
    }
    out.emplace_back(t.dtype, static_numel(t), off);
    off += value_bytes(t);
}

}  // namespace

void ProgramEmitter::allreduce(const Statement &st, const LoopNode &n, const std::string &pad) {
    const ir::Tensor &x = prog_.tensors.at(st.index);
    std::string body;
    std::string ip = pad + "    ";
    body += pad + "{  // " + x.name + ": the mean over the ranks (trl_allreduce_mean)\n";
    for (size_t a = 0; a < n.args.size(); ++a)
        body += ip + "const long long a" + std::to_string(a) + " = " + ast_c(*n.args[a]) + ";\n";
    const int64_t points = batch_count(st, x.dims);
    int indent = static_cast<int>(pad.size() / 4) + 1;
    if (points > 1) {
        body += ip + "for (long long e = 0; e < " + lit_int(points) + "; ++e) {\n";
        ++indent;
        ip += "    ";
    }
    point_setup(st, x.dims, body, indent, "e");
    std::vector<std::string> p;
    for (size_t k = 0; k < x.dims.size(); ++k) p.push_back("p" + std::to_string(k));
    std::string scratch;
    ExprEmitter ee(prog_, plan_, scratch, indent);
    body += ip + "char *dst = " + ee.address(st.index, p) + ";\n";
    int64_t off = 0;
    std::vector<std::tuple<DType, int64_t, int64_t>> ls;
    leaves(x.type, off, ls);
    for (DType dt : {DType::F32, DType::F64}) {
        std::string seg, len;
        int count = 0;
        // Leaves of one dtype that follow each other without a gap are one segment (PPO's 12
        // f32 leaves: one), so that the runtime packs nothing.
        std::vector<std::pair<int64_t, int64_t>> runs;  // byte offset, elements
        const int64_t size = leaf_size(dt);
        for (const auto &l : ls) {
            if (std::get<0>(l) != dt || std::get<1>(l) == 0) continue;
            if (!runs.empty() && runs.back().first + runs.back().second * size == std::get<2>(l))
                runs.back().second += std::get<1>(l);
            else
                runs.emplace_back(std::get<2>(l), std::get<1>(l));
        }
        for (const auto &r : runs) {
            seg += std::string(count ? ", " : "") + "dst + " + lit_int(r.first);
            len += std::string(count ? ", " : "") + lit_int(r.second);
            ++count;
        }
        if (!count) continue;
        std::string sfx = dt == DType::F32 ? "32" : "64";
        body += ip + "void *const seg" + sfx + "[] = {" + seg + "};\n";
        body += ip + "const long long len" + sfx + "[] = {" + len + "};\n";
        // On the device: after the launches' error check (TRLG_SYNC, trl_gen.h), as a save's
        // copies; NCCL averages in device memory on the kernels' stream, without a wait.
        const bool nccl = opts_.dist_layer == "nccl";
        body += ip + (nccl ? "" : "TRLG_SYNC() ") + "TRL_CHECK(trl_allreduce_mean(ctx, " + dtype_macro(dt) + ", " +
                std::to_string(count) + ", seg" + sfx + ", len" + sfx + "));\n";
    }
    if (points > 1) body += pad + "    }\n";
    body += pad + "}\n";
    out_ += body;
}

std::string ProgramEmitter::stream_key(const Statement &st) const {
    bool ranked = prog_.distributed;
    std::string name;
    if (st.kind == Statement::Tensor) {
        const ir::Tensor &x = prog_.tensors.at(st.index);
        name = x.stream();
        ranked = x.rank_keyed;
    } else {
        name = st.kind == Statement::Emit ? prog_.emits.at(st.index).stream : prog_.saves.at(st.index).path;
    }
    return "    const trl::Philox2x32Key s_" + ident(st.name) + " = trl::stream_key(seed, trl::fnv1a32(" +
           c_string(name) + ", " + std::to_string(name.size()) + ")" + (ranked ? ", trl_rank(ctx)" : "") + ");\n";
}

}  // namespace trlc::codegen
