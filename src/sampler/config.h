/* SPDX-License-Identifier: MIT */
/* config.h - everything a run is configured with.
 *
 * Precedence: built-in defaults < the YAML file (-c) < the command line.
 * Every key is documented in vmsampler.yaml(5) and every option in
 * vmsampler(1) and --help (tests/test_manpages.c checks both).
 *
 * The keys are described by a table (vms_conf_sections, config.c): the
 * YAML loader, vms_config_set (the command line), vms_config_write
 * (--print-config), vms_config_dup/free/equal and the documentation test
 * all walk it, so adding a key or a source section is a few lines there. */
#ifndef VMS_CONFIG_H
#define VMS_CONFIG_H

#include <stdio.h>

#include "sink.h"
#include "vms.h"

struct vms_globs {
	char **pat;
	unsigned n;
};

int vms_globs_add(struct vms_globs *g, const char *pat);
void vms_globs_clear(struct vms_globs *g);
/* True if `name` matches any pattern (fnmatch(3), no flags). */
bool vms_globs_match(const struct vms_globs *g, const char *name);
/* The include/exclude rule: included (include empty or a match) and not
 * excluded. */
bool vms_globs_select(const struct vms_globs *include, const struct vms_globs *exclude,
		      const char *name);

/* A list of perf events (sources.perf.host, sources.perf.vm): names as
 * written (checked by vms_perf_event_parse, src/perfev.h), and whether
 * the run must stop when one cannot be opened. */
struct vms_perf_event_conf {
	char *name;
	bool required;
};

struct vms_perf_events {
	struct vms_perf_event_conf *v;
	unsigned n;
};

/* Append (a copy of name).  0 or -ENOMEM. */
int vms_perf_events_add(struct vms_perf_events *e, const char *name, bool required);
void vms_perf_events_clear(struct vms_perf_events *e);

/* sources.netdev.backend: where the interface counters come from */
enum vms_netdev_backend {
	VMS_NETDEV_AUTO,    /* netlink where it works on the real /proc, else procfs */
	VMS_NETDEV_NETLINK, /* rtnetlink RTM_GETSTATS; the run does not start without it */
	VMS_NETDEV_PROCFS,  /* /proc/net/dev */
};

struct vms_source_conf {
	bool enabled;
	uint32_t every; /* sample every N ticks (>= 1) */
	struct vms_globs include, exclude; /* diskstats, netdev, vmstat */
	bool partitions; /* diskstats: also partitions */
	bool per_cpu;    /* procstat, perf, interrupts, softirqs: per-CPU columns besides the all-CPU ones */
	bool vm_taps;    /* netdev: also the VMs' tap devices */
	int backend;     /* netdev: enum vms_netdev_backend */
	struct vms_perf_events host, vm; /* perf: host-wide and per-VM events */
	uint64_t vm_interval_ns; /* perf: each VM's groups read this often (0: every tick) */
	uint32_t host_cgroups;   /* interference: the host's cgroups named (the rest: host_other) */
};
#define VMS_INTERF_HOST_CGROUPS 5 /* sources.interference.host_cgroups default */
/* interference: a new pair or a new named set waits for a new schema
 * generation until this long after the last one (source_interf.c) */
#define VMS_INTERF_DECLARE_NS (10 * VMS_NSEC_PER_SEC)

/* sources.libvirt: the vm source (per-VM statistics) and its agent. */
struct vms_libvirt_conf {
	struct vms_source_conf src; /* first: enabled, every */
	char *uri;            /* NULL: libvirt's default URI */
	uint64_t refresh_ns;  /* balloon/block of every domain at least this often */
	uint64_t budget_ns;   /* libvirt wall time per tick; 0: 5 % of the interval */
	uint64_t timeout_ns;  /* the agent is restarted when stuck this long */
	bool crosscheck;      /* also libvirt's cpu-total and vcpu groups */
	uint64_t dirty_every_ns;   /* a dirty-rate calculation per domain this often; 0: off */
	uint64_t dirty_seconds_ns; /* each calculation's length (whole seconds) */
	uint64_t detail_ns;   /* each VM's cgroup memory and pressure files this often (0: every tick) */
	char *agent;          /* NULL: next to vmsampler, then the libexec dir */
	char *cgroup_root;    /* where /sys/fs/cgroup's hierarchies are */
};


