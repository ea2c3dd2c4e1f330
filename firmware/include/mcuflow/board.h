/*
 * mcuflow board interface.
 *
 * One implementation per board lives in firmware/boards/<board>/board.c;
 * the semihosting and stack parts are shared (firmware/common/).
 * Plain C, usable from C++. Freestanding: no heap, no exceptions.
 */
#ifndef MCUFLOW_BOARD_H
#define MCUFLOW_BOARD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes of board_read_file / board_write_file. */
#define MCUFLOW_BOARD_OK 0
#define MCUFLOW_BOARD_ERR_OPEN (-1)    /* host could not open the file      */
#define MCUFLOW_BOARD_ERR_IO (-2)      /* short read / short write / FLEN   */
#define MCUFLOW_BOARD_ERR_TOO_BIG (-3) /* file larger than cap: nothing read */
#define MCUFLOW_BOARD_ERR_ARG (-4)     /* NULL path / buffer                 */

/* Exit codes used by the startup code itself (QEMU's process exit status). */
#define MCUFLOW_EXIT_HARDFAULT 0xF1   /* HardFault (and escalated faults)    */
#define MCUFLOW_EXIT_BAD_EXCEPTION 0xF2 /* any other unexpected exception    */
#define MCUFLOW_EXIT_PURE_VIRTUAL 0xF3 /* C++ pure virtual / deleted call     */

/* Start the board's free-running counter. Called by the reset handler
 * before main(); calling it again is harmless (idempotent). */
void board_init(void);

/* Write a NUL-terminated string to the host console (semihosting
 * SYS_WRITE0, or a console frame on a UART board: firmware/common/uart_io.c).
 * Written as is: no newline is appended. */
void board_puts(const char *s);

/* Stop the program; the QEMU process exits with status (code & 0xFF)
 * (semihosting SYS_EXIT_EXTENDED, ADP_Stopped_ApplicationExit). */
void board_exit(int code) __attribute__((noreturn));

/* Free-running 32-bit counter. Under `qemu-system-arm -icount shift=K`
 * with the board's K (see firmware/README.md), the unsigned difference of
 * two reads is the exact number of guest instructions executed between
 * them, plus a fixed per-pair overhead of the two calls. Wraps modulo
 * 2^32; must be read at least once per 2^32 timer ticks (minutes of
 * virtual time) to keep wrap tracking correct. On a real board this is a
 * time base in timer ticks, not an instruction count. */
uint32_t board_counter(void);

/* Read the whole host file `path` (relative to QEMU's working directory)
 * into buf. On success returns MCUFLOW_BOARD_OK and *n_read = file size.
 * If the file is larger than cap, returns MCUFLOW_BOARD_ERR_TOO_BIG,
 * reads nothing and sets *n_read to the file size. */
int board_read_file(const char *path, void *buf, uint32_t cap, uint32_t *n_read);

/* Read exactly n bytes from byte `offset` of the host file `path` into buf (the rows of a
 * streamed input); MCUFLOW_BOARD_ERR_IO if fewer are there. */
int board_read_file_at(const char *path, uint32_t offset, void *buf, uint32_t n);

/* Create/truncate the host file `path` and write n bytes to it. */
int board_write_file(const char *path, const void *buf, uint32_t n);

/* Bytes of the stack ever used since reset (the reset handler paints the
 * stack with a pattern; this scans for the deepest overwritten word). */
uint32_t board_stack_high_water(void);

/* Size in bytes of the stack reserved by the linker script. */
uint32_t board_stack_size(void);

/* Board name, e.g. "qemu-m4". */
const char *board_name(void);

#ifdef __cplusplus
}
#endif

#endif /* MCUFLOW_BOARD_H */
