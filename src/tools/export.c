/* SPDX-License-Identifier: MIT */
/* export.c - `vmsampler export`: the frames of a live ring or of a growing
 * .vms file as Prometheus metrics on /metrics (export.h).
 *
 * The main thread follows the input through libvmsampler, frame by frame
 * (so that the sums of missed ticks and of the sampler's CPU see every
 * frame it could read, and the slow per-VM values are held until their
 * next refresh), and hands the newest frame's values to the HTTP server's
 * thread (libmicrohttpd) under a mutex.  A scrape formats that frame; the
 * sampler never waits for either: a ring reader only copies slots. */
#include "export.h"
#include "export_http.h"
#include "export_opts.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "metrics.h"
#include "reader_int.h"
#include "ring.h"
#include "safefile.h"
#include "tool.h"
#include "vms.h"
#include "vms_build.h"

#include <vmsampler/reader.h>

#if HAVE_MICROHTTPD
#include <arpa/inet.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <zlib.h>
#endif
#if HAVE_MICROHTTPD && HAVE_REMOTE_WRITE
#include "export_rw.h"
#endif

#if !HAVE_MICROHTTPD

int vms_export_main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			for (const char *const *h = vms_export_help; *h; h++)
				fputs(*h, stdout);
			return fflush(stdout) == 0 ? 0 : 1;
		}
	fprintf(stderr, "vmsampler export: this build has no HTTP server (libmicrohttpd)\n");
	return 2;
}

#else

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* what the server thread reads, under mu */
struct shared {
	pthread_mutex_t mu;
	struct vms_metrics m;
	uint64_t *v;
	uint64_t meta[VMS_MMETA_N];
	bool have;
	char *user, *pass; /* basic auth, or NULL */
	uint64_t *rwstats; /* remote write's counters (VMS_MMETA_RW_*), atomic; or NULL */
	/* staleness: when the newest frame was read (CLOCK_MONOTONIC), and
	 * how long after that with no other the input counts as stale */
	uint64_t read_mono, stale_ns;
	bool stamp;        /* --timestamps */
};

/* no new frame for this many intervals: the input is stale */
#define STALE_INTERVALS 3
#define STALE_MIN_NS VMS_NSEC_PER_SEC


/* The newest frame to the server; iv_ns: the input's interval (0: not known). */
static void publish(struct vms_mstate *f, struct vms_reader *rd, struct shared *sh, uint64_t iv_ns)
{
	vms_mstate_reader(f, rd);
	uint64_t stale = (iv_ns ? iv_ns : VMS_NSEC_PER_SEC) * STALE_INTERVALS;
	struct vms_metrics old = {0};
	uint64_t *oldv = NULL;
	pthread_mutex_lock(&sh->mu);
	sh->read_mono = vms_mono_now();
	sh->stale_ns = stale > STALE_MIN_NS ? stale : STALE_MIN_NS;
	if (f->fresh) {
		/* the server gets its own copy of the samples; the values
		 * array is sized for them */
		uint64_t *v = malloc((size_t)(f->ncols ? f->ncols : 1) * sizeof(*v));
		struct vms_metrics m;
		bool ok = vms_metrics_copy(&m, &f->m) == 0 && v;
		if (ok) {
			old = sh->m;
			oldv = sh->v;
			sh->m = m;
			sh->v = v;
			f->fresh = false;
		} else {
			free(v);
			vms_metrics_free(&m);
			sh->have = false; /* tried again at the next frame */
		}
	}
	if (!f->fresh && sh->v) {
		memcpy(sh->v, f->cur, (size_t)f->ncols * sizeof(*f->cur));
		memcpy(sh->meta, f->meta, sizeof(sh->meta));
		sh->have = true;
	}
	pthread_mutex_unlock(&sh->mu);
	vms_metrics_free(&old);
	free(oldv);
}

static void unpublish(struct shared *sh)
{
	pthread_mutex_lock(&sh->mu);
	sh->have = false;
	pthread_mutex_unlock(&sh->mu);
}

/* ---- HTTP ------------------------------------------------------------------- */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *text)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	enum MHD_Result r = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return r;
}