/* Heap-owning fields are exactly the string and list keys of the table:
 * vms_config_free/dup walk it.  A field outside the table must not own
 * memory. */
/* rotate and keep (VMS_CONF_LIMIT): a time or a size, at most one of
 * them nonzero; both 0: off. */
struct vms_limit {
	uint64_t ns;
	uint64_t bytes;
};

enum vms_compress { VMS_COMPRESS_NONE = 0, VMS_COMPRESS_ZSTD };

struct vms_config {
	uint64_t interval_ns;  /* default 1 s */
	uint64_t count;        /* frames to write, 0 = until stopped */
	uint64_t align_ns;     /* first tick at a wall-clock multiple (0 = now) */
	char *output;          /* path, or "-" for stdout (default "-") */
	enum vms_format format;
	enum vms_csv_layout csv_layout;
	char *proc_root;       /* default "/proc" */
	uint32_t ring_slots;   /* frames the ring holds (default 64) */
	char *ring_path;       /* the ring as a shared file readers attach to (default NULL: private) */
	char *control_path;    /* the control socket (vmsampler mark); NULL: RING.ctl with a ring,
				* none without; "none": none */
	int log_level;         /* enum vms_log_level */
	char *user;            /* started as root: run as this user (priv.h); NULL: stay */
	struct vms_limit rotate; /* a new file after this long or this size (rotate.h) */
	struct vms_limit keep;   /* delete the oldest closed files beyond this age or total size */
	enum vms_compress compress; /* closed files compressed (zstd) */
	struct vms_source_conf procstat, loadavg, diskstats, netdev, meminfo, vmstat, psi;
	struct vms_source_conf interrupts, softirqs;
	struct vms_source_conf schedstat; /* /proc/schedstat: run queue per CPU */
	struct vms_libvirt_conf libvirt;
	struct vms_source_conf perf; /* only read in a build with perf */
	struct vms_source_conf interference; /* only read in a build with bpf */
	struct vms_source_conf intfest;      /* interference estimated without BPF */
	/* outside the table (no key): --force, outputs may overwrite a file
	 * that is not a vmsampler output of their kind (out.h) */
	bool force;
};

/* Limits (also in --help and the man pages). */
#define VMS_INTERVAL_MIN (10 * VMS_NSEC_PER_MSEC)
#define VMS_INTERVAL_MAX (24 * 3600 * VMS_NSEC_PER_SEC)
#define VMS_ALIGN_MIN VMS_NSEC_PER_MSEC
#define VMS_ALIGN_MAX VMS_INTERVAL_MAX
#define VMS_RING_SLOTS_MIN 2
#define VMS_RING_SLOTS_MAX 1048576
#define VMS_EVERY_MAX 1000000
#define VMS_LIMIT_NS_MIN VMS_NSEC_PER_SEC
#define VMS_LIMIT_NS_MAX (3650ull * 86400 * VMS_NSEC_PER_SEC)
#define VMS_LIMIT_BYTES_MIN 4096ull
#define VMS_LIMIT_BYTES_MAX (1ull << 50)
#define VMS_LIBVIRT_REFRESH_DEFAULT (60 * VMS_NSEC_PER_SEC)
#define VMS_LIBVIRT_DIRTY_SECONDS_DEFAULT VMS_NSEC_PER_SEC
#define VMS_LIBVIRT_TIMEOUT_DEFAULT (10 * VMS_NSEC_PER_SEC)
#define VMS_LIBVIRT_DETAIL_DEFAULT (5 * VMS_NSEC_PER_SEC)
#define VMS_PERF_VM_INTERVAL_DEFAULT (10 * VMS_NSEC_PER_SEC)
/* Ticks between two reads of what is read every ns (a cadence key of 0 or
 * not above the interval: every tick), rounded to the nearest. */
