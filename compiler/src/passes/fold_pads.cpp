#include "mcuflow/compiler/passes.h"

namespace mcuflow::compiler {
namespace {

std::vector<int64_t> pair_or_default(const Op& op, const std::string& name, const std::vector<int64_t>& fallback) {
  std::vector<int64_t> v = op.has_attr(name) ? op.ints_attr(name) : fallback;
  if (v.empty()) v = fallback;
  if (v.size() == 1) v.push_back(v[0]);
  return v;
}

// The op that can absorb a zero pad of its input's H and W, or nullptr. A pad holds real
// zeros, which is what convolution padding contributes; average pooling agrees only when its
// padding counts too (count_include_pad) and no partial ceil_mode window exists; max pooling
// pads with -inf, so a zero pad before it must stay.
Op* absorbing_reader(Graph& g, int padded) {
  const auto users = g.consumers(padded);
  if (users.size() != 1 || g.is_graph_output(padded)) return nullptr;
  Op& reader = g.ops[users[0]];
  if (reader.inputs[0] != padded) return nullptr;
  if (reader.kind == "conv2d") return &reader;
  if (reader.kind != "avg_pool2d") return nullptr;
  if (reader.has_attr("ceil_mode") && reader.int_attr("ceil_mode") != 0) return nullptr;
  const auto pad = pair_or_default(reader, "padding", {0, 0});
  const bool own_padding_excluded = !reader.has_attr("count_include_pad") || reader.int_attr("count_include_pad") == 0;
  if ((pad[0] || pad[1]) && own_padding_excluded) return nullptr;
  return &reader;
}

// (top, left, bottom, right) of a zero, non-negative pad of only the last two dims of a
// 4-D tensor; empty when the pad is anything else.
std::vector<int64_t> spatial_zero_pad(const Graph& g, const Op& pad) {
  if (g.tensors[pad.inputs[0]].shape.size() != 4 || pad.float_attr("value") != 0.0) return {};
  const auto& p = pad.ints_attr("pad");  // (left, right, top, bottom, then outer dims)
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] < 0 || (i >= 4 && p[i] != 0)) return {};
  }
  auto at = [&](size_t i) { return i < p.size() ? p[i] : int64_t{0}; };
  return {at(2), at(0), at(3), at(1)};
}

}  // namespace

void fold_pads(Graph& g) {
  std::vector<bool> removed(g.ops.size(), false);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& pad = g.ops[i];
    if (pad.kind != "pad") continue;
    const std::vector<int64_t> tlbr = spatial_zero_pad(g, pad);
    Op* reader = tlbr.empty() ? nullptr : absorbing_reader(g, pad.outputs[0]);
    if (!reader) continue;
    const auto begin = pair_or_default(*reader, "padding", {0, 0});
    const auto end = pair_or_default(*reader, "padding_end", begin);
    reader->attrs["padding"] = std::vector<int64_t>{begin[0] + tlbr[0], begin[1] + tlbr[1]};
    reader->attrs["padding_end"] = std::vector<int64_t>{end[0] + tlbr[2], end[1] + tlbr[3]};
    if (reader->kind == "avg_pool2d") reader->attrs["count_include_pad"] = int64_t{1};
    reader->inputs[0] = pad.inputs[0];
    removed[i] = true;
  }
  erase_ops(g, removed);
}

}  // namespace mcuflow::compiler
