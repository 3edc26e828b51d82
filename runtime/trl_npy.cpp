// trl_npy — .npy / .npz writing and validated reading (see trl_npy.h for the formats).
#include "trl_npy.h"

#include <cstring>
#include <fstream>
#include <sstream>

namespace trl {

static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE single and double expected");

const char *npy_dtype_name(NpyDType d) {
    switch (d) {
    case NpyDType::Bool: return "bool";
    case NpyDType::I32: return "i32";
    case NpyDType::F32: return "f32";
    case NpyDType::F64: return "f64";
    }
    return "?";
}

int npy_dtype_size(NpyDType d) {
    switch (d) {
    case NpyDType::Bool: return 1;
    case NpyDType::I32: return 4;
    case NpyDType::F32: return 4;
    case NpyDType::F64: return 8;
    }
    return 1;
}

static const char *descr_of(NpyDType d) {
    switch (d) {
    case NpyDType::Bool: return "|b1";
    case NpyDType::I32: return "<i4";
    case NpyDType::F32: return "<f4";
    case NpyDType::F64: return "<f8";
    }
    return "?";
}

int64_t NpyArray::numel() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
}

// ---- .npy ----------------------------------------------------------------------------------

std::string npy_encode(const NpyArray &a) {
    std::string dict = "{'descr': '";
    dict += descr_of(a.dtype);
    dict += "', 'fortran_order': False, 'shape': (";
    for (size_t i = 0; i < a.shape.size(); ++i) {
        if (i) dict += ", ";
        dict += std::to_string(a.shape[i]);
    }
    if (a.shape.size() == 1) dict += ",";
    dict += "), }";
    size_t total = 10 + dict.size() + 1;  // magic(6) + version(2) + len(2) + dict + '\n'
    size_t pad = (64 - total % 64) % 64;
    dict.append(pad, ' ');
    dict += '\n';
    std::string out = "\x93NUMPY";
    out += '\x01';
    out += '\x00';
    uint16_t hl = static_cast<uint16_t>(dict.size());
    out += static_cast<char>(hl & 0xFF);
    out += static_cast<char>(hl >> 8);
    out += dict;
    out.append(reinterpret_cast<const char *>(a.data.data()), a.data.size());
    return out;
}

namespace {

/** A tiny parser for the header dict: {'key': value, ...} with string, bool and tuple values. */
struct DictParser {
    const std::string &s;
    size_t p = 0;
    std::string err;

    void ws() {
        while (p < s.size() && (s[p] == ' ' || s[p] == '\t' || s[p] == '\n' || s[p] == '\r')) ++p;
    }
    bool eat(char c) {
        ws();
        if (p < s.size() && s[p] == c) {
            ++p;
            return true;
        }
        return false;
    }
    bool string(std::string *out) {
        ws();
        if (p >= s.size() || (s[p] != '\'' && s[p] != '"')) return false;
        char q = s[p++];
        size_t start = p;
        while (p < s.size() && s[p] != q) ++p;
        if (p >= s.size()) return false;
        *out = s.substr(start, p - start);
        ++p;
        return true;
    }
    bool word(const char *w) {
        ws();
        size_t n = std::strlen(w);
        if (s.compare(p, n, w) == 0) {
            p += n;
            return true;
        }
        return false;
    }
    bool integer(int64_t *out) {
        ws();
        size_t start = p;
        while (p < s.size() && s[p] >= '0' && s[p] <= '9') ++p;
        if (p == start || p - start > 15) return false;
        *out = std::stoll(s.substr(start, p - start));
        if (p < s.size() && s[p] == 'L') ++p;  // Python 2 longs
        return true;
    }
};

}  // namespace

