# Board qemu-m33: QEMU mps2-an505 (cortex-m33). Included by mcuflow_add_firmware().
# Generated from python/mcuflow/boards.py (boards.board_cmake); tests/firmware checks it.
set(MCUFLOW_BOARD_CPU_FLAGS -mcpu=cortex-m33 -mthumb -mfpu=fpv5-sp-d16 -mfloat-abi=hard)
set(MCUFLOW_BOARD_QEMU_MACHINE mps2-an505)
set(MCUFLOW_BOARD_ICOUNT_SHIFT 6)
