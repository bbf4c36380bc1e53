/* SPDX-License-Identifier: MIT */
/* test_metrics.c - the Prometheus names and exposition of src/tools/metrics.c
 * against a recorded run (tests/fixtures/runs/vmlab-3-plus-3-busy.vms: a
 * real host with 3 + 3 libvirt guests), with `vmsampler dump` of the same
 * file as the independent reference for every value:
 *   - every column of every schema of the run has a family (none left out);
 *   - a frame with the busy guests exposed as Prometheus text: node_cpu,
 *     node_load, node_disk, node_network, libvirt_domain_* and vmsampler_*
 *     samples equal dump's raw columns converted to base units; the slow
 *     values dump leaves empty in that frame are the last ones dump shows
 *     before it (held), their age the frames' time difference; a column
 *     empty in that frame (no hold) has no sample at all;
 *   - the text is well formed: each family once, HELP and TYPE before its
 *     samples, counters end in _total, every sample stamped with the
 *     frame's time in ms; OpenMetrics: TYPE without _total, UNIT, # EOF,
 *     time in seconds;
 *   - the content negotiation, label escaping, device names with dots,
 *     unknown columns. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics.h"
#include "runbin.h"
#include "catalog.h"
#include "testutil.h"
#include "vms.h"

#include <vmsampler/reader.h>

#define RUN "runs/vmlab-3-plus-3-busy.vms"
#define SEQ 50      /* a frame of generation 3: the busy guests vms-901..903 run */
#define HZ 100.0    /* USER_HZ of the recording host (x86_64 Linux) */

/* ---- the exposition, parsed back ------------------------------------------ */

struct sample {
	char *series; /* name{labels} */
	double v;
	char *ts;
};

struct expo {
	struct sample *s;
	unsigned n;
};

static void expo_parse(struct expo *e, char *text, bool om)
{
	char fam[256] = "";
	char seen[64][128];
	unsigned nseen = 0;
	bool help = false, type = false;
	e->s = calloc(4096, sizeof(*e->s));
	e->n = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (strncmp(line, "# HELP ", 7) == 0) {
			char *sp = strchr(line + 7, ' ');
			assert_non_null(sp);
			snprintf(fam, sizeof(fam), "%.*s", (int)(sp - line - 7), line + 7);
			/* each family once */
			for (unsigned i = 0; i < nseen && i < 64; i++)
				if (strcmp(seen[i], fam) == 0)
					fail_msg("family %s twice", fam);
			if (nseen < 64)
				snprintf(seen[nseen], sizeof(seen[0]), "%s", fam);
			nseen++;
			help = true;
			type = false;
			continue;
		}
		if (strncmp(line, "# TYPE ", 7) == 0) {
			assert_true(help);
			char want[300];
			snprintf(want, sizeof(want), "# TYPE %s ", fam);
			assert_true(strncmp(line, want, strlen(want)) == 0);
			const char *t = line + strlen(want);
			assert_true(strcmp(t, "counter") == 0 || strcmp(t, "gauge") == 0);
			/* 0.0.4: a counter's family ends in _total; OpenMetrics: never */
			size_t fl = strlen(fam);
			bool total = fl > 6 && strcmp(fam + fl - 6, "_total") == 0;
			if (strcmp(t, "counter") == 0)
				assert_true(om ? !total : total);
			type = true;
			continue;
		}
		if (strncmp(line, "# UNIT ", 7) == 0) {
			assert_true(om && type);
			continue;
		}
		if (strcmp(line, "# EOF") == 0) {
			assert_true(om);
			assert_null(strtok(NULL, "\n")); /* the last line */
			break;
		}
		assert_true(line[0] != '#');
		assert_true(help && type);
		/* the sample belongs to the family announced last */
		size_t fl = strlen(fam);
		assert_true(strncmp(line, fam, fl) == 0);
		char *sp = strrchr(line, ' ');
		assert_non_null(sp);
		*sp = '\0';
		char *ts = sp + 1, *vs = strrchr(line, ' ');
		assert_non_null(vs);
		*vs = '\0';
		char *end;
		double v = strtod(vs + 1, &end);
		assert_true(*end == '\0');
		assert_true(e->n < 4096);
		e->s[e->n].series = strdup(line);
		e->s[e->n].v = v;
		e->s[e->n].ts = strdup(ts);
		e->n++;
	}
}

static const struct sample *expo_find(const struct expo *e, const char *series)
{
	for (unsigned i = 0; i < e->n; i++)
		if (strcmp(e->s[i].series, series) == 0)
			return &e->s[i];
	return NULL;
}

static double expo_get(const struct expo *e, const char *series)
{
	const struct sample *s = expo_find(e, series);
	if (!s)
		fail_msg("no sample %s", series);
	return s->v;
}

static void expo_free(struct expo *e)
{
	for (unsigned i = 0; i < e->n; i++) {
		free(e->s[i].series);
		free(e->s[i].ts);
	}
	free(e->s);
}

/* ---- dump, the reference ------------------------------------------------- */

struct ref {
	struct table t1; /* generation 1's CSV (frames 1..21) */
	struct table t; /* generation 3's CSV (frames 23..71) */
	unsigned row;   /* the row of SEQ */
	char *dir;
};

