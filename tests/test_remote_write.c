/* SPDX-License-Identifier: MIT */
/* src/tools/remote_write.c without a network: the batch decoded again
 * (snappy's own decompressor, protobuf-c's own unpacker) holds what was
 * added, series grouped and labels sorted as the remote-write 1.0
 * specification says; bad names refused; the staleness marker's bits;
 * a refused connection is retried the configured number of times and
 * keeps the batch.  A fake receiver (a thread here, on 127.0.0.1, that
 * decodes each request as the tests above do and answers a status chosen
 * by the test: the point is the status) for issue 23: a receiver that
 * refuses everything (302, 400, 401, 404, 413) is -EREMOTEIO with the
 * batch kept, in a few requests; a size limit splits requests and every
 * sample arrives once; one poisoned series: only its samples dropped and
 * counted; "out of order" drops without splitting; an outage in the
 * middle of a split keeps exactly what was not accepted.  (Real
 * receivers: tests/test_tsdb.py, tests/test_export_rw.py.) */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <snappy-c.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "prompb.pb-c.h"
#include "remote_write.h"
#include "testutil.h"

static Prometheus__WriteRequest *decode(struct vms_rw *w, size_t *wire)
{
	void *body;
	size_t len, raw, ulen;
	assert_int_equal(vms_rw_encode(w, &body, &len, &raw), 0);
	*wire = len;
	assert_int_equal(snappy_uncompressed_length(body, len, &ulen), SNAPPY_OK);
	assert_int_equal(ulen, raw);
	char *u = malloc(ulen + 1);
	assert_int_equal(snappy_uncompress(body, len, u, &ulen), SNAPPY_OK);
	Prometheus__WriteRequest *req = prometheus__write_request__unpack(NULL, ulen, (uint8_t *)u);
	assert_non_null(req);
	free(u);
	free(body);
	return req;
}

static void test_batch_roundtrip(void **state)
{
	(void)state;
	struct vms_rw *w;
	struct vms_rw_conf c = {.url = "http://127.0.0.1:9/api/v1/write"};
	assert_int_equal(vms_rw_new(&w, &c), 0);
	struct vms_rw_label l1[] = {{"mode", "user"}, {"cpu", "0"}, {"Zone", "a"}, {"empty", ""}};
	struct vms_rw_label l1b[] = {{"cpu", "0"}, {"Zone", "a"}, {"mode", "user"}};
	struct vms_rw_label l2[] = {{"cpu", "1"}, {"mode", "user"}};
	assert_int_equal(vms_rw_add(w, "node_cpu_seconds_total", l1, 4, 1.5, 1000), 0);
	assert_int_equal(vms_rw_add(w, "node_cpu_seconds_total", l2, 2, 7, 1000), 0);
	/* the same labels in another order: the same series */
	assert_int_equal(vms_rw_add(w, "node_cpu_seconds_total", l1b, 3, 2.5, 2000), 0);
	assert_int_equal(vms_rw_add(w, "up", NULL, 0, vms_rw_stale_nan(), 3000), 0);
	assert_int_equal(vms_rw_pending(w), 4);
	assert_int_equal(vms_rw_pending_series(w), 3);

	size_t wire;
	Prometheus__WriteRequest *req = decode(w, &wire);
	assert_int_equal(req->n_timeseries, 3);
	Prometheus__TimeSeries *t = req->timeseries[0];
	/* sorted by name, byte order: "Zone" < "__name__" < "cpu" < "mode";
	 * the empty label left out */
	assert_int_equal(t->n_labels, 4);
	assert_string_equal(t->labels[0]->name, "Zone");
	assert_string_equal(t->labels[1]->name, "__name__");
	assert_string_equal(t->labels[1]->value, "node_cpu_seconds_total");
	assert_string_equal(t->labels[2]->name, "cpu");
	assert_string_equal(t->labels[3]->name, "mode");
	assert_int_equal(t->n_samples, 2);
	assert_true(t->samples[0]->value == 1.5 && t->samples[0]->timestamp == 1000);
	assert_true(t->samples[1]->value == 2.5 && t->samples[1]->timestamp == 2000);
	t = req->timeseries[1];
	assert_string_equal(t->labels[1]->value, "1");
	assert_true(t->n_samples == 1 && t->samples[0]->value == 7);
	t = req->timeseries[2];
	assert_int_equal(t->n_labels, 1);
	assert_string_equal(t->labels[0]->value, "up");
	uint64_t bits;
	memcpy(&bits, &t->samples[0]->value, 8);
	assert_int_equal(bits, 0x7ff0000000000002ull);
	prometheus__write_request__free_unpacked(req, NULL);

	vms_rw_clear(w);
	assert_int_equal(vms_rw_pending(w), 0);
	assert_int_equal(vms_rw_send(w, NULL), 0); /* nothing to send: no request */
	vms_rw_free(w);
}

