/* SPDX-License-Identifier: MIT */
/* test_source_netdev.c - the netdev source driven through its ops against
 * proc-root directories, as the loop drives it.
 *
 * Values are checked against node_exporter's and procfs's readings
 * (EXPECTED.md) and, for every column, against an independent reader of
 * the same file (strrchr + strtoull).  The allocator is wrapped
 * (-Wl,--wrap) to prove that sample() never allocates. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "allocwrap.h"
#include "source.h"
#include "srcdrv.h"

extern const struct vms_source_ops vms_source_netdev;

#define read_net(name, len) fixture_root_read(name, "net/dev", len)

/* ---- an independent reader ------------------------------------------------ */

static const char *const fields[] = {
	"rx_bytes", "rx_packets", "rx_errs", "rx_drop", "rx_fifo", "rx_frame", "rx_compressed",
	"rx_multicast", "tx_bytes", "tx_packets", "tx_errs", "tx_drop", "tx_fifo", "tx_colls",
	"tx_carrier", "tx_compressed",
};

/* "net.<name>.<field>": the line whose text before its last ':' is the
 * name (after blanks); the field's position in the standard header. */
static bool ref_value(const char *file, size_t len, const char *col, uint64_t *out)
{
	assert_int_equal(strncmp(col, "net.", 4), 0);
	const char *dot = strrchr(col, '.');
	char name[256];
	snprintf(name, sizeof(name), "%.*s", (int)(dot - col - 4), col + 4);
	int fi = -1;
	for (int i = 0; i < 16; i++)
		if (strcmp(dot + 1, fields[i]) == 0)
			fi = i;
	assert_true(fi >= 0);
	char *copy = strndup(file, len), *save = NULL;
	bool found = false;
	unsigned lineno = 0;
	for (char *ln = strtok_r(copy, "\n", &save); ln && !found; ln = strtok_r(NULL, "\n", &save)) {
		if (lineno++ < 2)
			continue;
		char *colon = strrchr(ln, ':');
		if (!colon)
			continue;
		*colon = '\0';
		if (strcmp(ln + strspn(ln, " "), name))
			continue;
		char *p = colon + 1;
		for (int i = 0; i <= fi; i++)
			*out = strtoull(p, &p, 10);
		found = true;
	}
	free(copy);
	return found;
}

#define check_all(d, file, len) drv_check_all(d, ref_value, file, len)
#define check_fixture(d, name) drv_check_fixture(d, ref_value, name, "net/dev")
/* the interfaces that have columns, in column order, as "a b c" */
#define ifaces(d, out, cap) drv_entities(d, "net.", ".rx_bytes", out, cap)

/* ---- tests ------------------------------------------------------------------- */


static void test_all_fixtures(void **state)
{
	(void)state;
	for (unsigned k = 0; k < NET_FIXTURES_N; k++) {
		char r[256];
		snprintf(r, sizeof(r), "roots/%s", net_fixtures[k]);
		struct drv *d = drv_new(root(r), &vms_source_netdev);
		assert_int_equal(drv_declare(d), 0);
		assert_int_equal(d->schema->ncols % 16, 0);
		for (int i = 0; i < 2; i++) {
			assert_int_equal(drv_sample(d), 0);
			assert_int_equal(d->parse_errors, 0);
			check_fixture(d, net_fixtures[k]);
		}
		drv_close(d);
	}
}

