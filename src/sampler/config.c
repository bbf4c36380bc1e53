/* SPDX-License-Identifier: MIT */
/* config.c - defaults, the key table and typed values.
 *
 * The YAML reader and writer are in config_yaml.c; everything here is
 * independent of YAML so the command line can use the same checks. */
#include "config.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "vms_sched.h"
#include "vms_build.h"

/* enum fields are stored through an int pointer */
_Static_assert(sizeof(enum vms_format) == sizeof(int), "enum size");
_Static_assert(sizeof(enum vms_csv_layout) == sizeof(int), "enum size");
_Static_assert(sizeof(enum vms_compress) == sizeof(int), "enum size");
_Static_assert(sizeof(enum vms_netdev_backend) == sizeof(int), "enum size");

/* Longest string value (paths): PATH_MAX including the terminator. */
#define STRING_MAX 4095

/* ---- the key table --------------------------------------------------------- */

static const struct vms_conf_enum format_enum[] = {
	{"auto", VMS_FORMAT_AUTO},
	{"csv", VMS_FORMAT_CSV},
	{"bin", VMS_FORMAT_BIN},
	{NULL, 0},
};

static const struct vms_conf_enum layout_enum[] = {
	{"wide", VMS_CSV_WIDE},
	{"long", VMS_CSV_LONG},
	{NULL, 0},
};

static const struct vms_conf_enum compress_enum[] = {
	{"none", VMS_COMPRESS_NONE},
	{"zstd", VMS_COMPRESS_ZSTD},
	{NULL, 0},
};

static const struct vms_conf_enum backend_enum[] = {
	{"auto", VMS_NETDEV_AUTO},
	{"netlink", VMS_NETDEV_NETLINK},
	{"procfs", VMS_NETDEV_PROCFS},
	{NULL, 0},
};

static const struct vms_conf_enum level_enum[] = {
	{"error", VMS_LOG_ERR},
	{"warning", VMS_LOG_WARN},
	{"info", VMS_LOG_INFO},
	{"debug", VMS_LOG_DEBUG},
	{NULL, 0},
};

#define TOP(f) offsetof(struct vms_config, f)
#define SRC(f) offsetof(struct vms_source_conf, f)

static const struct vms_conf_key top_keys[] = {
	{"interval", VMS_CONF_DURATION, TOP(interval_ns), .min = VMS_INTERVAL_MIN, .max = VMS_INTERVAL_MAX},
	{"count", VMS_CONF_U64, TOP(count), .max = UINT64_MAX},
	{"align", VMS_CONF_DURATION, TOP(align_ns), .min = VMS_ALIGN_MIN, .max = VMS_ALIGN_MAX,
	 .zero_ok = true},
	{"output", VMS_CONF_STRING, TOP(output)},
	{"format", VMS_CONF_ENUM, TOP(format), .enums = format_enum},
	{"csv_layout", VMS_CONF_ENUM, TOP(csv_layout), .enums = layout_enum},
	{"proc_root", VMS_CONF_STRING, TOP(proc_root)},
	{"ring_slots", VMS_CONF_U32, TOP(ring_slots), .min = VMS_RING_SLOTS_MIN,
	 .max = VMS_RING_SLOTS_MAX, .pow2 = true},
	{"ring_path", VMS_CONF_STRING, TOP(ring_path)},
	{"control_path", VMS_CONF_STRING, TOP(control_path)},
	{"log_level", VMS_CONF_ENUM, TOP(log_level), .enums = level_enum},
	{"user", VMS_CONF_STRING, TOP(user)},
	{"rotate", VMS_CONF_LIMIT, TOP(rotate)},
	{"keep", VMS_CONF_LIMIT, TOP(keep)},
	{"compress", VMS_CONF_ENUM, TOP(compress), .enums = compress_enum},
	{"sources", VMS_CONF_SOURCES, 0},
};

/* keys every source has */
#define SOURCE_KEYS                                                                      \
	{"enabled", VMS_CONF_BOOL, SRC(enabled)},                                          \
	{"every", VMS_CONF_U32, SRC(every), .min = 1, .max = VMS_EVERY_MAX}
#define FILTER_KEYS                                                                      \
	{"include", VMS_CONF_GLOBS, SRC(include)},                                         \
	{"exclude", VMS_CONF_GLOBS, SRC(exclude)}

