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
#
# The kernel table and the lists of sources come from mcuflow's firmware generator
# (python/mcuflow/firmware_sources.py, the one `mcuflow firmware` uses), run at configure time
# with a Python 3 interpreter (MCUFLOW_PYTHON, default the one find_package(Python3) finds).

set(MCUFLOW_SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/../.." CACHE INTERNAL "mcuflow source tree")
if(NOT MCUFLOW_PYTHON)
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  set(MCUFLOW_PYTHON "${Python3_EXECUTABLE}" CACHE FILEPATH "Python 3 that runs mcuflow's firmware generator")
endif()

# Runs the firmware generator into `out_dir` (its arguments after the caller's name) and
# includes what it wrote: MCUFLOW_KERNELS, MCUFLOW_ARENA_BYTES, MCUFLOW_RUNTIME_SOURCES,
# MCUFLOW_KERNEL_SOURCES (and out_dir/mcuflow_kernels.h, out_dir/kernel_table.cpp).
macro(_mcuflow_generate caller out_dir)
  execute_process(COMMAND "${MCUFLOW_PYTHON}" "${MCUFLOW_SOURCE_DIR}/python/mcuflow/firmware_sources.py"
                          ${ARGN} -o "${out_dir}"
                  RESULT_VARIABLE _mcuflow_status ERROR_VARIABLE _mcuflow_error)
  if(NOT _mcuflow_status EQUAL 0)
    string(STRIP "${_mcuflow_error}" _mcuflow_error)
    string(REGEX REPLACE "^error: " "" _mcuflow_error "${_mcuflow_error}")
    message(FATAL_ERROR "${caller}: ${_mcuflow_error}")
  endif()
  include("${out_dir}/mcuflow_sources.cmake")
endmacro()

function(mcuflow_read_program file)
  cmake_parse_arguments(ARG "" "KERNELS_VAR;ARENA_BYTES_VAR" "" ${ARGN})
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "mcuflow program ${file} does not exist")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${file}")
  string(SHA256 key "${file}")
  _mcuflow_generate("mcuflow_read_program" "${CMAKE_CURRENT_BINARY_DIR}/mcuflow_programs/${key}" --program "${file}")
  if(ARG_KERNELS_VAR)
    set(${ARG_KERNELS_VAR} ${MCUFLOW_KERNELS} PARENT_SCOPE)
  endif()
  if(ARG_ARENA_BYTES_VAR)
    set(${ARG_ARENA_BYTES_VAR} ${MCUFLOW_ARENA_BYTES} PARENT_SCOPE)
  endif()
endfunction()

function(mcuflow_add_runtime target)
  cmake_parse_arguments(ARG "" "PROGRAM;BOARD" "KERNELS;CPU_FLAGS" ${ARGN})
  if(NOT ARG_PROGRAM AND NOT ARG_KERNELS)
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

  set(args "")
  if(ARG_PROGRAM)
    if(NOT EXISTS "${ARG_PROGRAM}")
      message(FATAL_ERROR "mcuflow program ${ARG_PROGRAM} does not exist")
    endif()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${ARG_PROGRAM}")
    list(APPEND args --program "${ARG_PROGRAM}")
  endif()
  foreach(kernel ${ARG_KERNELS})
    list(APPEND args --kernel ${kernel})
  endforeach()
  # The kernel table (built at compile time, no global constructor: only these kernels link).
  set(generated "${CMAKE_CURRENT_BINARY_DIR}/${target}_mcuflow")
  _mcuflow_generate("mcuflow_add_runtime(${target})" "${generated}" ${args})

  add_library(${target} STATIC ${MCUFLOW_RUNTIME_SOURCES} ${MCUFLOW_KERNEL_SOURCES})
  target_include_directories(${target} PUBLIC "${MCUFLOW_SOURCE_DIR}/runtime/include"
                                              "${MCUFLOW_SOURCE_DIR}/kernels/include" "${generated}")
  target_compile_features(${target} PUBLIC cxx_std_17)
  target_link_libraries(${target} INTERFACE m)  # float kernels call roundf, expf
  set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF)
  # Same code generation as `mcuflow firmware`: float kernels round like the host build
  # (no fused multiply-add), freestanding C++ without exceptions or RTTI.
  target_compile_options(${target} PRIVATE ${cpu_flags} -ffunction-sections -fdata-sections -ffp-contract=off
    -fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit)
  set_source_files_properties(${MCUFLOW_RUNTIME_SOURCES} TARGET_DIRECTORY ${target} PROPERTIES COMPILE_OPTIONS -Os)
  set_source_files_properties(${MCUFLOW_KERNEL_SOURCES} TARGET_DIRECTORY ${target} PROPERTIES COMPILE_OPTIONS -O3)
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
