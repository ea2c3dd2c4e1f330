/*
 * Board interface functions implemented with Arm semihosting
 * (written from the Arm "Semihosting for AArch32 and AArch64" spec).
 * Shared by every QEMU board.
 */
#include <stddef.h>
#include <stdint.h>

#include "mcuflow/board.h"
#include "mcuflow_internal.h"

void board_puts(const char *s)
{
    if (s != NULL) {
        mcuflow_semihost(MCUFLOW_SYS_WRITE0, s);
    }
}

void board_exit(int code)
{
    /* SYS_EXIT_EXTENDED takes {reason, subcode}; QEMU exits with subcode. */
    uint32_t block[2] = {MCUFLOW_ADP_STOPPED_APPLICATION_EXIT, (uint32_t)code};
    mcuflow_semihost(MCUFLOW_SYS_EXIT_EXTENDED, block);
    /* Host without SYS_EXIT_EXTENDED: plain SYS_EXIT (status 0 only). */
    mcuflow_semihost(MCUFLOW_SYS_EXIT, (const void *)(uintptr_t)MCUFLOW_ADP_STOPPED_APPLICATION_EXIT);
    for (;;) {
        __asm__ volatile("bkpt 0x00");
    }
}

static uint32_t str_len(const char *s)
{
    uint32_t n = 0;
    while (s[n] != '\0') {
        ++n;
    }
    return n;
}

/* SYS_OPEN mode numbers index the ISO C fopen modes:
 * 0 "r", 1 "rb", 2 "r+", 3 "r+b", 4 "w", 5 "wb", ... */
static int32_t sh_open(const char *path, uint32_t mode)
{
    uint32_t block[3] = {(uint32_t)(uintptr_t)path, mode, str_len(path)};
    return mcuflow_semihost(MCUFLOW_SYS_OPEN, block);
}

static void sh_close(int32_t handle)
{
    uint32_t block[1] = {(uint32_t)handle};
    mcuflow_semihost(MCUFLOW_SYS_CLOSE, block);
}

int board_read_file(const char *path, void *buf, uint32_t cap, uint32_t *n_read)
{
    if (n_read != NULL) {
        *n_read = 0;
    }
    if (path == NULL || n_read == NULL || (buf == NULL && cap != 0)) {
        return MCUFLOW_BOARD_ERR_ARG;
    }
    int32_t h = sh_open(path, 1 /* "rb" */);
    if (h < 0) {
        return MCUFLOW_BOARD_ERR_OPEN;
    }
    uint32_t hb[1] = {(uint32_t)h};
    int32_t len = mcuflow_semihost(MCUFLOW_SYS_FLEN, hb);
    if (len < 0) {
        sh_close(h);
        return MCUFLOW_BOARD_ERR_IO;
    }
    *n_read = (uint32_t)len;
    if ((uint32_t)len > cap) {
        sh_close(h);
        return MCUFLOW_BOARD_ERR_TOO_BIG;
    }
    int rc = MCUFLOW_BOARD_OK;
    if (len > 0) {
        uint32_t block[3] = {(uint32_t)h, (uint32_t)(uintptr_t)buf, (uint32_t)len};
        /* SYS_READ returns the number of bytes NOT read. */
        int32_t left = mcuflow_semihost(MCUFLOW_SYS_READ, block);
        if (left != 0) {
            *n_read = (left > 0 && left <= len) ? (uint32_t)(len - left) : 0u;
            rc = MCUFLOW_BOARD_ERR_IO;
        }
    }
    sh_close(h);
    return rc;
}

int board_read_file_at(const char *path, uint32_t offset, void *buf, uint32_t n)
{
    if (path == NULL || (buf == NULL && n != 0)) {
        return MCUFLOW_BOARD_ERR_ARG;
    }
    int32_t h = sh_open(path, 1 /* "rb" */);
    if (h < 0) {
        return MCUFLOW_BOARD_ERR_OPEN;
    }
    uint32_t seek[2] = {(uint32_t)h, offset};
    /* SYS_SEEK returns 0 on success; SYS_READ the number of bytes NOT read. */
    int rc = mcuflow_semihost(MCUFLOW_SYS_SEEK, seek) == 0 ? MCUFLOW_BOARD_OK : MCUFLOW_BOARD_ERR_IO;
    if (rc == MCUFLOW_BOARD_OK && n > 0) {
        uint32_t block[3] = {(uint32_t)h, (uint32_t)(uintptr_t)buf, n};
        if (mcuflow_semihost(MCUFLOW_SYS_READ, block) != 0) {
            rc = MCUFLOW_BOARD_ERR_IO;
        }
    }
    sh_close(h);
    return rc;
}

int board_write_file(const char *path, const void *buf, uint32_t n)
{
    if (path == NULL || (buf == NULL && n != 0)) {
        return MCUFLOW_BOARD_ERR_ARG;
    }
    int32_t h = sh_open(path, 5 /* "wb" */);
    if (h < 0) {
        return MCUFLOW_BOARD_ERR_OPEN;
    }
    int rc = MCUFLOW_BOARD_OK;
    if (n > 0) {
        uint32_t block[3] = {(uint32_t)h, (uint32_t)(uintptr_t)buf, n};
        /* SYS_WRITE returns the number of bytes NOT written. */
        if (mcuflow_semihost(MCUFLOW_SYS_WRITE, block) != 0) {
            rc = MCUFLOW_BOARD_ERR_IO;
        }
    }
    sh_close(h);
    return rc;
}