static const struct vms_conf_key procstat_keys[] = {
	SOURCE_KEYS,
	{"per_cpu", VMS_CONF_BOOL, SRC(per_cpu)},
};
static const struct vms_conf_key loadavg_keys[] = {
	SOURCE_KEYS,
};
static const struct vms_conf_key diskstats_keys[] = {
	SOURCE_KEYS,
	{"partitions", VMS_CONF_BOOL, SRC(partitions)},
	FILTER_KEYS,
};
static const struct vms_conf_key netdev_keys[] = {
	SOURCE_KEYS,
	FILTER_KEYS,
	{"vm_taps", VMS_CONF_BOOL, SRC(vm_taps)},
	{"backend", VMS_CONF_ENUM, SRC(backend), .enums = backend_enum},
};
static const struct vms_conf_key meminfo_keys[] = {
	SOURCE_KEYS,
};
static const struct vms_conf_key vmstat_keys[] = {
	SOURCE_KEYS,
	FILTER_KEYS,
};
static const struct vms_conf_key schedstat_keys[] = {
	SOURCE_KEYS,
};
static const struct vms_conf_key psi_keys[] = {
	SOURCE_KEYS,
};
static const struct vms_conf_key irq_keys[] = {
	SOURCE_KEYS,
	{"per_cpu", VMS_CONF_BOOL, SRC(per_cpu)},
};

#define LV(f) offsetof(struct vms_libvirt_conf, f)
_Static_assert(offsetof(struct vms_libvirt_conf, src) == 0, "the source keys are at the start");
static const struct vms_conf_key libvirt_keys[] = {
	SOURCE_KEYS,
	{"uri", VMS_CONF_STRING, LV(uri)},
	{"refresh", VMS_CONF_DURATION, LV(refresh_ns), .min = VMS_NSEC_PER_SEC, .max = VMS_INTERVAL_MAX},
	{"budget", VMS_CONF_DURATION, LV(budget_ns), .min = VMS_NSEC_PER_MSEC, .max = 60 * VMS_NSEC_PER_SEC,
	 .zero_ok = true},
	{"timeout", VMS_CONF_DURATION, LV(timeout_ns), .min = VMS_NSEC_PER_SEC, .max = 3600 * VMS_NSEC_PER_SEC},
	{"crosscheck", VMS_CONF_BOOL, LV(crosscheck)},
	/* dirty-page-rate sampling: off (0) unless set; needs a read-write
	 * connection.  libvirt takes whole seconds, 1 to 60 */
	{"dirty_rate_every", VMS_CONF_DURATION, LV(dirty_every_ns), .min = 2 * VMS_NSEC_PER_SEC,
	 .max = VMS_INTERVAL_MAX, .zero_ok = true},
	{"dirty_rate_seconds", VMS_CONF_DURATION, LV(dirty_seconds_ns), .min = VMS_NSEC_PER_SEC,
	 .max = 60 * VMS_NSEC_PER_SEC},
	/* the VM cgroup's memory breakdown, memory events and pressure files */
	{"detail_interval", VMS_CONF_DURATION, LV(detail_ns), .min = VMS_INTERVAL_MIN, .max = VMS_INTERVAL_MAX, .zero_ok = true},
	{"agent", VMS_CONF_STRING, LV(agent)},
	{"cgroup_root", VMS_CONF_STRING, LV(cgroup_root)},
};
static const struct vms_conf_key perf_keys[] = {
	SOURCE_KEYS,
	{"per_cpu", VMS_CONF_BOOL, SRC(per_cpu)},
	{"host", VMS_CONF_EVENTS, SRC(host)},
	{"vm", VMS_CONF_EVENTS, SRC(vm)},
	{"vm_interval", VMS_CONF_DURATION, SRC(vm_interval_ns), .min = VMS_INTERVAL_MIN, .max = VMS_INTERVAL_MAX, .zero_ok = true},
};

static const struct vms_conf_key interference_keys[] = {
	SOURCE_KEYS,
	{"host_cgroups", VMS_CONF_U32, SRC(host_cgroups), .min = 0, .max = 64},
};

static const struct vms_conf_key intfest_keys[] = {
	SOURCE_KEYS,
};

#define SECTION(name, feature, compiled, field, keys)                                    \
	{name, feature, compiled, TOP(field), keys, VMS_ARRAY_SIZE(keys)}

const char *const vms_vmstat_default[VMS_VMSTAT_NDEFAULT] = {
	"pgpgin", "pgpgout", "pswpin", "pswpout", "pgfault", "pgmajfault", "pgfree",
	"pgscan_kswapd*", "pgscan_direct*", "pgscan_khugepaged", "pgscan_proactive", "pgsteal_kswapd*",
	"pgsteal_direct*", "pgsteal_khugepaged", "pgsteal_proactive", "pgsteal_anon", "pgsteal_file",
	"allocstall*",
	"compact_stall", "compact_fail", "compact_success", "oom_kill", "workingset_refault*",
	"thp_fault_alloc", "thp_fault_fallback",
};

