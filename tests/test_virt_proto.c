/* SPDX-License-Identifier: MIT */
/* test_virt_proto.c - the agent protocol: every message type survives an
 * encode/decode round trip, a stream split anywhere decodes to the same
 * messages, and malformed input is refused (never a crash, never a
 * value out of nothing). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "virt_proto.h"
#include <vmsampler/format.h>

static const char U1[] = "6bcbad04-b6d4-48a8-bce8-1144f78e8999";
static const char U2[] = "4D0C6BD9-5AE6-43B2-8D56-3C9C6E0E7E3A";

static void one(const struct vms_vp_w *w, struct vms_vp_msg *m, unsigned type)
{
	assert_int_equal(vms_vp_frame(w->buf, w->len, m), (int)w->len);
	assert_int_equal(m->type, type);
}

static void test_roundtrip(void **state)
{
	(void)state;
	struct vms_vp_w w;
	struct vms_vp_msg m;
	vms_vp_w_init(&w);

	vms_vp_begin(&w, VMS_VP_HELLO);
	vms_vp_u32(&w, VMS_VP_VERSION);
	vms_vp_u32(&w, 4242);
	vms_vp_u64(&w, 9000000);
	vms_vp_cstr(&w, "qemu:///system");
	assert_int_equal(vms_vp_end(&w), 0);
	one(&w, &m, VMS_VP_HELLO);
	struct vms_vp_hello h;
	assert_int_equal(vms_vp_hello_dec(&m, &h), 0);
	assert_int_equal(h.version, VMS_VP_VERSION);
	assert_int_equal(h.pid, 4242);
	assert_int_equal(h.libvirt_version, 9000000);
	assert_int_equal(h.uri.len, 14);
	assert_memory_equal(h.uri.p, "qemu:///system", 14);

	vms_vp_w_reset(&w);
	vms_vp_begin(&w, VMS_VP_DOM);
	vms_vp_uuid(&w, U1);
	vms_vp_cstr(&w, "vms-001");
	vms_vp_u32(&w, 7);
	vms_vp_u8(&w, 3);
	vms_vp_u8(&w, 1);
	vms_vp_u32(&w, 17550);
	vms_vp_u8(&w, VMS_VP_DOM_LOCAL);
	vms_vp_u8(&w, VMS_VG_NET);
	vms_vp_u16(&w, 2);
	vms_vp_u32(&w, 17574);
	vms_vp_u32(&w, 0);
	vms_vp_u16(&w, 2);
	vms_vp_cstr(&w, "vmst1");
	vms_vp_cstr(&w, "vnet12");
	vms_vp_u16(&w, 1);
	vms_vp_cstr(&w, "vda");
	assert_int_equal(vms_vp_end(&w), 0);
	one(&w, &m, VMS_VP_DOM);
	struct vms_vp_dom d;
	assert_int_equal(vms_vp_dom_dec(&m, &d), 0);
	assert_string_equal(d.uuid, U1);
	assert_memory_equal(d.name.p, "vms-001", 7);
	assert_int_equal(d.id, 7);
	assert_int_equal(d.state, 3);
	assert_int_equal(d.reason, 1);
	assert_int_equal(d.pid, 17550);
	assert_int_equal(d.flags, VMS_VP_DOM_LOCAL);
	assert_int_equal(d.fallback, VMS_VG_NET);
	assert_int_equal(d.nvcpu, 2);
	assert_int_equal(vms_vp_dom_tid(&d, 0), 17574);
	assert_int_equal(vms_vp_dom_tid(&d, 1), 0);
	assert_int_equal(d.ntap, 2);
	struct vms_vp_str s = vms_vp_list_str(d.taps, 1);
	assert_int_equal(s.len, 6);
	assert_memory_equal(s.p, "vnet12", 6);
	assert_int_equal(d.ndisk, 1);
	s = vms_vp_list_str(d.disks, 0);
	assert_memory_equal(s.p, "vda", 3);

	vms_vp_w_reset(&w);
	vms_vp_begin(&w, VMS_VP_STATS);
	vms_vp_uuid(&w, U2);
	vms_vp_u64(&w, 1795338677547753397ull);
	vms_vp_u8(&w, 1);
	vms_vp_u16(&w, 2);
	vms_vp_u16(&w, VMS_VM_BALLOON_RSS);
	vms_vp_u16(&w, 0);
	vms_vp_u64(&w, 208144);
	vms_vp_u16(&w, VMS_VM_BLOCK_WR_BYTES);
	vms_vp_u16(&w, 3);
	vms_vp_u64(&w, 1ull << 40);
	assert_int_equal(vms_vp_end(&w), 0);
	one(&w, &m, VMS_VP_STATS);
	struct vms_vp_stats st;
	assert_int_equal(vms_vp_stats_dec(&m, &st), 0);
	assert_string_equal(st.uuid, U2);
	assert_int_equal(st.t_real_ns, 1795338677547753397ll);
	assert_int_equal(st.slow, 1);
	assert_int_equal(st.n, 2);
	uint16_t id, idx;
	uint64_t v;
	vms_vp_stats_get(&st, 1, &id, &idx, &v);
	assert_int_equal(id, VMS_VM_BLOCK_WR_BYTES);
	assert_int_equal(idx, 3);
	assert_int_equal(v, 1ull << 40);

	vms_vp_w_reset(&w);
	vms_vp_begin(&w, VMS_VP_EVENT);
	vms_vp_u16(&w, VMS_EV_VM_CRASHED);
	vms_vp_uuid(&w, U1);
	vms_vp_cstr(&w, "vms-001");
	vms_vp_cstr(&w, "crashed");
	assert_int_equal(vms_vp_end(&w), 0);
	one(&w, &m, VMS_VP_EVENT);
	struct vms_vp_event e;
	assert_int_equal(vms_vp_event_dec(&m, &e), 0);
	assert_int_equal(e.type, VMS_EV_VM_CRASHED);
	assert_memory_equal(e.detail.p, "crashed", 7);

	vms_vp_w_reset(&w);
	vms_vp_begin(&w, VMS_VP_BATCH);
	vms_vp_u32(&w, 99);
	vms_vp_u16(&w, 2);
	vms_vp_uuid(&w, U1);
	vms_vp_uuid(&w, U2);
	assert_int_equal(vms_vp_end(&w), 0);
	one(&w, &m, VMS_VP_BATCH);
	struct vms_vp_uuids u;
	char ub[37];
	assert_int_equal(vms_vp_uuids_dec(&m, &u), 0);
	assert_int_equal(u.id, 99);
	vms_vp_uuids_get(&u, 1, ub);
	assert_string_equal(ub, U2);

	/* the small ones */
	struct vms_vp_num n;
	vms_vp_w_reset(&w);
	vms_vp_begin(&w, VMS_VP_TICK);
	vms_vp_u64(&w, 77);
	vms_vp_u64(&w, 123456789);
	vms_vp_end(&w);
	one(&w, &m, VMS_VP_TICK);
	assert_int_equal(vms_vp_num_dec(&m, &n), 0);
	assert_int_equal(n.a, 77);
	assert_int_equal(n.b, 123456789);
	vms_vp_w_reset(&w);
	vms_vp_begin(&w, VMS_VP_NEXT);
	vms_vp_u64(&w, 4999000000ull);
	vms_vp_end(&w);
	one(&w, &m, VMS_VP_NEXT);
	assert_int_equal(vms_vp_num_dec(&m, &n), 0);
	assert_int_equal(n.a, 4999000000ull);
	m.plen = 7; /* short: refused */
	assert_int_equal(vms_vp_num_dec(&m, &n), -EBADMSG);
	vms_vp_w_reset(&w);
	vms_vp_begin(&w, VMS_VP_SYNC);
	vms_vp_u32(&w, 60);
	vms_vp_u8(&w, 1);
	vms_vp_end(&w);
	one(&w, &m, VMS_VP_SYNC);
	assert_int_equal(vms_vp_num_dec(&m, &n), 0);
	assert_int_equal(n.a, 60);
	assert_int_equal(n.c, 1);
	vms_vp_w_reset(&w);
	vms_vp_begin(&w, VMS_VP_NEED);
	vms_vp_uuid(&w, U1);
	vms_vp_u8(&w, VMS_VG_CPU | VMS_VG_NET);
	vms_vp_end(&w);
	one(&w, &m, VMS_VP_NEED);
	assert_int_equal(vms_vp_num_dec(&m, &n), 0);
	assert_string_equal(n.uuid, U1);
	assert_int_equal(n.b, VMS_VG_CPU | VMS_VG_NET);
	vms_vp_w_free(&w);
}

