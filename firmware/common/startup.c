/*
 * mcuflow startup code shared by every board (Armv6-M, Armv7-M, Armv8-M,
 * Armv8.1-M; Thumb only). Written from the Armv7-M / Armv8-M Architecture
 * Reference Manuals:
 *   - vector table: word 0 = initial MSP, word 1 = reset vector (Thumb bit
 *     set), then the system exceptions and external interrupts;
 *   - CPACR (0xE000ED88) bits [23:20] = CP11:CP10 full access, which
 *     enables the FPU and, on Armv8.1-M, MVE;
 *   - MSPLIM (Armv8-M Mainline) makes a stack overflow fault instead of
 *     silently corrupting memory below the stack.
 *
 * Linker-script symbols used here (see firmware/boards/<board>/link.ld):
 *   __data_load__  __data_start__  __data_end__   .data (LMA in flash)
 *   __bss_start__  __bss_end__                    .bss
 *   __stack_limit__ __stack_top__                 the stack
 *   __preinit_array_start/end  __init_array_start/end
 */
#include <stdint.h>

#include "mcuflow/board.h"
#include "mcuflow_internal.h"

extern uint32_t __data_load__[];
extern uint32_t __data_start__[];
extern uint32_t __data_end__[];
extern uint32_t __bss_start__[];
extern uint32_t __bss_end__[];
extern uint32_t __stack_limit__[];
extern uint32_t __stack_top__[];

typedef void (*mcuflow_init_fn)(void);
extern mcuflow_init_fn __preinit_array_start[];
extern mcuflow_init_fn __preinit_array_end[];
extern mcuflow_init_fn __init_array_start[];
extern mcuflow_init_fn __init_array_end[];

extern int main(void);

void Reset_Handler(void) __attribute__((noreturn, used));
void HardFault_Handler(void) __attribute__((naked, used));
void Default_Handler(void) __attribute__((naked, used));
void mcuflow_fault_report(const uint32_t *frame, uint32_t exc_return,
                          int code) __attribute__((noreturn, used));

#define MCUFLOW_NUM_IRQS 32
#define DEFAULT_X4 Default_Handler, Default_Handler, Default_Handler, Default_Handler
#define DEFAULT_X32 DEFAULT_X4, DEFAULT_X4, DEFAULT_X4, DEFAULT_X4, \
                    DEFAULT_X4, DEFAULT_X4, DEFAULT_X4, DEFAULT_X4

/* The vector table: placed first in code memory by the linker script. */
__attribute__((section(".vectors"), used))
void (*const mcuflow_vectors[16 + MCUFLOW_NUM_IRQS])(void) = {
    (void (*)(void))(uintptr_t)__stack_top__, /* 0: initial MSP */
    Reset_Handler,                           /* 1: reset */
    Default_Handler,                         /* 2: NMI */
    HardFault_Handler,                       /* 3: HardFault */
    Default_Handler,                         /* 4: MemManage */
    Default_Handler,                         /* 5: BusFault */
    Default_Handler,                         /* 6: UsageFault */
    Default_Handler,                         /* 7: SecureFault (v8-M) */
    0, 0, 0,                                 /* 8-10: reserved */
    Default_Handler,                         /* 11: SVCall */
    Default_Handler,                         /* 12: DebugMonitor */
    0,                                       /* 13: reserved */
    Default_Handler,                         /* 14: PendSV */
    Default_Handler,                         /* 15: SysTick */
    DEFAULT_X32,                             /* 16-47: external IRQs 0-31 */
};

/* Loops written with volatile accesses so the compiler cannot turn them
 * into memcpy/memset calls: painting the stack must not use the stack
 * region being painted. */
__attribute__((noreturn, used)) void Reset_Handler(void)
{
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
    __asm__ volatile("msr msplim, %0" : : "r"(__stack_limit__));
#endif

    /* .data: copy initial values from their load address in flash. */
    {
        const volatile uint32_t *src = __data_load__;
        volatile uint32_t *dst = __data_start__;
        while (dst < (volatile uint32_t *)__data_end__) {
            *dst++ = *src++;
        }
    }
    /* .bss: zero. */
    {
        volatile uint32_t *dst = __bss_start__;
        while (dst < (volatile uint32_t *)__bss_end__) {
            *dst++ = 0u;
        }
    }
    /* Paint the unused part of the stack for high-water measurement. */
    {
        uint32_t sp;
        __asm__ volatile("mov %0, sp" : "=r"(sp));
        volatile uint32_t *p = __stack_limit__;
        while ((uintptr_t)p < (uintptr_t)sp) {
            *p++ = MCUFLOW_STACK_PAINT;
        }
    }

#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
    /* CPACR: CP10 and CP11 full access (bits 23:20). */
    {
        volatile uint32_t *cpacr = (volatile uint32_t *)0xE000ED88u;
        *cpacr |= (0xFu << 20);
        __asm__ volatile("dsb\n\tisb" ::: "memory");
    }
#endif

    /* C++ constructors are not used by mcuflow code (device rule), but run
     * any that exist so nothing breaks silently. */
    for (mcuflow_init_fn *f = __preinit_array_start; f < __preinit_array_end; ++f) {
        (*f)();
    }
    for (mcuflow_init_fn *f = __init_array_start; f < __init_array_end; ++f) {
        (*f)();
    }

    board_init();
    board_exit(main());
}

