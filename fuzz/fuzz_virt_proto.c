/* SPDX-License-Identifier: MIT */
/* fuzz_virt_proto.c - the agent protocol's reader on arbitrary bytes, as
 * the sampler reads its agent's stream: frame after frame, each payload
 * decoded with the decoder of its type (and with every other decoder:
 * they must refuse, not overrun).  Every accessor of a decoded message is
 * walked; views must lie inside the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "virt_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void inside(const void *p, size_t n, const uint8_t *buf, size_t size)
{
	const uint8_t *q = p;
	if (n && (q < buf || q + n > buf + size))
		abort();
}

static void all(const struct vms_vp_msg *m, const uint8_t *buf, size_t size)
{
	struct vms_vp_hello h;
	struct vms_vp_conn c;
	struct vms_vp_dom d;
	struct vms_vp_event e;
	struct vms_vp_uuids u;
	struct vms_vp_stats s;
	struct vms_vp_num n;
	char uuid[37];

	if (vms_vp_hello_dec(m, &h) == 0)
		inside(h.uri.p, h.uri.len, buf, size);
	if (vms_vp_conn_dec(m, &c) == 0) {
		inside(c.driver.p, c.driver.len, buf, size);
		inside(c.msg.p, c.msg.len, buf, size);
	}
	if (vms_vp_dom_dec(m, &d) == 0) {
		if (strlen(d.uuid) != 36 || d.name.len == 0)
			abort();
		for (unsigned i = 0; i < d.nvcpu; i++)
			if (vms_vp_dom_tid(&d, i) > INT32_MAX)
				abort();
		for (unsigned i = 0; i < d.ntap; i++) {
			struct vms_vp_str t = vms_vp_list_str(d.taps, i);
			inside(t.p, t.len, buf, size);
			if (t.len == 0 || memchr(t.p, '/', t.len))
				abort();
		}
		for (unsigned i = 0; i < d.ndisk; i++) {
			struct vms_vp_str t = vms_vp_list_str(d.disks, i);
			inside(t.p, t.len, buf, size);
		}
	}
	if (vms_vp_event_dec(m, &e) == 0)
		inside(e.detail.p, e.detail.len, buf, size);
	if (vms_vp_uuids_dec(m, &u) == 0)
		for (unsigned i = 0; i < u.n; i++) {
			vms_vp_uuids_get(&u, i, uuid);
			if (!vms_vp_uuid_ok(uuid, 36))
				abort();
		}
	if (vms_vp_stats_dec(m, &s) == 0)
		for (unsigned i = 0; i < s.n; i++) {
			uint16_t id, idx;
			uint64_t v;
			vms_vp_stats_get(&s, i, &id, &idx, &v);
			if (!vms_vmetric_find(id) || v == VMS_NONE)
				abort();
		}
	for (unsigned t = 0; t < 64; t++) {
		struct vms_vp_msg mm = *m;
		mm.type = (uint8_t)t;
		vms_vp_num_dec(&mm, &n);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size heap copy so ASan sees any read past the end */
	uint8_t *buf = malloc(size ? size : 1);
	memcpy(buf, data, size);
	size_t off = 0;
	struct vms_vp_msg m;
	int k;
	while ((k = vms_vp_frame(buf + off, size - off, &m)) > 0) {
		if ((size_t)k > size - off || m.plen + VMS_VP_HDR != (size_t)k)
			abort();
		inside(m.pl, m.plen, buf, size);
		all(&m, buf, size);
		off += (size_t)k;
	}
	if (k < 0 && k != -EBADMSG)
		abort();
	free(buf);
	return 0;
}
