// Converting I/O data between PyTorch's logical order and a program tensor's physical order.
#pragma once
#include <cstdint>
#include <vector>

#include "mcuflow/runtime/format.h"

namespace mcuflow::compiler {

// The PyTorch shape of a tensor of `layout` with physical dims `dims` (channels last for kNhwc:
// [N, spatial..., C] is logical [N, C, spatial...]).
std::vector<int64_t> logical_shape_of(const std::vector<int64_t>& dims, format::Layout layout);

// `logical_shape` is the PyTorch shape; elements are `element_bytes` wide.
std::vector<uint8_t> logical_to_physical(const uint8_t* data, const std::vector<int64_t>& logical_shape,
                                         format::Layout layout, uint32_t element_bytes);
std::vector<uint8_t> physical_to_logical(const uint8_t* data, const std::vector<int64_t>& logical_shape,
                                         format::Layout layout, uint32_t element_bytes);

}  // namespace mcuflow::compiler
