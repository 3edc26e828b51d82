// memplan_printer — --emit=memplan text and the "memplan" section of --emit=json.
//
// One line per buffer, tensors sorted by name:
//   r: window 4 along t of 100000, 4 slots x 16 B = 64 B, live r_0(0) .. s_0(99999),
//      dead after s_0(99999), offset 0
// (on one line).  The storage text names each stored domain position: `window k along d
// of E` (a circular window of the last k points out of the extent E), `block E along d`
// (the whole extent; `block E along d (read through a window of k)` when no statement
// instance reads more than k < E points of it along d: the schedule, not the reads, keeps all
// E, since a reader runs after later points are written: a backward pass, or a consumer
// placed after the producer's loop), `batch E along d` (a batch axis), and starts with
// `point` when no position is a window or block.  Then `donated from y` when the buffer reuses y's
// storage (y = the tensor itself when a point takes the slot of an earlier point of the
// same tensor).  Then `predicted peak: N bytes` and, for a program with a loop to checkpoint,
// `checkpoint: N bytes of the arena in K ranges (x, y)`: the buffers a checkpoint holds
// (written in the outermost loop and read after the end of that iteration: checkpoint_live.cpp).
// Under --mem-budget: `memory budget: B bytes (without it the peak is P); host arena: H bytes,
// N swaps` and one `swap x: …` line per swap (memory/swap.cpp).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "memory/memplan.h"

namespace trlc {

namespace {

const char *kind_name(Buffer::Kind k) {
    switch (k) {
    case Buffer::Point: return "point";
    case Buffer::Window: return "window";
    case Buffer::Block: return "block";
    }
    return "?";
}

/** The extent of the tensor's domain along d, recovered from the program's dims. */
std::string storage_text(const ir::Program &prog, const Buffer &b, const std::vector<int64_t> &extent) {
    const ir::Tensor &t = prog.tensors[b.tensor];
    std::string parts;
    bool shaped = false;
    for (size_t d = 0; d < b.modulus.size(); ++d) {
        std::string dim = d < t.dims.size() ? prog.dims[t.dims[d]].name : "?";
        int64_t m = b.modulus[d];
        std::string part;
        if (b.batch.size() > d && b.batch[d]) {
            part = "batch " + std::to_string(m) + " along " + dim;
        } else if (m == 1) {
            continue;
        } else if (m < extent[d]) {
            part = "window " + std::to_string(m) + " along " + dim + " of " + std::to_string(extent[d]);
            shaped = true;
        } else {
            part = "block " + std::to_string(m) + " along " + dim;
            if (d < b.read_window.size() && b.read_window[d] > 0 && b.read_window[d] < m)
                part += " (read through a window of " + std::to_string(b.read_window[d]) + ")";
            shaped = true;
        }
        parts += (parts.empty() ? "" : ", ") + part;
    }
    if (!shaped) return parts.empty() ? "point" : "point, " + parts;
    return parts;
}

std::vector<size_t> by_name(const ir::Program &prog, const MemPlan &m) {
    std::vector<size_t> order(m.buffers.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return prog.tensors[m.buffers[a].tensor].name < prog.tensors[m.buffers[b].tensor].name;
    });
    return order;
}

}  // namespace