/* ---- slow clients ------------------------------------------------------------
 *
 * libmicrohttpd's connection timeout is an idle timeout: a client that sends
 * one byte of its request head every 29 s keeps its connection for ever, and
 * a handful of such clients (before any authentication) fill the server's
 * connection limit so that no scrape gets in.  Besides a limit of
 * connections per source address (MHD_OPTION_PER_IP_CONNECTION_LIMIT), every
 * request head must be complete within --header-timeout of the connection's
 * start, or of the end of its previous response (an idle keep-alive
 * connection waits for its next head).  libmicrohttpd has no such deadline,
 * so export keeps its own: each connection is registered when it starts
 * (MHD_OPTION_NOTIFY_CONNECTION), marked when its head is complete (the
 * access handler is called) and again when its response is done
 * (MHD_OPTION_NOTIFY_COMPLETED); a thread looks at them a few times per
 * deadline and shuts down the socket of every one whose head is late:
 * libmicrohttpd then sees the end of the stream and closes the connection
 * as its own.  The shutdown happens under the registry's mutex, and
 * libmicrohttpd unregisters a connection (MHD_CONNECTION_NOTIFY_CLOSED)
 * before it closes the socket, so the descriptor is still the connection's. */

#define PER_IP_LIMIT 8u
#define CONNECTION_LIMIT 256u

struct conn {
	struct conn *prev, *next;
	int fd;
	uint64_t since; /* CLOCK_MONOTONIC ns: waiting for a head since */
	bool waiting;   /* for a request head */
	bool cut;       /* its socket was shut down */
};

struct heads {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct conn *list;
	uint64_t timeout; /* ns */
	bool quit, started;
	pthread_t tid;
};

static struct heads heads = {.mu = PTHREAD_MUTEX_INITIALIZER};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * VMS_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct heads *h = cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		struct conn *x = ci ? calloc(1, sizeof(*x)) : NULL;
		if (!x)
			return; /* not watched: the idle timeout still holds */
		x->fd = ci->connect_fd;
		x->since = mono_ns();
		x->waiting = true;
		pthread_mutex_lock(&h->mu);
		x->next = h->list;
		if (h->list)
			h->list->prev = x;
		h->list = x;
		pthread_mutex_unlock(&h->mu);
		*socket_context = x;
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
		struct conn *x = *socket_context;
		pthread_mutex_lock(&h->mu);
		if (x->prev)
			x->prev->next = x->next;
		else
			h->list = x->next;
		if (x->next)
			x->next->prev = x->prev;
		pthread_mutex_unlock(&h->mu);
		free(x);
		*socket_context = NULL;
	}
}

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

/* c's request head is complete */
static void head_done(struct MHD_Connection *c)
{
	struct conn *x = conn_of(c);
	if (!x)
		return;
	pthread_mutex_lock(&heads.mu);
	x->waiting = false;
	pthread_mutex_unlock(&heads.mu);
}

/* c's request is done: a kept-alive connection waits for its next head */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct heads *h = cls;
	(void)con_cls;
	(void)toe;
	struct conn *x = conn_of(c);
	if (!x)
		return;
	pthread_mutex_lock(&h->mu);
	x->waiting = true;
	x->since = mono_ns();
	pthread_mutex_unlock(&h->mu);
}

