// Error codes and Result<T>: every fallible runtime call returns one; nothing aborts.
#pragma once
#include <cstdint>

namespace mcuflow {

// [[nodiscard]]: a call whose Error or Result is ignored is a compiler warning.
enum class [[nodiscard]] Error : uint8_t {
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
  kUndefinedRead,    // an op or a program output reads bytes that no op output (nor a program
                     // input) wrote last: left by a tier kernel's scratch, which the host never
                     // writes, or by nothing, so host and board would read different bytes
};

const char* error_name(Error e);

// A value or the Error that kept it from being made. A Result is ok only with a value (one made
// from Error::kOk holds kBadArgument). A failed Result's value is T{} — a null span, an empty
// program whose counts are 0 — never uninitialized memory: code that reads it without checking
// ok() finds nothing to work on instead of undefined behaviour, and nothing aborts.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(const T& value) : value_(value), error_(Error::kOk) {}  // NOLINT: implicit by design
  Result(Error error) : value_(), error_(error == Error::kOk ? Error::kBadArgument : error) {}  // NOLINT
  bool ok() const { return error_ == Error::kOk; }
  Error error() const { return error_; }
  const T& value() const { return value_; }
  T& value() { return value_; }
  T value_or(const T& fallback) const { return ok() ? value_ : fallback; }

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
