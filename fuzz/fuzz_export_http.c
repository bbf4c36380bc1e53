/* SPDX-License-Identifier: MIT */
/* The answer of export's HTTP server to one request (export_http.h).
 *
 * The input: one byte of flags, then the request's parts separated by NUL
 * bytes: method, path, Accept, Accept-Encoding, the user and the password
 * the client's Authorization header decodes to (libmicrohttpd decodes it),
 * and the server's own user and password (--basic-auth).  Flag bits say
 * which of the optional parts are there at all (absent is NULL, unlike
 * empty) and whether a request body came.  Every part is its own
 * exact-size heap copy so that ASan sees any read past its end.
 *
 * What the answer must be is checked against a plain reference: no
 * metrics without GET or HEAD, the exact credentials (strcmp, against the
 * server's comparison in a time that depends on the lengths only) and the
 * path /metrics; OpenMetrics only when the Accept header names it, gzip
 * only when Accept-Encoding does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export_http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { F_ACCEPT = 1, F_AE = 2, F_USER = 4, F_PASS = 8, F_NEED = 16, F_UPLOAD = 32 };
enum { P_METHOD, P_URL, P_ACCEPT, P_AE, P_USER, P_PASS, P_NEED_USER, P_NEED_PASS, P_N };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned flags = data[0];
	char *part[P_N] = {0};
	const uint8_t *p = data + 1, *end = data + size;
	for (int k = 0; k < P_N; k++) {
		const uint8_t *z = p < end ? memchr(p, 0, (size_t)(end - p)) : NULL;
		size_t n = z ? (size_t)(z - p) : (size_t)(end - p);
		part[k] = malloc(n + 1);
		if (!part[k])
			abort();
		memcpy(part[k], p, n);
		part[k][n] = '\0';
		p = z ? z + 1 : end;
	}
	struct vms_xhttp_req rq = {
		.method = part[P_METHOD],
		.url = part[P_URL],
		.accept = flags & F_ACCEPT ? part[P_ACCEPT] : NULL,
		.accept_encoding = flags & F_AE ? part[P_AE] : NULL,
		.user = flags & F_USER ? part[P_USER] : NULL,
		.pass = flags & F_PASS ? part[P_PASS] : NULL,
		.upload_size = flags & F_UPLOAD ? 1 : 0,
	};
	const char *need_user = flags & F_NEED ? part[P_NEED_USER] : NULL;
	const char *need_pass = part[P_NEED_PASS];
	struct vms_xhttp_decision d = vms_xhttp_decide(&rq, need_user, need_pass);

	enum vms_xhttp_verdict want;
	if (rq.upload_size)
		want = VMS_XHTTP_CLOSE;
	else if (strcmp(rq.method, "GET") != 0 && strcmp(rq.method, "HEAD") != 0)
		want = VMS_XHTTP_NOT_ALLOWED;
	else if (need_user && !(rq.user && rq.pass && !strcmp(rq.user, need_user) && !strcmp(rq.pass, need_pass)))
		want = VMS_XHTTP_UNAUTHORIZED;
	else if (strcmp(rq.url, "/metrics") != 0)
		want = VMS_XHTTP_NOT_FOUND;
	else
		want = VMS_XHTTP_METRICS;
	if (d.verdict != want)
		abort();
	if (d.verdict == VMS_XHTTP_METRICS) {
		if (d.fmt == VMS_EXPO_OPENMETRICS &&
		    !(rq.accept && strcasestr(rq.accept, "application/openmetrics-text")))
			abort();
		if (d.fmt != VMS_EXPO_OPENMETRICS && d.fmt != VMS_EXPO_PROM)
			abort();
		if (d.gzip && !(rq.accept_encoding && strstr(rq.accept_encoding, "gzip")))
			abort();
	}
	for (int k = 0; k < P_N; k++)
		free(part[k]);
	return 0;
}
