// read_input_rows: a band of a streamed program input (Storage::kStreamed), fetched by
// Session::run through the application's InputReader; here only its load-time check.
#include "check.h"

namespace mcuflow::ops {
namespace {

// The rows lie inside the named streamed input and fill the arena output exactly.
Error check_read_input_rows(const OpCheck& c) {
  const auto& p = c.get_params<format::InputRowsParams>();
  if (p.input >= c.input_count) return Error::kBadParams;
  const format::TensorRecord& in = c.tensors[c.io[p.input]];
  const format::TensorRecord& out = output(c);
  if (in.storage != format::Storage::kStreamed || in.dtype != out.dtype) return Error::kBadParams;
  return ok_if(p.bytes == out.bytes && uint64_t(p.offset) + p.bytes <= in.bytes);
}

}  // namespace

// No eval: Session::run_op performs the read itself, since only it holds the reader.
extern const KernelEntry kernel_entry_read_input_rows = {sizeof(format::InputRowsParams), 0, 1,
                                                        check_read_input_rows, nullptr};

}  // namespace mcuflow::ops
