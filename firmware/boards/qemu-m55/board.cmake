# Board qemu-m55: QEMU mps3-an547 (cortex-m55). Included by mcuflow_add_firmware().
# Generated from python/mcuflow/boards.py (boards.board_cmake); tests/firmware checks it.
set(MCUFLOW_BOARD_CPU_FLAGS -mcpu=cortex-m55 -mthumb -mfloat-abi=hard)
set(MCUFLOW_BOARD_QEMU_MACHINE mps3-an547)
set(MCUFLOW_BOARD_ICOUNT_SHIFT 5)
