/* SPDX-License-Identifier: MIT */
/* rotate.c - rotation, retention and compression of the output (rotate.h). */
#include "rotate.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "rotname.h"
#include "safefile.h"
#include "vms_build.h"

#if HAVE_ZSTD
#include <zstd.h>
#endif

#define ZSTD_LEVEL 3       /* zstd's default: bench/rotate */
#define TMP_SUFFIX ".zst.tmp"

/* ---- names ---------------------------------------------------------------------- */

static int split_path(struct vms_rotate *r, const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	const char *dot = strrchr(base, '.');
	if (dot == base)
		dot = NULL; /* ".hidden": no extension */
	if (slash)
		r->dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
	else
		r->dir = strdup(".");
	r->stem = strndup(base, dot ? (size_t)(dot - base) : strlen(base));
	r->ext = strdup(dot ? dot : "");
	return r->dir && r->stem && r->ext ? 0 : -ENOMEM;
}

/* name of the file for second `sec`, collision number n, with `suffix` */
static char *make_name(const struct vms_rotate *r, int64_t sec, unsigned n, const char *suffix)
{
	struct tm tm;
	time_t t = (time_t)sec;
	char stamp[32], num[16] = "";
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	if (n)
		snprintf(num, sizeof(num), "_%03u", n);
	char *s;
	if (asprintf(&s, "%s-%s%s%s%s", r->stem, stamp, num, r->ext, suffix) < 0)
		return NULL;
	return s;
}

