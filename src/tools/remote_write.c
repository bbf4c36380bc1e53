/* SPDX-License-Identifier: MIT */
#include "remote_write.h"

#include <curl/curl.h>
#include <errno.h>
#include <snappy-c.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grow.h"
#include "metrics.h"
#include "prompb.pb-c.h"
#include "vms_build.h"

struct rw_sample {
	double v;
	int64_t t;
};

struct rw_series {
	char *blob;       /* name\0value\0... sorted by name */
	size_t bloblen;
	uint32_t nlabels;
	uint64_t hash;
	struct rw_sample *s;
	uint32_t n, cap;
};

struct vms_rw {
	struct vms_rw_conf conf;
	CURL *curl;
	struct curl_slist *hdrs;
	struct rw_series *series;
	uint32_t nseries, capseries;
	uint32_t *table;  /* open addressing: series index + 1, 0 empty */
	uint32_t tcap;    /* a power of two */
	uint64_t pending;
	struct vms_rw_totals tot;
	char resp[256];   /* the start of the last response's body */
	size_t resplen;
};

double vms_rw_stale_nan(void)
{
	uint64_t bits = 0x7ff0000000000002ull;
	double d;
	memcpy(&d, &bits, sizeof(d));
	return d;
}

/* ---- names -------------------------------------------------------------- */

static uint64_t fnv1a(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 1099511628211ull;
	}
	return h;
}

static int cmp_label(const void *a, const void *b)
{
	return strcmp(((const struct vms_rw_label *)a)->name, ((const struct vms_rw_label *)b)->name);
}

/* ---- the batch ------------------------------------------------------------ */

static int grow_table(struct vms_rw *w)
{
	uint32_t cap = w->tcap ? 2 * w->tcap : 256;
	uint32_t *t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (uint32_t i = 0; i < w->nseries; i++) {
		uint32_t k = (uint32_t)w->series[i].hash & (cap - 1);
		while (t[k])
			k = (k + 1) & (cap - 1);
		t[k] = i + 1;
	}
	free(w->table);
	w->table = t;
	w->tcap = cap;
	return 0;
}

int vms_rw_add(struct vms_rw *w, const char *name, const struct vms_rw_label *labels, size_t nlabels,
	       double value, int64_t t_ms)
{
	if (!vms_mname_ok(name, true) || nlabels > 64)
		return -EINVAL;
	struct vms_rw_label l[65];
	size_t n = 0;
	l[n++] = (struct vms_rw_label){"__name__", name};
	for (size_t i = 0; i < nlabels; i++) {
		if (!vms_mname_ok(labels[i].name, false) || strncmp(labels[i].name, "__", 2) == 0 || !labels[i].value)
			return -EINVAL;
		if (labels[i].value[0])
			l[n++] = labels[i];
	}
	qsort(l, n, sizeof(l[0]), cmp_label);
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && strcmp(l[i].name, l[i - 1].name) == 0)
			return -EINVAL;
		len += strlen(l[i].name) + strlen(l[i].value) + 2;
	}
	char stackblob[4096], *blob = len <= sizeof(stackblob) ? stackblob : malloc(len);
	if (!blob)
		return -ENOMEM;
	char *p = blob;
	for (size_t i = 0; i < n; i++) {
		size_t a = strlen(l[i].name) + 1, b = strlen(l[i].value) + 1;
		memcpy(p, l[i].name, a);
		memcpy(p + a, l[i].value, b);
		p += a + b;
	}
	uint64_t h = fnv1a(blob, len);
	int r = 0;
	if (2 * (w->nseries + 1) > w->tcap && (r = grow_table(w)) < 0)
		goto out;
	uint32_t k = (uint32_t)h & (w->tcap - 1);
	struct rw_series *s = NULL;
	for (; w->table[k]; k = (k + 1) & (w->tcap - 1)) {
		struct rw_series *c = &w->series[w->table[k] - 1];
		if (c->hash == h && c->bloblen == len && memcmp(c->blob, blob, len) == 0) {
			s = c;
			break;
		}
	}
	if (!s) {
		struct rw_series *ns = vms_grow_array(w->series, &w->capseries, w->nseries + 1, sizeof(*ns), 64);
		char *copy = ns ? malloc(len) : NULL;
		if (ns)
			w->series = ns;
		if (!copy) {
			r = -ENOMEM;
			goto out;
		}
		memcpy(copy, blob, len);
		s = &w->series[w->nseries];
		*s = (struct rw_series){.blob = copy, .bloblen = len, .nlabels = (uint32_t)n, .hash = h};
		w->table[k] = ++w->nseries;
	}
	struct rw_sample *ss = vms_grow_array(s->s, &s->cap, s->n + 1, sizeof(*ss), 4);
	if (!ss) {
		r = -ENOMEM;
		goto out;
	}
	s->s = ss;
	s->s[s->n++] = (struct rw_sample){value, t_ms};
	w->pending++;