bool npy_decode(const std::string &bytes, const std::string &what, NpyArray *out, std::string *err) {
    auto fail = [&](const std::string &m) {
        *err = what + ": " + m;
        return false;
    };
    if (bytes.size() < 10)
        return fail("truncated .npy file (" + std::to_string(bytes.size()) +
                    " bytes, shorter than the 10-byte preamble)");
    if (bytes.compare(0, 6, "\x93NUMPY") != 0) return fail("not a .npy file (bad magic string)");
    int major = static_cast<uint8_t>(bytes[6]), minor = static_cast<uint8_t>(bytes[7]);
    size_t hlen, hstart;
    if (major == 1 && minor == 0) {
        hlen = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
        hstart = 10;
    } else if ((major == 2 || major == 3) && minor == 0) {
        if (bytes.size() < 12) return fail("truncated .npy file (incomplete header length)");
        hlen = 0;
        for (int i = 0; i < 4; ++i) hlen |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
        hstart = 12;
    } else {
        return fail("unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor));
    }
    if (bytes.size() < hstart + hlen)
        return fail("truncated .npy file (header of " + std::to_string(hlen) + " bytes does not fit in the file)");
    std::string header = bytes.substr(hstart, hlen);
    DictParser d{header, 0, ""};
    std::string descr;
    bool have_descr = false, have_fortran = false, have_shape = false, fortran = false;
    std::vector<int64_t> shape;
    if (!d.eat('{')) return fail("malformed .npy header (expected a '{' dict): " + header);
    while (!d.eat('}')) {
        std::string key;
        if (!d.string(&key) || !d.eat(':')) return fail("malformed .npy header: " + header);
        if (key == "descr") {
            if (!d.string(&descr)) return fail("malformed .npy header ('descr' is not a string)");
            have_descr = true;
        } else if (key == "fortran_order") {
            if (d.word("True"))
                fortran = true;
            else if (d.word("False"))
                fortran = false;
            else
                return fail("malformed .npy header ('fortran_order' is not True or False)");
            have_fortran = true;
        } else if (key == "shape") {
            if (!d.eat('(')) return fail("malformed .npy header ('shape' is not a tuple)");
            while (!d.eat(')')) {
                int64_t v;
                if (!d.integer(&v)) return fail("malformed .npy header (bad 'shape' entry)");
                shape.push_back(v);
                if (!d.eat(',')) {
                    if (!d.eat(')')) return fail("malformed .npy header (bad 'shape' tuple)");
                    break;
                }
            }
            have_shape = true;
        } else {
            return fail("malformed .npy header (unknown key '" + key + "')");
        }
        if (!d.eat(',')) {
            if (!d.eat('}')) return fail("malformed .npy header: " + header);
            break;
        }
    }
    if (!have_descr || !have_fortran || !have_shape)
        return fail("malformed .npy header (needs 'descr', 'fortran_order' and 'shape')");
    if (fortran)
        return fail("fortran_order is True; trlc reads C-order arrays only "
                    "(save with numpy.ascontiguousarray)");
    NpyDType dt;
    if (descr == "|b1" || descr == "b1" || descr == "?" || descr == "|?")
        dt = NpyDType::Bool;
    else if (descr == "<i4" || descr == "i4")
        dt = NpyDType::I32;
    else if (descr == "<f4" || descr == "f4")
        dt = NpyDType::F32;
    else if (descr == "<f8" || descr == "f8")
        dt = NpyDType::F64;
    else
        return fail("unsupported dtype '" + descr + "' (trlc reads '<f4', '<f8', '<i4' and '|b1')");
    int64_t n = 1;
    for (int64_t s : shape) {
        if (s > 0 && n > (int64_t(1) << 40) / s) return fail("shape too large");
        n *= s;
    }
    size_t need = static_cast<size_t>(n) * npy_dtype_size(dt);
    size_t have = bytes.size() - hstart - hlen;
    if (have != need)
        return fail("data size mismatch: shape and dtype need " + std::to_string(need) + " bytes, the file holds " +
                    std::to_string(have));
    out->dtype = dt;
    out->shape = shape;
    out->data.assign(bytes.begin() + hstart + hlen, bytes.end());
    if (dt == NpyDType::Bool) {
        for (uint8_t &b : out->data)
            if (b > 1) return fail("bool data holds a byte other than 0 or 1");
    }
    return true;
}

static bool read_file(const std::string &path, std::string *bytes, std::string *err) {
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        *err = path + ": cannot open file";
        return false;
    }
    std::ostringstream ss;
    ss << f.rdbuf();
    *bytes = ss.str();
    return true;
}

