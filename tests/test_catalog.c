/* SPDX-License-Identifier: MIT */
/* test_catalog.c - the column catalogue (src/common/catalog.c):
 *   - its tables are sound: groups and fields named once, kinds and units
 *     known, the agent's metric ids and the cgroup fields map into it,
 *     and every identity's name derives back to the same identity;
 *   - every column of the recorded runs (tests/fixtures/runs/, format
 *     1.0: no identities in the file) has one;
 *   - a run recorded by the binary now (format 1.2) carries the identities
 *     its sources declared, and the same file rewritten as format 1.1 (the
 *     identities stripped) reads back with the same identities;
 *   - vmsampler(1)'s COLUMNS section has an entry for each group and each
 *     field, and none that the catalogue does not have. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binfmt.h"
#include "binutil.h"
#include "catalog.h"
#include "crc32c.h"
#include "le.h"
#include "parse.h"
#include "runbin.h"
#include "schema.h"
#include "testutil.h"
#include "virt_proto.h"
#include "vm_kernel.h"
#include <vmsampler/reader.h>

static void test_tables(void **state)
{
	(void)state;
	char name[600], parts[700];
	for (unsigned g = 1; g < VMS_G_N; g++) {
		const struct vms_catgroup *c = &vms_catalog[g];
		assert_int_equal(vms_catalog_group(c->name, strlen(c->name)), g);
		assert_true(c->desc[0] && c->head[0]);
		assert_true(c->nfields > 0 || c->open);
		for (unsigned f = 0; f < c->nfields; f++) {
			const struct vms_catfield *e = &c->fields[f];
			assert_int_equal(vms_catalog_field(g, e->name), f); /* named once */
			assert_true(e->kind == VMS_KIND_COUNTER || e->kind == VMS_KIND_GAUGE);
			assert_string_not_equal(vms_unit_name(e->unit), "?");
			assert_true(e->desc[0]);
			/* the name of an identity derives back to it */
			const char *ent = c->entity ? (c->sub ? "web1" : "dm.0") : NULL;
			const char *sub = c->sub ? "12" : NULL;
			if (c->entity && (c->open || strcmp(c->head, "vm.") == 0))
				ent = "web1";
			assert_true(vms_colname(name, sizeof(name), g, ent, sub, e->name) > 0);
			struct vms_colid id;
			assert_int_equal(vms_catalog_derive(name, &id, parts, sizeof(parts)), g);
			assert_int_equal(id.field_id, f);
			assert_string_equal(id.entity, ent ? ent : "");
			assert_string_equal(id.sub, sub ? sub : "");
		}
	}
	/* the parsers' field names are the catalogue's, in its order (the
	 * rates index the cpu, disk and net fields by it) */
	static const struct {
		unsigned g, n;
		const char *const *names;
	} parsed[] = {{VMS_G_CPU, VMS_STAT_CPU_FIELDS, vms_stat_cpu_field_names},
		      {VMS_G_DISK, VMS_DISK_FIELDS, vms_disk_field_names},
		      {VMS_G_NET, VMS_NET_FIELDS, vms_net_field_names},
		      {VMS_G_VMNET, VMS_NET_FIELDS, vms_net_field_names}};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(parsed); i++) {
		assert_int_equal(vms_catalog[parsed[i].g].nfields, parsed[i].n);
		for (unsigned f = 0; f < parsed[i].n; f++)
			assert_string_equal(vms_catalog[parsed[i].g].fields[f].name, parsed[i].names[f]);
	}
	/* the agent's metrics are catalogue entries */
	unsigned n = 0;
	for (unsigned m = 0; m < 1024; m++) {
		const struct vms_vmetric_info *mi = vms_vmetric_find(m);
		if (!mi)
			continue;
		assert_non_null(vms_catalog_entry(mi->cat, mi->field));
		n++;
	}
	assert_int_equal(n, VMS_VM_NBALLOON + VMS_VM_NBLOCK + VMS_VM_NMIG + VMS_VM_NDIRTY + 25);
	assert_int_equal(vms_catalog[VMS_G_VMBALLOON].nfields, VMS_VM_NBALLOON);
	assert_int_equal(vms_catalog[VMS_G_VMBLOCK].nfields, VMS_VM_NBLOCK);
	assert_int_equal(vms_catalog[VMS_G_VMMIG].nfields, VMS_VM_NMIG);
	assert_int_equal(vms_catalog[VMS_G_VMDIRTY].nfields, VMS_VM_NDIRTY);
	assert_int_equal(vms_catalog[VMS_G_VMCG].nfields, VMS_CGF_N);
	/* names the catalogue does not know, and shapes that are not its */
	static const char *const unknown[] = {"foo", "foo.bar", "cpu.x", "disk.sda", "vm.onlyname", "vm..state",
					      "vm.x.vcpux.time", "vm.x.vcpu.time", "vm.x.nosuch", ".x"};
	for (size_t i = 0; i < VMS_ARRAY_SIZE(unknown); i++) {
		struct vms_colid id;
		assert_int_equal(vms_catalog_derive(unknown[i], &id, parts, sizeof(parts)), VMS_G_NONE);
	}
	/* an identity whose parts do not fit its group makes no name */
	assert_true(vms_colname(name, sizeof(name), VMS_G_CPU, NULL, NULL, "user") < 0);
	assert_true(vms_colname(name, sizeof(name), VMS_G_LOAD, "x", NULL, "1m") < 0);
	assert_true(vms_colname(name, sizeof(name), VMS_G_VCPU, "x", NULL, "time") < 0);
}