/* Messages back to back, fed in pieces of every size: the same messages. */
static void test_stream(void **state)
{
	(void)state;
	struct vms_vp_w w;
	vms_vp_w_init(&w);
	for (unsigned i = 0; i < 50; i++) {
		vms_vp_begin(&w, VMS_VP_ACK);
		vms_vp_u64(&w, i);
		assert_int_equal(vms_vp_end(&w), 0);
		vms_vp_begin(&w, VMS_VP_CONN);
		vms_vp_u8(&w, i & 1);
		vms_vp_u8(&w, 0);
		vms_vp_cstr(&w, "QEMU");
		vms_vp_str(&w, "abcdefghij", i % 10);
		assert_int_equal(vms_vp_end(&w), 0);
	}
	for (size_t piece = 1; piece < 64; piece += 7) {
		uint8_t *buf = malloc(w.len);
		size_t have = 0, pos = 0;
		unsigned got = 0;
		while (pos < w.len || have) {
			size_t add = w.len - pos < piece ? w.len - pos : piece;
			memcpy(buf + have, w.buf + pos, add);
			have += add;
			pos += add;
			struct vms_vp_msg m;
			int k;
			size_t off = 0;
			while ((k = vms_vp_frame(buf + off, have - off, &m)) > 0) {
				struct vms_vp_num n;
				struct vms_vp_conn c;
				if (got % 2 == 0) {
					assert_int_equal(vms_vp_num_dec(&m, &n), 0);
					assert_int_equal(n.a, got / 2);
				} else {
					assert_int_equal(vms_vp_conn_dec(&m, &c), 0);
					assert_int_equal(c.up, (got / 2) & 1);
					assert_int_equal(c.msg.len, (got / 2) % 10);
				}
				got++;
				off += (size_t)k;
			}
			assert_int_equal(k, 0);
			memmove(buf, buf + off, have - off);
			have -= off;
			if (pos == w.len && have == 0)
				break;
		}
		assert_int_equal(got, 100);
		free(buf);
	}
	vms_vp_w_free(&w);
}

