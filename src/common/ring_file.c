/* SPDX-License-Identifier: MIT */
/* ring_file.c - the frame ring as a shared file: safe creation, growth by
 * atomic replacement, the schema area, and the reader's read-only view.
 * Layout and protocols: include/vmsampler/ring.h, vmsampler-ring(5). */
#include "ring.h"
#include "safefile.h"

#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>


VMS_PRINTF(3, 4)
static int say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	if (!errlen)
		return 0;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return 0;
}

static inline uint64_t load64(const uint64_t *p, int mo)
{
	return __atomic_load_n(p, mo);
}

uint64_t vms_pidns_ino(void)
{
	struct stat st;
	return stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

int vms_ring_writer_state(const struct vms_ring_header *h, uint64_t my_pidns)
{
	uint32_t flags = __atomic_load_n(&h->flags, __ATOMIC_ACQUIRE);
	if (flags & VMS_RING_F_CLOSED)
		return VMS_WRITER_EXITED;
	uint64_t hb = load64(&h->heartbeat_mono_ns, __ATOMIC_RELAXED);
	uint64_t iv = h->interval_ns ? h->interval_ns : VMS_NSEC_PER_SEC;
	uint64_t now = vms_mono_now();
	uint64_t age = hb && now > hb ? now - hb : 0;
	/* the pid is checked only when frames are late (a system call, and
	 * the answer is only meaningful in the writer's pid namespace) */
	bool late = !hb || age > 2 * iv + VMS_NSEC_PER_SEC / 2;
	if (late && h->writer_pidns && h->writer_pidns == my_pidns && h->writer_pid &&
	    h->writer_pid <= INT_MAX && kill((pid_t)h->writer_pid, 0) < 0 && errno == ESRCH)
		return VMS_WRITER_DIED;
	uint64_t hung = 10 * iv > 5 * VMS_NSEC_PER_SEC ? 10 * iv : 5 * VMS_NSEC_PER_SEC;
	if (hb && age > hung)
		return VMS_WRITER_HUNG;
	return VMS_WRITER_ALIVE;
}

const char *vms_writer_state_name(int st)
{
	switch (st) {
	case VMS_WRITER_ALIVE:
		return "alive";
	case VMS_WRITER_EXITED:
		return "exited";
	case VMS_WRITER_DIED:
		return "died (its process no longer exists)";
	case VMS_WRITER_HUNG:
		return "not responding (no heartbeat)";
	}
	return "?";
}

/* ---- the header of a ring someone else made ------------------------------ */

static int check_header(const struct vms_ring_header *h, size_t len, char *err, size_t errlen)
{
	if (len < VMS_RING_PAGE || memcmp(h->magic, VMS_RING_MAGIC, 7) != 0) {
		say(err, errlen, "not a vmsampler ring (no VMSRING magic)");
		return -EBADMSG;
	}
	if ((uint8_t)h->magic[7] != VMS_RING_VERSION || h->version != VMS_RING_VERSION) {
		say(err, errlen, "vmsampler ring of version %u; this reader knows version %u",
		    h->version != VMS_RING_VERSION ? h->version : (uint8_t)h->magic[7], VMS_RING_VERSION);
		return -ENOTSUP;
	}
	uint64_t n = h->slot_count, ss = h->slot_size, hs = h->header_size;
	uint64_t need_ss = sizeof(struct vms_ring_slot_head) + vms_frame_size(h->slot_cols) + 8;
	if (n < 2 || n > (1u << 20) || (n & (n - 1)) || ss % 64 || ss < need_ss ||
	    hs < VMS_RING_PAGE || hs % VMS_RING_PAGE ||
	    (h->schema_cap && (h->schema_off != VMS_RING_PAGE || h->schema_cap > hs - VMS_RING_PAGE))) {
		say(err, errlen, "inconsistent ring header (slots %llu x %llu bytes, %u columns, header %llu)",
		    (unsigned long long)n, (unsigned long long)ss, h->slot_cols, (unsigned long long)hs);
		return -EBADMSG;
	}
	if (h->event_off && (h->event_off < VMS_RING_PAGE || h->event_size != sizeof(struct vms_ring_event) ||
			     h->event_count < 2 || h->event_count > 65536 ||
			     (h->event_count & (h->event_count - 1)) ||
			     h->event_off + (uint64_t)h->event_count * h->event_size > hs)) {
		say(err, errlen, "inconsistent ring header (event area at %llu: %u x %u bytes)",
		    (unsigned long long)h->event_off, h->event_count, h->event_size);
		return -EBADMSG;
	}
	if (hs + n * ss > len) {
		say(err, errlen, "ring file is %zu bytes, its header describes %llu", len,
		    (unsigned long long)(hs + n * ss));
		return -EBADMSG;
	}
	return 0;
}

static void view_init(struct vms_ring *r, const void *m, size_t len)
{
	const struct vms_ring_header *h = m;
	memset(r, 0, sizeof(*r));
	r->hdr = (struct vms_ring_header *)m;
	r->slots = (uint8_t *)m + h->header_size;
	r->map_len = len;
	r->mask = h->slot_count - 1;
	r->slot_size = h->slot_size;
	r->slot_cols = h->slot_cols;
	if (h->event_off) {
		r->events = (struct vms_ring_event *)((uint8_t *)m + h->event_off);
		r->ev_mask = h->event_count - 1;
	}
	r->readonly = true;
}

int vms_ring_view_mem(struct vms_ring *r, const void *data, size_t len, char *err, size_t errlen)
{
	int e = check_header(data, len, err, errlen);
	if (e < 0)
		return e;
	view_init(r, data, len);
	r->map_len = 0; /* not ours to unmap */
	return 0;
}

int vms_ring_open_read(struct vms_ring *r, const char *path, char *err, size_t errlen)
{
	/* a reader may follow a link to a ring (only creation must not) */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	int e;
	if (fd < 0) {
		e = -errno;
		say(err, errlen, "%s", strerror(-e));
		return e;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)VMS_RING_PAGE) {
		close(fd);
		say(err, errlen, "not a vmsampler ring (not a regular file of at least 4096 bytes)");
		return -EBADMSG;
	}
	size_t len = (size_t)st.st_size;
	void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	e = m == MAP_FAILED ? -errno : 0;
	close(fd);
	if (e < 0) {
		say(err, errlen, "mmap: %s", strerror(-e));
		return e;
	}
	e = check_header(m, len, err, errlen);
	if (e < 0) {
		munmap(m, len);
		return e;
	}
	view_init(r, m, len);
	r->path = strdup(path);
	if (!r->path) {
		munmap(m, len);
		memset(r, 0, sizeof(*r));
		return -ENOMEM;
	}
	return 0;
}

