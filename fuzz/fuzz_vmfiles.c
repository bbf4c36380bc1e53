/* SPDX-License-Identifier: MIT */
/* fuzz_vmfiles.c - the per-VM file parsers (parse_vm.c) on arbitrary
 * bytes; the first byte chooses the parser, the rest is the file.  Views
 * must lie inside the input, errors must be -EINVAL/-ERANGE, and a
 * missing value is VMS_NONE, never a made-up number. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void inside(const char *p, size_t n, const char *buf, size_t size)
{
	if (n && (p < buf || p + n > buf + size))
		abort();
}

static void err_ok(int r)
{
	if (r != 0 && r != -EINVAL && r != -ERANGE)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned which = data[0] % 8;
	size--;
	char *buf = malloc(size ? size : 1);
	memcpy(buf, data + 1, size);
	int r;
	switch (which) {
	case 0: {
		struct vms_taskstat ts;
		r = vms_parse_taskstat(buf, size, &ts);
		err_ok(r);
		if (r == 0) {
			inside(ts.comm, ts.comm_len, buf, size);
			if (ts.nfields < 24 || ts.f[24] > INT64_MAX)
				abort();
		}
		break;
	}
	case 1: {
		struct vms_schedstat s;
		err_ok(vms_parse_schedstat(buf, size, &s));
		break;
	}
	case 2: {
		static const char *const keys[] = {"read_bytes", "write_bytes", "usage_usec", "user"};
		uint64_t v[4];
		r = vms_parse_keyed(buf, size, keys, 4, v);
		err_ok(r);
		break;
	}
	case 3: {
		uint64_t v;
		r = vms_parse_u64_file(buf, size, &v);
		err_ok(r);
		if (r == 0 && v == VMS_NONE)
			abort();
		break;
	}
	case 4: {
		uint64_t a, b;
		err_ok(vms_parse_iostat(buf, size, &a, &b));
		break;
	}
	case 5: {
		struct vms_pidcg pc;
		r = vms_parse_pidcg(buf, size, &pc);
		err_ok(r);
		if (r == 0) {
			inside(pc.v2, pc.v2_len, buf, size);
			inside(pc.cpuacct, pc.cpuacct_len, buf, size);
			inside(pc.memory, pc.memory_len, buf, size);
		}
		break;
	}
	case 6: {
		struct vms_cur c;
		struct vms_mount m;
		char out[64];
		vms_cur_init(&c, buf, size);
		while ((r = vms_mountinfo_next(&c, &m)) != 0) {
			if (r < 0) {
				err_ok(r);
				continue;
			}
			inside(m.point, m.point_len, buf, size);
			inside(m.super, m.super_len, buf, size);
			int n = vms_unescape_octal(m.point, m.point_len, out, sizeof(out));
			if (n >= (int)sizeof(out) || (n >= 0 && out[n] != '\0'))
				abort();
			vms_list_has(m.super, m.super_len, "cpuacct");
		}
		break;
	}
	default:
		if (vms_vcpu_thread_index(buf, size) > 65535)
			abort();
		break;
	}
	free(buf);
	return 0;
}
