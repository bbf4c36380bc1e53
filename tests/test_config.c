/* SPDX-License-Identifier: MIT */
/* test_config.c - the key table, the YAML loader and writer, precedence. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "cli.h"
#include "config.h"
#include "log.h"
#include "runbin.h"
#include "vms_sched.h"
#include "testutil.h"
#include "vms_build.h"

#define MS VMS_NSEC_PER_MSEC
#define SEC VMS_NSEC_PER_SEC

static int load(struct vms_config *c, const char *yaml, char *err, size_t errlen)
{
	return vms_config_load_buffer(c, "t.yaml", yaml, strlen(yaml), err, errlen);
}

static void assert_globs(const struct vms_globs *g, unsigned n, const char *const *pat)
{
	assert_int_equal(g->n, n);
	for (unsigned i = 0; i < n; i++)
		assert_string_equal(g->pat[i], pat[i]);
}

static void assert_events(const struct vms_perf_events *e, unsigned n, const char *const *names,
			  const bool *required)
{
	assert_int_equal(e->n, n);
	for (unsigned i = 0; i < n; i++) {
		assert_string_equal(e->v[i].name, names[i]);
		assert_int_equal(e->v[i].required, required[i]);
	}
}

static void test_defaults(void **state)
{
	(void)state;
	struct vms_config c;
	assert_int_equal(vms_config_defaults(&c), 0);
	assert_int_equal(c.interval_ns, SEC);
	assert_int_equal(c.count, 0);
	assert_int_equal(c.align_ns, 0);
	assert_string_equal(c.output, "-");
	assert_int_equal(c.format, VMS_FORMAT_AUTO);
	assert_int_equal(c.csv_layout, VMS_CSV_WIDE);
	assert_string_equal(c.proc_root, "/proc");
	assert_int_equal(c.ring_slots, 64);
	assert_int_equal(c.log_level, VMS_LOG_INFO);
	const struct vms_source_conf *s[] = {&c.procstat, &c.loadavg, &c.diskstats, &c.netdev,
					     &c.meminfo, &c.vmstat, &c.psi};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(s); i++) {
		assert_true(s[i]->enabled);
		assert_int_equal(s[i]->every, 1);
	}
	assert_true(c.procstat.per_cpu);
	assert_false(c.schedstat.enabled); /* opt-in */
	assert_int_equal(c.schedstat.every, 1);
	assert_false(c.diskstats.partitions);
	assert_globs(&c.diskstats.include, 0, NULL);
	assert_globs(&c.diskstats.exclude, 2, (const char *[]){"ram*", "loop*"});
	assert_globs(&c.netdev.include, 0, NULL);
	assert_globs(&c.netdev.exclude, 0, NULL);
	/* vmstat: the default set (vmsampler.yaml(5)) */
	assert_globs(&c.vmstat.include, VMS_VMSTAT_NDEFAULT, (const char *const *)vms_vmstat_default);
	assert_string_equal(c.vmstat.include.pat[0], "pgpgin");
	assert_string_equal(c.vmstat.include.pat[7], "pgscan_kswapd*");
	assert_string_equal(c.vmstat.include.pat[21], "oom_kill");
	assert_globs(&c.vmstat.exclude, 0, NULL);
	assert_true(c.perf.enabled);
	assert_int_equal(c.perf.every, 1);
	assert_true(c.perf.per_cpu);
	assert_events(&c.perf.host, 3, (const char *[]){"context-switches", "cpu-migrations", "page-faults"},
		      (const bool[]){false, false, false});
	assert_events(&c.perf.vm, 3, (const char *[]){"context-switches", "cpu-migrations", "kvm:kvm_exit"},
		      (const bool[]){false, false, false});
	vms_config_free(&c);
	vms_config_free(&c); /* idempotent */
}

/* Every key set to a non-default value, in block and flow styles. */
static const char full_yaml[] =
	"# every key\n"
	"interval: 250ms\n"
	"count: 600\n"
	"align: 1m\n"
	"output: run.vms\n"
	"format: bin\n"
	"csv_layout: long\n"
	"proc_root: '/host/proc'\n"
	"ring_slots: 1024\n"
	"log_level: debug\n"
	"rotate: 100MiB\n"
	"keep: 7d\n"
	"compress: none\n"
	"sources:\n"
	"  procstat: {enabled: false, every: 2, per_cpu: false}\n"
	"  loadavg: {enabled: true, every: 3}\n"
	"  diskstats:\n"
	"    enabled: TRUE\n"
	"    every: 4\n"
	"    partitions: True\n"
	"    include: [\"sd*\", vd*]\n"
	"    exclude: []\n"
	"  netdev:\n"
	"    every: 5\n"
	"    include:\n"
	"      - eth*\n"
	"      - \"vnet*\"\n"
	"    exclude: [lo]\n"
#if HAVE_PERF
	"  perf:\n"
	"    enabled: false\n"
	"    every: 6\n"
	"    per_cpu: false\n"
	"    host: [cs, {event: task-clock}, {required: true, event: \"sched:sched_switch\"}]\n"
	"    vm:\n"
	"      - event: cycles\n"
	"        required: false\n"
	"      - kvm:kvm_exit\n"
#endif
	;

static void assert_full(const struct vms_config *c)
{
	assert_int_equal(c->interval_ns, 250 * MS);
	assert_int_equal(c->count, 600);
	assert_int_equal(c->align_ns, 60 * SEC);
	assert_string_equal(c->output, "run.vms");
	assert_int_equal(c->format, VMS_FORMAT_BIN);
	assert_int_equal(c->csv_layout, VMS_CSV_LONG);
	assert_string_equal(c->proc_root, "/host/proc");
	assert_int_equal(c->ring_slots, 1024);
	assert_int_equal(c->log_level, VMS_LOG_DEBUG);
	assert_int_equal(c->rotate.bytes, 100ull << 20);
	assert_int_equal(c->rotate.ns, 0);
	assert_int_equal(c->keep.ns, 7ull * 86400 * SEC);
	assert_int_equal(c->keep.bytes, 0);
	assert_int_equal(c->compress, VMS_COMPRESS_NONE);
	assert_false(c->procstat.enabled);
	assert_int_equal(c->procstat.every, 2);
	assert_false(c->procstat.per_cpu);
	assert_true(c->loadavg.enabled);
	assert_int_equal(c->loadavg.every, 3);
	assert_true(c->diskstats.enabled);
	assert_int_equal(c->diskstats.every, 4);
	assert_true(c->diskstats.partitions);
	assert_globs(&c->diskstats.include, 2, (const char *[]){"sd*", "vd*"});
	assert_globs(&c->diskstats.exclude, 0, NULL);
	assert_true(c->netdev.enabled);
	assert_int_equal(c->netdev.every, 5);
	assert_globs(&c->netdev.include, 2, (const char *[]){"eth*", "vnet*"});
	assert_globs(&c->netdev.exclude, 1, (const char *[]){"lo"});
#if HAVE_PERF
	assert_false(c->perf.enabled);
	assert_int_equal(c->perf.every, 6);
	assert_false(c->perf.per_cpu);
	assert_events(&c->perf.host, 3, (const char *[]){"cs", "task-clock", "sched:sched_switch"},
		      (const bool[]){false, false, true});
	assert_events(&c->perf.vm, 2, (const char *[]){"cycles", "kvm:kvm_exit"}, (const bool[]){false, false});
#endif
}