static void *heads_main(void *arg)
{
	struct heads *h = arg;
	/* looked at 8 times per deadline, from every 10 ms to every second */
	uint64_t every = h->timeout / 8;
	if (every < 10 * VMS_NSEC_PER_MSEC)
		every = 10 * VMS_NSEC_PER_MSEC;
	if (every > VMS_NSEC_PER_SEC)
		every = VMS_NSEC_PER_SEC;
	pthread_mutex_lock(&h->mu);
	while (!h->quit) {
		uint64_t now = mono_ns();
		for (struct conn *x = h->list; x; x = x->next)
			if (x->waiting && !x->cut && now - x->since >= h->timeout) {
				shutdown(x->fd, SHUT_RDWR);
				x->cut = true;
			}
		uint64_t until = now + every;
		struct timespec ts = {(time_t)(until / VMS_NSEC_PER_SEC), (long)(until % VMS_NSEC_PER_SEC)};
		pthread_cond_timedwait(&h->cv, &h->mu, &ts); /* CLOCK_MONOTONIC (heads_start) */
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

/* 0, or an errno */
static int heads_start(struct heads *h, uint64_t timeout)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	int e = pthread_cond_init(&h->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (e)
		return e;
	h->timeout = timeout;
	e = pthread_create(&h->tid, NULL, heads_main, h);
	if (e) {
		pthread_cond_destroy(&h->cv);
		return e;
	}
	h->started = true;
	return 0;
}

static void heads_stop(struct heads *h)
{
	if (!h->started)
		return;
	pthread_mutex_lock(&h->mu);
	h->quit = true;
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->mu);
	pthread_join(h->tid, NULL);
	pthread_cond_destroy(&h->cv);
	h->started = false;
}

/* gzip of in into *out (malloc'ed): its length, or 0 */
static size_t gzip(const char *in, size_t len, char **out)
{
	z_stream z = {0};
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	size_t cap = deflateBound(&z, len);
	char *p = malloc(cap);
	if (!p) {
		deflateEnd(&z);
		return 0;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)p;
	z.avail_out = (uInt)cap;
	int r = deflate(&z, Z_FINISH);
	size_t n = z.total_out;
	deflateEnd(&z);
	if (r != Z_STREAM_END) {
		free(p);
		return 0;
	}
	*out = p;
	return n;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	struct shared *sh = cls;
	(void)version;
	(void)upload;
	(void)con_cls;
	head_done(c);
	struct vms_xhttp_req rq = {
		.method = method,
		.url = url,
		.accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT),
		.accept_encoding = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING),
		.upload_size = *upload_size,
	};
	char *user = NULL, *pass = NULL;
	if (sh->user)
		user = MHD_basic_auth_get_username_password(c, &pass);
	rq.user = user;
	rq.pass = pass;
	struct vms_xhttp_decision dec = vms_xhttp_decide(&rq, sh->user, sh->pass);
	MHD_free(user);
	MHD_free(pass);
	switch (dec.verdict) {
	case VMS_XHTTP_CLOSE:
		return MHD_NO;
	case VMS_XHTTP_NOT_ALLOWED:
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n");
	case VMS_XHTTP_UNAUTHORIZED: {
		struct MHD_Response *resp = MHD_create_response_from_buffer(
			14, (void *)"unauthorized\r\n", MHD_RESPMEM_PERSISTENT);
		if (!resp)
			return MHD_NO;
		enum MHD_Result r = MHD_queue_basic_auth_fail_response(c, "vmsampler", resp);
		MHD_destroy_response(resp);
		return r;
	}
	case VMS_XHTTP_NOT_FOUND:
		return reply(c, MHD_HTTP_NOT_FOUND, "not found: vmsampler export serves /metrics\n");
	case VMS_XHTTP_METRICS:
		break;
	}

	enum vms_expo fmt = dec.fmt;
	struct vms_mbuf b = {0};
	bool have;
	pthread_mutex_lock(&sh->mu);
	have = sh->have;
	if (have) {
		uint64_t meta[VMS_MMETA_N];
		memcpy(meta, sh->meta, sizeof(meta));
		if (sh->rwstats)
			for (unsigned k = VMS_MMETA_RW_FRAMES; k < VMS_MMETA_N; k++)
				meta[k] = __atomic_load_n(&sh->rwstats[k], __ATOMIC_RELAXED);
		/* a stale input: only export's own series, no stale values as fresh */
		bool up = vms_mono_now() - sh->read_mono <= sh->stale_ns;
		struct timespec rt;
		clock_gettime(CLOCK_REALTIME, &rt);
		int64_t now = (int64_t)rt.tv_sec * (int64_t)VMS_NSEC_PER_SEC + rt.tv_nsec;
		uint64_t t = meta[VMS_MMETA_TIME];
		meta[VMS_MMETA_SOURCE_UP] = up;
		meta[VMS_MMETA_FRAME_AGE] = t == VMS_NONE ? VMS_NONE : now > (int64_t)t ? (uint64_t)(now - (int64_t)t) : 0;
		if (!up) {
			for (unsigned k = VMS_MMETA_TIME; k <= VMS_MMETA_INTERVAL; k++)
				meta[k] = VMS_NONE;
			meta[VMS_MMETA_HOST_INFO] = VMS_NONE; /* the sampler's too */
		}
		vms_metrics_expose(&sh->m, up ? sh->v : NULL, meta, fmt, sh->stamp, &b);
	}
	pthread_mutex_unlock(&sh->mu);
	if (!have)
		return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no frame yet\n");
	if (b.oom) {
		vms_mbuf_free(&b);
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	char *body = b.p;
	size_t len = b.len;
	bool gz = false;
	if (dec.gzip) {
		char *z;
		size_t zn = gzip(b.p, b.len, &z);
		if (zn) {
			free(b.p);
			body = z;
			len = zn;
			gz = true;
		}
	}
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				fmt == VMS_EXPO_OPENMETRICS ? VMS_EXPO_OPENMETRICS_TYPE : VMS_EXPO_PROM_TYPE);
	if (gz)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, "Accept, Accept-Encoding");
	enum MHD_Result r = MHD_queue_response(c, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return r;
}

