// Memory planner (docs/memory_planning.md). Units of placement are groups: a root arena tensor,
// or a chain of roots that in-place ops tie together at fixed relative offsets. Groups are
// placed by several orderings with first- and best-fit offsets; when the best leaves bytes
// above the liveness lower bound, a branch and bound over placement orders searches further.
#include "mcuflow/compiler/planner.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>

#include "mcuflow/compiler/ir.h"
#include "mcuflow/compiler/kernel_selection.h"
#include "mcuflow/compiler/serializer.h"
#include "mcuflow/kernels/params.h"
#include "mcuflow/runtime/aliasing.h"
#include "mcuflow/runtime/runtime.h"

namespace mcuflow::compiler {
namespace {

// Exhaustive search is the goal up to this many groups; larger programs get a smaller budget.
// A node costs about 10 µs with 20 groups: the budgets keep a compile under about a second.
constexpr size_t kExactGroups = 20;
constexpr uint64_t kExactNodeBudget = 100000;
constexpr uint64_t kLargeNodeBudget = 5000;
constexpr int kDropRounds = 8;  // in-place pairs dropped at most, one per round

bool is_root(const ProgramTensor& t) { return !t.constant && !t.streamed && t.alias_of < 0; }

int root_of(const LoweredProgram& p, int t) { return p.tensors[t].alias_of >= 0 ? p.tensors[t].alias_of : t; }

bool overlaps(const Lifetime& a, const Lifetime& b) { return a.first <= b.last && b.first <= a.last; }

int64_t aligned_size(const ProgramTensor& t) { return align_up(t.byte_size(), kTensorAlign); }

// --- in-place legality --------------------------------------------------------------------

// Which ops may run in place, and how far from their input, is each kernel's aliasing contract
// (mcuflow/runtime/aliasing.h), read from the kernel list the verifier reads too: it refuses
// every other overlap.
aliasing::Contract contract_of(const ProgramOp& op) {
  const KernelTable kernels = all_kernels();
  const uint16_t id = uint16_t(op.kernel);
  return id < kernels.count && kernels.entries[id] ? kernels.entries[id]->access : aliasing::kNoSharing;
}

bool runs_in_place(const ProgramOp& op) {
  const aliasing::Walk walk = contract_of(op).walk;
  return walk == aliasing::Walk::kElementwise || walk == aliasing::Walk::kForward || walk == aliasing::Walk::kBothWays ||
         walk == aliasing::Walk::kExactlyInPlace;
}

// --- groups ---------------------------------------------------------------------------------

struct Piece {
  int tensor;
  int64_t rel;   // offset from the group's base
  int64_t size;  // aligned
  Lifetime life;
};

struct Group {
  std::vector<Piece> pieces;
  int64_t height = 0;
  Lifetime life{std::numeric_limits<int>::max(), std::numeric_limits<int>::min()};
};

// An in-place step with its own output root: `output` starts `shift` bytes below `root`, the
// root of the op's input `input` (a negative shift: above). `below` / `above` are what the
// kernel allows (-1: not that way); make_problem chooses.
struct InPlacePair {
  int op, input, root, output;
  int64_t below, above;
  int64_t shift = 0;
};

// Bytes two spans share.
int64_t shared_bytes(int64_t a, int64_t a_size, int64_t b, int64_t b_size) {
  return std::max<int64_t>(0, std::min(a + a_size, b + b_size) - std::max(a, b));
}

// Offsets of g relative to h at which two of their pieces live at a common op would share
// bytes: open intervals (lo, hi) of offset(g) - offset(h).
using Forbidden = std::vector<std::pair<int64_t, int64_t>>;

struct Problem {
  std::vector<Group> groups;
  std::vector<std::vector<int>> neighbors;       // conflicting groups
  std::vector<std::vector<Forbidden>> forbidden; // aligned with neighbors
};

// Chains each pair's direction (below or above its input) so the chain spans the fewest bytes;
// embedded parts join their host's group at their offset in it.
Problem make_problem(const LoweredProgram& p, const std::vector<Lifetime>& life, std::vector<InPlacePair>& pairs,
                     const std::vector<Embedding>& embedded, bool reuse) {
  const int n = int(p.tensors.size());
  std::vector<int> next(n, -1);  // next[root] = the pair writing over it
  std::vector<bool> has_source(n, false);
  for (size_t k = 0; k < pairs.size(); ++k) {
    next[pairs[k].root] = int(k);
    has_source[pairs[k].output] = true;
  }
  for (const Embedding& e : embedded) has_source[e.part] = true;
  Problem pr;
  for (int t = 0; t < n; ++t) {
    if (life[t].first > life[t].last || has_source[t]) continue;  // chains start at their head
    Group g;
    g.pieces.push_back(Piece{t, 0, aligned_size(p.tensors[t]), life[t]});
    int64_t lo = 0, hi = g.pieces[0].size;
    for (int k = next[t]; k >= 0; k = next[pairs[k].output]) {
      InPlacePair& ip = pairs[k];
      const Piece& in = g.pieces.back();
      const int64_t size = aligned_size(p.tensors[ip.output]);
      int64_t best_rel = 0, best_span = -1;
      const std::pair<int64_t, int64_t> ways[] = {{ip.below, ip.below}, {ip.above, -ip.above}};  // (allowed, shift)
      for (const auto& [allowed, shift] : ways) {
        if (allowed < 0 || shared_bytes(in.rel, in.size, in.rel - shift, size) == 0) continue;
        const int64_t span = std::max(hi, in.rel - shift + size) - std::min(lo, in.rel - shift);
        if (best_span < 0 || span < best_span) best_span = span, best_rel = in.rel - shift, ip.shift = shift;
      }
      lo = std::min(lo, best_rel);
      hi = std::max(hi, best_rel + size);
      g.pieces.push_back(Piece{ip.output, best_rel, size, life[ip.output]});
    }
    for (size_t k = 0, chain = g.pieces.size(); k < chain; ++k) {
      for (const Embedding& e : embedded) {
        if (e.host != g.pieces[k].tensor || life[e.part].first > life[e.part].last) continue;
        g.pieces.push_back(Piece{e.part, g.pieces[k].rel + e.offset, aligned_size(p.tensors[e.part]), life[e.part]});
      }
    }
    const int64_t lowest = std::min_element(g.pieces.begin(), g.pieces.end(), [](const Piece& a, const Piece& b) {
                             return a.rel < b.rel;
                           })->rel;
    for (Piece& pc : g.pieces) {
      pc.rel -= lowest;
      g.height = std::max(g.height, pc.rel + pc.size);
      g.life.first = std::min(g.life.first, pc.life.first);
      g.life.last = std::max(g.life.last, pc.life.last);
      if (!reuse) pc.life = Lifetime{-1, int(p.ops.size())};  // everything conflicts
    }
    pr.groups.push_back(std::move(g));
  }
  const size_t count = pr.groups.size();
  pr.neighbors.resize(count);
  pr.forbidden.resize(count);
  for (size_t a = 0; a < count; ++a) {
    for (size_t b = 0; b < count; ++b) {
      if (a == b) continue;
      Forbidden f;
      for (const Piece& x : pr.groups[a].pieces)
        for (const Piece& y : pr.groups[b].pieces)
          if (overlaps(x.life, y.life)) f.emplace_back(y.rel - x.rel - x.size, y.rel + y.size - x.rel);
      if (f.empty()) continue;
      pr.neighbors[a].push_back(int(b));
      pr.forbidden[a].push_back(std::move(f));
    }
  }
  return pr;
}

// Forbidden absolute offsets of group g given the placed groups (offset < 0: not placed),
// sorted by their lower end.
Forbidden blocked(const Problem& pr, int g, const std::vector<int64_t>& offset) {
  Forbidden out;
  for (size_t k = 0; k < pr.neighbors[g].size(); ++k) {
    const int64_t h = offset[pr.neighbors[g][k]];
    if (h < 0) continue;
    for (const auto& [lo, hi] : pr.forbidden[g][k]) out.emplace_back(h + lo, h + hi);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool allowed(const Forbidden& f, int64_t c) {
  for (const auto& [lo, hi] : f)
    if (lo < c && c < hi) return false;
  return true;
}

// The lowest offset where g fits. Intervals sorted by lower end: once c is raised past an
// interval, later ones (starting higher) are the only ones that can contain it.
int64_t first_fit(const Forbidden& f) {
  int64_t c = 0;
  for (const auto& [lo, hi] : f)
    if (lo < c && c < hi) c = hi;
  return c;
}

// The tightest gap: among the offsets just above a neighbor (and 0), those where g fits; the
// one that grows the arena least, then leaves the least room above g, then the lowest.
int64_t best_fit(const Forbidden& f, int64_t height, int64_t arena) {
  std::vector<int64_t> candidates{0};
  for (const auto& iv : f) candidates.push_back(std::max<int64_t>(0, iv.second));
  int64_t best = -1;
  std::tuple<int64_t, int64_t, int64_t> best_key;
  for (int64_t c : candidates) {
    if (!allowed(f, c)) continue;
    int64_t room = std::numeric_limits<int64_t>::max();
    for (const auto& iv : f)
      if (iv.first >= c) room = std::min(room, iv.first - c);
    const auto key = std::make_tuple(std::max<int64_t>(0, c + height - arena), room, c);
    if (best < 0 || key < best_key) {
      best = c;
      best_key = key;
    }
  }
  return best;
}

struct Placement {
  std::vector<int64_t> offset;  // per group
  int64_t arena = 0;
  std::string method;
  bool complete = false;    // the search visited every placement order that could do better
  bool exhaustive = false;  // … and that proves optimality (groups of one tensor)
  uint64_t nodes = 0;
};

Placement place_in_order(const Problem& pr, const std::vector<int>& order, bool best, const std::string& method) {
  Placement pl;
  pl.offset.assign(pr.groups.size(), -1);
  pl.method = method;
  for (int g : order) {
    const Forbidden f = blocked(pr, g, pl.offset);
    pl.offset[g] = best ? best_fit(f, pr.groups[g].height, pl.arena) : first_fit(f);
    pl.arena = std::max(pl.arena, pl.offset[g] + pr.groups[g].height);
  }
  return pl;
}

std::vector<Placement> heuristic_placements(const Problem& pr) {
  const size_t n = pr.groups.size();
  auto sorted = [&](const std::function<bool(int, int)>& before) {
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), before);
    return order;
  };
  auto height = [&](int g) { return pr.groups[g].height; };
  auto span = [&](int g) { return int64_t(pr.groups[g].life.last - pr.groups[g].life.first + 1); };
  auto degree = [&](int g) {
    int64_t d = 0;
    for (int h : pr.neighbors[g]) d += pr.groups[h].height;
    return d;
  };
  const std::vector<std::pair<std::string, std::vector<int>>> orders = {
      {"by size", sorted([&](int a, int b) { return height(a) > height(b); })},
      {"by lifetime start", sorted([&](int a, int b) {
         const auto& x = pr.groups[a].life;
         const auto& y = pr.groups[b].life;
         return x.first != y.first ? x.first < y.first : height(a) > height(b);
       })},
      {"by conflict degree", sorted([&](int a, int b) { return degree(a) > degree(b); })},
      {"by size x lifetime", sorted([&](int a, int b) { return height(a) * span(a) > height(b) * span(b); })},
  };
  std::vector<Placement> out;
  for (const auto& [name, order] : orders) {
    out.push_back(place_in_order(pr, order, false, "first-fit " + name));
    out.push_back(place_in_order(pr, order, true, "best-fit " + name));
  }
  return out;
}

// Branch and bound over placement orders, each group at its first-fit offset. For single-tensor
// groups this is exact. Take an optimal plan, sort it by offset and let each tensor in turn drop
// to its lowest free offset: nothing rises, so the plan stays optimal; repeating until nothing
// moves gives an optimal plan that first-fit reproduces in its own offset order. The search
// therefore only visits orders whose first-fit offsets never decrease (equal offsets: lower
// index first). Every later group then lies at or above the current level, which bounds each
// completion twice: by the highest first-fit top of an unplaced group (first-fit offsets only
// rise as groups are placed) and, per op, by the level plus the bytes above it that groups live
// at that op must occupy.
class Search {
 public:
  Search(const Problem& pr, int64_t target, Placement incumbent, uint64_t budget, bool skyline)
      : pr_(pr), target_(target), best_(std::move(incumbent)), budget_(budget), skyline_(skyline) {
    single_tensors_ = std::all_of(pr.groups.begin(), pr.groups.end(), [](const Group& g) { return g.pieces.size() == 1; });
    for (const Group& g : pr.groups) {
      steps_ = std::max(steps_, g.life.last + 2);
      first_step_ = std::min(first_step_, g.life.first);
    }
  }

