/* SPDX-License-Identifier: MIT */
/* CRC-32C against RFC 3720 appendix B.4 and the common check value. */
#include "testutil.h"

#include <string.h>

#include "crc32c.h"

static void test_rfc3720_b4(void **state)
{
	(void)state;
	uint8_t buf[48];

	memset(buf, 0, 32);
	assert_int_equal(vms_crc32c(0, buf, 32), 0x8A9136AAu);
	memset(buf, 0xff, 32);
	assert_int_equal(vms_crc32c(0, buf, 32), 0x62A8AB43u);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	assert_int_equal(vms_crc32c(0, buf, 32), 0x46DD794Eu);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	assert_int_equal(vms_crc32c(0, buf, 32), 0x113FDB5Cu);
	/* an iSCSI read command PDU */
	static const uint8_t pdu[48] = {
		0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
		0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	assert_int_equal(vms_crc32c(0, pdu, sizeof(pdu)), 0xD9963A56u);
}

static void test_check_value(void **state)
{
	(void)state;
	assert_int_equal(vms_crc32c(0, "123456789", 9), 0xE3069283u);
	assert_int_equal(vms_crc32c(0, "", 0), 0u);
}

/* Every split point and every alignment gives the same CRC as one pass
 * over the bytes (the slice-by-8 loop and its byte-wise edges agree). */
static void test_incremental_and_unaligned(void **state)
{
	(void)state;
	uint8_t big[300], copy[300 + 8];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 131 + 7);
	/* reference: bitwise, no tables */
	uint32_t ref = 0xffffffffu;
	for (size_t i = 0; i < sizeof(big); i++) {
		ref ^= big[i];
		for (int k = 0; k < 8; k++)
			ref = (ref >> 1) ^ (0x82F63B78u & (0u - (ref & 1)));
	}
	ref = ~ref;
	assert_int_equal(vms_crc32c(0, big, sizeof(big)), ref);
	for (size_t cut = 0; cut <= sizeof(big); cut++) {
		uint32_t c = vms_crc32c(0, big, cut);
		assert_int_equal(vms_crc32c(c, big + cut, sizeof(big) - cut), ref);
	}
	for (size_t a = 0; a < 8; a++) {
		memcpy(copy + a, big, sizeof(big));
		assert_int_equal(vms_crc32c(0, copy + a, sizeof(big)), ref);
	}
}

/* The table-driven and the instruction-based paths agree (on a CPU
 * without SSE4.2 both are the table path). */
static void test_sw_equals_default(void **state)
{
	(void)state;
	uint8_t buf[1031];
	uint32_t x = 1;
	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	for (size_t off = 0; off < 9; off++)
		for (size_t len = 0; len + off <= sizeof(buf); len += 1 + len / 3) {
			assert_int_equal(vms_crc32c(0, buf + off, len), vms_crc32c_sw(0, buf + off, len));
			assert_int_equal(vms_crc32c(0xdeadbeef, buf + off, len),
					 vms_crc32c_sw(0xdeadbeef, buf + off, len));
		}
	assert_int_equal(vms_crc32c_sw(0, "123456789", 9), 0xE3069283u);
}

VMS_TEST_MAIN(NULL, NULL,
	test_rfc3720_b4, test_check_value, test_incremental_and_unaligned, test_sw_equals_default)