static void test_odd_names(void **state)
{
	(void)state;
	char got[1024];
	struct drv *d = drv_new(root("roots/node_exporter-odd-names"), &vms_source_netdev);
	assert_int_equal(drv_declare(d), 0);
	/* exactly 10 devices, with all 16 fields, in file order */
	assert_int_equal(d->schema->ncols, 10 * 16);
	ifaces(d, got, sizeof(got));
	assert_string_equal(got, "tun0 veth4B09XN lo eth0 lxcbr0 wlan0 docker0 ibr10:30 flannel.1 "
				 "\xf0\x9f\x92\xa9" "0");
	for (unsigned f = 0; f < 16; f++)
		assert_string_equal(d->schema->cols[f].name + strlen("net.tun0."), fields[f]);
	const struct vms_col *c = &d->schema->cols[vms_schema_find(d->schema, "net.eth0.tx_bytes")];
	assert_int_equal(c->kind, VMS_KIND_COUNTER);
	assert_int_equal(c->unit, VMS_UNIT_BYTES);
	assert_int_equal(c->wrap_bits, 64);
	c = &d->schema->cols[vms_schema_find(d->schema, "net.eth0.rx_drop")];
	assert_int_equal(c->unit, VMS_UNIT_COUNT);
	assert_int_equal(c->wrap_bits, 64);
	assert_int_equal(drv_sample(d), 0);
	/* node_exporter: receive_bytes eth0 68210035552 (glued to the colon),
	 * ibr10:30 0, flannel.1 18144009813; receive_multicast 💩0 72;
	 * transmit_drop flannel.1 64; transmit_packets 💩0 304261 */
	assert_int_equal(val(d, "net.eth0.rx_bytes"), 68210035552ull);
	assert_int_equal(val(d, "net.ibr10:30.rx_bytes"), 0);
	assert_int_equal(val(d, "net.flannel.1.rx_bytes"), 18144009813ull);
	assert_int_equal(val(d, "net.\xf0\x9f\x92\xa9" "0.rx_multicast"), 72);
	assert_int_equal(val(d, "net.flannel.1.tx_drop"), 64);
	assert_int_equal(val(d, "net.\xf0\x9f\x92\xa9" "0.tx_packets"), 304261);
	drv_close(d);

	/* procfs: exactly 4 interfaces, vethf345468 first; lo RxBytes 1664039048 */
	d = drv_new(root("roots/procfs-docker-veth"), &vms_source_netdev);
	assert_int_equal(drv_declare(d), 0);
	ifaces(d, got, sizeof(got));
	assert_string_equal(got, "vethf345468 lo docker0 eth0");
	assert_int_equal(drv_sample(d), 0);
	assert_int_equal(val(d, "net.lo.rx_bytes"), 1664039048);
	assert_int_equal(val(d, "net.eth0.tx_packets"), 732147);
	drv_close(d);
}

static void test_globs(void **state)
{
	(void)state;
	char got[2048];
	struct drv *d = drv_new(root("roots/zte-modem-26if-drop-near-2e32"), &vms_source_netdev);
	vms_globs_add(&d->sconf.include, "wlan*");
	vms_globs_add(&d->sconf.include, "apcli0");
	vms_globs_add(&d->sconf.exclude, "wlan[4-7]");
	assert_int_equal(drv_declare(d), 0);
	ifaces(d, got, sizeof(got));
	/* in file order */
	char want[256] = "";
	size_t len;
	char *b = read_net("zte-modem-26if-drop-near-2e32", &len);
	char *copy = strndup(b, len), *save = NULL;
	unsigned lineno = 0;
	for (char *ln = strtok_r(copy, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
		if (lineno++ < 2)
			continue;
		*strrchr(ln, ':') = '\0';
		const char *n = ln + strspn(ln, " ");
		if ((strncmp(n, "wlan", 4) == 0 && !(n[4] >= '4' && n[4] <= '7' && !n[5])) ||
		    strcmp(n, "apcli0") == 0)
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s", want[0] ? " " : "", n);
	}
	free(copy);
	assert_string_equal(got, want);
	assert_int_equal(d->schema->ncols, 5 * 16);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(drv_sample(d), 0);
		assert_int_equal(d->parse_errors, 0);
		check_all(d, b, len);
	}
	/* "apcli0 rx drop = 3235057664" */
	assert_int_equal(val(d, "net.apcli0.rx_drop"), 3235057664u);
	free(b);
	drv_close(d);
}

/* ---- changes between samples ---------------------------------------------- */

#define put(dir, data, len) drv_put(dir, "net/dev", data, len)

/* A fixture with one line replaced: the line of interface `name` (text
 * before the last ':', after blanks) becomes `with` ("" removes it); name
 * NULL appends `with`; name "@header" replaces the second header line. */
