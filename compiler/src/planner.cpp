#include "mcuflow/compiler/planner.h"

#include <algorithm>
#include <numeric>

namespace mcuflow::compiler {
namespace {

bool is_root(const ProgramTensor& t) { return !t.constant && t.alias_of < 0; }

int root_of(const LoweredProgram& p, int t) { return p.tensors[t].alias_of >= 0 ? p.tensors[t].alias_of : t; }

bool overlaps(const Lifetime& a, const Lifetime& b) { return a.first <= b.last && b.first <= a.last; }

}  // namespace

std::vector<Lifetime> root_lifetimes(const LoweredProgram& p) {
  const int n_ops = int(p.ops.size());
  std::vector<Lifetime> life(p.tensors.size(), Lifetime{0, -1});
  std::vector<bool> seen(p.tensors.size(), false);
  auto touch = [&](int t, int step) {
    const int r = root_of(p, t);
    if (!is_root(p.tensors[r])) return;
    if (!seen[r]) life[r] = Lifetime{step, step};
    seen[r] = true;
    life[r].first = std::min(life[r].first, step);
    life[r].last = std::max(life[r].last, step);
  };
  for (int t : p.inputs) touch(t, -1);
  for (int i = 0; i < n_ops; ++i) {
    for (int t : p.ops[i].inputs) touch(t, i);
    for (int t : p.ops[i].outputs) touch(t, i);
  }
  for (int t : p.outputs) touch(t, n_ops);
  return life;
}

uint32_t liveness_lower_bound(const LoweredProgram& p) {
  const auto life = root_lifetimes(p);
  uint32_t best = 0;
  for (int step = -1; step <= int(p.ops.size()); ++step) {
    uint32_t live = 0;
    for (size_t t = 0; t < p.tensors.size(); ++t) {
      if (life[t].first <= step && step <= life[t].last) live += align_up(p.tensors[t].byte_size(), kTensorAlign);
    }
    best = std::max(best, live);
  }
  return best;
}

void plan_memory(LoweredProgram& p, bool reuse) {
  const auto life = root_lifetimes(p);
  std::vector<int> roots;
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    if (life[t].first <= life[t].last) roots.push_back(int(t));
  }
  std::stable_sort(roots.begin(), roots.end(), [&](int a, int b) {
    return p.tensors[a].byte_size() > p.tensors[b].byte_size();
  });
  std::vector<int> placed;
  uint32_t arena = 0;
  for (int t : roots) {
    const uint32_t size = align_up(p.tensors[t].byte_size(), kTensorAlign);
    std::vector<std::pair<uint32_t, uint32_t>> busy;  // [begin, end) of conflicting tensors
    for (int o : placed) {
      if (!reuse || overlaps(life[t], life[o]))
        busy.emplace_back(p.tensors[o].offset, p.tensors[o].offset + align_up(p.tensors[o].byte_size(), kTensorAlign));
    }
    std::sort(busy.begin(), busy.end());
    uint32_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + size <= begin) break;
      offset = std::max(offset, end);
    }
    p.tensors[t].offset = offset;
    arena = std::max(arena, offset + size);
    placed.push_back(t);
  }
  for (auto& t : p.tensors) {
    if (!t.constant && t.alias_of >= 0) t.offset = p.tensors[t.alias_of].offset;
  }
  p.arena_bytes = align_up(arena, kTensorAlign);
  p.arena_lower_bound = liveness_lower_bound(p);
}

}  // namespace mcuflow::compiler
