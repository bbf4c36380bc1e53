/* SPDX-License-Identifier: MIT */
#include "binutil.h"

#include "testutil.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "binfmt.h"
#include "ring.h"

struct vms_schema *mk_schema(uint32_t gen, const struct colspec *cols, uint32_t n)
{
	struct vms_col *c = calloc(n ? n : 1, sizeof(*c));
	struct vms_schema *s = NULL;
	assert_non_null(c);
	for (uint32_t i = 0; i < n; i++)
		c[i] = (struct vms_col){
			.name = cols[i].name,
			.key = "",
			.kind = cols[i].kind,
			.unit = cols[i].unit,
			.wrap_bits = cols[i].wrap_bits,
			.scale = cols[i].scale,
		};
	assert_int_equal(vms_schema_new(gen, 1700000000000000000LL + gen, n, c, &s), 0);
	free(c);
	return s;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

#define C64 VMS_KIND_COUNTER, VMS_UNIT_COUNT, 64, 0
#define G(s) VMS_KIND_GAUGE, VMS_UNIT_LOAD, 0, s

static const struct colspec gen1[] = {
	{"cpu.all.user", VMS_KIND_COUNTER, VMS_UNIT_TICKS, 64, 0},
	{"load.1m", G(2)},
	{"disk.sda.rd_ticks", VMS_KIND_COUNTER, VMS_UNIT_MS, 32, 0},
	{"odd,name \"quoted\"", C64},
	{"big", C64},
	{"vm.x.state", VMS_KIND_GAUGE, VMS_UNIT_STATE, 0, 0},
};

static const struct colspec gen2[] = {
	{"cpu.all.user", VMS_KIND_COUNTER, VMS_UNIT_TICKS, 64, 0},
	{"disk.sda.rd_ticks", VMS_KIND_COUNTER, VMS_UNIT_MS, 32, 0},
	{"odd,name \"quoted\"", C64},
	{"big", C64},
	{"net.eth0.rx_bytes", VMS_KIND_COUNTER, VMS_UNIT_BYTES, 64, 0},
	{"vm.x.state", VMS_KIND_GAUGE, VMS_UNIT_STATE, 0, 0},
	{"load.5m", G(2)},
};

void run_make(struct run *r, size_t n)
{
	static char names[200][16];
	static struct colspec gen3[200];
	memset(r, 0, sizeof(*r));
	rng_state = 0x9E3779B97F4A7C15ull;
	for (int i = 0; i < 200; i++) {
		snprintf(names[i], sizeof(names[i]), "c.%d", i);
		gen3[i] = (struct colspec){names[i], VMS_KIND_COUNTER, VMS_UNIT_COUNT, 64, 0};
	}
	r->schemas[0] = mk_schema(1, gen1, VMS_ARRAY_SIZE(gen1));
	r->schemas[1] = mk_schema(2, gen2, VMS_ARRAY_SIZE(gen2));
	r->schemas[2] = mk_schema(3, gen3, 200);
	r->nschemas = 3;
	r->n = n;
	r->f = calloc(n, sizeof(*r->f));
	r->sch = calloc(n, sizeof(*r->sch));
	uint64_t acc[200] = {0};
	uint64_t mono = 5000000000ull;
	for (size_t i = 0; i < n; i++) {
		unsigned g = i < n * 2 / 5 ? 0 : i < n * 3 / 5 ? 1 : 2;
		struct vms_schema *s = r->schemas[g];
		struct vms_frame *f = calloc(1, vms_frame_size(s->ncols));
		assert_non_null(f);
		r->sch[i] = s;
		r->f[i] = f;
		mono += 1000000000ull + rnd() % 1000;
		f->seq = i + 1;
		f->t_mono_ns = mono;
		f->t_real_ns = 1763798400000000000LL + (int64_t)mono;
		f->gen = s->gen;
		f->flags = (i == 0 || r->sch[i - 1] != s) ? VMS_FRAME_NEWGEN : (uint32_t)(rnd() % 3 == 0);
		f->missed_ticks = (uint32_t)(i % 50 == 7);
		f->lost_frames = (uint32_t)(i % 91 == 3) * 5;
		f->self_cpu_ns = rnd() % 100000;
		f->late_ns = rnd() % 1000000;
		f->ncols = s->ncols;
		for (uint32_t k = 0; k < s->ncols; k++) {
			const char *nm = s->cols[k].name;
			uint64_t v;
			if (strcmp(nm, "big") == 0) {
				/* near the top of the range, and one jump of 2^63 */
				static const uint64_t seqv[] = {
					UINT64_MAX - 1, UINT64_MAX - 2, 0, (1ull << 63), UINT64_MAX - 1,
					1, (1ull << 63) + 1, 2, VMS_VALUE_NONE, (1ull << 63) + 5,
				};
				v = seqv[i % VMS_ARRAY_SIZE(seqv)];
			} else if (strcmp(nm, "disk.sda.rd_ticks") == 0) {
				acc[k] = (acc[k] + 400000000u + rnd() % 1000) & 0xffffffffu; /* wraps */
				v = acc[k];
			} else if (s->cols[k].kind == VMS_KIND_GAUGE) {
				v = rnd() % 10000;
			} else {
				acc[k] += rnd() % (k % 3 == 0 ? 1000000 : 100);
				v = acc[k];
			}
			if ((i + k) % 7 == 3 && k != 4)
				v = VMS_VALUE_NONE;
			f->v[k] = v;
		}
	}
}

void run_free(struct run *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->f[i]);
	free(r->f);
	free(r->sch);
	for (unsigned i = 0; i < r->nschemas; i++)
		vms_schema_unref(r->schemas[i]);
	memset(r, 0, sizeof(*r));
}

