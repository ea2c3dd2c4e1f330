#include "mcuflow/compiler/serializer.h"

#include <cstring>
#include <sstream>
#include <stdexcept>

#include "mcuflow/compiler/ir.h"
#include "mcuflow/compiler/planner.h"
#include "mcuflow/runtime/runtime.h"

namespace mcuflow::compiler {
namespace {

const char* kernel_name(KernelId id) {
  switch (id) {
#define MCUFLOW_KERNEL_NAME(name, value) \
  case KernelId::name:                   \
    return #name;
    MCUFLOW_KERNELS(MCUFLOW_KERNEL_NAME)
#undef MCUFLOW_KERNEL_NAME
#define MCUFLOW_TIER_KERNEL_NAME(name, value, reference) \
  case KernelId::name:                                   \
    return #name;
    MCUFLOW_TIER_KERNELS(MCUFLOW_TIER_KERNEL_NAME)
#undef MCUFLOW_TIER_KERNEL_NAME
    default:
      return "unknown";
  }
}

template <typename T>
std::string json_list(const std::vector<T>& v) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
  os << ']';
  return os.str();
}

void align_to(std::vector<uint8_t>& out, uint32_t align) {
  while (out.size() % align) out.push_back(0);
}

template <typename T>
void append(std::vector<uint8_t>& out, const T& value) {
  const auto* b = reinterpret_cast<const uint8_t*>(&value);
  out.insert(out.end(), b, b + sizeof(T));
}

}  // namespace

std::string json_string(const std::string& s) {
  std::ostringstream os;
  os << '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') os << '\\' << c;
    else if (c < 0x20) os << "\\u00" << "0123456789abcdef"[c >> 4] << "0123456789abcdef"[c & 15];
    else os << c;
  }
  os << '"';
  return os.str();
}

std::string metadata_json(const LoweredProgram& p) {
  std::ostringstream os;
  const std::vector<Lifetime> life = root_lifetimes(p);
  os << "{\"target\":" << json_string(p.target) << ",\"tier\":" << json_string(p.tier)
     << ",\"precision\":" << json_string(p.precision);
  if (!p.source.empty()) {
    os << ",\"source\":{";
    const char* sep = "";
    for (const auto& [key, value] : p.source) {
      os << sep << json_string(key) << ':' << json_string(value);
      sep = ",";
    }
    os << '}';
  }
  os << ",\"tensors\":[";
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const ProgramTensor& t = p.tensors[i];
    os << (i ? "," : "") << "{\"name\":" << json_string(t.name) << ",\"shape\":" << json_list(t.logical_shape)
       << ",\"alias_of\":" << t.alias_of << ",\"ir\":" << t.ir_tensor;
    if (t.in_place_of >= 0) os << ",\"in_place_of\":" << t.in_place_of;
    if (t.state) os << ",\"state\":true";
    if (t.region > 0) os << ",\"region\":" << t.region;
    const Lifetime& l = life[t.alias_of >= 0 ? size_t(t.alias_of) : i];
    if (!t.constant) os << ",\"first_op\":" << l.first << ",\"last_op\":" << l.last;
    os << "}";
  }
  os << "],\"ops\":[";
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const ProgramOp& op = p.ops[i];
    os << (i ? "," : "") << "{\"kernel\":" << json_string(kernel_name(op.kernel))
       << ",\"kind\":" << json_string(op.ir_kind) << ",\"source\":" << json_string(op.source)
       << ",\"reason\":" << json_string(op.reason) << ",\"fallback\":" << json_string(op.fallback)
       << ",\"macs\":" << op.macs;
    if (!op.weights.empty()) os << ",\"weights\":" << json_string(op.weights);
    if (!op.precision.empty()) os << ",\"precision\":" << json_string(op.precision);
    os << "}";
  }
  os << "]";
  if (!p.schedule_report.empty()) os << ",\"schedule\":" << p.schedule_report;
  if (!p.plan_report.empty()) os << ",\"plan\":" << p.plan_report;
  if (!p.quantization_report.empty()) os << ",\"quantization\":" << p.quantization_report;
  os << "}";
  return os.str();
}

