/* SPDX-License-Identifier: MIT */
/* test_manpages.c - the man pages agree with the program:
 *   - the long options of --help, of the getopt table and of the OPTIONS
 *     section of vmsampler.1 are the same set;
 *   - the keys of the loader's table and the items of KEYS and SOURCES in
 *     vmsampler.yaml.5 are the same set;
 *   - both pages carry the current version;
 *   - the examples are valid: the YAML of vmsampler.yaml.5 loads and the
 *     command lines of vmsampler.1 parse. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "runbin.h"
#include "testutil.h"
#include "vms_build.h"

/* ---- a set of names ------------------------------------------------------- */

struct names {
	char *v[256];
	unsigned n;
};

static void names_add(struct names *s, const char *name, size_t len)
{
	for (unsigned i = 0; i < s->n; i++)
		if (strlen(s->v[i]) == len && memcmp(s->v[i], name, len) == 0)
			return;
	assert_true(s->n < VMS_ARRAY_SIZE(s->v));
	s->v[s->n++] = strndup(name, len);
}

static bool names_has(const struct names *s, const char *name)
{
	for (unsigned i = 0; i < s->n; i++)
		if (strcmp(s->v[i], name) == 0)
			return true;
	return false;
}

static void names_free(struct names *s)
{
	for (unsigned i = 0; i < s->n; i++)
		free(s->v[i]);
	s->n = 0;
}

/* Every name of a is in b; otherwise fail listing the missing ones. */
static void assert_subset(const struct names *a, const char *an, const struct names *b, const char *bn)
{
	char missing[2048] = "";
	size_t off = 0;
	for (unsigned i = 0; i < a->n; i++)
		if (!names_has(b, a->v[i]) && off < sizeof(missing))
			off += (size_t)snprintf(missing + off, sizeof(missing) - off, " %s", a->v[i]);
	if (missing[0])
		fail_msg("in %s but not in %s:%s", an, bn, missing);
}

static void assert_same(const struct names *a, const char *an, const struct names *b, const char *bn)
{
	assert_true(a->n > 0);
	assert_subset(a, an, b, bn);
	assert_subset(b, bn, a, an);
}

/* ---- troff ------------------------------------------------------------------ */

/* Undo the escapes the pages use: \- \(dq \(em \fX \e, and drop a leading
 * macro's quotes.  Returns a malloc'ed string. */
static char *untroff(const char *s, size_t len)
{
	char *o = malloc(len + 1), *p = o;
	for (size_t i = 0; i < len; i++) {
		if (s[i] != '\\' || i + 1 >= len) {
			*p++ = s[i];
			continue;
		}
		char c = s[++i];
		if (c == '-' || c == '\\' || c == '.')
			*p++ = c;
		else if (c == 'e')
			*p++ = '\\';
		else if (c == 'f' && i + 1 < len)
			i++; /* font change */
		else if (c == '(' && i + 2 < len) {
			if (strncmp(s + i + 1, "dq", 2) == 0)
				*p++ = '"';
			else
				*p++ = '?';
			i += 2;
		} else if (c == '&')
			; /* zero-width */
		else
			*p++ = c;
	}
	*p = '\0';
	return o;
}

struct page {
	char *text;
	size_t len;
};

static void page_read(struct page *pg, const char *rel)
{
	pg->text = read_whole(src_path(rel), &pg->len);
	if (!pg->text)
		fail_msg("cannot read %s", src_path(rel));
}

/* Calls fn for each line of the page between ".SH <title>" (one of
 * `titles`) and the next .SH, with the previous line. */
static void page_lines(const struct page *pg, const char *const *titles,
		       void (*fn)(const char *prev, const char *line, void *ctx), void *ctx)
{
	bool in = false;
	char prev[512] = "";
	const char *p = pg->text;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char line[512];
		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		if (strncmp(line, ".SH ", 4) == 0) {
			const char *t = line + 4;
			in = false;
			for (const char *const *ti = titles; *ti; ti++) {
				if (strcmp(t, *ti) == 0 || (t[0] == '"' && strncmp(t + 1, *ti, strlen(*ti)) == 0))
					in = true;
			}
		} else if (in) {
			fn(prev, line, ctx);
		}
		snprintf(prev, sizeof(prev), "%s", line);
		p += n + (e ? 1 : 0);
	}
}

/* "--name" tokens of s */
static void long_options_in(const char *s, struct names *out)
{
	for (const char *p = s; (p = strstr(p, "--"));) {
		p += 2;
		size_t n = 0;
		while (islower((unsigned char)p[n]) || isdigit((unsigned char)p[n]) || p[n] == '-')
			n++;
		if (n)
			names_add(out, p, n);
		p += n;
	}
}