int feed_sink(const struct vms_sink_ops *ops, const char *path, const struct run *r, size_t from,
	      size_t to, bool events)
{
	struct vms_sink s = {0};
	const struct vms_schema *begun = NULL;
	s.ops = ops;
	s.path = path;
	s.priv = calloc(1, ops->priv_size);
	assert_non_null(s.priv);
	assert_int_equal(ops->open(&s), 0);
	for (size_t i = from; i < to; i++) {
		if (r->sch[i] != begun) {
			assert_int_equal(ops->begin(&s, r->sch[i]), 0);
			begun = r->sch[i];
		}
		if (events && ops->event && i % 37 == 5) {
			struct vms_event ev = {
				.type = VMS_EV_SOURCE_FAILED,
				.gen = r->f[i]->gen,
				.before_seq = r->f[i]->seq,
				.t_mono_ns = r->f[i]->t_mono_ns - 1,
				.t_real_ns = r->f[i]->t_real_ns - 1,
			};
			snprintf(ev.subject, sizeof(ev.subject), "source-%zu", i);
			snprintf(ev.detail, sizeof(ev.detail), "detail \"%zu\", with a comma", i);
			assert_int_equal(ops->event(&s, &ev), 0);
		}
		int e = ops->write(&s, r->sch[i], r->f[i]);
		if (e == -EAGAIN) {
			assert_int_equal(ops->flush(&s), 0);
			e = ops->write(&s, r->sch[i], r->f[i]);
		}
		assert_int_equal(e, 0);
		e = ops->flush(&s);
		assert_true(e == 0 || e == -EAGAIN);
	}
	int e = ops->close(&s);
	free(s.priv);
	return e;
}

uint8_t *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	uint8_t *b = malloc((size_t)st.st_size + 1);
	assert_non_null(b);
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, b + got, (size_t)st.st_size - got);
		assert_true(n > 0);
		got += (size_t)n;
	}
	close(fd);
	*len = got;
	return b;
}

void spit(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

bool same_file(const char *a, const char *b)
{
	size_t la, lb;
	uint8_t *x = slurp(a, &la), *y = slurp(b, &lb);
	bool same = x && y && la == lb && memcmp(x, y, la) == 0;
	if (!same)
		fprintf(stderr, "files differ: %s (%zu bytes) and %s (%zu bytes)\n", a, x ? la : 0, b,
			y ? lb : 0);
	free(x);
	free(y);
	return same;
}

void assert_frame_eq(const struct vms_frame *a, const struct vms_frame *b)
{
	assert_int_equal(a->seq, b->seq);
	assert_int_equal(a->t_mono_ns, b->t_mono_ns);
	assert_int_equal(a->t_real_ns, b->t_real_ns);
	assert_int_equal(a->gen, b->gen);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->missed_ticks, b->missed_ticks);
	assert_int_equal(a->lost_frames, b->lost_frames);
	assert_int_equal(a->self_cpu_ns, b->self_cpu_ns);
	assert_int_equal(a->late_ns, b->late_ns);
	assert_int_equal(a->ncols, b->ncols);
	for (uint32_t i = 0; i < a->ncols; i++)
		assert_int_equal(a->v[i], b->v[i]);
}

int run_cmd(char *const argv[], const char *in, const char *out, const char *err)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (o < 0 || e < 0)
			_exit(126);
		if (in) {
			int i = open(in, O_RDONLY);
			if (i < 0)
				_exit(126);
			dup2(i, 0);
		}
		dup2(o, 1);
		dup2(e, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

uint8_t *slurp_dec(const char *path, size_t *len, struct vms_bin_dec *d)
{
	uint8_t *b = slurp(path, len);
	assert_int_equal(vms_bin_dec_open_mem(d, b, *len), 0);
	return b;
}
