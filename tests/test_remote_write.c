/* SPDX-License-Identifier: MIT */
/* src/tools/remote_write.c without a network: the batch decoded again
 * (snappy's own decompressor, protobuf-c's own unpacker) holds what was
 * added, series grouped and labels sorted as the remote-write 1.0
 * specification says; bad names refused; the staleness marker's bits;
 * a refused connection is retried the configured number of times and
 * keeps the batch.  (Real receivers: tests/test_tsdb.py.) */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <snappy-c.h>
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
	assert_int_equal(vms_rw_send(w, NULL, 0), 0); /* nothing to send: no request */
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
	assert_int_equal(vms_rw_send(w, &rep, 0), -EAGAIN);
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

VMS_TEST_MAIN(NULL, NULL, test_batch_roundtrip, test_many_series, test_bad_names, test_refused_is_retried_and_kept)
