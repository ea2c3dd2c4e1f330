// mcuflow._core: the bridge between the Python front end and the C++ compiler and runtime.
// Only argument conversion lives here.
#include <cmath>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "mcuflow/compiler/compile.h"
#include "mcuflow/compiler/layout.h"
#include "mcuflow/compiler/op_registry.h"
#include "mcuflow/compiler/serializer.h"
#include "mcuflow/runtime/runtime.h"

namespace py = pybind11;
using namespace mcuflow;
using namespace mcuflow::compiler;

namespace {

using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;

std::vector<float> to_vector(const FloatArray& a) { return std::vector<float>(a.data(), a.data() + a.size()); }

Shape to_shape(const py::sequence& s) {
  Shape out;
  for (auto v : s) out.push_back(v.cast<int64_t>());
  return out;
}

AttrValue to_attr(const std::string& op, const std::string& name, const py::handle& v) {
  if (py::isinstance<py::bool_>(v)) return int64_t(v.cast<bool>());
  if (py::isinstance<py::int_>(v)) return v.cast<int64_t>();
  if (py::isinstance<py::float_>(v)) return v.cast<double>();
  if (py::isinstance<py::sequence>(v)) {
    std::vector<int64_t> out;
    for (auto e : v.cast<py::sequence>()) out.push_back(e.cast<int64_t>());
    return out;
  }
  throw CompileError(op + ": attribute '" + name + "' has an unsupported type");
}

class GraphBuilder {
 public:
  // dtype "float32", or "int32" for ids (an embedding's; the program takes them as int32).
  int add_input(const std::string& name, const py::sequence& shape, const std::string& dtype) {
    Tensor t;
    t.name = name;
    t.shape = to_shape(shape);
    if (dtype == "int32") t.element = Element::kIds;
    else if (dtype != "float32") throw CompileError("input " + name + ": dtype '" + dtype + "' (float32 or int32)");
    const int id = graph_.add_tensor(std::move(t));
    graph_.inputs.push_back(id);
    return id;
  }

  int add_constant(const std::string& name, const FloatArray& array) {
    Shape shape(array.shape(), array.shape() + array.ndim());
    return graph_.add_constant(name, shape, to_vector(array));
  }

  std::vector<int> add_op(const std::string& kind, const std::vector<int>& inputs, const py::dict& attrs,
                          const std::string& source, const std::vector<std::vector<int64_t>>& output_shapes) {
    Op op;
    op.kind = kind;
    op.inputs = inputs;
    op.source = source;
    for (auto item : attrs) {
      const std::string name = item.first.cast<std::string>();
      op.attrs[name] = to_attr(kind, name, item.second);
    }
    read_masks_as_numbers(graph_, op);
    const std::vector<Shape> shapes = infer_shapes(graph_, op);
    if (!output_shapes.empty() && output_shapes.size() != shapes.size())
      throw CompileError(op.where() + ": expected " + std::to_string(output_shapes.size()) + " outputs");
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (!output_shapes.empty() && output_shapes[i] != shapes[i])
        throw CompileError(op.where() + ": computed output shape " + shape_str(shapes[i]) +
                           " differs from PyTorch's " + shape_str(output_shapes[i]));
      Tensor t;
      t.name = kind + "_" + std::to_string(graph_.ops.size()) + (i ? "_" + std::to_string(i) : "");
      t.shape = shapes[i];
      t.element = output_element(graph_, op);
      op.outputs.push_back(graph_.add_tensor(std::move(t)));
    }
    graph_.ops.push_back(op);
    return op.outputs;
  }

