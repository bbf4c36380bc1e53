/* SPDX-License-Identifier: MIT */
/* crc32c.h - CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected
 * 0x82F63B78), as used by iSCSI (RFC 3720), ext4 and btrfs.  On x86-64
 * with SSE4.2 the crc32 instruction (8 bytes per instruction), chosen at
 * the first call; elsewhere slice-by-8 tables.  No allocation. */
#ifndef VMS_CRC32C_H
#define VMS_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continue a CRC: crc = vms_crc32c(0, a, n); crc = vms_crc32c(crc, b, m)
 * equals vms_crc32c(0, a||b, n + m).  The initial and final inversions
 * are done inside, so 0 is the start value and the result is the CRC. */
uint32_t vms_crc32c(uint32_t crc, const void *buf, size_t len);
/* The portable table-driven implementation (tests compare the two). */
uint32_t vms_crc32c_sw(uint32_t crc, const void *buf, size_t len);

#endif
