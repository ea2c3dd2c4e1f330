// Error codes and Result<T>: every fallible runtime call returns one; nothing aborts.
#pragma once
#include <cstdint>

namespace mcuflow {

enum class Error : uint8_t {
  kOk = 0,
  kTruncated,        // the byte span is shorter than the header or the file size it states
  kBadMagic,
  kBadVersion,
  kBadChecksum,      // CRC32 of the file body does not match the header
  kBadHeader,        // header fields inconsistent (sizes, counts)
  kBadSection,       // a section lies outside the file or is misaligned
  kBadTensor,        // a tensor record is malformed or points outside its storage
  kBadOp,            // an op record is malformed (tensor index, counts)
  kBadParams,        // an op's parameters are out of range or disagree with its tensors
  kUnknownKernel,    // the program names a kernel id this runtime does not know
  kKernelNotLinked,  // a known kernel that this firmware was built without
  kBadIo,            // input/output table malformed
  kArenaTooSmall,
  kArenaMisaligned,
  kBadArgument,      // caller passed an index or buffer that does not fit
  kNotBound,
  kStreamedInput,    // the input is fetched in row bands while the program runs: it has no buffer
  kInputUnavailable, // run needed input rows and had no InputReader, or the reader failed
  kBadAliasing,      // an op's output shares bytes with one of its inputs where its kernel's
                     // access order does not allow it (aliasing.h), or with its scratch
  kNonFiniteInput,   // a float32 program input (or a band of one) holds NaN or Inf
  kIndexOutOfRange,  // an int32 id outside its table (embedding): the op wrote nothing
};

const char* error_name(Error e);

template <typename T>
class Result {
 public:
  Result(const T& value) : value_(value), error_(Error::kOk) {}  // NOLINT: implicit by design
  Result(Error error) : value_(), error_(error) {}                // NOLINT
  bool ok() const { return error_ == Error::kOk; }
  Error error() const { return error_; }
  const T& value() const { return value_; }
  T& value() { return value_; }

 private:
  T value_;
  Error error_;
};

template <typename T>
struct Span {
  T* data = nullptr;
  uint32_t size = 0;
};

}  // namespace mcuflow
