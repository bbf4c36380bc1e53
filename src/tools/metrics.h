/* SPDX-License-Identifier: MIT */
/* metrics.h - vmsampler's columns as Prometheus metrics: one naming scheme
 * for every exporter (`vmsampler export`'s /metrics, and any push format).
 *
 * A schema's columns map to metric families (a name, a TYPE, a HELP, a
 * unit) and, per column, the family, its label pairs and the factor that
 * turns the raw value into the family's base unit (seconds, bytes).  Where
 * node_exporter or the libvirt exporter has the same quantity the family
 * is theirs, with their name, unit and labels (node_cpu_seconds_total
 * {cpu,mode}, node_disk_read_bytes_total{device},
 * libvirt_domain_info_cpu_time_seconds_total{domain,uuid}, ...); the rest
 * is vmsampler_*.  The table of every family is vms_mfams[] (and
 * vmsampler(1), EXPORT).
 *
 *   struct vms_metrics m;
 *   vms_metrics_build(&m, reader, sysconf(_SC_CLK_TCK));   // per schema
 *   vms_metrics_expose(&m, values, &meta, VMS_EXPO_PROM, false, &buf);
 *
 * A missing value (VMS_NONE) is left out of the exposition, never 0. */
#ifndef VMS_METRICS_H
#define VMS_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vms_reader;

enum vms_mtype {
	VMS_MT_COUNTER = 1, /* name without "_total"; samples get it */
	VMS_MT_GAUGE = 2,
	VMS_MT_UNTYPED = 3, /* as node_exporter's vmstat: untyped (OpenMetrics unknown), no suffix */
};

struct vms_mfam {
	const char *name;   /* counters: without the _total suffix */
	uint8_t type;       /* enum vms_mtype */
	const char *unit;   /* base unit ("seconds", "bytes") or "" */
	const char *labels; /* label names, comma-separated (documentation) */
	const char *help;
	const char *source; /* the columns it comes from (documentation) */
};

/* The families, in exposition order; indices are enum vms_mfam_id. */
extern const struct vms_mfam vms_mfams[];
extern const unsigned vms_nmfams;

/* One exported sample of a schema: column col (or, for the frame's own
 * families, VMS_MCOL_META + enum vms_mmeta) as family fam with labels,
 * value = raw * mul / div. */
struct vms_mcol {
	uint32_t col;
	uint16_t fam;
	bool hold;      /* a slow value: the last known one stands until the next */
	bool age;       /* the value is (frame time - raw) / 1e9: an age in seconds */
	bool timedout;  /* the value is 1 when that age is over VMS_SLOW_TIMEOUT_S, else 0 */
	bool match;     /* present only while raw == want (one series per state) */
	uint8_t want;
	double mul, div;
	uint32_t *fold; /* more columns summed into this sample (the interference
			 * bucket: a domain's culprits beyond its top N), or NULL */
	uint32_t nfold;
	uint64_t foff;  /* the bucket: added to its sum, so that it never goes
			 * down when its members change (vms_mstate) */
	uint32_t grp;   /* the interference samples: their domain (1, 2, ...), 0: none */
	char *labels;   /* 'k="v",k2="v2"', escaped; "" for none */
	char *name;     /* the family's name for this sample (node_vmstat_KEY), or NULL */
};

/* libvirt_domain_timed_out: the slow values are older than this (3 times
 * the default sources.libvirt.refresh) */
#define VMS_SLOW_TIMEOUT_S 180

/* What export exposes: the name set, and the families kept. */
enum vms_names {
	VMS_NAMES_CURRENT = 0, /* node_exporter >= 1.9, the maintained libvirt exporter (2023 on) */
	VMS_NAMES_LEGACY = 1,  /* vmsampler 1.x's: node_exporter 1.5, kumina's libvirt exporter */
};
struct vms_mopts {
	uint8_t names;              /* enum vms_names */
	bool no_per_cpu;            /* leave out the per-CPU series (the all-CPU ones stay) */
	const char *const *include; /* family globs: only these (none: all) */
	unsigned ninclude;
	const char *const *exclude; /* family globs: not these */
	unsigned nexclude;
	/* --interference-top N: per domain, the N other VMs it waited behind
	 * longest get a series each, the rest one bucket (not set: the default) */
	bool intf_top_set;
	unsigned intf_top;
};
#define VMS_INTF_TOP_DEFAULT 3

/* The name of family fam in a name set. */
const char *vms_mfam_name(unsigned fam, unsigned names);
/* Does a glob name a family?  (Its name, or a counter's with _total.) */
bool vms_mfam_glob_ok(const char *glob);

