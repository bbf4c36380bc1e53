/* SPDX-License-Identifier: MIT */
/* export_rw.c - `vmsampler export --remote-write` (export_rw.h). */
#include "export_rw.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "metrics.h"
#include "remote_write.h"
#include "safefile.h"
#include "vms.h"

#include <vmsampler/reader.h>

#define MAXL 24 /* a series' own labels: domain, uuid, vcpu, ...; vmsampler_host_info's 16 */
#define MAXX 17 /* external labels: --label's 16 and instance */

/* One sample of the schema as a remote-write series. */
struct pser {
	char *key; /* name{labels} as the exposition writes it: the series' identity */
	char *name;
	struct vms_rw_label *l; /* its own labels, then the external ones it has not */
	uint8_t nl;
	char *lbuf;       /* the labels' names and values, unescaped */
	uint32_t lbytes;  /* their size in a request (an estimate) */
};

struct pstate {
	struct pser *s;
	uint32_t n;
	bool *was;       /* present in the previous frame */
	uint32_t *stamp; /* the batch it was last added to */
	uint32_t *order; /* indices sorted by key */
};

struct cursor {
	uint64_t first_seq, first_t, first_mono;
	uint64_t acked, acked_seq, acked_t;
	uint64_t inflight;
};

struct xrw {
	const struct vms_xrw_conf *c;
	struct vms_rw *w;
	struct vms_reader *rd;
	struct vms_mstate st;
	struct pstate ps;
	struct cursor cur;
	bool have_first;
	uint64_t dev, ino;
	uint64_t idx;        /* frames read */
	uint64_t batch_first, batch_last, batch_frames;
	uint64_t last_seq, last_t; /* of batch_last */
	uint32_t batchno;
	size_t batch_bytes;
	uint64_t batch_stale;
	int64_t last_ms;     /* the newest timestamp sent */
	bool outage;
	uint64_t failed_attempts;
	uint64_t missed;
	uint64_t stat[VMS_MMETA_N];
	struct vms_rw_label ext[MAXX]; /* external labels (--label, instance) */
	unsigned next;
	char *extbuf;
	char instance[256];
	bool instance_given, host_said;
};

static void stat_set(struct xrw *x, unsigned k, uint64_t v)
{
	x->stat[k] = v;
	if (x->c->stats)
		__atomic_store_n(&x->c->stats[k], v, __ATOMIC_RELAXED);
}

static void stat_add(struct xrw *x, unsigned k, uint64_t d)
{
	stat_set(x, k, x->stat[k] + d);
}

/* ---- the series of a schema ------------------------------------------------- */

static void pstate_free(struct pstate *p)
{
	for (uint32_t i = 0; i < p->n; i++) {
		free(p->s[i].key);
		free(p->s[i].name);
		free(p->s[i].lbuf);
		free(p->s[i].l);
	}
	free(p->s);
	free(p->was);
	free(p->stamp);
	free(p->order);
	memset(p, 0, sizeof(*p));
}

/* 'k="v",k2="v2"' (metrics.c's escaping: \\, \", \n) into s's labels,
 * then those of the nx external labels x whose names it has not */