/* ---- set-up ------------------------------------------------------------------- */

/* ADDR:PORT ([V6]:PORT) to a listening socket: the fd, or -1 with *why. */
static int listen_on(const char *spec, char *bound, size_t boundlen, const char **why)
{
	char host[256];
	const char *colon = strrchr(spec, ':');
	*why = "expected ADDR:PORT";
	if (!colon || !colon[1] || (size_t)(colon - spec) >= sizeof(host))
		return -1;
	size_t hl = (size_t)(colon - spec);
	const char *h = spec;
	if (hl >= 2 && spec[0] == '[' && spec[hl - 1] == ']') {
		h = spec + 1;
		hl -= 2;
	}
	memcpy(host, h, hl);
	host[hl] = '\0';
	char *end;
	errno = 0;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (*end || errno || port > 65535 || !hl) {
		*why = "expected ADDR:PORT with a port from 0 to 65535";
		return -1;
	}
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV},
			*ai = NULL;
	int e = getaddrinfo(host, colon + 1, &hints, &ai);
	if (e) {
		*why = gai_strerror(e);
		return -1;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 64) < 0) {
		*why = strerror(errno);
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char a[INET6_ADDRSTRLEN] = "?";
	unsigned p = 0;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET) {
			struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
			inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
			p = ntohs(s4->sin_port);
			snprintf(bound, boundlen, "%s:%u", a, p);
		} else if (ss.ss_family == AF_INET6) {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
			inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
			p = ntohs(s6->sin6_port);
			snprintf(bound, boundlen, "[%s]:%u", a, p);
		}
	}
	return fd;
}

/* A whole small file (safefile.h: a regular file; VMS_SAFE_SECRET: not
 * readable or writable by others, ours or root's), NUL-terminated: NULL,
 * said as "OPT PATH: why", if it is refused or cannot be read. */
static char *load(const char *opt, const char *path, unsigned how, size_t max)
{
	char why[128], *s;
	size_t len;
	if (vms_safe_read(path, how, max, &s, &len, why, sizeof(why)) < 0) {
		fprintf(stderr, "vmsampler export: %s %s: %s\n", opt, path, why);
		return NULL;
	}
	return s;
}

/* The first line of a file of secrets (NULL, said, if it cannot be read,
 * is readable or writable by others, or has an empty first line). */
static char *read_secret(const char *opt, const char *path)
{
	char *s = load(opt, path, VMS_SAFE_SECRET, 4096);
	if (!s)
		return NULL;
	s[strcspn(s, "\r\n")] = '\0';
	if (!s[0]) {
		fprintf(stderr, "vmsampler export: %s %s: the first line is empty\n", opt, path);
		free(s);
		return NULL;
	}
	return s;
}

/* USER:PASSWORD of a file of secrets into *user (malloc'd) and *pass
 * (within it): 0, or -1 said. */
static int load_auth(const char *opt, const char *path, char **user, char **pass)
{
	char *s = read_secret(opt, path);
	if (!s)
		return -1;
	char *colon = strchr(s, ':');
	if (!colon || colon == s || !colon[1]) {
		fprintf(stderr, "vmsampler export: %s %s: expected one line USER:PASSWORD\n", opt, path);
		free(s);
		return -1;
	}
	*colon = '\0';
	*user = s;
	*pass = colon + 1;
	return 0;
}

static void nap(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / VMS_NSEC_PER_SEC), (long)(ns % VMS_NSEC_PER_SEC)};
	nanosleep(&ts, NULL); /* EINTR: a signal, the loop looks at stop */
}