#define VMS_MCOL_META 0x80000000u

/* The frame's own values, not columns: what the exporter knows of the
 * frame and of its own reading. */
enum vms_mmeta {
	VMS_MMETA_TIME,        /* gauge: the frame's wall time, ns since the epoch */
	VMS_MMETA_SEQ,         /* the frame's sequence number */
	VMS_MMETA_GEN,         /* its schema generation */
	VMS_MMETA_LATE,        /* how late its tick ran, ns */
	VMS_MMETA_MISSED,      /* missed ticks, summed over the frames read */
	VMS_MMETA_LOST,        /* lost frames, summed over the frames read */
	VMS_MMETA_SELF_CPU,    /* the sampler's CPU, ns, summed over the frames read */
	VMS_MMETA_INTERVAL,    /* the sampling interval, ns (0: unknown) */
	VMS_MMETA_READ,        /* frames the exporter read */
	VMS_MMETA_RMISSED,     /* frames the exporter missed (overwritten in the ring) */
	VMS_MMETA_UNMAPPED,    /* columns of the schema no family takes */
	VMS_MMETA_FILTERED,    /* samples the options left out */
	/* export's judgement of its input (VMS_NONE where not judged) */
	VMS_MMETA_SOURCE_UP,   /* 1 frames come, 0 none for a while (stale) */
	VMS_MMETA_FRAME_AGE,   /* ns since the newest frame's time */
	VMS_MMETA_HOST_INFO,   /* 1 when the input recorded its host (the labels: its HOST record) */
	/* export --remote-write's own counters (VMS_NONE without it) */
	VMS_MMETA_RW_FRAMES,   /* frames acknowledged by the receiver */
	VMS_MMETA_RW_SAMPLES,  /* samples acknowledged */
	VMS_MMETA_RW_STALE,    /* staleness markers among them */
	VMS_MMETA_RW_BATCHES,  /* requests acknowledged */
	VMS_MMETA_RW_RETRIES,  /* attempts retried (5xx, 429, timeouts, connections) */
	VMS_MMETA_RW_FAILURES, /* batches with samples dropped, refused, or out of retries */
	VMS_MMETA_RW_DROPPED,  /* samples the receiver refused on their own, dropped */
	VMS_MMETA_RW_BYTES,    /* request bytes acknowledged (snappy) */
	VMS_MMETA_RW_LOST,     /* ring frames the pusher lost (overwritten before read) */
	VMS_MMETA_N
};

struct vms_metrics {
	struct vms_mcol *m; /* sorted by family, then column */
	uint32_t nm;
	uint32_t ncols;     /* the schema's columns */
	uint32_t unmapped;  /* columns left out (no family knows them) */
	uint32_t filtered;  /* samples left out by the options (--include, --exclude, --no-per-cpu) */
	uint8_t names;      /* enum vms_names */
};

/* The exposed family name of sample s of m. */
const char *vms_mcol_name(const struct vms_metrics *m, const struct vms_mcol *s);

struct vms_colid;
/* Map one column (its identity, entity key and scale as in the schema) to
 * out[] (labels allocated) in name set `names`: the number of samples (0:
 * not mapped), or -ENOMEM.  A column may yield several (vm.NAME.slow_t: a
 * time, an age and the timed-out flag; vm.NAME.state: one per state):
 * out must have room for VMS_MMAP_MAX. */
#define VMS_MMAP_MAX 8
int vms_metrics_map(const struct vms_colid *id, const char *key, int scale, double user_hz, unsigned names,
		    struct vms_mcol *out);
/* A Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*, metric) or label
 * name ([a-zA-Z_][a-zA-Z0-9_]*); names starting with "__" are reserved
 * (the caller refuses them where it must).  Inline: remote_write.c, a
 * library of its own, has it too. */
static inline bool vms_mname_ok(const char *s, bool metric)
{
	if (!s || !*s)
		return false;
	for (const char *p = s; *p; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
			  (metric && c == ':') || (p != s && c >= '0' && c <= '9');
		if (!ok)
			return false;
	}
	return true;
}
/* The i-th family renamed in --names legacy: its legacy name and *fam, or NULL. */
const char *vms_metrics_legacy_name(unsigned i, unsigned *fam);
/* The samples of the reader's current schema (opts NULL: the defaults):
 * 0 or -ENOMEM.  The culprit VMs of each domain's interference
 * (vm.NAME.intf.by.OTHER, and the estimate's vm.NAME.intfest.by.OTHER,
 * apart) are ranked by their counters in the reader's current frame: the
 * top N keep their series, the others are summed into one sample of
 * vmsampler_domain_interference_by_other_vms_seconds (the estimate's:
 * ..._estimate_by_other_vms_seconds), so that a host of V VMs has at most
 * V x (N + 1) of each.  Following
 * a stream (vms_mstate), the ranking is made again when a culprit outside
 * the top N passes one inside it by more than 1/8 (and at each new
 * generation); the bucket then goes on from the value it had (at most one
 * interval of its members' growth is not counted), so it never goes
 * down. */
