/* SPDX-License-Identifier: MIT */
#include "crc32c.h"
#include "le.h"

#include <string.h>

#define POLY 0x82F63B78u /* 0x1EDC6F41 bit-reversed */
#define VMS_CRC_UNLIKELY(x) __builtin_expect(!!(x), 0)

static uint32_t table[8][256];
static int table_ready;

/* Tables are built on first use (a few microseconds); a static const
 * initialiser of 8 KiB would be noise in the source. */
static void build_tables(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (POLY & (0u - (c & 1)));
		table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
	__atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
}

uint32_t vms_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE))
		build_tables();
	crc = ~crc;
	/* align to 8 bytes, then 8 bytes per step */
	while (len && ((uintptr_t)p & 7)) {
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		uint32_t lo = vms_le_get32(p) ^ crc, hi = vms_le_get32(p + 4);
		crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^
		      table[4][lo >> 24] ^ table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
		      table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t c = ~crc;
	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8); /* little-endian: the byte order the CRC wants */
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return ~(uint32_t)c;
}

static uint32_t (*crc_impl)(uint32_t, const void *, size_t);

uint32_t vms_crc32c(uint32_t crc, const void *buf, size_t len)
{
	uint32_t (*f)(uint32_t, const void *, size_t) = __atomic_load_n(&crc_impl, __ATOMIC_RELAXED);
	if (VMS_CRC_UNLIKELY(!f)) {
		__builtin_cpu_init();
		f = __builtin_cpu_supports("sse4.2") ? crc32c_hw : vms_crc32c_sw;
		__atomic_store_n(&crc_impl, f, __ATOMIC_RELAXED);
	}
	return f(crc, buf, len);
}
#else
uint32_t vms_crc32c(uint32_t crc, const void *buf, size_t len)
{
	return vms_crc32c_sw(crc, buf, len);
}
#endif