static void ref_load(struct ref *r)
{
	r->dir = tmpdir_make();
	char out[512];
	snprintf(out, sizeof(out), "%s/run.csv", r->dir);
	struct run_result rr;
	run_bin(&rr, 0, (const char *const[]){"dump", fixture_path(RUN), "-o", out, NULL});
	assert_int_equal(rr.status, 0);
	run_result_free(&rr);
	size_t len;
	char *text = read_whole(out, &len);
	assert_non_null(text);
	table_parse(&r->t1, text);
	snprintf(out, sizeof(out), "%s/run.g3.csv", r->dir);
	text = read_whole(out, &len);
	assert_non_null(text);
	table_parse(&r->t, text);
	for (r->row = 0; r->row < r->t.nrows; r->row++)
		if (atoi(table_get(&r->t, r->row, "seq")) == SEQ)
			break;
	assert_true(r->row < r->t.nrows);
}

static void ref_free(struct ref *r)
{
	table_free(&r->t1);
	table_free(&r->t);
	tmpdir_free(r->dir);
}

/* the raw value of column name in row (must be there) */
static double raw(const struct ref *r, unsigned row, const char *name)
{
	const char *c = table_get(&r->t, row, name);
	if (!c)
		fail_msg("dump has no column %s", name);
	if (!*c)
		fail_msg("dump: %s empty in row %u", name, row);
	return strtod(c, NULL);
}

/* the last row <= row where name is not empty */
static unsigned last_row(const struct ref *r, unsigned row, const char *name)
{
	for (unsigned i = row + 1; i-- > 0;) {
		const char *c = table_get(&r->t, i, name);
		if (c && *c)
			return i;
	}
	fail_msg("%s never has a value up to row %u", name, row);
	return 0;
}

/* ---- reading the run -------------------------------------------------------- */

/* Follow the run to frame SEQ as an exporter does, expose it. */
static char *expose_at(uint64_t seq, enum vms_expo fmt, struct vms_mstate *st)
{
	struct vms_reader *rd;
	assert_int_equal(vms_reader_open(&rd, fixture_path(RUN), 0), 0);
	vms_mstate_init(st, HZ);
	int r;
	while ((r = vms_reader_next(rd)) > 0) {
		assert_int_equal(vms_mstate_take(st, rd), 0);
		/* every column of every schema has a family */
		assert_int_equal(st->m.unmapped, 0);
		if (vms_reader_seq(rd) == seq)
			break;
	}
	assert_int_equal(r, 1);
	vms_mstate_reader(st, rd);
	struct vms_mbuf b = {0};
	assert_int_equal(vms_metrics_expose(&st->m, st->cur, st->meta, fmt, true, &b), 0);
	vms_reader_close(rd);
	return b.p;
}

/* ---- tests ---------------------------------------------------------------- */

