# Board qemu-m7: QEMU mps2-an500 (cortex-m7). Included by mcuflow_add_firmware().
# Generated from python/mcuflow/boards.py (boards.board_cmake); tests/firmware checks it.
set(MCUFLOW_BOARD_CPU_FLAGS -mcpu=cortex-m7 -mthumb -mfpu=fpv5-d16 -mfloat-abi=hard)
set(MCUFLOW_BOARD_QEMU_MACHINE mps2-an500)
set(MCUFLOW_BOARD_ICOUNT_SHIFT 6)