/* Fault handlers: report on a stack that cannot overwrite the exception frame,
 * then exit with a distinctive code. The frame lies at the faulting stack
 * pointer: while it is inside the stack with room below it, the report runs
 * below the frame; otherwise (a stack overflow) from the top of the stack,
 * far from the frame. Resetting to the top every time made the report's own
 * stack overwrite a frame near the top, and print a stack address as pc. */
#define MCUFLOW_FAULT_HANDLER(name, exit_code)                                 \
    __attribute__((naked, used)) void name(void)                               \
    {                                                                          \
        __asm__ volatile(                                                      \
            "mrs  r0, msp\n\t"                                                 \
            "mov  r1, lr\n\t"                                                  \
            "ldr  r2, =__stack_top__\n\t"                                      \
            "cmp  r0, r2\n\t"                                                  \
            "bhs  1f\n\t"                                                      \
            "ldr  r3, =__stack_limit__ + 256\n\t"                              \
            "cmp  r0, r3\n\t"                                                  \
            "blo  1f\n\t"                                                      \
            "mov  r2, r0\n\t"                                                  \
            "1:\n\t"                                                           \
            "mov  sp, r2\n\t"                                                  \
            "movs r2, %0\n\t"                                                  \
            "ldr  r3, =mcuflow_fault_report\n\t"                               \
            "bx   r3\n\t"                                                      \
            ".ltorg\n\t"                                                       \
            :                                                                  \
            : "i"(exit_code));                                                 \
    }

MCUFLOW_FAULT_HANDLER(HardFault_Handler, MCUFLOW_EXIT_HARDFAULT)
MCUFLOW_FAULT_HANDLER(Default_Handler, MCUFLOW_EXIT_BAD_EXCEPTION)

static void put_hex(char *out, uint32_t v)
{
    static const char digits[] = "0123456789abcdef";
    out[0] = '0';
    out[1] = 'x';
    for (int i = 0; i < 8; ++i) {
        out[2 + i] = digits[(v >> (28 - 4 * i)) & 0xFu];
    }
    out[10] = '\0';
}

__attribute__((noreturn, used)) void mcuflow_fault_report(const uint32_t *frame,
                                                          uint32_t exc_return,
                                                          int code)
{
    char hex[11];
    uint32_t ipsr;
    __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
    board_puts(code == MCUFLOW_EXIT_HARDFAULT ? "\nmcuflow: HardFault"
                                              : "\nmcuflow: unexpected exception");
    board_puts(" ipsr=");
    put_hex(hex, ipsr);
    board_puts(hex);
    /* The exception frame is only trusted if it lies inside the stack. */
    if ((uintptr_t)frame >= (uintptr_t)__stack_limit__ &&
        (uintptr_t)(frame + 8) <= (uintptr_t)__stack_top__ &&
        ((uintptr_t)frame & 3u) == 0u) {
        board_puts(" pc=");
        put_hex(hex, frame[6]);
        board_puts(hex);
        board_puts(" lr=");
        put_hex(hex, frame[5]);
        board_puts(hex);
    }
    board_puts(" exc_return=");
    put_hex(hex, exc_return);
    board_puts(hex);
    board_puts("\n");
    board_exit(code);
}

uint32_t board_stack_high_water(void)
{
    const volatile uint32_t *p = __stack_limit__;
    while ((uintptr_t)p < (uintptr_t)__stack_top__ && *p == MCUFLOW_STACK_PAINT) {
        ++p;
    }
    return (uint32_t)((uintptr_t)__stack_top__ - (uintptr_t)p);
}

uint32_t board_stack_size(void)
{
    return (uint32_t)((uintptr_t)__stack_top__ - (uintptr_t)__stack_limit__);
}