out:
	if (blob != stackblob)
		free(blob);
	return r;
}

uint64_t vms_rw_pending(const struct vms_rw *w)
{
	return w->pending;
}

uint64_t vms_rw_pending_series(const struct vms_rw *w)
{
	return w->nseries;
}

void vms_rw_clear(struct vms_rw *w)
{
	for (uint32_t i = 0; i < w->nseries; i++) {
		free(w->series[i].blob);
		free(w->series[i].s);
	}
	w->nseries = 0;
	w->pending = 0;
	if (w->table)
		memset(w->table, 0, w->tcap * sizeof(*w->table));
}

/* ---- encoding ------------------------------------------------------------- */

/* The samples [lo, hi) of the batch, counted series by series in the
 * order they were added (the "flat" order the splitting of a refused
 * request halves), as a request body. */
static int encode_range(const struct vms_rw *w, uint64_t lo, uint64_t hi, void **body, size_t *len, size_t *raw)
{
	*body = NULL;
	*len = *raw = 0;
	size_t nl = 0;
	for (uint32_t i = 0; i < w->nseries; i++)
		nl += w->series[i].nlabels;
	Prometheus__TimeSeries *ts = calloc(w->nseries + 1, sizeof(*ts));
	Prometheus__TimeSeries **tsp = calloc(w->nseries + 1, sizeof(*tsp));
	Prometheus__Label *lab = calloc(nl + 1, sizeof(*lab));
	Prometheus__Label **labp = calloc(nl + 1, sizeof(*labp));
	Prometheus__Sample *smp = calloc(hi - lo + 1, sizeof(*smp));
	Prometheus__Sample **smpp = calloc(hi - lo + 1, sizeof(*smpp));
	uint8_t *pb = NULL;
	char *out = NULL;
	int r = -ENOMEM;
	if (!ts || !tsp || !lab || !labp || !smp || !smpp)
		goto done;
	size_t li = 0, si = 0, nts = 0;
	uint64_t at = 0; /* the flat index of the series' first sample */
	for (uint32_t i = 0; i < w->nseries; at += w->series[i].n, i++) {
		const struct rw_series *s = &w->series[i];
		uint64_t a = at > lo ? at : lo, b = at + s->n < hi ? at + s->n : hi;
		if (a >= b)
			continue;
		Prometheus__TimeSeries *t = &ts[nts];
		prometheus__time_series__init(t);
		tsp[nts++] = t;
		t->n_labels = s->nlabels;
		t->labels = &labp[li];
		char *p = s->blob;
		for (uint32_t k = 0; k < s->nlabels; k++) {
			Prometheus__Label *l = &lab[li];
			prometheus__label__init(l);
			l->name = p;
			p += strlen(p) + 1;
			l->value = p;
			p += strlen(p) + 1;
			labp[li++] = l;
		}
		t->n_samples = (size_t)(b - a);
		t->samples = &smpp[si];
		for (uint64_t k = a - at; k < b - at; k++) {
			Prometheus__Sample *m = &smp[si];
			prometheus__sample__init(m);
			m->value = s->s[k].v;
			m->timestamp = s->s[k].t;
			smpp[si++] = m;
		}
	}
	Prometheus__WriteRequest req = PROMETHEUS__WRITE_REQUEST__INIT;
	req.n_timeseries = nts;
	req.timeseries = tsp;
	size_t n = prometheus__write_request__get_packed_size(&req);
	pb = malloc(n ? n : 1);
	if (!pb)
		goto done;
	prometheus__write_request__pack(&req, pb);
	size_t clen = snappy_max_compressed_length(n);
	out = malloc(clen ? clen : 1);
	if (!out)
		goto done;
	if (snappy_compress((const char *)pb, n, out, &clen) != SNAPPY_OK) {
		r = -ENOMEM; /* only a buffer too small fails, which cannot be */
		goto done;
	}
	*body = out;
	out = NULL;
	*len = clen;
	*raw = n;
	r = 0;
done:
	free(out);
	free(pb);
	free(ts);
	free(tsp);
	free(lab);
	free(labp);
	free(smp);
	free(smpp);
	return r;
}

