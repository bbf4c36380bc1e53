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

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "metrics.h"
#include "ring.h"
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

static const char usage_text[] =
	"Usage: vmsampler export (--ring PATH | --file FILE.vms) [--listen ADDR:PORT]\n"
	"                        [--tls-cert FILE --tls-key FILE] [--basic-auth FILE]\n"
	"Serve the newest frame of a live ring (vmsampler --ring PATH) or of a binary\n"
	"stream that is still being written as Prometheus metrics on\n"
	"http://ADDR:PORT/metrics, until SIGINT or SIGTERM.  Names, units and labels\n"
	"are node_exporter's and the libvirt exporter's where they have the same\n"
	"quantity (node_cpu_seconds_total, libvirt_domain_info_cpu_time_seconds_total,\n"
	"...), vmsampler_* for the rest; every name is in vmsampler(1), EXPORT.\n"
	"\n"
	"  -r, --ring=PATH        follow the live ring at PATH\n"
	"  -f, --file=FILE        follow the binary stream FILE (.vms) as it grows\n"
	"  -l, --listen=ADDR:PORT where to listen (default 127.0.0.1:9465: loopback\n"
	"                         only; [::1]:PORT for IPv6, 0.0.0.0:PORT for every\n"
	"                         interface; port 0 picks a free one, said on stderr)\n"
	"      --tls-cert=FILE    serve HTTPS with this PEM certificate (and --tls-key)\n"
	"      --tls-key=FILE     the certificate's PEM private key\n"
	"      --basic-auth=FILE  require HTTP basic authentication: FILE holds one\n"
	"                         line USER:PASSWORD and may not be readable by others\n"
	"  -h, --help             show this help\n"
	"\n"
	"Formats by the Accept header: OpenMetrics 1.0.0 when it names\n"
	"application/openmetrics-text (as Prometheus does), else the Prometheus text\n"
	"format 0.0.4; gzip when Accept-Encoding allows it.  Samples carry the\n"
	"frame's wall time.  Other paths answer 404.\n"
	"\n"
	"Exit status: 0 stopped (SIGINT, SIGTERM, or the writer exited cleanly), 1 the\n"
	"input failed (the writer died, damaged input, an I/O error), 2 usage error.\n"
	"See vmsampler(1).\n";

#if !HAVE_MICROHTTPD

int vms_export_main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage_text, stdout);
			return fflush(stdout) == 0 ? 0 : 1;
		}
	fprintf(stderr, "vmsampler export: this build has no HTTP server (libmicrohttpd)\n");
	return 2;
}

#else

#define DEFAULT_LISTEN "127.0.0.1:9465"

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
};