static bool write_file(const std::string &path, const std::string &bytes, std::string *err) {
    std::ofstream f(path, std::ios::binary);
    if (!f) {
        *err = path + ": cannot open file for writing";
        return false;
    }
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f) {
        *err = path + ": write failed";
        return false;
    }
    return true;
}

bool npy_save(const std::string &path, const NpyArray &a, std::string *err) {
    return write_file(path, npy_encode(a), err);
}

bool npy_load(const std::string &path, NpyArray *out, std::string *err) {
    std::string bytes;
    return read_file(path, &bytes, err) && npy_decode(bytes, path, out, err);
}

// ---- .npz ----------------------------------------------------------------------------------

uint32_t crc32(const void *data, size_t n) {
    static uint32_t table[256];
    static bool init = false;
    if (!init) {
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        init = true;
    }
    uint32_t c = 0xFFFFFFFFu;
    const uint8_t *p = static_cast<const uint8_t *>(data);
    for (size_t i = 0; i < n; ++i) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

namespace {
void put16(std::string &s, uint32_t v) {
    s += static_cast<char>(v & 0xFF);
    s += static_cast<char>((v >> 8) & 0xFF);
}
void put32(std::string &s, uint32_t v) {
    put16(s, v & 0xFFFF);
    put16(s, v >> 16);
}
uint32_t get16(const std::string &s, size_t p) {
    return static_cast<uint8_t>(s[p]) | (static_cast<uint32_t>(static_cast<uint8_t>(s[p + 1])) << 8);
}
uint32_t get32(const std::string &s, size_t p) { return get16(s, p) | (get16(s, p + 2) << 16); }
uint64_t get64(const std::string &s, size_t p) { return get32(s, p) | (static_cast<uint64_t>(get32(s, p + 4)) << 32); }
}  // namespace

std::string npz_encode(const std::vector<NpzMember> &members) {
    std::string out, central;
    for (const auto &m : members) {
        std::string name = m.first + ".npy";
        std::string body = npy_encode(m.second);
        uint32_t crc = crc32(body.data(), body.size());
        uint32_t offset = static_cast<uint32_t>(out.size());
        put32(out, 0x04034b50);  // local file header
        put16(out, 20);          // version needed
        put16(out, 0);           // flags
        put16(out, 0);           // stored
        put16(out, 0);           // time
        put16(out, 0x21);        // date 1980-01-01
        put32(out, crc);
        put32(out, static_cast<uint32_t>(body.size()));
        put32(out, static_cast<uint32_t>(body.size()));
        put16(out, static_cast<uint32_t>(name.size()));
        put16(out, 0);
        out += name;
        out += body;
        put32(central, 0x02014b50);  // central directory entry
        put16(central, 20);          // made by
        put16(central, 20);          // needed
        put16(central, 0);
        put16(central, 0);
        put16(central, 0);
        put16(central, 0x21);
        put32(central, crc);
        put32(central, static_cast<uint32_t>(body.size()));
        put32(central, static_cast<uint32_t>(body.size()));
        put16(central, static_cast<uint32_t>(name.size()));
        put16(central, 0);  // extra
        put16(central, 0);  // comment
        put16(central, 0);  // disk
        put16(central, 0);  // internal attributes
        put32(central, 0);  // external attributes
        put32(central, offset);
        central += name;
    }
    uint32_t cd_offset = static_cast<uint32_t>(out.size());
    out += central;
    put32(out, 0x06054b50);  // end of central directory
    put16(out, 0);
    put16(out, 0);
    put16(out, static_cast<uint32_t>(members.size()));
    put16(out, static_cast<uint32_t>(members.size()));
    put32(out, static_cast<uint32_t>(central.size()));
    put32(out, cd_offset);
    put16(out, 0);
    return out;
}

bool npz_decode(const std::string &bytes, const std::string &what, std::vector<NpzMember> *out, std::string *err) {
    auto fail = [&](const std::string &m) {
        *err = what + ": " + m;
        return false;
    };
    if (bytes.size() < 22) return fail("not an .npz file (too short for a zip archive)");
    size_t eocd = std::string::npos;
    size_t lowest = bytes.size() >= 22 + 65535 ? bytes.size() - 22 - 65535 : 0;
    for (size_t p = bytes.size() - 22 + 1; p-- > lowest;) {
        if (get32(bytes, p) == 0x06054b50) {
            eocd = p;
            break;
        }
    }
    if (eocd == std::string::npos) return fail("not an .npz file (no zip end-of-directory record)");
    uint32_t entries = get16(bytes, eocd + 10);
    uint64_t cd_size = get32(bytes, eocd + 12), cd_off = get32(bytes, eocd + 16);
    if (cd_off + cd_size > eocd) return fail("corrupt zip archive (central directory out of range)");
    size_t p = cd_off;
    out->clear();
    for (uint32_t e = 0; e < entries; ++e) {
        if (p + 46 > eocd || get32(bytes, p) != 0x02014b50)
            return fail("corrupt zip archive (bad central directory entry)");
        uint32_t method = get16(bytes, p + 10);
        uint32_t crc = get32(bytes, p + 16);
        uint64_t csize = get32(bytes, p + 20), usize = get32(bytes, p + 24);
        uint32_t nlen = get16(bytes, p + 28), xlen = get16(bytes, p + 30), clen = get16(bytes, p + 32);
        uint64_t loff = get32(bytes, p + 42);
        if (p + 46 + nlen + xlen + clen > eocd) return fail("corrupt zip archive (truncated entry)");
        std::string name = bytes.substr(p + 46, nlen);
        // zip64 extra field: the 0xFFFFFFFF fields follow in order usize, csize, offset.
        size_t x = p + 46 + nlen, xend = x + xlen;
        while (x + 4 <= xend) {
            uint32_t id = get16(bytes, x), sz = get16(bytes, x + 2);
            if (x + 4 + sz > xend) break;
            if (id == 0x0001) {
                size_t q = x + 4;
                if (usize == 0xFFFFFFFFu && q + 8 <= x + 4 + sz) usize = get64(bytes, q), q += 8;
                if (csize == 0xFFFFFFFFu && q + 8 <= x + 4 + sz) csize = get64(bytes, q), q += 8;
                if (loff == 0xFFFFFFFFu && q + 8 <= x + 4 + sz) loff = get64(bytes, q), q += 8;
            }
            x += 4 + sz;
        }
        if (method != 0)
            return fail("member '" + name + "' is compressed; trlc reads uncompressed archives " +
                        "only (numpy.savez, not numpy.savez_compressed)");
        if (csize != usize) return fail("corrupt zip archive (stored member '" + name + "' sizes differ)");
        if (loff + 30 > bytes.size() || get32(bytes, loff) != 0x04034b50)
            return fail("corrupt zip archive (bad local header of '" + name + "')");
        uint64_t data = loff + 30 + get16(bytes, loff + 26) + get16(bytes, loff + 28);
        if (data + csize > bytes.size()) return fail("truncated zip archive (member '" + name + "' runs past the end)");
        std::string body = bytes.substr(data, csize);
        if (crc32(body.data(), body.size()) != crc)
            return fail("CRC-32 mismatch in member '" + name + "' (corrupt archive)");
        std::string stem = name;
        if (stem.size() >= 4 && stem.compare(stem.size() - 4, 4, ".npy") == 0) stem.resize(stem.size() - 4);
        NpyArray a;
        if (!npy_decode(body, what + "[" + name + "]", &a, err)) return false;
        out->emplace_back(stem, std::move(a));
        p += 46 + nlen + xlen + clen;
    }
    return true;
}

bool npz_save(const std::string &path, const std::vector<NpzMember> &members, std::string *err) {
    return write_file(path, npz_encode(members), err);
}

bool npz_load(const std::string &path, std::vector<NpzMember> *out, std::string *err) {
    std::string bytes;
    return read_file(path, &bytes, err) && npz_decode(bytes, path, out, err);
}

}  // namespace trl
