// prelude — what every generated file defines after its includes and kArenaBytes (declared in
// codegen/expr_emitter.h): kTrlFiles, the include of runtime/trl_gen.h, and trlg_start, which
// reads the loaded tensors into the region after the arena tail.
#include "codegen/expr_emitter.h"

namespace trlc::codegen {

std::string prelude(const ir::Program &prog, const SourceManager *sm) {
    std::string s = "// ---- the source files that run-time errors name; the helpers and checks of generated\n"
                    "// code (runtime/trl_gen.h) read kArenaBytes and kTrlFiles\n";
    s += "static const char *const kTrlFiles[] = {";
    if (!sm || sm->size() == 0) s += "\"<input>\"";
    for (int f = 0; sm && f < static_cast<int>(sm->size()); ++f)
        s += std::string(f ? ", " : "") + c_string(sm->file(f).path);
    s += "};\n#include \"trl_gen.h\"\n";
    // Loaded tensors.
    int64_t total = 0;
    auto offs = load_offsets(prog, &total);
    s += "\n// ---- loaded tensors: read at start into the region after the arena tail\n";
    s += "static const size_t kLoadBase = kArenaBytes + TRL_ARENA_TAIL;\n";
    s += "static const size_t kLoadBytes = " + std::to_string(total) + ";\n";
    s += "static const size_t kHostBytes = kLoadBase + kLoadBytes;  // the host mirror\n";
    s += "static void trlg_start(trl_ctx *ctx, char *arena, char *host) {\n";
    for (const auto &[t, off] : offs) {
        const ir::Tensor &x = prog.tensors[t];
        if (x.is_input) continue;  // the caller's, copied in by each library call
        std::vector<const ir::Type *> leaves;
        type_leaves(x.type, leaves);
        std::string fields;
        int64_t at = off;
        s += "    {  // " + x.name + "\n";
        for (size_t k = 0; k < leaves.size(); ++k) {
            const ir::Type &lt = *leaves[k];
            std::string shape = "nullptr";
            if (!lt.shape.empty()) {
                shape = "shape" + std::to_string(k);
                std::string d;
                for (const auto &e : lt.shape) d += (d.empty() ? "" : ", ") + std::to_string(e.max_value) + "LL";
                s += "        static const long long " + shape + "[] = {" + d + "};\n";
            }
            int code = dtype_code(lt.dtype);
            fields += std::string(fields.empty() ? "" : ", ") + "{\"\", " + (code < 0 ? "-1" : dtype_macro(lt.dtype)) +
                      ", " + std::to_string(lt.shape.size()) + ", " + shape + ", host + kLoadBase + " +
                      std::to_string(at) + "}";
            at += value_bytes(lt);
        }
        s += "        const trl_field arrays[] = {" + fields + "};\n";
        s += "        TRL_CHECK(trl_load_arrays(ctx, " + c_string(x.load_path) + ", " + c_string(x.name) + ", " +
             (x.type.is_tuple ? "1" : "0") + ", arrays, " + std::to_string(leaves.size()) + "));\n";
        s += "    }\n";
    }
    s += "    if (kLoadBytes > 0) TRL_CHECK(trl_to_device(ctx, arena + kLoadBase, host + kLoadBase, kLoadBytes));\n";
    s += "    (void)ctx;\n    (void)arena;\n    (void)host;\n}\n";
    return s;
}

}  // namespace trlc::codegen
