# Board pico2: no emulator (cortex-m33). Included by mcuflow_add_firmware().
# Generated from python/mcuflow/boards.py (boards.board_cmake); tests/firmware checks it.
set(MCUFLOW_BOARD_CPU_FLAGS -mcpu=cortex-m33 -mthumb -mfpu=fpv5-sp-d16 -mfloat-abi=hard)
# Console and host files over the UART (firmware/common/uart_io.c), no semihosting.
set(MCUFLOW_BOARD_CONSOLE uart)
# The linker script is generated from board.json at configure time (python/mcuflow/boardfile.py).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(MCUFLOW_BOARD_LINKER_SCRIPT "${CMAKE_BINARY_DIR}/mcuflow_board_pico2/link.ld")
execute_process(
  COMMAND "${Python3_EXECUTABLE}" "${CMAKE_CURRENT_LIST_DIR}/../../../python/mcuflow/boardfile.py"
          "${CMAKE_CURRENT_LIST_DIR}/board.json" -o "${MCUFLOW_BOARD_LINKER_SCRIPT}"
  RESULT_VARIABLE _mcuflow_boardfile_rc ERROR_VARIABLE _mcuflow_boardfile_error)
if(NOT _mcuflow_boardfile_rc EQUAL 0)
  message(FATAL_ERROR "${_mcuflow_boardfile_error}")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             "${CMAKE_CURRENT_LIST_DIR}/board.json" "${CMAKE_CURRENT_LIST_DIR}/../../../python/mcuflow/boardfile.py")