static void test_values_against_dump(void **state)
{
	(void)state;
	struct ref ref;
	struct vms_mstate st;
	struct expo e;
	char s[512];
	ref_load(&ref);
	unsigned row = ref.row;
	char *text = expose_at(SEQ, VMS_EXPO_PROM, &st);
	expo_parse(&e, text, false);

	/* every sample stamped with the frame's time, in ms */
	int64_t t = (int64_t)st.meta[VMS_MMETA_TIME];
	snprintf(s, sizeof(s), "%lld", (long long)(t / 1000000));
	for (unsigned i = 0; i < e.n; i++)
		assert_string_equal(e.s[i].ts, s);

	/* the host, node_exporter's names */
	static const char *const modes[] = {"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"};
	for (unsigned cpu = 0; cpu < 2; cpu++)
		for (unsigned m = 0; m < 8; m++) {
			char col[64];
			snprintf(col, sizeof(col), "cpu.%u.%s", cpu, modes[m]);
			snprintf(s, sizeof(s), "node_cpu_seconds_total{cpu=\"%u\",mode=\"%s\"}", cpu, modes[m]);
			assert_true(expo_get(&e, s) == raw(&ref, row, col) / HZ);
		}
	assert_true(expo_get(&e, "node_cpu_guest_seconds_total{cpu=\"1\",mode=\"nice\"}") ==
		    raw(&ref, row, "cpu.1.guest_nice") / HZ);
	assert_true(expo_get(&e, "vmsampler_cpu_all_seconds_total{mode=\"steal\"}") ==
		    raw(&ref, row, "cpu.all.steal") / HZ);
	assert_true(expo_get(&e, "node_load1") == raw(&ref, row, "load.1m"));
	assert_true(expo_get(&e, "node_load5") == raw(&ref, row, "load.5m"));
	assert_true(expo_get(&e, "node_load15") == raw(&ref, row, "load.15m"));
	assert_true(expo_get(&e, "node_context_switches_total") == raw(&ref, row, "stat.ctxt"));
	assert_true(expo_get(&e, "node_intr_total") == raw(&ref, row, "stat.intr"));
	assert_true(expo_get(&e, "node_forks_total") == raw(&ref, row, "stat.processes"));
	assert_true(expo_get(&e, "node_procs_running") == raw(&ref, row, "stat.procs_running"));
	assert_true(expo_get(&e, "node_procs_blocked") == raw(&ref, row, "stat.procs_blocked"));
	assert_true(expo_get(&e, "node_disk_read_bytes_total{device=\"vda\"}") ==
		    raw(&ref, row, "disk.vda.rd_sectors") * 512);
	assert_true(expo_get(&e, "node_disk_written_bytes_total{device=\"vda\"}") ==
		    raw(&ref, row, "disk.vda.wr_sectors") * 512);
	assert_true(expo_get(&e, "node_disk_reads_completed_total{device=\"vda\"}") ==
		    raw(&ref, row, "disk.vda.rd_ios"));
	assert_true(expo_get(&e, "node_disk_io_time_seconds_total{device=\"vda\"}") ==
		    raw(&ref, row, "disk.vda.io_ticks") / 1000);
	assert_true(expo_get(&e, "node_disk_io_now{device=\"zram0\"}") == raw(&ref, row, "disk.zram0.in_flight"));
	assert_true(expo_get(&e, "node_disk_discarded_sectors_total{device=\"vda\"}") ==
		    raw(&ref, row, "disk.vda.dc_sectors"));
	assert_true(expo_get(&e, "node_network_receive_bytes_total{device=\"lo\"}") ==
		    raw(&ref, row, "net.lo.rx_bytes"));
	assert_true(expo_get(&e, "node_network_transmit_packets_total{device=\"eth0\"}") ==
		    raw(&ref, row, "net.eth0.tx_packets"));
	assert_true(expo_get(&e, "node_network_transmit_colls_total{device=\"vmsbr0\"}") ==
		    raw(&ref, row, "net.vmsbr0.tx_colls"));
	assert_true(expo_get(&e, "vmsampler_perf_events_total{cpu=\"1\",event=\"context-switches\"}") ==
		    raw(&ref, row, "perf.cpu1.context-switches"));
	assert_true(expo_get(&e, "vmsampler_perf_time_running_seconds_total{cpu=\"0\",group=\"sw\"}") ==
		    raw(&ref, row, "perf.cpu0.time_running") / 1e9);
	assert_true(expo_get(&e, "libvirt_domains") == raw(&ref, row, "virt.domains"));

	/* a busy guest, the libvirt exporter's names */
	struct vms_reader *rd;
	assert_int_equal(vms_reader_open(&rd, fixture_path(RUN), 0), 0);
	const char *uuid = NULL;
	while (vms_reader_next(rd) > 0 && !uuid) {
		int c = vms_reader_column(rd, "vm.vms-901.cpu_time");
		struct vms_reader_col ci;
		if (c >= 0 && vms_reader_col_info(rd, (uint32_t)c, &ci) == 0)
			uuid = strdup(ci.key);
	}
	vms_reader_close(rd);
	assert_non_null(uuid);
	assert_int_equal(strlen(uuid), 36);
	char dom[128];
	snprintf(dom, sizeof(dom), "domain=\"vms-901\",uuid=\"%s\"", uuid);
	snprintf(s, sizeof(s), "libvirt_domain_info_cpu_time_seconds_total{%s}", dom);
	assert_true(expo_get(&e, s) == raw(&ref, row, "vm.vms-901.cpu_time") / 1e9);
	snprintf(s, sizeof(s), "libvirt_domain_vcpu_delay_seconds_total{%s,vcpu=\"0\"}", dom);
	assert_true(expo_get(&e, s) == raw(&ref, row, "vm.vms-901.vcpu0.delay") / 1e9);
	snprintf(s, sizeof(s), "libvirt_domain_vcpu_time_seconds_total{%s,vcpu=\"0\"}", dom);
	assert_true(expo_get(&e, s) == raw(&ref, row, "vm.vms-901.vcpu0.time") / 1e9);
	snprintf(s, sizeof(s), "libvirt_domain_interface_stats_receive_bytes_total{%s,target_device=\"vmst901\"}",
		 dom);
	assert_true(expo_get(&e, s) == raw(&ref, row, "vm.vms-901.net.vmst901.rx_bytes"));
	snprintf(s, sizeof(s), "libvirt_domain_interface_stats_transmit_drops_total{%s,target_device=\"vmst901\"}",
		 dom);
	assert_true(expo_get(&e, s) == raw(&ref, row, "vm.vms-901.net.vmst901.tx_drop"));
	snprintf(s, sizeof(s), "libvirt_domain_memory_stats_rss_bytes{%s}", dom);
	assert_true(expo_get(&e, s) == raw(&ref, row, "vm.vms-901.mem.rss"));
	/* running (1): the one series of the state, the others absent */
	assert_true(raw(&ref, row, "vm.vms-901.state") == 1);
	snprintf(s, sizeof(s), "libvirt_domain_info_state{%s,state_desc=\"the domain is running\"}", dom);
	assert_true(expo_get(&e, s) == 1);
	snprintf(s, sizeof(s), "libvirt_domain_info_state{%s,state_desc=\"the domain is shut off\"}", dom);
	assert_null(expo_find(&e, s));
	snprintf(s, sizeof(s), "vmsampler_domain_perf_events_total{%s,event=\"kvm:kvm_exit\"}", dom);
	assert_true(expo_get(&e, s) == raw(&ref, row, "vm.vms-901.perf.kvm:kvm_exit"));

	/* slow values: empty in this frame, held from the last frame that had them */
	const char *c = table_get(&ref.t, row, "vm.vms-901.balloon.current");
	assert_non_null(c);
	assert_string_equal(c, "");
	unsigned lr = last_row(&ref, row, "vm.vms-901.balloon.current");
	snprintf(s, sizeof(s), "libvirt_domain_info_memory_usage_bytes{%s}", dom);
	assert_true(expo_get(&e, s) == raw(&ref, lr, "vm.vms-901.balloon.current") * 1024);
	lr = last_row(&ref, row, "vm.vms-901.block.vda.rd_bytes");
	snprintf(s, sizeof(s), "libvirt_domain_block_stats_read_bytes_total{%s,target_device=\"vda\"}", dom);
	assert_true(expo_get(&e, s) == raw(&ref, lr, "vm.vms-901.block.vda.rd_bytes"));
	lr = last_row(&ref, row, "vm.vms-901.slow_t");
	double slow_t = raw(&ref, lr, "vm.vms-901.slow_t");
	snprintf(s, sizeof(s), "vmsampler_domain_slow_timestamp_seconds{%s}", dom);
	assert_true(expo_get(&e, s) == slow_t / 1e9);
	snprintf(s, sizeof(s), "vmsampler_domain_slow_age_seconds{%s}", dom);
	double age = expo_get(&e, s);
	assert_true(fabs(age - ((double)t - slow_t) / 1e9) < 1e-6);
	assert_true(age >= 0 && age < 70); /* refresh 1 min */

	/* the frame's own: late, the sums over the 50 frames read */
	assert_true(expo_get(&e, "vmsampler_tick_late_seconds") == raw(&ref, row, "late_ns") / 1e9);
	assert_true(expo_get(&e, "vmsampler_frame_sequence") == SEQ);
	assert_true(expo_get(&e, "vmsampler_export_frames_read_total") == SEQ);
	assert_true(expo_get(&e, "vmsampler_schema_generation") == 3);
	assert_true(expo_get(&e, "vmsampler_export_unmapped_columns") == 0);
	assert_null(expo_find(&e, "vmsampler_interval_seconds")); /* a file: unknown, absent */

	/* a column missing in this frame and not held: no sample, never 0.
	 * Frame 1 of the run has no io.cg_* (the guests have no io.stat):
	 * take instead a sample we delete on purpose from the values. */
	free(text);
	expo_free(&e);
	int col = -1;
	for (uint32_t k = 0; k < st.m.nm; k++)
		if (st.m.m[k].fam < vms_nmfams && !strcmp(vms_mfams[st.m.m[k].fam].name, "node_load1") &&
		    !(st.m.m[k].col & VMS_MCOL_META))
			col = (int)st.m.m[k].col;
	assert_true(col >= 0);
	st.cur[col] = VMS_NONE;
	struct vms_mbuf b = {0};
	assert_int_equal(vms_metrics_expose(&st.m, st.cur, st.meta, VMS_EXPO_PROM, true, &b), 0);
	assert_null(strstr(b.p, "\nnode_load1 "));
	assert_null(strstr(b.p, "# TYPE node_load1 ")); /* no family without a sample */
	assert_non_null(strstr(b.p, "\nnode_load5 "));
	vms_mbuf_free(&b);

	vms_mstate_free(&st);
	free((void *)uuid);
	ref_free(&ref);
}

