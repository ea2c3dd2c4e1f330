# The mcuflow runtime for your own arm-none-eabi CMake project (CMake >= 3.20; see
# docs/integration.md and examples/cmake_firmware/).
#
# mcuflow_add_runtime(<target> [PROGRAM <model.mfp>] [KERNELS <kernel>...]
#                     [BOARD <board> | CPU_FLAGS <flag>...])
#   A static library: the runtime (loader, verifier, executor, kernel adapters; -Os) and only
#   the kernels listed or used by PROGRAM (-O3), plus the generated header mcuflow_kernels.h
#   declaring   mcuflow::KernelTable mcuflow_kernels();   the table Program::load needs.
#   CPU flags come from an mcuflow BOARD, from CPU_FLAGS, or from your global flags; they must
#   match your firmware's. A kernel missing from the table makes Program::load return
#   kernel_not_linked.
#
# mcuflow_embed_program(<target> FILE <model.mfp>)
#   Links the program into <target>'s flash, 16-byte aligned and read in place, as
#   extern "C" const uint8_t mcuflow_program[], mcuflow_program_end[];
#   and defines MCUFLOW_PROGRAM_ARENA_BYTES (the arena the program needs) for its sources.
#   The project must enable the ASM language.
#
# mcuflow_read_program(<model.mfp> KERNELS_VAR <var> ARENA_BYTES_VAR <var>)
#   Reads a program's kernels and arena size at configure time (header + metadata JSON).

set(MCUFLOW_SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/../.." CACHE INTERNAL "mcuflow source tree")

# Little-endian uint32 at byte `offset` of `file`.
function(_mcuflow_read_u32 file offset out_var)
  file(READ "${file}" hex OFFSET ${offset} LIMIT 4 HEX)
  string(SUBSTRING "${hex}" 6 2 b3)
  string(SUBSTRING "${hex}" 4 2 b2)
  string(SUBSTRING "${hex}" 2 2 b1)
  string(SUBSTRING "${hex}" 0 2 b0)
  math(EXPR value "0x${b3}${b2}${b1}${b0}")
  set(${out_var} ${value} PARENT_SCOPE)
endfunction()

function(mcuflow_read_program file)
  cmake_parse_arguments(ARG "" "KERNELS_VAR;ARENA_BYTES_VAR" "" ${ARGN})
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "mcuflow program ${file} does not exist")
  endif()
  file(READ "${file}" magic LIMIT 4 HEX)
  if(NOT magic STREQUAL "4d465031")  # "MFP1"
    message(FATAL_ERROR "${file} is not an mcuflow program (.mfp)")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${file}")
  # Header offsets: docs/program_format.md (metadata_offset 56, metadata_bytes 60, arena_bytes 64).
  _mcuflow_read_u32("${file}" 56 metadata_offset)
  _mcuflow_read_u32("${file}" 60 metadata_bytes)
  _mcuflow_read_u32("${file}" 64 arena_bytes)
  file(READ "${file}" metadata OFFSET ${metadata_offset} LIMIT ${metadata_bytes})
  string(JSON op_count ERROR_VARIABLE json_error LENGTH "${metadata}" ops)
  if(json_error)
    message(FATAL_ERROR "${file}: unreadable metadata (${json_error})")
  endif()
  set(kernels "")
  if(op_count GREATER 0)
    math(EXPR last "${op_count} - 1")
    foreach(i RANGE ${last})
      string(JSON kernel GET "${metadata}" ops ${i} kernel)
      list(APPEND kernels ${kernel})
    endforeach()
  endif()
  list(REMOVE_DUPLICATES kernels)
  if(ARG_KERNELS_VAR)
    set(${ARG_KERNELS_VAR} ${kernels} PARENT_SCOPE)
  endif()
  if(ARG_ARENA_BYTES_VAR)
    set(${ARG_ARENA_BYTES_VAR} ${arena_bytes} PARENT_SCOPE)
  endif()
endfunction()

# Optimized kernels are named <op>_<variant>_<tier> (dsp, mve); the rest are reference kernels.
function(_mcuflow_kernel_tier kernel out_var)
  if(kernel MATCHES "_(scalar|dsp|mve)$")
    set(${out_var} ${CMAKE_MATCH_1} PARENT_SCOPE)
  else()
    set(${out_var} reference PARENT_SCOPE)
  endif()
endfunction()

