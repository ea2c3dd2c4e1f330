// libFuzzer target over the device runtime: whatever bytes arrive (CRC fixed), Program::load either refuses
// them with an error code or accepts a program that Session::bind accepts for arenas of the sizes
// it states, and whose run finishes inside those arenas (AddressSanitizer sees every byte past
// them) without writing into the program, which is read in place. Built by `make fuzz`.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>

#include "mcuflow/runtime/runtime.h"

namespace {

using mcuflow::Error;
using mcuflow::Program;
using mcuflow::Session;
using mcuflow::Span;

constexpr uint64_t kMaxArenaBytes = 8u << 20;  // larger plans are skipped, not failed
constexpr std::align_val_t kAlign{16};          // what the loader and bind require of their spans

// Exactly `n` bytes, 16-byte aligned, so ASan reports the first byte outside.
struct Exact {
  explicit Exact(size_t n) : n(n), p(static_cast<uint8_t*>(::operator new(n ? n : 1, kAlign))) {}
  ~Exact() { ::operator delete(p, kAlign); }
  Exact(const Exact&) = delete;
  Exact& operator=(const Exact&) = delete;
  size_t n;
  uint8_t* p;
};

bool zeros(void*, uint32_t, uint32_t, uint8_t* dst, uint32_t bytes) {
  std::memset(dst, 0, bytes);
  return true;
}

// Which invariant broke, and the error code, before libFuzzer saves the input.
[[noreturn]] void finding(const char* what, Error e) {
  std::fprintf(stderr, "mcuflow fuzz finding: %s (%s)\n", what, mcuflow::error_name(e));
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > UINT32_MAX) return 0;
  Exact file(size);
  if (size) std::memcpy(file.p, data, size);
  // The checksums recomputed over the file size the header states (as a buggy writer would), so
  // that mutations reach the verifier instead of stopping at a checksum.
  mcuflow::write_checksums(file.p, uint32_t(size));
  Exact original(size);
  if (size) std::memcpy(original.p, file.p, size);
  // The lighter level (weights unchecked) must still be memory safe, and refuse nothing kFull accepts.
  const Span<const uint8_t> bytes{file.p, uint32_t(size)};
  auto loaded = Program::load(bytes, mcuflow::all_kernels(), nullptr, mcuflow::Verify::kStructure);
  if (!loaded.ok()) {
    if (Program::load(bytes, mcuflow::all_kernels()).ok()) finding("Verify::kStructure refuses what kFull accepts", loaded.error());
    return 0;
  }
  const Program& program = loaded.value();

  uint64_t total = 0;
  for (uint32_t r = 0; r < program.region_count(); ++r) total += program.region_bytes(r);
  if (total > kMaxArenaBytes) return 0;
  Exact* arenas[mcuflow::format::kMaxRegions] = {};
  Span<uint8_t> spans[mcuflow::format::kMaxRegions];
  for (uint32_t r = 0; r < program.region_count(); ++r) {
    arenas[r] = new Exact(program.region_bytes(r));
    std::memset(arenas[r]->p, 0, arenas[r]->n);
    spans[r] = Span<uint8_t>{arenas[r]->p, uint32_t(arenas[r]->n)};
  }
  auto bound = Session::bind(program, spans, program.region_count());
  if (!bound.ok()) finding("load accepted what bind refuses", bound.error());
  // Zero inputs, written after bind as a caller does (bind may have copied constants over them):
  // finite, and every index in range.
  for (uint32_t i = 0; i < program.input_count(); ++i) {
    auto buffer = bound.value().input_buffer(i);
    if (buffer.ok()) std::memset(buffer.value().data, 0, buffer.value().size);
  }
  const mcuflow::InputReader reader{&zeros, nullptr};
  const Error e = bound.value().run(&reader);
  if (e != Error::kOk) finding("run failed", e);
  if (size && std::memcmp(file.p, original.p, size) != 0) finding("run wrote into the program", Error::kOk);
  for (Exact* a : arenas) delete a;
  return 0;
}
