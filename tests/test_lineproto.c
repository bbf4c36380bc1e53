/* SPDX-License-Identifier: MIT */
/* src/tools/lineproto.c: the column mapping, escaping as the InfluxDB
 * line-protocol reference gives it, missing values absent, lines without
 * fields left out, integers too big for InfluxDB 1.x left out and
 * counted, JSON escaping.  (The values against a real InfluxDB and
 * against dump: tests/test_tsdb.py.) */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "lineproto.h"
#include "testutil.h"

/* The identities of names, as a reader derives them for an old file
 * (parts into a static buffer). */
static const struct vms_colid *ids_of(const char *const *names, unsigned n)
{
	static struct vms_colid ids[16];
	static char parts[16][600];
	assert_true(n <= 16);
	for (unsigned i = 0; i < n; i++)
		vms_catalog_derive(names[i], &ids[i], parts[i], sizeof(parts[i]));
	return ids;
}

static int lp_map(const char *name, const char *key, struct vms_lp_place *p)
{
	return vms_lp_map(name, ids_of(&name, 1), key, p);
}

static void place(const char *name, const char *key, const char *meas, const char *tags, const char *field)
{
	struct vms_lp_place p;
	assert_int_equal(lp_map(name, key, &p), 0);
	assert_string_equal(p.measurement, meas);
	char buf[512] = "";
	for (int t = 0; t < 3; t++)
		if (p.tag[t].key && p.tag[t].value[0]) {
			strcat(buf, buf[0] ? "," : "");
			strcat(buf, p.tag[t].key);
			strcat(buf, "=");
			strcat(buf, p.tag[t].value);
		}
	assert_string_equal(buf, tags);
	assert_string_equal(p.field, field);
}

static void test_map(void **state)
{
	(void)state;
	place("cpu.all.user", NULL, "cpu", "cpu=cpu-total", "user");
	place("cpu.3.steal", NULL, "cpu", "cpu=cpu3", "steal");
	place("perf.cpu1.context-switches", NULL, "perf", "cpu=cpu1", "context-switches");
	place("perf.all.time_enabled", NULL, "perf", "cpu=cpu-total", "time_enabled");
	place("disk.sda.rd_ios", NULL, "disk", "device=sda", "rd_ios");
	place("net.eth0.100.rx_bytes", NULL, "net", "device=eth0.100", "rx_bytes");
	place("load.1m", NULL, "load", "", "1m");
	place("stat.ctxt", NULL, "stat", "", "ctxt");
	place("vms.parse_errors", NULL, "vms", "", "parse_errors");
	place("vm.web1.cpu_time", "u-1", "vm", "domain=web1,uuid=u-1", "cpu_time");
	place("vm.web1.balloon.current", "u-1", "vm", "domain=web1,uuid=u-1", "balloon_current");
	place("vm.web1.perf.kvm:kvm_exit", "u-1", "vm", "domain=web1,uuid=u-1", "perf_kvm:kvm_exit");
	place("vm.web1.lv.cpu_time", "u-1", "vm", "domain=web1,uuid=u-1", "lv_cpu_time");
	place("vm.web1.vcpu12.delay", "u-1", "vm_vcpu", "domain=web1,uuid=u-1,vcpu=12", "delay");
	place("vm.web1.lv.vcpu0.time", "u-1", "vm_vcpu", "domain=web1,uuid=u-1,vcpu=0", "lv_time");
	/* InfluxDB's reserved key */
	place("vm.web1.vcpu0.time", "u-1", "vm_vcpu", "domain=web1,uuid=u-1,vcpu=0", "time_");
	place("x.time", NULL, "x", "", "time_");
	place("vm.web1.net.vnet0.tx_bytes", "u-1", "vm_net", "domain=web1,uuid=u-1,device=vnet0", "tx_bytes");
	place("vm.web1.block.vda.rd_bytes", NULL, "vm_block", "domain=web1,device=vda", "rd_bytes");
	struct vms_lp_place p;
	/* vcpuX without a number: a vm.* name that is no column of the catalogue */
	assert_int_equal(lp_map("vm.web1.vcpux.time", "u", &p), -EINVAL);
	assert_int_equal(lp_map("nodot", NULL, &p), -EINVAL);
	assert_int_equal(lp_map("disk.sda", NULL, &p), -EINVAL);
	assert_int_equal(lp_map("vm.onlyname", NULL, &p), -EINVAL);
	assert_int_equal(lp_map(".x", NULL, &p), -EINVAL);
}

