#include "mcuflow/compiler/ir.h"

#include <algorithm>
#include <sstream>

namespace mcuflow::compiler {

bool Quant::operator==(const Quant& o) const {
  return valid == o.valid && scale == o.scale && zero_point == o.zero_point && bits == o.bits &&
         symmetric == o.symmetric && axis == o.axis && scales == o.scales && zero_points == o.zero_points;
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t Op::int_attr(const std::string& name) const {
  auto it = attrs.find(name);
  if (it == attrs.end()) throw CompileError(where() + ": missing attribute '" + name + "'");
  if (auto v = std::get_if<int64_t>(&it->second)) return *v;
  if (auto v = std::get_if<double>(&it->second)) return static_cast<int64_t>(*v);
  throw CompileError(where() + ": attribute '" + name + "' must be an integer");
}

double Op::float_attr(const std::string& name) const {
  auto it = attrs.find(name);
  if (it == attrs.end()) throw CompileError(where() + ": missing attribute '" + name + "'");
  if (auto v = std::get_if<double>(&it->second)) return *v;
  if (auto v = std::get_if<int64_t>(&it->second)) return static_cast<double>(*v);
  throw CompileError(where() + ": attribute '" + name + "' must be a number");
}

const std::vector<int64_t>& Op::ints_attr(const std::string& name) const {
  auto it = attrs.find(name);
  if (it == attrs.end()) throw CompileError(where() + ": missing attribute '" + name + "'");
  if (auto v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
  throw CompileError(where() + ": attribute '" + name + "' must be a list of integers");
}

std::string Op::where() const { return kind + " at " + (source.empty() ? std::string("<unknown>") : source); }

int Graph::add_tensor(Tensor t) {
  tensors.push_back(std::move(t));
  return static_cast<int>(tensors.size()) - 1;
}

int Graph::add_constant(const std::string& name, Shape shape, std::vector<float> data) {
  Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.constant = true;
  t.data = std::move(data);
  return add_tensor(std::move(t));
}

std::vector<int> Graph::consumers(int tensor) const {
  std::vector<int> result;
  for (size_t i = 0; i < ops.size(); ++i) {
    const auto& in = ops[i].inputs;
    if (std::find(in.begin(), in.end(), tensor) != in.end()) result.push_back(static_cast<int>(i));
  }
  return result;
}

int Graph::producer(int tensor) const {
  for (size_t i = 0; i < ops.size(); ++i) {
    const auto& out = ops[i].outputs;
    if (std::find(out.begin(), out.end(), tensor) != out.end()) return static_cast<int>(i);
  }
  return -1;
}

bool Graph::is_graph_output(int tensor) const {
  return std::find(outputs.begin(), outputs.end(), tensor) != outputs.end() ||
         std::any_of(states.begin(), states.end(), [&](const StateTensor& s) { return s.update == tensor; });
}

void Graph::replace_uses(int old_tensor, int new_tensor) {
  for (auto& op : ops) std::replace(op.inputs.begin(), op.inputs.end(), old_tensor, new_tensor);
  std::replace(outputs.begin(), outputs.end(), old_tensor, new_tensor);
  for (StateTensor& s : states) s.update = s.update == old_tensor ? new_tensor : s.update;
}

int64_t broadcast_index(const Shape& out, const Shape& in, int64_t index) {
  const size_t offset = out.size() - in.size();
  int64_t result = 0, in_stride = 1, out_stride = 1;
  for (size_t d = out.size(); d-- > 0;) {
    const int64_t coord = (index / out_stride) % out[d];
    if (d >= offset && in[d - offset] != 1) result += coord * in_stride;
    if (d >= offset) in_stride *= in[d - offset];
    out_stride *= out[d];
  }
  return result;
}

std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << "]";
  return os.str();
}

}  // namespace mcuflow::compiler
