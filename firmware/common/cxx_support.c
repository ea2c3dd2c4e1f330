/*
 * Minimal C++ ABI support for freestanding device code built with
 * -fno-exceptions -fno-rtti and linked without libstdc++.
 * All weak: a real implementation elsewhere takes precedence.
 */
#include <stddef.h>

#include "mcuflow/board.h"

/* Called if a pure virtual function is ever invoked. */
__attribute__((weak, noreturn)) void __cxa_pure_virtual(void)
{
    board_puts("\nmcuflow: pure virtual call\n");
    board_exit(MCUFLOW_EXIT_PURE_VIRTUAL);
}

__attribute__((weak, noreturn)) void __cxa_deleted_virtual(void)
{
    board_puts("\nmcuflow: deleted virtual call\n");
    board_exit(MCUFLOW_EXIT_PURE_VIRTUAL);
}

/* Deleting destructors of classes with virtual destructors reference
 * operator delete even if nothing is ever deleted. mcuflow has no heap,
 * so these must never run. Mangled names: operator delete(void*) and
 * operator delete(void*, unsigned int). */
__attribute__((weak, noreturn)) void _ZdlPv(void *p)
{
    (void)p;
    board_puts("\nmcuflow: operator delete called (no heap)\n");
    board_exit(MCUFLOW_EXIT_PURE_VIRTUAL);
}

__attribute__((weak, noreturn)) void _ZdlPvj(void *p, unsigned int n)
{
    (void)n;
    _ZdlPv(p);
}
