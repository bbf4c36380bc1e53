/* SPDX-License-Identifier: MIT */
/* export_http.c - the answer to one request of `vmsampler export`'s HTTP
 * server (export_http.h), apart from the server so that it can be fuzzed. */
#include "export_http.h"

#include <stdlib.h>
#include <string.h>

/* a and b equal, in a time that depends on their lengths only */
static bool same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = la != lb;
	for (size_t i = 0; i < la; i++)
		d |= (unsigned char)(a[i] ^ b[i % (lb ? lb : 1)]);
	return d == 0;
}

bool vms_xhttp_accepts_gzip(const char *ae)
{
	/* "gzip" named without q=0 */
	const char *p = ae ? strstr(ae, "gzip") : NULL;
	if (!p)
		return false;
	const char *end = strchr(p, ',');
	const char *q = strstr(p, "q=");
	return !q || (end && q > end) || strtod(q + 2, NULL) > 0;
}

struct vms_xhttp_decision vms_xhttp_decide(const struct vms_xhttp_req *rq, const char *need_user,
					   const char *need_pass)
{
	struct vms_xhttp_decision d = {.verdict = VMS_XHTTP_METRICS, .fmt = VMS_EXPO_PROM};
	if (rq->upload_size) {
		d.verdict = VMS_XHTTP_CLOSE; /* no request bodies here */
		return d;
	}
	if (strcmp(rq->method, "GET") != 0 && strcmp(rq->method, "HEAD") != 0) {
		d.verdict = VMS_XHTTP_NOT_ALLOWED;
		return d;
	}
	if (need_user) {
		bool ok = false;
		if (rq->user && rq->pass) { /* both compared, whatever the first gives */
			bool u = same(rq->user, need_user), p = same(rq->pass, need_pass ? need_pass : "");
			ok = u && p;
		}
		if (!ok) {
			d.verdict = VMS_XHTTP_UNAUTHORIZED;
			return d;
		}
	}
	if (strcmp(rq->url, "/metrics") != 0) {
		d.verdict = VMS_XHTTP_NOT_FOUND;
		return d;
	}
	d.fmt = vms_expo_negotiate(rq->accept);
	d.gzip = vms_xhttp_accepts_gzip(rq->accept_encoding);
	return d;
}
