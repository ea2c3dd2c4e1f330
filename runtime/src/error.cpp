#include "mcuflow/runtime/error.h"

namespace mcuflow {

const char* error_name(Error e) {
  switch (e) {
    case Error::kOk: return "ok";
    case Error::kTruncated: return "truncated";
    case Error::kBadMagic: return "bad_magic";
    case Error::kBadVersion: return "bad_version";
    case Error::kBadChecksum: return "bad_checksum";
    case Error::kBadHeader: return "bad_header";
    case Error::kBadSection: return "bad_section";
    case Error::kBadTensor: return "bad_tensor";
    case Error::kBadOp: return "bad_op";
    case Error::kBadParams: return "bad_params";
    case Error::kUnknownKernel: return "unknown_kernel";
    case Error::kKernelNotLinked: return "kernel_not_linked";
    case Error::kBadIo: return "bad_io";
    case Error::kArenaTooSmall: return "arena_too_small";
    case Error::kArenaMisaligned: return "arena_misaligned";
    case Error::kBadArgument: return "bad_argument";
    case Error::kNotBound: return "not_bound";
    case Error::kStreamedInput: return "streamed_input";
    case Error::kInputUnavailable: return "input_unavailable";
    case Error::kBadAliasing: return "bad_aliasing";
    case Error::kNonFiniteInput: return "non_finite_input";
    case Error::kIndexOutOfRange: return "index_out_of_range";
    case Error::kUndefinedRead: return "undefined_read";
  }
  return "unknown_error";
}

}  // namespace mcuflow
