// After lowering: a permute whose result (or a view of it) only a second permute of the same
// element size reads becomes one permute from the first's input to the second's output. A
// permute is a byte gather, and so is the composition of two; it is again one rank-kMaxRank
// permutation when both sides split into a common list of factors (the usual case: a channel
// shuffle's NHWC -> NCHW, view, transpose, view, NCHW -> NHWC is one permute of (.., g, C/g)).
// Programs without such chains are unchanged.
#include <algorithm>
#include <optional>

#include "mcuflow/compiler/kernel_selection.h"
#include "mcuflow/compiler/lower.h"
#include "mcuflow/kernels/params.h"

namespace mcuflow::compiler {
namespace {

using kernels::kMaxRank;
using kernels::PermuteParams;

constexpr int kRank = int(kMaxRank);

bool is_permute(KernelId k) { return k == KernelId::permute_b8 || k == KernelId::permute_b32; }

int root_of(const LoweredProgram& p, int t) {
  while (p.tensors[size_t(t)].alias_of >= 0) t = p.tensors[size_t(t)].alias_of;
  return t;
}

// Boundaries of a row-major shape: the product of each suffix of its dims (from n down to 1).
std::vector<int64_t> boundaries(const int32_t (&dims)[kMaxRank]) {
  std::vector<int64_t> b{1};
  for (int d = kRank - 1; d >= 0; --d) b.push_back(b.back() * dims[d]);
  return b;
}

// The factors (outermost first) both shapes split into, or none when some dim of one straddles
// a dim boundary of the other without dividing it.
std::optional<std::vector<int64_t>> common_factors(const int32_t (&a)[kMaxRank], const int32_t (&b)[kMaxRank]) {
  std::vector<int64_t> all = boundaries(a), other = boundaries(b);
  all.insert(all.end(), other.begin(), other.end());
  std::sort(all.begin(), all.end(), std::greater<>());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  std::vector<int64_t> factors;
  for (size_t i = 0; i + 1 < all.size(); ++i) {
    if (all[i] % all[i + 1] != 0) return std::nullopt;
    factors.push_back(all[i] / all[i + 1]);
  }
  return factors;
}

// For each dim of `dims`: the indices of the factors it spans (none for a dim of 1).
std::vector<std::vector<int>> factors_of_dims(const int32_t (&dims)[kMaxRank], const std::vector<int64_t>& factors) {
  std::vector<std::vector<int>> spans(kMaxRank);
  size_t f = factors.size();  // from the innermost dim outwards
  for (int d = kRank - 1; d >= 0; --d) {
    for (int64_t left = dims[d]; left > 1;) {
      left /= factors[--f];
      spans[size_t(d)].insert(spans[size_t(d)].begin(), int(f));
    }
  }
  return spans;
}

// `first` then `second`, where second's input is first's output viewed with second.in_dims.
std::optional<PermuteParams> compose(const PermuteParams& first, const PermuteParams& second) {
  int32_t first_out[kMaxRank];
  for (int k = 0; k < kRank; ++k) first_out[k] = first.in_dims[first.perm[k]];
  const auto factors = common_factors(first_out, second.in_dims);
  if (!factors) return std::nullopt;
  // First's input, refined: input axis a splits as the output dim reading it does.
  const auto out_spans = factors_of_dims(first_out, *factors);
  std::vector<int> source_axis(factors->size());  // factor -> its axis in the refined input
  std::vector<int64_t> in_sizes;
  for (int a = 0; a < kRank; ++a) {
    const int k = int(std::find(first.perm, first.perm + kRank, a) - first.perm);
    for (int f : out_spans[size_t(k)]) {
      source_axis[size_t(f)] = int(in_sizes.size());
      in_sizes.push_back((*factors)[size_t(f)]);
    }
  }
  // Second's output, refined: the factors of the input dim each output dim reads, in order.
  const auto in_spans = factors_of_dims(second.in_dims, *factors);
  std::vector<int> gather;  // refined output axis -> refined input axis
  for (int k = 0; k < kRank; ++k)
    for (int f : in_spans[size_t(second.perm[k])]) gather.push_back(source_axis[size_t(f)]);
  // Merge input axes that stay adjacent and in order in the output.
  std::vector<int> merged_gather;
  std::vector<bool> merged_into_previous(in_sizes.size(), false);
  for (size_t i = 0; i < gather.size(); ++i) {
    if (i > 0 && gather[i] == gather[i - 1] + 1) merged_into_previous[size_t(gather[i])] = true;
    else merged_gather.push_back(gather[i]);
  }
  std::vector<int64_t> sizes;
  std::vector<int> renumbered(in_sizes.size());
  for (size_t a = 0; a < in_sizes.size(); ++a) {
    if (merged_into_previous[a]) {
      sizes.back() *= in_sizes[a];
    } else {
      sizes.push_back(in_sizes[a]);
    }
    renumbered[a] = int(sizes.size()) - 1;
  }
  if (sizes.size() > kMaxRank) return std::nullopt;
  const int pad = kRank - int(sizes.size());
  PermuteParams fused{};
  for (int d = 0; d < kRank; ++d) {
    fused.in_dims[d] = d < pad ? 1 : int32_t(sizes[size_t(d - pad)]);
    fused.perm[d] = d < pad ? d : renumbered[size_t(merged_gather[size_t(d - pad)])] + pad;
  }
  return fused;
}

}  // namespace

void fuse_permutes(LoweredProgram& p) {
  std::vector<bool> is_output(p.tensors.size(), false);
  for (int t : p.outputs) is_output[size_t(root_of(p, t))] = true;
  for (const StateUpdate& s : p.states) is_output[size_t(root_of(p, s.update))] = true;
  for (bool fused = true; fused;) {
    fused = false;
    std::vector<int> readers(p.tensors.size(), 0), reader(p.tensors.size(), -1);
    for (size_t i = 0; i < p.ops.size(); ++i) {
      for (int t : p.ops[i].inputs) {
        const size_t root = size_t(root_of(p, t));
        ++readers[root];
        reader[root] = int(i);
      }
    }
    for (size_t i = 0; i < p.ops.size() && !fused; ++i) {
      ProgramOp& first = p.ops[i];
      if (!is_permute(first.kernel)) continue;
      const size_t middle = size_t(first.outputs[0]);
      if (is_output[middle] || readers[middle] != 1) continue;
      ProgramOp& second = p.ops[size_t(reader[middle])];
      if (second.kernel != first.kernel) continue;
      const auto composed = compose(params_of<PermuteParams>(first), params_of<PermuteParams>(second));
      if (!composed) continue;
      second.inputs = first.inputs;
      second.params.assign(reinterpret_cast<const uint8_t*>(&*composed),
                           reinterpret_cast<const uint8_t*>(&*composed) + sizeof(PermuteParams));
      p.ops.erase(p.ops.begin() + std::ptrdiff_t(i));
      fused = true;
    }
  }
}

}  // namespace mcuflow::compiler
