/* SPDX-License-Identifier: MIT */
/* config_yaml.c - the YAML configuration file: reading (libyaml events)
 * and writing (--print-config).
 *
 * The reader is a recursive descent over libyaml's event stream, driven by
 * the key table (config.c).  It stops at the first problem and reports it
 * as one line, "NAME:LINE:COL: message", with the position of the
 * offending key or value.  Anything the table does not describe is an
 * error: unknown or duplicate keys, a list where a scalar belongs, aliases,
 * explicit tags, more than one document.  It works on a copy of the
 * configuration, so a failed load leaves the caller's untouched. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "config.h"
#include "edit.h"
#include "out.h"
#include "perfev.h"
#include "safefile.h"

struct yload {
	yaml_parser_t p;
	yaml_event_t ev;
	bool have_ev;
	const char *name;
	const unsigned char *buf;
	size_t len;
	struct vms_config *c;
	char *err;
	size_t errlen;
};

/* One line: control characters (from values or the file name) become '?'. */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

/* "NAME:LINE:COL: message" (line 0: "NAME: message") in y->err, on one
 * line; returns err. */
static int fail_va(struct yload *y, int err, size_t line, size_t col, const char *fmt, va_list ap)
{
	if (!y->errlen)
		return err;
	int n = line ? snprintf(y->err, y->errlen, "%s:%zu:%zu: ", y->name, line, col) :
		       snprintf(y->err, y->errlen, "%s: ", y->name);
	if (n >= 0 && (size_t)n < y->errlen)
		vsnprintf(y->err + n, y->errlen - (size_t)n, fmt, ap);
	one_line(y->err);
	return err;
}

static int VMS_PRINTF(5, 6)
	fail_pos(struct yload *y, int err, size_t line, size_t col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err = fail_va(y, err, line, col, fmt, ap);
	va_end(ap);
	return err;
}

#define fail_at(y, mark, ...) fail_pos(y, -EINVAL, (mark).line + 1, (mark).column + 1, __VA_ARGS__)

/* A problem of the whole file (no position). */
static int VMS_PRINTF(3, 4) fail_file(struct yload *y, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err = fail_va(y, err, 0, 0, fmt, ap);
	va_end(ap);
	return err;
}