/* ---- files ------------------------------------------------------------------------ */

/* Every column of the file at path has a catalogue identity; returns the
 * number of columns seen. */
static unsigned all_known(const char *path)
{
	struct vms_reader *r;
	unsigned n = 0;
	assert_int_equal(vms_reader_open(&r, path, 0), 0);
	while (vms_reader_next(r) == 1) {
		if (!vms_reader_schema_changed(r))
			continue;
		for (uint32_t i = 0; i < vms_reader_ncols(r); i++) {
			struct vms_reader_col c;
			struct vms_reader_colid id;
			assert_int_equal(vms_reader_col_info(r, i, &c), 0);
			assert_int_equal(vms_reader_col_id(r, i, &id), 0);
			if (!id.group[0])
				fail_msg("%s: column %s has no identity", path, c.name);
			n++;
		}
	}
	vms_reader_close(r);
	return n;
}

static void test_recorded_runs(void **state)
{
	(void)state;
	const char *dir = fixture_path("runs");
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *e;
	unsigned files = 0;
	char path[4096];
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l < 4 || strcmp(e->d_name + l - 4, ".vms") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		assert_true(all_known(path) > 100);
		files++;
	}
	closedir(d);
	assert_true(files > 0);
}

/* The stream of len bytes at b as format 1.1: SCHEMA payloads cut after
 * their columns (their identities dropped), headers with minor 0, the
 * CRCs recomputed.  Returns the new length (b is rewritten in place). */
static size_t as_v11(uint8_t *b, size_t len)
{
	size_t in = 0, out = 0;
	while (in < len) {
		if (len - in >= 8 && memcmp(b + in, VMS_FMT_MAGIC, VMS_FMT_MAGIC_LEN) == 0) {
			uint8_t *h = b + out;
			memmove(h, b + in, VMS_FMT_HEADER_SIZE);
			vms_le_put16(h + 10, 1);
			vms_le_put32(h + 28, vms_crc32c(0, h, 28));
			in += VMS_FMT_HEADER_SIZE;
			out += VMS_FMT_HEADER_SIZE;
			continue;
		}
		uint32_t pl = vms_le_get32(b + in);
		uint16_t type = vms_le_get16(b + in + 4);
		size_t rec = VMS_FMT_RECORD_HDR + pl + VMS_FMT_RECORD_TRAILER;
		assert_true(rec <= len - in);
		memmove(b + out, b + in, rec);
		in += rec;
		uint8_t *p = b + out + VMS_FMT_RECORD_HDR;
		if (type == VMS_REC_SCHEMA) {
			uint32_t ncols = vms_le_get32(p + 4);
			const uint8_t *q = p + 16, *end = p + pl;
			for (uint32_t i = 0; i < ncols; i++) {
				q += 4;
				for (int k = 0; k < 2; k++) {
					uint64_t sl;
					assert_int_equal(vms_varint_get(&q, end, &sl), 0);
					q += sl;
				}
			}
			assert_true(q < end); /* there were identities */
			pl = (uint32_t)(q - p);
			vms_le_put32(b + out, pl);
			vms_le_put32(b + out + 8, vms_crc32c(0, b + out, 8));
		}
		vms_le_put32(p + pl, vms_crc32c(0, p, pl));
		out += VMS_FMT_RECORD_HDR + pl + VMS_FMT_RECORD_TRAILER;
	}
	return out;
}