static inline uint32_t vms_cadence_ticks(uint64_t ns, uint64_t interval_ns)
{
	if (!ns || !interval_ns || ns <= interval_ns)
		return 1;
	uint64_t n = (ns + interval_ns / 2) / interval_ns;
	return n > VMS_EVERY_MAX ? VMS_EVERY_MAX : (uint32_t)n;
}
/* Whether tick idx is one of the item at offset i (0 for a whole source)
 * of a cadence of every ticks: items at different offsets take turns, so
 * that each tick reads its share of them. */
static inline bool vms_cadence_due(uint64_t idx, unsigned i, uint32_t every)
{
	return every <= 1 || (idx + i) % every == 0;
}
/* A configuration file larger than this is refused. */
#define VMS_CONFIG_MAX_SIZE (1u << 20)
/* Lists and mappings nested deeper than this are refused (the deepest
 * the key table has is 4: sources, a source, a list, an event).  libyaml's
 * scanner checks every open flow level at every token: 100,000 '[' took
 * 49 s before it said anything; refused at level 65 it is a millisecond. */
#define VMS_CONFIG_MAX_DEPTH 64

/* The default of sources.vmstat.include. */
#define VMS_VMSTAT_NDEFAULT 25
extern const char *const vms_vmstat_default[VMS_VMSTAT_NDEFAULT];

/* Built-in defaults.  0 or -ENOMEM (then *c is still safe to free). */
int vms_config_defaults(struct vms_config *c);
/* Free what *c owns and zero it; accepts a zeroed or freed config. */
void vms_config_free(struct vms_config *c);
/* Deep copy into *dst (uninitialised).  0 or -ENOMEM (*dst untouched). */
int vms_config_dup(struct vms_config *dst, const struct vms_config *src);
/* Every key of the table has the same value in a and b. */
bool vms_config_equal(const struct vms_config *a, const struct vms_config *b);
/* Output format from -f, else from the output's extension (.vms: binary,
 * anything else: CSV). */
enum vms_format vms_config_format(const struct vms_config *c);

/* Merge a YAML document (name: the file name used in messages) into *c,
 * which holds the values it overrides (defaults, usually).  On success
 * returns 0 and *c holds the result; on failure *c is unchanged and err
 * holds one line:
 *   -EINVAL  "NAME:LINE:COL: message" (syntax, unknown or duplicate key,
 *            wrong type, bad value, source compiled out)
 *            (also lists or mappings nested deeper than VMS_CONFIG_MAX_DEPTH)
 *   -EFBIG   "NAME: ..." (larger than VMS_CONFIG_MAX_SIZE)
 *   -ENOMEM  "NAME: out of memory" */
int vms_config_load_buffer(struct vms_config *c, const char *name, const void *buf, size_t len,
			   char *err, size_t errlen);
/* The same for a file, which must be a regular file (safefile.h: a FIFO
 * or a directory is refused at once); -errno of open/read or of the
 * refusal with "PATH: reason". */
int vms_config_load_file(struct vms_config *c, const char *path, char *err, size_t errlen);

/* Set one key ("interval", "sources.procstat.every") from text, with the
 * same checks as the file (numbers and booleans as unquoted YAML scalars,
 * strings as they are: "null" or "~" is a file name here).
 * 0; -ENOENT (no such key), -EINVAL/-ERANGE (bad value), -ENOMEM; err gets
 * a message without location, e.g. "'5ms' is out of range (10ms to 24h)".
 * *c is changed only on success. */
int vms_config_set(struct vms_config *c, const char *key, const char *value, char *err,
		   size_t errlen);

