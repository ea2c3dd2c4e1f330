# Board pico2: no emulator (cortex-m33). Included by mcuflow_add_firmware().
# Generated from python/mcuflow/boards.py (boards.board_cmake); tests/firmware checks it.
set(MCUFLOW_BOARD_CPU_FLAGS -mcpu=cortex-m33 -mthumb -mfpu=fpv5-sp-d16 -mfloat-abi=hard)
# Console and host files over the UART (firmware/common/uart_io.c), no semihosting.
set(MCUFLOW_BOARD_CONSOLE uart)