std::vector<uint8_t> serialize(const LoweredProgram& p) {
  using namespace format;
  if (p.tensors.size() > 0xFFFF || p.ops.size() > 0xFFFF) throw CompileError("program has too many tensors or ops");
  std::vector<uint8_t> out(sizeof(Header), 0);
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.version = kVersion;
  h.header_bytes = sizeof(Header);
  h.flags = p.flags;
  h.tensor_count = uint16_t(p.tensors.size());
  h.op_count = uint16_t(p.ops.size());
  h.input_count = uint16_t(p.inputs.size());
  h.output_count = uint16_t(p.outputs.size());
  h.arena_bytes = p.arena_bytes;
  h.region_count = uint32_t(std::max<size_t>(1, p.region_bytes.size()));
  if (h.region_count > kMaxRegions) throw CompileError("program uses more than 4 memory regions");
  for (uint32_t r = 1; r < h.region_count; ++r) h.region_bytes[r - 1] = p.region_bytes[r];
  h.arena_lower_bound = p.arena_lower_bound;

  // Constants first (their offsets go into the tensor records), laid out in their own buffer.
  std::vector<uint8_t> constants;
  std::vector<uint32_t> const_offset(p.tensors.size(), 0);
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    if (!p.tensors[i].constant && !p.tensors[i].state) continue;
    align_to(constants, kConstantAlign);
    const_offset[i] = uint32_t(constants.size());
    constants.insert(constants.end(), p.tensors[i].bytes.begin(), p.tensors[i].bytes.end());
  }

  h.tensors_offset = uint32_t(out.size());
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const ProgramTensor& t = p.tensors[i];
    TensorRecord r{};
    r.dtype = t.dtype;
    r.rank = uint8_t(t.dims.size());
    r.storage = t.streamed    ? Storage::kStreamed
                : t.state     ? Storage::kState
                : !t.constant ? Storage::kArena
                : t.ram_offset >= 0 ? Storage::kCopiedConstant
                                    : Storage::kConstant;
    r.region = uint8_t((!t.constant && !t.streamed) || t.ram_offset >= 0 ? t.region : 0);
    r.copy_offset = t.state ? t.offset : t.ram_offset >= 0 ? uint32_t(t.ram_offset) : 0;
    r.layout = t.layout;
    for (uint32_t d = 0; d < kMaxRank; ++d) r.dims[d] = d < t.dims.size() ? t.dims[d] : 1;
    r.offset = t.constant || t.state ? const_offset[i] : t.streamed ? 0 : t.offset;
    r.bytes = t.byte_size();
    r.scale = t.scale;
    r.zero_point = t.zero_point;
    append(out, r);
  }

  h.ops_offset = uint32_t(out.size());
  std::vector<uint8_t> params;
  for (const ProgramOp& op : p.ops) {
    if (op.inputs.size() + op.outputs.size() > kMaxOpTensors) throw CompileError("op has too many tensors");
    OpRecord r{};
    r.kernel = uint16_t(op.kernel);
    r.input_count = uint8_t(op.inputs.size());
    r.output_count = uint8_t(op.outputs.size());
    size_t slot = 0;
    for (int t : op.inputs) r.tensors[slot++] = uint16_t(t);
    for (int t : op.outputs) r.tensors[slot++] = uint16_t(t);
    align_to(params, 4);
    r.params_offset = uint32_t(params.size());
    r.params_bytes = uint32_t(op.params.size());
    params.insert(params.end(), op.params.begin(), op.params.end());
    append(out, r);
  }

  h.io_offset = uint32_t(out.size());
  for (int t : p.inputs) append(out, uint16_t(t));
  for (int t : p.outputs) append(out, uint16_t(t));

  align_to(out, 4);
  h.params_offset = uint32_t(out.size());
  h.params_bytes = uint32_t(params.size());
  out.insert(out.end(), params.begin(), params.end());

  align_to(out, kConstantAlign);
  h.constants_offset = uint32_t(out.size());
  h.constants_bytes = uint32_t(constants.size());
  out.insert(out.end(), constants.begin(), constants.end());

  const std::string meta = metadata_json(p);
  h.metadata_offset = uint32_t(out.size());
  h.metadata_bytes = uint32_t(meta.size());
  out.insert(out.end(), meta.begin(), meta.end());
  align_to(out, 4);

  h.file_bytes = uint32_t(out.size());
  std::memcpy(out.data(), &h, sizeof(h));
  write_checksums(out.data(), h.file_bytes);
  return out;
}

std::vector<uint8_t> strip_metadata(const std::vector<uint8_t>& program) {
  format::Header h;
  if (program.size() < sizeof(h)) throw std::invalid_argument("program too short to strip");
  std::memcpy(&h, program.data(), sizeof(h));
  // Renewing the checksum must never bless bytes that no longer match it.
  std::vector<uint8_t> resealed(program);
  write_checksums(resealed.data(), uint32_t(resealed.size()));
  if (h.file_bytes != program.size() || h.metadata_offset > h.file_bytes || h.constants_offset > h.metadata_offset ||
      resealed != program)
    throw std::invalid_argument("program does not match its checksums: not stripping it");
  // Metadata is the last section and starts 4-aligned (it follows the 16-aligned constants).
  std::vector<uint8_t> out(program.begin(), program.begin() + h.metadata_offset);
  h.metadata_bytes = 0;
  h.file_bytes = uint32_t(out.size());
  std::memcpy(out.data(), &h, sizeof(h));
  write_checksums(out.data(), h.file_bytes);
  return out;
}

}  // namespace mcuflow::compiler