int vms_metrics_build(struct vms_metrics *m, const struct vms_reader *r, double user_hz,
		      const struct vms_mopts *opts);

/* Columns no family takes on purpose: group, field ("" every field of the
 * group), why.  vmsampler(1) EXPORT lists them; the coverage test checks
 * that every other column of a run maps to a family. */
struct vms_mexcl {
	uint8_t group;
	const char *field;
	const char *why;
};
extern const struct vms_mexcl vms_mexcl[];
extern const unsigned vms_nmexcl;
/* The exclusion entry of an identity, or NULL. */
const struct vms_mexcl *vms_metrics_excluded(const struct vms_colid *id);
void vms_metrics_free(struct vms_metrics *m);
/* A deep copy (labels and names): 0, or -ENOMEM with *dst freeable. */
int vms_metrics_copy(struct vms_metrics *dst, const struct vms_metrics *src);

/* Following a stream frame by frame (what an exporter keeps): the samples
 * of the current schema, the values with the slow ones held (a sample
 * with .hold keeps its last known value while the frames have none, also
 * across a new schema with the same column), and the frame's own values
 * (vms_mmeta) summed over the frames taken. */
struct vms_mstate {
	struct vms_metrics m;
	uint64_t *cur;      /* the values to expose, m.ncols of them */
	bool *hold;
	char **hname;       /* held columns' names */
	uint32_t ncols;
	uint64_t meta[VMS_MMETA_N];
	uint64_t frames;    /* taken */
	bool fresh;         /* m is new since the caller last cleared it */
	double user_hz;
	struct vms_mopts opts; /* set after vms_mstate_init (zero: the defaults) */
};
void vms_mstate_init(struct vms_mstate *st, double user_hz);
/* Take the reader's current frame: 0 or -ENOMEM. */
int vms_mstate_take(struct vms_mstate *st, const struct vms_reader *r);
/* The reader's own counts into meta (interval, frames read and missed,
 * unmapped columns), before exposing. */
void vms_mstate_reader(struct vms_mstate *st, const struct vms_reader *r);
void vms_mstate_free(struct vms_mstate *st);

/* A growing text buffer. */
struct vms_mbuf {
	char *p;
	size_t len, cap;
	bool oom;
};
void vms_mbuf_free(struct vms_mbuf *b);

enum vms_expo {
	VMS_EXPO_PROM = 0,        /* text format 0.0.4 */
	VMS_EXPO_OPENMETRICS = 1, /* OpenMetrics 1.0.0 */
};
#define VMS_EXPO_PROM_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define VMS_EXPO_OPENMETRICS_TYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* Which format an HTTP Accept header asks for (NULL: the Prometheus text). */
enum vms_expo vms_expo_negotiate(const char *accept);

/* Append the exposition of one frame: v[] the values of m's schema
 * (VMS_NONE: absent; v NULL: only the samples of meta), meta[] the frame's own (VMS_NONE: absent); with
 * stamp, every sample stamped with meta[VMS_MMETA_TIME], else none (the
 * scraper stamps them with the scrape's time, and its staleness handling
 * ends a series at the first scrape without it).  HELP and TYPE for every
 * family that has a sample; OpenMetrics ends with "# EOF".  0 or -ENOMEM. */
int vms_metrics_expose(const struct vms_metrics *m, const uint64_t *v, const uint64_t *meta,
		       enum vms_expo fmt, bool stamp, struct vms_mbuf *out);

/* What export makes of each column of the reader's current schema, one
 * line each: "COLUMN\tFAMILY{LABELS}" per sample, "COLUMN\t-\tfiltered"
 * (the options left it out), "COLUMN\t-\texcluded: WHY" (vms_mexcl) or
 * "COLUMN\t-\tunmapped".  0 or -ENOMEM. */
int vms_metrics_list(const struct vms_reader *r, double user_hz, const struct vms_mopts *o, struct vms_mbuf *out);

/* The value of sample s as the exposition prints it (NAN: absent). */
double vms_mcol_value(const struct vms_mcol *s, const uint64_t *v, const uint64_t *meta);

#endif