/* Write *c as a YAML document that vms_config_load_buffer reads back into
 * an equal config (--print-config).  0 or -errno (EIO on a stdio error). */
int vms_config_write(const struct vms_config *c, FILE *f);

/* ns in the largest unit that divides it exactly ("1s", "90s", "1500us";
 * "0" for 0): vms_parse_duration reads it back to the same value.  Returns
 * what snprintf returns (24 bytes always suffice). */
int vms_format_duration(char *buf, size_t len, uint64_t ns);
/* A struct vms_limit as written in the file: "0", "1h", "7d", "100M"
 * (the largest unit that divides it exactly); vms_parse_limit reads it
 * back.  Returns what snprintf returns. */
int vms_format_limit(char *buf, size_t len, const struct vms_limit *l);
/* "0", a whole number with a time unit (s, m, min, h, d) or a size unit
 * (K, M, G, T, P: powers of 1024, optionally followed by "iB").  0, or
 * -EINVAL (not a limit) / -ERANGE (out of range; *l untouched). */
int vms_parse_limit(const char *s, struct vms_limit *l);

/* ---- the key table ------------------------------------------------------- */

enum vms_conf_type {
	VMS_CONF_DURATION, /* uint64_t ns; a vms_parse_duration string */
	VMS_CONF_U64,      /* uint64_t, unsigned decimal */
	VMS_CONF_U32,      /* uint32_t, unsigned decimal */
	VMS_CONF_BOOL,     /* bool: true or false */
	VMS_CONF_STRING,   /* char *, not empty */
	VMS_CONF_ENUM,     /* int, one of `enums` */
	VMS_CONF_GLOBS,    /* struct vms_globs: a list of fnmatch patterns */
	VMS_CONF_EVENTS,   /* struct vms_perf_events: a list of perf events */
	VMS_CONF_SOURCES,  /* the `sources` mapping (top level only) */
	VMS_CONF_LIMIT,    /* struct vms_limit: a duration (1s to 3650d) or a size (4K to 1P); 0: off */
};

struct vms_conf_enum {
	const char *name;
	int value;
};

struct vms_conf_key {
	const char *name;
	enum vms_conf_type type;
	size_t off;                        /* in the section's struct */
	uint64_t min, max;                 /* DURATION, U64, U32 */
	bool zero_ok;                      /* DURATION: 0 allowed besides min..max */
	bool pow2;                         /* U32: a power of two */
	const struct vms_conf_enum *enums; /* ENUM: terminated by {NULL} */
};

/* One mapping of keys: the top level (name NULL) or a source under
 * `sources:`.  A section whose build feature is missing (compiled false)
 * keeps its keys in the table so the documentation check sees them; the
 * loader refuses it with "compiled without <feature> support". */
struct vms_conf_section {
	const char *name;
	const char *feature; /* build feature it needs ("libvirt"), NULL: always there */
	bool compiled;
	size_t off;          /* of its struct in struct vms_config */
	const struct vms_conf_key *keys;
	unsigned nkeys;
};

/* [0] is the top level, then the source sections in frame order. */
extern const struct vms_conf_section vms_conf_sections[];
extern const unsigned vms_conf_nsections;

const struct vms_conf_section *vms_conf_section_find(const char *name);
const struct vms_conf_key *vms_conf_key_find(const struct vms_conf_section *s, const char *name);
/* Store text (len bytes, NUL-terminated) into the key's field at base.
 * `plain`: an unquoted scalar (numbers and booleans must be plain).
 * Atomic: the field changes only on success.  0 or -EINVAL/-ERANGE/-ENOMEM
 * with msg (no location, no key name). */
int vms_conf_key_set(const struct vms_conf_key *k, void *base, const char *text, size_t len,
		     bool plain, char *msg, size_t msglen);
/* What a value of the key looks like, for messages: "a duration",
 * "true or false", "one of auto, csv, bin". */
void vms_conf_expected(const struct vms_conf_key *k, char *buf, size_t len);

#endif