int vms_rw_encode(const struct vms_rw *w, void **body, size_t *len, size_t *raw)
{
	return encode_range(w, 0, w->pending, body, len, raw);
}

/* ---- sending -------------------------------------------------------------- */

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct vms_rw *w = arg;
	size_t n = size * nmemb, room = sizeof(w->resp) - 1 - w->resplen;
	memcpy(w->resp + w->resplen, data, n < room ? n : room);
	w->resplen += n < room ? n : room;
	return n;
}

int vms_rw_new(struct vms_rw **out, const struct vms_rw_conf *c)
{
	*out = NULL;
	if (!c->url || !*c->url)
		return -EINVAL;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return -EIO;
	struct vms_rw *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->conf = *c;
	if (!w->conf.timeout_ms)
		w->conf.timeout_ms = 10000;
	if (!w->conf.backoff_ms)
		w->conf.backoff_ms = 100;
	if (!w->conf.backoff_max_ms)
		w->conf.backoff_max_ms = 10000;
	w->curl = curl_easy_init();
	if (!w->curl) {
		free(w);
		return -EIO;
	}
	static const char *const hdr[] = {
		"Content-Type: application/x-protobuf",
		"Content-Encoding: snappy",
		"X-Prometheus-Remote-Write-Version: 0.1.0",
		"Expect:", /* no 100-continue round trip */
	};
	for (size_t i = 0; i < sizeof(hdr) / sizeof(hdr[0]); i++) {
		struct curl_slist *l = curl_slist_append(w->hdrs, hdr[i]);
		if (!l) {
			vms_rw_free(w);
			return -ENOMEM;
		}
		w->hdrs = l;
	}
	if (c->bearer_token) {
		char *a;
		if (asprintf(&a, "Authorization: Bearer %s", c->bearer_token) < 0) {
			vms_rw_free(w);
			return -ENOMEM;
		}
		struct curl_slist *l = curl_slist_append(w->hdrs, a);
		free(a);
		if (!l) {
			vms_rw_free(w);
			return -ENOMEM;
		}
		w->hdrs = l;
	}
	CURL *h = w->curl;
	curl_easy_setopt(h, CURLOPT_URL, c->url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, w->hdrs);
	curl_easy_setopt(h, CURLOPT_USERAGENT, c->user_agent ? c->user_agent : "vmsampler/" VMS_VERSION);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, w->conf.timeout_ms);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, w);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (c->ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
	if (c->username) {
		curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(h, CURLOPT_USERNAME, c->username);
		curl_easy_setopt(h, CURLOPT_PASSWORD, c->password ? c->password : "");
	}
	*out = w;
	return 0;
}

void vms_rw_free(struct vms_rw *w)
{
	if (!w)
		return;
	vms_rw_clear(w);
	free(w->series);
	free(w->table);
	if (w->curl)
		curl_easy_cleanup(w->curl);
	curl_slist_free_all(w->hdrs);
	free(w);
}

void vms_rw_totals(const struct vms_rw *w, struct vms_rw_totals *out)
{
	*out = w->tot;
}

