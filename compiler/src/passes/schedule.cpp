// Operator scheduling: the execution order decides which tensors are live together, so for
// graphs with branches (residual adds, concatenations) it decides the liveness peak. The exact
// search is a dynamic program over the sets of executed ops (the peak of reaching a set does not
// depend on how the ops inside it were ordered, only on the set); when there are too many sets
// a greedy order is used instead. Any topological order computes the same bytes.
#include <algorithm>
#include <map>
#include <sstream>

#include "mcuflow/compiler/planner.h"

namespace mcuflow::compiler {
namespace {

// Writers of disjoint slices of one tensor (the ops of a cat) may run in any order.
bool writes_a_slice(KernelId k) {
  return computes<KernelId::concat_slice_s8>(k) || computes<KernelId::concat_slice_f32>(k);
}

using Bits = std::vector<uint64_t>;

bool has(const Bits& b, int i) { return (b[size_t(i) / 64] >> (i % 64)) & 1u; }
void set(Bits& b, int i) { b[size_t(i) / 64] |= uint64_t(1) << (i % 64); }

// The ops, the root arena tensors they touch and the order constraints between them.
class OpGraph {
 public:
  explicit OpGraph(const LoweredProgram& p) : n_(int(p.ops.size())), size_(p.tensors.size(), 0) {
    auto root = [&](int t) { return p.tensors[t].alias_of >= 0 ? p.tensors[t].alias_of : t; };
    std::vector<std::vector<std::pair<int, bool>>> uses(p.tensors.size());  // (op, writes) in order
    touched_.resize(n_);
    users_.resize(p.tensors.size());
    for (int i = 0; i < n_; ++i) {
      for (int t : p.ops[i].inputs) {
        if (!p.tensors[root(t)].constant) uses[root(t)].emplace_back(i, false);
      }
      for (int t : p.ops[i].outputs) uses[root(t)].emplace_back(i, true);
    }
    input_.assign(p.tensors.size(), false);
    output_.assign(p.tensors.size(), false);
    for (int t : p.inputs) input_[root(t)] = true;
    for (int t : p.outputs) output_[root(t)] = true;
    for (const StateUpdate& s : p.states) input_[s.state] = output_[s.state] = true;  // kept between runs
    preds_.resize(n_);
    for (size_t r = 0; r < p.tensors.size(); ++r) {
      if (p.tensors[r].constant || p.tensors[r].streamed || p.tensors[r].alias_of >= 0) continue;
      size_[r] = align_up(p.tensors[r].byte_size(), kTensorAlign);
      for (size_t b = 0; b < uses[r].size(); ++b) {
        const auto [op, writes] = uses[r][b];
        touched_[op].push_back(int(r));
        if (users_[r].empty() || users_[r].back() != op) users_[r].push_back(op);
        for (size_t a = 0; a < b; ++a) {
          const auto [before, wrote] = uses[r][a];
          if (before == op || (!wrote && !writes)) continue;  // two reads never conflict
          if (wrote && writes && writes_a_slice(p.ops[before].kernel) && writes_a_slice(p.ops[op].kernel)) continue;
          preds_[op].push_back(before);
        }
      }
    }
    // An embedded part lies inside its host (planner.h embeddings): counted as free, which holds
    // while the host lives, i.e. everywhere but before a cat's first slice or after a slice's host dies.
    for (const Embedding& e : embeddings(p)) size_[e.part] = 0;
    for (auto& v : touched_) {
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
    }
    for (auto& v : preds_) {
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
    }
  }

  int ops() const { return n_; }
  Bits empty() const { return Bits(size_t(n_ + 63) / 64, 0); }

  bool ready(const Bits& done, int op) const {
    if (has(done, op)) return false;
    for (int q : preds_[op])
      if (!has(done, q)) return false;
    return true;
  }

  // Program inputs are all live before the first op; `kept`: only those still live after it
  // (some op reads them, or they are outputs too).
  int64_t input_bytes(bool kept) const {
    int64_t m = 0;
    for (size_t r = 0; r < size_.size(); ++r)
      if (input_[r] && (!kept || output_[r] || !users_[r].empty())) m += size_[r];
    return m;
  }
  int64_t end_bytes() const {
    int64_t m = 0;
    for (size_t r = 0; r < size_.size(); ++r)
      if (output_[r]) m += size_[r];
    return m;
  }

  // Bytes live while `op` runs after the ops in `done` (holding `mem` live bytes), and after it.
  std::pair<int64_t, int64_t> step(const Bits& done, int64_t mem, int op) const {
    int64_t during = mem, freed = 0;
    for (int r : touched_[op]) {
      bool started = input_[r], finished = !output_[r];
      for (int u : users_[r]) {
        if (u == op) continue;
        started = started || has(done, u);
        finished = finished && has(done, u);
      }
      if (!started) during += size_[r];
      if (finished) freed += size_[r];
    }
    return {during, during - freed};
  }

