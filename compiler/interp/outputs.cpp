// outputs — JSON text of values (emit; the scalar text is runtime/trl_json, shared with
// generated programs) and .npy conversion (save / load); see outputs.h.
#include "interp/outputs.h"

#include <cstring>

#include "trl_json.h"

namespace trlc::interp {

std::string format_scalar(ir::DType dt, double x) {
    switch (dt) {
    case ir::DType::Bool: return trl::json_scalar(trl::NpyDType::Bool, x);
    case ir::DType::I32: return trl::json_scalar(trl::NpyDType::I32, x);
    case ir::DType::F32: return trl::json_scalar(trl::NpyDType::F32, x);
    default: return trl::json_scalar(trl::NpyDType::F64, x);
    }
}

static void append_array(std::string &out, const Value &v, size_t dim, int64_t &pos) {
    if (dim == v.shape.size()) {
        out += format_scalar(v.dtype, v.data[pos++]);
        return;
    }
    out += '[';
    for (int64_t i = 0; i < v.shape[dim]; ++i) {
        if (i) out += ',';
        append_array(out, v, dim + 1, pos);
    }
    out += ']';
}

void append_json(std::string &out, const Value &v) {
    if (v.is_tuple) {
        out += '[';
        for (size_t i = 0; i < v.elems.size(); ++i) {
            if (i) out += ',';
            append_json(out, v.elems[i]);
        }
        out += ']';
        return;
    }
    if (v.dtype == ir::DType::Key) throw OpError{"a random key cannot be emitted (draw numbers from it)"};
    int64_t pos = 0;
    append_array(out, v, 0, pos);
}

trl::NpyArray to_npy(const Value &v) {
    if (v.is_tuple) throw OpError{"a tuple cannot be saved to an .npy file (save it to an .npz)"};
    trl::NpyArray a;
    a.shape = v.shape;
    switch (v.dtype) {
    case ir::DType::Bool: a.dtype = trl::NpyDType::Bool; break;
    case ir::DType::I32: a.dtype = trl::NpyDType::I32; break;
    case ir::DType::F32: a.dtype = trl::NpyDType::F32; break;
    case ir::DType::F64: a.dtype = trl::NpyDType::F64; break;
    case ir::DType::Key: throw OpError{"a random key cannot be saved"};
    }
    int sz = trl::npy_dtype_size(a.dtype);
    a.data.resize(v.data.size() * sz);
    for (size_t i = 0; i < v.data.size(); ++i) {
        uint8_t *p = a.data.data() + i * sz;
        double x = v.data[i];
        if (v.dtype == ir::DType::Bool) {
            *p = x != 0;
        } else if (v.dtype == ir::DType::I32) {
            int32_t y = static_cast<int32_t>(x);
            std::memcpy(p, &y, 4);
        } else if (v.dtype == ir::DType::F32) {
            float y = static_cast<float>(x);
            std::memcpy(p, &y, 4);
        } else {
            std::memcpy(p, &x, 8);
        }
    }
    return a;
}

Value from_npy(const trl::NpyArray &a) {
    Value v;
    v.shape = a.shape;
    int64_t n = a.numel();
    v.data.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
        const uint8_t *p = a.data.data() + i * trl::npy_dtype_size(a.dtype);
        switch (a.dtype) {
        case trl::NpyDType::Bool:
            v.dtype = ir::DType::Bool;
            v.data[i] = *p ? 1 : 0;
            break;
        case trl::NpyDType::I32: {
            int32_t y;
            std::memcpy(&y, p, 4);
            v.dtype = ir::DType::I32;
            v.data[i] = y;
            break;
        }
        case trl::NpyDType::F32: {
            float y;
            std::memcpy(&y, p, 4);
            v.dtype = ir::DType::F32;
            v.data[i] = y;
            break;
        }
        case trl::NpyDType::F64: {
            double y;
            std::memcpy(&y, p, 8);
            v.dtype = ir::DType::F64;
            v.data[i] = y;
            break;
        }
        }
    }
    switch (a.dtype) {  // also for empty arrays
    case trl::NpyDType::Bool: v.dtype = ir::DType::Bool; break;
    case trl::NpyDType::I32: v.dtype = ir::DType::I32; break;
    case trl::NpyDType::F32: v.dtype = ir::DType::F32; break;
    case trl::NpyDType::F64: v.dtype = ir::DType::F64; break;
    }
    return v;
}

}  // namespace trlc::interp
