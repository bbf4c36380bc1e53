/* SPDX-License-Identifier: MIT */
/* parse_vm.c - the per-VM files: a QEMU process's stat, io and cgroup
 * lines, its threads' schedstat, cgroup v1/v2 accounting files and the
 * mount table (see parse.h).  Strict: a malformed file is an error,
 * never a silent zero. */
#include <string.h>

#include "parse.h"

static int cur_err(const struct vms_cur *c)
{
	return c->err == -ERANGE ? -ERANGE : -EINVAL;
}

/* ---- /proc/<pid>/stat -------------------------------------------------- */

/* One field: an optional '-' and digits, up to a blank or the end. */
static bool field(struct vms_cur *c, uint64_t *v)
{
	bool neg = false;
	vms_cur_skip_blank(c);
	if (vms_cur_peek(c) == '-') {
		neg = true;
		c->p++;
		if (!vms_is_digit((char)vms_cur_peek(c)))
			return false;
	}
	uint64_t x = vms_cur_u64(c);
	if (!vms_cur_ok(c))
		return false;
	if (neg) {
		if (x > (uint64_t)INT64_MAX + 1) {
			vms_cur_fail(c, -ERANGE);
			return false;
		}
		x = (uint64_t)0 - x;
	}
	*v = x;
	return true;
}

int vms_parse_taskstat(const char *buf, size_t len, struct vms_taskstat *out)
{
	struct vms_cur all, c;
	vms_cur_init(&all, buf, len);
	if (!vms_cur_line(&all, &c))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	uint64_t pid = vms_cur_u64(&c);
	if (!vms_cur_ok(&c) || !vms_cur_expect(&c, ' ') || !vms_cur_expect(&c, '('))
		return cur_err(&c);
	const char *close = vms_cur_rfind(&c, ')');
	if (!close)
		return -EINVAL;
	out->comm = c.p;
	out->comm_len = (size_t)(close - c.p);
	c.p = close + 1;
	if (!vms_cur_expect(&c, ' ') || vms_cur_left(&c) < 1)
		return -EINVAL;
	char st = *c.p++;
	if (st < 'A' || st > 'z')
		return -EINVAL;
	out->state = st;
	out->f[1] = pid;
	out->f[3] = (uint64_t)(unsigned char)st;
	unsigned n = 3;
	for (;;) {
		vms_cur_skip_blank(&c);
		if (vms_cur_eof(&c))
			break;
		uint64_t v;
		if (!field(&c, &v))
			return cur_err(&c);
		n++;
		if (n <= VMS_TASKSTAT_MAX)
			out->f[n] = v;
	}
	if (n < 24)
		return -EINVAL;
	/* rss is a page count: never negative */
	if (out->f[24] > INT64_MAX)
		return -EINVAL;
	out->nfields = n;
	return 0;
}

/* ---- schedstat --------------------------------------------------------- */

int vms_parse_schedstat(const char *buf, size_t len, struct vms_schedstat *out)
{
	struct vms_cur all, c;
	uint64_t v[3];
	vms_cur_init(&all, buf, len);
	if (!vms_cur_line(&all, &c))
		return -EINVAL;
	unsigned n = vms_cur_u64_list(&c, v, 3);
	if (!vms_cur_ok(&c))
		return cur_err(&c);
	if (n != 3 || !vms_cur_rest_blank(&c))
		return -EINVAL;
	out->run_ns = v[0];
	out->wait_ns = v[1];
	out->slices = v[2];
	return 0;
}

/* ---- /proc/<pid>/task/<tid>/status: Cpus_allowed_list -------------------- */

/* A CPU number of the list: digits, below VMS_CPULIST_MAX. */
static bool cpu_num(struct vms_cur *c, uint32_t *out)
{
	uint64_t v = 0;
	const char *s = c->p;
	while (c->p < c->end && vms_is_digit(*c->p)) {
		v = v * 10 + (uint64_t)(*c->p - '0');
		if (v >= VMS_CPULIST_MAX)
			return false;
		c->p++;
	}
	*out = (uint32_t)v;
	return c->p > s;
}