/* Follow the input until stopped: 0, or 1 when it failed. */
static int follow_input(struct vms_mstate *f, struct vms_reader *rd, struct shared *sh, const char *in)
{
	int rc = 0;
	bool ring = vms_reader_kind(rd) == VMS_READER_RING;
	uint64_t iv = vms_reader_interval_ns(rd);
	uint64_t pause = ring && iv ? iv / 4 : 100 * VMS_NSEC_PER_MSEC;
	if (pause < VMS_NSEC_PER_MSEC)
		pause = VMS_NSEC_PER_MSEC;
	if (pause > 250 * VMS_NSEC_PER_MSEC)
		pause = 250 * VMS_NSEC_PER_MSEC;
	bool pending = false;
	/* a file's interval, for staleness: from successive frames */
	uint64_t pseq = 0, pmono = 0;
	while (!stop) {
		int r = vms_reader_next(rd);
		const char *note = vms_rdr_follow_note(rd);
		if (note)
			vms_info("%s", note);
		if (r > 0) {
			if ((r = vms_mstate_take(f, rd)) < 0) {
				vms_err("%s", strerror(-r));
				return 1;
			}
			const struct vms_frame *fr = vms_reader_frame(rd);
			if (!ring && fr->seq > pseq && pseq && fr->t_mono_ns > pmono)
				iv = (fr->t_mono_ns - pmono) / (fr->seq - pseq);
			pseq = fr->seq;
			pmono = fr->t_mono_ns;
			pending = true;
			continue;
		}
		if (pending) {
			publish(f, rd, sh, iv);
			pending = false;
		}
		if (r == 0) {
			nap(pause);
			continue;
		}
		if (r == -ESRCH && vms_reader_writer(rd) == VMS_WRITER_EXITED) {
			vms_info("%s: %s", in, vms_reader_error(rd));
		} else {
			vms_err("%s: %s", in, vms_reader_error(rd));
			rc = 1;
		}
		break;
	}
	return rc;
}

#if HAVE_REMOTE_WRITE
struct rw_thread {
	struct vms_xrw_conf conf;
	pthread_t tid;
	int rc;
};

static void *rw_main(void *arg)
{
	struct rw_thread *t = arg;
	t->rc = vms_xrw_run(&t->conf);
	stop = 1; /* the pusher ended (its input did, or it failed): so does export */
	return NULL;
}
#endif

/* --list-columns: what each column of every schema of the file becomes */
static int list_columns(const char *file, const struct vms_mopts *mo)
{
	struct vms_reader *rd = NULL;
	double hz = (double)sysconf(_SC_CLK_TCK);
	int r = vms_reader_open(&rd, file, 0), rc = 0;
	if (r < 0) {
		vms_err("%s", rd ? vms_reader_error(rd) : strerror(-r));
		vms_reader_close(rd);
		return vms_tool_input_status(r, false);
	}
	while ((r = vms_reader_next(rd)) > 0) {
		if (!vms_reader_schema_changed(rd))
			continue;
		struct vms_mbuf b = {0};
		printf("# generation %u\n", (unsigned)vms_reader_gen(rd));
		if (vms_metrics_list(rd, hz > 0 ? hz : 100, mo, &b) < 0) {
			vms_mbuf_free(&b);
			vms_err("out of memory");
			rc = 1;
			break;
		}
		fwrite(b.p ? b.p : "", 1, b.len, stdout);
		vms_mbuf_free(&b);
	}
	if (r < 0 && !rc) {
		vms_err("%s: %s", file, vms_reader_error(rd));
		rc = vms_tool_input_status(r, true);
	}
	vms_reader_close(rd);
	if (fflush(stdout) != 0)
		rc = 1;
	return rc;
}


/* ---- the run ------------------------------------------------------------------ */

/* One run of export: what it holds, freed by run_free. */
struct run {
	const struct vms_xopts *o;
	struct shared sh;
	struct vms_mstate f;
	struct vms_reader *rd; /* /metrics' input */
	const char *in;        /* its name */
	double hz;
	char *certpem, *keypem, *bearer, *rw_user, *rw_pass;
	struct MHD_Daemon *d;
	int fd; /* the listening socket until the daemon has it */
	char bound[INET6_ADDRSTRLEN + 16];
	uint64_t rwstats[VMS_MMETA_N];
#if HAVE_REMOTE_WRITE
	struct rw_thread rwt;
	bool rw_started;
#endif
};

/* The files the options name (secrets, CA, certificate) and the listening
 * socket: 0, or the exit status, said. */