  Placement run() {
    std::vector<int64_t> offset(pr_.groups.size(), -1);
    visit(offset, -1, 0, 0, pr_.groups.size());
    best_.nodes = nodes_;
    best_.complete = nodes_ <= budget_;
    best_.exhaustive = best_.complete && single_tensors_;
    return best_;
  }

 private:
  // Bytes of `g`'s pieces live at `step` that lie at or above `floor` (g placed at `base`).
  int64_t bytes_above(int g, int step, int64_t base, int64_t floor) const {
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (const Piece& pc : pr_.groups[g].pieces)
      if (pc.life.first <= step && step <= pc.life.last)
        spans.emplace_back(std::max(base + pc.rel, floor), base + pc.rel + pc.size);
    std::sort(spans.begin(), spans.end());
    int64_t total = 0, reached = floor;
    for (const auto& [lo, hi] : spans) {
      const int64_t from = std::max(lo, reached);
      if (hi > from) total += hi - from;
      reached = std::max(reached, hi);
    }
    return total;
  }

  int64_t skyline_bound(const std::vector<int64_t>& offset, int64_t level) const {
    int64_t bound = 0;
    for (int step = first_step_; step < steps_; ++step) {
      int64_t need = level;
      for (size_t g = 0; g < pr_.groups.size(); ++g) {
        const Lifetime& l = pr_.groups[g].life;
        if (l.first > step || step > l.last) continue;
        need += offset[g] >= 0 ? bytes_above(int(g), step, offset[g], level) : bytes_above(int(g), step, level, level);
      }
      bound = std::max(bound, need);
    }
    return bound;
  }

