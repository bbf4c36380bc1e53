/* SPDX-License-Identifier: MIT */
/* export_http.h - what `vmsampler export` answers to one HTTP request, as a
 * pure function of the request's parts (no libmicrohttpd here: export.c
 * takes the parts from its connection, fuzz/fuzz_export_http.c from
 * arbitrary bytes). */
#ifndef VMS_EXPORT_HTTP_H
#define VMS_EXPORT_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "metrics.h"

/* One request's parts; a header that is absent is NULL. */
struct vms_xhttp_req {
	const char *method;          /* "GET", ... (never NULL) */
	const char *url;             /* the path, without the query (never NULL) */
	const char *accept;          /* Accept */
	const char *accept_encoding; /* Accept-Encoding */
	const char *user, *pass;     /* basic authentication's, as decoded; NULL: none */
	size_t upload_size;          /* bytes of a request body at hand */
};

enum vms_xhttp_verdict {
	VMS_XHTTP_METRICS,      /* 200 with the metrics, as fmt and gzip say */
	VMS_XHTTP_CLOSE,        /* a request body: close the connection */
	VMS_XHTTP_NOT_ALLOWED,  /* 405: only GET and HEAD */
	VMS_XHTTP_UNAUTHORIZED, /* 401 with a basic authentication challenge */
	VMS_XHTTP_NOT_FOUND,    /* 404: only /metrics */
};

struct vms_xhttp_decision {
	enum vms_xhttp_verdict verdict;
	enum vms_expo fmt; /* with VMS_XHTTP_METRICS: by the Accept header */
	bool gzip;         /* with VMS_XHTTP_METRICS: Accept-Encoding allows gzip */
};

/* The answer to rq when the server requires the basic authentication
 * need_user:need_pass (need_user NULL: none).  The method is checked
 * before the credentials, the credentials before the path. */
struct vms_xhttp_decision vms_xhttp_decide(const struct vms_xhttp_req *rq, const char *need_user,
					   const char *need_pass);

/* gzip named in an Accept-Encoding header (NULL: none) without q=0 */
bool vms_xhttp_accepts_gzip(const char *accept_encoding);

#endif