/* The newest frame to the server. */
static void publish(struct vms_mstate *f, struct vms_reader *rd, struct shared *sh)
{
	vms_mstate_reader(f, rd);
	struct vms_metrics old = {0};
	uint64_t *oldv = NULL;
	pthread_mutex_lock(&sh->mu);
	if (f->fresh) {
		/* the server gets its own copy of the samples; the values
		 * array is sized for them */
		uint64_t *v = malloc((size_t)(f->ncols ? f->ncols : 1) * sizeof(*v));
		struct vms_metrics m = f->m;
		m.m = malloc((size_t)f->m.nm * sizeof(*m.m));
		bool ok = v && m.m;
		for (uint32_t k = 0; ok && k < f->m.nm; k++) {
			m.m[k] = f->m.m[k];
			m.m[k].labels = strdup(f->m.m[k].labels);
			if (!m.m[k].labels) {
				m.nm = k;
				ok = false;
			}
		}
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

static bool same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = la != lb;
	for (size_t i = 0; i < la; i++)
		d |= (unsigned char)(a[i] ^ b[i % (lb ? lb : 1)]);
	return d == 0;
}

static bool authorized(struct shared *sh, struct MHD_Connection *c)
{
	if (!sh->user)
		return true;
	char *pass = NULL, *user = MHD_basic_auth_get_username_password(c, &pass);
	bool ok = false;
	if (user && pass) { /* both compared, whatever the first gives */
		bool u = same(user, sh->user), p = same(pass, sh->pass);
		ok = u && p;
	}
	MHD_free(user);
	MHD_free(pass);
	return ok;
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

static bool accepts_gzip(const char *ae)
{
	/* "gzip" named without q=0 */
	const char *p = ae ? strstr(ae, "gzip") : NULL;
	if (!p)
		return false;
	const char *end = strchr(p, ',');
	const char *q = strstr(p, "q=");
	return !q || (end && q > end) || strtod(q + 2, NULL) > 0;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	struct shared *sh = cls;
	(void)version;
	(void)upload;
	(void)con_cls;
	if (*upload_size)
		return MHD_NO; /* no request bodies here */
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n");
	if (!authorized(sh, c)) {
		struct MHD_Response *resp = MHD_create_response_from_buffer(
			14, (void *)"unauthorized\r\n", MHD_RESPMEM_PERSISTENT);
		if (!resp)
			return MHD_NO;
		enum MHD_Result r = MHD_queue_basic_auth_fail_response(c, "vmsampler", resp);
		MHD_destroy_response(resp);
		return r;
	}
	if (strcmp(url, "/metrics") != 0)
		return reply(c, MHD_HTTP_NOT_FOUND, "not found: vmsampler export serves /metrics\n");

	enum vms_expo fmt =
		vms_expo_negotiate(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT));
	struct vms_mbuf b = {0};
	bool have;
	pthread_mutex_lock(&sh->mu);
	have = sh->have;
	if (have)
		vms_metrics_expose(&sh->m, sh->v, sh->meta, fmt, &b);
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
	if (accepts_gzip(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING))) {
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

/* a whole small file, NUL-terminated: NULL with errno */
static char *slurp(const char *path, size_t max, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *p = NULL;
	if (fstat(fd, st) < 0)
		goto out;
	if (!S_ISREG(st->st_mode) || (size_t)st->st_size > max) {
		errno = S_ISREG(st->st_mode) ? EFBIG : EINVAL;
		goto out;
	}
	p = malloc((size_t)st->st_size + 1);
	if (!p)
		goto out;
	size_t n = 0;
	while (n < (size_t)st->st_size) {
		ssize_t k = read(fd, p + n, (size_t)st->st_size - n);
		if (k <= 0) {
			free(p);
			p = NULL;
			if (k == 0)
				errno = EIO;
			goto out;
		}
		n += (size_t)k;
	}
	p[n] = '\0';
out:;
	int e = errno;
	close(fd);
	errno = e;
	return p;
}

static int load_auth(struct shared *sh, const char *path)
{
	struct stat st;
	char *s = slurp(path, 4096, &st);
	if (!s) {
		fprintf(stderr, "vmsampler export: --basic-auth %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (st.st_mode & (S_IROTH | S_IWOTH)) {
		fprintf(stderr, "vmsampler export: --basic-auth %s: readable by others (chmod o-rw)\n", path);
		free(s);
		return -1;
	}
	s[strcspn(s, "\r\n")] = '\0';
	char *colon = strchr(s, ':');
	if (!colon || colon == s || !colon[1]) {
		fprintf(stderr, "vmsampler export: --basic-auth %s: expected one line USER:PASSWORD\n", path);
		free(s);
		return -1;
	}
	*colon = '\0';
	sh->user = s;
	sh->pass = strdup(colon + 1);
	if (!sh->pass) {
		fprintf(stderr, "vmsampler export: out of memory\n");
		return -1;
	}
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
	while (!stop) {
		int r = vms_reader_next(rd);
		if (r > 0) {
			if ((r = vms_mstate_take(f, rd)) < 0) {
				vms_err("%s", strerror(-r));
				return 1;
			}
			pending = true;
			continue;
		}
		if (pending) {
			publish(f, rd, sh);
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

int vms_export_main(int argc, char **argv)
{
	enum { OPT_CERT = 256, OPT_KEY, OPT_AUTH };
	static const struct option opts[] = {
		{"ring", required_argument, NULL, 'r'},
		{"file", required_argument, NULL, 'f'},
		{"listen", required_argument, NULL, 'l'},
		{"tls-cert", required_argument, NULL, OPT_CERT},
		{"tls-key", required_argument, NULL, OPT_KEY},
		{"basic-auth", required_argument, NULL, OPT_AUTH},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *ring = NULL, *file = NULL, *listen_spec = DEFAULT_LISTEN, *cert = NULL, *key = NULL,
		   *auth = NULL;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":r:f:l:h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			ring = optarg;
			break;
		case 'f':
			file = optarg;
			break;
		case 'l':
			listen_spec = optarg;
			break;
		case OPT_CERT:
			cert = optarg;
			break;
		case OPT_KEY:
			key = optarg;
			break;
		case OPT_AUTH:
			auth = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return fflush(stdout) == 0 ? 0 : 1;
		default:
			return vms_tool_bad_option("export", c, argv);
		}
	}
	if (optind != argc)
		return vms_tool_usage("export", "unexpected argument", argv[optind]);
	if (!ring == !file)
		return vms_tool_usage("export", ring ? "give --ring or --file, not both" : "missing --ring or --file",
				      NULL);
	if (!cert != !key)
		return vms_tool_usage("export", "--tls-cert and --tls-key go together", NULL);

	struct shared sh = {.mu = PTHREAD_MUTEX_INITIALIZER};
	struct vms_mstate f;
	struct vms_reader *rd = NULL;
	double hz = (double)sysconf(_SC_CLK_TCK);
	char *certpem = NULL, *keypem = NULL;
	struct MHD_Daemon *d = NULL;
	int rc = 2, fd = -1;
	char bound[INET6_ADDRSTRLEN + 16] = "";
	const char *why;

	vms_mstate_init(&f, hz > 0 ? hz : 100);
	if (auth && load_auth(&sh, auth) < 0)
		goto out;
	if (cert) {
		struct stat st;
		if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
			fprintf(stderr, "vmsampler export: this libmicrohttpd has no TLS\n");
			goto out;
		}
		if (!(certpem = slurp(cert, 1 << 20, &st))) {
			fprintf(stderr, "vmsampler export: --tls-cert %s: %s\n", cert, strerror(errno));
			goto out;
		}
		if (!(keypem = slurp(key, 1 << 20, &st))) {
			fprintf(stderr, "vmsampler export: --tls-key %s: %s\n", key, strerror(errno));
			goto out;
		}
	}
	fd = listen_on(listen_spec, bound, sizeof(bound), &why);
	if (fd < 0) {
		fprintf(stderr, "vmsampler export: --listen %s: %s\n", listen_spec, why);
		goto out;
	}

	const char *in = ring ? ring : file;
	int r = vms_reader_open(&rd, in, ring ? 0 : VMS_READER_FOLLOW);
	if (r < 0) {
		vms_err("%s", rd ? vms_reader_error(rd) : strerror(-r));
		rc = 1;
		goto out;
	}
	if (ring && vms_reader_kind(rd) != VMS_READER_RING) {
		rc = vms_tool_usage("export", "not a live ring (use --file for a .vms file)", ring);
		goto out;
	}
	if (file && vms_reader_kind(rd) != VMS_READER_FILE) {
		rc = vms_tool_usage("export", "not a binary stream (use --ring for a ring)", file);
		goto out;
	}

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | (cert ? MHD_USE_TLS : 0);
	if (cert)
		d = MHD_start_daemon(flags, 0, NULL, NULL, handle, &sh, MHD_OPTION_LISTEN_SOCKET, fd,
				     MHD_OPTION_HTTPS_MEM_CERT, certpem, MHD_OPTION_HTTPS_MEM_KEY, keypem,
				     MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_CONNECTION_LIMIT, 64u,
				     MHD_OPTION_END);
	else
		d = MHD_start_daemon(flags, 0, NULL, NULL, handle, &sh, MHD_OPTION_LISTEN_SOCKET, fd,
				     MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_CONNECTION_LIMIT, 64u,
				     MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "vmsampler export: cannot start the HTTP server on %s%s\n", bound,
			cert ? " (is the certificate and key pair valid PEM?)" : "");
		rc = 1;
		goto out;
	}
	fd = -1; /* the daemon's now */
	vms_info("export: serving %s://%s/metrics from %s", cert ? "https" : "http", bound, in);
	rc = follow_input(&f, rd, &sh, in);
	if (vms_reader_missed(rd))
		vms_warn("%s: %llu frames were overwritten before they could be read", in,
			 (unsigned long long)vms_reader_missed(rd));
	unpublish(&sh);
out:
	if (d)
		MHD_stop_daemon(d);
	if (fd >= 0)
		close(fd);
	vms_mstate_free(&f);
	vms_reader_close(rd);
	vms_metrics_free(&sh.m);
	free(sh.v);
	free(sh.user);
	free(sh.pass);
	free(certpem);
	free(keypem);
	return rc;
}

#endif