  void visit(std::vector<int64_t>& offset, int last, int64_t level, int64_t top, size_t left) {
    if (++nodes_ > budget_ || best_.arena <= target_) return;
    if (left == 0) {
      if (top < best_.arena) {
        best_.offset = offset;
        best_.arena = top;
        best_.method = "exact search";
      }
      return;
    }
    std::vector<std::pair<int64_t, int>> children;  // (first-fit offset, group)
    int64_t bound = top;
    for (size_t g = 0; g < pr_.groups.size(); ++g) {
      if (offset[g] >= 0) continue;
      const int64_t c = first_fit(blocked(pr_, int(g), offset));
      bound = std::max(bound, std::max(c, level) + pr_.groups[g].height);
      if (c > level || (c == level && int(g) > last)) children.emplace_back(c, int(g));
    }
    if (bound >= best_.arena || (skyline_ && skyline_bound(offset, level) >= best_.arena)) return;
    // Lowest first, tallest first among equals: the bottom-up fill of a good plan comes early.
    std::sort(children.begin(), children.end(), [&](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : pr_.groups[a.second].height > pr_.groups[b.second].height;
    });
    for (const auto& [c, g] : children) {
      offset[g] = c;
      visit(offset, g, c, std::max(top, c + pr_.groups[g].height), left - 1);
      offset[g] = -1;
      if (nodes_ > budget_ || best_.arena <= target_) return;
    }
  }

  const Problem& pr_;
  int64_t target_;
  Placement best_;
  uint64_t budget_;
  bool skyline_;
  uint64_t nodes_ = 0;
  int first_step_ = 0, steps_ = 0;
  bool single_tensors_ = true;  // the exactness argument needs groups of one tensor
};

// Bytes of group g's pieces live at each step (-1 … op_count), counting overlaps once.
std::vector<int64_t> group_extent(const LoweredProgram& p, const Group& g) {
  std::vector<int64_t> extent(p.ops.size() + 2, 0);
  for (size_t s = 0; s < extent.size(); ++s) {
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (const Piece& pc : g.pieces)
      if (pc.life.first <= int(s) - 1 && int(s) - 1 <= pc.life.last) spans.emplace_back(pc.rel, pc.rel + pc.size);
    std::sort(spans.begin(), spans.end());
    int64_t reached = std::numeric_limits<int64_t>::min();
    for (const auto& [lo, hi] : spans) {
      if (hi > std::max(lo, reached)) extent[s] += hi - std::max(lo, reached);
      reached = std::max(reached, hi);
    }
  }
  return extent;
}

// Per op step (-1 … op_count): the bytes live at that step, counting bytes that an in-place
// output shares with its input, and an embedded part with its host, once.
std::vector<int64_t> live_bytes(const LoweredProgram& p, const std::vector<Lifetime>& life) {
  const int steps = int(p.ops.size()) + 2;
  std::vector<int64_t> live(steps, 0);
  for (size_t t = 0; t < p.tensors.size(); ++t)
    for (int s = life[t].first; s <= life[t].last; ++s) live[s + 1] += aligned_size(p.tensors[t]);
  // A host and its parts hold the union of their spans: parts may overlap each other (the halo
  // rows of patch bands) and outlive their host.
  std::map<int, std::vector<Piece>> hosts;
  for (const Embedding& e : embeddings(p)) {
    auto& pieces = hosts[e.host];
    if (pieces.empty()) pieces.push_back(Piece{e.host, 0, aligned_size(p.tensors[e.host]), life[e.host]});
    pieces.push_back(Piece{e.part, e.offset, aligned_size(p.tensors[e.part]), life[e.part]});
  }
  for (const auto& [host, pieces] : hosts) {
    Group g;
    g.pieces = pieces;
    const std::vector<int64_t> extent = group_extent(p, g);
    for (int s = 0; s < steps; ++s) {
      for (const Piece& pc : pieces)
        if (pc.life.first <= s - 1 && s - 1 <= pc.life.last) live[s] -= pc.size;
      live[s] += extent[s];
    }
  }
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const ProgramTensor& out = p.tensors[t];
    if (out.in_place_of < 0 || !is_root(out)) continue;
    const ProgramTensor& in = p.tensors[root_of(p, out.in_place_of)];
    const int64_t shared = std::min<int64_t>(out.offset + aligned_size(out), in.offset + aligned_size(in)) -
                           std::max<int64_t>(out.offset, in.offset);
    if (shared <= 0) continue;
    const Lifetime& a = life[t];
    const Lifetime& b = life[root_of(p, out.in_place_of)];
    for (int s = std::max(a.first, b.first); s <= std::min(a.last, b.last); ++s) live[s + 1] -= shared;
  }
  return live;
}

// Ops that could write their output at a fixed distance (0 for most element-wise ops) below an
// input that dies there, with the bytes that saves.
std::vector<std::pair<InPlacePair, int64_t>> pair_candidates(const LoweredProgram& p, const std::vector<Lifetime>& life) {
  std::vector<std::pair<InPlacePair, int64_t>> out;
  // `taken`: an input already overwritten, or one whose bytes an embedding needs: a part lies at
  // a fixed place in its host, and a slice's host keeps the values its parts still read (a cat's
  // parts die before it is read, so it may be overwritten at its last read, unless its copies
  // were dropped: then its parts live as long as it does).
  std::vector<bool> taken(p.tensors.size(), false), embedded(p.tensors.size(), false);
  for (const Embedding& e : embeddings(p)) {
    taken[e.part] = embedded[e.part] = embedded[e.host] = true;
    taken[e.host] = taken[e.host] || e.op < 0 || root_of(p, p.ops[size_t(e.op)].inputs[0]) == e.host;
  }
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const ProgramOp& op = p.ops[i];
    if (!runs_in_place(op) || op.outputs.size() != 1) continue;
    const int o = op.outputs[0];
    if (!is_root(p.tensors[o]) || life[o].first != int(i) || embedded[o]) continue;
    for (size_t slot = 0; slot < op.inputs.size(); ++slot) {
      const int root = root_of(p, op.inputs[slot]);
      if (p.tensors[root].constant || life[root].last != int(i) || taken[root]) continue;
      const int64_t below = in_place_shift(p, op, slot), above = in_place_shift_above(p, op, slot);
      const int64_t in_size = aligned_size(p.tensors[root]), out_size = aligned_size(p.tensors[o]);
      const int64_t saved = std::max(below < 0 ? 0 : shared_bytes(0, in_size, -below, out_size),
                                     above < 0 ? 0 : shared_bytes(0, in_size, above, out_size));
      if (saved == 0) continue;  // input and output would not overlap
      taken[root] = true;
      out.push_back({InPlacePair{int(i), op.inputs[slot], root, o, below, above}, saved});
      break;
    }
  }
  return out;
}

