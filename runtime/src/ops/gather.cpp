// Adapter for gather_rows (nn.Embedding): int32 ids into a constant table of int8 or float32
// rows. The ids are run-time values, so the kernel checks them and the run reports a bad one.
#include "check.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::ops {
namespace {

using format::DType;
using kernels::GatherRowsParams;

Error check_gather_rows(const OpCheck& c) {
  const auto& p = c.get_params<GatherRowsParams>();
  if (!positive(p.count) || !positive(p.rows) || !positive(p.row_bytes)) return Error::kBadParams;
  const format::TensorRecord& table = c.tensor(1);
  const format::TensorRecord& out = output(c);
  const bool same_elements = table.dtype == out.dtype && table.scale == out.scale && table.zero_point == out.zero_point;
  const bool rows_of_elements = (table.dtype == DType::kInt8 || table.dtype == DType::kFloat32) &&
                                p.row_bytes % format::element_bytes(table.dtype) == 0;
  return ok_if(tensor_is(c, 0, DType::kInt32, uint64_t(p.count)) && read_only(table) && same_elements &&
               rows_of_elements && table.bytes == uint64_t(p.rows) * uint64_t(p.row_bytes) &&
               out.bytes == uint64_t(p.count) * uint64_t(p.row_bytes));
}

Error eval_gather_rows(const OpCall& c) {
  const bool ok = kernels::gather_rows(c.get_params<GatherRowsParams>(), c.in<int32_t>(0), c.in<uint8_t>(1),
                                       c.out<uint8_t>(0));
  return ok ? Error::kOk : Error::kIndexOutOfRange;
}

}  // namespace

extern const KernelEntry kernel_entry_gather_rows = {sizeof(GatherRowsParams), 2, 1, check_gather_rows, nullptr,
                                                     aliasing::kNoSharing, 0,
                                                     eval_gather_rows};

}  // namespace mcuflow::ops