const struct vms_conf_section vms_conf_sections[] = {
	{NULL, NULL, true, 0, top_keys, VMS_ARRAY_SIZE(top_keys)},
	SECTION("procstat", NULL, true, procstat, procstat_keys),
	SECTION("loadavg", NULL, true, loadavg, loadavg_keys),
	SECTION("diskstats", NULL, true, diskstats, diskstats_keys),
	SECTION("netdev", NULL, true, netdev, netdev_keys),
	SECTION("meminfo", NULL, true, meminfo, meminfo_keys),
	SECTION("vmstat", NULL, true, vmstat, vmstat_keys),
	SECTION("psi", NULL, true, psi, psi_keys),
	SECTION("interrupts", NULL, true, interrupts, irq_keys),
	SECTION("softirqs", NULL, true, softirqs, irq_keys),
	SECTION("schedstat", NULL, true, schedstat, schedstat_keys),
	SECTION("libvirt", "libvirt", HAVE_LIBVIRT, libvirt, libvirt_keys),
	SECTION("perf", "perf", HAVE_PERF, perf, perf_keys),
	SECTION("interference", "bpf", HAVE_BPF, interference, interference_keys),
	SECTION("intfest", NULL, true, intfest, intfest_keys),
};
const unsigned vms_conf_nsections = VMS_ARRAY_SIZE(vms_conf_sections);

const struct vms_conf_section *vms_conf_section_find(const char *name)
{
	for (unsigned i = 1; i < vms_conf_nsections; i++)
		if (strcmp(vms_conf_sections[i].name, name) == 0)
			return &vms_conf_sections[i];
	return NULL;
}

const struct vms_conf_key *vms_conf_key_find(const struct vms_conf_section *s, const char *name)
{
	for (unsigned i = 0; i < s->nkeys; i++)
		if (strcmp(s->keys[i].name, name) == 0)
			return &s->keys[i];
	return NULL;
}

/* ---- globs ------------------------------------------------------------------ */

static void globs_free(struct vms_globs *g)
{
	for (unsigned i = 0; i < g->n; i++)
		free(g->pat[i]);
	free(g->pat);
	g->pat = NULL;
	g->n = 0;
}

int vms_globs_add(struct vms_globs *g, const char *pat)
{
	char *p = strdup(pat);
	if (!p)
		return -ENOMEM;
	char **n = realloc(g->pat, (g->n + 1) * sizeof(*n));
	if (!n) {
		free(p);
		return -ENOMEM;
	}
	g->pat = n;
	g->pat[g->n++] = p;
	return 0;
}

void vms_globs_clear(struct vms_globs *g)
{
	globs_free(g);
}

static int globs_copy(struct vms_globs *dst, const struct vms_globs *src)
{
	struct vms_globs t = {NULL, 0};
	for (unsigned i = 0; i < src->n; i++) {
		if (vms_globs_add(&t, src->pat[i]) < 0) {
			globs_free(&t);
			return -ENOMEM;
		}
	}
	*dst = t;
	return 0;
}

bool vms_globs_match(const struct vms_globs *g, const char *name)
{
	for (unsigned i = 0; i < g->n; i++)
		if (fnmatch(g->pat[i], name, 0) == 0)
			return true;
	return false;
}

bool vms_globs_select(const struct vms_globs *include, const struct vms_globs *exclude, const char *name)
{
	if (include->n && !vms_globs_match(include, name))
		return false;
	return !vms_globs_match(exclude, name);
}

/* ---- perf event lists ------------------------------------------------------ */

int vms_perf_events_add(struct vms_perf_events *e, const char *name, bool required)
{
	char *n = strdup(name);
	if (!n)
		return -ENOMEM;
	struct vms_perf_event_conf *v = realloc(e->v, (e->n + 1) * sizeof(*v));
	if (!v) {
		free(n);
		return -ENOMEM;
	}
	e->v = v;
	e->v[e->n++] = (struct vms_perf_event_conf){n, required};
	return 0;
}

void vms_perf_events_clear(struct vms_perf_events *e)
{
	for (unsigned i = 0; i < e->n; i++)
		free(e->v[i].name);
	free(e->v);
	e->v = NULL;
	e->n = 0;
}

static int events_copy(struct vms_perf_events *dst, const struct vms_perf_events *src)
{
	struct vms_perf_events t = {NULL, 0};
	for (unsigned i = 0; i < src->n; i++) {
		if (vms_perf_events_add(&t, src->v[i].name, src->v[i].required) < 0) {
			vms_perf_events_clear(&t);
			return -ENOMEM;
		}
	}
	*dst = t;
	return 0;
}

