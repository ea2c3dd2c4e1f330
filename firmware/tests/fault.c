/*
 * Fault-path test firmware. FAULT_KIND selects what goes wrong:
 *   1  undefined instruction (UDF)  -> HardFault -> exit MCUFLOW_EXIT_HARDFAULT
 *   2  unbounded recursion: on Armv8-M Mainline MSPLIM turns the stack
 *      overflow into a fault -> exit MCUFLOW_EXIT_HARDFAULT
 *   3  hang forever (host-side timeout test)
 *   4  store to and load from FAULT_ADDRESS: a HardFault if no memory answers there
 */
#include <stdint.h>

#include "mcuflow/board.h"

#ifndef FAULT_KIND
#define FAULT_KIND 1
#endif

#if FAULT_KIND == 2
__attribute__((noinline, noipa)) static uint32_t recurse(uint32_t n)
{
    volatile uint32_t local[16];
    local[n & 15u] = n;
    uint32_t r = recurse(n + 1u);
    __asm__ volatile("" : : "r"(local) : "memory");
    return r + local[n & 15u];
}
#endif

int main(void)
{
    board_puts("fault test start\n");
#if FAULT_KIND == 1
    /* fault_udf: where the report's pc must point (tests/firmware/test_firmware_faults.py) */
    __asm__ volatile(".global fault_udf\nfault_udf:\n\tudf #0");
#elif FAULT_KIND == 2
    (void)recurse(0);
#elif FAULT_KIND == 3
    for (;;) {
        __asm__ volatile("nop");
    }
#elif FAULT_KIND == 4
    volatile uint32_t *word = (volatile uint32_t *)(FAULT_ADDRESS);
    *word = 0x5A5AA5A5u;
    if (*word != 0x5A5AA5A5u) {
        board_puts("fault test: the word did not keep its value\n");
        return 1;
    }
#endif
    board_puts("fault test: no fault happened\n");
    return 0;
}
