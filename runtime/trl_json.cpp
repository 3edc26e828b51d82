// trl_json — JSON text of scalars and arrays for emit records; see trl_json.h.
#include "trl_json.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace trl {

std::string json_scalar(NpyDType dt, double x) {
    switch (dt) {
    case NpyDType::Bool: return x != 0 ? "true" : "false";
    case NpyDType::I32: return std::to_string(static_cast<int64_t>(x));
    default: break;
    }
    if (std::isnan(x)) return "NaN";
    if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
    char buf[64];
    std::to_chars_result r = dt == NpyDType::F32 ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(x))
                                                 : std::to_chars(buf, buf + sizeof buf, x);
    std::string s(buf, r.ptr);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s;
}

void json_append_scalar(std::string &out, NpyDType dt, double x) { out += json_scalar(dt, x); }

namespace {

double element(NpyDType dt, const unsigned char *data, int64_t pos) {
    switch (dt) {
    case NpyDType::Bool: return data[pos] ? 1 : 0;
    case NpyDType::I32: {
        int32_t y;
        std::memcpy(&y, data + pos * 4, 4);
        return y;
    }
    case NpyDType::F32: {
        float y;
        std::memcpy(&y, data + pos * 4, 4);
        return y;
    }
    case NpyDType::F64: {
        double y;
        std::memcpy(&y, data + pos * 8, 8);
        return y;
    }
    }
    return 0;
}

void append_dim(std::string &out, NpyDType dt, int rank, const int64_t *shape, const unsigned char *data, int dim,
                int64_t &pos) {
    if (dim == rank) {
        json_append_scalar(out, dt, element(dt, data, pos++));
        return;
    }
    out += '[';
    for (int64_t i = 0; i < shape[dim]; ++i) {
        if (i) out += ',';
        append_dim(out, dt, rank, shape, data, dim + 1, pos);
    }
    out += ']';
}

}  // namespace

void json_append_array(std::string &out, NpyDType dt, int rank, const int64_t *shape, const void *data) {
    int64_t pos = 0;
    append_dim(out, dt, rank, shape, static_cast<const unsigned char *>(data), 0, pos);
}

}  // namespace trl