static void test_load_full(void **state)
{
	(void)state;
	struct vms_config c;
	char err[256] = "unchanged";
	vms_config_defaults(&c);
	assert_int_equal(load(&c, full_yaml, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_full(&c);
	vms_config_free(&c);
}

/* --print-config's writer: what it writes loads back into an equal config. */
static void roundtrip(const struct vms_config *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(vms_config_write(c, f), 0);
	fclose(f);
	struct vms_config d;
	char err[256];
	/* load over different values: every key must be written */
	vms_config_defaults(&d);
	assert_int_equal(load(&d, full_yaml, err, sizeof(err)), 0);
	int r = vms_config_load_buffer(&d, "written", buf, len, err, sizeof(err));
	if (r != 0)
		fail_msg("%s\n--- written:\n%s", err, buf);
	assert_true(vms_config_equal(c, &d));
	vms_config_free(&d);
	free(buf);
}

static void test_write_roundtrip(void **state)
{
	(void)state;
	struct vms_config c;
	char err[256];

	vms_config_defaults(&c);
	roundtrip(&c);
	assert_int_equal(load(&c, full_yaml, err, sizeof(err)), 0);
	roundtrip(&c);
	/* strings YAML would misread unquoted, and non-ASCII */
	assert_int_equal(vms_config_set(&c, "output", "- # not a comment: \"q\" \\ 'x'", err, sizeof(err)), 0);
	roundtrip(&c);
	assert_int_equal(load(&c, "proc_root: \"tab\\there \\u00e9\\u2028\\U0001F600 \\x7f\\x85\"\n", err,
			      sizeof(err)), 0);
	assert_string_equal(c.proc_root, "tab\there \xc3\xa9\xe2\x80\xa8\xf0\x9f\x98\x80 \x7f\xc2\x85");
	roundtrip(&c);
	assert_int_equal(vms_config_set(&c, "interval", "1.5s", err, sizeof(err)), 0);
	assert_int_equal(vms_config_set(&c, "align", "1500001us", err, sizeof(err)), 0);
	roundtrip(&c);
	/* rotate and keep: each unit written back as the largest that fits */
	static const char *const limits[] = {"1s", "90s", "1m", "1h", "25h", "1d", "3650d", "4K", "1536K",
					     "1M", "3G", "1T", "1P", "0"};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(limits); i++) {
		char buf[32];
		assert_int_equal(vms_config_set(&c, "rotate", limits[i], err, sizeof(err)), 0);
		assert_int_equal(vms_config_set(&c, "keep", limits[i], err, sizeof(err)), 0);
		vms_format_limit(buf, sizeof(buf), &c.rotate);
		assert_string_equal(buf, limits[i]);
		roundtrip(&c);
	}
	/* the same values by other names */
	assert_int_equal(vms_config_set(&c, "rotate", "60min", err, sizeof(err)), 0);
	assert_int_equal(c.rotate.ns, 3600 * SEC);
	assert_int_equal(vms_config_set(&c, "rotate", "2048KiB", err, sizeof(err)), 0);
	assert_int_equal(c.rotate.bytes, 2u << 20);
	assert_int_equal(c.rotate.ns, 0);
	assert_int_equal(vms_config_set(&c, "keep", "0d", err, sizeof(err)), 0);
	assert_int_equal(c.keep.ns, 0);
	assert_int_equal(c.keep.bytes, 0);
	assert_int_equal(vms_config_set(&c, "compress", "zstd", err, sizeof(err)), 0);
	assert_int_equal(c.compress, VMS_COMPRESS_ZSTD);
	roundtrip(&c);
	vms_config_free(&c);
}

static void test_empty_documents(void **state)
{
	(void)state;
	static const char *const empty[] = {"", "# only a comment\n", "---\n", "---\n...\n", "~\n",
					    "{}\n", "sources:\n", "sources: {}\n",
					    "sources:\n  netdev:\n  loadavg: ~\n"};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(empty); i++) {
		struct vms_config c, d;
		char err[256];
		vms_config_defaults(&c);
		vms_config_defaults(&d);
		assert_int_equal(load(&c, empty[i], err, sizeof(err)), 0);
		assert_true(vms_config_equal(&c, &d));
		vms_config_free(&c);
		vms_config_free(&d);
	}
}

/* Lists replace what was there, they are not appended to it. */
static void test_lists_replace(void **state)
{
	(void)state;
	struct vms_config c;
	char err[256];
	vms_config_defaults(&c);
	assert_int_equal(load(&c, "sources: {diskstats: {exclude: []}}\n", err, sizeof(err)), 0);
	assert_globs(&c.diskstats.exclude, 0, NULL);
	assert_int_equal(load(&c, "sources: {diskstats: {exclude: [\"dm-*\"]}}\n", err, sizeof(err)), 0);
	assert_globs(&c.diskstats.exclude, 1, (const char *[]){"dm-*"});
	/* a second file over the first replaces again */
	assert_int_equal(load(&c, "sources: {diskstats: {exclude: [a, b]}}\n", err, sizeof(err)), 0);
	assert_globs(&c.diskstats.exclude, 2, (const char *[]){"a", "b"});
	/* keys not given keep their values */
	assert_int_equal(load(&c, "sources: {diskstats: {every: 2}}\n", err, sizeof(err)), 0);
	assert_globs(&c.diskstats.exclude, 2, (const char *[]){"a", "b"});
	assert_int_equal(c.diskstats.every, 2);
	vms_config_free(&c);
}