static int parse_labels(struct pser *s, const char *labels, const struct vms_rw_label *x, unsigned nx)
{
	size_t len = strlen(labels);
	s->lbuf = malloc(len + 1);
	s->l = malloc((MAXL + nx) * sizeof(*s->l));
	if (!s->lbuf || !s->l)
		return -ENOMEM;
	char *o = s->lbuf;
	const char *p = labels;
	s->lbytes = 0;
	while (*p) {
		if (s->nl == MAXL)
			return -EINVAL;
		const char *eq = strchr(p, '=');
		if (!eq || eq[1] != '"')
			return -EINVAL;
		s->l[s->nl].name = o;
		memcpy(o, p, (size_t)(eq - p));
		o += eq - p;
		*o++ = '\0';
		p = eq + 2;
		s->l[s->nl].value = o;
		for (; *p && *p != '"'; p++) {
			if (*p == '\\' && p[1]) {
				p++;
				*o++ = *p == 'n' ? '\n' : *p;
			} else {
				*o++ = *p;
			}
		}
		if (*p != '"')
			return -EINVAL;
		*o++ = '\0';
		s->lbytes += (uint32_t)(strlen(s->l[s->nl].name) + strlen(s->l[s->nl].value) + 6);
		s->nl++;
		p++;
		if (*p == ',')
			p++;
	}
	uint8_t own = s->nl;
	for (unsigned k = 0; k < nx; k++) {
		bool has = false;
		for (uint8_t j = 0; j < own && !has; j++)
			has = !strcmp(s->l[j].name, x[k].name);
		if (has)
			continue; /* the series' own label wins, as over Prometheus' external_labels */
		s->l[s->nl++] = x[k];
		s->lbytes += (uint32_t)(strlen(x[k].name) + strlen(x[k].value) + 6);
	}
	return 0;
}

static const struct pstate *sort_ps;

static int by_key(const void *a, const void *b)
{
	return strcmp(sort_ps->s[*(const uint32_t *)a].key, sort_ps->s[*(const uint32_t *)b].key);
}

static int pstate_build(struct pstate *p, const struct vms_metrics *m, const struct vms_rw_label *x,
			unsigned nx)
{
	memset(p, 0, sizeof(*p));
	uint32_t n = m->nm ? m->nm : 1;
	p->s = calloc(n, sizeof(*p->s));
	p->was = calloc(n, sizeof(*p->was));
	p->stamp = calloc(n, sizeof(*p->stamp));
	p->order = calloc(n, sizeof(*p->order));
	if (!p->s || !p->was || !p->stamp || !p->order)
		return -ENOMEM;
	for (uint32_t i = 0; i < m->nm; i++) {
		const struct vms_mcol *c = &m->m[i];
		const struct vms_mfam *f = &vms_mfams[c->fam];
		const char *fname = vms_mcol_name(m, c);
		struct pser *s = &p->s[i];
		const char *sfx = f->type == VMS_MT_COUNTER ? "_total" : "";
		p->n = i + 1;
		if (asprintf(&s->key, "%s%s{%s}", fname, sfx, c->labels) < 0) {
			s->key = NULL;
			return -ENOMEM;
		}
		if (asprintf(&s->name, "%s%s", fname, sfx) < 0) {
			s->name = NULL;
			return -ENOMEM;
		}
		int e = parse_labels(s, c->labels, x, nx);
		if (e < 0)
			return e;
		p->order[i] = i;
	}
	p->n = m->nm;
	sort_ps = p;
	qsort(p->order, p->n, sizeof(*p->order), by_key);
	return 0;
}

