/* SPDX-License-Identifier: MIT */
/* fuzz_names.c - any bytes as an entity's name, through the rule of name.h
 * and every writer of names.  The input (up to 1 KiB) is the name:
 *   - vms_name_escape: valid UTF-8 without control characters (glibc's
 *     decoder, tests/reftext.h), and the reference unescape gives the
 *     input back (reversible, so distinct);
 *   - vms_name_fit: at most VMS_NAME_PART_MAX (or another limit) bytes
 *     once escaped, the name itself when that fits;
 *   - columns named with it as the sampler names them (vms_schema_addf:
 *     net, disk, a VM's tap and disk) and as a decoder meets them
 *     (vms_schema_new, the raw bytes as an old file may hold them), then
 *     written as JSON lines and InfluxDB line protocol (lineproto.c) and
 *     as Prometheus text and OpenMetrics (metrics.c): every output is
 *     valid UTF-8 without control characters but '\n', and parses
 *     (a strict JSON parser, the line protocol's and the text format's
 *     grammar, below). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/reftext.h"
#include "lineproto.h"
#include "metrics.h"
#include "name.h"
#include "schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                         \
	do {                                                                             \
		if (!(c)) {                                                              \
			fprintf(stderr, "fuzz_names: %s:%d: %s\n", __FILE__, __LINE__, #c); \
			abort();                                                         \
		}                                                                        \
	} while (0)

/* ---- JSON (RFC 8259), strict ------------------------------------------------ */

static const char *j_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *j_value(const char *p, int depth);

static const char *j_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	for (;;) {
		unsigned char c = (unsigned char)*p++;
		if (c == '"')
			return p;
		if (c < 0x20)
			return NULL;
		if (c == '\\') {
			c = (unsigned char)*p++;
			if (c == 'u') {
				for (int i = 0; i < 4; i++, p++)
					if (!strchr("0123456789abcdefABCDEF", *p) || !*p)
						return NULL;
			} else if (!c || !strchr("\"\\/bfnrt", c)) {
				return NULL;
			}
		}
	}
}

static const char *j_number(const char *p)
{
	const char *s = p;
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (*p >= '0' && *p <= '9')
			p++;
	else
		return NULL;
	if (*p == '.') {
		if (*++p < '0' || *p > '9')
			return NULL;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (*p < '0' || *p > '9')
			return NULL;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return p > s ? p : NULL;
}

static const char *j_value(const char *p, int depth)
{
	if (depth > 16)
		return NULL;
	p = j_ws(p);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		bool obj = *p == '{';
		p = j_ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (obj) {
				p = j_string(j_ws(p));
				if (!p || *(p = j_ws(p)) != ':')
					return NULL;
				p++;
			}
			p = j_value(p, depth + 1);
			if (!p)
				return NULL;
			p = j_ws(p);
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
		}
	}
	if (*p == '"')
		return j_string(p);
	for (const char *const *w = (const char *const[]){"true", "false", "null", NULL}; *w; w++)
		if (strncmp(p, *w, strlen(*w)) == 0)
			return p + strlen(*w);
	return j_number(p);
}

/* ---- InfluxDB line protocol --------------------------------------------------- */

/* One line (without its '\n'): "measurement[,k=v...] k=v[,k=v...] ts",
 * a backslash escaping the next character (the writer leaves out names
 * with backslashes, so only ',', ' ', '=' follow one). */
static bool lp_line(const char *s, size_t n)
{
	int part = 0;
	size_t start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] == '\\') {
			if (i + 1 >= n || !strchr(", =", s[i + 1]))
				return false;
			i++;
			continue;
		}
		if (i < n && s[i] != ' ')
			continue;
		if (i == start)
			return false; /* an empty part */
		if (part == 1) {
			/* fields: k=v, each with one unescaped '=' and a value */
			size_t eq = 0;
			for (size_t k = start; k < i; k++) {
				if (s[k] == '\\') {
					k++;
				} else if (s[k] == '=') {
					eq++;
				} else if (s[k] == ',') {
					if (eq != 1)
						return false;
					eq = 0;
				}
			}
			if (eq != 1)
				return false;
		} else if (part == 2) {
			for (size_t k = start; k < i; k++)
				if (s[k] < '0' || s[k] > '9')
					return false;
		}
		part++;
		start = i + 1;
	}
	return part == 3;
}

/* ---- the Prometheus text format (and OpenMetrics) ------------------------------- */

static bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
	       (!first && c >= '0' && c <= '9');
}

