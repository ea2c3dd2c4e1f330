# mcuflow_add_firmware(<target> BOARD <board> SOURCES <src>...
#                      [INCLUDE_DIRS <dir>...] [DEFINES <NAME=VALUE>...]
#                      [O3_SOURCES <src>...] [STACK_SIZE <bytes>])
#
# Builds <target>.elf for an mcuflow board with its startup code, board interface
# (semihosting, or the UART protocol where board.cmake sets MCUFLOW_BOARD_CONSOLE uart)
# and the linker script generated from its board.json, plus <target>.map and <target>.bin.
# Use together with the toolchain file arm-none-eabi.cmake beside this file
# (CMake >= 3.20).
# Runtime code is built with -Os, O3_SOURCES (kernels) with -O3.

set(MCUFLOW_FIRMWARE_DIR "${CMAKE_CURRENT_LIST_DIR}/.." CACHE INTERNAL "mcuflow firmware/")

function(mcuflow_add_firmware target)
  cmake_parse_arguments(ARG "" "BOARD;STACK_SIZE" "SOURCES;INCLUDE_DIRS;DEFINES;O3_SOURCES" ${ARGN})
  if(NOT ARG_BOARD)
    message(FATAL_ERROR "mcuflow_add_firmware(${target}): BOARD is required")
  endif()
  set(board_dir "${MCUFLOW_FIRMWARE_DIR}/boards/${ARG_BOARD}")
  if(NOT EXISTS "${board_dir}/board.cmake")
    file(GLOB known RELATIVE "${MCUFLOW_FIRMWARE_DIR}/boards" "${MCUFLOW_FIRMWARE_DIR}/boards/*")
    message(FATAL_ERROR "unknown mcuflow board '${ARG_BOARD}'; known boards: ${known}")
  endif()
  set(MCUFLOW_BOARD_CONSOLE semihosting)
  include("${board_dir}/board.cmake")
  # The linker script is generated from the board file at configure time (python/mcuflow/boardfile.py).
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
  set(MCUFLOW_BOARD_LINKER_SCRIPT "${CMAKE_BINARY_DIR}/mcuflow_board_${ARG_BOARD}/link.ld")
  set(generator "${MCUFLOW_FIRMWARE_DIR}/../python/mcuflow/boardfile.py")
  execute_process(
    COMMAND "${Python3_EXECUTABLE}" "${generator}" "${board_dir}/board.json" -o "${MCUFLOW_BOARD_LINKER_SCRIPT}"
    RESULT_VARIABLE boardfile_rc ERROR_VARIABLE boardfile_error)
  if(NOT boardfile_rc EQUAL 0)
    message(FATAL_ERROR "${boardfile_error}")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${board_dir}/board.json" "${generator}")
  set(board_io "${MCUFLOW_FIRMWARE_DIR}/common/semihost.c")
  if(MCUFLOW_BOARD_CONSOLE STREQUAL "uart")
    set(board_io "${MCUFLOW_FIRMWARE_DIR}/common/uart_io.c")
  endif()

  add_executable(${target}
    ${ARG_SOURCES} ${ARG_O3_SOURCES}
    "${MCUFLOW_FIRMWARE_DIR}/common/startup.c"
    "${board_io}"
    "${MCUFLOW_FIRMWARE_DIR}/common/cxx_support.c"
    "${board_dir}/board.c")
  string(TOUPPER "${ARG_BOARD}" board_macro)
  string(REPLACE "-" "_" board_macro "${board_macro}")
  target_include_directories(${target} PRIVATE
    "${MCUFLOW_FIRMWARE_DIR}/include" "${MCUFLOW_FIRMWARE_DIR}/common" ${ARG_INCLUDE_DIRS})
  target_compile_definitions(${target} PRIVATE
    MCUFLOW_BOARD_${board_macro}=1 MCUFLOW_BOARD_NAME="${ARG_BOARD}" ${ARG_DEFINES})
  target_compile_options(${target} PRIVATE ${MCUFLOW_BOARD_CPU_FLAGS} -g
    $<$<COMPILE_LANGUAGE:C>:-std=gnu11>
    $<$<COMPILE_LANGUAGE:CXX>:-std=c++17>)
  foreach(src ${ARG_SOURCES} ${MCUFLOW_FIRMWARE_DIR}/common/startup.c
              ${board_io}
              ${MCUFLOW_FIRMWARE_DIR}/common/cxx_support.c ${board_dir}/board.c)
    set_source_files_properties(${src} TARGET_DIRECTORY ${target} PROPERTIES COMPILE_OPTIONS -Os)
  endforeach()
  foreach(src ${ARG_O3_SOURCES})
    set_source_files_properties(${src} TARGET_DIRECTORY ${target} PROPERTIES COMPILE_OPTIONS -O3)
  endforeach()
  target_link_options(${target} PRIVATE ${MCUFLOW_BOARD_CPU_FLAGS}
    -T "${MCUFLOW_BOARD_LINKER_SCRIPT}" -nostartfiles --specs=nano.specs
    -Wl,--no-warn-rwx-segments "-Wl,-Map=$<TARGET_FILE_DIR:${target}>/${target}.map")
  if(ARG_STACK_SIZE)
    target_link_options(${target} PRIVATE "-Wl,--defsym=__stack_size__=${ARG_STACK_SIZE}")
  endif()
  # Link with the C driver even for C++ sources: no libstdc++ on the device.
  set_target_properties(${target} PROPERTIES
    LINK_DEPENDS "${MCUFLOW_BOARD_LINKER_SCRIPT}" LINKER_LANGUAGE C)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND "${CMAKE_OBJCOPY}" -O binary "$<TARGET_FILE:${target}>"
            "$<TARGET_FILE_DIR:${target}>/${target}.bin"
    COMMENT "objcopy ${target}.bin")
  set_property(TARGET ${target} PROPERTY MCUFLOW_QEMU_MACHINE "${MCUFLOW_BOARD_QEMU_MACHINE}")
  set_property(TARGET ${target} PROPERTY MCUFLOW_ICOUNT_SHIFT "${MCUFLOW_BOARD_ICOUNT_SHIFT}")
endfunction()