/* A slow value is held across new schemas (VMs starting between): at
 * frame 30 (generation 3) vms-001's balloon was last read in frame 5
 * (generation 1), as dump shows; the two schemas between dropped none. */
static void test_held_across_schemas(void **state)
{
	(void)state;
	struct ref ref;
	struct vms_mstate st;
	struct expo e;
	ref_load(&ref);
	unsigned r5 = 0, r30 = 0;
	while (r5 < ref.t1.nrows && atoi(table_get(&ref.t1, r5, "seq")) != 5)
		r5++;
	while (r30 < ref.t.nrows && atoi(table_get(&ref.t, r30, "seq")) != 30)
		r30++;
	assert_true(r5 < ref.t1.nrows && r30 < ref.t.nrows);
	/* dump: empty in generation 3 up to frame 30, and in all of generation 2 */
	for (unsigned i = 0; i <= r30; i++)
		assert_string_equal(table_get(&ref.t, i, "vm.vms-001.balloon.current"), "");
	const char *c = table_get(&ref.t1, r5, "vm.vms-001.balloon.current");
	assert_true(c && *c);
	double want = strtod(c, NULL) * 1024;
	for (unsigned i = r5 + 1; i < ref.t1.nrows; i++)
		assert_string_equal(table_get(&ref.t1, i, "vm.vms-001.balloon.current"), "");
	char *text = expose_at(30, VMS_EXPO_PROM, &st);
	expo_parse(&e, text, false);
	bool found = false;
	for (unsigned i = 0; i < e.n; i++)
		if (strncmp(e.s[i].series, "libvirt_domain_info_memory_usage_bytes{domain=\"vms-001\",", 56) == 0) {
			assert_true(e.s[i].v == want);
			found = true;
		}
	assert_true(found);
	expo_free(&e);
	free(text);
	vms_mstate_free(&st);
	ref_free(&ref);
}