/* Sleep ms, waking to look at *stop: false if stopped. */
static bool pause_ms(const struct vms_rw *w, unsigned ms)
{
	while (ms) {
		if (w->conf.stop && *w->conf.stop)
			return false;
		unsigned step = ms < 50 ? ms : 50;
		struct timespec ts = {0, (long)step * 1000000L};
		nanosleep(&ts, NULL);
		ms -= step;
	}
	return !(w->conf.stop && *w->conf.stop);
}

/* the first line of the response's body, for an error message */
static const char *resp_line(struct vms_rw *w)
{
	w->resp[w->resplen] = '\0';
	char *nl = strpbrk(w->resp, "\r\n");
	if (nl)
		*nl = '\0';
	return w->resp;
}

static bool retryable(CURLcode e)
{
	switch (e) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return true;
	default:
		return false;
	}
}

/* ---- one request ---------------------------------------------------------- */

/* What post() says besides 0 (accepted) and -errno */
enum {
	POST_REFUSED = 1, /* 400, 409, 422: the receiver refuses something in the request */
	POST_TOO_LARGE,   /* 413 */
	POST_HAS_NEWER,   /* 400, 409 for samples older than the receiver has (its words) */
};

/* Sample-level splitting of a batch stops after this many requests: a
 * series refused whole is then dropped whole. */
#define SPLIT_BUDGET 512

/* How Prometheus, Mimir, Cortex and Thanos Receive say that they have
 * the series at a later or the same time (a sample sent again, a file
 * sent twice): they took the rest of the request (partial ingestion), and
 * sending the samples again in halves would only be refused again. */
static bool has_newer(const char *body)
{
	static const char *const words[] = {"out of order", "out-of-order", "duplicate sample",
					    "duplicate-timestamp", "out of bounds", "too old", "too-old"};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcasestr(body, words[i]))
			return true;
	return false;
}

/* The state of one vms_rw_send() */
struct sendst {
	struct vms_rw_report *rep;
	uint8_t *mark;            /* a flat sample: 0 waiting, 1 accepted, 2 refused on its own */
	uint64_t *first;          /* a series' first flat sample; [nseries]: the batch's size */
	uint64_t accepted;        /* samples accepted */
	bool has_newer;           /* samples refused as older than the receiver's */
	uint64_t refused;         /* samples refused one by one */
	uint32_t refused_series;  /* series refused whole */
	char example[256];        /* the first sample refused on its own, and why */
};

/* One request of the flat samples [lo, hi), retried as the configuration
 * says: 0 accepted, POST_REFUSED, POST_TOO_LARGE, POST_HAS_NEWER, -EAGAIN retries
 * exhausted, -EPROTO not retryable, -EINTR stopped, -ENOMEM, -EREMOTEIO
 * any other answer (3xx, 401, 403, 404, ...: nothing sent again or split
 * will be taken). */
static int post(struct vms_rw *w, struct sendst *ss, uint64_t lo, uint64_t hi)
{
	struct vms_rw_report *rep = ss->rep;
	void *body;
	size_t len, raw;
	int r = encode_range(w, lo, hi, &body, &len, &raw);
	if (r < 0) {
		snprintf(rep->error, sizeof(rep->error), "cannot encode the batch: %s", strerror(-r));
		return r;
	}
	if (!rep->requests) {
		rep->raw_bytes = raw;
		rep->wire_bytes = len;
	}
	rep->requests++;
	CURL *h = w->curl;
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	unsigned pause = w->conf.backoff_ms;
	for (unsigned attempt = 1;; attempt++) {
		w->resplen = 0;
		rep->attempts++;
		CURLcode e = curl_easy_perform(h);
		long status = 0;
		if (e == CURLE_OK)
			curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
		rep->status = status;
		if (e == CURLE_OK && status >= 200 && status < 300) {
			w->tot.requests++;
			w->tot.samples += hi - lo;
			w->tot.wire_bytes += len;
			r = 0;
			break;
		}
		bool again = false;
		if (e != CURLE_OK) {
			snprintf(rep->error, sizeof(rep->error), "%.120s: %s", w->conf.url, curl_easy_strerror(e));
			again = retryable(e);
			r = again ? -EAGAIN : -EPROTO;
		} else if (status >= 300 && status < 400) {
			char *loc = NULL;
			curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &loc);
			snprintf(rep->error, sizeof(rep->error),
				 "%.80s: HTTP %ld, a redirect to %.80s (not followed: give the URL to post to)",
				 w->conf.url, status, loc ? loc : "nowhere");
			r = -EREMOTEIO;
		} else {
			snprintf(rep->error, sizeof(rep->error), "%.120s: HTTP %ld: %.100s", w->conf.url, status,
				 resp_line(w));
			again = status == 429 || status >= 500;
			bool content = status == 400 || status == 409 || status == 422;
			r = again                              ? -EAGAIN
			    : status == 413                    ? POST_TOO_LARGE
			    : content && has_newer(w->resp)    ? POST_HAS_NEWER
			    : content                          ? POST_REFUSED
								: -EREMOTEIO;
		}
		if (!again || attempt > w->conf.retries)
			break;
		w->tot.retries++;
		if (!pause_ms(w, pause)) {
			r = -EINTR;
			break;
		}
		pause = pause * 2 < w->conf.backoff_max_ms ? pause * 2 : w->conf.backoff_max_ms;
	}
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, NULL);
	free(body);
	return r;
}