static bool prom_line(const char *s, size_t n)
{
	if (n && s[0] == '#')
		return true; /* HELP, TYPE, UNIT, EOF: their text is checked as text */
	size_t i = 0;
	if (i >= n || !name_char(s[i], true))
		return false;
	while (i < n && name_char(s[i], false))
		i++;
	if (i < n && s[i] == '{') {
		i++;
		while (i < n && s[i] != '}') {
			if (!name_char(s[i], true))
				return false;
			while (i < n && name_char(s[i], false))
				i++;
			if (i + 1 >= n || s[i] != '=' || s[i + 1] != '"')
				return false;
			for (i += 2; i < n && s[i] != '"'; i++)
				if (s[i] == '\\' && (i + 1 >= n || !strchr("\\\"n", s[++i])))
					return false;
			if (i >= n)
				return false;
			i++;
			if (i < n && s[i] == ',')
				i++;
		}
		if (i >= n)
			return false;
		i++;
	}
	if (i >= n || s[i] != ' ')
		return false;
	return i + 1 < n; /* a value follows */
}

/* ---- the target --------------------------------------------------------------- */

static void check_text(const char *p, size_t n, bool (*line)(const char *, size_t))
{
	CHECK(vms_ref_text_ok(p, n, true));
	for (size_t i = 0; i < n;) {
		const char *e = memchr(p + i, '\n', n - i);
		CHECK(e); /* every line ends in '\n' */
		size_t len = (size_t)(e - (p + i));
		if (line)
			CHECK(line(p + i, len));
		i += len + 1;
	}
}

static void write_lines(const struct vms_schema *s)
{
	const char *names[8], *keys[8];
	struct vms_colid ids[8];
	struct vms_lp_val vals[8];
	for (uint32_t i = 0; i < s->ncols; i++) {
		const struct vms_col *c = &s->cols[i];
		names[i] = c->name;
		keys[i] = c->key;
		ids[i] = (struct vms_colid){c->group, c->field_id, c->entity, c->sub, c->field};
		vals[i] = (struct vms_lp_val){.type = VMS_LP_UINT, .u = 1000 + i};
	}
	const struct vms_lp_meta meta = {.seq = 1, .t_wall_ns = 1700000000000000000, .gen = 1};
	for (int fmt = VMS_LP_INFLUX; fmt <= VMS_LP_JSON; fmt++) {
		struct vms_lp *lp;
		CHECK(vms_lp_new(&lp, (enum vms_lp_format)fmt, s->ncols, names, ids, keys, "h") == 0);
		char *buf = malloc(vms_lp_max(lp, 0) + 1);
		CHECK(buf);
		char *e = vms_lp_frame(lp, buf, &meta, vals);
		*e = '\0';
		size_t n = (size_t)(e - buf);
		if (fmt == VMS_LP_JSON) {
			check_text(buf, n, NULL);
			const char *end = j_value(buf, 0);
			CHECK(end && *j_ws(end) == '\0');
		} else {
			check_text(buf, n, lp_line);
		}
		free(buf);
		vms_lp_free(lp);
	}
	struct vms_metrics m = {.ncols = s->ncols};
	m.m = calloc((size_t)VMS_MMAP_MAX * s->ncols + 1, sizeof(*m.m));
	CHECK(m.m);
	uint64_t v[8];
	for (uint32_t i = 0; i < s->ncols; i++) {
		v[i] = 1000 + i;
		int k = vms_metrics_map(&ids[i], s->cols[i].key, s->cols[i].scale, 100, VMS_NAMES_CURRENT, &m.m[m.nm]);
		CHECK(k >= 0);
		for (int j = 0; j < k; j++)
			m.m[m.nm++].col = i;
	}
	uint64_t meta_v[VMS_MMETA_N];
	for (unsigned k = 0; k < VMS_MMETA_N; k++)
		meta_v[k] = VMS_NONE;
	meta_v[VMS_MMETA_TIME] = 1700000000000000000ull;
	for (int fmt = VMS_EXPO_PROM; fmt <= VMS_EXPO_OPENMETRICS; fmt++)
		for (int stamp = 0; stamp < 2; stamp++) { /* export --timestamps, and without */
			struct vms_mbuf b = {0};
			CHECK(vms_metrics_expose(&m, v, meta_v, (enum vms_expo)fmt, stamp, &b) == 0);
			check_text(b.p ? b.p : "", b.len, prom_line);
			vms_mbuf_free(&b);
		}
	vms_metrics_free(&m);
}