static bool exists_at(int dirfd, const char *name)
{
	struct stat st;
	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

bool vms_rotate_match(const struct vms_rotate *r, const char *name, bool *zst)
{
	return vms_rotname_match(r->stem, r->ext, name, zst);
}

/* The file for a first frame at t_real_ns: never an earlier second than
 * the previous file's, never a name that is there (also compressed). */
static char *next_name(struct vms_rotate *r, int64_t t_real_ns, int64_t *sec_out, unsigned *n_out)
{
	int64_t sec = t_real_ns / (int64_t)VMS_NSEC_PER_SEC;
	unsigned n = 0;
	if (r->cur && sec <= r->cur_sec) {
		sec = r->cur_sec;
		n = r->cur_n + 1;
	}
	for (; n < 1000; n++) {
		char *name = make_name(r, sec, n, ""), *zname = make_name(r, sec, n, ".zst");
		bool taken = !name || !zname || exists_at(r->dirfd, name) || exists_at(r->dirfd, zname);
		free(zname);
		if (!name)
			return NULL;
		if (!taken) {
			*sec_out = sec;
			*n_out = n;
			return name;
		}
		free(name);
	}
	/* 1000 files in one second: go on in the next second's names */
	r->cur_sec = sec;
	r->cur_n = 999;
	return next_name(r, (sec + 1) * (int64_t)VMS_NSEC_PER_SEC, sec_out, n_out);
}

static char *full_path(const struct vms_rotate *r, const char *name)
{
	char *s;
	if (asprintf(&s, "%s/%s", r->dir, name) < 0)
		return NULL;
	return s;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static void set_next(struct vms_rotate *r, int64_t t_real_ns)
{
	if (r->every.ns) {
		int64_t p = (int64_t)r->every.ns;
		int64_t k = t_real_ns >= 0 ? t_real_ns / p : 0;
		r->next_ns = (k + 1) * p;
	}
}

int vms_rotate_init(struct vms_rotate *r, const struct vms_config *c, int64_t now_real_ns, char *err,
		    size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->dirfd = -1;
	bool rot = c->rotate.ns || c->rotate.bytes;
	if (!rot) {
		if (c->keep.ns || c->keep.bytes || c->compress != VMS_COMPRESS_NONE) {
			snprintf(err, errlen, "%s needs rotate (keep and compress apply to the rotated files)",
				 c->keep.ns || c->keep.bytes ? "keep" : "compress");
			return -EINVAL;
		}
		return 0;
	}
	if (!c->output || strcmp(c->output, "-") == 0) {
		snprintf(err, errlen, "rotate needs an output file (-o PATH), not stdout");
		return -EINVAL;
	}
	if (c->compress == VMS_COMPRESS_ZSTD && !HAVE_ZSTD) {
		snprintf(err, errlen, "compress: zstd: vmsampler was compiled without zstd support");
		return -EINVAL;
	}
	r->on = true;
	r->every = c->rotate;
	r->keep = c->keep;
	r->zstd = c->compress == VMS_COMPRESS_ZSTD;
	if (split_path(r, c->output) < 0) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (!r->stem[0]) {
		snprintf(err, errlen, "rotate: the output %s has no file name", c->output);
		return -EINVAL;
	}
	r->dirfd = open(r->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->dirfd < 0) {
		int e = -errno;
		snprintf(err, errlen, "output directory %s: %s", r->dir, strerror(errno));
		return e;
	}
	int64_t sec;
	unsigned n;
	char *name = next_name(r, now_real_ns, &sec, &n);
	r->cur = name ? full_path(r, name) : NULL;
	free(name);
	if (!r->cur) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r->cur_sec = sec;
	r->cur_n = n;
	set_next(r, now_real_ns);
	return 0;
}

char *vms_rotate_advance(struct vms_rotate *r, int64_t t_real_ns)
{
	int64_t sec;
	unsigned n;
	int64_t osec = r->cur_sec;
	unsigned on = r->cur_n;
	char *name = next_name(r, t_real_ns, &sec, &n);
	char *path = name ? full_path(r, name) : NULL;
	free(name);
	if (!path) {
		r->cur_sec = osec;
		r->cur_n = on;
		return NULL;
	}
	char *prev = r->cur;
	r->cur = path;
	r->cur_sec = sec;
	r->cur_n = n;
	set_next(r, t_real_ns);
	return prev;
}

void vms_rotate_undo(struct vms_rotate *r, char *prev)
{
	free(r->cur);
	r->cur = prev;
}

/* ---- compression ------------------------------------------------------------------ */

#if HAVE_ZSTD
static int compress_fd(int in, int out, int64_t size, char *err, size_t errlen)
{
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	size_t isz = ZSTD_CStreamInSize(), osz = ZSTD_CStreamOutSize();
	uint8_t *ib = malloc(isz), *ob = malloc(osz);
	int r = 0;
	if (!cc || !ib || !ob) {
		snprintf(err, errlen, "out of memory");
		r = -ENOMEM;
		goto out;
	}
	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, ZSTD_LEVEL);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
	if (size >= 0)
		ZSTD_CCtx_setPledgedSrcSize(cc, (unsigned long long)size);
	for (bool last = false; !last;) {
		ssize_t n = read(in, ib, isz);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			snprintf(err, errlen, "read: %s", strerror(errno));
			goto out;
		}
		last = n == 0;
		ZSTD_inBuffer ibuf = {ib, (size_t)n, 0};
		for (bool done = false; !done;) {
			ZSTD_outBuffer obuf = {ob, osz, 0};
			size_t left = ZSTD_compressStream2(cc, &obuf, &ibuf, last ? ZSTD_e_end : ZSTD_e_continue);
			if (ZSTD_isError(left)) {
				/* the file grew or shrank since it was closed */
				snprintf(err, errlen, "zstd: %s", ZSTD_getErrorName(left));
				r = -EIO;
				goto out;
			}
			for (size_t off = 0; off < obuf.pos;) {
				ssize_t w = write(out, ob + off, obuf.pos - off);
				if (w < 0 && errno == EINTR)
					continue;
				if (w < 0) {
					r = -errno;
					snprintf(err, errlen, "write: %s", strerror(errno));
					goto out;
				}
				off += (size_t)w;
			}
			done = last ? left == 0 : ibuf.pos == ibuf.size;
		}
	}
out:
	ZSTD_freeCCtx(cc);
	free(ib);
	free(ob);
	return r;
}
#endif