int vms_parse_cpulist(const char *s, size_t len, uint32_t *count, uint32_t *first)
{
	struct vms_cur c;
	uint64_t n = 0;
	uint32_t lo = 0, hi = 0;
	bool any = false;
	vms_cur_init(&c, s, len);
	vms_cur_skip_blank(&c);
	while (!vms_cur_eof(&c) && *c.p != '\n') {
		uint32_t a, b;
		if (any && !vms_cur_expect(&c, ','))
			return -EINVAL;
		if (!cpu_num(&c, &a))
			return -EINVAL;
		b = a;
		if (vms_cur_peek(&c) == '-') {
			c.p++;
			if (!cpu_num(&c, &b) || b < a)
				return -EINVAL;
		}
		/* the kernel prints the ranges in increasing order */
		if (any && a <= hi)
			return -EINVAL;
		if (!any)
			lo = a;
		hi = b;
		n += (uint64_t)b - a + 1;
		any = true;
	}
	*count = (uint32_t)n;
	*first = any ? lo : 0;
	return 0;
}

int vms_parse_status_cpus(const char *buf, size_t len, uint32_t *count, uint32_t *first)
{
	static const char key[] = "Cpus_allowed_list:";
	struct vms_cur all, c;
	vms_cur_init(&all, buf, len);
	while (vms_cur_line(&all, &c)) {
		if (!vms_cur_startswith(&c, key, sizeof(key) - 1))
			continue;
		c.p += sizeof(key) - 1;
		return vms_parse_cpulist(c.p, vms_cur_left(&c), count, first);
	}
	return -ENOENT;
}

/* ---- keyed files ------------------------------------------------------- */

int vms_parse_keyed(const char *buf, size_t len, const char *const *keys, unsigned nkeys,
		    uint64_t *out)
{
	struct vms_cur all, c;
	for (unsigned i = 0; i < nkeys; i++)
		out[i] = VMS_NONE;
	vms_cur_init(&all, buf, len);
	while (vms_cur_text_line(&all, &c)) {
		const char *tok;
		size_t tl;
		if (!vms_cur_token(&c, &tok, &tl))
			return -EINVAL;
		if (tl > 1 && tok[tl - 1] == ':')
			tl--; /* "read_bytes: 123" */
		int k = -1;
		for (unsigned i = 0; i < nkeys; i++)
			if (strlen(keys[i]) == tl && memcmp(keys[i], tok, tl) == 0)
				k = (int)i;
		uint64_t v = vms_cur_u64(&c);
		if (!vms_cur_ok(&c))
			return cur_err(&c);
		if (!vms_cur_rest_blank(&c))
			return -EINVAL;
		if (k < 0)
			continue;
		if (out[k] != VMS_NONE || v == VMS_NONE)
			return -EINVAL;
		out[k] = v;
	}
	return 0;
}

int vms_parse_u64_file(const char *buf, size_t len, uint64_t *out)
{
	struct vms_cur all, c;
	vms_cur_init(&all, buf, len);
	if (!vms_cur_line(&all, &c))
		return -EINVAL;
	uint64_t v = vms_cur_u64(&c);
	if (!vms_cur_ok(&c))
		return cur_err(&c);
	if (!vms_cur_rest_blank(&c) || v == VMS_NONE)
		return -EINVAL;
	/* nothing but blank lines may follow */
	while (vms_cur_line(&all, &c))
		if (!vms_cur_rest_blank(&c))
			return -EINVAL;
	*out = v;
	return 0;
}

/* ---- cgroup limits ------------------------------------------------------- */

/* One limit at the cursor: a number below VMS_CG_UNLIMITED, "max", or
 * (signed) "-1". */
static uint64_t cg_limit(struct vms_cur *c, bool signed_ok)
{
	vms_cur_skip_blank(c);
	if (vms_cur_startswith(c, "max", 3)) {
		c->p += 3;
		if (!vms_cur_eof(c) && *c->p != ' ' && *c->p != '\t' && *c->p != '\n')
			vms_cur_fail(c, -EINVAL);
		return VMS_CG_UNLIMITED;
	}
	if (signed_ok && vms_cur_startswith(c, "-1", 2)) {
		c->p += 2;
		if (!vms_cur_eof(c) && *c->p != ' ' && *c->p != '\t' && *c->p != '\n')
			vms_cur_fail(c, -EINVAL);
		return VMS_CG_UNLIMITED;
	}
	uint64_t v = vms_cur_u64(c);
	if (vms_cur_ok(c) && v >= VMS_CG_UNLIMITED)
		vms_cur_fail(c, -ERANGE);
	return v;
}