static void test_escape(void **state)
{
	(void)state;
	char b[128], *e;
	/* the reference's examples: measurement: comma, space; keys and tag
	 * values: comma, equals, space */
	e = vms_lp_esc_measurement(b, "my measure,x=1");
	*e = 0;
	assert_string_equal(b, "my\\ measure\\,x=1");
	e = vms_lp_esc_key(b, "a b,c=d");
	*e = 0;
	assert_string_equal(b, "a\\ b\\,c\\=d");
	assert_true(vms_lp_esc_max("a b,c=d") >= (size_t)(e - b));
	/* what InfluxDB 1.x and 2.x read differently, or 1.x not at all */
	assert_false(vms_lp_name_ok("a\\b"));
	assert_false(vms_lp_name_ok("end\\"));
	assert_false(vms_lp_name_ok("a\nb"));
	assert_false(vms_lp_name_ok("a\x7f"));
	assert_true(vms_lp_name_ok("web 1,rack=a:b\xc3\xa9"));
	e = vms_json_string(b, "q\"b\\n\n\x01\xc3\xa9");
	*e = 0;
	assert_string_equal(b, "\"q\\\"b\\\\n\\u000a\\u0001\xc3\xa9\"");
	assert_true(vms_json_string_max("q\"b\\n\n\x01\xc3\xa9") >= (size_t)(e - b));
}

static char *frame(struct vms_lp *lp, const struct vms_lp_val *v, uint64_t lost)
{
	struct vms_lp_meta m = {.seq = 7, .t_wall_ns = 1764042000123456789, .t_mono_ns = 55, .gen = 2,
				.flags = 1, .late_ns = 10, .self_cpu_ns = 20, .reader_lost = lost};
	size_t max = vms_lp_max(lp, 0);
	char *buf = malloc(max + 1);
	assert_non_null(buf);
	char *e = vms_lp_frame(lp, buf, &m, v);
	assert_true((size_t)(e - buf) <= max);
	*e = 0;
	return buf;
}