/* ---- a refused request, split ------------------------------------------------- */

/* name{label="value",...} of a series, for a message */
static void series_name(const struct rw_series *s, char *buf, size_t n)
{
	const char *name = "", *p = s->blob;
	for (uint32_t k = 0; k < s->nlabels; k++, p += strlen(p) + 1, p += strlen(p) + 1)
		if (strcmp(p, "__name__") == 0)
			name = p + strlen(p) + 1;
	size_t o = (size_t)snprintf(buf, n, "%s{", name);
	p = s->blob;
	for (uint32_t k = 0; k < s->nlabels && o < n; k++) {
		const char *v = p + strlen(p) + 1;
		if (strcmp(p, "__name__") != 0)
			o += (size_t)snprintf(buf + o, n - o, "%s%s=\"%s\"", o > strlen(name) + 1 ? "," : "", p, v);
		p = v + strlen(v) + 1;
	}
	if (o < n)
		snprintf(buf + o, n - o, "}");
}

/* the series holding flat sample i */
static uint32_t series_at(const struct vms_rw *w, const struct sendst *ss, uint64_t i)
{
	uint32_t lo = 0, hi = w->nseries;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (ss->first[mid] <= i)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Deliver the flat samples [lo, hi): one request, and if the receiver
 * refuses it (400, 409, 422) or finds it too large (413), its halves,
 * first along series, then along a series' samples, down to one sample.
 * One sample refused is left out (marked 2) if the receiver takes others;
 * a second series refused whole while nothing was accepted, or a single
 * sample too large, is the receiver refusing everything: -EREMOTEIO. */
static int deliver(struct vms_rw *w, struct sendst *ss, uint64_t lo, uint64_t hi)
{
	int r = post(w, ss, lo, hi);
	if (r == 0) {
		memset(ss->mark + lo, 1, (size_t)(hi - lo));
		ss->accepted += hi - lo;
		return 0;
	}
	if (r < 0)
		return r;
	if (r == POST_HAS_NEWER) {
		/* the receiver's verdict on those samples: not a setup error */
		memset(ss->mark + lo, 2, (size_t)(hi - lo));
		if (!ss->refused)
			snprintf(ss->example, sizeof(ss->example), "%s", ss->rep->error);
		ss->refused += hi - lo;
		ss->has_newer = true;
		return 0;
	}
	uint32_t a = series_at(w, ss, lo), b = series_at(w, ss, hi - 1);
	if (a != b) {
		uint32_t m = series_at(w, ss, lo + (hi - lo) / 2);
		uint64_t mid = ss->first[m == a ? a + 1 : m];
		if ((r = deliver(w, ss, lo, mid)) < 0)
			return r;
		return deliver(w, ss, mid, hi);
	}
	if (r == POST_REFUSED && lo == ss->first[a] && hi == ss->first[a + 1] && ss->refused_series++ &&
	    !ss->accepted) {
		char n[128];
		series_name(&w->series[a], n, sizeof(n));
		char why[sizeof(ss->rep->error)];
		snprintf(why, sizeof(why), "%s", ss->rep->error);
		snprintf(ss->rep->error, sizeof(ss->rep->error),
			 "%.120s (every request refused, even one series alone: %.60s; nothing accepted)", why, n);
		return -EREMOTEIO;
	}
	if (hi - lo > 1 && (r == POST_TOO_LARGE || ss->rep->requests <= SPLIT_BUDGET)) {
		uint64_t mid = lo + (hi - lo) / 2;
		if ((r = deliver(w, ss, lo, mid)) < 0)
			return r;
		return deliver(w, ss, mid, hi);
	}
	if (r == POST_TOO_LARGE) {
		char why[sizeof(ss->rep->error)];
		snprintf(why, sizeof(why), "%s", ss->rep->error);
		snprintf(ss->rep->error, sizeof(ss->rep->error),
			 "%.180s (for a single sample: the receiver's size limit is too small)", why);
		return -EREMOTEIO;
	}
	memset(ss->mark + lo, 2, (size_t)(hi - lo));
	if (!ss->refused) {
		char n[128];
		series_name(&w->series[a], n, sizeof(n));
		snprintf(ss->example, sizeof(ss->example), "%.90s at %lld ms: %.130s", n,
			 (long long)w->series[a].s[lo - ss->first[a]].t, ss->rep->error);
	}
	ss->refused += hi - lo;
	return 0;
}

/* Take the samples marked 1 (accepted) out of the batch. */
static void compact(struct vms_rw *w, const uint8_t *mark)
{
	uint64_t at = 0, pending = 0;
	uint32_t ns = 0;
	for (uint32_t i = 0; i < w->nseries; i++) {
		struct rw_series *s = &w->series[i];
		uint32_t n = 0;
		for (uint32_t k = 0; k < s->n; k++)
			if (mark[at + k] != 1)
				s->s[n++] = s->s[k];
		at += s->n;
		s->n = n;
		pending += n;
		if (!n) {
			free(s->blob);
			free(s->s);
			continue;
		}
		w->series[ns++] = *s;
	}
	w->nseries = ns;
	w->pending = pending;
	memset(w->table, 0, w->tcap * sizeof(*w->table));
	for (uint32_t i = 0; i < ns; i++) {
		uint32_t k = (uint32_t)w->series[i].hash & (w->tcap - 1);
		while (w->table[k])
			k = (k + 1) & (w->tcap - 1);
		w->table[k] = i + 1;
	}
}

int vms_rw_send(struct vms_rw *w, struct vms_rw_report *rep)
{
	struct vms_rw_report dummy;
	if (!rep)
		rep = &dummy;
	memset(rep, 0, sizeof(*rep));
	if (!w->pending)
		return 0;
	rep->series = w->nseries;
	rep->samples = w->pending;
	struct sendst ss = {.rep = rep};
	ss.mark = calloc(w->pending, 1);
	ss.first = calloc(w->nseries + 1, sizeof(*ss.first));
	int r = -ENOMEM;
	if (!ss.mark || !ss.first) {
		snprintf(rep->error, sizeof(rep->error), "cannot send the batch: %s", strerror(ENOMEM));
		goto out;
	}
	for (uint32_t i = 0; i < w->nseries; i++)
		ss.first[i + 1] = ss.first[i] + w->series[i].n;
	r = deliver(w, &ss, 0, w->pending);
	if (r == 0 && ss.refused && !ss.accepted && !ss.has_newer) {
		char why[sizeof(rep->error)];
		snprintf(why, sizeof(why), "%s", rep->error);
		snprintf(rep->error, sizeof(rep->error), "%.180s (every sample refused, nothing accepted)", why);
		r = -EREMOTEIO;
	}
	if (r == 0) {
		rep->dropped = ss.refused;
		w->tot.dropped += rep->dropped;
		snprintf(rep->error, sizeof(rep->error), "%s", ss.example);
		vms_rw_clear(w);
	} else if (ss.accepted) {
		compact(w, ss.mark);
	}
out:
	free(ss.mark);
	free(ss.first);
	return r;
}