struct Outcome {
  Placement placement;
  Problem problem;
  std::vector<InPlacePair> pairs;
  int64_t lower_bound = 0;
};

// The lower bound and the best heuristic placement with the given in-place pairs.
Outcome plan_with(LoweredProgram& p, const std::vector<Lifetime>& life, std::vector<InPlacePair> pairs, bool reuse) {
  Outcome o;
  o.pairs = std::move(pairs);
  o.problem = make_problem(p, life, o.pairs, embeddings(p), reuse);
  for (const Group& g : o.problem.groups)
    for (const Piece& pc : g.pieces) p.tensors[pc.tensor].offset = uint32_t(pc.rel);
  std::vector<int> saved_in_place(p.tensors.size());
  for (size_t t = 0; t < p.tensors.size(); ++t) saved_in_place[t] = p.tensors[t].in_place_of;
  for (const InPlacePair& ip : o.pairs) p.tensors[ip.output].in_place_of = ip.input;
  const auto live = live_bytes(p, life);
  o.lower_bound = *std::max_element(live.begin(), live.end());
  for (size_t t = 0; t < p.tensors.size(); ++t) p.tensors[t].in_place_of = saved_in_place[t];

  auto placements = heuristic_placements(o.problem);
  o.placement = *std::min_element(placements.begin(), placements.end(),
                                  [](const Placement& a, const Placement& b) { return a.arena < b.arena; });
  return o;
}

// --- memory regions -------------------------------------------------------------------------

// The part of `pr` made of groups `keep` (indices into pr.groups).
Problem subproblem(const Problem& pr, const std::vector<int>& keep) {
  std::vector<int> index(pr.groups.size(), -1);
  for (size_t k = 0; k < keep.size(); ++k) index[keep[k]] = int(k);
  Problem sub;
  sub.neighbors.resize(keep.size());
  sub.forbidden.resize(keep.size());
  for (size_t k = 0; k < keep.size(); ++k) {
    sub.groups.push_back(pr.groups[keep[k]]);
    for (size_t j = 0; j < pr.neighbors[keep[k]].size(); ++j) {
      const int other = index[pr.neighbors[keep[k]][j]];
      if (other < 0) continue;
      sub.neighbors[k].push_back(other);
      sub.forbidden[k].push_back(pr.forbidden[keep[k]][j]);
    }
  }
  return sub;
}

Placement best_heuristic(const Problem& pr) {
  auto placements = heuristic_placements(pr);
  return *std::min_element(placements.begin(), placements.end(),
                           [](const Placement& a, const Placement& b) { return a.arena < b.arena; });
}

// Accesses per byte: for each op touching a tensor of the group, its MACs (the work that reads
// it) or, for ops without MACs, the tensor's bytes; divided by the group's bytes.
double heat(const LoweredProgram& p, const Group& g) {
  double accesses = 0.0, bytes = 0.0;
  for (const Piece& pc : g.pieces) {
    bytes += double(pc.size);
    for (const ProgramOp& op : p.ops) {
      const bool touches = std::any_of(op.inputs.begin(), op.inputs.end(), [&](int t) { return root_of(p, t) == pc.tensor; }) ||
                           std::any_of(op.outputs.begin(), op.outputs.end(), [&](int t) { return root_of(p, t) == pc.tensor; });
      if (touches) accesses += op.macs > 0 ? double(op.macs) : double(pc.size);
    }
  }
  return accesses / bytes;
}

struct RegionPlan {
  std::vector<int> groups;  // indices into the whole problem
  Placement placement;      // offsets indexed like `groups`
  int64_t used = 0;         // activations, then copied weights
};

struct Spill {
  int tensor;
  size_t region;
  double heat;
};

// Fills the regions in order: a region keeps the groups it can hold and passes the coldest group
// live at its busiest op to the next until its plan fits. The last region takes the rest.
std::vector<RegionPlan> assign_regions(const LoweredProgram& p, const Problem& pr, const Placement& whole,
                                       const std::vector<MemoryRegion>& regions, std::vector<Spill>& spills) {
  std::vector<RegionPlan> plans(regions.size());
  std::vector<int> remaining(pr.groups.size());
  std::iota(remaining.begin(), remaining.end(), 0);
  if (whole.arena <= int64_t(regions[0].capacity) || regions.size() == 1) {
    plans[0].groups = remaining;
    plans[0].placement = whole;
    return plans;
  }
  std::vector<std::vector<int64_t>> extent;
  std::vector<double> warmth;
  for (const Group& g : pr.groups) {
    extent.push_back(group_extent(p, g));
    warmth.push_back(heat(p, g));
  }
  for (size_t r = 0; r < regions.size() && !remaining.empty(); ++r) {
    std::vector<int> keep = remaining, spilled;
    for (;;) {
      Placement pl = best_heuristic(subproblem(pr, keep));
      if (pl.arena <= int64_t(regions[r].capacity) || r + 1 == regions.size() || keep.empty()) {
        plans[r].groups = keep;
        plans[r].placement = std::move(pl);
        break;
      }
      size_t busiest = 0;
      int64_t most = -1;
      for (size_t s = 0; s < p.ops.size() + 2; ++s) {
        int64_t live = 0;
        for (int g : keep) live += extent[g][s];
        if (live > most) most = live, busiest = s;
      }
      auto coldest = keep.end();
      for (auto it = keep.begin(); it != keep.end(); ++it) {
        if (extent[*it][busiest] == 0) continue;
        if (coldest == keep.end() || warmth[*it] < warmth[*coldest] ||
            (warmth[*it] == warmth[*coldest] && pr.groups[*it].height > pr.groups[*coldest].height))
          coldest = it;
      }
      spills.push_back(Spill{pr.groups[*coldest].pieces[0].tensor, r + 1, warmth[*coldest]});
      spilled.push_back(*coldest);
      keep.erase(coldest);
    }
    remaining = std::move(spilled);
  }
  return plans;
}

