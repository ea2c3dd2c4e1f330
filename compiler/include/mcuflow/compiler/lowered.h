// A program before serialization: kernel ops over physical tensors, with the memory plan.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mcuflow/runtime/format.h"
#include "mcuflow/runtime/kernel_id.h"

namespace mcuflow::compiler {

struct ProgramTensor {
  std::string name;
  format::DType dtype = format::DType::kInt8;
  std::vector<int32_t> dims;            // physical order
  std::vector<int64_t> logical_shape;   // PyTorch order, for tools and I/O
  format::Layout layout = format::Layout::kPlain;
  bool constant = false;
  bool streamed = false;                // a program input fetched in row bands (read_input_rows): no arena bytes
  bool state = false;                   // kept between runs (Storage::kState): `bytes` holds its initial value
  std::vector<uint8_t> bytes;           // constant contents
  float scale = 0.0f;
  int32_t zero_point = 0;
  int ir_tensor = -1;                   // IR tensor this holds (calibration, traces), or -1
  int alias_of = -1;                    // a view: shares the bytes of another arena tensor
  int in_place_of = -1;                 // the dying input whose bytes this op output overwrites (planner)
  int region = 0;                       // arena tensors and copied constants: the memory region (planner)
  int64_t ram_offset = -1;              // a constant Session::bind copies into `region`: its offset there
  uint32_t offset = 0;                  // arena or constants offset (planner / serializer)

  uint32_t byte_size() const;
};

struct ProgramOp {
  KernelId kernel;
  std::vector<int> inputs, outputs;
  std::vector<uint8_t> params;
  std::string ir_kind;   // the model op this came from
  std::string source;    // its model source line
  std::string reason;    // why this kernel was chosen
  std::string fallback;  // int8 program: why this op runs in float32 (dequantize, float kernel, quantize)
  std::string weights;   // compiled with weights="int4": "int4", or "int8: <why>" (empty otherwise)
  std::string precision;  // compiled with per-layer choices: the layer's ("A16W8: <why>")
  int64_t macs = 0;
  // The input the kernel reads once per MAC: the weights (input 1), or the copy of them a tier
  // kernel reads instead; what the planner may copy into fast RAM.
  int streamed_input = 1;
};

// Bytes of root tensor `part` that lie inside root tensor `host`, `offset` bytes from its start
// (planner.h, embeddings): `op` copies them there, or -1 when drop_self_copies removed that copy.
struct Embedding {
  int op = -1;
  int part = -1, host = -1;  // root tensors
  int64_t offset = 0;        // bytes from the host's start
};

// A state tensor and the tensor holding the value a run leaves in it (plan_memory makes the op
// computing it write the state, or copies it there at the end of the run).
struct StateUpdate {
  int state = -1, update = -1;
};

struct LoweredProgram {
  std::vector<ProgramTensor> tensors;
  std::vector<ProgramOp> ops;
  std::vector<int> inputs, outputs;
  std::vector<StateUpdate> states;
  uint32_t flags = 0;
  uint32_t arena_bytes = 0;
  uint32_t arena_lower_bound = 0;
  std::string schedule_report, plan_report;  // JSON objects for metadata (scheduler, planner)
  std::string quantization_report;  // JSON object for metadata: the int8 range observer (calibrate)
  std::vector<Embedding> dropped_copies;  // parts whose copy op drop_self_copies removed (op -1)
  std::vector<uint32_t> region_bytes;   // planned bytes per memory region (region 0: arena_bytes)
  std::string target, tier, precision;
  std::map<std::string, std::string> source;  // provenance for the metadata, e.g. model_sha256

  int add_tensor(ProgramTensor t);
};

}  // namespace mcuflow::compiler
