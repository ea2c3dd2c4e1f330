# Board qemu-m3: QEMU mps2-an385 (cortex-m3). Included by mcuflow_add_firmware().
# Generated from python/mcuflow/boards.py (boards.board_cmake); tests/firmware checks it.
set(MCUFLOW_BOARD_CPU_FLAGS -mcpu=cortex-m3 -mthumb -mfloat-abi=soft)
set(MCUFLOW_BOARD_QEMU_MACHINE mps2-an385)
set(MCUFLOW_BOARD_ICOUNT_SHIFT 6)