struct WeightCopy {
  int tensor;
  size_t region;
  double macs_per_byte;
};

struct Layout {
  std::vector<MemoryRegion> regions;
  std::vector<RegionPlan> plans;  // per region
  std::vector<Spill> spills;
  std::vector<WeightCopy> copies;
};

// Weights (the streamed input of ops with MACs, used nowhere else) by MACs per byte, copied into
// the room fast regions have left.
std::vector<WeightCopy> copy_weights(LoweredProgram& p, const std::vector<MemoryRegion>& regions,
                                     std::vector<RegionPlan>& plans) {
  std::vector<double> macs(p.tensors.size(), 0.0);
  std::vector<bool> other_use(p.tensors.size(), false);
  for (const ProgramOp& op : p.ops) {
    for (size_t slot = 0; slot < op.inputs.size(); ++slot) {
      const int t = op.inputs[slot];
      if (int(slot) == op.streamed_input && op.macs > 0) macs[t] += double(op.macs);
      else other_use[t] = true;
    }
  }
  std::vector<int> weights;
  for (size_t t = 0; t < p.tensors.size(); ++t)
    if (p.tensors[t].constant && macs[t] > 0 && !other_use[t]) weights.push_back(int(t));
  auto density = [&](int t) { return macs[t] / double(p.tensors[t].byte_size()); };
  std::stable_sort(weights.begin(), weights.end(), [&](int a, int b) { return density(a) > density(b); });
  std::vector<WeightCopy> copies;
  for (int t : weights) {
    for (size_t r = 0; r < regions.size(); ++r) {
      const int64_t size = aligned_size(p.tensors[t]);
      if (!regions[r].fast || plans[r].used + size > int64_t(regions[r].capacity)) continue;
      p.tensors[t].region = int(r);
      p.tensors[t].ram_offset = plans[r].used;
      plans[r].used += size;
      copies.push_back(WeightCopy{t, r, density(t)});
      break;
    }
  }
  return copies;
}

std::string op_name(const LoweredProgram& p, int op) {
  if (op < 0) return "program start";
  if (op >= int(p.ops.size())) return "program end";
  const std::string& kind = p.ops[op].ir_kind;
  return "op " + std::to_string(op) + (kind.empty() ? "" : " (" + kind + ")");
}

// Why the arena exceeds the lower bound, one line per cause: the tensor at the top of the
// arena and every tensor below it that lives at one of its ops (the pairs that keep it up).
std::vector<std::string> explain_excess(const LoweredProgram& p, const std::vector<Lifetime>& life,
                                        const std::vector<int64_t>& live, const Outcome& o, int64_t arena) {
  std::vector<std::string> lines;
  const int64_t excess = arena - o.lower_bound;
  if (excess <= 0) return lines;
  int top = -1;
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const ProgramTensor& pt = p.tensors[t];
    if (is_root(pt) && life[t].first <= life[t].last && pt.offset + aligned_size(pt) == arena) {
      top = int(t);
      break;
    }
  }
  if (top < 0) return lines;
  const ProgramTensor& x = p.tensors[top];
  int64_t busiest = 0;
  for (int s = life[top].first; s <= life[top].last; ++s) busiest = std::max(busiest, live[s + 1]);
  std::ostringstream os;
  os << excess << " bytes above the lower bound: " << x.name << " (" << aligned_size(x) << " bytes, live "
 << op_name(p, life[top].first) << " to " << op_name(p, life[top].last) << ") lies at ["
     << x.offset << ", " << arena << "), the top of the arena; at most " << busiest << " bytes are live at any of its ops, so "
     << x.offset + aligned_size(x) - busiest << " bytes below it are gaps no placement found a use for";
  lines.push_back(os.str());
  for (const Group& g : o.problem.groups) {
    if (g.pieces.size() < 2 || std::none_of(g.pieces.begin(), g.pieces.end(), [&](const Piece& pc) { return pc.tensor == top; }))
      continue;
    const auto extent = group_extent(p, g);
    const int64_t fullest = *std::max_element(extent.begin(), extent.end());
    std::ostringstream chain;
    chain << x.name << " is one of " << g.pieces.size() << " tensors that in-place ops tie at fixed distances ("
          << p.tensors[g.pieces.front().tensor].name << " to " << p.tensors[g.pieces.back().tensor].name
          << "): the chain spans " << g.height << " bytes, " << g.height - fullest
          << " more than it holds at its fullest op, as each op writes at its lead below or above its input";
    lines.push_back(chain.str());
  }
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const ProgramTensor& y = p.tensors[t];
    if (int(t) == top || !is_root(y) || !overlaps(life[t], life[top]) || y.offset >= x.offset) continue;
    std::ostringstream line;
    line << x.name << " and " << y.name << " are both live at " << op_name(p, std::max(life[t].first, life[top].first))
         << ": " << y.name << " holds [" << y.offset << ", " << y.offset + aligned_size(y) << ")";
    lines.push_back(line.str());
  }
  const std::string nodes = std::to_string(o.placement.nodes);
  if (o.placement.exhaustive)
    lines.push_back("exact search over " + nodes + " placement orders proves no plan of these lifetimes is smaller");
  else if (o.placement.nodes == 0)
    lines.push_back("exact search was not run");
  else if (!o.placement.complete)
    lines.push_back("search stopped after " + nodes + " placement orders: the bound may still be reachable");
  else
    lines.push_back("search over all " + nodes + " first-fit placement orders found nothing smaller (with in-place "
                    "chains this is not a proof)");
  return lines;
}

// The liveness bound without in-place execution and with every in-place pair the kernels allow
// (the planner keeps only the pairs that pay; its bound lies in between).
struct Bounds {
  uint32_t without_in_place, all_in_place;
};

