#include <map>

#include "families.h"

namespace mcuflow::compiler {

const std::vector<OpDef>& op_registry() {
  static const std::vector<OpDef> kRegistry = [] {
    std::vector<OpDef> all;
    for (auto family : {conv_ops, matmul_ops, norm_ops, clamp_ops, binary_ops, activation_ops, pool_ops, reduce_ops,
                        softmax_ops, view_ops, copy_ops, resize_ops, mask_ops, convert_ops}) {
      for (const OpDef& def : family()) all.push_back(def);
    }
    return all;
  }();
  return kRegistry;
}

const OpDef* find_op(const std::string& kind) {
  static const std::map<std::string, const OpDef*> kByKind = [] {
    std::map<std::string, const OpDef*> by_kind;
    for (const OpDef& def : op_registry()) {
      if (!by_kind.emplace(def.kind, &def).second)
        throw CompileError(std::string("internal: op kind ") + def.kind + " is registered twice");
    }
    return by_kind;
  }();
  auto it = kByKind.find(kind);
  return it == kByKind.end() ? nullptr : it->second;
}

bool always_int16(const Graph&, const Op&) { return true; }

std::string int4_rejection(const Graph& g, const Op& op) {
  const OpDef* def = find_op(op.kind);
  return def && def->int4 ? def->int4(g, op) : "no int4-weight kernel for " + op.kind;
}

bool has_trait(const std::string& kind, OpTrait trait) {
  const OpDef* def = find_op(kind);
  return def != nullptr && (def->traits & trait) != 0;
}

Element output_element(const Graph& g, const Op& op) {
  const OpDef* def = find_op(op.kind);
  if (def == nullptr) return Element::kReal;
  if (def->output_quant == OutputQuant::kMask || picks_masks(g, op)) return Element::kMask;
  if ((def->output_quant == OutputQuant::kInput || def->output_quant == OutputQuant::kAverage) && !op.inputs.empty())
    return g.tensors[size_t(op.inputs[0])].element;
  return Element::kReal;
}

std::vector<std::string> frontend_kinds() {
  std::vector<std::string> kinds;
  for (const OpDef& def : op_registry()) {
    if ((def.traits & kInternal) == 0) kinds.push_back(def.kind);
  }
  return kinds;
}

}  // namespace mcuflow::compiler
