/* SPDX-License-Identifier: MIT */
/* catalog_dump - the column catalogue (src/common/catalog.c) for the
 * Python tests: with no argument, one line per group,
 *   group<TAB>head<TAB>mid<TAB>entity<TAB>sub<TAB>open<TAB>field,field,...
 * and with -d, the identity vms_catalog_derive() gives each name read
 * from standard input, one per line:
 *   name<TAB>group<TAB>entity<TAB>sub<TAB>field
 * (tests/test_py_catalog.py compares python/vmsampler/catalog.py with
 * both). */
#include <stdio.h>
#include <string.h>

#include "catalog.h"

int main(int argc, char **argv)
{
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
