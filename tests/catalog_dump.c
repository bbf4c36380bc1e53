/* SPDX-License-Identifier: MIT */
/* catalog_dump - the column catalogue (src/common/catalog.c) for the
 * Python tests: with no argument, one line per group,
 *   group<TAB>head<TAB>mid<TAB>entity<TAB>sub<TAB>open<TAB>field,field,...
 * and with -d, the identity vms_catalog_derive() gives each name read
 * from standard input, one per line:
 *   name<TAB>group<TAB>entity<TAB>sub<TAB>field
 * and with -r FILE, the identity libvmsampler's rate plan gives each rate
 * column of every schema of FILE (the names of `dump --rates`):
 *   name<TAB>group<TAB>entity<TAB>sub<TAB>out
 * (tests/test_py_catalog.py compares python/vmsampler/catalog.py with
 * all three). */
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "rates.h"
#include "reader_int.h"
#include <vmsampler/reader.h>

static int rate_ids(const char *path)
{
	struct vms_reader *rd;
	int r = vms_reader_open(&rd, path, 0);
	if (r >= 0)
		r = vms_reader_rates_enable(rd);
	while (r >= 0 && (r = vms_reader_next(rd)) > 0) {
		if (!vms_reader_schema_changed(rd))
			continue;
		for (uint32_t i = 0; i < vms_reader_nrates(rd); i++) {
			const struct vms_rate_col *c = vms_rdr_rate_col(rd, i);
			printf("%s\t%s\t%s\t%s\t%s\n", c->name, vms_catalog[c->group].name, c->entity, c->sub, c->out);
		}
	}
	if (r < 0)
		fprintf(stderr, "catalog_dump: %s: %s\n", path, rd ? vms_reader_error(rd) : strerror(-r));
	vms_reader_close(rd);
	return r < 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "-r") == 0)
		return rate_ids(argv[2]);
	if (argc > 1 && strcmp(argv[1], "-d") == 0) {
		char line[1024], parts[1100];
		while (fgets(line, sizeof(line), stdin)) {
			line[strcspn(line, "\n")] = '\0';
			struct vms_colid id;
			unsigned g = vms_catalog_derive(line, &id, parts, sizeof(parts));
			printf("%s\t%s\t%s\t%s\t%s\n", line, vms_catalog[g].name, id.entity, id.sub, id.field);
		}
		return 0;
	}
	for (unsigned g = 1; g < VMS_G_N; g++) {
		const struct vms_catgroup *c = &vms_catalog[g];
		printf("%s\t%s\t%s\t%u\t%u\t%u\t", c->name, c->head, c->mid, c->entity, c->sub, c->open);
		for (unsigned f = 0; f < c->nfields; f++)
			printf("%s%s", f ? "," : "", c->fields[f].name);
		putchar('\n');
	}
	return 0;
}
