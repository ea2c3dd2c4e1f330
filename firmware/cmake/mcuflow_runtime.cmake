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
#   Reads a program's kernels (its op records' kernel ids) and arena size at configure time.

set(MCUFLOW_SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/../.." CACHE INTERNAL "mcuflow source tree")

# Little-endian unsigned integer of `bytes` bytes at byte `offset` of `file`.
function(_mcuflow_read_uint file offset bytes out_var)
  file(READ "${file}" hex OFFSET ${offset} LIMIT ${bytes} HEX)
  string(LENGTH "${hex}" digits)
  math(EXPR want "2 * ${bytes}")
  if(NOT digits EQUAL want)
    message(FATAL_ERROR "${file} is truncated (no ${bytes} bytes at offset ${offset})")
  endif()
  set(value "")
  foreach(at RANGE 0 ${digits} 2)
    if(at LESS digits)
      string(SUBSTRING "${hex}" ${at} 2 byte)
      set(value "${byte}${value}")
    endif()
  endforeach()
  math(EXPR value "0x${value}")
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
  # The kernels are the op records' kernel ids (what Program::load looks up; the metadata, absent
  # from a device image, is for tools), named by the list the runtime is built from.
  file(READ "${MCUFLOW_SOURCE_DIR}/runtime/include/mcuflow/runtime/kernel_id.h" kernel_list)
  string(REGEX MATCHALL "X\\([a-z0-9_]+, [0-9]+" entries "${kernel_list}")
  foreach(entry ${entries})
    string(REGEX MATCH "X\\(([a-z0-9_]+), ([0-9]+)" unused "${entry}")
    set(kernel_${CMAKE_MATCH_2} ${CMAKE_MATCH_1})
  endforeach()
  # Header and op record layout: docs/program_format.md (op_count u16 at 22, ops_offset u32 at
  # 32, arena_bytes u32 at 64; each 28-byte op record starts with its u16 kernel id).
  _mcuflow_read_uint("${file}" 22 2 op_count)
  _mcuflow_read_uint("${file}" 32 4 ops_offset)
  _mcuflow_read_uint("${file}" 64 4 arena_bytes)
  set(kernels "")
  if(op_count GREATER 0)
    math(EXPR last "${op_count} - 1")
    foreach(i RANGE ${last})
      math(EXPR at "${ops_offset} + 28 * ${i}")
      _mcuflow_read_uint("${file}" ${at} 2 id)
      if(NOT DEFINED kernel_${id})
        message(FATAL_ERROR "${file}: op ${i} uses kernel id ${id}, unknown to the mcuflow at ${MCUFLOW_SOURCE_DIR}")
      endif()
      list(APPEND kernels ${kernel_${id}})
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
  list(SORT kernels)  # the link order, like `mcuflow firmware`'s
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
