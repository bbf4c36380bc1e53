/* SPDX-License-Identifier: MIT */
/* remote_write.h - Prometheus remote write 1.0: samples batched into a
 * protobuf WriteRequest (prompb.proto, protobuf-c), compressed with
 * snappy's block format, POSTed with libcurl (Content-Encoding: snappy,
 * Content-Type: application/x-protobuf, X-Prometheus-Remote-Write-Version:
 * 0.1.0).  For `vmsampler export --remote-write`.
 *
 *   struct vms_rw *w;
 *   struct vms_rw_conf c = {.url = "http://127.0.0.1:9090/api/v1/write"};
 *   vms_rw_new(&w, &c);
 *   struct vms_rw_label l[] = {{"cpu", "0"}, {"mode", "user"}};
 *   vms_rw_add(w, "node_cpu_seconds_total", l, 2, 1234.5, t_ms);
 *   ...
 *   struct vms_rw_report rep;
 *   int r = vms_rw_send(w, &rep);   // 0: accepted, the batch is empty again
 *
 * Samples of one series (the same name and labels) go into one
 * TimeSeries in the order they were added, which must be the order of
 * their timestamps (receivers reject a sample older than the series'
 * last).  Labels, __name__ among them, are sorted by name in byte order
 * (the specification's order); a label with an empty value is left out.
 *
 * Sending: a 2xx is success; a 5xx, a 429, a timeout or a connection
 * error is retried after conf.backoff_ms, doubled each time up to
 * conf.backoff_max_ms, at most conf.retries times, and then the batch is
 * kept (-EAGAIN: send again later, nothing is lost).  A 400, 409 or 422
 * saying that the receiver has the series at a later time or the same
 * ("out of order", "duplicate sample", "too old", "out of bounds": a
 * repeat; such receivers took the rest of the request) drops the
 * request's samples and counts them (rep.dropped).  Any other 400, 409
 * or 422 (the receiver refuses something in the request) and a 413 (too
 * large) split the request in halves, along series first, then along one
 * series' samples (at most SPLIT_BUDGET requests: then a series refused
 * whole is dropped whole), down to one sample: the halves the receiver
 * takes are sent, a sample it refuses is dropped and counted - if it
 * takes others.  A receiver that refuses everything (two series alone
 * refused and nothing accepted, every sample refused, a single sample
 * too large) and any other answer (a 3xx: redirects are not followed; a
 * 401 or 403: the credentials; a 404: the URL; ...) is a setup error:
 * -EREMOTEIO, the batch kept but for what was accepted.  A failed TLS
 * verification or a bad URL is not retried and keeps the batch (-EPROTO).
 * HTTPS verifies the
 * server (libcurl's defaults: the system's CAs, the name). */
#ifndef VMS_REMOTE_WRITE_H
#define VMS_REMOTE_WRITE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

struct vms_rw;

struct vms_rw_label {
	const char *name;
	const char *value;
};

struct vms_rw_conf {
	const char *url;
	long timeout_ms;          /* one request, connection included (0: 10000) */
	unsigned retries;         /* retries after the first attempt (0: none) */
	unsigned backoff_ms;      /* the first pause (0: 100) */
	unsigned backoff_max_ms;  /* the longest (0: 10000) */
	const char *user_agent;   /* NULL: "vmsampler/VERSION" */
	const char *username;     /* HTTP basic auth (NULL: none) */
	const char *password;
	const char *bearer_token; /* Authorization: Bearer (NULL: none) */
	const char *ca_file;      /* CAs to verify the server with (NULL: the system's) */
	/* set by a signal handler: stop waiting between retries (-EINTR,
	 * the batch kept) */
	volatile sig_atomic_t *stop;
};

/* What one vms_rw_send() did. */
struct vms_rw_report {
	uint64_t series, samples; /* in the request */
	size_t raw_bytes;         /* the protobuf */
	size_t wire_bytes;        /* after snappy: the request's body */
	long status;              /* the last HTTP status (0: none, a transport error) */
	unsigned requests;        /* requests made (more than one: the batch was split) */
	unsigned attempts;        /* all attempts of all requests */
	uint64_t dropped;         /* samples the receiver refused on their own, dropped */
	char error[256];          /* one line about the failure, or the first sample dropped
				   * and why ("" if none) */
};

/* Totals since vms_rw_new(). */
struct vms_rw_totals {
	uint64_t requests;        /* accepted requests */
	uint64_t samples;         /* samples accepted */
	uint64_t dropped;         /* samples the receiver refused on their own, dropped */
	uint64_t retries;         /* attempts that were retried */
	uint64_t wire_bytes;      /* bytes of accepted request bodies */
};

/* 0, -EINVAL (no URL), -ENOMEM, -EIO (libcurl could not start).  The
 * strings of c are used where they are (not copied): they must live until
 * vms_rw_free(). */
int vms_rw_new(struct vms_rw **out, const struct vms_rw_conf *c);
void vms_rw_free(struct vms_rw *w);

/* Add one sample: 0, -EINVAL (a metric name not [a-zA-Z_:][a-zA-Z0-9_:]*,
 * a label name not [a-zA-Z_][a-zA-Z0-9_]* or starting with "__", a label
 * twice), -ENOMEM. */
int vms_rw_add(struct vms_rw *w, const char *name, const struct vms_rw_label *labels, size_t nlabels,
	       double value, int64_t t_ms);
/* Samples and series waiting to be sent. */
uint64_t vms_rw_pending(const struct vms_rw *w);
uint64_t vms_rw_pending_series(const struct vms_rw *w);

/* The batch as a request body (the snappy-compressed WriteRequest), in
 * *body (malloc'd, the caller frees) of *len bytes, raw bytes before
 * compression in *raw: 0 or -ENOMEM.  vms_rw_send() uses it. */
int vms_rw_encode(const struct vms_rw *w, void **body, size_t *len, size_t *raw);

/* Send the batch (nothing to send: 0 at once).  0 delivered: accepted,
 * but for rep.dropped samples the receiver refused on their own while
 * taking others, the batch emptied; -EREMOTEIO the receiver refuses
 * everything or answers what no resend fixes (a setup error, rep.error
 * says which), -EAGAIN retries exhausted, -EPROTO not retryable, -EINTR
 * stopped: the batch kept but for what the receiver accepted; -ENOMEM.
 * rep (may be NULL) says what happened. */
int vms_rw_send(struct vms_rw *w, struct vms_rw_report *rep);
/* Empty the batch without sending it. */
void vms_rw_clear(struct vms_rw *w);
void vms_rw_totals(const struct vms_rw *w, struct vms_rw_totals *out);

/* Prometheus's staleness marker (a NaN with the payload 2): the value to
 * send for a series that ended (a VM that went away). */
double vms_rw_stale_nan(void);

#endif