static void test_declared_and_derived(void **state)
{
	(void)state;
	const char *roots[] = {fixture_path("vms"), fixture_path("roots/node_exporter-odd-names")};
	for (size_t k = 0; k < VMS_ARRAY_SIZE(roots); k++) {
		char *out = tp("new.vms"), *old = tp("old.vms");
		char *argv[] = {(char *)getenv("VMS_BIN"), "-i", "10ms", "-n", "3", "-o", out, "--proc-root",
				(char *)roots[k], NULL};
		assert_int_equal(run_cmd(argv, NULL, tp("run.out"), tp("run.err")), 0);
		size_t len;
		uint8_t *b = slurp(out, &len);
		assert_int_equal(vms_le_get16(b + 10), 2); /* written as format 1.2 */
		spit(old, b, as_v11(b, len));
		free(b);
		struct vms_reader *rn, *ro;
		assert_int_equal(vms_reader_open(&rn, out, 0), 0);
		assert_int_equal(vms_reader_open(&ro, old, 0), 0);
		unsigned n = 0;
		while (vms_reader_next(rn) == 1) {
			assert_int_equal(vms_reader_next(ro), 1);
			assert_int_equal(vms_reader_ncols(rn), vms_reader_ncols(ro));
			for (uint32_t i = 0; i < vms_reader_ncols(rn); i++) {
				struct vms_reader_colid a, d;
				struct vms_reader_col c;
				assert_int_equal(vms_reader_col_info(rn, i, &c), 0);
				assert_int_equal(vms_reader_col_id(rn, i, &a), 0);
				assert_int_equal(vms_reader_col_id(ro, i, &d), 0);
				if (!a.group[0])
					fail_msg("%s was declared without an identity", c.name);
				if (strcmp(a.group, d.group) || strcmp(a.entity, d.entity) || strcmp(a.sub, d.sub) ||
				    strcmp(a.field, d.field))
					fail_msg("%s: declared %s/%s/%s/%s, derived %s/%s/%s/%s", c.name, a.group, a.entity,
						 a.sub, a.field, d.group, d.entity, d.sub, d.field);
				n++;
			}
		}
		assert_true(n > 0);
		assert_int_not_equal(vms_reader_next(ro), 1);
		vms_reader_close(rn);
		vms_reader_close(ro);
	}
}

/* ---- the man page ------------------------------------------------------------------ */

/* ".B na\-me" -> "na-me" */
static void unescape(char *s)
{
	char *o = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] == '-')
			s++;
		*o++ = *s;
	}
	*o = '\0';
}

static void test_manpage(void **state)
{
	(void)state;
	size_t len;
	char *page = read_whole(src_path("man/vmsampler.1"), &len);
	assert_non_null(page);
	char *sec = strstr(page, "\n.SH COLUMNS\n");
	assert_non_null(sec);
	char *end = strstr(sec + 1, "\n.SH ");
	assert_non_null(end);
	*end = '\0';
	bool seen_group[VMS_G_N] = {false};
	unsigned seen[VMS_G_N][64] = {{0}};
	unsigned g = VMS_G_NONE;
	bool tp = false;
	for (char *line = strtok(sec, "\n"); line; line = strtok(NULL, "\n")) {
		if (strncmp(line, ".SS ", 4) == 0) {
			g = vms_catalog_group(line + 4, strlen(line + 4));
			if (g == VMS_G_NONE)
				fail_msg("COLUMNS lists a group the catalogue does not have: %s", line + 4);
			assert_false(seen_group[g]);
			seen_group[g] = true;
		} else if (strcmp(line, ".TP") == 0) {
			tp = true;
			continue;
		} else if (tp && strncmp(line, ".B ", 3) == 0) {
			assert_int_not_equal(g, VMS_G_NONE);
			unescape(line + 3);
			unsigned f = vms_catalog_field(g, line + 3);
			if (f == VMS_FIELD_OPEN)
				fail_msg("COLUMNS lists %s in %s, the catalogue does not", line + 3, vms_catalog[g].name);
			seen[g][f]++;
		}
		tp = false;
	}
	for (g = 1; g < VMS_G_N; g++) {
		if (!seen_group[g])
			fail_msg("COLUMNS has no entry for the group %s", vms_catalog[g].name);
		assert_true(vms_catalog[g].nfields <= 64);
		for (unsigned f = 0; f < vms_catalog[g].nfields; f++)
			if (seen[g][f] != 1)
				fail_msg("COLUMNS lists %s.%s %u times", vms_catalog[g].name, vms_catalog[g].fields[f].name,
					 seen[g][f]);
	}
	free(page);
}

VMS_TEST_MAIN(tmp_setup, tmp_teardown, test_tables, test_recorded_runs, test_declared_and_derived,
	      test_manpage)
