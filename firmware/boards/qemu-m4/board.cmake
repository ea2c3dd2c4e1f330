# Board qemu-m4: QEMU mps2-an386 (cortex-m4). Included by mcuflow_add_firmware().
# Generated from python/mcuflow/boards.py (boards.board_cmake); tests/firmware checks it.
set(MCUFLOW_BOARD_CPU_FLAGS -mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard)
set(MCUFLOW_BOARD_QEMU_MACHINE mps2-an386)
set(MCUFLOW_BOARD_ICOUNT_SHIFT 6)
# The linker script is generated from board.json at configure time (python/mcuflow/boardfile.py).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(MCUFLOW_BOARD_LINKER_SCRIPT "${CMAKE_BINARY_DIR}/mcuflow_board_qemu-m4/link.ld")
execute_process(
  COMMAND "${Python3_EXECUTABLE}" "${CMAKE_CURRENT_LIST_DIR}/../../../python/mcuflow/boardfile.py"
          "${CMAKE_CURRENT_LIST_DIR}/board.json" -o "${MCUFLOW_BOARD_LINKER_SCRIPT}"
  RESULT_VARIABLE _mcuflow_boardfile_rc ERROR_VARIABLE _mcuflow_boardfile_error)
if(NOT _mcuflow_boardfile_rc EQUAL 0)
  message(FATAL_ERROR "${_mcuflow_boardfile_error}")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             "${CMAKE_CURRENT_LIST_DIR}/board.json" "${CMAKE_CURRENT_LIST_DIR}/../../../python/mcuflow/boardfile.py")