std::string plan_report_json(const LoweredProgram& p, const std::vector<Lifetime>& life, const Outcome& o,
                             const Bounds& bounds, const Layout& layout) {
  const auto live = live_bytes(p, life);
  const int peak = int(std::max_element(live.begin(), live.end()) - live.begin()) - 1;
  int64_t padding = 0;
  std::ostringstream peak_tensors;
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    if (life[t].first > peak || peak > life[t].last) continue;
    padding += aligned_size(p.tensors[t]) - p.tensors[t].byte_size();
    peak_tensors << (peak_tensors.tellp() > 0 ? "," : "") << json_string(p.tensors[t].name);
  }
  int64_t activations = 0;
  for (const RegionPlan& plan : layout.plans) activations += align_up(uint32_t(plan.placement.arena), kTensorAlign);
  const bool one_region = p.region_bytes.size() == 1;
  std::ostringstream os;
  os << "{\"arena\":" << activations << ",\"lower_bound\":" << p.arena_lower_bound
     << ",\"lower_bound_without_in_place\":" << bounds.without_in_place
     << ",\"lower_bound_all_in_place\":" << bounds.all_in_place << ",\"peak_op\":" << peak
     << ",\"peak_tensors\":[" << peak_tensors.str() << "],\"alignment_padding\":" << padding
     << ",\"method\":" << json_string(o.placement.method)
     << ",\"optimal\":" << (one_region && (activations == p.arena_lower_bound || o.placement.exhaustive) ? "true" : "false")
     << ",\"search_nodes\":" << o.placement.nodes << ",\"in_place\":[";
  bool first = true;
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const ProgramTensor& out = p.tensors[t];
    if (out.in_place_of < 0) continue;
    int op = 0;
    while (std::find(p.ops[op].outputs.begin(), p.ops[op].outputs.end(), int(t)) == p.ops[op].outputs.end()) ++op;
    const ProgramTensor& in = p.tensors[root_of(p, out.in_place_of)];
    os << (first ? "" : ",") << "{\"op\":" << op << ",\"input\":" << json_string(p.tensors[out.in_place_of].name)
       << ",\"output\":" << json_string(out.name) << ",\"shift\":" << int64_t(in.offset) - int64_t(out.offset) << "}";
    first = false;
  }
  os << "],\"embedded\":[";
  first = true;
  for (const Embedding& e : embeddings(p)) {
    os << (first ? "" : ",") << "{\"op\":" << e.op << ",\"part\":" << e.part << ",\"host\":" << e.host
       << ",\"offset\":" << e.offset << "}";
    first = false;
  }
  os << "],\"regions\":[";
  for (size_t r = 0; r < p.region_bytes.size(); ++r) {
    const MemoryRegion& region = layout.regions[r];
    os << (r ? "," : "") << "{\"name\":" << json_string(region.name) << ",\"bytes\":" << p.region_bytes[r]
       << ",\"activations\":" << align_up(uint32_t(layout.plans[r].placement.arena), kTensorAlign)
       << ",\"fast\":" << (region.fast ? "true" : "false");
    if (region.capacity != UINT32_MAX) os << ",\"capacity\":" << region.capacity;
    os << "}";
  }
  os << "],\"spilled\":[";
  for (size_t i = 0; i < layout.spills.size(); ++i) {
    const Spill& sp = layout.spills[i];
    os << (i ? "," : "") << "{\"tensor\":" << json_string(p.tensors[sp.tensor].name) << ",\"to\":"
       << json_string(layout.regions[sp.region].name) << ",\"accesses_per_byte\":" << sp.heat << "}";
  }
  os << "],\"copied_weights\":[";
  for (size_t i = 0; i < layout.copies.size(); ++i) {
    const WeightCopy& c = layout.copies[i];
    os << (i ? "," : "") << "{\"tensor\":" << json_string(p.tensors[c.tensor].name) << ",\"region\":"
       << json_string(layout.regions[c.region].name) << ",\"bytes\":" << p.tensors[c.tensor].byte_size()
       << ",\"macs_per_byte\":" << c.macs_per_byte << "}";
  }
  os << "],\"excess\":[";
  const auto lines = one_region ? explain_excess(p, life, live, o, activations) : std::vector<std::string>{};
  for (size_t i = 0; i < lines.size(); ++i) os << (i ? "," : "") << json_string(lines[i]);
  os << "]}";
  return os.str();
}

// Whether the op computing `s`'s update can write the state itself: it is the update's one
// writer (no copy or cat: those may embed their tensors in it), reads no byte of the state, and
// no later op reads the state (every read of the old value comes first); the update is no
// program output and no part or host of an embedding. Then the update becomes a view of the
// state for the ops reading it.
bool write_update_in_place(LoweredProgram& p, const StateUpdate& s) {
  const ProgramTensor& update = p.tensors[size_t(s.update)];
  if (update.alias_of >= 0 || update.constant) return false;
  for (int t : p.outputs) {
    if (root_of(p, t) == s.update) return false;
  }
  for (const Embedding& e : embeddings(p)) {
    if (e.part == s.update || e.host == s.update || e.host == s.state) return false;
  }
  int writer = -1;
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const auto& out = p.ops[i].outputs;
    if (std::find(out.begin(), out.end(), s.update) == out.end()) continue;
    if (writer >= 0) return false;
    writer = int(i);
  }
  if (writer < 0) return false;
  const ProgramOp& op = p.ops[size_t(writer)];
  const KernelId k = op.kernel;
  const bool copies = computes<KernelId::strided_copy_b8>(k) || computes<KernelId::strided_copy_b32>(k) ||
                      computes<KernelId::concat_slice_s8>(k) || computes<KernelId::concat_slice_f32>(k);
  if (copies || op.outputs.size() != 1) return false;
  for (size_t i = size_t(writer); i < p.ops.size(); ++i) {
    for (int t : p.ops[i].inputs) {
      if (root_of(p, t) == s.state) return false;
    }
  }
  p.ops[size_t(writer)].outputs[0] = s.state;
  for (ProgramTensor& t : p.tensors) {
    if (t.alias_of == s.update) t.alias_of = s.state;
  }
  p.tensors[size_t(s.update)].alias_of = s.state;
  return true;
}

// The other state whose old value `s`'s update is (a view of it: `a.copy_(b)`), or -1.
int state_copied_into(const LoweredProgram& p, const StateUpdate& s) {
  const int from = root_of(p, s.update);
  for (const StateUpdate& t : p.states) {
    if (t.state == from && t.state != s.state) return from;
  }
  return -1;
}