static char *edited(const char *fixture, const char *name, const char *with, size_t *len)
{
	size_t flen;
	char *b = read_net(fixture, &flen);
	char *out = malloc(flen + 1024);
	size_t o = 0;
	unsigned lineno = 0;
	for (char *ln = b; ln < b + flen; lineno++) {
		char *nl = memchr(ln, '\n', (size_t)(b + flen - ln));
		size_t l = nl ? (size_t)(nl - ln) + 1 : (size_t)(b + flen - ln);
		bool hit = false;
		if (name && lineno == 1 && strcmp(name, "@header") == 0) {
			hit = true;
		} else if (name && lineno >= 2) {
			char tmp[512];
			snprintf(tmp, sizeof(tmp), "%.*s", (int)l, ln);
			char *colon = strrchr(tmp, ':');
			if (colon) {
				*colon = '\0';
				hit = strcmp(tmp + strspn(tmp, " "), name) == 0;
			}
		}
		if (hit) {
			o += (size_t)sprintf(out + o, "%s", with);
		} else {
			memcpy(out + o, ln, l);
			o += l;
		}
		ln += l;
	}
	if (!name)
		o += (size_t)sprintf(out + o, "%s", with);
	free(b);
	*len = o;
	return out;
}

static void test_damaged_and_changed(void **state)
{
	(void)state;
	static const struct {
		const char *name, *with;
		int ret;
		uint32_t errors;
		const char *none;
	} cases[] = {
		/* a bad number: eth0 missing this tick, the rest kept */
		{"eth0", "  eth0: 874354587 1036395    0    0    0     0          0         0 563352563  73x2147    0    0    0     0       0          0\n",
		 0, 1, "eth0"},
		/* 15 numbers */
		{"eth0", "  eth0: 874354587 1036395    0    0    0     0          0         0 563352563  732147    0    0    0     0       0\n",
		 0, 1, "eth0"},
		/* the same counters, glued and with other spacing: still eth0 */
		{"eth0", "eth0:874354587 1036395 0 0 0 0 0 0 563352563 732147 0 0 0 0 0 0\n", 0, 0, NULL},
		/* a damaged line of an interface that is not sampled is not read */
		{"docker0", "docker0:    25x68      38    0    0\n", 0, 0, NULL},
		/* gone: sampled, and not sampled */
		{"eth0", "", VMS_RESCHEMA, 0, NULL},
		{"docker0", "", VMS_RESCHEMA, 0, NULL},
		/* new: sampled, not sampled, and an alias line where docker0 was
		 * (its text starts with "docker0:") */
		{NULL, "  eth1: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n", VMS_RESCHEMA, 0, NULL},
		{NULL, "docker1: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n", VMS_RESCHEMA, 0, NULL},
		{"docker0", "docker0:1:    2568      38    0    0    0     0          0         0      438       5    0    0    0     0       0          0\n",
		 VMS_RESCHEMA, 0, NULL},
		/* another header of the same length: the columns are mapped again */
		{"@header", " face |packets  bytes   errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n",
		 VMS_RESCHEMA, 0, NULL},
		/* a damaged line of docker0 (passed over by its prefix), then the
		 * real one: one more line of a known interface, not a new one
		 * (found by fuzz_sources: the same file asked for a new schema
		 * at every sample) */
		{"docker0", "docker0:    25x68      38\ndocker0:    2568      38    0    0    0     0          0         0      438       5    0    0    0     0       0          0\n",
		 0, 1, NULL},
		/* the same for a sampled interface: the first line counts */
		{"eth0", "  eth0: 874354587 1036395    0    0    0     0          0         0 563352563  732147    0    0    0     0       0          0\n  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n",
		 0, 1, NULL},
		/* a damaged line for a new interface is only damaged */
		{NULL, "  eth1 1 2 3\n", 0, 1, NULL},
	};
	char *dir = tmpdir_make();
	for (unsigned i = 0; i < VMS_ARRAY_SIZE(cases); i++) {
		size_t len;
		char *s = edited("procfs-docker-veth", "-", "", &len);
		put(dir, s, len);
		free(s);
		struct drv *d = drv_new(dir, &vms_source_netdev);
		vms_globs_add(&d->sconf.exclude, "docker*");
		assert_int_equal(drv_declare(d), 0);
		assert_int_equal(d->schema->ncols, 3 * 16);
		assert_int_equal(drv_sample(d), 0);
		s = edited("procfs-docker-veth", cases[i].name, cases[i].with, &len);
		put(dir, s, len);
		free(s);
		unsigned none = drv_case_check(d, i, cases[i].ret, cases[i].errors, ref_value, "procfs-docker-veth",
					       "net/dev", "net", cases[i].none);
		if (cases[i].ret == 0)
			assert_int_equal(none, cases[i].none ? 16 : 0);
		drv_close(d);
	}
	tmpdir_free(dir);
}