struct err_case {
	const char *yaml;
	const char *msg;
};

static const struct err_case err_cases[] = {
	/* YAML syntax */
	{"interval: 1s\n\tcount: 1\n",
	 "t.yaml:2:1: found a tab character that violates indentation (while scanning a plain scalar at line 1)"},
	{"output: \"out.csv\n",
	 "t.yaml:2:1: found unexpected end of stream (while scanning a quoted scalar at line 1)"},
	{"count: 1\x01\n", "t.yaml:1:9: control characters are not allowed (0x1)"},
	{"output: \xc3\x28\n", "t.yaml:1:10: invalid trailing UTF-8 octet (0x28)"},
	/* structure */
	{"- interval\n", "t.yaml:1:1: expected a mapping of keys (like 'interval: 1s'), not a list"},
	{"interval\n", "t.yaml:1:1: expected a mapping of keys (like 'interval: 1s'), not a scalar"},
	{"count: 1\n---\ncount: 2\n", "t.yaml:2:1: only one YAML document is allowed"},
	{"? [a]\n: 1\n", "t.yaml:1:3: expected a key, not a list"},
	{"interval: &i 2s\nalign: *i\n", "t.yaml:2:8: aliases (*name) are not supported"},
	{"output: !!str out.csv\n", "t.yaml:1:9: tags (tag:yaml.org,2002:str) are not supported"},
	/* unknown keys */
	{"interval: 1s\nintervall: 2s\n", "t.yaml:2:1: unknown key 'intervall' (did you mean 'interval'?)"},
	{"colour: red\n", "t.yaml:1:1: unknown key 'colour'"},
	{"\"count\\0x\": 1\n", "t.yaml:1:1: unknown key 'count?x' (did you mean 'count'?)"},
	{"sources: {\"netdev\\0\": {}}\n", "t.yaml:1:11: unknown source 'netdev?' (did you mean 'netdev'?)"},
	/* long keys are cut */
	{"x1234567890123456789012345678901234567890123456789012345678901234567890: 1\n",
	 "t.yaml:1:1: unknown key 'x123456789012345678901234567890123456789012345678901234567890123'"},
	{"sources:\n  netdev:\n    per_cpu: true\n", "t.yaml:3:5: unknown key 'per_cpu' in sources.netdev"},
	{"sources:\n  loadavg: {evrey: 2}\n",
	 "t.yaml:2:13: unknown key 'evrey' in sources.loadavg (did you mean 'every'?)"},
	/* duplicate keys */
	{"count: 1\ninterval: 2s\ncount: 2\n", "t.yaml:3:1: duplicate key 'count' (first at line 1)"},
	{"sources:\n  procstat:\n    every: 2\n    every: 3\n",
	 "t.yaml:4:5: duplicate key 'every' in sources.procstat (first at line 3)"},
	{"sources:\n  loadavg: {}\n  loadavg: {every: 2}\n",
	 "t.yaml:3:3: duplicate key 'loadavg' in sources (first at line 2)"},
	{"sources: {}\nsources: {}\n", "t.yaml:2:1: duplicate key 'sources' (first at line 1)"},
	/* sources that do not exist */
	{"sources:\n  foo: {}\n",
	 "t.yaml:2:3: unknown source 'foo' (this build has: procstat, loadavg, diskstats, netdev, meminfo, vmstat, psi, "
	 "interrupts, softirqs, schedstat"
#if HAVE_LIBVIRT
	 ", libvirt"
#endif
#if HAVE_PERF
	 ", perf"
#endif
#if HAVE_BPF
	 ", interference"
#endif
	 ", intfest)"},
	{"sources:\n  netdevs: {}\n", "t.yaml:2:3: unknown source 'netdevs' (did you mean 'netdev'?)"},
#if !HAVE_LIBVIRT
	{"sources:\n  libvirt: {enabled: true}\n",
	 "t.yaml:2:3: sources.libvirt: vmsampler was compiled without libvirt support"},
#endif
#if !HAVE_PERF
	{"sources: {perf: {}}\n", "t.yaml:1:11: sources.perf: vmsampler was compiled without perf support"},
#else
	/* perf event lists: a name that cannot be an event is an error here;
	 * one that is well-formed but missing on this host is found at run
	 * time (a warning, or fatal when required) */
	{"sources:\n  perf:\n    host: [context-switch]\n",
	 "t.yaml:3:12: sources.perf.host: unknown event 'context-switch' (did you mean 'context-switches'?)"},
	{"sources:\n  perf:\n    host: [bogus]\n",
	 "t.yaml:3:12: sources.perf.host: unknown event 'bogus' (a software or hardware event of perf list, "
	 "or a tracepoint SUBSYSTEM:EVENT)"},
	{"sources:\n  perf:\n    vm: [cs, \"kvm:\"]\n",
	 "t.yaml:3:14: sources.perf.vm: 'kvm:' is not a tracepoint name (SUBSYSTEM:EVENT, each letters, "
	 "digits and '_', such as kvm:kvm_exit)"},
	{"sources: {perf: {vm: [\"../x:y\"]}}\n",
	 "t.yaml:1:23: sources.perf.vm: '../x:y' is not a tracepoint name (SUBSYSTEM:EVENT, each letters, "
	 "digits and '_', such as kvm:kvm_exit)"},
	{"sources: {perf: {vm: [\"kvm:kvm exit\"]}}\n",
	 "t.yaml:1:23: sources.perf.vm: 'kvm:kvm exit' is not a tracepoint name (SUBSYSTEM:EVENT, each "
	 "letters, digits and '_', such as kvm:kvm_exit)"},
	{"sources:\n  perf:\n    host:\n      - context-switches\n      - cs\n",
	 "t.yaml:5:9: sources.perf.host: duplicate event 'cs' (first at line 4)"},
	{"sources: {perf: {host: cycles}}\n",
	 "t.yaml:1:24: sources.perf.host: expected a list of perf events (like [context-switches, "
	 "\"kvm:kvm_exit\"], or [] for none), not a scalar"},
	{"sources: {perf: {host: [[cs]]}}\n",
	 "t.yaml:1:25: sources.perf.host: expected an event name or {event: NAME, required: true}, not a list"},
	{"sources: {perf: {host: [{required: true}]}}\n",
	 "t.yaml:1:25: sources.perf.host: an event needs a name (event: NAME)"},
	{"sources: {perf: {host: [{event: cs, requird: true}]}}\n",
	 "t.yaml:1:37: sources.perf.host: unknown key 'requird' in an event (event, required) "
	 "(did you mean 'required'?)"},
	{"sources: {perf: {host: [{event: cs, required: yes}]}}\n",
	 "t.yaml:1:47: sources.perf.host: required: expected true or false, not 'yes'"},
	{"sources: {perf: {host: [{event: cs, event: cycles}]}}\n",
	 "t.yaml:1:37: sources.perf.host: duplicate key 'event' in an event"},
	{"sources: {perf: {host: [{event: [cs]}]}}\n",
	 "t.yaml:1:33: sources.perf.host: event: expected an event name, not a list"},
	{"sources: {perf: {host: [~]}}\n", "t.yaml:1:25: sources.perf.host: empty event name"},
	{"sources: {perf: {host: [a:b, c:d, e:f, g:h, i:j, k:l, m:n, o:p, q:r, s:t, u:v, w:x, y:z, "
	 "a:c, a:d, a:e, a:f]}}\n",
	 "t.yaml:1:105: sources.perf.host: more than 16 events"},
	{"sources: {perf: {per_cpu: 1}}\n",
	 "t.yaml:1:27: sources.perf.per_cpu: expected true or false, not '1'"},
#endif
	/* wrong types */
	{"interval: [1s]\n", "t.yaml:1:11: interval: expected a duration, not a list"},
	{"count: {a: 1}\n", "t.yaml:1:8: count: expected a number, not a mapping"},
	{"sources:\n  procstat:\n    per_cpu: {a: 1}\n",
	 "t.yaml:3:14: sources.procstat.per_cpu: expected true or false, not a mapping"},
	{"sources:\n  diskstats:\n    exclude: ram*\n",
	 "t.yaml:3:14: sources.diskstats.exclude: expected a list of patterns (like [\"sd*\"], or [] for none), "
	 "not a scalar"},
	{"sources:\n  diskstats:\n    exclude:\n",
	 "t.yaml:3:13: sources.diskstats.exclude: expected a list of patterns (like [\"sd*\"], or [] for none), "
	 "not null"},
	{"sources:\n  diskstats: {include: [{a: 1}]}\n",
	 "t.yaml:2:25: sources.diskstats.include: expected a pattern, not a mapping"},
	{"sources: all\n", "t.yaml:1:10: sources: expected a mapping of source names, not a scalar"},
	{"sources:\n  netdev: [1]\n", "t.yaml:2:11: sources.netdev: expected a mapping of keys, not a list"},
	{"format: [csv]\n", "t.yaml:1:9: format: expected one of auto, csv, bin, not a list"},
	/* bad values */
	{"interval: fast\n", "t.yaml:1:11: interval: 'fast' is not a duration (such as 500ms, 1s, 5m)"},
	{"rotate: 100\n", "t.yaml:1:9: rotate: '100' is neither a duration nor a size (such as 1h, 7d, 100M, 10G; 0: off)"},
	{"rotate: 1.5h\n", "t.yaml:1:9: rotate: '1.5h' is neither a duration nor a size (such as 1h, 7d, 100M, 10G; 0: off)"},
	{"rotate: 1x\n", "t.yaml:1:9: rotate: '1x' is neither a duration nor a size (such as 1h, 7d, 100M, 10G; 0: off)"},
	{"rotate: 10ms\n", "t.yaml:1:9: rotate: '10ms' is neither a duration nor a size (such as 1h, 7d, 100M, 10G; 0: off)"},
	{"rotate: 1K\n", "t.yaml:1:9: rotate: '1K' is out of range (0, or 1s to 3650d, or 4K to 1P)"},
	{"keep: 3651d\n", "t.yaml:1:7: keep: '3651d' is out of range (0, or 1s to 3650d, or 4K to 1P)"},
	{"keep: 99999999999999999999d\n", "t.yaml:1:7: keep: '99999999999999999999d' is out of range (0, or 1s to 3650d, or 4K to 1P)"},
	{"keep: 2P\n", "t.yaml:1:7: keep: '2P' is out of range (0, or 1s to 3650d, or 4K to 1P)"},
	{"keep: \"7d\"\n", "t.yaml:1:7: keep: '7d' is quoted: write it without quotes"},
	{"compress: gzip\n", "t.yaml:1:11: compress: 'gzip' is not one of none, zstd"},
	{"interval: 1 s\n", "t.yaml:1:11: interval: '1 s' is not a duration (such as 500ms, 1s, 5m)"},
	{"interval: -1s\n", "t.yaml:1:11: interval: '-1s' is not a duration (such as 500ms, 1s, 5m)"},
	{"interval: 5ms\n", "t.yaml:1:11: interval: '5ms' is out of range (10ms to 24h)"},
	{"interval: 24h1ms\n", "t.yaml:1:11: interval: '24h1ms' is not a duration (such as 500ms, 1s, 5m)"},
	{"interval: 1441m\n", "t.yaml:1:11: interval: '1441m' is out of range (10ms to 24h)"},
	{"interval: 99999999999999999999s\n",
	 "t.yaml:1:11: interval: '99999999999999999999s' is out of range (10ms to 24h)"},
	{"interval:\n", "t.yaml:1:10: interval: missing value"},
	{"align: 500us\n", "t.yaml:1:8: align: '500us' is out of range (0, or 1ms to 24h)"},
	{"count: \"5\"\n", "t.yaml:1:8: count: '5' is quoted: write the number without quotes"},
	{"count: -1\n", "t.yaml:1:8: count: '-1' is not a non-negative integer"},
	{"count: +1\n", "t.yaml:1:8: count: '+1' is not a non-negative integer"},
	{"count: 0x10\n", "t.yaml:1:8: count: '0x10' is not a non-negative integer"},
	{"count: 18446744073709551616\n",
	 "t.yaml:1:8: count: '18446744073709551616' is out of range (0 to 18446744073709551615)"},
	{"ring_slots: 64k\n", "t.yaml:1:13: ring_slots: '64k' is not a non-negative integer"},
	{"ring_slots: 48\n", "t.yaml:1:13: ring_slots: '48' is not a power of two from 2 to 1048576"},
	{"ring_slots: 1\n", "t.yaml:1:13: ring_slots: '1' is not a power of two from 2 to 1048576"},
	{"ring_slots: 2097152\n", "t.yaml:1:13: ring_slots: '2097152' is not a power of two from 2 to 1048576"},
	{"sources:\n  loadavg: {every: 0}\n", "t.yaml:2:20: sources.loadavg.every: '0' is out of range (1 to 1000000)"},
	{"sources:\n  procstat: {enabled: yes}\n",
	 "t.yaml:2:23: sources.procstat.enabled: expected true or false, not 'yes'"},
	{"sources: {loadavg: {enabled: \"true\"}}\n",
	 "t.yaml:1:30: sources.loadavg.enabled: expected true or false without quotes, not 'true'"},
	{"format: xml\n", "t.yaml:1:9: format: 'xml' is not one of auto, csv, bin"},
	{"format: CSV\n", "t.yaml:1:9: format: 'CSV' is not one of auto, csv, bin"},
	{"csv_layout: tall\n", "t.yaml:1:13: csv_layout: 'tall' is not one of wide, long"},
	{"log_level: verbose\n", "t.yaml:1:12: log_level: 'verbose' is not one of error, warning, info, debug"},
	{"proc_root: \"\"\n", "t.yaml:1:12: proc_root: must not be empty"},
	{"output: ~\n", "t.yaml:1:9: output: missing value"},
	{"output: \"a\\0b\"\n", "t.yaml:1:9: output: the value contains a NUL character"},
	{"sources:\n  netdev: {exclude: [lo, \"\"]}\n", "t.yaml:2:26: sources.netdev.exclude: empty pattern"},
	/* a value too long to quote whole, with a line break: still one line */
	{"interval: \"12345678901234567890123456789012345678901234567890\\nx\"\n",
	 "t.yaml:1:11: interval: '1234567890123456789012345678901234567890...' is not a duration "
	 "(such as 500ms, 1s, 5m)"},
	{"interval: \"1\\ns\"\n", "t.yaml:1:11: interval: '1?s' is not a duration (such as 500ms, 1s, 5m)"},
	/* a syntax error is one, even where the text before it would be a
	 * type error (a list where a duration belongs) */
	{"interval: [1s\n", "t.yaml:2:1: did not find expected ',' or ']' (while parsing a flow sequence at line 1)"},
	{"sources: {netdev: {exclude: [lo\n", "t.yaml:2:1: did not find expected ',' or ']' (while parsing a flow sequence at line 1)"},
	{"interval: 1s\nformat: {a\n", "t.yaml:3:1: did not find expected ',' or '}' (while parsing a flow mapping at line 2)"},
};