static void test_many_series(void **state)
{
	(void)state;
	struct vms_rw *w;
	struct vms_rw_conf c = {.url = "http://127.0.0.1:9/"};
	assert_int_equal(vms_rw_new(&w, &c), 0);
	char v[32];
	for (int f = 0; f < 5; f++)
		for (int i = 0; i < 3000; i++) {
			snprintf(v, sizeof(v), "%d", i);
			struct vms_rw_label l = {"i", v};
			assert_int_equal(vms_rw_add(w, "m", &l, 1, i * 10 + f, f * 1000), 0);
		}
	assert_int_equal(vms_rw_pending_series(w), 3000);
	size_t wire;
	Prometheus__WriteRequest *req = decode(w, &wire);
	assert_int_equal(req->n_timeseries, 3000);
	for (int i = 0; i < 3000; i++) {
		Prometheus__TimeSeries *t = req->timeseries[i];
		snprintf(v, sizeof(v), "%d", i);
		assert_string_equal(t->labels[1]->value, v);
		assert_int_equal(t->n_samples, 5);
		for (int f = 0; f < 5; f++)
			assert_true(t->samples[f]->value == i * 10 + f && t->samples[f]->timestamp == f * 1000);
	}
	prometheus__write_request__free_unpacked(req, NULL);
	vms_rw_free(w);
}

static void test_bad_names(void **state)
{
	(void)state;
	struct vms_rw *w;
	struct vms_rw_conf c = {.url = "http://127.0.0.1:9/"};
	assert_int_equal(vms_rw_new(&w, &c), 0);
	struct vms_rw_label ok = {"a", "b"}, dash = {"a-b", "x"}, reserved = {"__x", "y"}, digit = {"1a", "x"};
	struct vms_rw_label twice[] = {{"a", "1"}, {"a", "2"}};
	assert_int_equal(vms_rw_add(w, "9lives", &ok, 1, 1, 1), -EINVAL);
	assert_int_equal(vms_rw_add(w, "a-b", &ok, 1, 1, 1), -EINVAL);
	assert_int_equal(vms_rw_add(w, "", &ok, 1, 1, 1), -EINVAL);
	assert_int_equal(vms_rw_add(w, "m", &dash, 1, 1, 1), -EINVAL);
	assert_int_equal(vms_rw_add(w, "m", &reserved, 1, 1, 1), -EINVAL);
	assert_int_equal(vms_rw_add(w, "m", &digit, 1, 1, 1), -EINVAL);
	assert_int_equal(vms_rw_add(w, "m", twice, 2, 1, 1), -EINVAL);
	assert_int_equal(vms_rw_add(w, "ns:rule_1", &ok, 1, 1, 1), 0);
	assert_int_equal(vms_rw_pending(w), 1);
	vms_rw_free(w);
	struct vms_rw_conf none = {0};
	assert_int_equal(vms_rw_new(&w, &none), -EINVAL);
}