/* ---- the schema area ------------------------------------------------------- */

bool vms_ring_fits(const struct vms_ring *r, uint32_t ncols, size_t schema_bytes)
{
	if (ncols > r->slot_cols)
		return false;
	return !r->path || schema_bytes <= r->hdr->schema_cap;
}

void *vms_ring_schema_begin(struct vms_ring *r, size_t len)
{
	struct vms_ring_header *h = r->hdr;
	if (!r->path || !h->schema_cap || len > h->schema_cap)
		return NULL; /* anonymous; or vms_ring_fits() said no: the loop grew the ring instead */
	uint64_t seq = atomic_load_explicit((_Atomic uint64_t *)&h->schema_seq, memory_order_relaxed);
	atomic_store_explicit((_Atomic uint64_t *)&h->schema_seq, seq + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	return (uint8_t *)h + h->schema_off;
}

void vms_ring_schema_end(struct vms_ring *r, uint32_t gen, size_t len)
{
	struct vms_ring_header *h = r->hdr;
	uint64_t seq = atomic_load_explicit((_Atomic uint64_t *)&h->schema_seq, memory_order_relaxed);
	__atomic_store_n(&h->schema_gen, gen, __ATOMIC_RELAXED);
	__atomic_store_n(&h->schema_len, (uint32_t)len, __ATOMIC_RELAXED);
	atomic_store_explicit((_Atomic uint64_t *)&h->schema_seq, seq + 1, memory_order_release);
}

ssize_t vms_ring_read_schema(const struct vms_ring *r, void *buf, size_t cap, uint32_t *gen)
{
	const struct vms_ring_header *h = r->hdr;
	if (!h->schema_cap)
		return -EBADMSG;
	uint64_t s1 = __atomic_load_n(&h->schema_seq, __ATOMIC_ACQUIRE);
	if (s1 == 0)
		return -EAGAIN; /* nothing published yet */
	if (s1 & 1)
		return -EAGAIN;
	uint32_t len = __atomic_load_n(&h->schema_len, __ATOMIC_RELAXED);
	uint32_t g = __atomic_load_n(&h->schema_gen, __ATOMIC_RELAXED);
	if (len > h->schema_cap)
		return -EBADMSG;
	if (len > cap)
		return -ENOBUFS;
	vms_ring_copy(buf, (const uint8_t *)h + h->schema_off, len);
	atomic_thread_fence(memory_order_acquire);
	if (__atomic_load_n(&h->schema_seq, __ATOMIC_RELAXED) != s1)
		return -EAGAIN;
	*gen = g;
	return (ssize_t)len;
}

/* ---- creation ---------------------------------------------------------------- */

/* A new ring file under a temporary name in path's directory, mapped.
 * Its blocks are reserved (fallocate): a file system that fills later
 * (/dev/shm is memory that others use too) cannot take a page away from
 * the mapping, where a write would die of SIGBUS.  On failure err says
 * why. */
static int build_file(struct vms_ring *r, const char *path, uint32_t slot_count, uint32_t slot_cols,
		      size_t schema_bytes, uint32_t mode, uint64_t interval_ns, char *err,
		      size_t errlen)
{
	struct vms_ring_layout lay;
	int e = vms_ring_layout(&lay, slot_count, slot_cols, schema_bytes ? schema_bytes : 1);
	if (e < 0) {
		say(err, errlen, "cannot create it: %s", strerror(-e));
		return e;
	}
	char *dup = strdup(path), *tmp = NULL, *p = strdup(path);
	if (!dup || !p) {
		e = -ENOMEM;
		goto fail;
	}
	const char *dir = dirname(dup);
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	if (asprintf(&tmp, "%s/.%s.XXXXXX", dir, base) < 0) {
		tmp = NULL;
		e = -ENOMEM;
		goto fail;
	}
	int fd = mkostemp(tmp, O_CLOEXEC); /* O_EXCL: never follows a link */
	if (fd < 0) {
		e = -errno;
		goto fail;
	}
	void *m = MAP_FAILED;
	if (fchmod(fd, mode) < 0) {
		e = -errno;
	} else if ((e = posix_fallocate(fd, 0, (off_t)lay.len)) != 0) {
		/* (glibc writes the blocks itself where fallocate is missing) */
		e = -e;
		say(err, errlen, "cannot reserve its %zu bytes in %s: %s", lay.len, dir, strerror(-e));
	} else if ((m = mmap(NULL, lay.len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		e = -errno;
	}
	close(fd);
	if (e < 0) {
		unlink(tmp);
		goto fail;
	}
	vms_ring_init_mapping(r, m, &lay, slot_cols);
	r->hdr->flags = VMS_RING_F_SHARED;
	r->hdr->interval_ns = interval_ns;
	r->hdr->writer_pidns = vms_pidns_ino();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	r->hdr->created_real_ns = ts.tv_sec * 1000000000LL + ts.tv_nsec;
	r->hdr->run_id = r->hdr->created_real_ns ^ ((uint64_t)getpid() << 40);
	r->path = p;
	r->tmp = tmp;
	r->mode = mode;
	r->interval_ns = interval_ns;
	free(dup);
	return 0;
fail:
	if (errlen && !err[0])
		say(err, errlen, "cannot create it: %s", strerror(-e));
	free(dup);
	free(p);
	free(tmp);
	return e;
}

/* What is at path: 0 nothing; 1 a ring whose writer is gone (its dev and
 * inode in *st); -errno refused, with err set. */
static int check_existing(const char *path, struct stat *st, char *err, size_t errlen)
{
	if (lstat(path, st) < 0) {
		if (errno == ENOENT)
			return 0;
		int e = -errno;
		say(err, errlen, "%s", strerror(-e));
		return e;
	}
	if (S_ISLNK(st->st_mode)) {
		say(err, errlen, "is a symbolic link; not following it");
		return -ELOOP;
	}
	if (!S_ISREG(st->st_mode)) {
		say(err, errlen, "exists and is not a regular file; not replacing it");
		return -EEXIST;
	}
	/* another user's file in /dev/shm (safefile.h): even a stale ring
	 * is theirs to remove, not ours to write a flag into */
	char why[128];
	if (vms_safe_foreign(st, why, sizeof(why))) {
		say(err, errlen, "%s (remove it, or give another --ring path)", why);
		return -EEXIST;
	}
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct vms_ring_header h;
	ssize_t n = fd >= 0 ? pread(fd, &h, sizeof(h), 0) : -1;
	struct stat st2;
	bool same = fd >= 0 && fstat(fd, &st2) == 0 && st2.st_dev == st->st_dev && st2.st_ino == st->st_ino;
	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)sizeof(h) || !same || memcmp(h.magic, VMS_RING_MAGIC, 7) != 0) {
		say(err, errlen, "exists and is not a vmsampler ring; not replacing it");
		return -EEXIST;
	}
	if (h.flags & VMS_RING_F_CLOSED)
		return 1;
	uint64_t mine = vms_pidns_ino();
	if (h.writer_pidns && h.writer_pidns == mine) {
		if (h.writer_pid && h.writer_pid <= INT_MAX &&
		    (kill((pid_t)h.writer_pid, 0) == 0 || errno == EPERM)) {
			say(err, errlen, "is the live ring of a running vmsampler (pid %llu)",
			    (unsigned long long)h.writer_pid);
			return -EBUSY;
		}
		return 1;
	}
	/* another pid namespace: only the heartbeat can tell */
	if (vms_ring_writer_state(&h, mine) == VMS_WRITER_ALIVE) {
		say(err, errlen, "is the live ring of a vmsampler in another pid namespace (heartbeat is fresh)");
		return -EBUSY;
	}
	return 1;
}

/* Mark the ring file now at path superseded (its writer is gone). */
static void mark_superseded(const char *path, const struct stat *want)
{
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && st.st_dev == want->st_dev && st.st_ino == want->st_ino &&
	    st.st_size >= (off_t)VMS_RING_PAGE) {
		void *m = mmap(NULL, VMS_RING_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m != MAP_FAILED) {
			__atomic_fetch_or(&((struct vms_ring_header *)m)->flags, VMS_RING_F_SUPERSEDED,
					  __ATOMIC_RELEASE);
			munmap(m, VMS_RING_PAGE);
		}
	}
	close(fd);
}