/* The first line holds what `fn` reads and nothing else; only blank lines
 * follow. */
static int cg_line(const char *buf, size_t len, uint64_t *a, uint64_t *b)
{
	struct vms_cur all, c;
	vms_cur_init(&all, buf, len);
	if (!vms_cur_line(&all, &c))
		return -EINVAL;
	*a = cg_limit(&c, b == NULL);
	if (b)
		*b = vms_cur_u64(&c);
	if (!vms_cur_ok(&c))
		return cur_err(&c);
	if (!vms_cur_rest_blank(&c) || (b && (*b == VMS_NONE || *b == 0)))
		return -EINVAL;
	while (vms_cur_line(&all, &c))
		if (!vms_cur_rest_blank(&c))
			return -EINVAL;
	return 0;
}

int vms_parse_cg_limit(const char *buf, size_t len, uint64_t *out)
{
	uint64_t v;
	int r = cg_line(buf, len, &v, NULL);
	if (r == 0)
		*out = v;
	return r;
}

int vms_parse_cpu_max(const char *buf, size_t len, uint64_t *quota, uint64_t *period)
{
	uint64_t q, p;
	int r = cg_line(buf, len, &q, &p);
	if (r == 0) {
		*quota = q;
		*period = p;
	}
	return r;
}

/* ---- io.stat ------------------------------------------------------------- */

static bool add(uint64_t *sum, uint64_t v)
{
	if (*sum == VMS_NONE)
		*sum = 0;
	if (v > UINT64_MAX - 1 - *sum)
		return false;
	*sum += v;
	return true;
}

int vms_parse_iostat(const char *buf, size_t len, uint64_t *rbytes, uint64_t *wbytes)
{
	struct vms_cur all, c;
	uint64_t r = VMS_NONE, w = VMS_NONE;
	vms_cur_init(&all, buf, len);
	while (vms_cur_text_line(&all, &c)) {
		/* MAJ:MIN */
		vms_cur_u64_sep(&c, ':');
		vms_cur_u64(&c);
		if (!vms_cur_ok(&c))
			return cur_err(&c);
		while (!vms_cur_rest_blank(&c)) {
			const char *tok;
			size_t tl;
			if (!vms_cur_token(&c, &tok, &tl))
				return -EINVAL;
			const char *eq = memchr(tok, '=', tl);
			if (!eq || eq == tok || eq + 1 == tok + tl)
				return -EINVAL;
			struct vms_cur vc;
			vms_cur_init(&vc, eq + 1, (size_t)(tok + tl - eq - 1));
			uint64_t v = vms_cur_u64(&vc);
			if (!vms_cur_ok(&vc) || !vms_cur_eof(&vc))
				return cur_err(&vc) == -ERANGE ? -ERANGE : -EINVAL;
			size_t kl = (size_t)(eq - tok);
			if (kl == 6 && memcmp(tok, "rbytes", 6) == 0 && !add(&r, v))
				return -ERANGE;
			if (kl == 6 && memcmp(tok, "wbytes", 6) == 0 && !add(&w, v))
				return -ERANGE;
		}
	}
	*rbytes = r;
	*wbytes = w;
	return 0;
}

/* ---- /proc/<pid>/cgroup -------------------------------------------------- */

bool vms_list_has(const char *list, size_t len, const char *item)
{
	size_t il = strlen(item);
	const char *p = list, *end = list + len;
	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *e = comma ? comma : end;
		if ((size_t)(e - p) == il && memcmp(p, item, il) == 0)
			return true;
		p = e + 1;
	}
	return false;
}