#define NCOL 5 /* the columns below */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1024)
		return 0;
	char *in = malloc(size + 1); /* exact size: ASan sees a read past the end */
	memcpy(in, data, size);
	in[size] = '\0';

	/* the rule */
	char *esc = malloc(4 * size + 1), *back = malloc(4 * size + 1);
	size_t n = vms_name_escape(esc, 4 * size + 1, in, size);
	CHECK(n == strlen(esc));
	CHECK(vms_ref_text_ok(esc, n, false));
	CHECK(vms_ref_unescape(esc, back) == (long)size && memcmp(back, in, size) == 0);
	CHECK(vms_name_valid(in, size) == (memchr(in, 0, size) == NULL && vms_ref_text_ok(in, size, false)));

	/* the fitting */
	char fit[VMS_NAME_PART_MAX + 1];
	bool cut = vms_name_fit(fit, VMS_NAME_PART_MAX, in, size);
	size_t fl = cut ? strlen(fit) : size;
	char fesc[4 * VMS_NAME_PART_MAX + 1];
	CHECK(vms_name_escape(fesc, sizeof(fesc), fit, fl) <= VMS_NAME_PART_MAX);
	CHECK(cut == (n > VMS_NAME_PART_MAX));
	if (!cut)
		CHECK(memcmp(fit, in, size) == 0);

	/* any limit (the agent's is 1024 bytes) */
	size_t max = 32 + size % 200;
	char *small = malloc(max + 1), *sesc = malloc(4 * max + 1);
	bool scut = vms_name_fit(small, max, in, size);
	CHECK(vms_name_escape(sesc, 4 * max + 1, small, scut ? strlen(small) : size) <= max);
	CHECK(scut == (n > max));
	free(small);
	free(sesc);

	/* the sampler's columns (a name is a C string there: up to a NUL) */
	struct vms_schema_builder b;
	struct vms_schema *s = NULL;
	struct vms_coldef d = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_BYTES, .wrap_bits = 64};
	const struct vms_coldef vmd = {.kind = VMS_KIND_COUNTER, .unit = VMS_UNIT_BYTES, .wrap_bits = 64,
				       .key = "6695eb01-f6a4-8304-79aa-97f2502e193f"};
	vms_schema_builder_init(&b);
	vms_name_fit(fit, VMS_NAME_PART_MAX, in, strlen(in));
	const char *a = fit;
	vms_schema_addf(&b, &d, "net.%s.rx_bytes", a);
	vms_schema_addf(&b, &d, "disk.%s.rd_ios", a);
	vms_schema_addf(&b, &vmd, "vm.%s.net.%s.rx_bytes", "web1", a);
	vms_schema_addf(&b, &vmd, "vm.%s.block.%s.rd_bytes", a, a);
	vms_schema_addf(&b, &vmd, "vm.%s.cpu_time", a);
	CHECK(vms_schema_finish(&b, 1, 0, &s) == 0);
	vms_schema_builder_free(&b);
	for (uint32_t i = 0; i < s->ncols; i++)
		CHECK(vms_ref_text_ok(s->cols[i].name, strlen(s->cols[i].name), false));
	write_lines(s);

	/* a decoder's columns: the raw name as an older file may hold it */
	struct vms_col raw[NCOL];
	char *rn[NCOL];
	size_t cap = 2 * size + 64;
	for (int i = 0; i < NCOL; i++) {
		rn[i] = malloc(cap);
		raw[i] = s->cols[i];
		raw[i].name = rn[i];
		raw[i].field = NULL; /* no identity in an older file: derived */
	}
	snprintf(rn[0], cap, "net.%s.rx_bytes", in);
	snprintf(rn[1], cap, "disk.%s.rd_ios", in);
	snprintf(rn[2], cap, "vm.web1.net.%s.rx_bytes", in);
	snprintf(rn[3], cap, "vm.%s.block.%s.rd_bytes", in, in);
	snprintf(rn[4], cap, "vm.%s.cpu_time", in);
	struct vms_schema *ds = NULL;
	CHECK(vms_schema_new(2, 0, NCOL, raw, &ds) == 0);
	for (uint32_t i = 0; i < ds->ncols; i++) {
		CHECK(vms_ref_text_ok(ds->cols[i].name, strlen(ds->cols[i].name), false));
		if (vms_name_valid(rn[i], strlen(rn[i])))
			CHECK(strcmp(ds->cols[i].name, rn[i]) == 0); /* valid names stay as they are */
	}
	write_lines(ds);
	for (int i = 0; i < NCOL; i++)
		free(rn[i]);
	vms_schema_unref(ds);
	vms_schema_unref(s);
	free(esc);
	free(back);
	free(in);
	return 0;
}