static void test_openmetrics(void **state)
{
	(void)state;
	struct vms_mstate st;
	struct expo e;
	char *text = expose_at(SEQ, VMS_EXPO_OPENMETRICS, &st);
	size_t n = strlen(text);
	assert_true(n > 6 && strcmp(text + n - 6, "# EOF\n") == 0);
	assert_non_null(strstr(text, "# TYPE node_cpu_seconds counter\n# UNIT node_cpu_seconds seconds\n"));
	assert_non_null(strstr(text, "# TYPE node_load1 gauge\n"));
	expo_parse(&e, text, true);
	/* timestamps in seconds with ms */
	int64_t t = (int64_t)st.meta[VMS_MMETA_TIME];
	char ts[64];
	snprintf(ts, sizeof(ts), "%lld.%03lld", (long long)(t / 1000000000), (long long)(t / 1000000 % 1000));
	for (unsigned i = 0; i < e.n; i++)
		assert_string_equal(e.s[i].ts, ts);
	assert_non_null(expo_find(&e, "node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"}"));
	expo_free(&e);
	free(text);
	vms_mstate_free(&st);
}

/* By default /metrics has no timestamps (Prometheus' staleness works for
 * series that end); the same frame stamped gives the same samples. */
static void test_no_timestamps(void **state)
{
	(void)state;
	for (int fmt = VMS_EXPO_PROM; fmt <= VMS_EXPO_OPENMETRICS; fmt++) {
		struct vms_mstate st;
		char *stamped = expose_at(SEQ, (enum vms_expo)fmt, &st);
		struct vms_mbuf b = {0};
		assert_int_equal(vms_metrics_expose(&st.m, st.cur, st.meta, (enum vms_expo)fmt, false, &b), 0);
		/* the stamped text less each sample's " TIMESTAMP" */
		int64_t t = (int64_t)st.meta[VMS_MMETA_TIME];
		char ts[64];
		if (fmt == VMS_EXPO_OPENMETRICS)
			snprintf(ts, sizeof(ts), " %lld.%03lld\n", (long long)(t / 1000000000),
				 (long long)(t / 1000000 % 1000));
		else
			snprintf(ts, sizeof(ts), " %lld\n", (long long)(t / 1000000));
		size_t tl = strlen(ts), n = 0, samples = 0;
		char *want = malloc(strlen(stamped) + 1);
		assert_non_null(want);
		for (const char *p = stamped; *p;) {
			const char *nl = strchr(p, '\n');
			size_t len = (size_t)(nl - p) + 1;
			if (*p != '#') {
				assert_true(len > tl && memcmp(nl + 1 - tl, ts, tl) == 0);
				memcpy(want + n, p, len - tl);
				n += len - tl;
				want[n++] = '\n';
				samples++;
			} else {
				memcpy(want + n, p, len);
				n += len;
			}
			p = nl + 1;
		}
		want[n] = '\0';
		assert_true(samples > 100);
		assert_string_equal(b.p, want);
		free(want);
		vms_mbuf_free(&b);
		free(stamped);
		vms_mstate_free(&st);
	}
}

static void test_negotiate(void **state)
{
	(void)state;
	/* what Prometheus 2.42 sends */
	assert_int_equal(vms_expo_negotiate("application/openmetrics-text;version=1.0.0,application/"
					    "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;"
					    "q=0.5,*/*;q=0.1"),
			 VMS_EXPO_OPENMETRICS);
	assert_int_equal(vms_expo_negotiate(NULL), VMS_EXPO_PROM);
	assert_int_equal(vms_expo_negotiate("*/*"), VMS_EXPO_PROM);
	assert_int_equal(vms_expo_negotiate("text/plain;version=0.0.4"), VMS_EXPO_PROM);
	assert_int_equal(vms_expo_negotiate("application/openmetrics-text;q=0,text/plain"), VMS_EXPO_PROM);
}

/* vms_metrics_map() of the column named `name` (its identity as a reader
 * derives it from an old file's name) */
static int map_name(const char *name, const char *key, int scale, double hz, struct vms_mcol *m)
{
	char parts[600];
	struct vms_colid id;
	vms_catalog_derive(name, &id, parts, sizeof(parts));
	return vms_metrics_map(&id, key, scale, hz, VMS_NAMES_CURRENT, m);
}

static void test_map(void **state)
{
	(void)state;
	struct vms_mcol m[VMS_MMAP_MAX];
	/* a device name with dots (a VLAN), escapes in a label value */
	assert_int_equal(map_name("net.eth0.100.rx_bytes", "", 0, HZ, m), 1);
	assert_string_equal(vms_mfams[m[0].fam].name, "node_network_receive_bytes");
	assert_string_equal(m[0].labels, "device=\"eth0.100\"");
	free(m[0].labels);
	assert_int_equal(map_name("disk.a\"b\\c.rd_ios", "", 0, HZ, m), 1);
	assert_string_equal(m[0].labels, "device=\"a\\\"b\\\\c\"");
	free(m[0].labels);
	/* scale and unit: a load average (scale 2), ticks at another USER_HZ */
	assert_int_equal(map_name("load.1m", "", 2, HZ, m), 1);
	uint64_t v = 238, meta[VMS_MMETA_N];
	for (unsigned k = 0; k < VMS_MMETA_N; k++)
		meta[k] = VMS_NONE;
	m[0].col = 0;
	assert_true(vms_mcol_value(&m[0], &v, meta) == 2.38);
	free(m[0].labels);
	assert_int_equal(map_name("cpu.3.user", "", 0, 1024, m), 1);
	m[0].col = 0;
	v = 2048;
	assert_true(vms_mcol_value(&m[0], &v, meta) == 2.0);
	free(m[0].labels);
	/* slow_t gives a time, an age and the timed-out flag (over 180 s) */
	assert_int_equal(map_name("vm.x.slow_t", "u", 0, HZ, m), 3);
	assert_true(m[0].hold && m[1].hold && m[1].age && !m[0].age && m[2].timedout && m[2].hold);
	assert_string_equal(vms_mfams[m[2].fam].name, "libvirt_domain_timed_out");
	meta[VMS_MMETA_TIME] = 1000000000000ull;
	v = meta[VMS_MMETA_TIME] - 180000000000ull;
	m[2].col = 0;
	assert_true(vms_mcol_value(&m[2], &v, meta) == 0);
	v--;
	assert_true(vms_mcol_value(&m[2], &v, meta) == 1);
	v = VMS_NONE;
	assert_true(isnan(vms_mcol_value(&m[2], &v, meta)));
	meta[VMS_MMETA_TIME] = VMS_NONE;
	for (int j = 0; j < 3; j++)
		free(m[j].labels);
	/* the state: one series per state (the maintained libvirt exporter's
	 * state_desc), only the current one present; legacy: one series */
	assert_int_equal(map_name("vm.x.state", "u", 0, HZ, m), 8);
	v = 3;
	for (unsigned j = 0; j < 8; j++) {
		m[j].col = 0;
		assert_true(m[j].match);
		assert_string_equal(vms_mcol_name(&(struct vms_metrics){.names = 0}, &m[j]), "libvirt_domain_info_state");
		if (j == 3) {
			assert_true(vms_mcol_value(&m[j], &v, meta) == 3);
			assert_string_equal(m[j].labels,
					    "domain=\"x\",uuid=\"u\",state_desc=\"the domain is paused by user\"");
		} else {
			assert_true(isnan(vms_mcol_value(&m[j], &v, meta)));
		}
		free(m[j].labels);
	}
	{
		char parts[64];
		struct vms_colid id;
		vms_catalog_derive("vm.x.state", &id, parts, sizeof(parts));
		assert_int_equal(vms_metrics_map(&id, "u", 0, HZ, VMS_NAMES_LEGACY, m), 1);
		assert_false(m[0].match);
		assert_string_equal(vms_mcol_name(&(struct vms_metrics){.names = VMS_NAMES_LEGACY}, &m[0]),
				    "libvirt_domain_state_code");
		free(m[0].labels);
	}
	/* vmstat: node_exporter's node_vmstat_KEY, untyped */
	assert_int_equal(map_name("vmstat.pgmajfault", "", 0, HZ, m), 1);
	assert_string_equal(m[0].name, "node_vmstat_pgmajfault");
	assert_int_equal(vms_mfams[m[0].fam].type, VMS_MT_UNTYPED);
	free(m[0].labels);
	free(m[0].name);
	/* softirqs per vector: node_exporter's node_softirqs_total{vector} (its
	 * lower-case names), per CPU node_softirqs_functions_total{cpu,type} */
	assert_int_equal(map_name("softirq.all.IRQ_POLL", "", 0, HZ, m), 1);
	assert_string_equal(vms_mfams[m[0].fam].name, "node_softirqs");
	assert_string_equal(m[0].labels, "vector=\"block_iopoll\"");
	free(m[0].labels);
	assert_int_equal(map_name("softirq.3.NET_RX", "", 0, HZ, m), 1);
	assert_string_equal(vms_mfams[m[0].fam].name, "node_softirqs_functions");
	assert_string_equal(m[0].labels, "cpu=\"3\",type=\"NET_RX\"");
	free(m[0].labels);
	assert_int_equal(map_name("intr.all.sum", "", 0, HZ, m), 1);
	assert_string_equal(vms_mfams[m[0].fam].name, "vmsampler_interrupts_all");
	free(m[0].labels);
	assert_int_equal(map_name("intr.x.LOC", "", 0, HZ, m), 0);
	/* each CPU's run queue delay from the interference program: its own
	 * family (node_schedstat_waiting_seconds_total is the kernel's file) */
	assert_int_equal(map_name("rq.1.delay", "", 0, HZ, m), 1);
	assert_string_equal(vms_mfams[m[0].fam].name, "vmsampler_cpu_run_queue_waiting_seconds");
	assert_int_equal(vms_mfams[m[0].fam].type, VMS_MT_COUNTER);
	assert_string_equal(m[0].labels, "cpu=\"1\"");
	free(m[0].labels);
	assert_int_equal(map_name("rq.x.delay", "", 0, HZ, m), 0);
	assert_int_equal(map_name("sched.1.delay", "", 0, HZ, m), 1);
	assert_string_equal(vms_mfams[m[0].fam].name, "node_schedstat_waiting_seconds");
	free(m[0].labels);
	/* interference: the wait, whom it was behind, which other VM */
	assert_int_equal(map_name("vm.x.intf.kernel", "u", 0, HZ, m), 1);
	assert_string_equal(vms_mfams[m[0].fam].name, "vmsampler_domain_interference_seconds");
	assert_string_equal(m[0].labels, "domain=\"x\",uuid=\"u\",behind=\"kernel\"");
	free(m[0].labels);
	assert_int_equal(map_name("vm.x.intf.by.web-2", "u", 0, HZ, m), 1);
	assert_string_equal(vms_mfams[m[0].fam].name, "vmsampler_domain_interference_by_vm_seconds");
	assert_string_equal(m[0].labels, "domain=\"x\",uuid=\"u\",other=\"web-2\"");
	free(m[0].labels);
	/* which host cgroup (the field: its path), the rest, the interrupt
	 * estimate, and the estimate without BPF */
	assert_int_equal(map_name("vm.x.intf.host.system.slice/backup.service", "u", 0, HZ, m), 1);
	assert_string_equal(vms_mfams[m[0].fam].name, "vmsampler_domain_interference_by_cgroup_seconds");
	assert_string_equal(m[0].labels, "domain=\"x\",uuid=\"u\",cgroup=\"system.slice/backup.service\"");
	assert_true(m[0].div == 1e9 && m[0].mul == 1);
	free(m[0].labels);
	assert_int_equal(map_name("vm.x.intf.host_other", "u", 0, HZ, m), 1);
	assert_string_equal(vms_mfams[m[0].fam].name, "vmsampler_domain_interference_by_other_cgroups_seconds");
	assert_string_equal(m[0].labels, "domain=\"x\",uuid=\"u\"");
	free(m[0].labels);
	assert_int_equal(map_name("vm.x.intf.irq_est", "u", 0, HZ, m), 1);
	assert_string_equal(vms_mfams[m[0].fam].name, "vmsampler_domain_interference_irq_estimate_seconds");
	free(m[0].labels);
	assert_int_equal(map_name("vm.x.intfest.wait", "u", 0, HZ, m), 1);
	assert_string_equal(vms_mfams[m[0].fam].name, "vmsampler_domain_interference_estimate_wait_seconds");
	free(m[0].labels);
	assert_int_equal(map_name("vm.x.intfest.irq", "u", 0, HZ, m), 1);
	assert_string_equal(vms_mfams[m[0].fam].name, "vmsampler_domain_interference_estimate_seconds");
	assert_string_equal(m[0].labels, "domain=\"x\",uuid=\"u\",behind=\"irq\"");
	free(m[0].labels);
	assert_int_equal(map_name("vm.x.intfest.by.web-2", "u", 0, HZ, m), 1);
	assert_string_equal(vms_mfams[m[0].fam].name, "vmsampler_domain_interference_estimate_by_vm_seconds");
	assert_string_equal(m[0].labels, "domain=\"x\",uuid=\"u\",other=\"web-2\"");
	free(m[0].labels);
	/* a vCPU's placement, read on the detail ticks: held */
	assert_int_equal(map_name("vm.x.vcpu2.pcpu", "u", 0, HZ, m), 1);
	assert_string_equal(vms_mfams[m[0].fam].name, "vmsampler_domain_vcpu_cpu");
	assert_string_equal(m[0].labels, "domain=\"x\",uuid=\"u\",vcpu=\"2\"");
	assert_true(m[0].hold);
	free(m[0].labels);
	assert_int_equal(map_name("vm.x.vcpu2.delay", "u", 0, HZ, m), 1);
	assert_false(m[0].hold);
	free(m[0].labels);
	/* the cgroup: throttling each tick, memory events held, with a label */
	assert_int_equal(map_name("vm.x.cg.throttled", "u", 0, HZ, m), 1);
	assert_string_equal(vms_mfams[m[0].fam].name, "vmsampler_domain_cgroup_cpu_throttled_seconds");
	assert_false(m[0].hold);
	free(m[0].labels);
	assert_int_equal(map_name("vm.x.cg.ev_oom_kill", "u", 0, HZ, m), 1);
	assert_true(m[0].hold);
	assert_string_equal(m[0].labels, "domain=\"x\",uuid=\"u\",event=\"oom_kill\"");
	free(m[0].labels);
	/* the dirty rate in bytes/s, a migration's times in seconds */
	assert_int_equal(map_name("vm.x.dirtyrate.megabytes_per_second", "u", 0, HZ, m), 1);
	v = 3;
	m[0].col = 0;
	assert_true(vms_mcol_value(&m[0], &v, meta) == 3.0 * 1048576);
	free(m[0].labels);
	assert_int_equal(map_name("vm.x.migration.time_elapsed", "u", 0, HZ, m), 1);
	assert_string_equal(vms_mfams[m[0].fam].name, "libvirt_domain_job_info_time_elapsed_seconds");
	v = 1500;
	m[0].col = 0;
	assert_true(vms_mcol_value(&m[0], &v, meta) == 1.5);
	free(m[0].labels);
	/* a VM's perf counters are read every sources.perf.vm_interval: held
	 * between; the host's are read each tick */
	assert_int_equal(map_name("vm.x.perf.context-switches", "u", 0, HZ, m), 1);
	assert_true(m[0].hold);
	free(m[0].labels);
	assert_int_equal(map_name("vm.x.perf.time_enabled", "u", 0, HZ, m), 1);
	assert_true(m[0].hold);
	free(m[0].labels);
	assert_int_equal(map_name("perf.all.context-switches", "", 0, HZ, m), 1);
	assert_false(m[0].hold);
	free(m[0].labels);
	/* a VM's mem.rss is read every sources.libvirt.detail_interval: held
	 * between, under the libvirt exporter's name; mem.cgroup each tick */
	assert_int_equal(map_name("vm.x.mem.rss", "u", 0, HZ, m), 1);
	assert_string_equal(vms_mfams[m[0].fam].name, "libvirt_domain_memory_stats_rss_bytes");
	assert_true(m[0].hold && !m[0].age);
	free(m[0].labels);
	assert_int_equal(map_name("vm.x.mem.cgroup", "u", 0, HZ, m), 1);
	assert_false(m[0].hold);
	free(m[0].labels);
	/* not ours: left out (counted by the caller) */
	assert_int_equal(map_name("frobnicator.x", "", 0, HZ, m), 0);
	assert_int_equal(map_name("cpu.x.user", "", 0, HZ, m), 0);
	assert_int_equal(map_name("disk.sda.unknown_field", "", 0, HZ, m), 0);
	assert_int_equal(map_name("vm.x.vcpuA.time", "", 0, HZ, m), 0);
	assert_int_equal(map_name("net.rx_bytes", "", 0, HZ, m), 0);
}

/* Every family is in the man page's EXPORT section with its type. */
/* Over the run in path, the by-VM series (prefix by) and the buckets
 * (prefix bk) of export --interference-top 1: the series shown change,
 * and every domain's bucket never goes down. */
static void bucket_run(const char *path, const char *bk, const char *by)
{
	struct vms_reader *rd;
	assert_int_equal(vms_reader_open(&rd, path, 0), 0);
	struct vms_mstate st;
	vms_mstate_init(&st, HZ);
	st.opts.intf_top_set = true;
	st.opts.intf_top = 1;
	char dom[8][64] = {{0}}, shown[8][64] = {{0}};
	double last[8] = {0};
	unsigned ndom = 0, changes = 0, buckets = 0;
	size_t nbk = strlen(bk), nby = strlen(by);
	while (vms_reader_next(rd) > 0) {
		assert_int_equal(vms_mstate_take(&st, rd), 0);
		struct vms_mbuf o = {0};
		assert_int_equal(vms_metrics_expose(&st.m, st.cur, st.meta, VMS_EXPO_PROM, false, &o), 0);
		char *save = NULL;
		for (char *ln = strtok_r(o.p, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
			bool isb = strncmp(ln, bk, nbk) == 0, isv = strncmp(ln, by, nby) == 0;
			if (!isb && !isv)
				continue;
			char *d = ln + (isb ? nbk : nby), *q = strchr(d, '"');
			assert_non_null(q);
			unsigned k;
			for (k = 0; k < ndom && (strlen(dom[k]) != (size_t)(q - d) || strncmp(dom[k], d, (size_t)(q - d)) != 0);
			     k++)
				;
			if (k == ndom) {
				assert_true(ndom < 8);
				snprintf(dom[ndom++], sizeof(dom[0]), "%.*s", (int)(q - d), d);
			}
			if (isb) {
				double v = strtod(strstr(ln, "} ") + 2, NULL);
				assert_true(v >= last[k]);
				last[k] = v;
				buckets++;
			} else {
				char *x = strstr(ln, "other=\"");
				assert_non_null(x);
				x += 7;
				char now[64];
				snprintf(now, sizeof(now), "%.*s", (int)(strchr(x, '"') - x), x);
				changes += shown[k][0] && strcmp(shown[k], now) != 0;
				snprintf(shown[k], sizeof(shown[0]), "%s", now);
			}
		}
		vms_mbuf_free(&o);
	}
	assert_int_equal(ndom, 8);
	assert_true(buckets >= 8 * 299);
	assert_true(changes > 0); /* the ranking was made again */
	vms_mstate_free(&st);
	vms_reader_close(rd);
}

/* The interference buckets of export over a run whose rankings change
 * (report_gen --interference: each VM's culprits start even, ordered by
 * name, and the largest passes the others), the program's and (with
 * --intf-full) the estimate's, both in one schema: their rankings are
 * made apart. */
static void test_intf_bucket_monotonic(void **state)
{
	(void)state;
	const char *b = getenv("VMS_BUILD");
	char gen[1024], cmd[3072], path[1100];
	snprintf(gen, sizeof(gen), "%s/report_gen", b ? b : "build");
	if (access(gen, X_OK) != 0)
		vms_skip(NULL, "report_gen is not built");
	char *dir = tmpdir_make();
	snprintf(path, sizeof(path), "%s/intf.vms", dir);
	snprintf(cmd, sizeof(cmd), "'%s' -n 300 -m 8 -i 1000 --interference 7 --intf-full --no-events '%s' >/dev/null",
		 gen, path);
	assert_int_equal(system(cmd), 0);
	bucket_run(path, "vmsampler_domain_interference_by_other_vms_seconds_total{domain=\"",
		   "vmsampler_domain_interference_by_vm_seconds_total{domain=\"");
	bucket_run(path, "vmsampler_domain_interference_estimate_by_other_vms_seconds_total{domain=\"",
		   "vmsampler_domain_interference_estimate_by_vm_seconds_total{domain=\"");
	tmpdir_free(dir);
}

static void test_manpage_lists_every_family(void **state)
{
	(void)state;
	size_t len;
	char *page = read_whole(src_path("man/vmsampler.1"), &len);
	assert_non_null(page);
	char *sec = strstr(page, "\n.SH EXPORT\n"), *end = sec ? strstr(sec + 1, "\n.SH ") : NULL;
	assert_non_null(sec);
	assert_non_null(end);
	*end = '\0';
	for (unsigned i = 0; i < vms_nmfams; i++) {
		const struct vms_mfam *f = &vms_mfams[i];
		char want[256], name[200];
		/* troff: '-' is written \- (none of our names has one) */
		const char *t = f->type == VMS_MT_COUNTER ? "counter" : f->type == VMS_MT_GAUGE ? "gauge" : "untyped";
		snprintf(name, sizeof(name), "%s%s", f->name,
			 f->type == VMS_MT_COUNTER ? "_total" : f->type == VMS_MT_UNTYPED ? "_KEY" : "");
		snprintf(want, sizeof(want), "\n.B %s\n%s", name, t);
		if (!strstr(sec, want))
			fail_msg("vmsampler.1 EXPORT does not list %s as a %s", name, t);
		assert_true(f->help[0] != '\0');
	}
	free(page);
}

VMS_TEST_MAIN(NULL, NULL, test_values_against_dump, test_held_across_schemas, test_openmetrics, test_no_timestamps, test_negotiate, test_map,
	      test_intf_bucket_monotonic, test_manpage_lists_every_family)