static void test_refused_is_retried_and_kept(void **state)
{
	(void)state;
	/* a port with nothing behind it: bound, not listening */
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &al), 0);
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/api/v1/write", ntohs(a.sin_port));
	struct vms_rw *w;
	struct vms_rw_conf c = {.url = url, .retries = 2, .backoff_ms = 1};
	assert_int_equal(vms_rw_new(&w, &c), 0);
	assert_int_equal(vms_rw_add(w, "m", NULL, 0, 1, 1), 0);
	struct vms_rw_report rep;
	assert_int_equal(vms_rw_send(w, &rep), -EAGAIN);
	assert_int_equal(rep.attempts, 3);
	assert_int_equal(rep.status, 0);
	assert_non_null(strstr(rep.error, "Couldn't connect"));
	assert_int_equal(vms_rw_pending(w), 1); /* kept */
	struct vms_rw_totals t;
	vms_rw_totals(w, &t);
	assert_int_equal(t.retries, 2);
	assert_int_equal(t.requests, 0);
	vms_rw_free(w);
	close(s);
}

/* ---- a fake receiver ----------------------------------------------------- */

#define FK_MAX 4096

struct fake {
	int ls;
	unsigned port;
	pthread_t th;
	/* the answer to a decoded request (its body's size): a status */
	int (*answer)(struct fake *f, const Prometheus__WriteRequest *req, size_t wire);
	const char *body;      /* the answer's body ("" if NULL) */
	size_t limit;          /* for answer_limit */
	unsigned budget;       /* for answer_outage: requests taken before the 503s */
	bool down;
	unsigned requests;
	/* the samples taken (2xx): "value@t" of series "name" (the first
	 * label's value), and how often */
	struct {
		double v;
		int64_t t;
		unsigned n;
	} got[FK_MAX];
	unsigned ngot;
};

static void take(struct fake *f, const Prometheus__WriteRequest *req)
{
	for (size_t i = 0; i < req->n_timeseries; i++)
		for (size_t k = 0; k < req->timeseries[i]->n_samples; k++) {
			const Prometheus__Sample *s = req->timeseries[i]->samples[k];
			unsigned j = 0;
			while (j < f->ngot && !(f->got[j].v == s->value && f->got[j].t == s->timestamp))
				j++;
			if (j == f->ngot) {
				assert_true(f->ngot < FK_MAX);
				f->got[f->ngot].v = s->value;
				f->got[f->ngot].t = s->timestamp;
				f->ngot++;
			}
			f->got[j].n++;
		}
}

static void *fake_run(void *arg)
{
	struct fake *f = arg;
	for (;;) {
		int c = accept(f->ls, NULL, NULL);
		if (c < 0)
			return NULL;
		static char buf[1 << 20];
		size_t n = 0;
		char *end = NULL;
		while (!end && n < sizeof(buf) - 1) {
			ssize_t k = read(c, buf + n, sizeof(buf) - 1 - n);
			if (k <= 0)
				break;
			n += (size_t)k;
			buf[n] = '\0';
			end = strstr(buf, "\r\n\r\n");
		}
		if (!end) {
			close(c);
			continue;
		}
		const char *cl = strcasestr(buf, "\r\nContent-Length:");
		size_t len = cl ? strtoul(cl + 17, NULL, 10) : 0, head = (size_t)(end + 4 - buf);
		while (n < head + len && n < sizeof(buf)) {
			ssize_t k = read(c, buf + n, sizeof(buf) - n);
			if (k <= 0)
				break;
			n += (size_t)k;
		}
		size_t ulen;
		assert_int_equal(snappy_uncompressed_length(buf + head, len, &ulen), SNAPPY_OK);
		char *u = malloc(ulen + 1);
		assert_int_equal(snappy_uncompress(buf + head, len, u, &ulen), SNAPPY_OK);
		Prometheus__WriteRequest *req = prometheus__write_request__unpack(NULL, ulen, (uint8_t *)u);
		assert_non_null(req);
		f->requests++;
		int st = f->answer(f, req, len);
		if (st / 100 == 2)
			take(f, req);
		prometheus__write_request__free_unpacked(req, NULL);
		free(u);
		const char *b = f->body ? f->body : "";
		char out[512];
		int o = snprintf(out, sizeof(out),
				 "HTTP/1.1 %d X\r\nContent-Length: %zu\r\nConnection: close\r\n%s\r\n%s", st,
				 strlen(b), st / 100 == 3 ? "Location: http://127.0.0.1:1/elsewhere\r\n" : "", b);
		assert_true(write(c, out, (size_t)o) == o);
		close(c);
	}
}