// Every state gets its update by the end of the run: written in place by the op computing it,
// or copied there by a strided copy appended after the last op (an identity gather). A copy
// that reads another state's old value runs before that state is written: such a state is not
// written in place, and its copy follows the copies reading it. States copied from each other
// in a cycle (a swap) would need a temporary: refused.
void write_state_updates(LoweredProgram& p, bool in_place) {
  std::vector<const StateUpdate*> copies;
  for (const StateUpdate& s : p.states) {
    const bool written = std::any_of(p.ops.begin(), p.ops.end(), [&](const ProgramOp& op) {
      return std::find(op.outputs.begin(), op.outputs.end(), s.state) != op.outputs.end();
    });
    const bool read_by_a_copy = std::any_of(p.states.begin(), p.states.end(), [&](const StateUpdate& t) {
      return state_copied_into(p, t) == s.state;
    });
    if (written || (in_place && !read_by_a_copy && write_update_in_place(p, s))) continue;
    copies.push_back(&s);
  }
  while (!copies.empty()) {
    // the first pending copy whose state no other pending copy still has to read
    auto next = std::find_if(copies.begin(), copies.end(), [&](const StateUpdate* s) {
      return std::none_of(copies.begin(), copies.end(), [&](const StateUpdate* t) {
        return t != s && state_copied_into(p, *t) == s->state;
      });
    });
    if (next == copies.end()) {
      const StateUpdate& s = *copies.front();
      throw CompileError("state " + p.tensors[size_t(s.state)].name + ": its update is the old value of state " +
                         p.tensors[size_t(state_copied_into(p, s))].name +
                         ", and the states' updates read each other's old values in a cycle (a swap); mcuflow "
                         "copies updates into states one after another and keeps no temporary for a cycle");
    }
    const StateUpdate& s = **next;
    copies.erase(next);
    const ProgramTensor& state = p.tensors[size_t(s.state)];
    const uint32_t bits = format::dtype_bits(state.dtype);
    if (bits != 8 && bits != 32) throw CompileError("state " + state.name + ": only 8- and 32-bit states are supported");
    kernels::StridedCopyParams c{};
    const size_t lead = kernels::kMaxRank - state.dims.size();
    for (size_t d = 0; d < kernels::kMaxRank; ++d) {
      c.in_dims[d] = c.out_dims[d] = d < lead ? 1 : state.dims[d - lead];
      c.num[d] = c.den[d] = 1;
    }
    ProgramOp copy;
    copy.kernel = bits == 8 ? KernelId::strided_copy_b8 : KernelId::strided_copy_b32;
    copy.inputs = {s.update};
    copy.outputs = {s.state};
    copy.params.resize(sizeof(c));
    std::memcpy(copy.params.data(), &c, sizeof(c));
    copy.ir_kind = "state_update";
    copy.reason = "the update of state " + state.name + " is computed before its last read";
    p.ops.push_back(std::move(copy));
  }
}

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
  for (const StateUpdate& s : p.states) touch(s.state, -1), touch(s.state, n_ops);  // kept between runs
  // A part whose copy was dropped holds its values from its host's write (a slice of it) to its
  // host's last read (a cat into it): it lives while either does. A host that no op touches (a
  // cat whose copies were all dropped, read only through dropped slices) lives while its parts
  // do, so that it is placed and they with it.
  const auto extend = [&](int t, const Lifetime& by) {
    if (by.first > by.last) return;
    life[t] = life[t].first > life[t].last ? by
                                           : Lifetime{std::min(life[t].first, by.first), std::max(life[t].last, by.last)};
  };
  std::vector<bool> untouched(p.tensors.size(), false);
  for (const Embedding& e : p.dropped_copies) untouched[e.host] = life[e.host].first > life[e.host].last;
  for (const Embedding& e : p.dropped_copies)
    if (untouched[e.host]) extend(e.host, life[e.part]);
  for (const Embedding& e : p.dropped_copies) extend(e.part, life[e.host]);
  return life;
}

std::vector<Embedding> embeddings(const LoweredProgram& p) {
  const size_t n = p.tensors.size();
  std::vector<int> writers(n, 0), readers(n, 0);
  std::vector<bool> io(n, false);
  for (const ProgramOp& op : p.ops) {
    for (int t : op.inputs) ++readers[root_of(p, t)];
    for (int t : op.outputs) ++writers[root_of(p, t)];
  }
  for (int t : p.inputs) io[root_of(p, t)] = true;
  for (int t : p.outputs) io[root_of(p, t)] = true;
  for (const StateUpdate& s : p.states) io[s.state] = true;  // at its own place between runs
  std::vector<Embedding> found;
  // A host of a dropped copy keeps that part at its fixed place, so it cannot become a part
  // itself (placements do not nest).
  std::vector<bool> part(n, false), dropped_host(n, false);
  for (const Embedding& e : p.dropped_copies) part[e.part] = dropped_host[e.host] = true;
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const ProgramOp& op = p.ops[i];
    // One tensor in, one out; a tier kernel's later inputs are its constants (a cat's table).
    if (op.inputs.empty() || op.outputs.size() != 1) continue;
    if (!std::all_of(op.inputs.begin() + 1, op.inputs.end(), [&](int t) { return p.tensors[t].constant; })) continue;
    const int in = root_of(p, op.inputs[0]), out = root_of(p, op.outputs[0]);
    if (!is_root(p.tensors[in]) || !is_root(p.tensors[out]) || in == out) continue;
    Embedding e{int(i), -1, -1, 0};
    if (contract_of(op).walk != aliasing::Walk::kOntoSource) continue;
    const bool copy = computes<KernelId::strided_copy_b8>(op.kernel) || computes<KernelId::strided_copy_b32>(op.kernel);
    if (op.params.size() != (copy ? sizeof(kernels::StridedCopyParams) : sizeof(kernels::ConcatSliceParams))) continue;
    int64_t output_minus_input = 0;
    if (!aliasing::onto_source_shift(op.kernel, op.params.data(), &output_minus_input)) continue;
    if (copy) {
      if (writers[out] != 1) continue;
      e.part = out, e.host = in, e.offset = output_minus_input;
    } else {
      if (writers[in] != 1 || readers[in] != 1) continue;
      e.part = in, e.host = out, e.offset = -output_minus_input;
    }
    if (io[e.part] || e.offset % kTensorAlign != 0 || part[e.part] || dropped_host[e.part]) continue;
    part[e.part] = true;
    found.push_back(e);
  }
  // A host that is a part itself would nest placements: keep such parts separate.
  found.erase(std::remove_if(found.begin(), found.end(), [&](const Embedding& e) { return part[e.host]; }), found.end());
  found.insert(found.end(), p.dropped_copies.begin(), p.dropped_copies.end());
  return found;
}

uint32_t liveness_lower_bound(const LoweredProgram& p) {
  const auto live = live_bytes(p, root_lifetimes(p));
  return uint32_t(*std::max_element(live.begin(), live.end()));
}

int64_t in_place_shift(const LoweredProgram& p, const ProgramOp& op, size_t slot) {
  if (!runs_in_place(op) || op.outputs.size() != 1 || slot >= op.inputs.size()) return -1;
  const ProgramTensor& in = p.tensors[op.inputs[slot]];
  const ProgramTensor& out = p.tensors[op.outputs[0]];
  if (in.constant) return -1;
  const uint32_t in_element = format::element_bytes(in.dtype), out_element = format::element_bytes(out.dtype);
  const aliasing::Contract c = contract_of(op);
  if (c.walk == aliasing::Walk::kExactlyInPlace) {  // (pairs place outputs by the root: a view of all of it starts there)
    const bool whole_root = p.tensors[root_of(p, op.inputs[slot])].byte_size() == in.byte_size();
    return whole_root && in.dtype == out.dtype && in.byte_size() == out.byte_size() ? 0 : -1;
  }
  if (c.walk == aliasing::Walk::kElementwise) {
    if (in.byte_size() / in_element != out.byte_size() / out_element) return -1;
    return align_up(uint32_t(aliasing::elementwise_shift(in.byte_size(), out.byte_size())), kTensorAlign);
  }
  if (slot != 0 || in.dtype != out.dtype) return -1;
  return align_up(uint32_t(aliasing::window_shift_below(aliasing::window_of(c.geometry, op.params.data()), in_element)),
                  kTensorAlign);
}

