# Board stm32f405: QEMU netduinoplus2 (cortex-m4). Included by mcuflow_add_firmware().
# Generated from python/mcuflow/boards.py (boards.board_cmake); tests/firmware checks it.
set(MCUFLOW_BOARD_CPU_FLAGS -mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard)
set(MCUFLOW_BOARD_QEMU_MACHINE netduinoplus2)
set(MCUFLOW_BOARD_ICOUNT_SHIFT 5)
# Console and host files over the UART (firmware/common/uart_io.c), no semihosting.
set(MCUFLOW_BOARD_CONSOLE uart)