/* ---- whole configs ----------------------------------------------------------- */

static void source_defaults(struct vms_source_conf *s)
{
	memset(s, 0, sizeof(*s));
	s->enabled = true;
	s->every = 1;
}

int vms_config_defaults(struct vms_config *c)
{
	int r = 0;
	memset(c, 0, sizeof(*c));
	c->interval_ns = VMS_NSEC_PER_SEC;
	c->count = 0;
	c->align_ns = 0;
	c->format = VMS_FORMAT_AUTO;
	c->csv_layout = VMS_CSV_WIDE;
	c->ring_slots = 64;
	c->log_level = VMS_LOG_INFO;
	c->output = strdup("-");
	c->proc_root = strdup("/proc");
	if (!c->output || !c->proc_root)
		r = -ENOMEM;
	source_defaults(&c->procstat);
	c->procstat.per_cpu = true;
	source_defaults(&c->loadavg);
	source_defaults(&c->diskstats);
	source_defaults(&c->netdev);
	source_defaults(&c->meminfo);
	source_defaults(&c->psi);
	/* interrupts: per vector and per CPU's sum by default; per CPU and
	 * vector on request (a host with 64 CPUs and 300 MSI vectors would
	 * have 19,000 columns); softirqs: 10 vectors, per CPU by default */
	source_defaults(&c->interrupts);
	source_defaults(&c->softirqs);
	c->softirqs.per_cpu = true;
	/* /proc/schedstat: opt-in, like the other inputs of interference
	 * attribution; a kernel without CONFIG_SCHEDSTATS has no such file,
	 * and a default source that is missing would be a warning at every
	 * start there */
	source_defaults(&c->schedstat);
	c->schedstat.enabled = false;
	/* /proc/vmstat: paging, swapping, faults, reclaim, compaction and OOM
	 * kills (vmsampler.yaml(5); ["*"] for every line).  Globs, so that
	 * a kernel's per-zone names (pgscan_kswapd_normal before 4.8) match */
	source_defaults(&c->vmstat);
	for (size_t i = 0; i < VMS_ARRAY_SIZE(vms_vmstat_default); i++)
		if (vms_globs_add(&c->vmstat.include, vms_vmstat_default[i]) < 0)
			r = -ENOMEM;
	source_defaults(&c->libvirt.src);
	c->libvirt.refresh_ns = VMS_LIBVIRT_REFRESH_DEFAULT;
	c->libvirt.dirty_seconds_ns = VMS_LIBVIRT_DIRTY_SECONDS_DEFAULT;
	c->libvirt.timeout_ns = VMS_LIBVIRT_TIMEOUT_DEFAULT;
	c->libvirt.detail_ns = VMS_LIBVIRT_DETAIL_DEFAULT;
	c->libvirt.cgroup_root = strdup("/sys/fs/cgroup");
	if (!c->libvirt.cgroup_root)
		r = -ENOMEM;
	/* whole disks, without the RAM disks and loop devices that every host
	 * has and nobody samples (node_exporter ignores them too) */
	if (vms_globs_add(&c->diskstats.exclude, "ram*") < 0 ||
	    vms_globs_add(&c->diskstats.exclude, "loop*") < 0)
		r = -ENOMEM;
	/* perf: what an operator of a KVM host wants at a negligible cost.
	 * Software counters only (each is an increment on a path the kernel
	 * takes anyway); per VM also kvm:kvm_exit, the number of exits to the
	 * hypervisor.  No host-wide kvm:kvm_exit (the per-VM counters already
	 * enable the tracepoint, a second event on it doubles its cost per
	 * exit), no task-clock (host-wide it counts idle time too: it is
	 * time_enabled), no hardware events (no PMU on many virtualised
	 * hosts, and host-wide ones compete with guests' vPMUs). */
	/* interference attribution (a BPF program): opt-in until its cost at
	 * 60 VMs is measured against issue 26's 0.3 % of a core, and it needs
	 * CAP_BPF, which the service does not have otherwise */
	source_defaults(&c->interference);
	c->interference.enabled = false;
	c->interference.host_cgroups = VMS_INTERF_HOST_CGROUPS;
	/* its estimate without BPF: opt-in, it reads every QEMU thread's
	 * schedstat and stat each tick */
	source_defaults(&c->intfest);
	c->intfest.enabled = false;
	source_defaults(&c->perf);
	c->perf.per_cpu = true;
	c->perf.vm_interval_ns = VMS_PERF_VM_INTERVAL_DEFAULT;
	static const char *const host_ev[] = {"context-switches", "cpu-migrations", "page-faults"};
	static const char *const vm_ev[] = {"context-switches", "cpu-migrations", "kvm:kvm_exit"};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(host_ev); i++)
		if (vms_perf_events_add(&c->perf.host, host_ev[i], false) < 0)
			r = -ENOMEM;
	for (size_t i = 0; i < VMS_ARRAY_SIZE(vm_ev); i++)
		if (vms_perf_events_add(&c->perf.vm, vm_ev[i], false) < 0)
			r = -ENOMEM;
	return r;
}