static void fake_start(struct fake *f)
{
	f->ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	assert_int_equal(bind(f->ls, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(f->ls, 16), 0);
	assert_int_equal(getsockname(f->ls, (struct sockaddr *)&a, &al), 0);
	f->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&f->th, NULL, fake_run, f), 0);
}

static void fake_stop(struct fake *f)
{
	shutdown(f->ls, SHUT_RDWR);
	pthread_join(f->th, NULL);
	close(f->ls);
}

static int fixed_status;

static int answer_fixed(struct fake *f, const Prometheus__WriteRequest *req, size_t wire)
{
	(void)f, (void)req, (void)wire;
	return fixed_status;
}

static int answer_limit(struct fake *f, const Prometheus__WriteRequest *req, size_t wire)
{
	(void)req;
	return wire > f->limit ? 413 : 204;
}

/* 400 for a request holding series "poison" (the first label: __name__) */
static int answer_poison(struct fake *f, const Prometheus__WriteRequest *req, size_t wire)
{
	(void)f, (void)wire;
	for (size_t i = 0; i < req->n_timeseries; i++)
		if (strcmp(req->timeseries[i]->labels[0]->value, "poison") == 0)
			return 400;
	return 200;
}

/* a 2 KB limit, and after f->budget requests taken, 503 until f->down is false */
static int answer_outage(struct fake *f, const Prometheus__WriteRequest *req, size_t wire)
{
	(void)req;
	if (f->down)
		return 503;
	if (wire > f->limit)
		return 413;
	if (f->budget && !--f->budget)
		f->down = true;
	return 204;
}

/* 40 series "m0".."m39" (and "poison" if asked) x 20 samples, each value
 * distinct: series * 1000 + t */
static struct vms_rw *batch(const char *url, bool poison, unsigned *n)
{
	struct vms_rw *w;
	struct vms_rw_conf c = {.url = url, .retries = 1, .backoff_ms = 1};
	assert_int_equal(vms_rw_new(&w, &c), 0);
	*n = 0;
	for (int t = 1; t <= 20; t++)
		for (int s = 0; s < 40 + poison; s++) {
			char name[16];
			snprintf(name, sizeof(name), s == 40 ? "poison" : "m%d", s);
			assert_int_equal(vms_rw_add(w, name, NULL, 0, s * 1000 + t, t), 0);
			(*n)++;
		}
	return w;
}

/* a fake receiver started and a batch() for it */
static struct vms_rw *start(struct fake *f, bool poison, unsigned *n)
{
	fake_start(f);
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/api/v1/write", f->port);
	return batch(url, poison, n);
}

/* every sample of batch() once, poison's left out */
static void check_once(const struct fake *f, unsigned n)
{
	assert_int_equal(f->ngot, n);
	for (unsigned j = 0; j < f->ngot; j++) {
		assert_int_equal(f->got[j].n, 1);
		assert_true(f->got[j].v < 40000);
	}
}