int vms_parse_pidcg(const char *buf, size_t len, struct vms_pidcg *out)
{
	struct vms_cur all, c;
	struct vms_pidcg o;
	memset(&o, 0, sizeof(o));
	vms_cur_init(&all, buf, len);
	while (vms_cur_line(&all, &c)) {
		if (vms_cur_eof(&c))
			continue;
		uint64_t id = vms_cur_u64_sep(&c, ':');
		if (!vms_cur_ok(&c))
			return cur_err(&c);
		const char *ctl = c.p;
		const char *colon = memchr(c.p, ':', vms_cur_left(&c));
		if (!colon)
			return -EINVAL;
		size_t ctl_len = (size_t)(colon - ctl);
		const char *path = colon + 1;
		size_t plen = (size_t)(c.end - path);
		if (plen == 0 || path[0] != '/' || memchr(path, '\0', plen))
			return -EINVAL;
		if (id == 0 && ctl_len == 0) {
			if (o.v2)
				return -EINVAL;
			o.v2 = path;
			o.v2_len = plen;
			continue;
		}
		if (vms_list_has(ctl, ctl_len, "cpuacct")) {
			o.cpuacct = path;
			o.cpuacct_len = plen;
		}
		if (vms_list_has(ctl, ctl_len, "memory")) {
			o.memory = path;
			o.memory_len = plen;
		}
		if (vms_list_has(ctl, ctl_len, "cpu")) {
			o.cpu = path;
			o.cpu_len = plen;
		}
	}
	*out = o;
	return 0;
}

/* ---- mountinfo ------------------------------------------------------------ */

int vms_mountinfo_next(struct vms_cur *c, struct vms_mount *out)
{
	struct vms_cur l;
	const char *tok[6];
	size_t tl[6];
	if (!vms_cur_line(c, &l))
		return 0;
	/* id parent maj:min root point options */
	for (int i = 0; i < 6; i++)
		if (!vms_cur_token(&l, &tok[i], &tl[i]))
			return -EINVAL;
	/* optional fields, then "-" */
	for (;;) {
		const char *t;
		size_t n;
		if (!vms_cur_token(&l, &t, &n))
			return -EINVAL;
		if (n == 1 && t[0] == '-')
			break;
	}
	const char *fs, *src, *sup;
	size_t fl, sl, ul;
	if (!vms_cur_token(&l, &fs, &fl) || !vms_cur_token(&l, &src, &sl) || !vms_cur_token(&l, &sup, &ul))
		return -EINVAL;
	if (tok[3][0] != '/' || tok[4][0] != '/')
		return -EINVAL;
	out->root = tok[3];
	out->root_len = tl[3];
	out->point = tok[4];
	out->point_len = tl[4];
	out->fstype = fs;
	out->fstype_len = fl;
	out->super = sup;
	out->super_len = ul;
	return 1;
}

int vms_unescape_octal(const char *src, size_t len, char *dst, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		char ch = src[i];
		if (ch == '\\') {
			if (len - i < 4)
				return -EINVAL;
			unsigned v = 0;
			for (int k = 1; k <= 3; k++) {
				char d = src[i + (size_t)k];
				if (d < '0' || d > '7')
					return -EINVAL;
				v = v * 8 + (unsigned)(d - '0');
			}
			if (v == 0 || v > 255)
				return -EINVAL;
			ch = (char)v;
			i += 3;
		} else if (ch == '\0') {
			return -EINVAL;
		}
		if (n + 1 >= cap)
			return -ENAMETOOLONG;
		dst[n++] = ch;
	}
	if (cap == 0)
		return -ENAMETOOLONG;
	dst[n] = '\0';
	return (int)n;
}

/* ---- vCPU thread names ---------------------------------------------------- */

int vms_vcpu_thread_index(const char *comm, size_t len)
{
	if (len > 0 && comm[len - 1] == '\n')
		len--;
	if (len < 7 || memcmp(comm, "CPU ", 4) != 0)
		return -1;
	size_t i = 4;
	unsigned v = 0;
	if (!vms_is_digit(comm[i]))
		return -1;
	for (; i < len && vms_is_digit(comm[i]); i++) {
		v = v * 10 + (unsigned)(comm[i] - '0');
		if (v > 65535)
			return -1;
	}
	if (i + 1 >= len || comm[i] != '/')
		return -1;
	for (i++; i < len; i++)
		if (!((comm[i] >= 'A' && comm[i] <= 'Z') || (comm[i] >= 'a' && comm[i] <= 'z')))
			return -1;
	return (int)v;
}