int vms_ring_create_file(struct vms_ring *r, const char *path, uint32_t slot_count,
			 uint32_t slot_cols, size_t schema_bytes, const struct vms_ring_file_opts *o,
			 char *err, size_t errlen)
{
	struct stat old;
	uint32_t mode = o && o->mode ? o->mode : 0640;
	if (errlen)
		err[0] = '\0';
	int ex = check_existing(path, &old, err, errlen);
	if (ex < 0)
		return ex;
	int e = build_file(r, path, slot_count, slot_cols, schema_bytes, mode, o ? o->interval_ns : 0,
			   err, errlen);
	if (e < 0)
		return e;
	if (ex == 0) {
		/* nothing there: it must still be nothing when we put ours */
		if (renameat2(AT_FDCWD, r->tmp, AT_FDCWD, path, RENAME_NOREPLACE) < 0) {
			e = -errno;
			if (e == -EINVAL || e == -ENOSYS) {
				/* no RENAME_NOREPLACE on this file system: link() cannot clobber either */
				e = link(r->tmp, path) < 0 ? -errno : 0;
				unlink(r->tmp);
				if (e == 0) {
					free(r->tmp);
					r->tmp = NULL;
				}
			}
			if (e < 0) {
				say(err, errlen, "%s", e == -EEXIST ? "appeared while the ring was being created; not replacing it"
							   : strerror(-e));
				vms_ring_destroy(r);
				return e;
			}
		}
	} else {
		/* a stale ring: swap ours in and check that what came out is the
		 * file we examined; if not, swap back */
		if (renameat2(AT_FDCWD, r->tmp, AT_FDCWD, path, RENAME_EXCHANGE) == 0) {
			struct stat st;
			if (lstat(r->tmp, &st) < 0 || st.st_dev != old.st_dev || st.st_ino != old.st_ino) {
				renameat2(AT_FDCWD, r->tmp, AT_FDCWD, path, RENAME_EXCHANGE);
				say(err, errlen, "changed while the ring was being created; not replacing it");
				vms_ring_destroy(r);
				return -EEXIST;
			}
			mark_superseded(r->tmp, &old);
			/* destroy() below would unlink r->tmp: now the old ring */
		} else if (rename(r->tmp, path) < 0) {
			e = -errno;
			say(err, errlen, "cannot rename into place: %s", strerror(-e));
			vms_ring_destroy(r);
			return e;
		} else {
			free(r->tmp);
			r->tmp = NULL;
		}
		if (r->tmp) {
			unlink(r->tmp);
			free(r->tmp);
			r->tmp = NULL;
		}
	}
	return 0;
}

int vms_ring_create_like(struct vms_ring *nr, const struct vms_ring *old, uint32_t slot_cols,
			 size_t schema_bytes)
{
	if (!old->path)
		return vms_ring_create(nr, old->mask + 1, slot_cols);
	int e = build_file(nr, old->path, old->mask + 1, slot_cols, schema_bytes, old->mode,
			   old->interval_ns, NULL, 0);
	if (e == 0) {
		nr->hdr->run_id = old->hdr->run_id;
		vms_ring_events_carry(nr, old);
	}
	return e;
}

int vms_ring_install(struct vms_ring *old, struct vms_ring *nr)
{
	if (nr->tmp) {
		if (rename(nr->tmp, nr->path) < 0) {
			int e = -errno;
			vms_ring_destroy(nr);
			return e;
		}
		free(nr->tmp);
		nr->tmp = NULL;
		/* readers of the old mapping reopen the path */
		__atomic_fetch_or(&old->hdr->flags, VMS_RING_F_SUPERSEDED, __ATOMIC_RELEASE);
		free(old->path);
		old->path = NULL; /* not CLOSED: superseded */
	}
	vms_ring_destroy(old);
	*old = *nr;
	memset(nr, 0, sizeof(*nr));
	return 0;
}