int64_t in_place_shift_above(const LoweredProgram& p, const ProgramOp& op, size_t slot) {
  const aliasing::Contract c = contract_of(op);
  if (c.walk != aliasing::Walk::kBothWays || slot != 0 || op.outputs.size() != 1) return -1;
  const ProgramTensor& in = p.tensors[op.inputs[0]];
  if (in.constant || in.dtype != p.tensors[op.outputs[0]].dtype) return -1;
  return align_up(uint32_t(aliasing::window_shift_above(aliasing::window_of(c.geometry, op.params.data()),
                                                        format::element_bytes(in.dtype))),
                  kTensorAlign);
}

void plan_memory(LoweredProgram& p, const PlanOptions& options) {
  for (auto& t : p.tensors) t.in_place_of = -1;  // from an earlier plan
  write_state_updates(p, options.in_place && options.reuse);
  const uint32_t bound_without_in_place = liveness_lower_bound(p);
  const bool in_place = options.in_place && options.reuse;
  const auto life = root_lifetimes(p);

  // In-place pairs tie tensors into chains whose outputs start below their inputs; a chain can
  // drift down by more than it saves. Candidates: no pairs, every pair, and only the pairs at
  // ops that would otherwise exceed the lowest bound (a pair saves bytes at its own op only).
  std::vector<std::vector<InPlacePair>> variants{{}};
  int64_t lowest = bound_without_in_place;  // the bound with every in-place pair
  if (in_place) {
    const auto candidates = pair_candidates(p, life);
    const auto live = live_bytes(p, life);
    lowest = 0;
    std::vector<int64_t> saving(p.ops.size() + 1, 0);
    for (const auto& [pair, saved] : candidates) saving[pair.op] = saved;
    for (size_t s = 0; s < live.size(); ++s) lowest = std::max(lowest, live[s] - (s >= 1 ? saving[s - 1] : 0));
    std::vector<InPlacePair> all, needed;
    for (const auto& [pair, saved] : candidates) {
      all.push_back(pair);
      if (live[pair.op + 1] > lowest) needed.push_back(pair);
    }
    if (!needed.empty()) variants.push_back(needed);
    if (all.size() > needed.size()) variants.push_back(all);
  }
  Outcome best = plan_with(p, life, variants[0], options.reuse);
  for (size_t v = 1; v < variants.size(); ++v) {
    Outcome o = plan_with(p, life, variants[v], options.reuse);
    if (o.placement.arena < best.placement.arena) best = std::move(o);
  }
  // The chain at the top of the arena may drift more than some of its pairs save: drop the pair
  // whose removal shrinks the arena most, while one does.
  for (int round = 0; round < kDropRounds && !best.pairs.empty(); ++round) {
    const Problem& pr = best.problem;
    std::vector<bool> at_top(p.tensors.size(), false);
    for (size_t g = 0; g < pr.groups.size(); ++g)
      if (best.placement.offset[g] + pr.groups[g].height == best.placement.arena)
        for (const Piece& pc : pr.groups[g].pieces) at_top[pc.tensor] = true;
    std::optional<Outcome> better;
    for (size_t k = 0; k < best.pairs.size(); ++k) {
      if (!at_top[best.pairs[k].output]) continue;
      std::vector<InPlacePair> fewer = best.pairs;
      fewer.erase(fewer.begin() + long(k));
      Outcome o = plan_with(p, life, std::move(fewer), options.reuse);
      if (o.placement.arena < (better ? better->placement.arena : best.placement.arena)) better = std::move(o);
    }
    if (!better) break;
    best = std::move(*better);
  }
  if (options.reuse && options.exact && best.placement.arena > best.lower_bound) {
    const bool small = best.problem.groups.size() <= kExactGroups;
    best.placement =
        Search(best.problem, best.lower_bound, best.placement, small ? kExactNodeBudget : kLargeNodeBudget, small).run();
  }
  for (const InPlacePair& ip : best.pairs) p.tensors[ip.output].in_place_of = ip.input;

  Layout layout;
  layout.regions = options.reuse && !options.regions.empty() ? options.regions : std::vector<MemoryRegion>{{"arena"}};
  if (layout.regions.size() > format::kMaxRegions)
    throw CompileError("at most " + std::to_string(format::kMaxRegions) + " memory regions are supported");
  layout.plans = assign_regions(p, best.problem, best.placement, layout.regions, layout.spills);
  for (auto& t : p.tensors) t.region = 0, t.ram_offset = -1;
  for (size_t r = 0; r < layout.plans.size(); ++r) {
    RegionPlan& plan = layout.plans[r];
    for (size_t k = 0; k < plan.groups.size(); ++k) {
      for (const Piece& pc : best.problem.groups[plan.groups[k]].pieces) {
        p.tensors[pc.tensor].offset = uint32_t(plan.placement.offset[k] + pc.rel);
        p.tensors[pc.tensor].region = int(r);
      }
    }
    plan.used = align_up(uint32_t(plan.placement.arena), kTensorAlign);
  }
  for (auto& t : p.tensors) {
    if (t.constant || t.alias_of < 0) continue;
    t.offset = p.tensors[t.alias_of].offset;
    t.region = p.tensors[t.alias_of].region;
  }
  for (const Embedding& e : p.dropped_copies) {  // no op copies these: they must be where they are read
    const ProgramTensor &part = p.tensors[size_t(e.part)], &host = p.tensors[size_t(e.host)];
    if (part.region != host.region || int64_t(part.offset) != int64_t(host.offset) + e.offset)
      throw CompileError("internal: " + part.name + " was not planned inside " + host.name);
  }
  if (options.copy_weights && options.reuse) layout.copies = copy_weights(p, layout.regions, layout.plans);
  size_t used_regions = layout.plans.size();
  while (used_regions > 1 && layout.plans[used_regions - 1].used == 0) --used_regions;
  p.region_bytes.clear();
  for (size_t r = 0; r < used_regions; ++r) p.region_bytes.push_back(uint32_t(layout.plans[r].used));
  p.arena_bytes = p.region_bytes[0];
  p.arena_lower_bound = uint32_t(best.lower_bound);
  p.plan_report = plan_report_json(p, life, best, Bounds{bound_without_in_place, uint32_t(lowest)}, layout);
}

}  // namespace mcuflow::compiler