static void test_partial_header(void **state)
{
	(void)state;
	/* a header without rx_fifo and tx_compressed: those columns do not exist */
	const char *s = "Inter-|   Receive                                                |  Transmit\n"
			" face |bytes    packets errs drop frame compressed multicast|"
			"bytes    packets errs drop fifo colls carrier\n"
			"    lo: 1 2 3 4 5 6 7 8 9 10 11 12 13 14\n";
	char *dir = tmpdir_make();
	put(dir, s, strlen(s));
	struct drv *d = drv_new(dir, &vms_source_netdev);
	assert_int_equal(drv_declare(d), 0);
	assert_int_equal(d->schema->ncols, 14);
	assert_int_equal(vms_schema_find(d->schema, "net.lo.rx_fifo"), -ENOENT);
	assert_int_equal(vms_schema_find(d->schema, "net.lo.tx_compressed"), -ENOENT);
	assert_int_equal(drv_sample(d), 0);
	assert_int_equal(val(d, "net.lo.rx_drop"), 4);
	assert_int_equal(val(d, "net.lo.rx_frame"), 5);
	assert_int_equal(val(d, "net.lo.tx_carrier"), 14);
	drv_close(d);
	/* no header: the source cannot map anything */
	put(dir, "    lo: 1 2\n  eth0: 3 4\n", 24);
	d = drv_new(dir, &vms_source_netdev);
	assert_int_equal(drv_declare(d), -EINVAL);
	drv_close(d);
	tmpdir_free(dir);
}

static void test_no_allocation(void **state)
{
	(void)state;
	static const char *const roots[] = {"roots/pcp-bigsys-hpbl920-49if", "roots/node_exporter-odd-names",
					    "roots/zte-modem-26if-drop-near-2e32"};
	for (unsigned k = 0; k < VMS_ARRAY_SIZE(roots); k++) {
		struct drv *d = drv_new(root(roots[k]), &vms_source_netdev);
		vms_globs_add(&d->sconf.exclude, "eth1*");
		vms_globs_add(&d->sconf.exclude, "wlan*");
		assert_int_equal(drv_declare(d), 0);
		uint32_t errs;
		/* each a new tick: the file is read again */
		assert_int_equal(drv_sample_allocs(d, 1000, true, &errs), 0);
		assert_int_equal(errs, 0);
		drv_close(d);
	}
}

static void test_open_close(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	drv_open_missing(dir, &vms_source_netdev);
	/* header only: no interfaces */
	const char *h = "Inter-|   Receive                                                |  Transmit\n"
			" face |bytes    packets errs drop fifo frame compressed multicast|"
			"bytes    packets errs drop fifo colls carrier compressed\n";
	drv_put_expect(dir, "net/dev", &vms_source_netdev, h, strlen(h), false, 0, NULL);
	/* no trailing newline and no sconf */
	size_t len;
	char *b = read_net("jtsys-em1-em2-nonl", &len);
	drv_put_expect(dir, "net/dev", &vms_source_netdev, b, len, true, 3 * 16, ref_value);
	free(b);
	tmpdir_free(dir);
}

VMS_TEST_MAIN(NULL, NULL,
	test_all_fixtures, test_odd_names, test_globs, test_damaged_and_changed,
	test_partial_header, test_no_allocation, test_open_close)