static int load_config(struct run *X)
{
	const struct vms_xopts *o = X->o;
	const char *why;
	if (o->auth && load_auth("--basic-auth", o->auth, &X->sh.user, &X->sh.pass) < 0)
		return 2;
	if (o->rw_bearer && !(X->bearer = read_secret("--rw-bearer-file", o->rw_bearer)))
		return 2;
	if (o->rw_auth && load_auth("--rw-basic-auth", o->rw_auth, &X->rw_user, &X->rw_pass) < 0)
		return 2;
	if (o->rw_ca) { /* read by libcurl later: a regular file (a FIFO would hang it) */
		char *ca = load("--rw-ca", o->rw_ca, 0, 1 << 20);
		if (!ca)
			return 2;
		free(ca);
	}
	if (o->cert) {
		if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
			fprintf(stderr, "vmsampler export: this libmicrohttpd has no TLS\n");
			return 2;
		}
		if (!(X->certpem = load("--tls-cert", o->cert, 0, 1 << 20)) ||
		    !(X->keypem = load("--tls-key", o->key, VMS_SAFE_SECRET, 1 << 20)))
			return 2;
	}
	if (o->listen) {
		X->fd = listen_on(o->listen, X->bound, sizeof(X->bound), &why);
		if (X->fd < 0) {
			fprintf(stderr, "vmsampler export: --listen %s: %s\n", o->listen, why);
			return 2;
		}
	}
	return 0;
}

/* /metrics from the ring if there is one, remote write from the file if
 * there is one: each of the kind its option says.  0, or the exit status. */
static int open_inputs(struct run *X)
{
	const struct vms_xopts *o = X->o;
	X->in = o->ring ? o->ring : o->file;
	if (o->listen) {
		int r = vms_reader_open(&X->rd, X->in, o->ring ? 0 : VMS_READER_FOLLOW_NAME);
		if (r < 0) {
			vms_err("%s", X->rd ? vms_reader_error(X->rd) : strerror(-r));
			return vms_tool_input_status(r, false);
		}
		if (o->ring && vms_reader_kind(X->rd) != VMS_READER_RING)
			return vms_tool_usage("export", "not a live ring (use --file for a .vms file)", o->ring);
	}
	if (o->file) {
		/* what --file names is a binary stream, not a ring */
		struct vms_reader *fr = NULL;
		int r = vms_reader_open(&fr, o->file, 0);
		int kind = r < 0 ? 0 : vms_reader_kind(fr);
		bool opened = r >= 0;
		/* and of a major version this reader knows (its file header) */
		if (kind == VMS_READER_FILE && vms_reader_next(fr) == -ENOTSUP)
			r = -ENOTSUP;
		if (r < 0 && opened)
			vms_err("%s: %s", o->file, vms_reader_error(fr));
		else if (r < 0)
			vms_err("%s", fr ? vms_reader_error(fr) : strerror(-r));
		vms_reader_close(fr);
		if (r < 0)
			return vms_tool_input_status(r, opened);
		if (kind != VMS_READER_FILE)
			return vms_tool_usage("export", "not a binary stream (use --ring for a ring)", o->file);
	}
	return 0;
}

#if HAVE_REMOTE_WRITE
/* Remote write's configuration; without --listen it runs here, to its end:
 * then *done and its exit status. */
static int rw_setup(struct run *X, bool *done)
{
	const struct vms_xopts *o = X->o;
	for (unsigned k = 0; k < VMS_MMETA_N; k++)
		X->rwstats[k] = VMS_NONE;
	X->rwt.conf = (struct vms_xrw_conf){
		.url = o->rw_url,
		.input = o->file ? o->file : o->ring,
		.follow = o->file && !o->no_follow,
		.cursor = o->rw_cursor,
		.batch_frames = o->rw_frames,
		.batch_bytes = o->rw_bytes,
		.username = X->rw_user,
		.password = X->rw_pass,
		.bearer = X->bearer,
		.ca_file = o->rw_ca,
		.user_hz = X->hz,
		.mopts = &o->mo,
		.stop = &stop,
		.stats = o->listen ? X->rwstats : NULL,
		.labels = o->labels,
		.nlabels = o->nlabels,
	};
	*done = !o->listen;
	if (*done)
		return vms_xrw_run(&X->rwt.conf);
	X->sh.rwstats = X->rwstats;
	return 0;
}
#endif