  // A quantization the model already has (a pre-quantized model): the compiler keeps it. One
  // scale and zero point (axis -1) or one per index along logical dim `axis`.
  void set_quantization(int id, const std::vector<double>& scales, const std::vector<int32_t>& zero_points,
                        const std::string& dtype, int axis, bool symmetric) {
    if (id < 0 || id >= int(graph_.tensors.size())) throw CompileError("set_quantization: tensor id out of range");
    Tensor& t = graph_.tensors[size_t(id)];
    const auto refuse = [&](const std::string& why) { throw CompileError("quantization of tensor " + t.name + ": " + why); };
    Quant q;
    q.valid = q.given = true;
    q.symmetric = symmetric;
    q.axis = axis;
    if (dtype == "int4") q.bits = 4;
    else if (dtype == "int8") q.bits = 8;
    else if (dtype == "int16") q.bits = 16;
    else refuse("dtype '" + dtype + "' (int4, int8, int16)");
    if (axis < -1 || axis >= int(t.shape.size())) refuse("axis " + std::to_string(axis) + " outside its " + std::to_string(t.shape.size()) + " dims");
    const size_t count = axis < 0 ? 1 : size_t(t.shape[size_t(axis)]);
    if (scales.size() != count || zero_points.size() != count)
      refuse(std::to_string(scales.size()) + " scales and " + std::to_string(zero_points.size()) + " zero points; expected " + std::to_string(count));
    for (size_t i = 0; i < count; ++i) {
      if (!(scales[i] > 0) || !std::isfinite(float(scales[i]))) refuse("scale " + std::to_string(scales[i]) + " is not a positive float32");
      if (zero_points[i] < q.q_min() || zero_points[i] > q.q_max() || (symmetric && zero_points[i] != 0))
        refuse("zero point " + std::to_string(zero_points[i]) + " outside " + dtype + (symmetric ? " symmetric" : ""));
    }
    if (axis < 0) {
      q.scale = float(scales[0]);
      q.zero_point = zero_points[0];
    } else {
      for (double s : scales) q.scales.push_back(double(float(s)));  // float32 scales, as the program stores them
      q.zero_points = zero_points;
    }
    t.quant = q;
  }

  // A tensor the program keeps between runs (a module buffer forward updates), holding `initial`
  // before the first run; update_state names the value each run leaves in it.
  int add_state(const std::string& name, const FloatArray& initial) {
    Tensor t;
    t.name = name;
    t.shape = Shape(initial.shape(), initial.shape() + initial.ndim());
    const int id = graph_.add_tensor(std::move(t));
    graph_.states.push_back(StateTensor{id, -1, to_vector(initial)});
    return id;
  }

  void update_state(int state, int update) {
    if (update < 0 || update >= int(graph_.tensors.size())) throw CompileError("state update tensor id out of range");
    for (StateTensor& s : graph_.states) {
      if (s.tensor != state) continue;
      if (s.update >= 0) throw CompileError("state " + graph_.tensors[size_t(state)].name + " is updated twice; a buffer takes one new value per run");
      s.update = update;
      return;
    }
    throw CompileError("update_state: tensor " + std::to_string(state) + " is no state");
  }

  void set_outputs(const std::vector<int>& ids) {
    for (int id : ids) {
      if (id < 0 || id >= int(graph_.tensors.size())) throw CompileError("output tensor id out of range");
    }
    graph_.outputs = ids;
  }

  const Graph& graph() const { return graph_; }

 private:
  Graph graph_;
};

// `progress(done, total)` (a Python callable, or None) as calibration's progress callback: with the
// GIL taken only at most ten times a second and for the last run, so a bar costs calibration
// nothing measurable. The callable lives in a shared_ptr: copies of the callback, made while the
// GIL is released, never touch its reference count.
CalibrationProgress throttled_progress(const py::object& progress) {
  if (progress.is_none()) return {};
  struct State {
    py::object callable;
    std::chrono::steady_clock::time_point last{};
  };
  auto state = std::make_shared<State>(State{progress});
  return [state](size_t done, size_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (done < total && now - state->last < std::chrono::milliseconds(100)) return;
    state->last = now;
    py::gil_scoped_acquire gil;
    state->callable(done, total);
  };
}