static void man_option_tag(const char *prev, const char *line, void *ctx)
{
	if (strcmp(prev, ".TP") != 0)
		return;
	char *u = untroff(line, strlen(line));
	long_options_in(u, ctx);
	free(u);
}

/* The long options of a --help output: the first --name of each line that
 * starts (after spaces) with an option. */
static void help_options(const char *const *args, struct names *out)
{
	struct run_result r;
	run_bin(&r, 0, args);
	assert_int_equal(r.status, 0);
	for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
		const char *p = line + strspn(line, " ");
		if (p == line || *p != '-')
			continue;
		const char *l = strstr(p, "--");
		assert_non_null(l);
		names_add(out, l + 2, strcspn(l + 2, "= "));
	}
	run_result_free(&r);
}

/* ---- tests ---------------------------------------------------------------- */

static void test_options_agree(void **state)
{
	(void)state;
	struct names help = {0}, man = {0}, table = {0};
	struct page pg;

	help_options((const char *const[]){"--help", NULL}, &help);

	page_read(&pg, "man/vmsampler.1");
	page_lines(&pg, (const char *const[]){"OPTIONS", NULL}, man_option_tag, &man);
	free(pg.text);

	for (const struct option *o = vms_cli_options; o->name; o++)
		names_add(&table, o->name, strlen(o->name));

	assert_same(&help, "--help", &man, "vmsampler.1 OPTIONS");
	assert_same(&table, "the getopt table", &help, "--help");
	names_free(&help);
	names_free(&man);
	names_free(&table);
}

/* `vmsampler TOOL --help` and the SECTION of vmsampler.1 name the same long
 * options, among them must[]. */
static void tool_options_agree(const char *tool, const char *section, const char *const *must)
{
	struct names help = {0}, man = {0};
	struct page pg;
	char what[64];

	help_options((const char *const[]){tool, "--help", NULL}, &help);
	page_read(&pg, "man/vmsampler.1");
	page_lines(&pg, (const char *const[]){section, NULL}, man_option_tag, &man);
	free(pg.text);
	snprintf(what, sizeof(what), "%s --help", tool);
	char sec[64];
	snprintf(sec, sizeof(sec), "vmsampler.1 %s", section);
	assert_same(&help, what, &man, sec);
	for (; *must; must++)
		if (!names_has(&man, *must))
			fail_msg("%s does not document --%s", sec, *must);
	names_free(&help);
	names_free(&man);
}

static void test_tail_options_agree(void **state)
{
	(void)state;
	tool_options_agree("tail", "TAIL", (const char *const[]){"columns", "rates", "no-follow", NULL});
}

static void test_mark_options_agree(void **state)
{
	(void)state;
	tool_options_agree("mark", "MARK", (const char *const[]){"ring", "control", "pid", NULL});
}

static void test_export_options_agree(void **state)
{
	(void)state;
	tool_options_agree("export", "EXPORT",
			   (const char *const[]){"ring", "listen", "basic-auth", "header-timeout", NULL});
}

static void man_key_tag(const char *prev, const char *line, void *ctx)
{
	if (strcmp(prev, ".TP") != 0)
		return;
	/* .BI "interval: " duration   or   .B name */
	const char *p = line;
	if (strncmp(p, ".BI ", 4) != 0 && strncmp(p, ".B ", 3) != 0)
		fail_msg("vmsampler.yaml.5: an item of KEYS or SOURCES is not .B/.BI: %s", line);
	p = strchr(p, ' ') + 1;
	if (*p == '"')
		p++;
	size_t n = strcspn(p, ":\" ");
	names_add(ctx, p, n);
}

static void test_keys_agree(void **state)
{
	(void)state;
	struct names table = {0}, man = {0};
	struct page pg;
	char name[128];

	for (unsigned s = 0; s < vms_conf_nsections; s++) {
		const struct vms_conf_section *sec = &vms_conf_sections[s];
		for (unsigned i = 0; i < sec->nkeys; i++) {
			if (sec->name)
				snprintf(name, sizeof(name), "sources.%s.%s", sec->name, sec->keys[i].name);
			else
				snprintf(name, sizeof(name), "%s", sec->keys[i].name);
			names_add(&table, name, strlen(name));
		}
	}
	page_read(&pg, "man/vmsampler.yaml.5");
	page_lines(&pg, (const char *const[]){"KEYS", "SOURCES", NULL}, man_key_tag, &man);
	free(pg.text);
	assert_same(&table, "the key table", &man, "vmsampler.yaml.5");
	names_free(&table);
	names_free(&man);
}

