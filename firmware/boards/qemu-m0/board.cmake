# Board qemu-m0: QEMU microbit (cortex-m0). Included by mcuflow_add_firmware().
# Generated from python/mcuflow/boards.py (boards.board_cmake); tests/firmware checks it.
set(MCUFLOW_BOARD_CPU_FLAGS -mcpu=cortex-m0 -mthumb -mfloat-abi=soft)
set(MCUFLOW_BOARD_QEMU_MACHINE microbit)
set(MCUFLOW_BOARD_ICOUNT_SHIFT 7)