static inline void *field(const void *base, const struct vms_conf_key *k)
{
	return (char *)base + k->off;
}

#define for_each_key(sec, k)                                                             \
	for (const struct vms_conf_section *sec = vms_conf_sections;                       \
	     sec < vms_conf_sections + vms_conf_nsections; sec++)                          \
		for (const struct vms_conf_key *k = sec->keys; k && k < sec->keys + sec->nkeys; k++)

void vms_config_free(struct vms_config *c)
{
	if (!c)
		return;
	for_each_key(sec, k) {
		void *f = field((char *)c + sec->off, k);
		if (k->type == VMS_CONF_STRING) {
			free(*(char **)f);
			*(char **)f = NULL;
		} else if (k->type == VMS_CONF_GLOBS) {
			globs_free(f);
		} else if (k->type == VMS_CONF_EVENTS) {
			vms_perf_events_clear(f);
		}
	}
	memset(c, 0, sizeof(*c));
}

int vms_config_dup(struct vms_config *dst, const struct vms_config *src)
{
	struct vms_config t = *src;
	/* first forget the borrowed pointers, so a failure frees only copies */
	for_each_key(sec, k) {
		void *f = field((char *)&t + sec->off, k);
		if (k->type == VMS_CONF_STRING)
			*(char **)f = NULL;
		else if (k->type == VMS_CONF_GLOBS)
			*(struct vms_globs *)f = (struct vms_globs){NULL, 0};
		else if (k->type == VMS_CONF_EVENTS)
			*(struct vms_perf_events *)f = (struct vms_perf_events){NULL, 0};
	}
	for_each_key(sec, k) {
		void *to = field((char *)&t + sec->off, k);
		const void *from = field((const char *)src + sec->off, k);
		int r = 0;
		if (k->type == VMS_CONF_STRING && *(char *const *)from) {
			*(char **)to = strdup(*(char *const *)from);
			r = *(char **)to ? 0 : -ENOMEM;
		} else if (k->type == VMS_CONF_GLOBS) {
			r = globs_copy(to, from);
		} else if (k->type == VMS_CONF_EVENTS) {
			r = events_copy(to, from);
		}
		if (r < 0) {
			vms_config_free(&t);
			return r;
		}
	}
	*dst = t;
	return 0;
}