static void test_refusing_receiver_keeps_the_batch(void **state)
{
	(void)state;
	static const int st[] = {302, 400, 401, 403, 404, 405, 413};
	static const char *const say[] = {"a redirect to http://127.0.0.1:1/elsewhere", "nothing accepted",
					  "HTTP 401", "HTTP 403", "HTTP 404", "HTTP 405", "for a single sample"};
	for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
		struct fake f = {.answer = answer_fixed, .body = "no\nmore"};
		fixed_status = st[i];
		unsigned n;
		struct vms_rw *w = start(&f, false, &n);
		struct vms_rw_report rep;
		assert_int_equal(vms_rw_send(w, &rep), -EREMOTEIO);
		assert_int_equal(rep.status, st[i]);
		assert_non_null(strstr(rep.error, say[i]));
		assert_int_equal(rep.dropped, 0);
		assert_int_equal(vms_rw_pending(w), n); /* kept, all of it */
		assert_int_equal(vms_rw_pending_series(w), 40);
		/* 400: halves down to two series alone and the first one's
		 * samples; 413: down to one sample; others: one request */
		assert_true(st[i] == 400 ? f.requests < 60 : st[i] == 413 ? f.requests < 20 : f.requests == 1);
		struct vms_rw_totals t;
		vms_rw_totals(w, &t);
		assert_int_equal(t.dropped, 0);
		assert_int_equal(t.requests, 0);
		/* fixed: all of it, once */
		fixed_status = 204;
		assert_int_equal(vms_rw_send(w, &rep), 0);
		assert_int_equal(rep.requests, 1);
		check_once(&f, n);
		vms_rw_free(w);
		fake_stop(&f);
	}
}

static void test_size_limit_splits(void **state)
{
	(void)state;
	struct fake f = {.answer = answer_limit, .limit = 600};
	unsigned n;
	struct vms_rw *w = start(&f, false, &n);
	struct vms_rw_report rep;
	assert_int_equal(vms_rw_send(w, &rep), 0);
	assert_true(rep.requests > 4);
	assert_int_equal(rep.dropped, 0);
	assert_int_equal(vms_rw_pending(w), 0);
	check_once(&f, n);
	vms_rw_free(w);
	fake_stop(&f);
}

static void test_poisoned_series_dropped_alone(void **state)
{
	(void)state;
	struct fake f = {.answer = answer_poison, .body = "bad series"};
	unsigned n;
	struct vms_rw *w = start(&f, true, &n);
	struct vms_rw_report rep;
	assert_int_equal(vms_rw_send(w, &rep), 0);
	assert_int_equal(rep.dropped, 20); /* poison's 20 samples, and only they */
	assert_non_null(strstr(rep.error, "poison{} at 1 ms"));
	assert_non_null(strstr(rep.error, "HTTP 400: bad series"));
	check_once(&f, n - 20);
	struct vms_rw_totals t;
	vms_rw_totals(w, &t);
	assert_int_equal(t.dropped, 20);
	assert_int_equal(t.samples, n - 20);
	vms_rw_free(w);
	fake_stop(&f);
}

static void test_out_of_order_not_split(void **state)
{
	(void)state;
	struct fake f = {.answer = answer_fixed, .body = "out of order sample"};
	fixed_status = 400;
	unsigned n;
	struct vms_rw *w = start(&f, false, &n);
	struct vms_rw_report rep;
	assert_int_equal(vms_rw_send(w, &rep), 0);
	assert_int_equal(f.requests, 1);
	assert_int_equal(rep.dropped, n);
	assert_int_equal(vms_rw_pending(w), 0);
	vms_rw_free(w);
	fake_stop(&f);
}

static void test_outage_mid_split_keeps_the_rest(void **state)
{
	(void)state;
	struct fake f = {.answer = answer_outage, .limit = 600, .budget = 3};
	unsigned n;
	struct vms_rw *w = start(&f, false, &n);
	struct vms_rw_report rep;
	assert_int_equal(vms_rw_send(w, &rep), -EAGAIN);
	assert_int_equal(f.ngot, n - vms_rw_pending(w)); /* what was taken is out of the batch */
	assert_true(f.ngot > 0 && vms_rw_pending(w) > 0);
	f.down = false;
	assert_int_equal(vms_rw_send(w, &rep), 0);
	assert_int_equal(vms_rw_pending(w), 0);
	check_once(&f, n);
	vms_rw_free(w);
	fake_stop(&f);
}

VMS_TEST_MAIN(NULL, NULL, test_batch_roundtrip, test_many_series, test_bad_names, test_refused_is_retried_and_kept,
	      test_refusing_receiver_keeps_the_batch, test_size_limit_splits, test_poisoned_series_dropped_alone,
	      test_out_of_order_not_split, test_outage_mid_split_keeps_the_rest)