static void test_malformed(void **state)
{
	(void)state;
	struct vms_vp_msg m;
	/* header: length below 8, above the maximum, wrong version */
	uint8_t h[8] = {7, 0, 0, 0, VMS_VP_VERSION, VMS_VP_ACK, 0, 0};
	assert_int_equal(vms_vp_frame(h, 8, &m), -EBADMSG);
	uint8_t big[8] = {0, 0, 0x10, 0, VMS_VP_VERSION, VMS_VP_ACK, 0, 0};
	assert_int_equal(vms_vp_frame(big, 8, &m), -EBADMSG);
	uint8_t ver[8] = {8, 0, 0, 0, VMS_VP_VERSION + 1, VMS_VP_ACK, 0, 0};
	assert_int_equal(vms_vp_frame(ver, 8, &m), -EBADMSG);
	uint8_t pad[8] = {8, 0, 0, 0, VMS_VP_VERSION, VMS_VP_ACK, 1, 0};
	assert_int_equal(vms_vp_frame(pad, 8, &m), -EBADMSG);
	assert_int_equal(vms_vp_frame(h, 3, &m), 0); /* more bytes needed */

	struct vms_vp_w w;
	vms_vp_w_init(&w);
	/* a DOM cut short anywhere is refused */
	vms_vp_begin(&w, VMS_VP_DOM);
	vms_vp_uuid(&w, U1);
	vms_vp_cstr(&w, "x");
	vms_vp_u32(&w, 1);
	vms_vp_u8(&w, 1);
	vms_vp_u8(&w, 1);
	vms_vp_u32(&w, 5);
	vms_vp_u8(&w, 0);
	vms_vp_u8(&w, 0);
	vms_vp_u16(&w, 1);
	vms_vp_u32(&w, 6);
	vms_vp_u16(&w, 1);
	vms_vp_cstr(&w, "tap0");
	vms_vp_u16(&w, 0);
	assert_int_equal(vms_vp_end(&w), 0);
	struct vms_vp_dom d;
	one(&w, &m, VMS_VP_DOM);
	assert_int_equal(vms_vp_dom_dec(&m, &d), 0);
	size_t full = m.plen;
	for (size_t cut = 0; cut < full; cut++) {
		m.plen = cut;
		assert_int_equal(vms_vp_dom_dec(&m, &d), -EBADMSG);
	}
	/* trailing bytes of a later revision are ignored */
	uint8_t *longer = malloc(full + 4);
	memcpy(longer, m.pl, full);
	memset(longer + full, 0xee, 4);
	m.pl = longer;
	m.plen = full + 4;
	assert_int_equal(vms_vp_dom_dec(&m, &d), 0);
	/* a bad UUID, a device name with '/', a NUL in a name */
	longer[3] = 'z';
	assert_int_equal(vms_vp_dom_dec(&m, &d), -EBADMSG);
	longer[3] = U1[3];
	size_t tapat = 36 + 2 + 1 + 4 + 1 + 1 + 4 + 1 + 1 + 2 + 4 + 2 + 2;
	assert_memory_equal(longer + tapat, "tap0", 4);
	longer[tapat + 1] = '/';
	assert_int_equal(vms_vp_dom_dec(&m, &d), -EBADMSG);
	longer[tapat + 1] = 'a';
	longer[38] = '\0'; /* the name "x" */
	assert_int_equal(vms_vp_dom_dec(&m, &d), -EBADMSG);
	free(longer);

	/* STATS: an unknown metric, a "missing" value, a bad slow flag */
	static const struct {
		uint16_t id;
		uint64_t v;
		uint8_t slow;
	} bad[] = {{0, 1, 0}, {999, 1, 0}, {VMS_VM_CPU_TIME, VMS_NONE, 0}, {VMS_VM_CPU_TIME, 1, 2}};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(bad); i++) {
		vms_vp_w_reset(&w);
		vms_vp_begin(&w, VMS_VP_STATS);
		vms_vp_uuid(&w, U1);
		vms_vp_u64(&w, 1);
		vms_vp_u8(&w, bad[i].slow);
		vms_vp_u16(&w, 1);
		vms_vp_u16(&w, bad[i].id);
		vms_vp_u16(&w, 0);
		vms_vp_u64(&w, bad[i].v);
		vms_vp_end(&w);
		one(&w, &m, VMS_VP_STATS);
		struct vms_vp_stats st;
		assert_int_equal(vms_vp_stats_dec(&m, &st), -EBADMSG);
	}
	/* an EVENT type that is not a VM event; a BATCH of too many */
	vms_vp_w_reset(&w);
	vms_vp_begin(&w, VMS_VP_EVENT);
	vms_vp_u16(&w, VMS_EV_SOURCE_FAILED);
	vms_vp_uuid(&w, U1);
	vms_vp_cstr(&w, "a");
	vms_vp_cstr(&w, "b");
	vms_vp_end(&w);
	one(&w, &m, VMS_VP_EVENT);
	struct vms_vp_event e;
	assert_int_equal(vms_vp_event_dec(&m, &e), -EBADMSG);
	vms_vp_w_reset(&w);
	vms_vp_begin(&w, VMS_VP_BACKOFF);
	vms_vp_u32(&w, 1000);
	vms_vp_u16(&w, VMS_VP_BATCH_MAX + 1);
	for (unsigned i = 0; i <= VMS_VP_BATCH_MAX; i++)
		vms_vp_uuid(&w, U1);
	vms_vp_end(&w);
	one(&w, &m, VMS_VP_BACKOFF);
	struct vms_vp_uuids u;
	assert_int_equal(vms_vp_uuids_dec(&m, &u), -EBADMSG);
	/* num_dec on a type it does not know */
	m.type = VMS_VP_DOM;
	struct vms_vp_num n;
	assert_int_equal(vms_vp_num_dec(&m, &n), -EBADMSG);

	/* the writer refuses a message over the maximum and keeps going */
	vms_vp_w_reset(&w);
	vms_vp_begin(&w, VMS_VP_ACK);
	vms_vp_u64(&w, 1);
	assert_int_equal(vms_vp_end(&w), 0);
	size_t keep = w.len;
	vms_vp_begin(&w, VMS_VP_CONN);
	for (unsigned i = 0; i < 5; i++) {
		char *blob = calloc(1, 65535);
		memset(blob, 'a', 65535);
		vms_vp_str(&w, blob, 65535);
		free(blob);
	}
	assert_int_equal(vms_vp_end(&w), -EMSGSIZE);
	assert_int_equal(w.len, keep);
	vms_vp_w_free(&w);
}