static bool str_equal(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

/* The values x and y of key k are the same. */
static bool value_equal(const struct vms_conf_key *k, const void *x, const void *y)
{
	switch (k->type) {
	case VMS_CONF_DURATION:
	case VMS_CONF_U64:
		return *(const uint64_t *)x == *(const uint64_t *)y;
	case VMS_CONF_U32:
		return *(const uint32_t *)x == *(const uint32_t *)y;
	case VMS_CONF_BOOL:
		return *(const bool *)x == *(const bool *)y;
	case VMS_CONF_ENUM:
		return *(const int *)x == *(const int *)y;
	case VMS_CONF_STRING:
		return str_equal(*(char *const *)x, *(char *const *)y);
	case VMS_CONF_LIMIT: {
		const struct vms_limit *a = x, *b = y;
		return a->ns == b->ns && a->bytes == b->bytes;
	}
	case VMS_CONF_GLOBS: {
		const struct vms_globs *g = x, *h = y;
		if (g->n != h->n)
			return false;
		for (unsigned i = 0; i < g->n; i++)
			if (strcmp(g->pat[i], h->pat[i]) != 0)
				return false;
		return true;
	}
	case VMS_CONF_EVENTS: {
		const struct vms_perf_events *g = x, *h = y;
		if (g->n != h->n)
			return false;
		for (unsigned i = 0; i < g->n; i++)
			if (strcmp(g->v[i].name, h->v[i].name) != 0 || g->v[i].required != h->v[i].required)
				return false;
		return true;
	}
	case VMS_CONF_SOURCES:
		break;
	}
	return true;
}

bool vms_config_equal(const struct vms_config *a, const struct vms_config *b)
{
	for_each_key(sec, k) {
		const void *x = field((const char *)a + sec->off, k);
		const void *y = field((const char *)b + sec->off, k);
		if (!value_equal(k, x, y))
			return false;
	}
	return true;
}

enum vms_format vms_config_format(const struct vms_config *c)
{
	if (c->format != VMS_FORMAT_AUTO)
		return c->format;
	const char *o = c->output ? c->output : "-";
	size_t n = strlen(o);
	if (n >= 4 && strcmp(o + n - 4, ".vms") == 0)
		return VMS_FORMAT_BIN;
	return VMS_FORMAT_CSV;
}

int vms_format_duration(char *buf, size_t len, uint64_t ns)
{
	static const struct {
		const char *unit;
		uint64_t ns;
	} units[] = {
		{"h", 3600 * VMS_NSEC_PER_SEC},
		{"m", 60 * VMS_NSEC_PER_SEC},
		{"s", VMS_NSEC_PER_SEC},
		{"ms", VMS_NSEC_PER_MSEC},
		{"us", 1000},
	};
	if (ns == 0)
		return snprintf(buf, len, "0");
	for (size_t i = 0; i < VMS_ARRAY_SIZE(units); i++)
		if (ns % units[i].ns == 0)
			return snprintf(buf, len, "%" PRIu64 "%s", ns / units[i].ns, units[i].unit);
	return snprintf(buf, len, "%" PRIu64 "ns", ns);
}

static const struct {
	const char *unit;
	uint64_t mult;
	bool bytes;
} limit_units[] = {
	{"d", 86400 * VMS_NSEC_PER_SEC, false},
	{"h", 3600 * VMS_NSEC_PER_SEC, false},
	{"m", 60 * VMS_NSEC_PER_SEC, false},
	{"min", 60 * VMS_NSEC_PER_SEC, false},
	{"s", VMS_NSEC_PER_SEC, false},
	{"P", 1ull << 50, true},
	{"T", 1ull << 40, true},
	{"G", 1ull << 30, true},
	{"M", 1ull << 20, true},
	{"K", 1ull << 10, true},
};

int vms_format_limit(char *buf, size_t len, const struct vms_limit *l)
{
	uint64_t v = l->bytes ? l->bytes : l->ns;
	if (v == 0)
		return snprintf(buf, len, "0");
	for (size_t i = 0; i < VMS_ARRAY_SIZE(limit_units); i++)
		if (limit_units[i].bytes == (l->bytes != 0) && v % limit_units[i].mult == 0)
			return snprintf(buf, len, "%" PRIu64 "%s", v / limit_units[i].mult, limit_units[i].unit);
	/* not a whole number of the smallest unit: cannot be written */
	return snprintf(buf, len, "%" PRIu64 "%s", v, l->bytes ? "B?" : "ns?");
}

int vms_parse_limit(const char *s, struct vms_limit *l)
{
	uint64_t v = 0;
	size_t n = strspn(s, "0123456789");
	if (n == 0 || n > 19)
		return n > 19 ? -ERANGE : -EINVAL;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (uint64_t)(s[i] - '0');
	const char *u = s + n;
	if (*u == '\0') {
		if (v != 0)
			return -EINVAL; /* a bare number other than 0: which unit? */
		*l = (struct vms_limit){0, 0};
		return 0;
	}
	for (size_t i = 0; i < VMS_ARRAY_SIZE(limit_units); i++) {
		size_t ul = strlen(limit_units[i].unit);
		if (strncmp(u, limit_units[i].unit, ul) != 0)
			continue;
		if (!(u[ul] == '\0' || (limit_units[i].bytes && strcmp(u + ul, "iB") == 0)))
			continue;
		uint64_t m = limit_units[i].mult;
		if (v > UINT64_MAX / m)
			return -ERANGE;
		struct vms_limit t = {0, 0};
		if (limit_units[i].bytes)
			t.bytes = v * m;
		else
			t.ns = v * m;
		if (v == 0) {
			*l = (struct vms_limit){0, 0};
			return 0;
		}
		if (t.bytes && (t.bytes < VMS_LIMIT_BYTES_MIN || t.bytes > VMS_LIMIT_BYTES_MAX))
			return -ERANGE;
		if (t.ns && (t.ns < VMS_LIMIT_NS_MIN || t.ns > VMS_LIMIT_NS_MAX))
			return -ERANGE;
		*l = t;
		return 0;
	}
	return -EINVAL;
}

/* ---- typed values ------------------------------------------------------------- */

/* 'value' for messages: at most 40 bytes, then "...". */
static const char *quoted(char *buf, size_t len, const char *text)
{
	size_t n = strlen(text);
	if (n > 40)
		snprintf(buf, len, "'%.40s...'", text);
	else
		snprintf(buf, len, "'%s'", text);
	return buf;
}

/* Strict unsigned decimal: digits only, no sign, no blanks. */
static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (!*s)
		return -EINVAL;
	for (const char *p = s; *p; p++)
		if (*p < '0' || *p > '9')
			return -EINVAL;
	for (; *s; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

static bool is_null(const char *t, size_t len, bool plain)
{
	return plain && (len == 0 || strcmp(t, "~") == 0 || strcmp(t, "null") == 0 ||
			 strcmp(t, "Null") == 0 || strcmp(t, "NULL") == 0);
}

/* The shape vms_parse_duration accepts (it stops at an overflow before it
 * looks at the unit): digits, a fraction, a unit. */
static bool duration_syntax(const char *s)
{
	static const char *const units[] = {"", "ns", "us", "ms", "s", "m", "min", "h"};
	size_t n = strspn(s, "0123456789");
	if (s[n] == '.')
		n += 1 + strspn(s + n + 1, "0123456789");
	for (size_t i = 0; i < VMS_ARRAY_SIZE(units); i++)
		if (strcmp(s + n, units[i]) == 0)
			return true;
	return false;
}

static bool is_pow2(uint64_t v)
{
	return v && (v & (v - 1)) == 0;
}

void vms_conf_expected(const struct vms_conf_key *k, char *buf, size_t len)
{
	static const char *const what[] = {
		[VMS_CONF_DURATION] = "a duration",
		[VMS_CONF_U64] = "a number",
		[VMS_CONF_U32] = "a number",
		[VMS_CONF_BOOL] = "true or false",
		[VMS_CONF_STRING] = "a string",
		[VMS_CONF_GLOBS] = "a list of patterns",
		[VMS_CONF_EVENTS] = "a list of perf events",
		[VMS_CONF_SOURCES] = "a mapping of sources",
		[VMS_CONF_LIMIT] = "a duration or a size",
	};
	if (k->type == VMS_CONF_ENUM) {
		size_t n = (size_t)snprintf(buf, len, "one of");
		for (const struct vms_conf_enum *e = k->enums; e->name && n < len; e++)
			n += (size_t)snprintf(buf + n, len - n, "%s %s", e == k->enums ? "" : ",", e->name);
		return;
	}
	snprintf(buf, len, "%s", (unsigned)k->type < VMS_ARRAY_SIZE(what) && what[k->type] ? what[k->type] : "a value");
}

static void range_text(const struct vms_conf_key *k, char *buf, size_t len)
{
	char lo[24], hi[24];
	if (k->type == VMS_CONF_DURATION) {
		vms_format_duration(lo, sizeof(lo), k->min);
		vms_format_duration(hi, sizeof(hi), k->max);
		snprintf(buf, len, "%s%s to %s", k->zero_ok ? "0, or " : "", lo, hi);
	} else {
		snprintf(buf, len, "%" PRIu64 " to %" PRIu64, k->min, k->max);
	}
}

int vms_conf_key_set(const struct vms_conf_key *k, void *base, const char *text, size_t len, bool plain,
		     char *msg, size_t msglen)
{
	char q[64], range[64], what[96];
	void *f = field(base, k);
	uint64_t v;
	int r;

	if (k->type == VMS_CONF_GLOBS || k->type == VMS_CONF_EVENTS || k->type == VMS_CONF_SOURCES) {
		vms_conf_expected(k, what, sizeof(what));
		snprintf(msg, msglen, "expected %s", what);
		return -EINVAL;
	}
	if (is_null(text, len, plain)) {
		snprintf(msg, msglen, "missing value");
		return -EINVAL;
	}
	if (memchr(text, '\0', len)) {
		snprintf(msg, msglen, "the value contains a NUL character");
		return -EINVAL;
	}
	quoted(q, sizeof(q), text);
	switch (k->type) {
	case VMS_CONF_DURATION:
		r = vms_parse_duration(text, &v);
		if (r == -EINVAL || (r == -ERANGE && !duration_syntax(text))) {
			snprintf(msg, msglen, "%s is not a duration (such as 500ms, 1s, 5m)", q);
			return -EINVAL;
		}
		if (r < 0 || ((v < k->min || v > k->max) && !(k->zero_ok && v == 0))) {
			range_text(k, range, sizeof(range));
			snprintf(msg, msglen, "%s is out of range (%s)", q, range);
			return -ERANGE;
		}
		*(uint64_t *)f = v;
		return 0;
	case VMS_CONF_U64:
	case VMS_CONF_U32:
		if (!plain) {
			snprintf(msg, msglen, "%s is quoted: write the number without quotes", q);
			return -EINVAL;
		}
		r = parse_u64(text, &v);
		if (r == -EINVAL) {
			snprintf(msg, msglen, "%s is not a non-negative integer", q);
			return r;
		}
		if (k->pow2 && (r < 0 || v < k->min || v > k->max || !is_pow2(v))) {
			snprintf(msg, msglen, "%s is not a power of two from %" PRIu64 " to %" PRIu64, q,
				 k->min, k->max);
			return -ERANGE;
		}
		if (r < 0 || v < k->min || v > k->max) {
			range_text(k, range, sizeof(range));
			snprintf(msg, msglen, "%s is out of range (%s)", q, range);
			return -ERANGE;
		}
		if (k->type == VMS_CONF_U32)
			*(uint32_t *)f = (uint32_t)v;
		else
			*(uint64_t *)f = v;
		return 0;
	case VMS_CONF_BOOL:
		if (plain && (!strcmp(text, "true") || !strcmp(text, "True") || !strcmp(text, "TRUE"))) {
			*(bool *)f = true;
			return 0;
		}
		if (plain && (!strcmp(text, "false") || !strcmp(text, "False") || !strcmp(text, "FALSE"))) {
			*(bool *)f = false;
			return 0;
		}
		snprintf(msg, msglen, "expected true or false%s, not %s", plain ? "" : " without quotes", q);
		return -EINVAL;
	case VMS_CONF_STRING: {
		if (len == 0) {
			snprintf(msg, msglen, "must not be empty");
			return -EINVAL;
		}
		if (len > STRING_MAX) {
			snprintf(msg, msglen, "the value is longer than %d bytes", STRING_MAX);
			return -EINVAL;
		}
		char *s = strdup(text);
		if (!s) {
			snprintf(msg, msglen, "out of memory");
			return -ENOMEM;
		}
		free(*(char **)f);
		*(char **)f = s;
		return 0;
	}
	case VMS_CONF_LIMIT: {
		struct vms_limit lim;
		if (!plain) {
			snprintf(msg, msglen, "%s is quoted: write it without quotes", q);
			return -EINVAL;
		}
		r = vms_parse_limit(text, &lim);
		if (r == -EINVAL) {
			snprintf(msg, msglen, "%s is neither a duration nor a size (such as 1h, 7d, 100M, 10G; 0: off)", q);
			return r;
		}
		if (r < 0) {
			snprintf(msg, msglen, "%s is out of range (0, or 1s to 3650d, or 4K to 1P)", q);
			return r;
		}
		*(struct vms_limit *)f = lim;
		return 0;
	}
	case VMS_CONF_ENUM:
		for (const struct vms_conf_enum *e = k->enums; e->name; e++) {
			if (strcmp(e->name, text) == 0) {
				*(int *)f = e->value;
				return 0;
			}
		}
		vms_conf_expected(k, what, sizeof(what));
		snprintf(msg, msglen, "%s is not %s", q, what);
		return -EINVAL;
	case VMS_CONF_GLOBS:
	case VMS_CONF_EVENTS:
	case VMS_CONF_SOURCES:
		break;
	}
	snprintf(msg, msglen, "cannot be set");
	return -EINVAL;
}

int vms_config_set(struct vms_config *c, const char *key, const char *value, char *err, size_t errlen)
{
	const struct vms_conf_section *sec = &vms_conf_sections[0];
	const char *name = key;

	if (strncmp(key, "sources.", 8) == 0) {
		const char *sname = key + 8;
		const char *dot = strchr(sname, '.');
		char buf[64];
		if (!dot || (size_t)(dot - sname) >= sizeof(buf)) {
			snprintf(err, errlen, "no key '%s'", key);
			return -ENOENT;
		}
		memcpy(buf, sname, (size_t)(dot - sname));
		buf[dot - sname] = '\0';
		sec = vms_conf_section_find(buf);
		if (!sec) {
			snprintf(err, errlen, "no key '%s'", key);
			return -ENOENT;
		}
		if (!sec->compiled) {
			snprintf(err, errlen, "vmsampler was compiled without %s support", sec->feature);
			return -ENOENT;
		}
		name = dot + 1;
	}
	const struct vms_conf_key *k = vms_conf_key_find(sec, name);
	if (!k) {
		snprintf(err, errlen, "no key '%s'", key);
		return -ENOENT;
	}
	/* not YAML: a string is taken as it is ("null" is a file name) */
	return vms_conf_key_set(k, (char *)c + sec->off, value, strlen(value), k->type != VMS_CONF_STRING,
				err, errlen);
}