static void test_influx_frame(void **state)
{
	(void)state;
	const char *names[] = {"cpu.0.user", "disk.my disk.rd_ios", "cpu.0.system", "load.1m",
			       "vm.a.cpu_time", "net.lo\\.rx_bytes", "bad\nname.x", "stat.ctxt"};
	const char *keys[] = {"", "", "", "", "1234", "", "", ""};
	struct vms_lp *lp;
	assert_int_equal(vms_lp_new(&lp, VMS_LP_INFLUX, 8, names, ids_of(names, 8), keys, "h,1"), 0);
	assert_int_equal(vms_lp_skipped(lp), 2);
	struct vms_lp_val v[8] = {
		{.type = VMS_LP_UINT, .u = 100},
		{.type = VMS_LP_UINT, .u = (uint64_t)INT64_MAX + 1}, /* not an InfluxDB 1.x integer */
		{.type = VMS_LP_UINT, .u = 0},                        /* a real zero stays */
		{.type = VMS_LP_FIXED, .scale = 2, .u = 7},
		{.type = VMS_LP_NONE},
		{.type = VMS_LP_UINT, .u = 2}, /* left out: its name */
		{.type = VMS_LP_UINT, .u = 1}, /* left out: its name */
		{.type = VMS_LP_UINT, .u = INT64_MAX},
	};
	char *out = frame(lp, v, 3);
	assert_string_equal(out,
		"cpu,host=h\\,1,cpu=cpu0 user=100i,system=0i 1764042000123456789\n"
		"load,host=h\\,1 1m=0.07 1764042000123456789\n"
		"stat,host=h\\,1 ctxt=9223372036854775807i 1764042000123456789\n"
		"vmsampler,host=h\\,1 seq=7i,t_mono_ns=55i,gen=2i,flags=1i,missed_ticks=0i,lost_frames=0i,"
		"late_ns=10i,self_cpu_ns=20i,reader_lost=3i,dropped_values=1i 1764042000123456789\n");
	free(out);
	vms_lp_free(lp);

	/* no host tag; doubles (rates) with 6 digits, negative, huge, not finite */
	const char *rn[] = {"cpu.all.%user", "net.lo.rx_kB/s", "x.a", "x.b"};
	/* rate columns' identities (struct vms_rate_col): their inputs' group,
	 * entity and sub, and what they are */
	const struct vms_colid rid[] = {{VMS_G_CPU, VMS_FIELD_OPEN, "all", "", "%user"},
					{VMS_G_NET, VMS_FIELD_OPEN, "lo", "", "rx_kB/s"},
					{VMS_G_NONE, VMS_FIELD_OPEN, "", "", ""},
					{VMS_G_NONE, VMS_FIELD_OPEN, "", "", ""}};
	assert_int_equal(vms_lp_new(&lp, VMS_LP_INFLUX, 4, rn, rid, NULL, ""), 0);
	struct vms_lp_val d[4] = {
		{.type = VMS_LP_DOUBLE, .d = 12.3456789},
		{.type = VMS_LP_DOUBLE, .d = -0.5},
		{.type = VMS_LP_DOUBLE, .d = 1e20},
		{.type = VMS_LP_DOUBLE, .d = NAN},
	};
	out = frame(lp, d, 0);
	assert_string_equal(out,
		"cpu,cpu=cpu-total %user=12.345679 1764042000123456789\n"
		"net,device=lo rx_kB/s=-0.500000 1764042000123456789\n"
		"x a=1e+20 1764042000123456789\n"
		"vmsampler seq=7i,t_mono_ns=55i,gen=2i,flags=1i,missed_ticks=0i,lost_frames=0i,"
		"late_ns=10i,self_cpu_ns=20i,reader_lost=0i,dropped_values=0i 1764042000123456789\n");
	free(out);
	vms_lp_free(lp);
}

static void test_json_frame(void **state)
{
	(void)state;
	const char *names[] = {"cpu.0.user", "load.1m", "vm.a\"b.x", "gone", "big"};
	struct vms_lp *lp;
	assert_int_equal(vms_lp_new(&lp, VMS_LP_JSON, 5, names, NULL, NULL, "ignored"), 0);
	struct vms_lp_val v[5] = {
		{.type = VMS_LP_UINT, .u = 0},
		{.type = VMS_LP_FIXED, .scale = 2, .u = 123},
		{.type = VMS_LP_UINT, .u = 5},
		{.type = VMS_LP_NONE},
		{.type = VMS_LP_UINT, .u = UINT64_MAX}, /* JSON numbers have no limit */
	};
	char *out = frame(lp, v, 1);
	assert_string_equal(out, "{\"seq\":7,\"t_wall_ns\":1764042000123456789,\"t_mono_ns\":55,\"gen\":2,"
				 "\"flags\":1,\"missed_ticks\":0,\"lost_frames\":0,\"late_ns\":10,"
				 "\"self_cpu_ns\":20,\"reader_lost\":1,\"cpu.0.user\":0,\"load.1m\":1.23,"
				 "\"vm.a\\\"b.x\":5,\"big\":18446744073709551615}\n");
	free(out);
	vms_lp_free(lp);
}

VMS_TEST_MAIN(NULL, NULL, test_map, test_escape, test_influx_frame, test_json_frame)