static void test_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < VMS_ARRAY_SIZE(err_cases); i++) {
		const struct err_case *e = &err_cases[i];
		struct vms_config c, d;
		char err[512];
		vms_config_defaults(&c);
		vms_config_defaults(&d);
		int r = load(&c, e->yaml, err, sizeof(err));
		if (r != -EINVAL || strcmp(err, e->msg) != 0)
			fail_msg("case %zu: %s\n  got (%d): %s\n  expected:  %s", i, e->yaml, r, err, e->msg);
		/* a failed load changes nothing */
		assert_true(vms_config_equal(&c, &d));
		vms_config_free(&c);
		vms_config_free(&d);
	}
}

/* A failed load after changes: still nothing changed (the loader works
 * on a copy), also for lists it had already replaced. */
static void test_error_atomic(void **state)
{
	(void)state;
	struct vms_config c, d;
	char err[256];
	vms_config_defaults(&c);
	vms_config_defaults(&d);
	const char *y = "interval: 2s\noutput: x.csv\nsources:\n  diskstats: {exclude: []}\n  netdev: {every: 0}\n";
	assert_int_equal(load(&c, y, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.yaml:5:19: sources.netdev.every: '0' is out of range (1 to 1000000)");
	assert_true(vms_config_equal(&c, &d));
	assert_string_equal(c.output, "-");
	assert_int_equal(c.diskstats.exclude.n, 2);
	vms_config_free(&c);
	vms_config_free(&d);
}

static void test_too_large(void **state)
{
	(void)state;
	size_t n = VMS_CONFIG_MAX_SIZE + 1;
	char *big = malloc(n);
	assert_non_null(big);
	memset(big, '#', n);
	struct vms_config c;
	char err[256];
	vms_config_defaults(&c);
	assert_int_equal(vms_config_load_buffer(&c, "big.yaml", big, n, err, sizeof(err)), -EFBIG);
	assert_string_equal(err, "big.yaml: larger than 1048576 bytes");
	/* exactly the limit is fine (all comment) */
	big[0] = '#';
	assert_int_equal(vms_config_load_buffer(&c, "big.yaml", big, n - 1, err, sizeof(err)), 0);
	free(big);
	/* a long value: refused, message bounded */
	char val[5000 + 16];
	memcpy(val, "output: ", 8);
	memset(val + 8, 'a', 5000);
	strcpy(val + 5008, "\n");
	assert_int_equal(load(&c, val, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.yaml:1:9: output: the value is longer than 4095 bytes");
	vms_config_free(&c);
}

static void test_load_file(void **state)
{
	(void)state;
	struct vms_config c;
	char err[512], path[512];
	char *dir = tmpdir_make();
	assert_non_null(dir);
	vms_config_defaults(&c);

	snprintf(path, sizeof(path), "%s/missing.yaml", dir);
	assert_int_equal(vms_config_load_file(&c, path, err, sizeof(err)), -ENOENT);
	char want[600];
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	assert_string_equal(err, want);

	assert_int_equal(vms_config_load_file(&c, dir, err, sizeof(err)), -EISDIR);
	snprintf(want, sizeof(want), "%s: Is a directory", dir);
	assert_string_equal(err, want);

	/* a FIFO without a writer: refused at once (issue 23: it held the
	 * start, and `systemctl reload`'s check, for ever) */
	snprintf(path, sizeof(path), "%s/fifo.yaml", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(vms_config_load_file(&c, path, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s: is a FIFO, not a regular file", path);
	assert_string_equal(err, want);

	snprintf(path, sizeof(path), "%s/bad.yaml", dir);
	write_file(path, "count: 3\ncount: 4\n", 18);
	assert_int_equal(vms_config_load_file(&c, path, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:2:1: duplicate key 'count' (first at line 1)", path);
	assert_string_equal(err, want);

	/* larger than one read buffer */
	snprintf(path, sizeof(path), "%s/good.yaml", dir);
	size_t n = 3 * 4096 + 100;
	char *buf = malloc(n + 32);
	memset(buf, '#', n);
	buf[n - 1] = '\n';
	strcpy(buf + n, "count: 7\n");
	write_file(path, buf, strlen(buf));
	free(buf);
	assert_int_equal(vms_config_load_file(&c, path, err, sizeof(err)), 0);
	assert_int_equal(c.count, 7);

	snprintf(path, sizeof(path), "%s/big.yaml", dir);
	buf = calloc(1, VMS_CONFIG_MAX_SIZE + 2);
	memset(buf, '#', VMS_CONFIG_MAX_SIZE + 1);
	write_file(path, buf, VMS_CONFIG_MAX_SIZE + 1);
	free(buf);
	assert_int_equal(vms_config_load_file(&c, path, err, sizeof(err)), -EFBIG);
	snprintf(want, sizeof(want), "%s: larger than 1048576 bytes", path);
	assert_string_equal(err, want);

	vms_config_free(&c);
	tmpdir_free(dir);
}

/* Every yaml_parser_parse() the loader makes (linked with
 * --wrap=yaml_parser_parse, tests/meson.build). */
int __real_yaml_parser_parse(yaml_parser_t *parser, yaml_event_t *event);
int __wrap_yaml_parser_parse(yaml_parser_t *parser, yaml_event_t *event);
static unsigned long yaml_events;
int __wrap_yaml_parser_parse(yaml_parser_t *parser, yaml_event_t *event)
{
	yaml_events++;
	return __real_yaml_parser_parse(parser, event);
}

/* Deep nesting (issue 23): libyaml's scanner looks at every open flow
 * level at every token, so 100,000 '[' took 49 s before the error.  The
 * loader stops at level VMS_CONFIG_MAX_DEPTH + 1, where it stands, after
 * that many events (counted, not timed), in flow and in block style; the
 * deepest the key table needs (sources, a source, a list of events, an
 * event) still loads. */
static void test_deep_nesting(void **state)
{
	(void)state;
	struct vms_config c;
	char err[256], want[256];
	const size_t n = 100000;
	char *y = malloc(2 * n + 2);
	assert_non_null(y);
	memset(y, '[', n);
	memset(y + n, ']', n);
	strcpy(y + 2 * n, "\n");
	assert_int_equal(vms_config_defaults(&c), 0);
	yaml_events = 0;
	assert_int_equal(vms_config_load_buffer(&c, "deep.yaml", y, 2 * n + 1, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "deep.yaml:1:%d: lists and mappings nested deeper than %d levels",
		 VMS_CONFIG_MAX_DEPTH + 1, VMS_CONFIG_MAX_DEPTH);
	assert_string_equal(err, want);
	/* stream and document start, then one event a level */
	assert_int_equal(yaml_events, 2 + VMS_CONFIG_MAX_DEPTH + 1);

	/* mappings too: {a: {a: ... */
	size_t m = 0;
	for (unsigned i = 0; i < 1000; i++)
		m += (size_t)sprintf(y + m, "{a: ");
	yaml_events = 0;
	assert_int_equal(vms_config_load_buffer(&c, "deep.yaml", y, m, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "deep.yaml:1:%d: lists and mappings nested deeper than %d levels",
		 4 * VMS_CONFIG_MAX_DEPTH + 1, VMS_CONFIG_MAX_DEPTH);
	assert_string_equal(err, want);
	assert_true(yaml_events < 3 * (VMS_CONFIG_MAX_DEPTH + 2));

	/* block style: one level a line */
	m = 0;
	for (unsigned i = 0; i < 100; i++) /* 10 kB */
		m += (size_t)sprintf(y + m, "%*s-\n", 2 * (int)i, "");
	assert_int_equal(vms_config_load_buffer(&c, "deep.yaml", y, m, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "deep.yaml:%d:%d: lists and mappings nested deeper than %d levels",
		 VMS_CONFIG_MAX_DEPTH + 1, 2 * VMS_CONFIG_MAX_DEPTH + 1, VMS_CONFIG_MAX_DEPTH);
	assert_string_equal(err, want);

	/* exactly the limit is no error of depth (the first error is then the
	 * type of the top level) */
	memset(y, '[', VMS_CONFIG_MAX_DEPTH);
	memset(y + VMS_CONFIG_MAX_DEPTH, ']', VMS_CONFIG_MAX_DEPTH);
	assert_int_equal(vms_config_load_buffer(&c, "deep.yaml", y, 2 * VMS_CONFIG_MAX_DEPTH, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "deep.yaml:1:1: expected a mapping of keys (like 'interval: 1s'), not a list");
	free(y);
#if HAVE_PERF
	static const char ok[] = "sources:\n  perf:\n    host: [{event: cycles, required: false}]\n";
	assert_int_equal(vms_config_load_buffer(&c, "ok.yaml", ok, strlen(ok), err, sizeof(err)), 0);
#endif
	vms_config_free(&c);
}

/* The example shipped in doc/ loads, with the values it shows. */
static void test_example_file(void **state)
{
	(void)state;
	struct vms_config c;
	char err[512];
	vms_config_defaults(&c);
	int r = vms_config_load_file(&c, src_path("doc/vmsampler.example.yaml"), err, sizeof(err));
	if (r != 0)
		fail_msg("%s", err);
	assert_int_equal(c.interval_ns, SEC);
	assert_int_equal(c.align_ns, 60 * SEC);
	assert_string_equal(c.output, "/var/lib/vmsampler/host.csv");
	assert_globs(&c.diskstats.include, 3, (const char *[]){"sd*", "vd*", "nvme*"});
	assert_globs(&c.netdev.exclude, 1, (const char *[]){"lo"});
	assert_globs(&c.vmstat.include, VMS_VMSTAT_NDEFAULT, (const char *const *)vms_vmstat_default);
	assert_globs(&c.vmstat.exclude, 1, (const char *[]){"thp_*"});
	vms_config_free(&c);
}

static void test_set(void **state)
{
	(void)state;
	struct vms_config c;
	char err[256];
	vms_config_defaults(&c);
	assert_int_equal(vms_config_set(&c, "sources.netdev.every", "7", err, sizeof(err)), 0);
	assert_int_equal(c.netdev.every, 7);
	assert_int_equal(vms_config_set(&c, "sources.procstat.per_cpu", "false", err, sizeof(err)), 0);
	assert_false(c.procstat.per_cpu);
	/* strings are not YAML here: "null" is a file name */
	assert_int_equal(vms_config_set(&c, "output", "null", err, sizeof(err)), 0);
	assert_string_equal(c.output, "null");
	assert_int_equal(vms_config_set(&c, "output", "", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "must not be empty");
	assert_string_equal(c.output, "null");
	assert_int_equal(vms_config_set(&c, "nope", "1", err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "no key 'nope'");
	assert_int_equal(vms_config_set(&c, "sources.netdev.per_cpu", "1", err, sizeof(err)), -ENOENT);
	assert_int_equal(vms_config_set(&c, "sources.x.every", "1", err, sizeof(err)), -ENOENT);
	assert_int_equal(vms_config_set(&c, "sources.", "1", err, sizeof(err)), -ENOENT);
#if !HAVE_LIBVIRT
	assert_int_equal(vms_config_set(&c, "sources.libvirt.enabled", "true", err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "vmsampler was compiled without libvirt support");
#endif
	assert_int_equal(vms_config_set(&c, "sources.netdev.include", "eth0", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "expected a list of patterns");
#if HAVE_PERF
	assert_int_equal(vms_config_set(&c, "sources.perf.every", "3", err, sizeof(err)), 0);
	assert_int_equal(c.perf.every, 3);
	assert_int_equal(vms_config_set(&c, "sources.perf.host", "cycles", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "expected a list of perf events");
	assert_int_equal(c.perf.host.n, 3);
#else
	assert_int_equal(vms_config_set(&c, "sources.perf.every", "3", err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "vmsampler was compiled without perf support");
#endif
	assert_int_equal(vms_config_set(&c, "sources", "x", err, sizeof(err)), -EINVAL);
	assert_int_equal(vms_config_set(&c, "interval", "10ms", err, sizeof(err)), 0);
	assert_int_equal(c.interval_ns, 10 * MS);
	assert_int_equal(vms_config_set(&c, "interval", "24h", err, sizeof(err)), 0);
	assert_int_equal(c.interval_ns, 24 * 3600 * SEC);
	assert_int_equal(vms_config_set(&c, "interval", "9.999ms", err, sizeof(err)), -ERANGE);
	assert_int_equal(c.interval_ns, 24 * 3600 * SEC);
	vms_config_free(&c);
}

/* defaults < file < command line */
static void test_precedence(void **state)
{
	(void)state;
	static const char file[] = "interval: 5s\ncount: 10\noutput: file.csv\nlog_level: debug\n"
				   "sources: {netdev: {every: 3}}\n";
	char *argv1[] = {"vmsampler", "-i", "2s", "-q", "-c", "x.yaml", NULL};
	char *argv2[] = {"vmsampler", "-c", "x.yaml", "--quiet", "--interval=2s", NULL};
	char **argvs[] = {argv1, argv2};
	for (size_t i = 0; i < 2; i++) {
		struct vms_cli cli;
		struct vms_config c;
		char err[256];
		int argc = 0;
		while (argvs[i][argc])
			argc++;
		assert_int_equal(vms_cli_parse(&cli, argc, argvs[i], err, sizeof(err)), 0);
		assert_string_equal(cli.config_path, "x.yaml");
		vms_config_defaults(&c);
		assert_int_equal(vms_config_load_buffer(&c, cli.config_path, file, strlen(file), err, sizeof(err)),
				 0);
		assert_int_equal(vms_cli_apply(&cli, &c, err, sizeof(err)), 0);
		assert_int_equal(c.interval_ns, 2 * SEC);     /* command line over file */
		assert_int_equal(c.log_level, VMS_LOG_ERR);   /* -q over the file's debug */
		assert_int_equal(c.count, 10);                /* file over default */
		assert_string_equal(c.output, "file.csv");    /* file over default */
		assert_int_equal(c.netdev.every, 3);          /* file over default */
		assert_int_equal(c.ring_slots, 64);           /* default */
		assert_string_equal(c.proc_root, "/proc");    /* default */
		vms_config_free(&c);
	}
}

static void test_format_duration(void **state)
{
	(void)state;
	static const struct {
		uint64_t ns;
		const char *s;
	} cases[] = {
		{0, "0"},
		{1, "1ns"},
		{1000, "1us"},
		{1500 * 1000, "1500us"},
		{10 * MS, "10ms"},
		{SEC, "1s"},
		{90 * SEC, "90s"},
		{60 * SEC, "1m"},
		{3600 * SEC, "1h"},
		{1234567891, "1234567891ns"},
		{1000 * 3600 * SEC, "1000h"},
	};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(cases); i++) {
		char buf[32];
		uint64_t back;
		vms_format_duration(buf, sizeof(buf), cases[i].ns);
		assert_string_equal(buf, cases[i].s);
		assert_int_equal(vms_parse_duration(buf, &back), 0);
		assert_int_equal(back, cases[i].ns);
	}
}

static void test_format_from_output(void **state)
{
	(void)state;
	struct vms_config c;
	char err[128];
	vms_config_defaults(&c);
	assert_int_equal(vms_config_format(&c), VMS_FORMAT_CSV);
	vms_config_set(&c, "output", "run.vms", err, sizeof(err));
	assert_int_equal(vms_config_format(&c), VMS_FORMAT_BIN);
	vms_config_set(&c, "format", "csv", err, sizeof(err));
	assert_int_equal(vms_config_format(&c), VMS_FORMAT_CSV);
	vms_config_set(&c, "format", "auto", err, sizeof(err));
	vms_config_set(&c, "output", "run.vms.csv", err, sizeof(err));
	assert_int_equal(vms_config_format(&c), VMS_FORMAT_CSV);
	vms_config_free(&c);
}

static void test_dup_equal(void **state)
{
	(void)state;
	struct vms_config c, d;
	char err[128];
	vms_config_defaults(&c);
	assert_int_equal(load(&c, full_yaml, err, sizeof(err)), 0);
	assert_int_equal(vms_config_dup(&d, &c), 0);
	assert_true(vms_config_equal(&c, &d));
	assert_ptr_not_equal(c.output, d.output);
	assert_ptr_not_equal(c.netdev.include.pat, d.netdev.include.pat);
	/* each difference is seen */
	vms_config_set(&d, "sources.netdev.every", "6", err, sizeof(err));
	assert_false(vms_config_equal(&c, &d));
	vms_config_set(&d, "sources.netdev.every", "5", err, sizeof(err));
	assert_true(vms_config_equal(&c, &d));
	free(d.netdev.include.pat[1]);
	d.netdev.include.pat[1] = strdup("vnet");
	assert_false(vms_config_equal(&c, &d));
	vms_config_free(&c);
	vms_config_free(&d);
}

/* sources.vmstat.include replaces the default set; meminfo and psi have
 * the common keys. */
static void test_mem_sources(void **state)
{
	(void)state;
	struct vms_config c;
	char err[256];
	static const char y[] = "sources:\n  vmstat: {include: [\"*\"], exclude: [\"nr_*\"]}\n"
				"  meminfo: {every: 2}\n  psi: {enabled: false}\n";
	assert_int_equal(vms_config_defaults(&c), 0);
	assert_int_equal(vms_config_load_buffer(&c, "t.yaml", y, strlen(y), err, sizeof(err)), 0);
	assert_globs(&c.vmstat.include, 1, (const char *[]){"*"});
	assert_globs(&c.vmstat.exclude, 1, (const char *[]){"nr_*"});
	assert_int_equal(c.meminfo.every, 2);
	assert_false(c.psi.enabled);
	assert_true(c.vmstat.enabled);
	vms_config_free(&c);
	assert_int_equal(vms_config_defaults(&c), 0);
	static const char bad[] = "sources:\n  vmstat: {include: pg*}\n";
	assert_int_equal(vms_config_load_buffer(&c, "t.yaml", bad, strlen(bad), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "sources.vmstat.include: expected a list of patterns"));
	vms_config_free(&c);
}

/* the per-VM cadences: cgroup detail files and perf groups every 5 s by
 * default, 0 for every tick; and the ticks they make at an interval */
static void test_cadence(void **state)
{
	(void)state;
	struct vms_config c;
	char err[256];
	assert_int_equal(vms_config_defaults(&c), 0);
#if HAVE_LIBVIRT
	assert_int_equal(c.libvirt.detail_ns, 5 * SEC);
	assert_int_equal(vms_config_set(&c, "sources.libvirt.detail_interval", "0", err, sizeof(err)), 0);
	assert_int_equal(c.libvirt.detail_ns, 0);
	assert_int_equal(vms_config_set(&c, "sources.libvirt.detail_interval", "1ms", err, sizeof(err)), -ERANGE);
	assert_int_equal(vms_config_set(&c, "sources.libvirt.detail_interval", "10s", err, sizeof(err)), 0);
	assert_int_equal(c.libvirt.detail_ns, 10 * SEC);
#endif
#if HAVE_PERF
	assert_int_equal(c.perf.vm_interval_ns, 10 * SEC);
	static const char y[] = "sources:\n  perf: {vm_interval: 0}\n";
	assert_int_equal(vms_config_load_buffer(&c, "t.yaml", y, strlen(y), err, sizeof(err)), 0);
	assert_int_equal(c.perf.vm_interval_ns, 0);
	assert_int_equal(vms_config_set(&c, "sources.perf.vm_interval", "x", err, sizeof(err)), -EINVAL);
#endif
	vms_config_free(&c);
	assert_int_equal(vms_cadence_ticks(0, SEC), 1);
	assert_int_equal(vms_cadence_ticks(5 * SEC, SEC), 5);
	assert_int_equal(vms_cadence_ticks(5 * SEC, 5 * SEC), 1);
	assert_int_equal(vms_cadence_ticks(5 * SEC, 10 * SEC), 1);
	assert_int_equal(vms_cadence_ticks(5 * SEC, 2 * SEC), 3);           /* 2.5 rounds up */
	assert_int_equal(vms_cadence_ticks(5 * SEC, 3 * SEC), 2);           /* 1.67 */
	assert_int_equal(vms_cadence_ticks(5 * SEC, 10 * VMS_NSEC_PER_MSEC), 500);
}

/* dirty-rate sampling: off unless set; 1 s calculations by default */
static void test_dirty_rate(void **state)
{
	(void)state;
#if HAVE_LIBVIRT
	struct vms_config c;
	char err[256];
	assert_int_equal(vms_config_defaults(&c), 0);
	assert_int_equal(c.libvirt.dirty_every_ns, 0);
	assert_int_equal(c.libvirt.dirty_seconds_ns, SEC);
	static const char y[] = "sources:\n  libvirt: {dirty_rate_every: 1m, dirty_rate_seconds: 3s}\n";
	assert_int_equal(vms_config_load_buffer(&c, "t.yaml", y, strlen(y), err, sizeof(err)), 0);
	assert_int_equal(c.libvirt.dirty_every_ns, 60 * SEC);
	assert_int_equal(c.libvirt.dirty_seconds_ns, 3 * SEC);
	assert_int_equal(vms_config_set(&c, "sources.libvirt.dirty_rate_every", "0", err, sizeof(err)), 0);
	assert_int_equal(c.libvirt.dirty_every_ns, 0);
	assert_int_equal(vms_config_set(&c, "sources.libvirt.dirty_rate_every", "1s", err, sizeof(err)), -ERANGE);
	assert_int_equal(vms_config_set(&c, "sources.libvirt.dirty_rate_seconds", "61s", err, sizeof(err)), -ERANGE);
	assert_int_equal(vms_config_set(&c, "sources.libvirt.dirty_rate_seconds", "500ms", err, sizeof(err)),
			 -ERANGE);
	assert_int_equal(c.libvirt.dirty_seconds_ns, 3 * SEC);
	vms_config_free(&c);
#else
	struct vms_config c;
	char err[256];
	assert_int_equal(vms_config_defaults(&c), 0);
	assert_int_equal(vms_config_set(&c, "sources.libvirt.dirty_rate_every", "1m", err, sizeof(err)), -ENOENT);
	vms_config_free(&c);
#endif
}

VMS_TEST_MAIN(NULL, NULL,
	test_dirty_rate, test_cadence, test_mem_sources, test_defaults, test_load_full, test_write_roundtrip, test_empty_documents,
	test_lists_replace, test_errors, test_error_atomic, test_too_large, test_load_file, test_deep_nesting,
	test_example_file, test_set, test_precedence, test_format_duration,
	test_format_from_output, test_dup_equal)