 private:
  int n_;
  std::vector<int64_t> size_;              // aligned bytes of root arena tensors, else 0
  std::vector<std::vector<int>> touched_;  // per op: the roots it reads or writes
  std::vector<std::vector<int>> users_;    // per root: the ops touching it, in order
  std::vector<std::vector<int>> preds_;    // per op: ops that must run before it
  std::vector<bool> input_, output_;
};

struct Order {
  std::vector<int> ops;
  int64_t peak = 0;
};

int64_t peak_of(const OpGraph& g, const std::vector<int>& order) {
  Bits done = g.empty();
  int64_t mem = g.input_bytes(true), peak = g.input_bytes(false);
  for (int op : order) {
    const auto [during, after] = g.step(done, mem, op);
    peak = std::max(peak, during);
    mem = after;
    set(done, op);
  }
  return std::max(peak, g.end_bytes());
}

// Dynamic programming over sets of executed ops, layer by layer; empty when the sets exceed
// `max_states` in total.
Order exact_order(const OpGraph& g, size_t max_states, size_t& visited) {
  struct State {
    Bits done;
    int64_t mem, peak;
    int parent, op;
  };
  std::vector<State> states{State{g.empty(), g.input_bytes(true), g.input_bytes(false), -1, -1}};
  std::vector<int> layer{0};
  for (int k = 0; k < g.ops(); ++k) {
    std::map<Bits, int> next;
    std::vector<int> next_layer;
    for (int s : layer) {
      for (int op = 0; op < g.ops(); ++op) {
        if (!g.ready(states[s].done, op)) continue;
        const auto [during, after] = g.step(states[s].done, states[s].mem, op);
        const int64_t peak = std::max(states[s].peak, during);
        Bits done = states[s].done;
        set(done, op);
        auto it = next.find(done);
        if (it == next.end()) {
          if (states.size() >= max_states) {
            visited = states.size();
            return {};
          }
          next.emplace(done, int(states.size()));
          next_layer.push_back(int(states.size()));
          states.push_back(State{std::move(done), after, peak, s, op});
        } else if (peak < states[it->second].peak) {
          states[it->second].peak = peak;
          states[it->second].parent = s;
          states[it->second].op = op;
        }
      }
    }
    layer = std::move(next_layer);
  }
  visited = states.size();
  Order best;
  best.peak = std::max(states[layer[0]].peak, g.end_bytes());
  for (int s = layer[0]; states[s].parent >= 0; s = states[s].parent) best.ops.push_back(states[s].op);
  std::reverse(best.ops.begin(), best.ops.end());
  return best;
}

// Repeatedly the ready op leaving the fewest live bytes (then the fewest while it runs, then the
// earliest in the exported order).
Order greedy_order(const OpGraph& g) {
  Order o;
  Bits done = g.empty();
  int64_t mem = g.input_bytes(true);
  for (int k = 0; k < g.ops(); ++k) {
    int pick = -1;
    std::pair<int64_t, int64_t> pick_key;
    for (int op = 0; op < g.ops(); ++op) {
      if (!g.ready(done, op)) continue;
      const auto [during, after] = g.step(done, mem, op);
      if (pick < 0 || std::make_pair(after, during) < pick_key) {
        pick = op;
        pick_key = {after, during};
      }
    }
    o.ops.push_back(pick);
    mem = pick_key.first;
    set(done, pick);
  }
  o.peak = peak_of(g, o.ops);
  return o;
}

}  // namespace

uint32_t schedule_peak(const LoweredProgram& p, const std::vector<int>& order) {
  return uint32_t(peak_of(OpGraph(p), order));
}

void schedule_ops(LoweredProgram& p, const ScheduleOptions& options) {
  const OpGraph g(p);
  std::vector<int> exported(p.ops.size());
  for (size_t i = 0; i < exported.size(); ++i) exported[i] = int(i);
  const int64_t exported_peak = peak_of(g, exported);
  size_t visited = 0;
  Order best = exact_order(g, options.max_states, visited);
  const char* method = "exact";
  if (best.ops.empty() && !p.ops.empty()) {
    best = greedy_order(g);
    method = "greedy";
  }
  const bool reorder = !p.ops.empty() && best.peak < exported_peak;
  if (reorder) {
    std::vector<ProgramOp> ops;
    for (int i : best.ops) ops.push_back(std::move(p.ops[i]));
    p.ops = std::move(ops);
  }
  std::ostringstream os;
  os << "{\"method\":\"" << method << "\",\"states\":" << visited << ",\"exported_peak\":" << exported_peak
     << ",\"peak\":" << (reorder ? best.peak : exported_peak) << ",\"reordered\":" << (reorder ? "true" : "false")
     << "}";
  p.schedule_report = os.str();
}

}  // namespace mcuflow::compiler
