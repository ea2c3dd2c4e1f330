# Board qemu-m4: QEMU mps2-an386 (cortex-m4). Included by mcuflow_add_firmware().
# Generated from python/mcuflow/boards.py (boards.board_cmake); tests/firmware checks it.
set(MCUFLOW_BOARD_CPU_FLAGS -mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard)
set(MCUFLOW_BOARD_QEMU_MACHINE mps2-an386)
set(MCUFLOW_BOARD_ICOUNT_SHIFT 6)