int vms_rotate_compress(int dirfd, const char *in, char *err, size_t errlen)
{
#if HAVE_ZSTD
	char *tmp = NULL, *dst = NULL;
	int ifd = -1, ofd = -1, r;
	struct stat st;
	if (asprintf(&tmp, "%s%s", in, TMP_SUFFIX) < 0 || asprintf(&dst, "%s.zst", in) < 0) {
		free(tmp);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ifd = openat(dirfd, in, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (ifd < 0 || fstat(ifd, &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s", strerror(errno));
		goto out;
	}
	/* truncated only once it is known to be ours (safefile.h: another
	 * user's file of that name, in /tmp say, is left alone) */
	ofd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, st.st_mode & 0666);
	struct stat ost;
	char why[128];
	if (ofd >= 0 && fstat(ofd, &ost) == 0 && vms_safe_foreign(&ost, why, sizeof(why))) {
		r = -EEXIST;
		snprintf(err, errlen, "%s %s", tmp, why);
		tmp[0] = '\0'; /* not ours to remove */
		goto out;
	}
	if (ofd < 0 || fstat(ofd, &ost) < 0 || ftruncate(ofd, 0) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	r = compress_fd(ifd, ofd, S_ISREG(st.st_mode) ? st.st_size : -1, err, errlen);
	/* whole on disk before the original goes */
	if (r == 0 && fsync(ofd) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: fsync: %s", tmp, strerror(errno));
	}
	if (close(ofd) < 0 && r == 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
	}
	ofd = -1;
	if (r == 0 && renameat(dirfd, tmp, dirfd, dst) < 0) {
		r = -errno;
		snprintf(err, errlen, "rename to %s: %s", dst, strerror(errno));
	}
	if (r == 0 && unlinkat(dirfd, in, 0) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s compressed, but cannot be removed: %s", in, strerror(errno));
	}
out:
	if (r < 0 && tmp[0])
		(void)unlinkat(dirfd, tmp, 0);
	if (ifd >= 0)
		close(ifd);
	if (ofd >= 0)
		close(ofd);
	free(tmp);
	free(dst);
	return r;
#else
	(void)dirfd;
	(void)in;
	snprintf(err, errlen, "compiled without zstd support");
	return -ENOTSUP;
#endif
}

/* Compress in a child process, so that the loop never waits for it. */
static void start_child(struct vms_rotate *r)
{
	if (r->child || !r->nqueue)
		return;
	char *name = r->queue[0];
	memmove(r->queue, r->queue + 1, --r->nqueue * sizeof(r->queue[0]));
	fflush(NULL); /* nothing buffered is written twice */
	pid_t pid = fork();
	if (pid == 0) {
		char err[256];
		/* the sampler and everything else go first */
		(void)setpriority(PRIO_PROCESS, 0, 10);
		signal(SIGPIPE, SIG_DFL);
		int e = vms_rotate_compress(r->dirfd, name, err, sizeof(err));
		if (e < 0)
			vms_err("compressing %s/%s: %s; left uncompressed", r->dir, name, err);
		_exit(e < 0 ? 1 : 0);
	}
	if (pid < 0) {
		vms_warn("compressing %s/%s: fork: %s; left uncompressed", r->dir, name, strerror(errno));
		r->compress_failed++;
		free(name);
		return;
	}
	r->child = pid;
	r->child_name = name;
}

static void reap(struct vms_rotate *r, bool wait)
{
	int st;
	if (!r->child)
		return;
	pid_t p;
	do
		p = waitpid(r->child, &st, wait ? 0 : WNOHANG);
	while (p < 0 && errno == EINTR);
	if (p == 0)
		return; /* still compressing */
	if (p == r->child && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		r->compressed++;
		vms_debug("compressed %s/%s", r->dir, r->child_name);
	} else {
		r->compress_failed++; /* the child said why */
	}
	r->child = 0;
	free(r->child_name);
	r->child_name = NULL;
}

void vms_rotate_poll(struct vms_rotate *r)
{
	if (!r->on)
		return;
	reap(r, false);
	start_child(r);
}

static void enqueue(struct vms_rotate *r, char *name)
{
	if (!name)
		return;
	for (unsigned i = 0; i < r->nqueue; i++)
		if (strcmp(r->queue[i], name) == 0) {
			free(name);
			return;
		}
	if (r->child_name && strcmp(r->child_name, name) == 0) {
		free(name);
		return;
	}
	if (r->nqueue == VMS_ROTATE_QUEUE) {
		vms_warn("compression is %u files behind: %s/%s left uncompressed", VMS_ROTATE_QUEUE, r->dir, name);
		free(name);
		return;
	}
	r->queue[r->nqueue++] = name;
}

/* ---- retention ---------------------------------------------------------------------- */

struct entry {
	char *name;
	uint64_t size;
	int64_t mtime_ns;
	bool zst;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

/* The files of this output in the directory, oldest first. */
static struct entry *scan(struct vms_rotate *r, size_t *n_out, bool tmp_too)
{
	int fd = dup(r->dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct entry *v = NULL;
	size_t n = 0, cap = 0;
	*n_out = 0;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	rewinddir(d);
	struct dirent *de;
	while ((de = readdir(d))) {
		bool zst;
		size_t len = strlen(de->d_name), tl = strlen(TMP_SUFFIX);
		if (tmp_too && len > tl && strcmp(de->d_name + len - tl, TMP_SUFFIX) == 0) {
			/* a compression a previous run did not finish */
			char *base = strndup(de->d_name, len - tl);
			if (base && vms_rotate_match(r, base, &zst) && !zst &&
			    !(r->child_name && strcmp(base, r->child_name) == 0))
				(void)unlinkat(r->dirfd, de->d_name, 0);
			free(base);
			continue;
		}
		if (!vms_rotate_match(r, de->d_name, &zst))
			continue;
		struct stat st;
		if (fstatat(r->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct entry *nv = realloc(v, nc * sizeof(*nv));
			if (!nv)
				break;
			v = nv;
			cap = nc;
		}
		v[n].name = strdup(de->d_name);
		if (!v[n].name)
			break;
		v[n].size = (uint64_t)st.st_size;
		v[n].mtime_ns = (int64_t)st.st_mtim.tv_sec * (int64_t)VMS_NSEC_PER_SEC + st.st_mtim.tv_nsec;
		v[n].zst = zst;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), by_name);
	*n_out = n;
	return v;
}

static void free_entries(struct entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

/* The file being written, the one being compressed (and its .zst being
 * made), and those queued are not closed-and-settled: never deleted. */
static bool busy(const struct vms_rotate *r, const char *name)
{
	const char *cur = r->cur ? base_name(r->cur) : "";
	size_t cl = strlen(cur);
	if (strncmp(name, cur, cl) == 0 && (name[cl] == '\0' || strcmp(name + cl, ".zst") == 0))
		return true;
	if (r->child_name) {
		size_t kl = strlen(r->child_name);
		if (strncmp(name, r->child_name, kl) == 0 && (name[kl] == '\0' || strcmp(name + kl, ".zst") == 0))
			return true;
	}
	for (unsigned i = 0; i < r->nqueue; i++)
		if (strcmp(name, r->queue[i]) == 0)
			return true;
	return false;
}

static void retain(struct vms_rotate *r, int64_t now_real_ns)
{
	if (!r->keep.ns && !r->keep.bytes)
		return;
	size_t n;
	struct entry *v = scan(r, &n, false);
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += v[i].size;
	for (size_t i = 0; i < n; i++) {
		bool old = r->keep.ns && v[i].mtime_ns < now_real_ns - (int64_t)r->keep.ns;
		bool over = r->keep.bytes && total > r->keep.bytes;
		if (!old && !over)
			continue;
		if (busy(r, v[i].name))
			continue;
		if (unlinkat(r->dirfd, v[i].name, 0) < 0) {
			vms_warn("keep: cannot delete %s/%s: %s", r->dir, v[i].name, strerror(errno));
			continue;
		}
		total -= v[i].size;
		r->deleted++;
		vms_debug("keep: deleted %s/%s (%s)", r->dir, v[i].name, old ? "too old" : "over the total size");
	}
	free_entries(v, n);
}

void vms_rotate_start(struct vms_rotate *r, int64_t now_real_ns)
{
	if (!r->on)
		return;
	size_t n;
	struct entry *v = scan(r, &n, r->zstd);
	for (size_t i = 0; i < n && r->zstd; i++) {
		if (!v[i].zst && !busy(r, v[i].name)) {
			char *name = strdup(v[i].name);
			if (name)
				enqueue(r, name);
		}
	}
	free_entries(v, n);
	retain(r, now_real_ns);
	vms_rotate_poll(r);
}

void vms_rotate_closed(struct vms_rotate *r, char *path, int64_t now_real_ns)
{
	if (r->zstd && path) {
		char *name = strdup(base_name(path));
		if (name)
			enqueue(r, name);
	}
	free(path);
	retain(r, now_real_ns);
	vms_rotate_poll(r);
}

void vms_rotate_fini(struct vms_rotate *r, int64_t now_real_ns)
{
	if (!r->on)
		return; /* (the directory is opened only with rotation on) */
	reap(r, true);
	if (r->zstd && r->cur)
		enqueue(r, strdup(base_name(r->cur)));
	free(r->cur);
	r->cur = NULL;
	/* no tick is left to delay: here, one after the other */
	while (r->nqueue) {
		char err[256], *name = r->queue[0];
		memmove(r->queue, r->queue + 1, --r->nqueue * sizeof(r->queue[0]));
		if (name && vms_rotate_compress(r->dirfd, name, err, sizeof(err)) < 0) {
			vms_err("compressing %s/%s: %s; left uncompressed", r->dir, name, err);
			r->compress_failed++;
		} else if (name) {
			r->compressed++;
		}
		free(name);
	}
	retain(r, now_real_ns);
	close(r->dirfd);
	free(r->dir);
	free(r->stem);
	free(r->ext);
	memset(r, 0, sizeof(*r));
	r->dirfd = -1;
}