void print_memplan(const ir::Program &prog, const MemPlan &m, std::ostream &out) {
    for (size_t i : by_name(prog, m)) {
        const Buffer &b = m.buffers[i];
        out << prog.tensors[b.tensor].name << ": " << storage_text(prog, b, b.extent) << ", " << b.slots
            << (b.slots == 1 ? " slot" : " slots") << " x " << b.slot_bytes << " B = " << b.bytes << " B";
        if (!b.live_range.empty()) out << ", live " << b.live_range << ", dead after " << b.dealloc_after;
        out << ", offset " << b.offset;
        if (b.donated_from >= 0) out << ", donated from " << prog.tensors[b.donated_from].name;
        out << "\n";
    }
    out << "predicted peak: " << m.peak_bytes << " bytes\n";
    if (m.budget > 0) {
        out << "memory budget: " << m.budget << " bytes (without it the peak is " << m.unconstrained_peak
            << "); host arena: " << m.host_bytes << " bytes, " << m.stagings.size()
            << (m.stagings.size() == 1 ? " staged buffer, " : " staged buffers, ") << m.swaps.size()
            << (m.swaps.size() == 1 ? " swap\n" : " swaps\n");
        std::vector<size_t> order(m.swaps.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
            return prog.tensors[m.buffers[m.swaps[a].buffer].tensor].name <
                   prog.tensors[m.buffers[m.swaps[b].buffer].tensor].name;
        });
        for (const Staging &sg : m.stagings) {
            const Buffer &b = m.buffers[sg.buffer];
            const ir::Tensor &t = prog.tensors[b.tensor];
            std::string along;
            int64_t slices = 1;
            for (size_t k = 0; k < sg.positions.size(); ++k) {
                along += (k ? ", " : "") + prog.dims[t.dims[sg.positions[k]]].name;
                slices *= sg.modulus[k];
            }
            out << "stage " << t.name << ": one slice of " << slices << " in the arena (" << sg.slice_bytes
                << " B), along " << along << ", copied in and out by every iteration of the loop over "
                << prog.dims[t.dims[sg.positions.back()]].name << "; host offset " << sg.host_offset << "\n";
        }
        for (size_t i : order) {
            const Swap &w = m.swaps[i];
            const Buffer &b = m.buffers[w.buffer];
            out << "swap " << prog.tensors[b.tensor].name << ": " << b.bytes << " B to the host before " << w.run_first
                << ", back after " << w.run_last << " (children " << w.first << ".." << w.last << " of a block of "
                << w.block->children.size() << "), host offset " << w.host_offset << "\n";
        }
    }
    if (!m.checkpoint_statements.empty()) {
        out << "checkpoint: " << m.checkpoint_bytes() << " bytes of the arena in " << m.checkpoint_ranges.size()
            << (m.checkpoint_ranges.size() == 1 ? " range" : " ranges") << " (";
        bool first = true;
        for (size_t i : by_name(prog, m))
            if (m.buffers[i].checkpointed) {
                out << (first ? "" : ", ") << prog.tensors[m.buffers[i].tensor].name;
                first = false;
            }
        out << (first ? "nothing is alive at the end of an iteration)\n" : ")\n");
    }
}

std::string memplan_to_json(const ir::Program &prog, const MemPlan &m) {
    nlohmann::ordered_json doc;
    doc["peak_bytes"] = m.peak_bytes;
    nlohmann::ordered_json bufs = nlohmann::ordered_json::array();
    for (size_t i : by_name(prog, m)) {
        const Buffer &b = m.buffers[i];
        nlohmann::ordered_json j;
        j["tensor"] = prog.tensors[b.tensor].name;
        j["storage"] = kind_name(b.kind);
        j["extent"] = b.modulus;  // stored points per domain position
        j["bytes"] = b.bytes;
        j["offset"] = b.offset;
        if (b.donated_from >= 0)
            j["donated_from"] = prog.tensors[b.donated_from].name;
        else
            j["donated_from"] = nullptr;
        j["checkpointed"] = b.checkpointed;
        if (!b.read_window.empty()) j["read_window"] = b.read_window;  // block buffers
        bufs.push_back(j);
    }
    doc["buffers"] = bufs;
    doc["checkpoint_bytes"] = m.checkpoint_bytes();
    if (m.budget > 0) {
        doc["budget"] = m.budget;
        doc["unconstrained_peak"] = m.unconstrained_peak;
        doc["host_bytes"] = m.host_bytes;
        nlohmann::ordered_json sw = nlohmann::ordered_json::array();
        for (const Swap &w : m.swaps)
            sw.push_back({{"tensor", prog.tensors[m.buffers[w.buffer].tensor].name},
                          {"bytes", m.buffers[w.buffer].bytes},
                          {"out_before", w.run_first},
                          {"in_after", w.run_last},
                          {"host_offset", w.host_offset}});
        doc["swaps"] = sw;
        nlohmann::ordered_json sg = nlohmann::ordered_json::array();
        for (const Staging &g : m.stagings)
            sg.push_back({{"tensor", prog.tensors[m.buffers[g.buffer].tensor].name},
                          {"slice_bytes", g.slice_bytes},
                          {"positions", g.positions},
                          {"host_offset", g.host_offset}});
        doc["stagings"] = sg;
    }
    return doc.dump();
}

}  // namespace trlc