/* The HTTP server on the listening socket: 0, or the exit status, said. */
static int http_start(struct run *X)
{
	const struct vms_xopts *o = X->o;
	int e = heads_start(&heads, o->header_timeout);
	if (e) {
		vms_err("export: cannot start the HTTP server's watch of request heads: %s", strerror(e));
		return 1;
	}
	/* slow clients: the idle timeout, a limit per source address, the
	 * deadline of request heads (heads_main) */
	struct MHD_OptionItem mopts[] = {
		{MHD_OPTION_LISTEN_SOCKET, X->fd, NULL},
		{MHD_OPTION_CONNECTION_TIMEOUT, 30, NULL},
		{MHD_OPTION_CONNECTION_LIMIT, CONNECTION_LIMIT, NULL},
		{MHD_OPTION_PER_IP_CONNECTION_LIMIT, PER_IP_LIMIT, NULL},
		{MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, &heads},
		{MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, &heads},
		{o->cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, X->certpem},
		{o->cert ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, X->keypem},
		{MHD_OPTION_END, 0, NULL},
	};
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | (o->cert ? MHD_USE_TLS : 0);
	X->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, &X->sh, MHD_OPTION_ARRAY, mopts, MHD_OPTION_END);
	if (!X->d) {
		/* the socket is bound already: with TLS, what fails is the
		 * certificate and key (a configuration error, not one to restart on) */
		fprintf(stderr, "vmsampler export: cannot start the HTTP server on %s%s\n", X->bound,
			o->cert ? ": --tls-cert and --tls-key are not a valid PEM certificate and its key" : "");
		return o->cert ? 2 : 1;
	}
	X->fd = -1; /* the daemon's now */
	vms_info("export: serving %s://%s/metrics from %s", o->cert ? "https" : "http", X->bound, X->in);
	return 0;
}

/* Serve until the input ends or a signal comes (remote write, if asked,
 * in a thread of its own meanwhile): the exit status. */
static int serve(struct run *X)
{
#if HAVE_REMOTE_WRITE
	if (X->o->rw_url) {
		int e = pthread_create(&X->rwt.tid, NULL, rw_main, &X->rwt);
		if (e) {
			vms_err("export: cannot start remote write: %s", strerror(e));
			return 1;
		}
		X->rw_started = true;
	}
#endif
	int rc = follow_input(&X->f, X->rd, &X->sh, X->in);
	if (vms_reader_missed(X->rd))
		vms_warn("%s: %llu frames were overwritten before they could be read", X->in,
			 (unsigned long long)vms_reader_missed(X->rd));
	unpublish(&X->sh);
	return rc;
}

/* Stop what runs, free what is held: the exit status, rc or remote write's if worse. */
static int run_free(struct run *X, int rc)
{
#if HAVE_REMOTE_WRITE
	if (X->rw_started) {
		stop = 1;
		pthread_join(X->rwt.tid, NULL);
		if (X->rwt.rc > rc)
			rc = X->rwt.rc;
	}
#endif
	if (X->d)
		MHD_stop_daemon(X->d);
	heads_stop(&heads);
	if (X->fd >= 0)
		close(X->fd);
	vms_mstate_free(&X->f);
	vms_reader_close(X->rd);
	vms_metrics_free(&X->sh.m);
	free(X->sh.v);
	free(X->sh.user);
	free(X->certpem);
	free(X->keypem);
	free(X->bearer);
	free(X->rw_user);
	return rc;
}

int vms_export_main(int argc, char **argv)
{
	struct vms_xopts o;
	int rc = vms_xopts_parse(&o, argc, argv);
	if (rc >= 0)
		return rc;
	if (o.list)
		return list_columns(o.file, &o.mo);

	double hz = (double)sysconf(_SC_CLK_TCK);
	struct run X = {.o = &o, .sh = {.mu = PTHREAD_MUTEX_INITIALIZER, .stamp = o.stamp},
			.hz = hz > 0 ? hz : 100, .fd = -1};
	vms_mstate_init(&X.f, X.hz);
	X.f.opts = o.mo;
	if ((rc = load_config(&X)) || (rc = open_inputs(&X)))
		return run_free(&X, rc);

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
#if HAVE_REMOTE_WRITE
	bool done = false;
	if (o.rw_url && ((rc = rw_setup(&X, &done)) || done))
		return run_free(&X, rc);
#endif
	if ((rc = http_start(&X)))
		return run_free(&X, rc);
	return run_free(&X, serve(&X));
}

#endif