static void test_versions(void **state)
{
	(void)state;
	const char *pages[] = {"man/vmsampler.1", "man/vmsampler.yaml.5"};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(pages); i++) {
		struct page pg;
		page_read(&pg, pages[i]);
		const char *th = strstr(pg.text, "\n.TH ");
		assert_non_null(th);
		const char *eol = strchr(th + 1, '\n');
		char line[256];
		snprintf(line, sizeof(line), "%.*s", (int)(eol - th - 1), th + 1);
		if (!strstr(line, "\"vmsampler " VMS_VERSION "\""))
			fail_msg("%s: %s does not name version %s", pages[i], line, VMS_VERSION);
		free(pg.text);
	}
}

struct block {
	char buf[8192];
	size_t len;
	bool in;
	unsigned nblocks;
};

/* the .nf ... .fi blocks of a section, concatenated, each ending in \n\f */
static void collect_nf(const char *prev, const char *line, void *ctx)
{
	struct block *b = ctx;
	(void)prev;
	if (strcmp(line, ".nf") == 0) {
		b->in = true;
		return;
	}
	if (strcmp(line, ".fi") == 0) {
		b->in = false;
		b->nblocks++;
		b->len += (size_t)snprintf(b->buf + b->len, sizeof(b->buf) - b->len, "\f");
		return;
	}
	if (b->in) {
		char *u = untroff(line, strlen(line));
		b->len += (size_t)snprintf(b->buf + b->len, sizeof(b->buf) - b->len, "%s\n", u);
		free(u);
	}
	assert_true(b->len < sizeof(b->buf));
}

static void test_yaml_example_loads(void **state)
{
	(void)state;
	struct page pg;
	struct block *b = calloc(1, sizeof(*b));
	page_read(&pg, "man/vmsampler.yaml.5");
	page_lines(&pg, (const char *const[]){"EXAMPLE", NULL}, collect_nf, b);
	free(pg.text);
	assert_int_equal(b->nblocks, 2);
	char *save = NULL;
	for (char *doc = strtok_r(b->buf, "\f", &save); doc; doc = strtok_r(NULL, "\f", &save)) {
		struct vms_config c;
		char err[256];
		vms_config_defaults(&c);
		int r = vms_config_load_buffer(&c, "EXAMPLE", doc, strlen(doc), err, sizeof(err));
		if (r != 0)
			fail_msg("%s\n%s", err, doc);
		assert_int_equal(c.align_ns, 60 * VMS_NSEC_PER_SEC);
		assert_string_equal(c.output, "/var/lib/vmsampler/host.csv");
		vms_config_free(&c);
	}
	free(b);
}

/* Each "vmsampler ..." line of EXAMPLES parses (up to a pipe). */
static void test_cli_examples_parse(void **state)
{
	(void)state;
	struct page pg;
	struct block *b = calloc(1, sizeof(*b));
	unsigned checked = 0;
	page_read(&pg, "man/vmsampler.1");
	page_lines(&pg, (const char *const[]){"EXAMPLES", NULL}, collect_nf, b);
	free(pg.text);
	for (char *line = strtok(b->buf, "\n\f"); line; line = strtok(NULL, "\n\f")) {
		if (strncmp(line, "vmsampler ", 10) != 0 || strncmp(line, "vmsampler dump ", 15) == 0 ||
		    strncmp(line, "vmsampler tail ", 15) == 0 || strncmp(line, "vmsampler export ", 17) == 0)
			continue;
		char copy[512], *argv[32], *save = NULL, err[256];
		int argc = 0;
		snprintf(copy, sizeof(copy), "%s", line);
		char *pipe = strchr(copy, '|');
		if (pipe)
			*pipe = '\0';
		for (char *t = strtok_r(copy, " ", &save); t && argc < 31; t = strtok_r(NULL, " ", &save))
			argv[argc++] = t;
		argv[argc] = NULL;
		struct vms_cli cli;
		if (vms_cli_parse(&cli, argc, argv, err, sizeof(err)) != 0)
			fail_msg("example '%s': %s", line, err);
		checked++;
	}
	assert_true(checked >= 5);
	free(b);
}

VMS_TEST_MAIN(NULL, NULL,
	test_options_agree, test_tail_options_agree, test_mark_options_agree, test_export_options_agree,
	test_keys_agree,
	test_versions, test_yaml_example_loads, test_cli_examples_parse)