py::bytes compile_program(const GraphBuilder& builder, const std::string& target, const py::list& calibration,
                          const std::string& precision, const std::string& io,
                          const std::map<std::string, std::string>& source, const std::string& fallback,
                          bool schedule, bool in_place,
                          const std::vector<std::tuple<std::string, uint32_t, bool>>& regions, bool copy_weights,
                          int patches, bool stream_input, const std::string& observer, double percentile,
                          const py::object& progress, const std::string& weights,
                          const std::vector<std::tuple<std::string, int, int, std::string>>& layers,
                          const std::string& bias_correction) {
  CompileOptions options = options_from_names(target, precision, io, fallback, patches, stream_input, observer,
                                              percentile, weights);
  for (const auto& [layer, activation_bits, weight_bits, why] : layers)
    options.layers.push_back(LayerPrecision{layer, activation_bits, weight_bits, why});
  check_options(options);
  options.schedule = schedule;
  options.in_place = in_place;
  options.bias_correction = parse_bias_correction(bias_correction);
  for (const auto& [name, capacity, fast] : regions) options.regions.push_back(MemoryRegion{name, capacity, fast});
  options.copy_weights = copy_weights;
  options.source = source;
  options.calibration_progress = throttled_progress(progress);
  Calibration samples;
  for (auto sample : calibration) {
    std::vector<std::vector<float>> inputs;
    for (auto x : sample.cast<py::sequence>()) inputs.push_back(to_vector(x.cast<FloatArray>()));
    samples.push_back(std::move(inputs));
  }
  std::vector<uint8_t> bytes;
  {
    py::gil_scoped_release release;
    bytes = compile_graph(builder.graph(), options, samples);
  }
  return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// The NumPy type of a tensor's elements; packed int4 (never program I/O) has none: int8 holds
// one unpacked element.
py::object numpy_dtype(format::DType t) {
  switch (t) {
    case format::DType::kInt4:
    case format::DType::kInt8: return py::dtype::of<int8_t>();
    case format::DType::kInt16: return py::dtype::of<int16_t>();
    case format::DType::kInt32: return py::dtype::of<int32_t>();
    case format::DType::kInt64: return py::dtype::of<int64_t>();
    case format::DType::kFloat32: break;
  }
  return py::dtype::of<float>();
}

std::vector<int64_t> logical_shape(const TensorInfo& t) {
  return logical_shape_of(std::vector<int64_t>(t.dims, t.dims + t.rank), t.layout);
}

// Reorders `a`'s elements between logical and physical order. The result keeps the logical
// shape: physical data is handled as a flat buffer by callers that write or read raw files.
py::array convert_layout(const py::array& in, const std::string& layout_name, bool to_physical) {
  py::array a = py::array::ensure(in, py::array::c_style);
  if (layout_name != "plain" && layout_name != "nhwc") throw std::invalid_argument("layout must be plain or nhwc");
  const auto layout = layout_name == "nhwc" ? format::Layout::kNhwc : format::Layout::kPlain;
  const std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
  const auto* data = static_cast<const uint8_t*>(a.data());
  const auto out = to_physical ? logical_to_physical(data, shape, layout, uint32_t(a.itemsize()))
                               : physical_to_logical(data, shape, layout, uint32_t(a.itemsize()));
  py::array result(a.dtype(), shape);
  std::memcpy(result.mutable_data(), out.data(), out.size());
  return result;
}

// A Session of `program` with arenas of its own (one heap block per memory region).
class OwnedSession {
 public:
  explicit OwnedSession(const Program& program) {
    std::vector<Span<uint8_t>> regions;
    for (uint32_t r = 0; r < program.region_count(); ++r) {
      storage_.emplace_back(program.region_bytes(r) + format::kArenaAlign);
      uint8_t* base = storage_.back().data();
      while (reinterpret_cast<uintptr_t>(base) % format::kArenaAlign) ++base;
      regions.push_back(Span<uint8_t>{base, program.region_bytes(r)});
    }
    session_ = Session::bind(program, regions.data(), uint32_t(regions.size())).value();
  }
  const Session& operator*() const { return session_; }
  const Session* operator->() const { return &session_; }

 private:
  std::vector<std::vector<uint8_t>> storage_;
  Session session_;
};

// A Program::load failure as a board's harness reports it (firmware/harness/harness_io.h, codes
// named): "<error>[ tensor <t>][ op <i>][ slot <s>]"; mcuflow.api names the records from it.
std::string load_failure(Error e, const LoadFailure& where) {
  std::string text = error_name(e);
  if (where.tensor >= 0) text += " tensor " + std::to_string(where.tensor);
  if (where.op >= 0) text += " op " + std::to_string(where.op);
  if (where.slot >= 0) text += " slot " + std::to_string(where.slot);
  return text;
}

// Session::run failed on sample `sample`: Python sees _core.RunError("<error name> <sample>").
struct RunFailure : std::runtime_error {
  RunFailure(Error e, int64_t sample) : std::runtime_error(std::string(error_name(e)) + " " + std::to_string(sample)) {}
};

// A verified program in host memory: the host runtime.
class HostProgram {
 public:
  // `verify`: "full" (Verify::kFull) or "structure" (Verify::kStructure), as Program::load names them.
  HostProgram(const py::bytes& data, const std::string& verify) {
    if (verify != "full" && verify != "structure") throw std::invalid_argument("verify is 'full' or 'structure'");
    const std::string s = data;
    storage_.resize(s.size() + format::kConstantAlign);
    bytes_ = storage_.data();
    while (reinterpret_cast<uintptr_t>(bytes_) % format::kConstantAlign) ++bytes_;
    std::memcpy(bytes_, s.data(), s.size());
    LoadFailure where;
    auto program = Program::load(Span<const uint8_t>{bytes_, uint32_t(s.size())}, all_kernels(), &where,
                                 verify == "full" ? Verify::kFull : Verify::kStructure);
    if (!program.ok()) throw std::invalid_argument("invalid program: " + load_failure(program.error(), where));
    program_ = program.value();
    const auto* h = reinterpret_cast<const format::Header*>(bytes_);
    const auto* records = reinterpret_cast<const format::TensorRecord*>(bytes_ + h->tensors_offset);
    for (uint32_t i = 0; i < h->tensor_count && !state_session_; ++i) {
      if (records[i].storage == format::Storage::kState) state_session_ = std::make_unique<OwnedSession>(program_);
    }
  }

  py::list io_info(bool inputs) const {
    py::list out;
    const uint32_t n = inputs ? program_.input_count() : program_.output_count();
    const auto* h = reinterpret_cast<const format::Header*>(bytes_);
    const auto* io = reinterpret_cast<const uint16_t*>(bytes_ + h->io_offset);  // verified by load
    for (uint32_t i = 0; i < n; ++i) {
      const TensorInfo t = inputs ? program_.input(i) : program_.output(i);
      py::dict d;
      d["tensor"] = io[inputs ? i : program_.input_count() + i];  // its metadata entry holds the model's name
      d["dtype"] = numpy_dtype(t.dtype);
      d["shape"] = logical_shape(t);
      d["physical_shape"] = std::vector<int64_t>(t.dims, t.dims + t.rank);
      d["layout"] = t.layout == format::Layout::kNhwc ? "nhwc" : t.layout == format::Layout::kPlain ? "plain" : "flat_nhwc";
      d["scale"] = t.scale;
      d["zero_point"] = t.zero_point;
      d["bytes"] = t.bytes;
      if (inputs) d["streamed"] = t.streamed;
      out.append(d);
    }
    return out;
  }

  // `batch` samples: each input holds its samples back to back, each output returns them stacked
  // along dim 0, all in logical (PyTorch) order. Up to `threads` threads share the samples, each
  // with a Session and arenas of its own; the GIL is released while they run.
  py::list run(const py::list& inputs, int64_t batch, int threads) {
    if (batch < 1) throw std::invalid_argument("batch must be at least 1");
    if (threads < 1) throw std::invalid_argument("threads must be at least 1");
    const std::vector<py::array> in = checked_inputs(inputs, batch);
    std::vector<const uint8_t*> in_data;
    for (const auto& a : in) in_data.push_back(static_cast<const uint8_t*>(a.data()));
    if (state_session_) threads = 1;  // each sample reads the states the one before it left
    py::list outputs;
    std::vector<uint8_t*> out_data;
    for (uint32_t i = 0; i < program_.output_count(); ++i) {
      const TensorInfo t = program_.output(i);
      auto shape = logical_shape(t);
      if (!shape.empty()) shape[0] *= batch;  // samples stacked along dim 0
      else if (batch > 1) shape = {batch};    // (a program may declare a rank-0 output)
      py::array out(numpy_dtype(t.dtype), shape);
      out_data.push_back(static_cast<uint8_t*>(out.mutable_data()));
      outputs.append(out);
    }
    std::atomic<int64_t> next_sample{0};
    std::mutex failure_lock;
    std::exception_ptr failure;
    // The first sample that fails, as a board reports it (it runs them in order): every earlier
    // sample was taken before it and runs to its end.
    int64_t failed_sample = batch;
    Error run_error = Error::kOk;
    auto worker = [&] {
      try {
        std::unique_ptr<OwnedSession> own = state_session_ ? nullptr : std::make_unique<OwnedSession>(program_);
        OwnedSession& session = state_session_ ? *state_session_ : *own;
        StreamedInputs streamed;
        const InputReader reader = streamed.reader();
        for (int64_t b = next_sample++; b < batch; b = next_sample++) {
          write_inputs(*session, in_data, b, streamed);
          const Error e = session->run(&reader);
          if (e != Error::kOk) {
            std::lock_guard<std::mutex> guard(failure_lock);
            if (b < failed_sample) failed_sample = b, run_error = e;
            next_sample = batch;
            return;
          }
          read_outputs(*session, out_data, b);
        }
      } catch (...) {
        std::lock_guard<std::mutex> guard(failure_lock);
        if (!failure) failure = std::current_exception();
        next_sample = batch;  // the other threads stop after their current sample
      }
    };
    {
      py::gil_scoped_release release;
      std::vector<std::thread> helpers;
      for (int64_t k = 1; k < std::min<int64_t>(threads, batch); ++k) helpers.emplace_back(worker);
      worker();
      for (auto& h : helpers) h.join();
    }
    if (failure) std::rethrow_exception(failure);
    if (run_error != Error::kOk) throw RunFailure(run_error, failed_sample);
    return outputs;
  }

 private:
  static py::array read_logical(const TensorInfo& t, const uint8_t* physical) {
    const auto shape = logical_shape(t);
    const auto logical = physical_to_logical(physical, shape, t.layout, format::element_bytes(t.dtype));
    py::array out(numpy_dtype(t.dtype), shape);
    std::memcpy(out.mutable_data(), logical.data(), logical.size());
    return out;
  }

  // The inputs as C-ordered arrays of `batch` samples each, type and size checked.
  std::vector<py::array> checked_inputs(const py::list& inputs, int64_t batch) const {
    if (inputs.size() != program_.input_count())
      throw std::invalid_argument("expected " + std::to_string(program_.input_count()) + " inputs, got " +
                                  std::to_string(inputs.size()));
    std::vector<py::array> arrays;
    for (uint32_t i = 0; i < program_.input_count(); ++i) {
      const TensorInfo t = program_.input(i);
      py::array a = py::array::ensure(inputs[i], py::array::c_style);
      if (!a || !a.dtype().is(numpy_dtype(t.dtype)))
        throw std::invalid_argument("input " + std::to_string(i) + " must be " +
                                    py::str(numpy_dtype(t.dtype)).cast<std::string>());
      if (uint64_t(a.nbytes()) != uint64_t(batch) * t.bytes)
        throw std::invalid_argument("input " + std::to_string(i) + " has " + std::to_string(a.size()) +
                                    " elements; expected " + std::to_string(batch) + " of shape " +
                                    shape_str(logical_shape(t)));
      arrays.push_back(a);
    }
    return arrays;
  }

  // The physical bytes of a sample's streamed inputs, which Session::run fetches band by band
  // through reader().
  struct StreamedInputs {
    std::vector<std::vector<uint8_t>> bytes;  // per program input; empty unless streamed
    InputReader reader() { return InputReader{&read, this}; }
    static bool read(void* context, uint32_t input, uint32_t offset, uint8_t* dst, uint32_t n) {
      const auto& all = static_cast<const StreamedInputs*>(context)->bytes;
      if (input >= all.size() || uint64_t(offset) + n > all[input].size()) return false;
      std::memcpy(dst, all[input].data() + offset, n);
      return true;
    }
  };

  // Sample b of the inputs into `session`'s input tensors (streamed ones into `streamed`), and
  // its outputs out of it (no Python objects: runs without the GIL).
  void write_inputs(const Session& session, const std::vector<const uint8_t*>& inputs, int64_t b,
                    StreamedInputs& streamed) const {
    streamed.bytes.resize(program_.input_count());
    for (uint32_t i = 0; i < program_.input_count(); ++i) {
      const TensorInfo t = program_.input(i);
      auto physical = logical_to_physical(inputs[i] + b * t.bytes, logical_shape(t), t.layout,
                                          format::element_bytes(t.dtype));
      if (t.streamed) streamed.bytes[i] = std::move(physical);
      else std::memcpy(session.input_buffer(i).value().data, physical.data(), physical.size());
    }
  }

  void read_outputs(const Session& session, const std::vector<uint8_t*>& outputs, int64_t b) const {
    for (uint32_t i = 0; i < program_.output_count(); ++i) {
      const TensorInfo t = program_.output(i);
      const auto logical = physical_to_logical(session.output_buffer(i).value().data, logical_shape(t), t.layout,
                                               format::element_bytes(t.dtype));
      std::memcpy(outputs[i] + b * t.bytes, logical.data(), logical.size());
    }
  }

 public:

  // Runs one sample op by op and returns {ir_tensor_id: array} for every op output that holds
  // a model tensor, in logical layout, read right after its op ran (before the planner reuses
  // its bytes). int8 tensors are returned as int8 with their (scale, zero_point).
  py::dict trace(const py::list& inputs) {
    const std::vector<py::array> in = checked_inputs(inputs, 1);
    std::vector<const uint8_t*> in_data;
    for (const auto& a : in) in_data.push_back(static_cast<const uint8_t*>(a.data()));
    OwnedSession session(program_);
    StreamedInputs streamed;
    const InputReader reader = streamed.reader();
    write_inputs(*session, in_data, 0, streamed);
    py::dict result;
    const auto* h = reinterpret_cast<const format::Header*>(bytes_);
    const auto* records = reinterpret_cast<const format::OpRecord*>(bytes_ + h->ops_offset);
    const py::list ir_of = py::module_::import("json").attr("loads")(metadata())["tensors"];
    for (uint32_t i = 0; i < program_.op_count(); ++i) {
      const Error e = session->run_op(i, &reader);
      if (e != Error::kOk) throw RunFailure(e, 0);
      const auto& op = records[i];
      for (uint32_t j = 0; j < op.output_count; ++j) {
        const uint16_t t = op.tensors[op.input_count + j];
        const int ir = ir_of[t]["ir"].cast<int>();
        if (ir < 0) continue;
        const TensorInfo info = program_.tensor(t);
        py::dict entry;
        entry["data"] = read_logical(info, session->tensor_buffer(t).value().data);
        entry["scale"] = info.scale;
        entry["zero_point"] = info.zero_point;
        result[py::int_(ir)] = entry;
      }
    }
    return result;
  }

  bool stateful() const { return state_session_ != nullptr; }
  void reset_state() {
    if (state_session_) (void)(*state_session_)->reset_state();  // bound: cannot fail
  }

  uint32_t arena_bytes() const { return program_.arena_bytes(); }
  std::vector<uint32_t> region_bytes() const {
    std::vector<uint32_t> bytes;
    for (uint32_t r = 0; r < program_.region_count(); ++r) bytes.push_back(program_.region_bytes(r));
    return bytes;
  }
  uint32_t arena_lower_bound() const { return program_.arena_lower_bound(); }
  uint32_t flags() const { return program_.flags(); }
  std::string metadata() const {
    const auto m = program_.metadata();
    return std::string(reinterpret_cast<const char*>(m.data), m.size);
  }

  // Every tensor record, for inspect: dtype, physical dims, storage, offset, bytes, quant.
  py::list tensors() const {
    py::list out;
    const auto* h = reinterpret_cast<const format::Header*>(bytes_);
    const auto* records = reinterpret_cast<const format::TensorRecord*>(bytes_ + h->tensors_offset);
    for (uint32_t i = 0; i < h->tensor_count; ++i) {
      const auto& r = records[i];
      py::dict d;
      d["dtype"] = r.dtype == format::DType::kInt4 ? py::str("int4") : numpy_dtype(r.dtype).attr("name");
      d["dims"] = std::vector<int32_t>(r.dims, r.dims + r.rank);
      d["storage"] = r.storage == format::Storage::kArena      ? "arena"
                     : r.storage == format::Storage::kConstant ? "constant"
                     : r.storage == format::Storage::kStreamed ? "streamed"
                     : r.storage == format::Storage::kState    ? "state"
                                                               : "copied";
      d["region"] = r.region;
      d["copy_offset"] = r.copy_offset;
      d["offset"] = r.offset;
      d["bytes"] = r.bytes;
      d["scale"] = r.scale;
      d["zero_point"] = r.zero_point;
      out.append(d);
    }
    return out;
  }

  py::list ops() const {
    py::list out;
    const auto* h = reinterpret_cast<const format::Header*>(bytes_);
    const auto* records = reinterpret_cast<const format::OpRecord*>(bytes_ + h->ops_offset);
    for (uint32_t i = 0; i < h->op_count; ++i) {
      const auto& r = records[i];
      py::dict d;
      d["kernel"] = r.kernel;  // KernelId: what the device links and loads
      d["inputs"] = std::vector<int>(r.tensors, r.tensors + r.input_count);
      d["outputs"] = std::vector<int>(r.tensors + r.input_count, r.tensors + r.input_count + r.output_count);
      d["params_bytes"] = r.params_bytes;
      // The input slot the tier kernel writes as its scratch (KernelEntry::scratch_slot; 0: none).
      const uint32_t scratch = all_kernels().entries[r.kernel]->scratch_slot;
      d["scratch_slot"] = scratch < r.input_count ? scratch : 0;
      out.append(d);
    }
    return out;
  }

  std::map<std::string, uint32_t> header() const {
    const auto* h = reinterpret_cast<const format::Header*>(bytes_);
    return {{"file_bytes", h->file_bytes},         {"constants_bytes", h->constants_bytes},
            {"params_bytes", h->params_bytes},     {"metadata_bytes", h->metadata_bytes},
            {"arena_bytes", h->arena_bytes},       {"arena_lower_bound", h->arena_lower_bound},
            {"version", h->version},               {"structure_crc32", h->structure_crc32},
            {"data_crc32", h->data_crc32}};
  }

 private:
  std::vector<uint8_t> storage_;
  uint8_t* bytes_ = nullptr;
  Program program_;
  // A program with states runs every sample on this one session, so each run sees the states
  // the previous one left (reset_state: their initial values again).
  std::unique_ptr<OwnedSession> state_session_;
};

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "mcuflow C++ compiler and host runtime";
  py::register_exception<CompileError>(m, "CompileError", PyExc_ValueError);
  py::register_exception<RunFailure>(m, "RunError", PyExc_RuntimeError);
  m.def("error_names", [] {  // mcuflow::Error's names, by code (a board exits with 16 + code)
    std::vector<std::string> names;
    for (int e = 0; std::string(error_name(Error(e))) != "unknown_error"; ++e) names.push_back(error_name(Error(e)));
    return names;
  });

  m.def("op_kinds", &frontend_kinds, "The op kinds a front end may send (the compiler's op registry).");

  py::class_<GraphBuilder>(m, "GraphBuilder")
      .def(py::init<>())
      .def("add_input", &GraphBuilder::add_input, py::arg("name"), py::arg("shape"), py::arg("dtype") = "float32")
      .def("add_constant", &GraphBuilder::add_constant)
      .def("add_op", &GraphBuilder::add_op, py::arg("kind"), py::arg("inputs"), py::arg("attrs"),
           py::arg("source") = "", py::arg("output_shapes") = std::vector<std::vector<int64_t>>{})
      .def("set_quantization", &GraphBuilder::set_quantization, py::arg("tensor"), py::arg("scales"),
           py::arg("zero_points"), py::arg("dtype") = "int8", py::arg("axis") = -1, py::arg("symmetric") = false)
      .def("add_state", &GraphBuilder::add_state)
      .def("update_state", &GraphBuilder::update_state)
      .def("set_outputs", &GraphBuilder::set_outputs);

  m.def("compile", &compile_program, py::arg("builder"), py::arg("target"), py::arg("calibration"),
        py::arg("precision") = "int8", py::arg("io") = "float32",
        py::arg("source") = std::map<std::string, std::string>{}, py::arg("fallback") = "float",
        py::arg("schedule") = true, py::arg("in_place") = true,
        py::arg("regions") = std::vector<std::tuple<std::string, uint32_t, bool>>{}, py::arg("copy_weights") = false,
        py::arg("patches") = 1, py::arg("stream_input") = false, py::arg("observer") = "minmax",
        py::arg("percentile") = 99.99, py::arg("progress") = py::none(), py::arg("weights") = "int8",
        py::arg("layers") = std::vector<std::tuple<std::string, int, int, std::string>>{},
        py::arg("bias_correction") = "int4",
        "progress: None, or called as progress(runs_done, runs_total) while calibration runs the samples. "
        "layers: per-layer (layer, activation bits, weight bits, why) overriding precision and weights. "
        "bias_correction: off, int4 (the ops with int4 weights) or all weighted ops.");
  m.def("precision_layers",
        [](const GraphBuilder& builder) {
          py::list layers;
          for (const PrecisionLayer& l : model_precision_layers(builder.graph()))
            layers.append(py::dict(py::arg("layer") = l.layer, py::arg("kind") = l.kind, py::arg("source") = l.source,
                                   py::arg("int16") = l.int16, py::arg("int4") = l.int4));
          return layers;
        },
        py::arg("builder"),
        "The layers whose precision compile's layers may choose: layer, kind, source, int16, int4.");
  m.def("check_options",
        [](const std::string& target, const std::string& precision, const std::string& io, const std::string& fallback,
           int patches, bool stream_input, const std::string& observer, double percentile, const std::string& weights) {
          options_from_names(target, precision, io, fallback, patches, stream_input, observer, percentile, weights);
        },
        py::arg("target"), py::arg("precision"), py::arg("io"), py::arg("fallback"), py::arg("patches"),
        py::arg("stream_input"), py::arg("observer"), py::arg("percentile"), py::arg("weights") = "int8",
        "compile_graph's check of every option, before a model is looked at: CompileError naming the first bad one.");
  m.def("target_tier", [](const std::string& target) { return find_target(target).tier(); },
        "The kernel tier of a target name; CompileError naming the known targets otherwise.");
  m.def("kernel_ids", [] {
    std::map<std::string, int> ids;
#define MCUFLOW_KERNEL_ID(name, id) ids[#name] = id;
    MCUFLOW_KERNELS(MCUFLOW_KERNEL_ID)
#undef MCUFLOW_KERNEL_ID
#define MCUFLOW_TIER_KERNEL_ID(name, id, reference) ids[#name] = id;
    MCUFLOW_TIER_KERNELS(MCUFLOW_TIER_KERNEL_ID)
#undef MCUFLOW_TIER_KERNEL_ID
    return ids;
  });
  // I/O layout conversion (PyTorch order <-> a program tensor's physical order).
  m.def("to_physical", [](const py::array& a, const std::string& layout) { return convert_layout(a, layout, true); });
  m.def("to_logical", [](const py::array& a, const std::string& layout) { return convert_layout(a, layout, false); });
  m.def("strip_metadata", [](const py::bytes& b) {
    const std::string s = b;
    const auto out = compiler::strip_metadata(std::vector<uint8_t>(s.begin(), s.end()));
    return py::bytes(reinterpret_cast<const char*>(out.data()), out.size());
  });
  m.def("crc32", [](const py::bytes& b) {
    const std::string s = b;
    return crc32(reinterpret_cast<const uint8_t*>(s.data()), uint32_t(s.size()));
  });

  py::class_<HostProgram>(m, "HostProgram")
      .def(py::init<const py::bytes&, const std::string&>(), py::arg("data"), py::arg("verify") = "full")
      .def_property_readonly("inputs", [](const HostProgram& p) { return p.io_info(true); })
      .def_property_readonly("outputs", [](const HostProgram& p) { return p.io_info(false); })
      .def_property_readonly("arena_bytes", &HostProgram::arena_bytes)
      .def_property_readonly("region_bytes", &HostProgram::region_bytes)
      .def_property_readonly("arena_lower_bound", &HostProgram::arena_lower_bound)
      .def_property_readonly("flags", &HostProgram::flags)
      .def_property_readonly("metadata", &HostProgram::metadata)
      .def_property_readonly("tensors", &HostProgram::tensors)
      .def_property_readonly("ops", &HostProgram::ops)
      .def_property_readonly("header", &HostProgram::header)
      .def("run", &HostProgram::run, py::arg("inputs"), py::arg("batch"), py::arg("threads"))
      .def_property_readonly("stateful", &HostProgram::stateful)
      .def("reset_state", &HostProgram::reset_state)
      .def("trace", &HostProgram::trace);
}