static int64_t find_key(const struct pstate *p, const char *key)
{
	uint32_t lo = 0, hi = p->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = strcmp(p->s[p->order[mid]].key, key);
		if (!c)
			return p->order[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* ---- the cursor ------------------------------------------------------------- */

/* The directory of path, in buf ("." for a bare name) */
static const char *dir_of(const char *path, char *buf, size_t len)
{
	snprintf(buf, len, "%s", path);
	char *slash = strrchr(buf, '/');
	if (!slash)
		return ".";
	slash[slash == buf ? 1 : 0] = '\0';
	return buf;
}

static int cursor_write(struct xrw *x)
{
	const char *path = x->c->cursor;
	if (!path)
		return 0;
	char tmp[4096];
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	/* a new file of ours: never one someone else left at that name (in a
	 * sticky directory: another user's, to alter the cursor through) */
	(void)unlink(tmp);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int e = -errno;
		close(fd);
		unlink(tmp);
		return e;
	}
	const struct cursor *c = &x->cur;
	fprintf(f, "vmsampler-export-cursor 1\nurl %s\ndev %" PRIu64 " ino %" PRIu64 "\n", x->c->url, x->dev,
		x->ino);
	fprintf(f, "first %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", c->first_seq, c->first_t, c->first_mono);
	fprintf(f, "acked %" PRIu64 " %" PRIu64 " %" PRIu64 "\ninflight %" PRIu64 "\n", c->acked, c->acked_seq,
		c->acked_t, c->inflight);
	int e = 0;
	if (fflush(f) != 0 || fsync(fd) != 0)
		e = -errno;
	if (fclose(f) != 0 && !e)
		e = -errno;
	if (!e && rename(tmp, path) != 0)
		e = -errno;
	if (e) {
		unlink(tmp);
		return e;
	}
	/* the rename itself made durable */
	char dir[4096];
	int dfd = open(dir_of(path, dir, sizeof(dir)), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

/* 1 read, 0 none, -1 unreadable, -2 refused, malformed, another URL's or
 * in a directory where it cannot be written: a configuration error (said) */
static int cursor_read(struct xrw *x, struct cursor *c)
{
	const char *path = x->c->cursor;
	/* a regular file (safefile.h): a FIFO would hold the start for ever */
	char why[128];
	struct stat st;
	int fd = vms_safe_open(path, 0, 1 << 16, &st, why, sizeof(why));
	FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;
	if (!f && fd == -ENOENT) {
		/* a new one: its directory must take it (checked now, not at
		 * the first request) */
		char dir[4096];
		if (access(dir_of(path, dir, sizeof(dir)), W_OK | X_OK) == 0)
			return 0;
		int e = errno;
		vms_err("export: --rw-cursor %s: directory %s: %s", path, dir, strerror(e));
		return vms_safe_status(-e) == 2 ? -2 : -1;
	}
	if (!f) {
		if (fd >= 0)
			close(fd);
		vms_err("export: --rw-cursor %s: %s", path, fd < 0 ? why : strerror(errno));
		return fd < 0 ? -2 : -1; /* a path that is not a file: a configuration error */
	}
	char line[4200], url[4200] = "";
	int ver = 0, got = 0;
	memset(c, 0, sizeof(*c));
	while (fgets(line, sizeof(line), f)) {
		uint64_t a, b, d;
		if (sscanf(line, "vmsampler-export-cursor %d", &ver) == 1)
			got |= 1;
		else if (sscanf(line, "url %4199s", url) == 1)
			got |= 2;
		else if (sscanf(line, "first %" SCNu64 " %" SCNu64 " %" SCNu64, &a, &b, &d) == 3) {
			c->first_seq = a;
			c->first_t = b;
			c->first_mono = d;
			got |= 4;
		} else if (sscanf(line, "acked %" SCNu64 " %" SCNu64 " %" SCNu64, &a, &b, &d) == 3) {
			c->acked = a;
			c->acked_seq = b;
			c->acked_t = d;
			got |= 8;
		} else if (sscanf(line, "inflight %" SCNu64, &a) == 1) {
			c->inflight = a;
			got |= 16;
		}
	}
	fclose(f);
	if (got != 31 || ver != 1 || c->inflight < c->acked) {
		vms_err("export: --rw-cursor %s: not a cursor of vmsampler export (remove it to start over)", path);
		return -2;
	}
	if (strcmp(url, x->c->url) != 0) {
		vms_err("export: --rw-cursor %s counts for %s, not %s (give another cursor, or remove it to "
			"send everything again)", path, url, x->c->url);
		return -2;
	}
	return 1;
}

/* ---- sending -------------------------------------------------------------------- */

static void nap_ms(const struct xrw *x, unsigned ms)
{
	while (ms && !*x->c->stop) {
		unsigned step = ms < 100 ? ms : 100;
		struct timespec ts = {0, (long)step * 1000000L};
		nanosleep(&ts, NULL);
		ms -= step;
	}
}

static void totals(struct xrw *x)
{
	struct vms_rw_totals t;
	vms_rw_totals(x->w, &t);
	stat_set(x, VMS_MMETA_RW_SAMPLES, t.samples);
	stat_set(x, VMS_MMETA_RW_BATCHES, t.requests);
	stat_set(x, VMS_MMETA_RW_RETRIES, t.retries + x->failed_attempts);
	stat_set(x, VMS_MMETA_RW_DROPPED, t.dropped);
	stat_set(x, VMS_MMETA_RW_BYTES, t.wire_bytes);
}

/* Send the batch until it is delivered: 0, or -EINTR stopped,
 * -EREMOTEIO the receiver refuses everything (said, the cursor where it
 * was), -EPROTO not retryable, -ENOMEM, -EIO (the cursor). */
static int flush(struct xrw *x)
{
	if (!x->batch_frames)
		return 0;
	int e;
	uint64_t was_inflight = x->cur.inflight;
	x->cur.inflight = x->batch_last;
	if ((e = cursor_write(x)) < 0) {
		vms_err("export: --rw-cursor %s: %s", x->c->cursor, strerror(-e));
		return -EIO;
	}
	for (;;) {
		struct vms_rw_report rep;
		int r = vms_rw_send(x->w, &rep);
		totals(x);
		if (r == 0) {
			if (x->outage)
				vms_info("export: remote write: %s answers again (HTTP %ld); sending from frame %" PRIu64,
					 x->c->url, rep.status, x->batch_first);
			x->outage = false;
			if (rep.dropped) {
				stat_add(x, VMS_MMETA_RW_FAILURES, 1);
				vms_warn("export: remote write: frames %" PRIu64 "-%" PRIu64 ": %" PRIu64 " samples refused "
					 "by the receiver and dropped, the others delivered; the first: %s",
					 x->batch_first, x->batch_last, rep.dropped, rep.error);
			}
			break;
		}
		if (r == -EREMOTEIO) {
			/* a setup error: nothing of it is dropped, and the
			 * cursor says what it said before the batch */
			stat_add(x, VMS_MMETA_RW_FAILURES, 1);
			x->cur.inflight = was_inflight;
			if ((e = cursor_write(x)) < 0) {
				vms_err("export: --rw-cursor %s: %s", x->c->cursor, strerror(-e));
				return -EIO;
			}
			vms_err("export: remote write: %s; stopped with frames from %" PRIu64 " unsent (%s)", rep.error,
				x->batch_first,
				x->c->cursor ? "the cursor keeps them: a restart sends them"
					     : "no --rw-cursor: a restart sends the input from its start");
			return r;
		}
		if (r == -EAGAIN) {
			stat_add(x, VMS_MMETA_RW_FAILURES, 1);
			x->failed_attempts++; /* the last attempt of the request, retried below */
			totals(x);
			if (!x->outage)
				vms_warn("export: remote write: %s; frames from %" PRIu64
					 " kept and sent again until it answers", rep.error, x->batch_first);
			x->outage = true;
			nap_ms(x, 5000);
			if (*x->c->stop)
				return -EINTR;
			continue;
		}
		if (r == -EPROTO) {
			vms_err("export: remote write: %s (not retried)", rep.error);
			return r;
		}
		if (r == -EINTR)
			return r;
		vms_err("export: remote write: %s", rep.error[0] ? rep.error : strerror(-r));
		return r;
	}
	stat_add(x, VMS_MMETA_RW_FRAMES, x->batch_frames);
	stat_add(x, VMS_MMETA_RW_STALE, x->batch_stale);
	x->cur.acked = x->batch_last;
	x->cur.acked_seq = x->last_seq;
	x->cur.acked_t = x->last_t;
	x->cur.inflight = x->batch_last;
	if ((e = cursor_write(x)) < 0) {
		vms_err("export: --rw-cursor %s: %s", x->c->cursor, strerror(-e));
		return -EIO;
	}
	x->batch_frames = 0;
	x->batch_bytes = 0;
	x->batch_stale = 0;
	x->batchno++;
	return 0;
}

static int add(struct xrw *x, uint32_t i, double v, int64_t t_ms)
{
	struct pser *s = &x->ps.s[i];
	int e = vms_rw_add(x->w, s->name, s->l, s->nl, v, t_ms);
	if (e == -ENOMEM)
		return e;
	if (e < 0)
		return 0; /* a name remote write refuses: cannot be, metrics.c's names are valid */
	if (x->ps.stamp[i] != x->batchno + 1) {
		x->ps.stamp[i] = x->batchno + 1;
		x->batch_bytes += s->lbytes + strlen(s->name) + 16;
	}
	x->batch_bytes += 19; /* a Sample: a double, a timestamp, tags */
	return 0;
}

/* --label's external labels into x->ext, instance last (its value set by
 * instance_of): 0 or -ENOMEM */
static int ext_labels(struct xrw *x)
{
	const struct vms_xrw_conf *c = x->c;
	size_t len = 0;
	for (unsigned k = 0; k < c->nlabels; k++)
		len += strlen(c->labels[k]) + 1;
	x->extbuf = malloc(len ? len : 1);
	if (!x->extbuf)
		return -ENOMEM;
	char *o = x->extbuf;
	for (unsigned k = 0; k < c->nlabels && x->next < MAXX - 1; k++) {
		size_t n = strlen(c->labels[k]) + 1;
		memcpy(o, c->labels[k], n);
		char *eq = strchr(o, '=');
		if (!eq)
			continue; /* the caller checked: cannot be */
		*eq = '\0';
		x->ext[x->next++] = (struct vms_rw_label){o, eq + 1};
		if (!strcmp(o, "instance"))
			x->instance_given = true;
		o += n;
	}
	if (!x->instance_given)
		x->ext[x->next++] = (struct vms_rw_label){"instance", x->instance};
	return 0;
}

/* instance: the hostname the input recorded (its HOST record, read with
 * the schema), or this machine's when it has none (said once) */
static void instance_of(struct xrw *x)
{
	if (x->instance_given)
		return;
	const char *h = vms_reader_host(x->rd, "hostname");
	if (h && *h) {
		snprintf(x->instance, sizeof(x->instance), "%s", h);
		return;
	}
	if (x->instance[0])
		return; /* said already: the same machine */
	if (gethostname(x->instance, sizeof(x->instance) - 1) != 0 || !x->instance[0])
		snprintf(x->instance, sizeof(x->instance), "localhost");
	if (!x->host_said)
		vms_info("export: %s records no hostname (a vmsampler older than format 1.1): instance=\"%s\", "
			 "this machine's (--label instance=NAME names another)", x->c->input, x->instance);
	x->host_said = true;
}

/* A new schema: its series; those of the old one present in the previous
 * frame but not in the new schema get a staleness marker now (push). */
static int new_series(struct xrw *x, bool push, int64_t t_ms)
{
	struct pstate np;
	instance_of(x);
	int e = pstate_build(&np, &x->st.m, x->ext, x->next);
	if (e < 0) {
		pstate_free(&np);
		return e;
	}
	for (uint32_t i = 0; i < x->ps.n; i++) {
		if (!x->ps.was[i])
			continue;
		int64_t j = find_key(&np, x->ps.s[i].key);
		if (j >= 0) {
			np.was[j] = true;
			continue;
		}
		if (push) {
			if ((e = add(x, i, vms_rw_stale_nan(), t_ms)) < 0) {
				pstate_free(&np);
				return e;
			}
			x->batch_stale++;
		}
	}
	pstate_free(&x->ps);
	x->ps = np;
	x->ps.n = np.n;
	return 0;
}

/* The current frame (taken into st): its samples into the batch (push),
 * or only its series' presence (a frame before the cursor). */
static int frame(struct xrw *x, bool push)
{
	uint64_t t = x->st.meta[VMS_MMETA_TIME];
	if (t == VMS_NONE)
		return 0; /* no wall time: nothing to stamp the samples with */
	int64_t t_ms = (int64_t)(t / 1000000);
	if (x->last_ms && t_ms <= x->last_ms)
		return 0; /* the same millisecond as the frame before: remote write cannot tell them apart */
	int e;
	if (x->st.fresh) {
		if ((e = new_series(x, push, t_ms)) < 0)
			return e;
		x->st.fresh = false;
	}
	for (uint32_t i = 0; i < x->ps.n; i++) {
		double v = vms_mcol_value(&x->st.m.m[i], x->st.cur, x->st.meta);
		bool present = !isnan(v);
		if (push && (present || x->ps.was[i])) {
			if ((e = add(x, i, present ? v : vms_rw_stale_nan(), t_ms)) < 0)
				return e;
			if (!present)
				x->batch_stale++;
		}
		x->ps.was[i] = present;
	}
	x->last_ms = t_ms;
	return 1;
}

/* ---- the loop ---------------------------------------------------------------------- */

static int run(struct xrw *x)
{
	const struct vms_xrw_conf *c = x->c;
	unsigned max_frames = c->batch_frames ? c->batch_frames : VMS_XRW_BATCH_FRAMES;
	size_t max_bytes = c->batch_bytes ? c->batch_bytes : VMS_XRW_BATCH_BYTES;
	bool ring = vms_reader_kind(x->rd) == VMS_READER_RING;
	uint64_t iv = vms_reader_interval_ns(x->rd);
	unsigned pause_ms = ring && iv ? (unsigned)(iv / 4000000) : 100;
	pause_ms = pause_ms < 1 ? 1 : pause_ms > 250 ? 250 : pause_ms;
	struct cursor saved;
	int have_cursor = c->cursor ? cursor_read(x, &saved) : 0;
	if (have_cursor < 0)
		return have_cursor == -2 ? 2 : 1;
	vms_info("export: remote write of %s to %s%s%s", c->input, c->url, c->cursor ? ", cursor " : "",
		 c->cursor ? c->cursor : "");

	while (!*c->stop) {
		int r = vms_reader_next(x->rd);
		if (ring && vms_reader_missed(x->rd) != x->missed) {
			uint64_t m = vms_reader_missed(x->rd);
			vms_warn("export: remote write: %" PRIu64 " frames of %s were overwritten before they "
				 "could be read and are lost (a ring cannot replay; --file can)",
				 m - x->missed, c->input);
			stat_add(x, VMS_MMETA_RW_LOST, m - x->missed);
			x->missed = m;
		}
		if (r > 0) {
			int e = vms_mstate_take(&x->st, x->rd);
			if (e < 0) {
				vms_err("export: %s", strerror(-e));
				return 1;
			}
			vms_mstate_reader(&x->st, x->rd);
			const struct vms_frame *f = vms_reader_frame(x->rd);
			x->idx++;
			if (!x->have_first) {
				x->have_first = true;
				x->cur.first_seq = f->seq;
				x->cur.first_t = (uint64_t)f->t_real_ns;
				x->cur.first_mono = f->t_mono_ns;
				if (have_cursor && (saved.first_seq != f->seq || saved.first_t != (uint64_t)f->t_real_ns ||
						    saved.first_mono != f->t_mono_ns)) {
					vms_warn("export: --rw-cursor %s is of another stream than %s (a new file?): "
						 "sending it from its first frame", c->cursor, c->input);
					have_cursor = 0;
				}
				if (have_cursor)
					x->cur = saved;
			}
			bool push = x->idx > x->cur.acked;
			if (!push && x->idx == x->cur.acked &&
			    (f->seq != x->cur.acked_seq || (uint64_t)f->t_real_ns != x->cur.acked_t)) {
				vms_err("export: --rw-cursor %s: frame %" PRIu64 " of %s is seq %" PRIu64
					 ", the cursor says seq %" PRIu64 " (the file was rewritten; remove the "
					 "cursor to send it all again)", c->cursor, x->idx, c->input, f->seq,
					 x->cur.acked_seq);
				return 1;
			}
			if ((e = frame(x, push)) < 0) {
				vms_err("export: %s", strerror(-e));
				return 1;
			}
			if (!push)
				continue;
			if (e > 0) {
				if (!x->batch_frames)
					x->batch_first = x->idx;
				x->batch_frames++;
			}
			x->batch_last = x->idx;
			x->last_seq = f->seq;
			x->last_t = (uint64_t)f->t_real_ns;
			/* a request cut short by a kill is sent again with the same frames */
			bool cut = x->cur.inflight > x->cur.acked && x->idx == x->cur.inflight;
			if (cut || x->batch_frames >= max_frames || x->batch_bytes >= max_bytes)
				if ((e = flush(x)) < 0)
					return e == -EINTR ? 0 : 1;
			continue;
		}
		if (r == 0 && x->idx < x->cur.acked) {
			vms_err("export: --rw-cursor %s acknowledged %" PRIu64 " frames, %s has %" PRIu64
				" (the file was cut or rewritten; remove the cursor to send it all again)",
				c->cursor, x->cur.acked, c->input, x->idx);
			return 1;
		}
		/* at the end of what there is: send what is waiting */
		if (r == 0 || r == -ESRCH) {
			if (x->batch_last > x->cur.acked) {
				if (!x->batch_frames) { /* only skipped frames: nothing to send */
					x->cur.acked = x->cur.inflight = x->batch_last;
					x->cur.acked_seq = x->last_seq;
					x->cur.acked_t = x->last_t;
				} else {
					int e = flush(x);
					if (e < 0)
						return e == -EINTR ? 0 : 1;
				}
			}
		}
		if (r == 0) {
			if (!ring && !c->follow && vms_reader_eof(x->rd))
				return 0;
			struct timespec ts = {0, (long)pause_ms * 1000000L};
			nanosleep(&ts, NULL);
			continue;
		}
		if (r == -ESRCH && vms_reader_writer(x->rd) == 1) {
			vms_info("export: %s: %s", c->input, vms_reader_error(x->rd));
			return 0;
		}
		vms_err("export: %s: %s", c->input, vms_reader_error(x->rd));
		return r == -ENOTSUP ? 2 : 1; /* another major version of the format: 2 */
	}
	return 0;
}

int vms_xrw_run(const struct vms_xrw_conf *c)
{
	struct xrw x = {.c = c};
	for (unsigned k = VMS_MMETA_RW_FRAMES; k < VMS_MMETA_N; k++)
		stat_set(&x, k, 0);
	vms_mstate_init(&x.st, c->user_hz);
	if (c->mopts)
		x.st.opts = *c->mopts;
	if (ext_labels(&x) < 0) {
		vms_err("export: %s", strerror(ENOMEM));
		vms_mstate_free(&x.st);
		return 1;
	}
	struct vms_rw_conf rc = {
		.url = c->url,
		.retries = 4,
		.backoff_ms = 250,
		.backoff_max_ms = 4000,
		.username = c->username,
		.password = c->password,
		.bearer_token = c->bearer,
		.ca_file = c->ca_file,
		.stop = c->stop,
	};
	int rv = 1;
	int e = vms_rw_new(&x.w, &rc);
	if (e < 0) {
		vms_err("export: remote write: cannot start libcurl: %s", strerror(-e));
		goto out;
	}
	e = vms_reader_open(&x.rd, c->input, c->follow ? VMS_READER_FOLLOW_NAME : 0);
	if (e < 0) {
		vms_err("export: %s", x.rd ? vms_reader_error(x.rd) : strerror(-e));
		rv = vms_safe_status(e);
		goto out;
	}
	struct stat sb;
	if (stat(c->input, &sb) == 0) {
		x.dev = (uint64_t)sb.st_dev;
		x.ino = (uint64_t)sb.st_ino;
	}
	rv = run(&x);
	if (x.stat[VMS_MMETA_RW_DROPPED])
		vms_warn("export: remote write: %" PRIu64 " samples in all refused by the receiver and dropped "
			 "(vmsampler_export_rw_dropped_samples_total)", x.stat[VMS_MMETA_RW_DROPPED]);
out:
	vms_mstate_free(&x.st);
	pstate_free(&x.ps);
	vms_reader_close(x.rd);
	vms_rw_free(x.w);
	free(x.extbuf);
	return rv;
}