function(mcuflow_add_runtime target)
  cmake_parse_arguments(ARG "" "PROGRAM;BOARD" "KERNELS;CPU_FLAGS" ${ARGN})
  set(kernels ${ARG_KERNELS})
  if(ARG_PROGRAM)
    mcuflow_read_program("${ARG_PROGRAM}" KERNELS_VAR program_kernels)
    list(APPEND kernels ${program_kernels})
  endif()
  list(REMOVE_DUPLICATES kernels)
  if(NOT kernels)
    message(FATAL_ERROR "mcuflow_add_runtime(${target}): give PROGRAM <model.mfp> or KERNELS <kernel>...")
  endif()
  set(cpu_flags ${ARG_CPU_FLAGS})
  if(ARG_BOARD)
    set(board_cmake "${MCUFLOW_SOURCE_DIR}/firmware/boards/${ARG_BOARD}/board.cmake")
    if(NOT EXISTS "${board_cmake}")
      message(FATAL_ERROR "mcuflow_add_runtime(${target}): unknown mcuflow board '${ARG_BOARD}'")
    endif()
    include("${board_cmake}")
    set(cpu_flags ${MCUFLOW_BOARD_CPU_FLAGS})
  endif()

  set(root "${MCUFLOW_SOURCE_DIR}")
  file(GLOB runtime_sources "${root}/runtime/src/*.cpp" "${root}/runtime/src/ops/*.cpp")
  list(REMOVE_ITEM runtime_sources "${root}/runtime/src/all_kernels.cpp")
  set(kernel_sources "")
  set(tiers "")
  set(ids "")
  set(slots "")
  foreach(kernel ${kernels})
    _mcuflow_kernel_tier(${kernel} tier)
    set(source "${root}/kernels/${tier}/${kernel}.cpp")
    if(kernel STREQUAL "read_input_rows")  # performed by Session::run itself: no kernel source
      set(source "")
    elseif(NOT EXISTS "${source}")
      file(GLOB known RELATIVE "${root}/kernels" "${root}/kernels/*/*.cpp")
      message(FATAL_ERROR "mcuflow_add_runtime(${target}): unknown kernel '${kernel}' (no ${source}); "
                          "known: ${known}")
    endif()
    list(APPEND kernel_sources ${source})
    list(APPEND tiers ${tier})
    string(APPEND ids "    mcuflow::KernelId::${kernel},\n")
    string(APPEND slots "  t.entries[size_t(mcuflow::KernelId::${kernel})] = &mcuflow::ops::kernel_entry_${kernel};\n")
  endforeach()
  list(REMOVE_DUPLICATES tiers)
  foreach(tier ${tiers})
    if(NOT tier STREQUAL "reference")
      file(GLOB tier_adapters "${root}/runtime/src/ops/${tier}/*.cpp")
      list(APPEND runtime_sources ${tier_adapters})
    endif()
  endforeach()

  # The kernel table, built at compile time (no global constructor): only these kernels link.
  set(generated "${CMAKE_CURRENT_BINARY_DIR}/${target}_mcuflow")
  file(CONFIGURE OUTPUT "${generated}/mcuflow_kernels.h" CONTENT
"// Generated by mcuflow_add_runtime(${target}).
#pragma once
#include \"mcuflow/runtime/runtime.h\"

// The kernels this firmware links, indexed by kernel id: pass it to mcuflow::Program::load.
mcuflow::KernelTable mcuflow_kernels();
" @ONLY)
  file(CONFIGURE OUTPUT "${generated}/mcuflow_kernel_table.cpp" CONTENT
"// Generated by mcuflow_add_runtime(${target}): ${kernels}
#include \"mcuflow/runtime/kernel_entries.h\"
#include \"mcuflow_kernels.h\"

namespace {

constexpr mcuflow::KernelId kLinked[] = {
${ids}};

// The table ends at the largest linked id: Program::load rejects higher ids as not linked.
constexpr size_t slot_count() {
  size_t n = 0;
  for (mcuflow::KernelId id : kLinked) n = size_t(id) + 1 > n ? size_t(id) + 1 : n;
  return n;
}

struct Table {
  const mcuflow::KernelEntry* entries[slot_count()];
};

constexpr Table make_table() {
  Table t{};
${slots}  return t;
}

constexpr Table kTable = make_table();

}  // namespace

mcuflow::KernelTable mcuflow_kernels() { return mcuflow::KernelTable{kTable.entries, uint16_t(slot_count())}; }
" @ONLY)

  add_library(${target} STATIC ${runtime_sources} ${kernel_sources} "${generated}/mcuflow_kernel_table.cpp")
  target_include_directories(${target} PUBLIC "${root}/runtime/include" "${root}/kernels/include" "${generated}")
  target_compile_features(${target} PUBLIC cxx_std_17)
  target_link_libraries(${target} INTERFACE m)  # float kernels call roundf, expf
  set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF)
  # Same code generation as `mcuflow firmware`: float kernels round like the host build
  # (no fused multiply-add), freestanding C++ without exceptions or RTTI.
  target_compile_options(${target} PRIVATE ${cpu_flags} -ffunction-sections -fdata-sections -ffp-contract=off
    -fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit)
  set_source_files_properties(${runtime_sources} "${generated}/mcuflow_kernel_table.cpp"
    TARGET_DIRECTORY ${target} PROPERTIES COMPILE_OPTIONS -Os)
  set_source_files_properties(${kernel_sources} TARGET_DIRECTORY ${target} PROPERTIES COMPILE_OPTIONS -O3)
endfunction()

function(mcuflow_embed_program target)
  cmake_parse_arguments(ARG "" "FILE" "" ${ARGN})
  if(NOT ARG_FILE)
    message(FATAL_ERROR "mcuflow_embed_program(${target}): FILE <model.mfp> is required")
  endif()
  get_filename_component(program "${ARG_FILE}" ABSOLUTE)
  mcuflow_read_program("${program}" ARENA_BYTES_VAR arena_bytes)
  # Section and symbol names are the ones `mcuflow firmware` uses, so `mcuflow size` finds them.
  set(asm "${CMAKE_CURRENT_BINARY_DIR}/${target}_mcuflow/program.S")
  file(CONFIGURE OUTPUT "${asm}" CONTENT
"/* Generated by mcuflow_embed_program(${target}): the program, in flash, read in place. */
  .section .rodata.mcuflow_program, \"a\"
  .balign 16
  .global mcuflow_program
mcuflow_program:
  .incbin \"${program}\"
  .global mcuflow_program_end
mcuflow_program_end:
" @ONLY)
  set_source_files_properties("${asm}" PROPERTIES OBJECT_DEPENDS "${program}")
  target_sources(${target} PRIVATE "${asm}")
  if(arena_bytes LESS 16)  # a zero-length array is not C++; the runtime wants 16-byte alignment anyway
    set(arena_bytes 16)
  endif()
  target_compile_definitions(${target} PRIVATE MCUFLOW_PROGRAM_ARENA_BYTES=${arena_bytes})
endfunction()