/* The reader reports a byte offset, not a mark. */
static void offset_pos(const struct yload *y, size_t off, size_t *line, size_t *col)
{
	*line = 1;
	*col = 1;
	if (off > y->len)
		off = y->len;
	for (size_t i = 0; i < off; i++) {
		if (y->buf[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if ((y->buf[i] & 0xc0) != 0x80) {
			(*col)++; /* count characters, not UTF-8 continuation bytes */
		}
	}
}

static int parser_error(struct yload *y)
{
	const yaml_parser_t *p = &y->p;
	const char *problem = p->problem ? p->problem : "invalid YAML";
	size_t line, col;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		return fail_file(y, -ENOMEM, "out of memory");
	case YAML_READER_ERROR:
		offset_pos(y, p->problem_offset, &line, &col);
		if (p->problem_value >= 0)
			return fail_pos(y, -EINVAL, line, col, "%s (0x%X)", problem,
					(unsigned)p->problem_value);
		return fail_pos(y, -EINVAL, line, col, "%s", problem);
	case YAML_SCANNER_ERROR:
	case YAML_PARSER_ERROR:
		if (p->context)
			return fail_at(y, p->problem_mark, "%s (%s at line %zu)", problem, p->context,
				       p->context_mark.line + 1);
		return fail_at(y, p->problem_mark, "%s", problem);
	default:
		return fail_file(y, -EINVAL, "%s", problem);
	}
}

static int next(struct yload *y)
{
	if (y->have_ev) {
		yaml_event_delete(&y->ev);
		y->have_ev = false;
	}
	if (!yaml_parser_parse(&y->p, &y->ev))
		return parser_error(y);
	y->have_ev = true;
	return 0;
}

/* Parse the whole text once, for syntax errors only. */
static int check_syntax(struct yload *y)
{
	int r = 0;
	if (!yaml_parser_initialize(&y->p))
		return fail_file(y, -ENOMEM, "out of memory");
	yaml_parser_set_input_string(&y->p, y->buf, y->len);
	for (unsigned depth = 0;;) {
		r = next(y);
		if (r < 0 || y->ev.type == YAML_STREAM_END_EVENT)
			break;
		if (y->ev.type == YAML_SEQUENCE_END_EVENT || y->ev.type == YAML_MAPPING_END_EVENT)
			depth--;
		/* the scanner's work grows with the depth at every token */
		if ((y->ev.type == YAML_SEQUENCE_START_EVENT || y->ev.type == YAML_MAPPING_START_EVENT) &&
		    ++depth > VMS_CONFIG_MAX_DEPTH) {
			r = fail_at(y, y->ev.start_mark, "lists and mappings nested deeper than %d levels",
				    VMS_CONFIG_MAX_DEPTH);
			break;
		}
	}
	if (y->have_ev) {
		yaml_event_delete(&y->ev);
		y->have_ev = false;
	}
	yaml_parser_delete(&y->p);
	memset(&y->p, 0, sizeof(y->p));
	return r < 0 ? r : 0;
}

static bool is_plain(const yaml_event_t *e)
{
	return e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

static bool is_null_scalar(const yaml_event_t *e)
{
	const char *v = (const char *)e->data.scalar.value;
	return e->type == YAML_SCALAR_EVENT && is_plain(e) &&
	       (e->data.scalar.length == 0 || !strcmp(v, "~") || !strcmp(v, "null") ||
		!strcmp(v, "Null") || !strcmp(v, "NULL"));
}

static const char *kind(const yaml_event_t *e)
{
	switch (e->type) {
	case YAML_SCALAR_EVENT:
		return is_null_scalar(e) ? "null" : "a scalar";
	case YAML_SEQUENCE_START_EVENT:
		return "a list";
	case YAML_MAPPING_START_EVENT:
		return "a mapping";
	default:
		return "something else";
	}
}

/* What every node may not be: an alias, or explicitly tagged. */
static int check_node(struct yload *y)
{
	const yaml_event_t *e = &y->ev;
	const yaml_char_t *tag = NULL;
	switch (e->type) {
	case YAML_ALIAS_EVENT:
		return fail_at(y, e->start_mark, "aliases (*name) are not supported");
	case YAML_SCALAR_EVENT:
		tag = e->data.scalar.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		tag = e->data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		tag = e->data.mapping_start.tag;
		break;
	default:
		return fail_at(y, e->start_mark, "unexpected YAML event");
	}
	if (tag)
		return fail_at(y, e->start_mark, "tags (%.40s) are not supported", (const char *)tag);
	return 0;
}

/* The next node (a value), checked. */
static int next_node(struct yload *y)
{
	int r = next(y);
	return r < 0 ? r : check_node(y);
}

/* The next item of a collection (a key, an element): 1 with its event
 * current and checked, 0 at the collection's end (an event of type end),
 * or -errno. */
static int next_item(struct yload *y, yaml_event_type_t end)
{
	int r = next(y);
	if (r < 0)
		return r;
	if (y->ev.type == end)
		return 0;
	r = check_node(y);
	return r < 0 ? r : 1;
}

/* next_item() of a collection whose items are scalars (the keys of a
 * mapping, the patterns of a list): one that is not fails with
 * "<path>: expected <what>, not ..." (path NULL: no "<path>: "). */
static int next_scalar(struct yload *y, yaml_event_type_t end, const char *path, const char *what)
{
	int r = next_item(y, end);
	if (r <= 0 || y->ev.type == YAML_SCALAR_EVENT)
		return r;
	if (path)
		return fail_at(y, y->ev.start_mark, "%s: expected %s, not %s", path, what, kind(&y->ev));
	return fail_at(y, y->ev.start_mark, "expected %s, not %s", what, kind(&y->ev));
}

/* next_scalar() for the keys of a mapping: 1 with *key the key (NULL when
 * it holds a NUL byte: "interval\0x" must not pass for "interval") and
 * *km where it stands, 0 at the mapping's end, or -errno. */
static int next_key(struct yload *y, const char *path, const char *what, const char **key,
		    yaml_mark_t *km)
{
	int r = next_scalar(y, YAML_MAPPING_END_EVENT, path, what);
	if (r <= 0)
		return r;
	*key = (const char *)y->ev.data.scalar.value;
	if (strlen(*key) != y->ev.data.scalar.length)
		*key = NULL;
	*km = y->ev.start_mark;
	return 1;
}

/* Key number idx of a mapping stands at mark km: the line where it stood
 * already (1-based), or 0 (then it is noted; seen has n entries). */
static size_t seen_before(size_t *seen, size_t n, size_t idx, yaml_mark_t km)
{
	if (idx >= n)
		return 0;
	size_t first = seen[idx];
	if (!first)
		seen[idx] = km.line + 1;
	return first;
}

/* The next event, which must be of that type. */
static int next_is(struct yload *y, yaml_event_type_t type)
{
	int r = next(y);
	if (r < 0)
		return r;
	if (y->ev.type != type)
		return fail_at(y, y->ev.start_mark, "unexpected YAML event");
	return 0;
}

/* A scalar for messages: at most len - 1 bytes, NUL bytes shown as '?'
 * (other control characters are replaced in the finished message). */
static const char *shown(char *buf, size_t len, const yaml_event_t *e)
{
	size_t n = e->data.scalar.length < len - 1 ? e->data.scalar.length : len - 1;
	for (size_t i = 0; i < n; i++)
		buf[i] = e->data.scalar.value[i] ? (char)e->data.scalar.value[i] : '?';
	buf[n] = '\0';
	return buf;
}

/* " (did you mean 'x'?)" or "" */
static void suggest(char *buf, size_t len, const char *got, const char *const *names, unsigned n)
{
	unsigned best = 3;
	const char *pick = NULL;
	buf[0] = '\0';
	for (unsigned i = 0; i < n; i++) {
		unsigned d = vms_edit_distance(got, names[i]);
		if (d < best && d < strlen(names[i])) {
			best = d;
			pick = names[i];
		}
	}
	if (pick)
		snprintf(buf, len, " (did you mean '%s'?)", pick);
}

static void key_suggest(char *buf, size_t len, const char *got, const struct vms_conf_section *sec)
{
	const char *names[32];
	unsigned n = 0;
	for (unsigned i = 0; i < sec->nkeys && n < VMS_ARRAY_SIZE(names); i++)
		names[n++] = sec->keys[i].name;
	suggest(buf, len, got, names, n);
}

static int parse_globs(struct yload *y, struct vms_globs *g, const char *path)
{
	struct vms_globs n = {NULL, 0};
	int r;
	for (;;) {
		r = next_scalar(y, YAML_SEQUENCE_END_EVENT, path, "a pattern");
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		const char *v = (const char *)y->ev.data.scalar.value;
		if (is_null_scalar(&y->ev) || y->ev.data.scalar.length == 0) {
			r = fail_at(y, y->ev.start_mark, "%s: empty pattern", path);
			goto fail;
		}
		if (strlen(v) != y->ev.data.scalar.length) {
			r = fail_at(y, y->ev.start_mark, "%s: the pattern contains a NUL character", path);
			goto fail;
		}
		if (vms_globs_add(&n, v) < 0) {
			r = fail_file(y, -ENOMEM, "out of memory");
			goto fail;
		}
	}
	/* a list replaces the previous value (the defaults) entirely */
	vms_globs_clear(g);
	*g = n;
	return 0;
fail:
	vms_globs_clear(&n);
	return r;
}

/* One item of an event list: a name, or {event: NAME, required: BOOL}.
 * The current event is the item's first event. */
static int parse_event_item(struct yload *y, const char *path, char **name, bool *required,
			    yaml_mark_t *name_mark)
{
	static const struct vms_conf_key req_key = {"required", VMS_CONF_BOOL, 0};
	char msg[256];
	int r;

	*name = NULL;
	*required = false;
	if (y->ev.type == YAML_SCALAR_EVENT) {
		if (is_null_scalar(&y->ev) || y->ev.data.scalar.length == 0)
			return fail_at(y, y->ev.start_mark, "%s: empty event name", path);
		if (strlen((const char *)y->ev.data.scalar.value) != y->ev.data.scalar.length)
			return fail_at(y, y->ev.start_mark, "%s: the event name contains a NUL character", path);
		*name_mark = y->ev.start_mark;
		*name = strdup((const char *)y->ev.data.scalar.value);
		return *name ? 0 : fail_file(y, -ENOMEM, "out of memory");
	}
	if (y->ev.type != YAML_MAPPING_START_EVENT)
		return fail_at(y, y->ev.start_mark,
			       "%s: expected an event name or {event: NAME, required: true}, not %s", path,
			       kind(&y->ev));
	yaml_mark_t start = y->ev.start_mark;
	bool seen_req = false;
	for (;;) {
		const char *key;
		yaml_mark_t km;
		r = next_key(y, path, "a key", &key, &km);
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		bool is_event = key && strcmp(key, "event") == 0, is_req = key && strcmp(key, "required") == 0;
		if (!is_event && !is_req) {
			char show[65], hint[64];
			shown(show, sizeof(show), &y->ev);
			suggest(hint, sizeof(hint), show, (const char *const[]){"event", "required"}, 2);
			r = fail_at(y, km, "%s: unknown key '%s' in an event (event, required)%s", path, show,
				    hint);
			goto fail;
		}
		/* key points into the event that next() frees */
		key = is_event ? "event" : "required";
		if ((is_event && *name) || (is_req && seen_req)) {
			r = fail_at(y, km, "%s: duplicate key '%s' in an event", path, key);
			goto fail;
		}
		r = next_node(y);
		if (r < 0)
			goto fail;
		if (y->ev.type != YAML_SCALAR_EVENT) {
			r = fail_at(y, y->ev.start_mark, "%s: %s: expected %s, not %s", path, key,
				    is_event ? "an event name" : "true or false", kind(&y->ev));
			goto fail;
		}
		if (is_req) {
			r = vms_conf_key_set(&req_key, required, (const char *)y->ev.data.scalar.value,
					     y->ev.data.scalar.length, is_plain(&y->ev), msg, sizeof(msg));
			if (r < 0) {
				r = fail_at(y, y->ev.start_mark, "%s: required: %s", path, msg);
				goto fail;
			}
			seen_req = true;
			continue;
		}
		if (is_null_scalar(&y->ev) || y->ev.data.scalar.length == 0 ||
		    strlen((const char *)y->ev.data.scalar.value) != y->ev.data.scalar.length) {
			r = fail_at(y, y->ev.start_mark, "%s: event: %s", path,
				    y->ev.data.scalar.length ? "the name contains a NUL character" : "empty event name");
			goto fail;
		}
		*name_mark = y->ev.start_mark;
		*name = strdup((const char *)y->ev.data.scalar.value);
		if (!*name) {
			r = fail_file(y, -ENOMEM, "out of memory");
			goto fail;
		}
	}
	if (!*name) {
		r = fail_at(y, start, "%s: an event needs a name (event: NAME)", path);
		goto fail;
	}
	return 0;
fail:
	free(*name);
	*name = NULL;
	return r;
}

/* A list of perf events; the current event is its SEQUENCE_START. */
static int parse_events(struct yload *y, struct vms_perf_events *ev, const char *path)
{
	struct vms_perf_events n = {NULL, 0};
	size_t lines[VMS_PERF_MAX_EVENTS];
	const char *canon[VMS_PERF_MAX_EVENTS];
	char msg[256];
	int r;

	for (;;) {
		char *name;
		bool required;
		yaml_mark_t nm = {0, 0, 0};
		struct vms_perf_evspec spec;

		r = next_item(y, YAML_SEQUENCE_END_EVENT);
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		yaml_mark_t item = y->ev.start_mark;
		r = parse_event_item(y, path, &name, &required, &nm);
		if (r < 0)
			goto fail;
		if (vms_perf_event_parse(name, &spec, msg, sizeof(msg)) < 0) {
			free(name);
			r = fail_at(y, nm, "%s: %s", path, msg);
			goto fail;
		}
		for (unsigned i = 0; i < n.n; i++) {
			if (strcmp(canon[i], spec.name) == 0) {
				r = fail_at(y, nm, "%s: duplicate event '%s' (first at line %zu)", path, name,
					    lines[i]);
				free(name);
				goto fail;
			}
		}
		if (n.n == VMS_PERF_MAX_EVENTS) {
			free(name);
			r = fail_at(y, item, "%s: more than %d events", path, VMS_PERF_MAX_EVENTS);
			goto fail;
		}
		r = vms_perf_events_add(&n, name, required);
		free(name);
		if (r < 0) {
			r = fail_file(y, -ENOMEM, "out of memory");
			goto fail;
		}
		/* the canonical name lives in the table or in the list's copy */
		struct vms_perf_evspec kept;
		vms_perf_event_parse(n.v[n.n - 1].name, &kept, msg, sizeof(msg));
		canon[n.n - 1] = kept.name;
		lines[n.n - 1] = nm.line + 1;
	}
	/* a list replaces the previous value (the defaults) entirely */
	vms_perf_events_clear(ev);
	*ev = n;
	return 0;
fail:
	vms_perf_events_clear(&n);
	return r;
}

static int parse_value(struct yload *y, const struct vms_conf_key *k, void *base, const char *path)
{
	char msg[256], what[96];
	const yaml_event_t *e = &y->ev;

	vms_conf_expected(k, what, sizeof(what));
	switch (e->type) {
	case YAML_SCALAR_EVENT: {
		if (k->type == VMS_CONF_GLOBS)
			return fail_at(y, e->start_mark, "%s: expected %s (like [\"sd*\"], or [] for none), not %s",
				       path, what, kind(e));
		if (k->type == VMS_CONF_EVENTS)
			return fail_at(y, e->start_mark,
				       "%s: expected %s (like [context-switches, \"kvm:kvm_exit\"], or [] for none), not %s",
				       path, what, kind(e));
		int r = vms_conf_key_set(k, base, (const char *)e->data.scalar.value, e->data.scalar.length,
					 is_plain(e), msg, sizeof(msg));
		if (r == -ENOMEM)
			return fail_file(y, r, "out of memory");
		if (r < 0)
			return fail_at(y, e->start_mark, "%s: %s", path, msg);
		return 0;
	}
	case YAML_SEQUENCE_START_EVENT:
		if (k->type == VMS_CONF_GLOBS)
			return parse_globs(y, (struct vms_globs *)((char *)base + k->off), path);
		if (k->type == VMS_CONF_EVENTS)
			return parse_events(y, (struct vms_perf_events *)((char *)base + k->off), path);
		return fail_at(y, e->start_mark, "%s: expected %s, not a list", path, what);
	default:
		return fail_at(y, e->start_mark, "%s: expected %s, not %s", path, what, kind(e));
	}
}

static int parse_sources(struct yload *y);

/* A mapping of the section's keys; the current event is its MAPPING_START. */
static int parse_section(struct yload *y, const struct vms_conf_section *sec)
{
	size_t seen[32] = {0}; /* line of each key seen (1-based), 0: not yet */
	char path[160], hint[64];
	void *base = (char *)y->c + sec->off;
	const char *key;
	yaml_mark_t km;
	int r;

	for (;;) {
		r = next_key(y, NULL, "a key", &key, &km);
		if (r <= 0)
			return r;
		const struct vms_conf_key *k = key ? vms_conf_key_find(sec, key) : NULL;
		if (!k) {
			char show[65];
			shown(show, sizeof(show), &y->ev);
			key_suggest(hint, sizeof(hint), show, sec);
			if (sec->name)
				return fail_at(y, km, "unknown key '%s' in sources.%s%s", show, sec->name, hint);
			return fail_at(y, km, "unknown key '%s'%s", show, hint);
		}
		size_t first = seen_before(seen, VMS_ARRAY_SIZE(seen), (size_t)(k - sec->keys), km);
		if (first && sec->name)
			return fail_at(y, km, "duplicate key '%s' in sources.%s (first at line %zu)", key, sec->name,
				       first);
		if (first)
			return fail_at(y, km, "duplicate key '%s' (first at line %zu)", key, first);
		if (sec->name)
			snprintf(path, sizeof(path), "sources.%s.%s", sec->name, k->name);
		else
			snprintf(path, sizeof(path), "%s", k->name);
		r = next_node(y);
		if (r < 0)
			return r;
		r = k->type == VMS_CONF_SOURCES ? parse_sources(y) : parse_value(y, k, base, path);
		if (r < 0)
			return r;
	}
}

static void known_sources(char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (unsigned i = 1; i < vms_conf_nsections && n < len; i++)
		if (vms_conf_sections[i].compiled)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", vms_conf_sections[i].name);
}

/* The value of `sources:`: a mapping of source names to sections. */
static int parse_sources(struct yload *y)
{
	size_t seen[16] = {0};
	char known[256], hint[64];
	const char *name;
	yaml_mark_t km;
	int r;

	if (is_null_scalar(&y->ev))
		return 0;
	if (y->ev.type != YAML_MAPPING_START_EVENT)
		return fail_at(y, y->ev.start_mark, "sources: expected a mapping of source names, not %s",
			       kind(&y->ev));
	for (;;) {
		r = next_key(y, NULL, "a source name", &name, &km);
		if (r <= 0)
			return r;
		const struct vms_conf_section *sec = name ? vms_conf_section_find(name) : NULL;
		if (!sec) {
			const char *names[16];
			char show[65];
			unsigned n = 0;
			for (unsigned i = 1; i < vms_conf_nsections && n < VMS_ARRAY_SIZE(names); i++)
				names[n++] = vms_conf_sections[i].name;
			shown(show, sizeof(show), &y->ev);
			suggest(hint, sizeof(hint), show, names, n);
			if (hint[0])
				return fail_at(y, km, "unknown source '%s'%s", show, hint);
			known_sources(known, sizeof(known));
			return fail_at(y, km, "unknown source '%s' (this build has: %s)", show, known);
		}
		if (!sec->compiled)
			return fail_at(y, km, "sources.%s: vmsampler was compiled without %s support", sec->name,
				       sec->feature);
		size_t first = seen_before(seen, VMS_ARRAY_SIZE(seen), (size_t)(sec - vms_conf_sections), km);
		if (first)
			return fail_at(y, km, "duplicate key '%s' in sources (first at line %zu)", sec->name, first);
		r = next_node(y);
		if (r < 0)
			return r;
		if (is_null_scalar(&y->ev))
			continue; /* "netdev:" alone: keep its settings */
		if (y->ev.type != YAML_MAPPING_START_EVENT)
			return fail_at(y, y->ev.start_mark, "sources.%s: expected a mapping of keys, not %s",
				       sec->name, kind(&y->ev));
		r = parse_section(y, sec);
		if (r < 0)
			return r;
	}
}

/* next_is(type), then the event after it. */
static int past(struct yload *y, yaml_event_type_t type)
{
	int r = next_is(y, type);
	return r < 0 ? r : next(y);
}

static int parse_stream(struct yload *y)
{
	int r = past(y, YAML_STREAM_START_EVENT);
	if (r < 0)
		return r;
	if (y->ev.type == YAML_STREAM_END_EVENT)
		return 0; /* nothing but comments: all defaults */
	if (y->ev.type != YAML_DOCUMENT_START_EVENT)
		return fail_at(y, y->ev.start_mark, "unexpected YAML event");
	r = next_node(y);
	if (r < 0)
		return r;
	if (y->ev.type == YAML_MAPPING_START_EVENT) {
		r = parse_section(y, &vms_conf_sections[0]);
		if (r < 0)
			return r;
	} else if (!is_null_scalar(&y->ev)) {
		return fail_at(y, y->ev.start_mark, "expected a mapping of keys (like 'interval: 1s'), not %s",
			       kind(&y->ev));
	}
	r = past(y, YAML_DOCUMENT_END_EVENT);
	if (r < 0)
		return r;
	if (y->ev.type == YAML_DOCUMENT_START_EVENT)
		return fail_at(y, y->ev.start_mark, "only one YAML document is allowed");
	if (y->ev.type != YAML_STREAM_END_EVENT)
		return fail_at(y, y->ev.start_mark, "unexpected YAML event");
	return 0;
}

int vms_config_load_buffer(struct vms_config *c, const char *name, const void *buf, size_t len, char *err,
			   size_t errlen)
{
	struct yload y = {
		.name = name ? name : "<config>",
		.buf = buf ? buf : (const void *)"",
		.len = buf ? len : 0,
		.err = err,
		.errlen = errlen,
	};
	struct vms_config tmp;
	int r;

	if (errlen)
		err[0] = '\0';
	if (y.len > VMS_CONFIG_MAX_SIZE)
		return fail_file(&y, -EFBIG, "larger than %u bytes", VMS_CONFIG_MAX_SIZE);
	r = vms_config_dup(&tmp, c);
	if (r < 0)
		return fail_file(&y, r, "out of memory");
	/* the syntax first, over the whole text: the loader reads event by
	 * event and would report `interval: [1s` (a list never closed) as
	 * a list where a duration belongs, before the parser sees the end */
	r = check_syntax(&y);
	if (r < 0) {
		vms_config_free(&tmp);
		return r;
	}
	if (!yaml_parser_initialize(&y.p)) {
		vms_config_free(&tmp);
		return fail_file(&y, -ENOMEM, "out of memory");
	}
	yaml_parser_set_input_string(&y.p, y.buf, y.len);
	y.c = &tmp;
	r = parse_stream(&y);
	if (y.have_ev)
		yaml_event_delete(&y.ev);
	yaml_parser_delete(&y.p);
	if (r < 0) {
		vms_config_free(&tmp);
		return r;
	}
	vms_config_free(c);
	*c = tmp;
	return 0;
}

int vms_config_load_file(struct vms_config *c, const char *path, char *err, size_t errlen)
{
	struct yload y = {.name = path, .err = err, .errlen = errlen};
	char why[128], *buf;
	size_t len;

	if (errlen)
		err[0] = '\0';
	/* a regular file only: a FIFO would hold the start (and the check
	 * that `systemctl reload` runs) for ever */
	int r = vms_safe_read(path, 0, VMS_CONFIG_MAX_SIZE, &buf, &len, why, sizeof(why));
	if (r < 0)
		return fail_file(&y, r, "%s", why);
	r = vms_config_load_buffer(c, path, buf, len, err, errlen);
	free(buf);
	return r;
}

/* ---- writing --------------------------------------------------------------- */

/* Decode one UTF-8 sequence at s (n bytes left): the code point, or -1
 * for an invalid or overlong sequence or a surrogate. */
static long utf8_decode(const unsigned char *s, size_t n, size_t *used)
{
	unsigned char b = s[0];
	size_t k;
	long cp;
	if (b < 0x80) {
		*used = 1;
		return b;
	}
	if (b >= 0xc2 && b <= 0xdf) {
		k = 2;
		cp = b & 0x1f;
	} else if (b >= 0xe0 && b <= 0xef) {
		k = 3;
		cp = b & 0x0f;
	} else if (b >= 0xf0 && b <= 0xf4) {
		k = 4;
		cp = b & 0x07;
	} else {
		return -1;
	}
	if (n < k)
		return -1;
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	*used = k;
	return cp;
}

/* A double-quoted scalar: printable ASCII as is, everything else escaped,
 * so the output is plain ASCII whatever the value holds.  (A byte that is
 * not UTF-8, possible only from the command line, is written as \xHH and
 * reads back as U+00HH: YAML cannot hold it.) */
static void put_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	fputc('"', f);
	while (n) {
		size_t used = 1;
		long cp = utf8_decode(p, n, &used);
		if (cp < 0)
			fprintf(f, "\\x%02X", p[0]);
		else if (cp == '"' || cp == '\\')
			fprintf(f, "\\%c", (int)cp);
		else if (cp >= 0x20 && cp < 0x7f)
			fputc((int)cp, f);
		else if (cp < 0x100)
			fprintf(f, "\\x%02lX", cp);
		else if (cp < 0x10000)
			fprintf(f, "\\u%04lX", cp);
		else
			fprintf(f, "\\U%08lX", cp);
		p += used;
		n -= used;
	}
	fputc('"', f);
}

static void put_value(FILE *f, const struct vms_conf_key *k, const void *base)
{
	const void *v = (const char *)base + k->off;
	char buf[32];
	switch (k->type) {
	case VMS_CONF_DURATION:
		vms_format_duration(buf, sizeof(buf), *(const uint64_t *)v);
		fputs(buf, f);
		break;
	case VMS_CONF_U64:
		fprintf(f, "%" PRIu64, *(const uint64_t *)v);
		break;
	case VMS_CONF_U32:
		fprintf(f, "%" PRIu32, *(const uint32_t *)v);
		break;
	case VMS_CONF_BOOL:
		fputs(*(const bool *)v ? "true" : "false", f);
		break;
	case VMS_CONF_STRING:
		put_string(f, *(char *const *)v);
		break;
	case VMS_CONF_LIMIT:
		vms_format_limit(buf, sizeof(buf), v);
		fputs(buf, f);
		break;
	case VMS_CONF_ENUM: {
		const char *name = NULL;
		for (const struct vms_conf_enum *e = k->enums; e->name; e++)
			if (e->value == *(const int *)v)
				name = e->name;
		/* not a valid value: a number the loader refuses */
		if (name)
			fputs(name, f);
		else
			fprintf(f, "%d", *(const int *)v);
		break;
	}
	case VMS_CONF_GLOBS:
	case VMS_CONF_EVENTS: {
		/* a flow list of patterns, or of events (a required one as a mapping) */
		const struct vms_globs *g = v;
		const struct vms_perf_events *ev = v;
		bool events = k->type == VMS_CONF_EVENTS;
		fputc('[', f);
		for (unsigned i = 0; i < (events ? ev->n : g->n); i++) {
			bool req = events && ev->v[i].required;
			fputs(i ? ", " : "", f);
			fputs(req ? "{event: " : "", f);
			put_string(f, events ? ev->v[i].name : g->pat[i]);
			fputs(req ? ", required: true}" : "", f);
		}
		fputc(']', f);
		break;
	}
	case VMS_CONF_SOURCES:
		break;
	}
}

static void put_keys(FILE *f, const struct vms_conf_section *sec, const struct vms_config *c,
		     const char *indent)
{
	const void *base = (const char *)c + sec->off;
	for (unsigned i = 0; i < sec->nkeys; i++) {
		const struct vms_conf_key *k = &sec->keys[i];
		if (k->type == VMS_CONF_SOURCES)
			continue;
		/* a string never set (ring_path by default) is left out */
		if (k->type == VMS_CONF_STRING && !*(char *const *)((const char *)base + k->off))
			continue;
		fprintf(f, "%s%s: ", indent, k->name);
		put_value(f, k, base);
		fputc('\n', f);
	}
}

int vms_config_write(const struct vms_config *c, FILE *f)
{
	fputs("# vmsampler configuration, see vmsampler.yaml(5)\n", f);
	put_keys(f, &vms_conf_sections[0], c, "");
	fputs("sources:\n", f);
	for (unsigned i = 1; i < vms_conf_nsections; i++) {
		const struct vms_conf_section *sec = &vms_conf_sections[i];
		if (!sec->compiled)
			continue;
		fprintf(f, "  %s:\n", sec->name);
		put_keys(f, sec, c, "    ");
	}
	if (fflush(f) == EOF || ferror(f))
		return -EIO;
	return 0;
}
