# Board stm32f405: STM32F405 (cortex-m4), QEMU netduinoplus2. Included by mcuflow_add_firmware().
# Keep in sync with python/mcuflow/boards.py (tests/firmware checks it).
set(MCUFLOW_BOARD_CPU_FLAGS -mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard)
set(MCUFLOW_BOARD_LINKER_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/link.ld")
set(MCUFLOW_BOARD_QEMU_MACHINE netduinoplus2)
set(MCUFLOW_BOARD_ICOUNT_SHIFT 5)
# Console and host files over USART1 (firmware/common/uart_io.c), no semihosting.
set(MCUFLOW_BOARD_CONSOLE uart)