static void test_metrics(void **state)
{
	(void)state;
	for (unsigned i = 0; i < VMS_VM_NBALLOON; i++) {
		assert_int_equal(vms_vmetric_find(vms_vm_balloon[i].id), &vms_vm_balloon[i]);
		assert_int_equal(vms_vm_balloon[i].group, VMS_VG_BALLOON);
	}
	for (unsigned i = 0; i < VMS_VM_NBLOCK; i++)
		assert_int_equal(vms_vmetric_find(vms_vm_block[i].id), &vms_vm_block[i]);
	/* migration: ids in column order, each named after libvirt's job field */
	for (unsigned i = 0; i < VMS_VM_NMIG; i++) {
		assert_int_equal(vms_vm_mig[i].id, VMS_VM_MIG_JOB + i);
		assert_int_equal(vms_vmetric_find(VMS_VM_MIG_JOB + i), &vms_vm_mig[i]);
		if (i)
			assert_true(strcmp(vms_vm_mig[i].lv, vms_vmetric_field(&vms_vm_mig[i])->name) == 0 ||
				    vms_vm_mig[i].id == VMS_VM_MIG_DOWNTIME_EXPECTED);
	}
	assert_null(vms_vm_mig[0].lv);
	assert_string_equal(vms_vm_mig[VMS_VM_MIG_DOWNTIME_EXPECTED - VMS_VM_MIG_JOB].lv, "downtime");
	assert_null(vms_vmetric_find(VMS_VM_MIG_JOB + VMS_VM_NMIG));
	/* dirtyrate: ids in column order, named after the stats group's fields */
	static const char *const dirty[VMS_VM_NDIRTY] = {"calc_status", "calc_start_time", "calc_period",
							 "megabytes_per_second"};
	for (unsigned i = 0; i < VMS_VM_NDIRTY; i++) {
		assert_int_equal(vms_vm_dirty[i].id, VMS_VM_DIRTY_STATUS + i);
		assert_int_equal(vms_vmetric_find(VMS_VM_DIRTY_STATUS + i), &vms_vm_dirty[i]);
		assert_string_equal(vms_vm_dirty[i].lv, dirty[i]);
		assert_string_equal(vms_vmetric_field(&vms_vm_dirty[i])->name, dirty[i]);
	}
	assert_null(vms_vmetric_find(VMS_VM_DIRTY_STATUS + VMS_VM_NDIRTY));
	assert_null(vms_vmetric_find(0));
	/* a STATS message carries them; an id past them breaks the stream */
	for (unsigned k = 0; k < 2; k++) {
		struct vms_vp_w w;
		struct vms_vp_msg m;
		struct vms_vp_stats st;
		vms_vp_w_init(&w);
		vms_vp_begin(&w, VMS_VP_STATS);
		vms_vp_uuid(&w, U1);
		vms_vp_u64(&w, 1);
		vms_vp_u8(&w, 0);
		vms_vp_u16(&w, 1);
		vms_vp_u16(&w, k ? VMS_VM_MIG_JOB + VMS_VM_NMIG : VMS_VM_MIG_MEMORY_REMAINING);
		vms_vp_u16(&w, 0);
		vms_vp_u64(&w, 58441ull << 10);
		assert_int_equal(vms_vp_end(&w), 0);
		one(&w, &m, VMS_VP_STATS);
		assert_int_equal(vms_vp_stats_dec(&m, &st), k ? -EBADMSG : 0);
		vms_vp_w_free(&w);
	}
	assert_null(vms_vmetric_find(VMS_VM_BALLOON_CURRENT + VMS_VM_NBALLOON));
	assert_true(vms_vp_uuid_ok(U1, 36));
	assert_true(vms_vp_uuid_ok(U2, 36));
	assert_false(vms_vp_uuid_ok(U1, 35));
	assert_false(vms_vp_uuid_ok("6bcbad04-b6d4-48a8-bce8x1144f78e8999", 36));
}

VMS_TEST_MAIN(NULL, NULL,
	test_roundtrip, test_stream, test_malformed, test_metrics)
